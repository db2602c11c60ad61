"""Persistence: tables, engine, amount column types. The read model lives here."""
