"""Small typed helpers that put test data straight into a migrated database."""
