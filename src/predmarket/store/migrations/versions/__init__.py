"""Migration revisions: ``<date>_<rev>-<slug>.py``, one linear history."""
