"""How a node's refusal of a build becomes the client's error (tx/errors.py)."""

from __future__ import annotations

import pytest

from predmarket.kit.errors import AppError
from predmarket.node import (
    NodeProtocolError,
    NodeRejected,
    NodeServerError,
    NodeTimeout,
    NodeUnavailable,
)
from predmarket.tx.errors import from_node_error, revert_code

MARKET = "25A3rM3uJjvptdsvBpreGuXKoiy863Gi6PTBB3CvyefxB"
PATH = "/contracts/unsigned-tx/execute-script"


def rejected(detail: str, status: int = 400) -> NodeRejected:
    return NodeRejected(status, detail, method="POST", path=PATH)


def estimating(code: int, name: str) -> str:
    # the devnet's wording, which is the node's up to the name and message after the code
    return (
        "Execution error when estimating gas for tx script or contract: "
        f"AssertionFailedWithErrorCode({MARKET}, {code}) {name}: something"
    )


def fields(error: AppError) -> list[str]:
    problems = error.details.get("fields", [])
    assert isinstance(problems, list)
    return [p["field"] for p in problems]


@pytest.mark.parametrize(
    ("code", "name", "status", "app_code", "field"),
    [
        (4, "INVALID_ARGUMENT", 400, "INVALID_REQUEST", "body"),
        (5, "MARKET_CLOSED", 409, "MARKET_CLOSED", None),
        (6, "UNKNOWN_ORDER", 404, "NOT_FOUND", None),
        (7, "NOT_ORDER_OWNER", 404, "NOT_FOUND", None),
        (8, "ALREADY_RESOLVED", 409, "MARKET_CLOSED", None),
        (9, "NOT_RESOLVED", 409, "CONFLICT", None),
        (10, "INSUFFICIENT_SHARES", 422, "INSUFFICIENT_BALANCE", None),
        (12, "INVALID_FILL", 400, "INVALID_REQUEST", "body.quantity"),
        (13, "INVALID_PRICE", 400, "INVALID_REQUEST", "body.price"),
    ],
)
def test_contract_reverts_map_by_abi_code(
    code: int, name: str, status: int, app_code: str, field: str | None
) -> None:
    error = from_node_error(rejected(estimating(code, name)))
    assert (error.status, error.code) == (status, app_code)
    if field is not None:
        assert fields(error) == [field]


@pytest.mark.parametrize(
    ("code", "name"),
    [(1, "NOT_OPERATOR"), (2, "NOT_MINTER"), (3, "INSUFFICIENT_APPROVAL"), (11, "X"), (99, "?")],
)
def test_reverts_the_request_cannot_cause_are_502(code: int, name: str) -> None:
    error = from_node_error(rejected(estimating(code, name)))
    assert (error.status, error.code) == (502, "UPSTREAM_ERROR")
    assert error.details["revertCode"] == code


def test_the_code_is_read_from_the_node_pattern_only() -> None:
    # the name after the code is a devnet extra for humans: a node without it maps the same
    bare = f"Execution error ...: AssertionFailedWithErrorCode({MARKET}, 13)"
    assert revert_code(bare) == 13
    assert from_node_error(rejected(bare)).code == "INVALID_REQUEST"
    assert revert_code("AssertionFailedWithErrorCode(x, y)") is None


@pytest.mark.parametrize(
    "detail",
    [
        "Not enough balance: got 0, expected 214400000000000000",
        "Not enough balance for token 0a1b: got 5, expected 10",
        "not enough balance",
        "Insufficient funds for the transaction",
    ],
)
def test_the_wallet_cannot_pay_is_422(detail: str) -> None:
    error = from_node_error(rejected(detail))
    assert (error.status, error.code) == (422, "INSUFFICIENT_BALANCE")
    assert error.details["nodeDetail"] == detail


@pytest.mark.parametrize(
    "detail",
    [
        "Execution error when estimating gas for tx script or contract: NotEnoughApprovedBalance",
        f"Execution error when estimating gas: NonExistContract({MARKET})",
        "Invalid public key: public key must be 33 bytes",
    ],
)
def test_other_refusals_are_502(detail: str) -> None:
    error = from_node_error(rejected(detail))
    assert (error.status, error.code) == (502, "UPSTREAM_ERROR")
    assert error.details["nodeStatus"] == 400


def test_a_long_detail_is_cut() -> None:
    error = from_node_error(rejected("x" * 5000))
    detail = error.details["nodeDetail"]
    assert isinstance(detail, str) and len(detail) == 501


def test_transport_failures() -> None:
    assert from_node_error(NodeTimeout("slow")).code == "UPSTREAM_TIMEOUT"
    assert from_node_error(NodeTimeout("slow")).status == 502
    down = from_node_error(NodeUnavailable("refused"))
    assert (down.status, down.code) == (502, "UPSTREAM_ERROR")
    for error in (NodeServerError(500, "boom"), NodeProtocolError("not json")):
        mapped = from_node_error(error)
        assert (mapped.status, mapped.code) == (502, "UPSTREAM_ERROR")
