"""Malformed input of any shape is a 4xx in the node's error shape, never a 500."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from devnet_http import Devnet, Wallet, close_devnet, open_devnet
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

POSTS = [
    "/transactions/build",
    "/contracts/unsigned-tx/execute-script",
    "/transactions/decode-unsigned-tx",
    "/transactions/submit",
    "/devnet/faucet",
]
GETS = [
    "/addresses/{x}/balance",
    "/addresses/{x}/utxos",
    "/transactions/details/{x}",
    "/contracts/{x}/state",
    "/events/contract/{x}",
    "/events/contract/{x}/current-count",
    "/devnet/markets/{x}/orders",
]
FIELDS = [
    "fromPublicKey",
    "fromPublicKeyType",
    "destinations",
    "bytecode",
    "attoAlphAmount",
    "tokens",
    "gasAmount",
    "gasPrice",
    "group",
    "gasEstimationMultiplier",
    "unsignedTx",
    "signature",
    "address",
    "utxos",
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**300), max_value=2**300),
    st.floats(allow_nan=False),
    st.text(max_size=80),
    st.text(alphabet="0123456789abcdef", max_size=300),
    st.sampled_from(["", "0", "-1", "1e18", "ff", "02" + "11" * 32, "1" * 80]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from([*FIELDS, "id", "amount", "hint", "key"]), inner),
    ),
    max_leaves=12,
)
bodies = st.one_of(values, st.dictionaries(st.sampled_from(FIELDS), values, max_size=6))


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Devnet]:
    dn = open_devnet(tmp_path_factory.mktemp("fuzz") / "devnet")
    try:
        dn.faucet(Wallet.generate().address)
        yield dn
    finally:
        close_devnet(dn)


def _check(response: Any) -> None:
    assert response.status_code < 500, response.text
    if response.status_code >= 400:
        body = response.json()
        assert isinstance(body["detail"], str)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(path=st.sampled_from(POSTS), body=bodies)
def test_any_post_body(shared: Devnet, path: str, body: Any) -> None:
    _check(shared.http.post(path, content=json.dumps(body).encode()))


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    path=st.sampled_from(GETS),
    segment=st.text(min_size=1, max_size=120).filter(lambda s: s not in (".", "..")),
    params=st.dictionaries(
        st.sampled_from(["start", "limit", "group", "mempool", "txId", "fromGroup", "blockHash"]),
        st.text(max_size=70),
        max_size=4,
    ),
)
def test_any_path_and_query(
    shared: Devnet, path: str, segment: str, params: dict[str, str]
) -> None:
    url = path.format(x=quote(segment, safe=""))
    _check(shared.http.get(url, params=params))


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(raw=st.binary(max_size=200))
def test_any_bytes_as_a_body(shared: Devnet, raw: bytes) -> None:
    for path in ("/transactions/submit", "/contracts/unsigned-tx/execute-script"):
        response = shared.http.post(path, content=raw, headers={"content-type": "application/json"})
        _check(response)
