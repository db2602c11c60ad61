"""Errors of the user routes."""

from __future__ import annotations

from predmarket.kit.errors import NotFound


class WalletNotFound(NotFound):
    """Spec 7.2: another wallet's private data looks exactly like missing data."""

    message = "no such resource for this wallet"
