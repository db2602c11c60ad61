"""Market reads: lists, detail with phases, categories, tags, events, search and trending."""
