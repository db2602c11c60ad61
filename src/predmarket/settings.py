"""Process settings, from ``PREDMARKET_*`` environment variables (pydantic-settings).

One root, :class:`Settings`. The top-level fields are the ones the command line maps
(``--host``, ``--port``, ``--data-dir``, …, ``PREDMARKET_HOST``, …); the nested parts hold the
tunables of one concern each and are set with a double underscore:
``PREDMARKET_LIMITS__ANONYMOUS_READS_PER_MINUTE=120``.

Constructing :class:`Settings` has no side effects. The secret is resolved when the app is
created (:meth:`Settings.resolve_secret_key`): the devnet profile makes one on first start and keeps
it in ``data_dir/secret.key``; any other profile refuses to start without a real one.
"""

from __future__ import annotations

import os
import secrets
import tempfile
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict
from sqlalchemy.engine import make_url

Profile = Literal["devnet", "production"]

SECRET_FILE = "secret.key"
MIN_SECRET_LENGTH = 32


class SettingsError(Exception):
    """The configuration cannot run; the message says what to set."""


class DbSettings(BaseModel):
    """Database engine tunables (the URL itself is the top-level ``database_url``)."""

    pool_size: int = Field(default=5, ge=1, description="PostgreSQL connections kept per process")
    max_overflow: int = Field(default=10, ge=0, description="extra PostgreSQL connections")
    echo: bool = Field(default=False, description="log every SQL statement")


class NodeSettings(BaseModel):
    """The service's client of a chain node."""

    timeout_seconds: float = Field(default=10.0, gt=0, description="per request to the node")
    retries: int = Field(default=3, ge=0, description="retries of idempotent node reads")


class IndexerSettings(BaseModel):
    """The chain indexer (``predmarket.indexer``; docs/indexer.md)."""

    enabled: bool = Field(default=True, description="run the indexer in this process")
    registry_address: str | None = Field(
        default=None,
        description="the market registry to follow; None asks a devnet node (GET /devnet/config)",
    )
    poll_interval_seconds: float = Field(default=0.5, gt=0, description="idle wait between polls")
    initial_backoff_seconds: float = Field(default=0.5, gt=0, description="first retry delay")
    max_backoff_seconds: float = Field(default=30.0, gt=0, description="retry delay cap")
    confirmations: int = Field(
        default=0, ge=0, description="apply a block's events once it has this many confirmations"
    )
    concurrency: int = Field(default=8, ge=1, description="market event pages fetched at once")
    stale_after_seconds: float = Field(
        default=30.0, gt=0, description="readiness reports the indexer down after this long"
    )


class AuthSettings(BaseModel):
    """Wallet challenges and sessions (spec part 5)."""

    challenge_ttl_seconds: int = Field(default=300, ge=1)
    bearer_ttl_days: int = Field(default=30, ge=1)
    cookie_secure: bool = Field(default=False, description="set Secure on the session cookie")


class LimitSettings(BaseModel):
    """Rate limits per minute (spec part 8)."""

    anonymous_reads_per_minute: int = Field(default=60, ge=1)
    anonymous_writes_per_minute: int = Field(default=10, ge=1)
    session_reads_per_minute: int = Field(default=600, ge=1)
    session_writes_per_minute: int = Field(default=60, ge=1)
    stream_connections_per_minute: int = Field(default=600, ge=1)


class RealtimeSettings(BaseModel):
    """Server-Sent Events (spec part 6)."""

    heartbeat_seconds: float = Field(default=15.0, gt=0)
    topics_anonymous: int = Field(default=8, ge=1)
    topics_signed_in: int = Field(default=20, ge=1)
    client_queue_size: int = Field(default=1024, ge=1, description="frames held per slow client")


class WebhookSettings(BaseModel):
    """Outgoing webhook deliveries."""

    timeout_seconds: float = Field(default=10.0, gt=0)
    max_attempts: int = Field(default=15, ge=1)


class ApiSettings(BaseModel):
    """The HTTP surface."""

    max_body_bytes: int = Field(default=1_048_576, ge=1024, description="larger bodies get 413")
    health_check_timeout_seconds: float = Field(default=2.0, gt=0)


class BookSettings(BaseModel):
    """The in-memory order books (``predmarket.books.cache``), kept current from the outbox."""

    poll_interval_ms: int = Field(default=200, ge=1, description="outbox poll period")
    batch_size: int = Field(default=1000, ge=1, description="outbox rows read per poll")


