"""Address strings: every type round-trips, ``:N`` handling, key derivation, rejection paths."""

from __future__ import annotations

import pytest

from predmarket.alephium import address as addr
from predmarket.alephium.base58 import b58decode, b58encode
from predmarket.alephium.errors import AlephiumError, EncodeError, InvalidAddress, InvalidKey
from predmarket.alephium.hashing import blake2b256, djb2, int32_bytes
from predmarket.alephium.lockup import (
    P2C,
    P2HMPK,
    P2MPKH,
    P2PK,
    P2PKH,
    P2SH,
    KeyKind,
    LockupScript,
    PublicKeyLike,
    encode_lockup,
    group_of,
)
from predmarket.alephium.serde import encode_i32

# Key and addresses of chain-vectors.txt (privateKey / publicKey / address.*).
PUBLIC_KEY = bytes.fromhex("0340bb27b45880aefc69d2766f8fcae749992bfd2edb7b745f090534035eac2720")
ADDRESS_DEFAULT = "1qFU9uLcMEmPpfpoNx8Dm2iHnkHh2Fb35Y8TCFGb7BoR"
ADDRESS_GL = "3cUs1DFrH9ZJcx2uTJ8H5EbEKWcmRzNQ6phHszK4NQDqdzWniwTft"

SECP256K1_P = 2**256 - 2**32 - 977


def _h(seed: int) -> bytes:
    return blake2b256(bytes([seed]))


SCRIPTS: list[LockupScript] = [
    P2PKH(_h(1)),
    P2MPKH((_h(1),), 1),
    P2MPKH((_h(1), _h(2), _h(3)), 2),
    P2MPKH(tuple(_h(i) for i in range(16)), 16),
    P2SH(_h(4)),
    P2C(_h(5)),
    P2C(bytes(32)),
    P2PK(PublicKeyLike(KeyKind.SECP256K1, PUBLIC_KEY), 0),
    P2PK(PublicKeyLike(KeyKind.SECP256K1, PUBLIC_KEY), 3),
    P2PK(PublicKeyLike(KeyKind.SECP256R1, b"\x02" + _h(6)), 1),
    P2PK(PublicKeyLike(KeyKind.ED25519, _h(7)), 2),
    P2PK(PublicKeyLike(KeyKind.WEBAUTHN, b"\x03" + _h(8)), 3),
    P2HMPK(_h(9), 0),
    P2HMPK(_h(9), 3),
]


def _script_id(script: LockupScript) -> str:
    return f"{type(script).__name__}-{encode_lockup(script).hex()[:12]}"


@pytest.mark.parametrize("script", [pytest.param(s, id=_script_id(s)) for s in SCRIPTS])
class TestRoundTrip:
    def test_format_then_parse(self, script: LockupScript) -> None:
        text = addr.format_address(script)
        assert addr.parse_address(text) == script
        assert addr.is_valid_address(text)
        assert addr.group_of_address(text) == group_of(script)
        assert addr.address_to_bytes(text) == encode_lockup(script)

    def test_parse_then_format(self, script: LockupScript) -> None:
        text = addr.format_address(script)
        assert addr.format_address(addr.parse_address(text)) == text

    def test_string_form(self, script: LockupScript) -> None:
        text = addr.format_address(script)
        if isinstance(script, P2PK | P2HMPK):
            # The string drops the group byte and shows it as ':N' instead.
            assert text.endswith(f":{script.group}")
            assert b58decode(text[:-2]) == encode_lockup(script)[:-1]
        else:
            assert b58decode(text) == encode_lockup(script)
            assert addr.format_address(script, explicit_group=False) == text


@pytest.mark.parametrize(
    "script",
    [pytest.param(s, id=_script_id(s)) for s in SCRIPTS if isinstance(s, P2PK | P2HMPK)],
)
def test_groupless_without_suffix_takes_the_default_group(script: P2PK | P2HMPK) -> None:
    bare = addr.format_address(script, explicit_group=False)
    assert ":" not in bare
    parsed = addr.parse_address(bare)
    assert type(parsed) is type(script)
    assert isinstance(parsed, P2PK | P2HMPK)
    assert parsed.group == script.default_group
    for group in range(4):
        assert addr.group_of_address(f"{bare}:{group}") == group


