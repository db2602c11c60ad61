"""Errors of the embedded devnet.

:class:`NodeError` is what the facade raises: the HTTP layer renders it as ``{"detail": ...}``
with its ``status``, exactly like the Alephium full node. Inside the devnet, a script that fails
raises :class:`ScriptFailure` (a VM-level failure) or its subclass :class:`ContractRevert` (a
contract's ``assert!(cond, code)``); the chain turns them into a :class:`NodeError` at admission or
into ``scriptExecutionOk = false`` when a mined transaction fails.
"""

from __future__ import annotations


class NodeError(Exception):
    """A request the node refuses: ``status`` is the HTTP status, ``detail`` the message."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail

    def __repr__(self) -> str:
        return f"NodeError({self.status}, {self.detail!r})"


def bad_request(detail: str) -> NodeError:
    return NodeError(400, detail)


def not_found(detail: str) -> NodeError:
    return NodeError(404, detail)


class ScriptFailure(Exception):
    """A script that fails to execute; ``reason`` reads like the node's ``ExeFailure`` names,
    e.g. ``NonExistContract(<address>)`` or ``InvalidMethodIndex(7)``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason

    @property
    def explained(self) -> str:
        """The reason, with whatever helps a human on top (contract reverts add theirs)."""
        return self.reason


class ContractRevert(ScriptFailure):
    """``assert!(cond, code)`` failed in a contract: the node's ``AssertionFailedWithErrorCode``.

    ``reason`` is ``AssertionFailedWithErrorCode(<contractAddress>, <code>)``, which clients parse
    for the code; ``name`` and ``message`` are devnet extras appended to the detail for humans.
    """

    def __init__(self, contract_address: str, code: int, name: str, message: str = "") -> None:
        super().__init__(f"AssertionFailedWithErrorCode({contract_address}, {code})")
        self.contract_address = contract_address
        self.code = code
        self.name = name
        self.message = message

    @property
    def explained(self) -> str:
        """``reason`` followed by the error's name and message."""
        text = f"{self.reason} {self.name}"
        return f"{text}: {self.message}" if self.message else text


class DevnetStateError(RuntimeError):
    """The devnet's own state is inconsistent (a bug, or a block log that does not replay)."""
