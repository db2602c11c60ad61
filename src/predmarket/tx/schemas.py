"""Bodies and responses of the transaction builders (spec 2.4 and the 4.2 body table)."""

from __future__ import annotations

from typing import Annotated, Final, Literal

from pydantic import AfterValidator, Field
from pydantic_core import PydanticCustomError

from predmarket.alephium.address import MAX_ADDRESS_LENGTH, parse_address
from predmarket.alephium.errors import AlephiumError
from predmarket.alephium.lockup import P2PK, P2PKH, KeyKind
from predmarket.alephium.signing import validate_public_key
from predmarket.exchange import MAX_TICK, MIN_TICK, QUANTITY_STEP
from predmarket.kit.schemas import Amount, BaseSchema, InputSchema, example

HEX32_PATTERN: Final = r"^[0-9a-f]{64}$"

KeyTypeName = Literal["default", "gl-secp256k1"]

# -- examples: one consistent set, a default-key wallet's buy of 5 YES at 640 on the first market
# of a fresh devnet (network id 4), built by the devnet

EXAMPLE_SIGNER = "17xWHPjBAnCwuXp3gmr3KgW1tAtWxRMe8dDsJqjSZjQWm"
EXAMPLE_PUBLIC_KEY = "02258e09d412bd402074ad4e69e95ce69e75ac6970ebffec96cc4079e8c3da541b"
EXAMPLE_MARKET = "vqD1HoSAqk6VD9s2k7JpVqv6zX5iVCDpAngTDpYVLaeb"
EXAMPLE_COLLATERAL_ID = "31703b58bd4bec431a620ee8b9e4fb0aa26888d9600b89f2dd771e846f964800"
EXAMPLE_UNSIGNED_TX = (
    "0004010101030000000fb47a13c402d84e69f2f48000a214402031703b58bd4bec431a620ee8b9e4"
    "fb0aa26888d9600b89f2dd771e846f96480013c42d84e69f2f480000a30c0c13428013c445639182"
    "44f40000100c1440201fd4dc2a6fb457a75a7d0e518a641d092c96f282cf73c1e4a4320c40a85c17"
    "00010080016f30c1174876e800023f6c00d1f0cdf1f333ede437c0e958a2efa2fdbd488f37bbcf6c"
    "4b4b7eba73c3479540a70002258e09d412bd402074ad4e69e95ce69e75ac6970ebffec96cc4079e8"
    "c3da541b3f6c00d1acd33c44130915c055fb380a623b69e6644c76e22c815b0f80396f0c34e02877"
    "0302c3038d7ea4c6800000675e2d0f95769bc898253ff76f50064934aa19006d057561ba384f91cd"
    "53c1aa00000000000000000131703b58bd4bec431a620ee8b9e4fb0aa26888d9600b89f2dd771e84"
    "6f964800c6021dec5be31b82f8000000c50568cdaa836338000000675e2d0f95769bc898253ff76f"
    "50064934aa19006d057561ba384f91cd53c1aa00000000000000000000"
)
EXAMPLE_TX_ID = "2d0da1aef1817cea535ede3c980b112d818300c6858584cbac8b41c54bb48d34"


def _signer_address(value: str) -> str:
    try:
        script = parse_address(value)
    except AlephiumError:
        raise PydanticCustomError("address_invalid", "not a valid address") from None
    if isinstance(script, P2PKH) or (
        isinstance(script, P2PK) and script.public_key.kind == KeyKind.SECP256K1
    ):
        return value
    raise PydanticCustomError(
        "address_type",
        "the signer must be a default (P2PKH, 1…) or gl-secp256k1 (groupless, 3…) address",
    )


def _public_key(value: str) -> str:
    try:
        validate_public_key(bytes.fromhex(value))
    except (ValueError, AlephiumError):
        raise PydanticCustomError(
            "public_key_invalid", "not a compressed secp256k1 public key (33 bytes of hex)"
        ) from None
    return value.lower()


def _order_quantity(value: int) -> int:
    if value <= 0 or value % QUANTITY_STEP:
        raise PydanticCustomError(
            "quantity_step",
            "quantity must be a positive multiple of {step} base units",
            {"step": QUANTITY_STEP},
        )
    return value


