"""``GET /v1/transactions/{txId}``: a transaction as the chain node and the indexer see it."""
