"""The published examples of the builder schemas are one real, self-consistent build."""

from __future__ import annotations

from predmarket.alephium.address import address_from_public_key, contract_id_from_address
from predmarket.alephium.script import ValU256, parse_contract_call
from predmarket.alephium.tx import decode_unsigned_tx, tx_id
from predmarket.exchange import buy_lock
from predmarket.tx.schemas import (
    EXAMPLE_COLLATERAL_ID,
    EXAMPLE_MARKET,
    EXAMPLE_PUBLIC_KEY,
    EXAMPLE_SIGNER,
    EXAMPLE_TX_ID,
    EXAMPLE_UNSIGNED_TX,
    TxBuild,
    TxCancelOrder,
    TxPlaceOrder,
)
from predmarket.tx.service import ORDER_APPROVED_ALPH


def _example(model: type[TxBuild | TxPlaceOrder | TxCancelOrder]) -> dict[str, object]:
    extra = model.model_config.get("json_schema_extra")
    assert isinstance(extra, dict)
    examples = extra["examples"]
    assert isinstance(examples, list)
    first = examples[0]
    assert isinstance(first, dict)
    return first


def test_the_example_bodies_are_valid() -> None:
    order = TxPlaceOrder.model_validate(_example(TxPlaceOrder))
    TxCancelOrder.model_validate(_example(TxCancelOrder))
    assert address_from_public_key(bytes.fromhex(EXAMPLE_PUBLIC_KEY)) == EXAMPLE_SIGNER
    assert (order.price, order.quantity) == (640, 5 * 10**18)


def test_the_example_build_is_that_order() -> None:
    build = TxBuild.model_validate(_example(TxBuild))
    unsigned = decode_unsigned_tx(EXAMPLE_UNSIGNED_TX)
    assert build.unsigned_tx == EXAMPLE_UNSIGNED_TX
    assert tx_id(unsigned).hex() == build.tx_id == EXAMPLE_TX_ID
    assert unsigned.script is not None
    call = parse_contract_call(unsigned.script)
    assert call is not None
    assert call.contract_id == contract_id_from_address(EXAMPLE_MARKET)
    assert call.args == (ValU256(0), ValU256(0), ValU256(640), ValU256(5 * 10**18))
    lock = buy_lock(640, 5 * 10**18)
    assert call.approvals.alph == ORDER_APPROVED_ALPH
    assert call.approvals.tokens == ((bytes.fromhex(EXAMPLE_COLLATERAL_ID), lock),)
    assert build.collateral_required == lock
    assert (build.gas_amount, build.gas_price) == (unsigned.gas_amount, unsigned.gas_price)
    assert build.atto_alph_amount == unsigned.gas_amount * unsigned.gas_price + ORDER_APPROVED_ALPH
    assert [(t.id, t.amount) for t in build.tokens] == [(EXAMPLE_COLLATERAL_ID, lock)]