SignerAddress = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_ADDRESS_LENGTH,
        description="The wallet that signs: a default address (1…) or a groupless "
        "gl-secp256k1 address (3…, optionally with a :N group suffix). Until wallet sessions "
        "exist it is required and checked against signerPublicKey; later it must equal the "
        "session's wallet.",
        examples=[EXAMPLE_SIGNER],
    ),
    AfterValidator(_signer_address),
]
SignerPublicKey = Annotated[
    str,
    Field(
        pattern=r"^[0-9a-fA-F]{66}$",
        description="The signer's compressed secp256k1 public key, 33 bytes of hex.",
        examples=[EXAMPLE_PUBLIC_KEY],
    ),
    AfterValidator(_public_key),
]
SignerKeyType = Annotated[
    KeyTypeName | None,
    Field(
        description="`default` for 1… addresses, `gl-secp256k1` for 3… addresses; inferred from "
        "signerAddress when absent, and refused when it does not match it.",
    ),
]


class TxPlaceOrder(InputSchema):
    """Body of ``POST /v1/tx/markets/{address}/orders``: one limit order."""

    model_config = example(
        {
            "signerAddress": EXAMPLE_SIGNER,
            "signerPublicKey": EXAMPLE_PUBLIC_KEY,
            "signerKeyType": "default",
            "side": "buy",
            "outcome": "yes",
            "price": 640,
            "quantity": "5000000000000000000",
        }
    )

    signer_address: SignerAddress
    signer_public_key: SignerPublicKey
    signer_key_type: SignerKeyType = None
    side: Literal["buy", "sell"]
    outcome: Literal["yes", "no"]
    price: Annotated[
        int,
        Field(
            strict=True,
            ge=MIN_TICK,
            le=MAX_TICK,
            description="Limit price as a tick: 1..999 thousandths of the payout (0 and 1000 "
            "are refused).",
            examples=[640],
        ),
    ]
    quantity: Annotated[
        Amount,
        AfterValidator(_order_quantity),
        Field(
            description="Shares in base units (18 decimals), a positive multiple of 10000000.",
            examples=["5000000000000000000"],
        ),
    ]


class TxCancelOrder(InputSchema):
    """Body of ``DELETE /v1/tx/markets/{address}/orders/{id}``: who cancels.

    A DELETE with a JSON body: it names the signer until wallet sessions exist; then the session
    does and the body becomes optional (spec 4.2 lists no request for this route).
    """

    model_config = example(
        {
            "signerAddress": EXAMPLE_SIGNER,
            "signerPublicKey": EXAMPLE_PUBLIC_KEY,
            "signerKeyType": "default",
        }
    )

    signer_address: SignerAddress
    signer_public_key: SignerPublicKey
    signer_key_type: SignerKeyType = None


class TxToken(BaseSchema):
    """A token the transaction locks: its id and raw amount."""

    model_config = example({"id": EXAMPLE_COLLATERAL_ID, "amount": "3280000000000000000"})

    id: Annotated[str, Field(pattern=HEX32_PATTERN, description="token id, 32 bytes of hex")]
    amount: Amount


class TxBuild(BaseSchema):
    """An unsigned transaction (spec 2.4). Sign ``txId`` with the signer's key and submit
    ``unsignedTx`` with the signature to a node; the node's txId must equal this one."""

    model_config = example(
        {
            "unsignedTx": EXAMPLE_UNSIGNED_TX,
            "txId": EXAMPLE_TX_ID,
            "fromGroup": 2,
            "toGroup": 2,
            "gasAmount": 94000,
            "gasPrice": "100000000000",
            "collateralRequired": "3280000000000000000",
            "attoAlphAmount": "214400000000000000",
            "tokens": [{"id": EXAMPLE_COLLATERAL_ID, "amount": "3280000000000000000"}],
        }
    )

    unsigned_tx: Annotated[str, Field(description="the unsigned transaction, hex")]
    tx_id: Annotated[
        str,
        Field(
            pattern=HEX32_PATTERN,
            description="the id the transaction has once signed and submitted (what is signed)",
        ),
    ]
    from_group: Annotated[int, Field(ge=0, description="chain shard group of the inputs")]
    to_group: Annotated[int, Field(ge=0, description="chain shard group of the outputs")]
    gas_amount: Annotated[int, Field(ge=0, description="gas units the transaction may use")]
    gas_price: Annotated[Amount, Field(description="attoALPH per gas unit")]
    collateral_required: Annotated[
        Amount,
        Field(
            description="collateral the transaction locks: price * quantity / 1000 * 1.025 for "
            "a buy (the 2.5% fee included, rounded up), 0 for a sell or a cancel"
        ),
    ]
    atto_alph_amount: Annotated[
        Amount,
        Field(
            description="ALPH the transaction takes from the wallet: the gas fee plus the "
            "approved order deposit (0.2 ALPH, refundable) and its dust headroom (0.005 ALPH, "
            "returned when unused)"
        ),
    ]
    tokens: Annotated[list[TxToken], Field(description="tokens the transaction locks")]
