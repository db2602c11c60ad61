"""Transaction builders (``/v1/tx/*``): unsigned transactions the caller signs and submits.

See ``docs/tx-builders.md``.
"""
