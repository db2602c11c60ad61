"""Contract, sub-contract and token ids (chain-formats.md §1.3)."""

from __future__ import annotations

import hashlib

import pytest

from predmarket.alephium.address import contract_address, parse_address
from predmarket.alephium.contract import (
    contract_id_from_tx,
    sub_contract_id,
    token_id_of_contract,
)
from predmarket.alephium.errors import EncodeError
from predmarket.alephium.lockup import P2C, group_of

TX_ID = bytes.fromhex("db3af10384771d26b92e2b735de81b70e0eb98b927b1b3d42eeb361088808360")
PARENT = bytes(range(32))


def _blake(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=32).digest()


class TestContractIdFromTx:
    @pytest.mark.parametrize("group", [0, 1, 2, 3])
    def test_hash_with_group_byte(self, group: int) -> None:
        expected = _blake(TX_ID + b"\x00\x00\x00\x02")[:-1] + bytes([group])
        cid = contract_id_from_tx(TX_ID, 2, group)
        assert cid == expected
        assert group_of(P2C(cid)) == group

    def test_index_is_four_bytes_big_endian(self) -> None:
        cid = contract_id_from_tx(TX_ID, 258, 0)
        assert cid[:-1] == _blake(TX_ID + bytes([0, 0, 1, 2]))[:-1]

    def test_not_the_ts_helper_variant(self) -> None:
        # TS contractIdFromTx hashes a 1-byte index and keeps the hash's own last byte.
        ts_variant = _blake(TX_ID + b"\x01")
        cid = contract_id_from_tx(TX_ID, 1, 0)
        assert cid != ts_variant
        assert cid[:-1] != ts_variant[:-1]

    def test_address(self) -> None:
        cid = contract_id_from_tx(TX_ID, 0, 1)
        assert parse_address(contract_address(cid)) == P2C(cid)

    @pytest.mark.parametrize(
        ("tx_id", "index", "group"),
        [(TX_ID[:31], 0, 0), (TX_ID, -1, 0), (TX_ID, 2**31, 0), (TX_ID, 0, 4), (TX_ID, 0, -1)],
    )
    def test_rejects(self, tx_id: bytes, index: int, group: int) -> None:
        with pytest.raises(EncodeError):
            contract_id_from_tx(tx_id, index, group)

    def test_group_count_is_configurable(self) -> None:
        assert contract_id_from_tx(TX_ID, 0, 7, groups=8)[-1] == 7


class TestSubContractId:
    @pytest.mark.parametrize("path", [b"", b"\x01", b"order-42"])
    def test_double_hash_with_group(self, path: bytes) -> None:
        expected = _blake(_blake(PARENT + path))[:-1] + b"\x02"
        assert sub_contract_id(PARENT, path, 2) == expected

    def test_paths_differ(self) -> None:
        assert sub_contract_id(PARENT, b"a", 0) != sub_contract_id(PARENT, b"b", 0)

    @pytest.mark.parametrize(
        ("parent", "path", "group"),
        [(PARENT[:5], b"", 0), (PARENT, "a", 0), (PARENT, b"", 4), (PARENT, b"", True)],
    )
    def test_rejects(self, parent: bytes, path: bytes, group: int) -> None:
        with pytest.raises(EncodeError):
            sub_contract_id(parent, path, group)


class TestTokenId:
    def test_is_the_contract_id(self) -> None:
        assert token_id_of_contract(PARENT) == PARENT

    def test_rejects(self) -> None:
        with pytest.raises(EncodeError):
            token_id_of_contract(PARENT + b"\x00")
