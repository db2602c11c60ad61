"""secp256k1 signing: message hashers, strict signature format, low-s, rejection paths."""

from __future__ import annotations

import hashlib

import pytest
from coincurve import PrivateKey, PublicKey

from predmarket.alephium import signing
from predmarket.alephium.constants import SECP256K1_N
from predmarket.alephium.errors import AlephiumError, InvalidKey, InvalidSignatureFormat
from predmarket.alephium.signing import InvalidMessage, MessageHasher

# chain-vectors.txt privateKey / publicKey / privateKey2.
PRIVATE_KEY = bytes.fromhex("3aaae518f9d62205882ec740e4aa2ca958e6d721fb55986e89bb59ab2b977e8c")
PUBLIC_KEY = bytes.fromhex("0340bb27b45880aefc69d2766f8fcae749992bfd2edb7b745f090534035eac2720")
PRIVATE_KEY_2 = bytes.fromhex("03ec120ab840d108dd2218af7072452d97c3359cbb16778795731d107753aec3")
DIGEST = hashlib.sha256(b"digest").digest()


def _split(signature: str) -> tuple[int, int]:
    raw = bytes.fromhex(signature)
    return int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big")


def _join(r: int, s: int) -> str:
    return (r.to_bytes(32, "big") + s.to_bytes(32, "big")).hex()


