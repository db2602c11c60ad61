"""predmarket: a prediction-market trading service over on-chain binary markets."""

__version__ = "0.1.0"
