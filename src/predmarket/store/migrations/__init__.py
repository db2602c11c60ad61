"""Alembic migration scripts, shipped in the package (run them with ``predmarket migrate``)."""