class ProtocolSettings(BaseModel):
    """What ``GET /v1/protocol/config`` publishes beyond what the node tells.

    The contracts are the market registry the indexer follows (``indexer.registry_address``, or
    the embedded devnet's) and the collateral token that registry names.
    """

    network_name: str | None = Field(
        default=None, description="e.g. mainnet, testnet; default: from the node's network id"
    )
    public_node_url: str | None = Field(
        default=None, description="node URL clients submit to, when not the service's own"
    )
    config_ttl_seconds: float = Field(default=300.0, ge=0, description="config cache lifetime")


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PREDMARKET_", env_nested_delimiter="__")

    host: str = Field(default="127.0.0.1", description="address the API listens on")
    port: int = Field(default=8787, ge=0, le=65535, description="port the API listens on")
    data_dir: Path = Field(default=Path("data"), description="where the embedded state lives")
    database_url: str | None = Field(
        default=None, description="sqlite:///… or postgresql://…; default: SQLite in data_dir"
    )
    node_url: str | None = Field(
        default=None, description="an external node's REST URL; None runs the embedded devnet"
    )
    demo: bool = Field(default=True, description="seed demo markets on first start")
    workers: int = Field(default=1, ge=1, description="API worker processes (PostgreSQL only)")
    profile: Profile = Field(
        default="devnet", description="devnet: one-command local run; production: no defaults"
    )
    secret_key: SecretStr | None = Field(
        default=None,
        description="HMAC key for cursors and other server-side signatures; "
        "the devnet profile generates one in data_dir/secret.key",
    )

    db: DbSettings = Field(default_factory=DbSettings)
    node: NodeSettings = Field(default_factory=NodeSettings)
    indexer: IndexerSettings = Field(default_factory=IndexerSettings)
    auth: AuthSettings = Field(default_factory=AuthSettings)
    limits: LimitSettings = Field(default_factory=LimitSettings)
    realtime: RealtimeSettings = Field(default_factory=RealtimeSettings)
    webhooks: WebhookSettings = Field(default_factory=WebhookSettings)
    api: ApiSettings = Field(default_factory=ApiSettings)
    books: BookSettings = Field(default_factory=BookSettings)
    protocol: ProtocolSettings = Field(default_factory=ProtocolSettings)

    @model_validator(mode="after")
    def _workers_need_a_shared_database(self) -> Settings:
        # Several processes would each hold an in-process SQLite broker and indexer lock.
        if self.workers > 1 and make_url(self.resolved_database_url()).get_backend_name() not in (
            "postgresql",
            "postgres",
        ):
            raise ValueError("workers > 1 needs PostgreSQL: set database_url to postgresql://…")
        return self

    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'predmarket.db').resolve()}"

    def resolve_secret_key(self) -> str:
        """The server secret, or :class:`SettingsError` saying how to provide one.

        devnet: the configured value, else the one kept in ``data_dir/secret.key``, created on
        first use (mode 0600). Other profiles: the configured value only, at least 32
        characters; a default is never made up for them.
        """
        if self.secret_key is not None:
            value = self.secret_key.get_secret_value()
            if self.profile != "devnet":
                _refuse_weak_secret(value)
            elif not value:
                raise SettingsError("PREDMARKET_SECRET_KEY is set but empty")
            return value
        if self.profile != "devnet":
            raise SettingsError(
                f"PREDMARKET_SECRET_KEY is required in the {self.profile} profile: set it to a "
                f"random value of at least {MIN_SECRET_LENGTH} characters, e.g. "
                '`python -c "import secrets; print(secrets.token_urlsafe(48))"`'
            )
        return _devnet_secret(self.data_dir / SECRET_FILE)


def _refuse_weak_secret(value: str) -> None:
    if len(value.strip()) < MIN_SECRET_LENGTH:
        raise SettingsError(
            f"PREDMARKET_SECRET_KEY is too weak for production: use a random value of at "
            f"least {MIN_SECRET_LENGTH} characters"
        )


def _devnet_secret(path: Path) -> str:
    try:
        existing = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        existing = ""
    if existing:
        return existing
    path.parent.mkdir(parents=True, exist_ok=True)
    value = secrets.token_urlsafe(48)
    # Written whole to a private temp file, then linked into place: link() fails when the file
    # exists, so two processes starting at once agree on one secret and nobody reads half a file.
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".secret-")
    try:
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(value + "\n")
        try:
            os.link(tmp, path)
        except FileExistsError:
            return path.read_text(encoding="ascii").strip()
    finally:
        os.unlink(tmp)
    return value