class TestGroupless:
    def test_p2pk_default_group_is_last_key_byte(self) -> None:
        # 0x20 % 4 == 0 (chain-vectors: group.gl(default group) = 0)
        assert addr.group_of_address(ADDRESS_GL) == PUBLIC_KEY[-1] % 4 == 0

    def test_p2hmpk_string_layout(self) -> None:
        key_set_hash = bytes(31) + b"\x07"
        script = P2HMPK(key_set_hash, 1)
        body = b"\x05" + key_set_hash + int32_bytes(djb2(key_set_hash))
        assert addr.format_address(script) == b58encode(body) + ":1"
        assert addr.parse_address(b58encode(body)) == P2HMPK(key_set_hash, 3)  # 7 % 4

    @pytest.mark.parametrize("tag", [4, 5])
    def test_bad_checksum_rejected(self, tag: int) -> None:
        script = SCRIPTS[7] if tag == 4 else SCRIPTS[12]
        assert isinstance(script, P2PK | P2HMPK)
        body = bytearray(encode_lockup(script)[:-1])
        body[-1] ^= 0x01
        with pytest.raises(InvalidAddress, match="checksum"):
            addr.parse_address(b58encode(bytes(body)))
        with pytest.raises(InvalidAddress, match="checksum"):
            addr.parse_address(b58encode(bytes(body)) + ":1")

    def test_key_change_breaks_checksum(self) -> None:
        body = bytearray(b58decode(ADDRESS_GL))
        body[10] ^= 0x40
        assert not addr.is_valid_address(b58encode(bytes(body)))

    @pytest.mark.parametrize("suffix", ["4", "5", "9", "j", "a", "-", " ", "٣", "²"])
    def test_invalid_group_suffix(self, suffix: str) -> None:
        with pytest.raises(InvalidAddress, match="group suffix"):
            addr.parse_address(f"{ADDRESS_GL}:{suffix}")

    @pytest.mark.parametrize(
        "text",
        [
            f"{ADDRESS_GL}:10",
            f"{ADDRESS_GL}::1",
            f"{ADDRESS_GL}:",
            f"{ADDRESS_GL} :1",
            f"{ADDRESS_GL}:1 ",
            ":1",
            "a:1",
            "1:1",
        ],
    )
    def test_malformed_suffix_forms(self, text: str) -> None:
        with pytest.raises(InvalidAddress):
            addr.parse_address(text)

    @pytest.mark.parametrize(
        "text", [ADDRESS_DEFAULT, "vobthYg1e9tPKhmF96rpkv3akCj7vhvgPpsP4qwZqDw3"]
    )
    def test_suffix_only_on_groupless(self, text: str) -> None:
        assert addr.is_valid_address(text)
        for group in range(4):
            with pytest.raises(InvalidAddress, match="only valid on a groupless"):
                addr.parse_address(f"{text}:{group}")

    def test_binary_form_with_group_byte_is_not_an_address(self) -> None:
        # base58 of the 40-byte binary lockup (group byte included) must not parse: the group
        # byte would be read as trailing data.
        full = addr.address_to_bytes(f"{ADDRESS_GL}:2")
        with pytest.raises(InvalidAddress):
            addr.parse_address(b58encode(full))
        with pytest.raises(InvalidAddress):
            addr.parse_address(b58encode(full) + ":2")

    def test_format_without_explicit_group(self) -> None:
        script = addr.parse_address(f"{ADDRESS_GL}:3")
        assert addr.format_address(script, explicit_group=False) == ADDRESS_GL
        assert addr.format_address(script) == f"{ADDRESS_GL}:3"


