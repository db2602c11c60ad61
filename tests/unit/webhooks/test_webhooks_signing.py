"""Webhook signatures (Standard Webhooks) and the encrypted storage of webhook secrets."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest

from predmarket.webhooks import signing

# The Standard Webhooks specification's published example.
SPEC_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
SPEC_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
SPEC_TIMESTAMP = 1614265330
SPEC_BODY = b'{"test": 2432232314}'
SPEC_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def test_the_signature_matches_the_standard_webhooks_example() -> None:
    assert signing.sign(SPEC_SECRET, SPEC_ID, SPEC_TIMESTAMP, SPEC_BODY) == SPEC_SIGNATURE


def test_a_new_secret_is_32_random_bytes_after_the_prefix() -> None:
    a, b = signing.new_secret(), signing.new_secret()
    assert a.startswith("whsec_") and a != b
    assert len(signing.secret_key(a)) == 32


def test_the_documented_receiver_recipe_verifies() -> None:
    secret = signing.new_secret()
    body = b'{"v":1,"id":"7"}'
    header = signing.signature_header([secret], "msg_1", 1_000_000, body)
    # The snippet of docs/webhooks.md, stdlib only.
    key = base64.b64decode(secret.removeprefix("whsec_"))
    expected = base64.b64encode(
        hmac.new(key, b"msg_1.1000000." + body, hashlib.sha256).digest()
    ).decode()
    assert any(hmac.compare_digest(sig.split(",", 1)[1], expected) for sig in header.split(" "))
    assert signing.verify(secret, "msg_1", "1000000", body, header, now=1_000_010)


@pytest.mark.parametrize(
    ("msg_id", "timestamp", "body", "now"),
    [
        ("msg_2", "1000000", b'{"v":1,"id":"7"}', 1_000_000),  # another id
        ("msg_1", "1000001", b'{"v":1,"id":"7"}', 1_000_000),  # another timestamp
        ("msg_1", "1000000", b'{"v":1,"id":"8"}', 1_000_000),  # another body
        ("msg_1", "1000000", b'{"v":1,"id":"7"}', 1_000_301),  # too old
        ("msg_1", "soon", b'{"v":1,"id":"7"}', 1_000_000),  # not a timestamp
    ],
)
def test_verification_refuses_any_change(
    msg_id: str, timestamp: str, body: bytes, now: int
) -> None:
    secret = signing.new_secret()
    header = signing.signature_header([secret], "msg_1", 1_000_000, b'{"v":1,"id":"7"}')
    assert not signing.verify(secret, msg_id, timestamp, body, header, now=now)


def test_during_a_rotation_both_secrets_sign() -> None:
    new, old = signing.new_secret(), signing.new_secret()
    header = signing.signature_header([new, old], "msg_1", 5, b"{}")
    assert len(header.split(" ")) == 2
    assert signing.verify(new, "msg_1", "5", b"{}", header, now=5)
    assert signing.verify(old, "msg_1", "5", b"{}", header, now=5)
    assert not signing.verify(signing.new_secret(), "msg_1", "5", b"{}", header, now=5)


class TestSecretBox:
    def test_round_trip_without_the_secret_in_the_ciphertext(self) -> None:
        box = signing.SecretBox("server-secret-" + "x" * 40)
        secret = signing.new_secret()
        sealed = box.seal(secret, "wh_1")
        assert secret not in sealed and secret.removeprefix("whsec_") not in sealed
        assert len(sealed) <= 128
        assert box.open(sealed, "wh_1") == secret
        assert box.seal(secret, "wh_1") != sealed  # a fresh nonce each time

    def test_a_ciphertext_moved_to_another_webhook_does_not_open(self) -> None:
        box = signing.SecretBox("server-secret-" + "x" * 40)
        sealed = box.seal(signing.new_secret(), "wh_1")
        with pytest.raises(signing.SecretUnreadable):
            box.open(sealed, "wh_2")

    def test_another_server_secret_does_not_open(self) -> None:
        sealed = signing.SecretBox("a" * 48).seal(signing.new_secret(), "wh_1")
        with pytest.raises(signing.SecretUnreadable):
            signing.SecretBox("b" * 48).open(sealed, "wh_1")

    @pytest.mark.parametrize("damaged", ["", "g1:", "g1:!!!", "x1:AAAA", "g1:" + "A" * 40])
    def test_damaged_ciphertexts_are_refused(self, damaged: str) -> None:
        with pytest.raises(signing.SecretUnreadable):
            signing.SecretBox("a" * 48).open(damaged, "wh_1")

    def test_repr_hides_the_key(self) -> None:
        assert "a" * 10 not in repr(signing.SecretBox("a" * 48))
