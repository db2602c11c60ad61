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

import ipaddress
import json
import os
import secrets
import tempfile
from pathlib import Path
from typing import Annotated, Final, Literal

from pydantic import BaseModel, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict
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
    cookie_idle_days: int = Field(
        default=7, ge=1, description="cookie sessions end after this long unused (refreshed on use)"
    )
    cookie_max_days: int = Field(
        default=30, ge=1, description="cookie sessions end this long after sign-in, used or not"
    )


def _list_from_env(value: object) -> object:
    """A list setting from the environment: a JSON list or comma-separated values."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            return json.loads(text)
        return [part.strip() for part in text.split(",") if part.strip()]
    return value


class LimitSettings(BaseModel):
    """Rate limits per minute (spec part 8; docs/rate-limits.md).

    Every ``*_per_minute`` budget applies per window of ``window_seconds`` (60: a minute).
    List settings take a JSON list or comma-separated values from the environment:
    ``PREDMARKET_LIMITS__ELEVATED_WALLETS=1Abc…,1Def…``.
    """

    anonymous_reads_per_minute: int = Field(default=60, ge=1)
    anonymous_writes_per_minute: int = Field(default=10, ge=1)
    session_reads_per_minute: int = Field(default=600, ge=1)
    session_writes_per_minute: int = Field(default=60, ge=1)
    elevated_reads_per_minute: int = Field(
        default=3000, ge=1, description="signed-in wallets listed in elevated_wallets"
    )
    elevated_writes_per_minute: int = Field(default=300, ge=1)
    developer_reads_per_minute: int = Field(
        default=1200, ge=1, description="a developer key presented without a wallet credential"
    )
    developer_writes_per_minute: int = Field(default=120, ge=1)
    stream_connections_per_minute: int = Field(default=600, ge=1)
    elevated_wallets: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="wallet addresses of the elevated tier"
    )
    trusted_proxies: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="IPs or CIDR networks whose X-Forwarded-For (and X-Forwarded-Proto) is "
        "believed; empty: the socket peer is the client",
    )
    window_seconds: int = Field(default=60, ge=1, description="length of a counting window")
    redis_key_prefix: str = Field(
        default="predmarket:rl:", min_length=1, description="namespace of the Redis counters"
    )
    redis_timeout_seconds: float = Field(
        default=2.0, gt=0, description="per Redis call; slower counts as Redis being down"
    )
    redis_retry_seconds: float = Field(
        default=5.0, gt=0, description="how long to count in-process after a Redis failure"
    )
    redis_max_connections: int = Field(
        default=32, ge=1, description="Redis connections per process; more requests wait"
    )

    @field_validator("elevated_wallets", "trusted_proxies", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        return _list_from_env(value)

    @field_validator("trusted_proxies")
    @classmethod
    def _networks(cls, value: list[str]) -> list[str]:
        for item in value:
            try:
                ipaddress.ip_network(item, strict=False)
            except ValueError:
                raise ValueError(f"not an IP address or network: {item!r}") from None
        return value


class RealtimeSettings(BaseModel):
    """Server-Sent Events (spec part 6)."""

    enabled: bool = Field(default=True, description="serve the stream (else 503)")
    heartbeat_seconds: float = Field(default=15.0, gt=0)
    retry_ms: int = Field(default=3000, ge=0, description="the reconnect hint sent on connect")
    topics_anonymous: int = Field(default=8, ge=1)
    topics_signed_in: int = Field(default=20, ge=1)
    client_queue_size: int = Field(default=1024, ge=1, description="frames held per slow client")
    write_timeout_seconds: float = Field(
        default=30.0, gt=0, description="a client that accepts no bytes this long is dropped"
    )
    poll_interval_ms: int = Field(
        default=1000, ge=1, description="outbox poll period when no wake-up arrives"
    )
    batch_size: int = Field(default=1000, ge=1, description="outbox rows read per poll or page")
    retention_seconds: float = Field(
        default=86_400.0, gt=0, description="events older than this are pruned (replay window)"
    )
    prune_interval_seconds: float = Field(default=300.0, gt=0, description="pruning period")
    indexer_health_interval_seconds: float = Field(
        default=5.0, gt=0, description="how often the indexer's health is checked"
    )
    indexer_heartbeat_seconds: float = Field(
        default=60.0, ge=0, description="health:indexer heartbeat period (0: changes only)"
    )
    indexer_min_event_seconds: float = Field(
        default=5.0, ge=0, description="at most one health:indexer event per this period"
    )


#: Delays before each retry of a failed webhook delivery: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h,
#: 14 h, 20 h, 24 h: ten attempts over about three days (docs/webhooks.md).
DEFAULT_WEBHOOK_SCHEDULE: Final = (
    5.0,
    300.0,
    1800.0,
    7200.0,
    18000.0,
    36000.0,
    50400.0,
    72000.0,
    86400.0,
)


class WebhookSettings(BaseModel):
    """Outgoing webhook deliveries (``predmarket.webhooks``; docs/webhooks.md)."""

    enabled: bool = Field(default=True, description="run the dispatcher and delivery worker here")
    timeout_seconds: float = Field(default=10.0, gt=0, description="per delivery attempt")
    retry_schedule_seconds: Annotated[list[float], NoDecode] = Field(
        default_factory=lambda: list(DEFAULT_WEBHOOK_SCHEDULE),
        description="delay before each retry; attempts = 1 + its length",
    )
    retry_jitter: float = Field(
        default=0.2, ge=0, lt=1, description="each delay is scaled by a random 1 ± jitter"
    )
    allow_private: bool | None = Field(
        default=None,
        description="allow loopback/private/link-local webhook targets; None: only in the "
        "devnet profile",
    )
    lease_seconds: float = Field(
        default=60.0, gt=0, description="how long a claimed delivery is held by one worker"
    )
    poll_interval_seconds: float = Field(default=1.0, gt=0, description="idle wait between polls")
    batch_size: int = Field(default=500, ge=1, description="outbox rows or deliveries per batch")
    concurrency: int = Field(default=16, ge=1, description="deliveries in flight per process")
    max_per_owner: int = Field(default=20, ge=1, description="subscriptions per owner wallet")
    max_topics: int = Field(default=20, ge=1, description="topics per subscription")
    secret_grace_seconds: float = Field(
        default=86400.0, ge=0, description="the old secret also signs this long after a rotation"
    )

    @field_validator("retry_schedule_seconds", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        return _list_from_env(value)

    @field_validator("retry_schedule_seconds")
    @classmethod
    def _non_negative(cls, value: list[float]) -> list[float]:
        if any(delay < 0 for delay in value):
            raise ValueError("retry delays must be >= 0")
        return value

    def private_targets_allowed(self, profile: str) -> bool:
        """Whether webhook URLs may resolve to non-public addresses (SSRF guard off)."""
        return self.allow_private if self.allow_private is not None else profile == "devnet"


class ApiSettings(BaseModel):
    """The HTTP surface."""

    max_body_bytes: int = Field(default=1_048_576, ge=1024, description="larger bodies get 413")
    health_check_timeout_seconds: float = Field(default=2.0, gt=0)
    gc_tuning: bool = Field(
        default=True,
        description="after start-up, freeze the start-up heap out of the cyclic GC and collect "
        "the young generation every gc_gen0_threshold allocations (docs/benchmarks.md)",
    )
    gc_gen0_threshold: int = Field(default=50_000, ge=700)


class BookSettings(BaseModel):
    """The in-memory order books (``predmarket.books.cache``), kept current from the outbox."""

    poll_interval_ms: int = Field(default=200, ge=1, description="outbox poll period")
    batch_size: int = Field(default=1000, ge=1, description="outbox rows read per poll")


class MarketListSettings(BaseModel):
    """The in-memory market list (``predmarket.markets.cache``), kept current from the outbox."""

    enabled: bool = Field(default=True, description="serve GET /v1/markets from memory")
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
    redis_url: str | None = Field(
        default=None,
        description="redis://… shared by the API workers for rate limits; None counts in-process",
    )
    operator_token: SecretStr | None = Field(
        default=None,
        description="token of the private operator routes (header x-svc-operator-token); "
        "None disables them",
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
    market_list: MarketListSettings = Field(default_factory=MarketListSettings)
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
