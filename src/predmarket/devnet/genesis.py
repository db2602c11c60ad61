"""The devnet's configuration (``devnet.json``) and its genesis state.

On first open the node generates an operator key and a faucet key and writes them with the rest
of the configuration to ``devnet.json``. **These are devnet-only test keys**: they exist so tests
and the service's demo seeding can create and resolve markets and hand out test tokens; never use
them, or this file format, for anything of value.

Genesis, deterministic from the configuration:

- a synthetic genesis transaction ``blake2b("predmarket-devnet-genesis" ‖ networkId)``;
- the collateral token and the market registry at outputs 0 and 1 of it: their contract ids are
  ``contract_id_from_tx(genesisTxId, 0 | 1, group 0)``, so they depend on the network id only;
- the faucet's 10^9 ALPH in ten outputs and the operator's 10^6 ALPH in four, from output 2 on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Final

from predmarket.alephium.address import contract_address, format_address
from predmarket.alephium.constants import MINIMAL_CONTRACT_DEPOSIT, ONE_ALPH
from predmarket.alephium.contract import contract_id_from_tx
from predmarket.alephium.hashing import blake2b256
from predmarket.alephium.lockup import P2PKH, LockupScript, output_hint
from predmarket.alephium.signing import generate_private_key, public_key_from_private
from predmarket.alephium.tx import AssetOutput, output_ref_key
from predmarket.devnet.contracts.registry import MarketRegistry
from predmarket.devnet.contracts.token import CollateralToken
from predmarket.devnet.ledger import ContractRecord, Ledger, Utxo

CONFIG_FILE: Final = "devnet.json"
CONFIG_FORMAT: Final = 1

#: The group of the genesis contracts (and so of every market: sub-contracts share it).
CONTRACT_GROUP: Final = 0
GENESIS_FAUCET_ALPH: Final = 10**9 * ONE_ALPH
GENESIS_FAUCET_OUTPUTS: Final = 10
GENESIS_OPERATOR_ALPH: Final = 10**6 * ONE_ALPH
GENESIS_OPERATOR_OUTPUTS: Final = 4

DEFAULT_FAUCET_ALPH: Final = 100 * ONE_ALPH
DEFAULT_FAUCET_COLLATERAL: Final = 10_000 * 10**18
DEFAULT_FAUCET_COOLDOWN_MS: Final = 60_000

_COLLATERAL_OUTPUT: Final = 0
_REGISTRY_OUTPUT: Final = 1
_FIRST_ASSET_OUTPUT: Final = 2


def genesis_tx_id(network_id: int) -> bytes:
    return blake2b256(b"predmarket-devnet-genesis" + bytes([network_id]))


@dataclass(frozen=True)
class DevnetConfig:
    """What ``devnet.json`` holds. Private keys are devnet-only test keys (see the module)."""

    network_id: int
    groups: int
    genesis_timestamp: int
    operator_private_key: bytes
    faucet_private_key: bytes
    faucet_alph_amount: int = DEFAULT_FAUCET_ALPH
    faucet_collateral_amount: int = DEFAULT_FAUCET_COLLATERAL
    faucet_cooldown_ms: int = DEFAULT_FAUCET_COOLDOWN_MS

    @classmethod
    def generate(cls, *, network_id: int, groups: int, genesis_timestamp: int) -> DevnetConfig:
        return cls(
            network_id=network_id,
            groups=groups,
            genesis_timestamp=genesis_timestamp,
            operator_private_key=generate_private_key(),
            faucet_private_key=generate_private_key(),
        )

    # -- derived -------------------------------------------------------------------------------

    @cached_property
    def operator_public_key(self) -> bytes:
        return public_key_from_private(self.operator_private_key)

    @cached_property
    def faucet_public_key(self) -> bytes:
        return public_key_from_private(self.faucet_private_key)

    @cached_property
    def operator_lockup(self) -> LockupScript:
        return P2PKH(blake2b256(self.operator_public_key))

    @cached_property
    def faucet_lockup(self) -> LockupScript:
        return P2PKH(blake2b256(self.faucet_public_key))

    @property
    def operator_address(self) -> str:
        return format_address(self.operator_lockup)

    @property
    def faucet_address(self) -> str:
        return format_address(self.faucet_lockup)

    @cached_property
    def genesis_tx_id(self) -> bytes:
        return genesis_tx_id(self.network_id)

    @cached_property
    def collateral_token_id(self) -> bytes:
        return contract_id_from_tx(self.genesis_tx_id, _COLLATERAL_OUTPUT, CONTRACT_GROUP)

    @cached_property
    def registry_id(self) -> bytes:
        return contract_id_from_tx(self.genesis_tx_id, _REGISTRY_OUTPUT, CONTRACT_GROUP)

    @property
    def collateral_token_address(self) -> str:
        return contract_address(self.collateral_token_id)

    @property
    def registry_address(self) -> str:
        return contract_address(self.registry_id)

    # -- JSON ----------------------------------------------------------------------------------

    def to_json(self, *, include_secrets: bool = False) -> dict[str, object]:
        """camelCase JSON; private keys only with ``include_secrets`` (devnet.json has them)."""
        operator: dict[str, object] = {
            "address": self.operator_address,
            "publicKey": self.operator_public_key.hex(),
        }
        faucet: dict[str, object] = {
            "address": self.faucet_address,
            "publicKey": self.faucet_public_key.hex(),
            "attoAlphAmount": str(self.faucet_alph_amount),
            "collateralAmount": str(self.faucet_collateral_amount),
            "cooldownMs": self.faucet_cooldown_ms,
        }
        if include_secrets:
            operator["privateKey"] = self.operator_private_key.hex()
            faucet["privateKey"] = self.faucet_private_key.hex()
        doc: dict[str, object] = {
            "networkId": self.network_id,
            "groups": self.groups,
            "genesisTimestamp": self.genesis_timestamp,
            "collateralToken": {
                "contractId": self.collateral_token_id.hex(),
                "tokenId": self.collateral_token_id.hex(),
                "address": self.collateral_token_address,
                "decimals": 18,
            },
            "marketRegistry": {
                "contractId": self.registry_id.hex(),
                "address": self.registry_address,
            },
            "operator": operator,
            "faucet": faucet,
        }
        if include_secrets:
            doc = {
                "format": CONFIG_FORMAT,
                "warning": "devnet-only test keys: never use them for anything of value",
                **doc,
            }
        return doc

    @classmethod
    def from_json(cls, doc: dict[str, object]) -> DevnetConfig:
        if doc.get("format") != CONFIG_FORMAT:
            raise ValueError(f"unsupported {CONFIG_FILE} format {doc.get('format')!r}")
        operator = doc["operator"]
        faucet = doc["faucet"]
        assert isinstance(operator, dict) and isinstance(faucet, dict)
        network_id, groups, genesis = doc["networkId"], doc["groups"], doc["genesisTimestamp"]
        assert isinstance(network_id, int) and isinstance(groups, int)
        assert isinstance(genesis, int)
        return cls(
            network_id=network_id,
            groups=groups,
            genesis_timestamp=genesis,
            operator_private_key=bytes.fromhex(str(operator["privateKey"])),
            faucet_private_key=bytes.fromhex(str(faucet["privateKey"])),
            faucet_alph_amount=int(str(faucet["attoAlphAmount"])),
            faucet_collateral_amount=int(str(faucet["collateralAmount"])),
            faucet_cooldown_ms=int(str(faucet["cooldownMs"])),
        )

    def save(self, data_dir: Path) -> None:
        path = data_dir / CONFIG_FILE
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(self.to_json(include_secrets=True), indent=2) + "\n")
        tmp.chmod(0o600)
        tmp.replace(path)

    @classmethod
    def load(cls, data_dir: Path) -> DevnetConfig | None:
        path = data_dir / CONFIG_FILE
        if not path.exists():
            return None
        doc = json.loads(path.read_text())
        if not isinstance(doc, dict):
            raise ValueError(f"{path} is not a JSON object")
        return cls.from_json(doc)


def _split(total: int, parts: int) -> list[int]:
    share = total // parts
    return [share] * (parts - 1) + [total - share * (parts - 1)]


def genesis_ledger(config: DevnetConfig) -> tuple[Ledger, tuple[AssetOutput, ...]]:
    """The base ledger at genesis and the genesis transaction's asset outputs."""
    ledger = Ledger()
    token = CollateralToken(
        config.collateral_token_id, config.operator_lockup, config.faucet_lockup
    )
    registry = MarketRegistry(
        config.registry_id, config.operator_lockup, config.collateral_token_id
    )
    for native in (token, registry):
        native.initial_state_hash = native.state_hash()
        ledger.add_contract(ContractRecord(native.contract_id, native, MINIMAL_CONTRACT_DEPOSIT))
    outputs = [
        AssetOutput(amount, config.faucet_lockup)
        for amount in _split(GENESIS_FAUCET_ALPH, GENESIS_FAUCET_OUTPUTS)
    ] + [
        AssetOutput(amount, config.operator_lockup)
        for amount in _split(GENESIS_OPERATOR_ALPH, GENESIS_OPERATOR_OUTPUTS)
    ]
    for index, output in enumerate(outputs, start=_FIRST_ASSET_OUTPUT):
        key = output_ref_key(config.genesis_tx_id, index)
        ledger.add_utxo(Utxo.of(key, output_hint(output.lockup), output))
    return ledger, tuple(outputs)


#: ALPH in existence at genesis: the two outputs above plus the two contracts' deposits.
GENESIS_SUPPLY: Final = GENESIS_FAUCET_ALPH + GENESIS_OPERATOR_ALPH + 2 * MINIMAL_CONTRACT_DEPOSIT
