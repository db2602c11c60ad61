"""Protocol constants, in one place (chain-formats.md §5). Amounts are in attoALPH."""

from __future__ import annotations

from typing import Final

ONE_ALPH: Final = 10**18
NANO_ALPH: Final = 10**9

#: Every asset output needs at least this much ALPH; an output carrying a token exactly this.
DUST_AMOUNT: Final = 10**15
#: Minimum (and default) gas price of non-coinbase transactions: 100 nanoALPH per gas.
MIN_GAS_PRICE: Final = 100 * NANO_ALPH
DEFAULT_GAS_PRICE: Final = MIN_GAS_PRICE
#: Minimal gas per transaction, and thus the minimum fee 0.002 ALPH.
MINIMAL_GAS: Final = 20_000
#: Maximal gas per transaction since the Rhone upgrade.
MAX_GAS_PER_TX: Final = 5_000_000
#: Storage deposit a contract must keep (Rhone+), and the deposit of one map entry.
MINIMAL_CONTRACT_DEPOSIT: Final = ONE_ALPH // 10
MAP_ENTRY_DEPOSIT: Final = ONE_ALPH // 10

#: Gas schedule pieces used for estimates (SC ``GasSchedule``).
GAS_TX_BASE: Final = 1_000
GAS_PER_INPUT: Final = 2_000
GAS_PER_OUTPUT: Final = 4_500

MAX_TX_INPUTS: Final = 256
MAX_TX_OUTPUTS: Final = 256
MAX_TOKENS_PER_ASSET_OUTPUT: Final = 1
MAX_TOKENS_PER_CONTRACT_OUTPUT: Final = 8
MAX_OUTPUT_DATA_SIZE: Final = 256
#: The node limits P2MPKH to at most this many keys.
MAX_MULTISIG_KEYS: Final = 16

TOTAL_NUMBER_OF_GROUPS: Final = 4
DEFAULT_TX_VERSION: Final = 0

#: Node network ids (SC ``NetworkId``).
NETWORK_MAINNET: Final = 0
NETWORK_TESTNET: Final = 1
NETWORK_DEVNET: Final = 2

#: Token id of ALPH itself: 32 zero bytes.
ALPH_TOKEN_ID: Final = bytes(32)

#: secp256k1 group order; signatures with s > N/2 are rejected (low-s only).
SECP256K1_N: Final = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141

U256_MAX: Final = 2**256 - 1
I256_MIN: Final = -(2**255)
I256_MAX: Final = 2**255 - 1
I32_MIN: Final = -(2**31)
I32_MAX: Final = 2**31 - 1
U32_MAX: Final = 2**32 - 1
