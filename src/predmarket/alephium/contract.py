"""Contract and token ids (chain-formats.md §1.3).

A contract id is a blake2b hash whose last byte is replaced by the contract's group, so the
group of a contract address is simply the last byte of its id.
"""

from __future__ import annotations

from predmarket.alephium.constants import I32_MAX, TOTAL_NUMBER_OF_GROUPS
from predmarket.alephium.errors import EncodeError
from predmarket.alephium.hashing import blake2b256, int32_bytes


def _check_id(value: object, what: str) -> None:
    if not isinstance(value, bytes) or len(value) != 32:
        raise EncodeError(f"{what} must be 32 bytes")


def _check_group(group: object, groups: int) -> None:
    if not isinstance(group, int) or isinstance(group, bool) or not 0 <= group < groups:
        raise EncodeError(f"group {group!r} out of range 0..{groups - 1}")


def _with_group(digest: bytes, group: int) -> bytes:
    return digest[:-1] + bytes([group])


def contract_id_from_tx(
    tx_id: bytes, output_index: int, group: int, *, groups: int = TOTAL_NUMBER_OF_GROUPS
) -> bytes:
    """Id of the contract created by output ``output_index`` of a transaction (SC
    ``ContractId.from``): blake2b(txId ‖ int32BE(index)) with the last byte set to ``group``.

    The TS helper ``contractIdFromTx`` hashes a 1-byte index and keeps the hash's last byte;
    the node does not, so neither do we.
    """
    _check_id(tx_id, "tx id")
    if not isinstance(output_index, int) or not 0 <= output_index <= I32_MAX:
        raise EncodeError(f"output index {output_index!r} out of range")
    _check_group(group, groups)
    return _with_group(blake2b256(tx_id + int32_bytes(output_index)), group)


def sub_contract_id(
    parent_id: bytes, path: bytes, group: int, *, groups: int = TOTAL_NUMBER_OF_GROUPS
) -> bytes:
    """Id of a sub-contract or map entry: blake2b(blake2b(parent ‖ path)), last byte = group."""
    _check_id(parent_id, "parent contract id")
    if not isinstance(path, bytes):
        raise EncodeError("sub-contract path must be bytes")
    _check_group(group, groups)
    return _with_group(blake2b256(blake2b256(parent_id + path)), group)


def token_id_of_contract(contract_id: bytes) -> bytes:
    """The id of the token a contract issues: the contract id itself."""
    _check_id(contract_id, "contract id")
    return contract_id
