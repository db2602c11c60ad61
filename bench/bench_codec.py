"""Codec throughput: UnsignedTx encode/decode/txId and secp256k1 signature verification.

Run: ``.venv/bin/python bench/bench_codec.py`` (one core; about ten seconds).
The transaction is tx2-like (chain-formats.md §7): a contract-call TxScript approving ALPH, two
P2PKH inputs (the second ``SameAsPrevious``) and three outputs, one of them groupless P2PK.
"""

from __future__ import annotations

import platform
import time
from collections.abc import Callable

from predmarket.alephium import signing
from predmarket.alephium.address import parse_address
from predmarket.alephium.constants import ONE_ALPH
from predmarket.alephium.hashing import blake2b256
from predmarket.alephium.lockup import output_hint
from predmarket.alephium.script import (
    Approvals,
    ValAddress,
    ValBool,
    ValByteVec,
    ValU256,
    build_contract_call,
)
from predmarket.alephium.tx import (
    AssetOutput,
    Input,
    P2PKHUnlock,
    SameAsPrevious,
    UnsignedTx,
    decode_unsigned_tx,
    encode_unsigned_tx,
    tx_id,
)

PRIVATE_KEY = bytes.fromhex("3aaae518f9d62205882ec740e4aa2ca958e6d721fb55986e89bb59ab2b977e8c")


def _tx() -> UnsignedTx:
    public_key = signing.public_key_from_private(PRIVATE_KEY)
    own = parse_address("1qFU9uLcMEmPpfpoNx8Dm2iHnkHh2Fb35Y8TCFGb7BoR")
    dest = parse_address("17sXADgSLHoYucvFXNMpXfFBGPUU3f9nRtigZURAD9ovv")
    groupless = parse_address("3cUs1DFrH9ZJcx2uTJ8H5EbEKWcmRzNQ6phHszK4NQDqdzWniwTft:1")
    script = build_contract_call(
        bytes.fromhex("aa" * 31 + "00"),
        3,
        [ValU256(12345), ValByteVec(bytes.fromhex("deadbeef")), ValBool(True), ValAddress(dest)],
        caller_approvals=Approvals(alph=210_000_000_000_000_000),
    )
    hint = output_hint(own)
    return UnsignedTx(
        version=0,
        network_id=0,
        script=script,
        gas_amount=100_000,
        gas_price=100_000_000_000,
        inputs=(
            Input(hint, blake2b256(b"utxo-1"), P2PKHUnlock(public_key)),
            Input(hint, blake2b256(b"utxo-2"), SameAsPrevious()),
        ),
        fixed_outputs=(
            AssetOutput(ONE_ALPH, dest),
            AssetOutput(2 * ONE_ALPH, groupless),
            AssetOutput(6_780_000_000_000_000_000, own),
        ),
    )


def _rate(fn: Callable[[], object], seconds: float = 2.0) -> float:
    """Calls per second of ``fn``, measured over about ``seconds``."""
    n = 1
    while True:  # grow the batch until it takes a measurable time
        start = time.perf_counter()
        for _ in range(n):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed > 0.2:
            break
        n *= 2
    batches = max(1, round(seconds / elapsed))
    start = time.perf_counter()
    for _ in range(batches * n):
        fn()
    return batches * n / (time.perf_counter() - start)


def main() -> None:
    tx = _tx()
    raw = encode_unsigned_tx(tx)
    assert decode_unsigned_tx(raw) == tx
    digest = tx_id(tx)
    public_key = signing.public_key_from_private(PRIVATE_KEY)
    signature = signing.sign_tx_id(PRIVATE_KEY, digest)
    assert signing.verify_hash(digest, signature, public_key)

    print(f"python {platform.python_version()} on {platform.machine()}, one core")
    print(f"tx2-like UnsignedTx: {len(raw)} bytes (script, 2 inputs, 3 outputs)")
    results = [
        ("UnsignedTx encode", _rate(lambda: encode_unsigned_tx(tx))),
        ("UnsignedTx decode", _rate(lambda: decode_unsigned_tx(raw))),
        ("txId (encode + blake2b)", _rate(lambda: tx_id(tx))),
        (
            "secp256k1 verify (signing.verify_hash, coincurve)",
            _rate(lambda: signing.verify_hash(digest, signature, public_key)),
        ),
    ]
    for name, rate in results:
        print(f"{name:52s} {rate:>10,.0f} /s  {1e6 / rate:8.1f} µs")


if __name__ == "__main__":
    main()
