"""The ABI table: consistent, JSON-ready, and documented in docs/chain-abi.md."""

from __future__ import annotations

import json
import re
from pathlib import Path

from devnet_harness import Harness

from predmarket.alephium.lockup import P2PKH
from predmarket.alephium.script import ValAddress, ValU256, parse_contract_call
from predmarket.devnet.abi import (
    CONTRACTS,
    ERROR_CODES,
    MARKET,
    abi_document,
    call_script,
    decode_event,
)
from predmarket.exchange import InvalidFill, InvalidPrice

DOC = Path(__file__).parents[3] / "docs" / "chain-abi.md"


def test_indexes_are_dense_and_codes_unique() -> None:
    for contract in CONTRACTS.values():
        assert [m.index for m in contract.methods] == list(range(len(contract.methods)))
        assert [e.index for e in contract.events] == list(range(len(contract.events)))
        assert len({m.name for m in contract.methods}) == len(contract.methods)
    assert len(set(ERROR_CODES.values())) == len(ERROR_CODES)
    assert ERROR_CODES["INVALID_FILL"] == InvalidFill.chain_code == 12
    assert ERROR_CODES["INVALID_PRICE"] == InvalidPrice.chain_code == 13


def test_document_is_json_and_served(harness: Harness) -> None:
    doc = abi_document()
    assert harness.node.abi() == doc
    doc = json.loads(json.dumps(doc))  # JSON-ready: survives a round trip unchanged
    assert doc == abi_document()
    market = next(c for c in doc["contracts"] if c["name"] == "Market")
    assert [m["name"] for m in market["methods"]] == [
        "placeOrder",
        "cancelOrder",
        "resolve",
        "claim",
    ]
    assert doc["enums"]["side"] == {"buy": 0, "sell": 1}


def test_scripts_from_the_abi_parse_back() -> None:
    market_id = bytes(range(32))
    script = call_script(MARKET, "placeOrder", market_id, [0, 1, 640, 10**18], alph=5)
    call = parse_contract_call(script)
    assert call is not None
    assert (call.contract_id, call.method_index, call.approvals.alph) == (market_id, 0, 5)
    assert call.args == (ValU256(0), ValU256(1), ValU256(640), ValU256(10**18))


def test_decode_event_names_fields() -> None:
    fields = [ValU256(2), ValAddress(P2PKH(bytes(32))), ValU256(1)]
    fields += [ValU256(0), ValU256(5), ValU256(6)]
    named = decode_event(MARKET, 2, fields)
    assert named["orderId"] == 2 and named["reason"] == 1 and isinstance(named["owner"], str)


def test_the_doc_lists_every_method_event_and_code() -> None:
    text = DOC.read_text()
    for contract in CONTRACTS.values():
        assert f"### {contract.name}" in text
        for m in contract.methods:
            assert re.search(rf"\| {m.index} \| `{m.name}` \|", text), m.name
            assert f"{m.gas:,}" in text
        for e in contract.events:
            row = rf"\| {e.index} \| `{e.name}` \| " + r", ".join(
                re.escape(f"`{f.name}: {f.type}`") for f in e.fields
            )
            assert re.search(row, text), e.name
        for i, f in enumerate(contract.imm_fields):
            assert re.search(rf"\| imm \| {i} \| `{f.name}` \| {f.type}", text), f.name
        for i, f in enumerate(contract.mut_fields):
            assert re.search(rf"\| mut \| {i} \| `{f.name}` \| {f.type}", text), f.name
    for name, code in ERROR_CODES.items():
        assert f"| {code} | `{name}` |" in text
