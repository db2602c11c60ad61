"""API credentials other than wallet sessions: legacy API keys (spec 2.7, 5.3) and developer keys
(spec 2.8, 5.4), their scopes and the scope policy of every route. See docs/keys.md."""