class TestRejections:
    @pytest.mark.parametrize(
        "text",
        [
            pytest.param("", id="empty"),
            pytest.param("1", id="one-zero-byte"),
            pytest.param("0OIl", id="non-base58"),
            pytest.param(ADDRESS_DEFAULT + "0", id="bad-char-at-end"),
            pytest.param(" " + ADDRESS_DEFAULT, id="leading-space"),
            pytest.param(ADDRESS_DEFAULT + "\n", id="trailing-newline"),
            pytest.param(ADDRESS_DEFAULT[:-1] + "é", id="non-ascii"),
            pytest.param("LUw", id="p2mpkh-n0-m0"),
            pytest.param("asdasdf", id="garbage"),
            pytest.param("z" * 5000, id="too-long"),
        ],
    )
    def test_invalid_strings(self, text: str) -> None:
        with pytest.raises(InvalidAddress):
            addr.parse_address(text)
        assert not addr.is_valid_address(text)

    def test_invalid_address_is_an_alephium_error(self) -> None:
        with pytest.raises(AlephiumError):
            addr.parse_address("")

    @pytest.mark.parametrize("value", [None, 5, b"1qFU"])
    def test_non_string(self, value: object) -> None:
        with pytest.raises(InvalidAddress):
            addr.parse_address(value)  # type: ignore[arg-type]
        assert not addr.is_valid_address(value)  # type: ignore[arg-type]

    @pytest.mark.parametrize("tag", [6, 7, 0x80, 0xFF])
    def test_unknown_tag(self, tag: int) -> None:
        with pytest.raises(InvalidAddress, match="unknown lockup script tag"):
            addr.parse_address(b58encode(bytes([tag]) + bytes(32)))

    @pytest.mark.parametrize("tag", [0, 2, 3])
    @pytest.mark.parametrize("length", [0, 1, 31, 33, 64])
    def test_wrong_hash_length(self, tag: int, length: int) -> None:
        with pytest.raises(InvalidAddress):
            addr.parse_address(b58encode(bytes([tag]) + b"\x11" * length))

    def test_trailing_bytes(self) -> None:
        raw = b58decode(ADDRESS_DEFAULT)
        with pytest.raises(InvalidAddress, match="trailing"):
            addr.parse_address(b58encode(raw + b"\x00"))

    def test_p2mpkh_threshold_out_of_range(self) -> None:
        hashes = _h(1) + _h(2)
        for m in (0, 3, -1):
            raw = b"\x01" + encode_i32(2) + hashes + encode_i32(m)
            with pytest.raises(InvalidAddress):
                addr.parse_address(b58encode(raw))

    def test_p2mpkh_without_keys(self) -> None:
        with pytest.raises(InvalidAddress):
            addr.parse_address(b58encode(b"\x01" + encode_i32(0) + encode_i32(0)))

    def test_p2mpkh_non_canonical_count(self) -> None:
        canonical = b"\x01" + encode_i32(1) + _h(1) + encode_i32(1)
        assert addr.is_valid_address(b58encode(canonical))
        # The count 1 written in the two-byte form decodes to the same script: reject the alias.
        aliased = b"\x01" + b"\x40\x01" + _h(1) + encode_i32(1)
        with pytest.raises(InvalidAddress, match="non-canonical"):
            addr.parse_address(b58encode(aliased))

    def test_unknown_public_key_kind(self) -> None:
        payload = b"\x04" + PUBLIC_KEY
        raw = b"\x04" + payload + int32_bytes(djb2(payload))
        with pytest.raises(InvalidAddress, match="public key kind"):
            addr.parse_address(b58encode(raw))

    def test_truncated_groupless(self) -> None:
        raw = b58decode(ADDRESS_GL)
        for cut in (1, 2, 5, 20, len(raw) - 1):
            with pytest.raises(InvalidAddress):
                addr.parse_address(b58encode(raw[:cut]))


