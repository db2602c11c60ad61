"""Secret tokens: format, parsing, digests, constant-time verification."""

from __future__ import annotations

import hashlib

import pytest

from predmarket.auth import tokens


def test_new_secret_shape_and_digest() -> None:
    issued = tokens.new_secret("svc_sess_")
    prefix, rest = issued.token[:9], issued.token[9:]
    assert prefix == "svc_sess_"
    ident, _, secret = rest.partition("_")
    assert ident == issued.id and len(ident) == 32 and len(secret) == 43
    assert issued.digest == hashlib.sha256(secret.encode()).hexdigest()
    assert tokens.parse(issued.token, "svc_sess_") == (ident, secret)
    assert tokens.verify(secret, issued.digest)
    assert issued.token not in repr(issued) and secret not in repr(issued)
    assert secret.isalnum() and issued.token.rsplit("_", 1)[1] == secret


def test_fresh_every_time() -> None:
    a, b = tokens.new_secret("svc_live_"), tokens.new_secret("svc_live_")
    assert a.id != b.id and a.digest != b.digest


def test_shared_id() -> None:
    session = tokens.new_secret("svc_sess_")
    csrf = tokens.new_secret("svc_csrf_", id=session.id)
    assert csrf.id == session.id and csrf.token != session.token


@pytest.mark.parametrize(
    "token",
    [
        "",
        "svc_sess_",
        "svc_live_" + "0" * 32 + "_" + "A" * 43,  # other prefix
        "svc_sess_" + "0" * 31 + "_" + "A" * 44,
        "svc_sess_" + "0" * 32 + "-" + "A" * 43,
        "svc_sess_" + "G" * 32 + "_" + "A" * 43,
        "svc_sess_" + "0" * 32 + "_" + "A" * 42 + "=",
        "svc_sess_" + "0" * 32 + "_" + "A" * 42 + "_",
        "svc_sess_" + "0" * 32 + "_" + "A" * 42 + "-",
        "svc_sess_" + "0" * 32 + "_" + "A" * 44,
        " svc_sess_" + "0" * 32 + "_" + "A" * 43,
    ],
)
def test_parse_refuses_malformed(token: str) -> None:
    assert tokens.parse(token, "svc_sess_") is None


def test_verify_refuses_wrong_and_missing() -> None:
    issued = tokens.new_secret("svc_dev_")
    _, secret = tokens.parse(issued.token, "svc_dev_") or ("", "")
    assert not tokens.verify(secret[:-1] + ("A" if secret[-1] != "A" else "B"), issued.digest)
    assert not tokens.verify(secret, None)


@pytest.mark.parametrize("prefix", ["sess_", "svc_", "svc_Sess_", "svc_sess"])
def test_bad_prefix(prefix: str) -> None:
    with pytest.raises(ValueError):
        tokens.new_secret(prefix)
