"""The chain's formats: pure functions and data, no I/O (chain-formats.md §0-§3, §5)."""