# Known answers from the official SDK's own test suite (alephium-web3 address.test.ts).
SDK_GROUPS = [
    ("15EM5rGtt7dPRZScE4Z9oL2EDfj84JnoSgq3NNgdcGFyu", 0),
    ("1D59jXR9NpD9ZQqZTRVcVbKVh6ko5TUMt89WvkA8P9P7w", 1),
    ("14tAT3nm7UqVP7gZ35icSdT3AEffv1kaUUMbWQK5PFygr", 2),
    ("12F5aVQoQ7cNrgsVN2YPciwYvwmtJp4ohLa2x4R5KgLbG", 3),
    (
        "2jW1n2icPtc55Cdm8TF9FjGH681cWthsaZW3gaUFekFZepJoeyY3ZbY7y5SCtAjyCjLL24c4L2Vnfv3KDdAypCddfAY",
        0,
    ),
    (
        "2jXboVD9p66wrAHkPHx2AQocAzYXUWeppmRT3PuVT3ccxX9u8puTnwLeQ2VbTd4sNkgSEgk1cLbyVGLFshGweJCk1Mr",
        1,
    ),
    ("eBrjfQNeyUCuxE4zpbfMZcbS3PuvbMJDQBCyk4HRHtX4", 0),
    ("euWxyF55nGTxavL6mgGeMrFdvSRzHor8AmhgPXm8Lm9D", 1),
    ("n2pYTzmA27tkp7UNFPhMJpjz3jr5vgessxqJ7kwomBMF", 2),
    ("tLf6hDfrUugmxZhKxGoZMpAUBt3NcZ2hrTspTCmZ6JdQ", 3),
    ("yya86C6UemCeLs5Ztwjcf2Mp2Kkt4mwzzRpBiG6qQ9kj", 0),
    ("yya86C6UemCeLs5Ztwjcf2Mp2Kkt4mwzzRpBiG6qQ9kn", 3),
    ("3cUs6NYx4yS3n3t4ukgDcvHxvoer4i1tag2sJvEaadUjRottEiujx", 1),
    ("3cUqhqEgt8qFAokkD7qRsy9Q2Q9S1LEiSdogbBmaq7CnshB8BdjfK", 2),
    ("3cUrFgcoKdfWTqXEX32JsJyJ5y7rufetcUjo7bemo5kcS9zQghv5K", 3),
    ("3cUqhqEgt8qFAokkD7qRsy9Q2Q9S1LEiSdogbBmaq7CnshB8BdjfK:0", 0),
    ("3cUqhqEgt8qFAokkD7qRsy9Q2Q9S1LEiSdogbBmaq7CnshB8BdjfK:3", 3),
]


@pytest.mark.parametrize(("text", "group"), SDK_GROUPS)
def test_sdk_group_known_answers(text: str, group: int) -> None:
    assert addr.group_of_address(text) == group
    assert addr.format_address(addr.parse_address(text), explicit_group=":" in text) == text


@pytest.mark.parametrize(
    "text",
    [
        "15EM5rGtt7dPRZScE4Z9oL2EDfj84JnoSgq3NNgdcGF",
        "2jVWAcAPphJ8ueZNG1BPwbfPFjjbvorprceuqzgmJQ1ZRyELRpWgARvdB3T9trqpiJs7f4GkudPt6rQLnGbQYqq2NCi",
        "2jW1n2icPtc55Cdm8TF9FjGH681cWthsaZW3gaUFekFZepJoeyY3ZbY7y5SCtAjyCjLL24c4L2Vnfv3KDdAypCddfAY1",
        "3cUqhqEgt8qFAokkD7qRsy9Q2Q9S1LEiSdogbBmaq7CnshB8Bdjfv",
        "3cUqhqEgt8qFAokkD7qRsy9Q2Q9S1LEiSdogbBmaq7CnshB8BdjfK:4",
        "3cUqhqEgt8qFAokkD7qRsy9Q2Q9S1LEiSdogbBmaq7CnshB8BdjfK:j",
        "thebear",
    ],
)
def test_sdk_invalid_known_answers(text: str) -> None:
    assert not addr.is_valid_address(text)


def test_sdk_groupless_ed25519_bytes() -> None:
    text = "bQzqBqFx88QitLeX7oCJh1Xvpr9tKUAFoSo9rhAZukfj6SvTYXh"
    body = "0402d105a6c69a0be5fb5d45df8a2bd7f442d45fe31a1dac842b8eb5753672d65d446d8b5390"
    assert addr.address_to_bytes(text).hex() == body + "00"
    assert addr.address_to_bytes(text + ":2").hex() == body + "02"
    script = addr.parse_address(text)
    assert isinstance(script, P2PK)
    assert script.public_key.kind == KeyKind.ED25519


@pytest.mark.parametrize(
    ("kind", "public_key", "text"),
    [
        (
            KeyKind.SECP256K1,
            "029592852f5d289785904b89a073ff80ee6155c894b1d13ecb16bcf3ac02473e1a",
            "3cUqhqEgt8qFAokkD7qRsy9Q2Q9S1LEiSdogbBmaq7CnshB8BdjfK",
        ),
        (
            KeyKind.ED25519,
            "1294599c73fbf283d21f459d726fcd7f1a6db5e17c4fa27f4741930a6a516db9",
            "bPYxb2BrXEJnq8FSsbhvh4yaYNi7RsZH86CoZydESu2PLeGCWuH",
        ),
        (
            KeyKind.WEBAUTHN,
            "031b2ce5f97c227271064705af14fc551bd62faac3f1950b19806f410bda216d96",
            "3cvbcPRy7yy6g68BTj559RngyZphe2ySbsns561cBGWFSvmpr5BYi",
        ),
    ],
)
def test_sdk_groupless_address_from_key(kind: KeyKind, public_key: str, text: str) -> None:
    key = PublicKeyLike(kind, bytes.fromhex(public_key))
    script = P2PK(key, key.key[-1] % 4)
    assert addr.format_address(script, explicit_group=False) == text
    assert addr.parse_address(text) == script