def _der(signature: str) -> bytes:
    r, s = _split(signature)

    def integer(v: int) -> bytes:
        body = v.to_bytes((v.bit_length() + 8) // 8, "big")
        return bytes([2, len(body)]) + body

    body = integer(r) + integer(s)
    return bytes([0x30, len(body)]) + body


class TestHashMessage:
    def test_alephium_prefix(self) -> None:
        expected = hashlib.blake2b(b"Alephium Signed Message: hi", digest_size=32).digest()
        assert signing.hash_message("hi") == expected
        assert signing.hash_message("hi", "alephium") == expected
        assert signing.hash_message("hi", MessageHasher.ALEPHIUM) == expected

    def test_blake2b_and_sha256(self) -> None:
        assert (
            signing.hash_message("hé", "blake2b")
            == hashlib.blake2b("hé".encode(), digest_size=32).digest()
        )
        assert signing.hash_message("hé", "sha256") == hashlib.sha256("hé".encode()).digest()

    def test_message_taken_verbatim(self) -> None:
        # No trimming or newline normalization: every variant hashes differently.
        variants = ["m", "m\n", " m", "m\r\n", "M"]
        hashes = {signing.hash_message(v, h) for v in variants for h in ("alephium", "blake2b")}
        assert len(hashes) == 2 * len(variants)

    @pytest.mark.parametrize("hasher", ["alephium", "blake2b", "sha256"])
    def test_surrogates_hash_like_javascript(self, hasher: str) -> None:
        # JSON can carry "\\ud800"; the SDK's TextEncoder turns a lone surrogate into U+FFFD
        # and a high+low pair into the astral character it spells.
        lone = signing.hash_message("a\ud800b", hasher)
        assert lone == signing.hash_message("a\ufffdb", hasher)
        assert signing.hash_message("\udc00\ud800", hasher) == signing.hash_message(
            "\ufffd\ufffd", hasher
        )
        assert signing.hash_message("\ud83d\ude00", hasher) == signing.hash_message("😀", hasher)

    def test_surrogate_message_signs_and_verifies(self) -> None:
        signature = signing.sign_message(PRIVATE_KEY, "a\ud800b")
        assert signing.verify_message("a\ud800b", "alephium", PUBLIC_KEY, signature)
        assert signing.verify_message("a\ufffdb", "alephium", PUBLIC_KEY, signature)

    def test_empty_message(self) -> None:
        assert signing.hash_message("", "sha256") == hashlib.sha256(b"").digest()

    @pytest.mark.parametrize(
        "digest_hex", ["ab" * 32, "AB" * 32, "0123456789abcdefABCDEF" * 2 + "00" * 10]
    )
    def test_identity(self, digest_hex: str) -> None:
        assert signing.hash_message(digest_hex, "identity") == bytes.fromhex(digest_hex)

    @pytest.mark.parametrize(
        "message",
        [
            pytest.param("", id="empty"),
            pytest.param("ab" * 31, id="31-bytes"),
            pytest.param("ab" * 33, id="33-bytes"),
            pytest.param("ab" * 31 + "a", id="odd-length"),
            pytest.param("zz" * 32, id="not-hex"),
            pytest.param("ab" * 31 + " a", id="whitespace-64-chars"),
            pytest.param("0x" + "ab" * 31, id="0x-prefix"),
            pytest.param("hello", id="text"),
        ],
    )
    def test_identity_rejects(self, message: str) -> None:
        with pytest.raises(InvalidMessage, match="32 bytes"):
            signing.hash_message(message, "identity")

    @pytest.mark.parametrize("hasher", ["keccak", "ALEPHIUM", "", "sha-256"])
    def test_unknown_hasher(self, hasher: str) -> None:
        with pytest.raises(InvalidMessage, match="unknown message hasher"):
            signing.hash_message("hi", hasher)

    def test_non_string_message(self) -> None:
        with pytest.raises(InvalidMessage):
            signing.hash_message(b"hi", "sha256")  # type: ignore[arg-type]

    def test_invalid_message_is_an_alephium_error(self) -> None:
        assert issubclass(InvalidMessage, AlephiumError)


class TestKeys:
    def test_public_key_from_private_sdk_known_answer(self) -> None:
        # alephium-web3 address.test.ts
        private_key = bytes.fromhex(
            "91411e484289ec7e8b3058697f53f9b26fa7305158b4ef1a81adfbabcf090e45"
        )
        assert (
            signing.public_key_from_private(private_key).hex()
            == "030f9f042a9410969f1886f85fa20f6e43176ae23fc5e64db15b3767c84c5db2dc"
        )

    @pytest.mark.parametrize(
        "private_key",
        [
            pytest.param(bytes(32), id="zero"),
            pytest.param(SECP256K1_N.to_bytes(32, "big"), id="n"),
            pytest.param((SECP256K1_N + 1).to_bytes(32, "big"), id="n+1"),
            pytest.param(b"\xff" * 32, id="max"),
            pytest.param(PRIVATE_KEY[:31], id="31-bytes"),
            pytest.param(PRIVATE_KEY + b"\x00", id="33-bytes"),
            pytest.param(b"", id="empty"),
        ],
    )
    def test_invalid_private_key(self, private_key: bytes) -> None:
        with pytest.raises(InvalidKey):
            signing.public_key_from_private(private_key)
        with pytest.raises(InvalidKey):
            signing.sign_hash(private_key, DIGEST)

    def test_private_key_as_hex_string_rejected(self) -> None:
        with pytest.raises(InvalidKey):
            signing.public_key_from_private(PRIVATE_KEY.hex())  # type: ignore[arg-type]

    def test_extreme_valid_private_keys(self) -> None:
        for scalar in (1, SECP256K1_N - 1):
            key = scalar.to_bytes(32, "big")
            signature = signing.sign_hash(key, DIGEST)
            assert signing.verify_hash(DIGEST, signature, signing.public_key_from_private(key))

    def test_generate_private_key(self) -> None:
        keys = {signing.generate_private_key() for _ in range(20)}
        assert len(keys) == 20
        for key in keys:
            assert len(key) == 32
            assert 0 < int.from_bytes(key, "big") < SECP256K1_N
            assert len(signing.public_key_from_private(key)) == 33

    def test_validate_public_key(self) -> None:
        assert signing.validate_public_key(PUBLIC_KEY) == PUBLIC_KEY
        with pytest.raises(InvalidKey):
            signing.validate_public_key(PublicKey(PUBLIC_KEY).format(compressed=False))


class TestSign:
    def test_deterministic(self) -> None:
        assert signing.sign_hash(PRIVATE_KEY, DIGEST) == signing.sign_hash(PRIVATE_KEY, DIGEST)

    def test_format(self) -> None:
        signature = signing.sign_hash(PRIVATE_KEY, DIGEST)
        assert len(signature) == 128
        assert signature == signature.lower()
        assert signing.parse_signature(signature) == bytes.fromhex(signature)

    def test_low_s(self) -> None:
        for i in range(50):
            digest = hashlib.sha256(i.to_bytes(2, "big")).digest()
            _, s = _split(signing.sign_hash(PRIVATE_KEY, digest))
            assert 0 < s <= SECP256K1_N // 2

    def test_matches_coincurve_reference(self) -> None:
        expected = PrivateKey(PRIVATE_KEY).sign_recoverable(DIGEST, hasher=None)[:64].hex()
        assert signing.sign_hash(PRIVATE_KEY, DIGEST) == expected

    def test_sign_message_is_sign_of_hash(self) -> None:
        for hasher in ("alephium", "blake2b", "sha256"):
            assert signing.sign_message(PRIVATE_KEY, "x", hasher) == signing.sign_hash(
                PRIVATE_KEY, signing.hash_message("x", hasher)
            )

    def test_sign_message_default_hasher_is_alephium(self) -> None:
        assert signing.sign_message(PRIVATE_KEY, "x") == signing.sign_message(
            PRIVATE_KEY, "x", "alephium"
        )

    @pytest.mark.parametrize("length", [0, 31, 33, 64])
    def test_digest_must_be_32_bytes(self, length: int) -> None:
        with pytest.raises(InvalidMessage):
            signing.sign_hash(PRIVATE_KEY, bytes(length))
        with pytest.raises(InvalidMessage):
            signing.sign_tx_id(PRIVATE_KEY, bytes(length))

    def test_sign_message_rejects_bad_identity(self) -> None:
        with pytest.raises(InvalidMessage):
            signing.sign_message(PRIVATE_KEY, "abc", "identity")


class TestParseSignature:
    def test_valid(self) -> None:
        text = "0" * 63 + "1" + "f" * 64
        assert signing.parse_signature(text) == bytes.fromhex(text)

    @pytest.mark.parametrize(
        "text",
        [
            pytest.param("", id="empty"),
            pytest.param("ab" * 63, id="126-chars"),
            pytest.param("ab" * 65, id="130-chars-recoverable"),
            pytest.param("ab" * 64 + "\n", id="trailing-newline"),
            pytest.param("AB" * 64, id="uppercase"),
            pytest.param("ab" * 63 + "aB", id="one-uppercase"),
            pytest.param("0x" + "ab" * 63, id="0x-prefix"),
            pytest.param("gg" * 64, id="non-hex"),
            pytest.param("ab" * 63 + " a", id="space"),
            pytest.param("ab" * 63 + "a٣", id="unicode-digit"),
        ],
    )
    def test_invalid(self, text: str) -> None:
        with pytest.raises(InvalidSignatureFormat):
            signing.parse_signature(text)

    def test_der_rejected(self) -> None:
        der = _der(signing.sign_hash(PRIVATE_KEY, DIGEST)).hex()
        with pytest.raises(InvalidSignatureFormat):
            signing.parse_signature(der)

    def test_non_string(self) -> None:
        with pytest.raises(InvalidSignatureFormat):
            signing.parse_signature(bytes(64))  # type: ignore[arg-type]


class TestVerify:
    SIGNATURE = signing.sign_hash(PRIVATE_KEY, DIGEST)

    def test_valid(self) -> None:
        assert signing.verify_hash(DIGEST, self.SIGNATURE, PUBLIC_KEY) is True

    def test_high_s_rejected(self) -> None:
        r, s = _split(self.SIGNATURE)
        high = _join(r, SECP256K1_N - s)
        assert _split(high)[1] > SECP256K1_N // 2
        # (r, n - s) is the malleated twin: mathematically valid, but the node refuses it.
        assert signing.verify_hash(DIGEST, high, PUBLIC_KEY) is False

    def test_uppercase_signature_rejected(self) -> None:
        assert signing.verify_hash(DIGEST, self.SIGNATURE.upper(), PUBLIC_KEY) is False

    def test_der_signature_rejected(self) -> None:
        der = _der(self.SIGNATURE)
        assert PublicKey(PUBLIC_KEY).verify(der, DIGEST, hasher=None)  # valid DER of the same sig
        assert signing.verify_hash(DIGEST, der.hex(), PUBLIC_KEY) is False

    def test_recoverable_signature_rejected(self) -> None:
        recoverable = PrivateKey(PRIVATE_KEY).sign_recoverable(DIGEST, hasher=None).hex()
        assert recoverable[:128] == self.SIGNATURE
        assert signing.verify_hash(DIGEST, recoverable, PUBLIC_KEY) is False

    def test_wrong_key(self) -> None:
        other = signing.public_key_from_private(PRIVATE_KEY_2)
        assert signing.verify_hash(DIGEST, self.SIGNATURE, other) is False

    def test_wrong_digest(self) -> None:
        assert (
            signing.verify_hash(hashlib.sha256(b"x").digest(), self.SIGNATURE, PUBLIC_KEY) is False
        )

    @pytest.mark.parametrize("position", [0, 31, 32, 63])
    def test_flipped_bit(self, position: int) -> None:
        raw = bytearray(bytes.fromhex(self.SIGNATURE))
        raw[position] ^= 0x01
        assert signing.verify_hash(DIGEST, raw.hex(), PUBLIC_KEY) is False

    @pytest.mark.parametrize(
        ("r", "s"),
        [
            pytest.param(0, 1, id="r=0"),
            pytest.param(1, 0, id="s=0"),
            pytest.param(SECP256K1_N, 1, id="r=n"),
            pytest.param(1, SECP256K1_N, id="s=n"),
            pytest.param(2**256 - 1, 1, id="r=max"),
            pytest.param(1, SECP256K1_N // 2 + 1, id="s=half+1"),
        ],
    )
    def test_out_of_range_scalars(self, r: int, s: int) -> None:
        assert signing.verify_hash(DIGEST, _join(r, s), PUBLIC_KEY) is False

    @pytest.mark.parametrize(
        "public_key",
        [
            pytest.param(b"", id="empty"),
            pytest.param(PUBLIC_KEY[:32], id="short"),
            pytest.param(b"\x02" + bytes(32), id="x=0"),
            pytest.param(PublicKey(PUBLIC_KEY).format(compressed=False), id="uncompressed"),
            pytest.param(PUBLIC_KEY.hex(), id="hex-string"),
        ],
    )
    def test_invalid_public_key_is_false(self, public_key: bytes) -> None:
        assert signing.verify_hash(DIGEST, self.SIGNATURE, public_key) is False

    @pytest.mark.parametrize("digest", [b"", DIGEST[:31], DIGEST + b"\x00", DIGEST.hex()])
    def test_bad_digest_is_false(self, digest: bytes) -> None:
        assert signing.verify_hash(digest, self.SIGNATURE, PUBLIC_KEY) is False

    @pytest.mark.parametrize("signature", [None, 5, b"\x00" * 64])
    def test_non_string_signature_is_false(self, signature: object) -> None:
        assert signing.verify_hash(DIGEST, signature, PUBLIC_KEY) is False  # type: ignore[arg-type]


class TestVerifyMessage:
    def test_round_trip_every_hasher(self) -> None:
        for hasher in MessageHasher:
            message = "ab" * 32 if hasher is MessageHasher.IDENTITY else "gm"
            signature = signing.sign_message(PRIVATE_KEY, message, hasher)
            assert signing.verify_message(message, hasher, PUBLIC_KEY, signature)
            assert signing.verify_message(message, hasher.value, PUBLIC_KEY, signature)

    def test_identity_and_alephium_agree_on_the_digest(self) -> None:
        digest_hex = signing.hash_message("gm", "alephium").hex()
        signature = signing.sign_message(PRIVATE_KEY, "gm")
        assert signing.verify_message(digest_hex, "identity", PUBLIC_KEY, signature)

    def test_never_raises(self) -> None:
        signature = signing.sign_message(PRIVATE_KEY, "gm")
        assert signing.verify_message("gm", "nope", PUBLIC_KEY, signature) is False
        assert signing.verify_message("short", "identity", PUBLIC_KEY, signature) is False
        assert signing.verify_message("gm", "alephium", b"", signature) is False
        assert signing.verify_message("gm", "alephium", PUBLIC_KEY, "") is False

    def test_wrong_message(self) -> None:
        signature = signing.sign_message(PRIVATE_KEY, "gm")
        assert signing.verify_message("gn", "alephium", PUBLIC_KEY, signature) is False
        assert signing.verify_message("gm", "blake2b", PUBLIC_KEY, signature) is False
