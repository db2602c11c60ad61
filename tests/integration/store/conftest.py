"""The store tests use the suite-wide database fixtures of ``tests/conftest.py``:
``empty_database`` (a factory of private empty databases), ``migrated_url`` and
``migrated_engine`` (a private database migrated to head, per module)."""