def test_sdk_default_address_from_key() -> None:
    public_key = bytes.fromhex("030f9f042a9410969f1886f85fa20f6e43176ae23fc5e64db15b3767c84c5db2dc")
    assert (
        addr.address_from_public_key(public_key) == "1ACCkgFfmTif46T3qK12znuWjb5Bk9jXpqaeWt2DXx8oc"
    )


class TestContracts:
    def test_sdk_contract_id_round_trip(self) -> None:
        contract_id = bytes.fromhex(
            "1f6b937b935d7fac894fb22ffe2b974cae9c8c166501372f1b9155144e0ff4ae"
        )
        text = "vobthYg1e9tPKhmF96rpkv3akCj7vhvgPpsP4qwZqDw3"
        assert addr.contract_address(contract_id) == text
        assert addr.contract_id_from_address(text) == contract_id

    @pytest.mark.parametrize("last", [0, 1, 2, 3, 0xFE, 0xFF])
    def test_contract_group_is_last_byte(self, last: int) -> None:
        text = addr.contract_address(bytes(31) + bytes([last]))
        assert addr.group_of_address(text) == last  # as the node: the byte itself

    @pytest.mark.parametrize("text", [ADDRESS_DEFAULT, ADDRESS_GL, f"{ADDRESS_GL}:1"])
    def test_contract_id_of_non_contract(self, text: str) -> None:
        with pytest.raises(InvalidAddress, match="not a contract"):
            addr.contract_id_from_address(text)

    def test_contract_id_of_invalid(self) -> None:
        with pytest.raises(InvalidAddress):
            addr.contract_id_from_address("nope0")

    @pytest.mark.parametrize("length", [0, 31, 33])
    def test_contract_address_wrong_length(self, length: int) -> None:
        with pytest.raises(EncodeError):
            addr.contract_address(bytes(length))


