"""Errors raised by the chain-format code.

Every failure to parse or decode chain data surfaces as one of these, never as a bare
``IndexError``/``ValueError`` from deep inside a codec: callers map them to a clean 4xx.
"""

from __future__ import annotations


class AlephiumError(ValueError):
    """Base of every error of the chain-format package."""


class DecodeError(AlephiumError):
    """Bytes that do not decode as the expected structure (malformed, truncated, trailing)."""


class EncodeError(AlephiumError):
    """A value that cannot be encoded (out of range, wrong length)."""


class InvalidAddress(AlephiumError):
    """A string that is not a valid address."""


class InvalidKey(AlephiumError):
    """A malformed public or private key."""


class InvalidSignatureFormat(AlephiumError):
    """A signature that is not 64 bytes of lowercase-hex ``r || s``."""