def _not_on_curve_x() -> bytes:
    # An x with no y on secp256k1: x^3 + 7 is a quadratic non-residue mod p.
    x = 1
    while pow(x**3 + 7, (SECP256K1_P - 1) // 2, SECP256K1_P) == 1:
        x += 1
    return x.to_bytes(32, "big")


class TestKeys:
    def test_key_types(self) -> None:
        assert addr.KeyType("default") is addr.KeyType.DEFAULT
        assert addr.KeyType("gl-secp256k1") is addr.KeyType.GL_SECP256K1
        assert {k.value for k in addr.KeyType} == {"default", "gl-secp256k1"}

    def test_default_lockup(self) -> None:
        script = addr.lockup_from_public_key(PUBLIC_KEY, "default")
        assert script == P2PKH(blake2b256(PUBLIC_KEY))
        assert addr.lockup_from_public_key(PUBLIC_KEY, "default", group=1) == script

    def test_default_lockup_wrong_group(self) -> None:
        with pytest.raises(EncodeError, match="group 1"):
            addr.lockup_from_public_key(PUBLIC_KEY, "default", group=2)

    @pytest.mark.parametrize("group", [0, 1, 2, 3])
    def test_groupless_lockup_in_group(self, group: int) -> None:
        script = addr.lockup_from_public_key(PUBLIC_KEY, addr.KeyType.GL_SECP256K1, group)
        assert script == P2PK(PublicKeyLike(KeyKind.SECP256K1, PUBLIC_KEY), group)
        assert addr.format_address(script) == f"{ADDRESS_GL}:{group}"

    @pytest.mark.parametrize("group", [-1, 4, 255])
    def test_groupless_lockup_group_out_of_range(self, group: int) -> None:
        with pytest.raises(EncodeError):
            addr.lockup_from_public_key(PUBLIC_KEY, "gl-secp256k1", group)

    def test_address_from_public_key(self) -> None:
        assert addr.address_from_public_key(PUBLIC_KEY) == ADDRESS_DEFAULT
        assert addr.address_from_public_key(PUBLIC_KEY, "gl-secp256k1") == ADDRESS_GL

    @pytest.mark.parametrize("key_type", ["bip340-schnorr", "gl-ed25519", "DEFAULT", ""])
    def test_unsupported_key_type(self, key_type: str) -> None:
        with pytest.raises(InvalidKey, match="unsupported key type"):
            addr.address_from_public_key(PUBLIC_KEY, key_type)

    @pytest.mark.parametrize(
        "public_key",
        [
            pytest.param(b"", id="empty"),
            pytest.param(PUBLIC_KEY[:32], id="32-bytes"),
            pytest.param(PUBLIC_KEY + b"\x00", id="34-bytes"),
            pytest.param(b"\x04" + PUBLIC_KEY[1:], id="prefix-04"),
            pytest.param(b"\x00" + PUBLIC_KEY[1:], id="prefix-00"),
            pytest.param(b"\x02" + _not_on_curve_x(), id="not-on-curve"),
            pytest.param(b"\x02" + (2**256 - 1).to_bytes(32, "big"), id="x-above-p"),
        ],
    )
    @pytest.mark.parametrize("key_type", ["default", "gl-secp256k1"])
    def test_invalid_public_key(self, public_key: bytes, key_type: str) -> None:
        with pytest.raises(InvalidKey):
            addr.lockup_from_public_key(public_key, key_type)
        with pytest.raises(InvalidKey):
            addr.address_from_public_key(public_key, key_type)

    def test_uncompressed_key_rejected(self) -> None:
        from coincurve import PublicKey

        uncompressed = PublicKey(PUBLIC_KEY).format(compressed=False)
        with pytest.raises(InvalidKey):
            addr.address_from_public_key(uncompressed)


class TestKeyTypeMatching:
    @pytest.mark.parametrize(
        ("text", "default", "groupless"),
        [
            (ADDRESS_DEFAULT, True, False),
            (ADDRESS_GL, False, True),
            (f"{ADDRESS_GL}:3", False, True),
            ("bPYxb2BrXEJnq8FSsbhvh4yaYNi7RsZH86CoZydESu2PLeGCWuH", False, False),  # ed25519
            ("eBrjfQNeyUCuxE4zpbfMZcbS3PuvbMJDQBCyk4HRHtX4", False, False),  # P2SH
            ("vobthYg1e9tPKhmF96rpkv3akCj7vhvgPpsP4qwZqDw3", False, False),  # P2C
            (addr.format_address(P2MPKH((_h(1),), 1)), False, False),
            (addr.format_address(P2HMPK(_h(2), 0)), False, False),
            ("not-an-address", False, False),
        ],
    )
    def test_matches(self, text: str, default: bool, groupless: bool) -> None:
        assert addr.address_matches_key_type(text, "default") is default
        assert addr.address_matches_key_type(text, addr.KeyType.GL_SECP256K1) is groupless
        assert addr.address_matches_key_type(text, "bip340-schnorr") is False

    def test_belongs_to_key(self) -> None:
        assert addr.address_belongs_to_key(ADDRESS_DEFAULT, PUBLIC_KEY, "default")
        assert not addr.address_belongs_to_key(ADDRESS_DEFAULT, PUBLIC_KEY, "gl-secp256k1")
        for suffix in ("", ":0", ":1", ":2", ":3"):
            text = ADDRESS_GL + suffix
            assert addr.address_belongs_to_key(text, PUBLIC_KEY, "gl-secp256k1")
            assert not addr.address_belongs_to_key(text, PUBLIC_KEY, "default")

    def test_belongs_to_other_key(self) -> None:
        other = bytes.fromhex("030f9f042a9410969f1886f85fa20f6e43176ae23fc5e64db15b3767c84c5db2dc")
        assert not addr.address_belongs_to_key(ADDRESS_DEFAULT, other, "default")
        assert not addr.address_belongs_to_key(ADDRESS_GL, other, "gl-secp256k1")
        assert not addr.address_belongs_to_key(ADDRESS_GL, b"\x02" + bytes(32), "gl-secp256k1")
        assert not addr.address_belongs_to_key("", PUBLIC_KEY, "default")
