"""Start-up settings of a simproxy process: one frozen, picklable value built by ``admin.process.arguments``.

Only knobs fixed at start-up live here; anything the admin API can change later belongs to the store.
``__post_init__`` validates every field and raises ``ValueError`` with a message fit for the command line.
Importing this module loads none of the engine's request path (the command line reads it to answer
``-help`` or a usage error).
"""

from __future__ import annotations

import os.path
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from simproxy.engine.auth import DEFAULT_TOKEN_SECONDS, User
from simproxy.engine.fleet.config import DEFAULT_MAX_PAIRS, MODES, ActionSpec, MiddlewareSpec, Mode, ProxyLimits
from simproxy.engine.gocompat.dialect import SPEC, Dialect
from simproxy.engine.gocompat.goregex import InvalidPattern, compile_go
from simproxy.engine.outbound.clientauth import ClientAuthentication

LOG_LEVELS = ("panic", "fatal", "error", "warning", "info", "debug", "trace")
LOG_FORMATS = ("plaintext", "json")
LOG_OUTPUTS = ("console", "file")


@dataclass(frozen=True, slots=True)
class LogOptions:
    """Where and how the logs are written, besides ``/api/v2/logs`` (Hoverfly's ``-logs*`` flags)."""

    format: str = "plaintext"
    """``plaintext`` (logrus text) or ``json`` (one object per line)."""
    outputs: tuple[str, ...] = ("console",)
    """``console`` (standard output) and/or ``file``; none: the API only."""
    file: str = "hoverfly.log"
    colour: bool = True
    """logrus colours the console whether or not it is a terminal (Hoverfly forces them)."""
    quotes: bool = True

    def __post_init__(self) -> None:
        if self.format not in LOG_FORMATS:
            raise ValueError(f"Unknown logs format {self.format!r}, expected one of {', '.join(LOG_FORMATS)}")
        for output in self.outputs:
            if output not in LOG_OUTPUTS:
                raise ValueError(f"Unknown logs output type {output!r}, expected console or file")


REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything a simproxy process needs to start; immutable once built."""

    admin_port: int = 8888
    proxy_port: int = 8500
    listen_on_host: str = "127.0.0.1"
    webserver: bool = False
    imports: tuple[str, ...] = ()
    destination: str = "."
    mode: str = Mode.SIMULATE.value
    capture_on_miss: bool = False
    journal_size: int = 1000
    logs_size: int = 1000
    cache_size: int = 1000
    disable_cache: bool = False
    log_level: str = "info"
    logs: LogOptions = field(default_factory=LogOptions)
    no_import_check: bool = False
    openapi_validation: bool = True
    """``-openapi-validation``: an ``-import``ed OpenAPI document's requests are checked (422 when broken)."""
    join_fleet: bool = False
    """``-join-fleet``: the start-up writes only what differs from the last start-up on the store."""
    upstream_proxy: str = ""
    tls_verification: bool = True
    """Verify the certificates of the real services that requests are forwarded to."""
    middleware: MiddlewareSpec = field(default_factory=MiddlewareSpec)
    """``-middleware``, its script already read."""
    post_serve_actions: tuple[ActionSpec, ...] = ()
    """``-post-serve-action`` values, scripts already read."""
    cert: str = ""
    key: str = ""
    """``-cert``/``-key``: the CA that signs intercepted hosts' certificates (else the fleet's own CA)."""
    ca_generated: bool = False
    """``-generate-ca-cert``: ``cert``/``key`` are the CA this start made (not a user's own)."""
    dev_cors_origin: str = ""
    """``-dev``: the origin every admin answer allows (``-dev-cors-origin``); "" without ``-dev``."""
    metrics_log: bool = False
    """``-metrics``: log the usage counters every five seconds."""
    client_auth: ClientAuthentication | None = None
    """``-client-authentication-*``: mutual TLS towards the real services it names."""
    db_path: str = ""
    """``-db boltdb``: the file the private store is saved in, so that the simulation, state,
    configuration and tokens survive a restart ("" : nothing is written to disk)."""
    dialect: Dialect = SPEC
    """``-compat``: the spec's answers, or Hoverfly's where the two differ on purpose."""
    ca_folder: str = ""
    """``$SIMPROXY_HOME``: where a generated CA is kept between runs (empty: ``~/.simproxy``)."""
    plain_http_tunneling: bool = False
    cors: bool = False
    pac: str = ""
    """The ``-pac-file`` text, already read."""
    upstream_timeout: float = 60.0
    """Seconds a forwarded request waits for the real service's whole answer."""
    middleware_timeout: float = 30.0
    """Seconds a local middleware may run before it is killed (Hoverfly waits forever)."""
    middleware_queue: int = 0
    """Calls a worker lets wait for its long-lived middleware processes before it answers 503
    (0: 64 per process of the pool)."""
    enable_middleware_api: bool = False
    """``PUT .../middleware`` exists only with ``-enable-middleware-api`` (as in Hoverfly)."""
    workers: int = 1
    share_proxy_port: bool = False
    """Listen on the proxy port with ``SO_REUSEPORT`` even with one worker, so that other instances can
    too: set by ``simproxy fleet`` for its instances (``SIMPROXY_SHARE_PROXY_PORT=1``)."""
    redis_url: str = ""
    redis_prefix: str = "simproxy:"
    response_body_files_path: str = ""
    """Where relative ``bodyFile`` paths resolve; empty means the working directory."""
    response_body_files_allow_origin: tuple[str, ...] = ()
    """URL prefixes a ``bodyFile`` URL may start with."""
    templating_data_sources: tuple[str, ...] = ()
    """``-templating-data-source`` values: ``"<name> <csv file>"`` each."""
    journal_indexing_keys: tuple[str, ...] = ()
    """``-journal-indexing-key`` values: journal indexes created at start."""
    journal_body_size_limit: int = 1024 * 1024
    """Bytes of a request or response body kept in the journal (0: no limit). Hoverfly keeps whole
    bodies by default; 1,000 entries of a 64 MB body each would be 64 GB."""
    proxy_limits: ProxyLimits = field(default_factory=ProxyLimits)
    """What one client may hold of a worker on the proxy port (body and header sizes, timeouts)."""
    max_pairs: int = DEFAULT_MAX_PAIRS
    """Pairs a simulation may hold: imports beyond are refused (413), captures beyond not stored."""
    max_admin_body: int = 128 * 1024 * 1024
    """Bytes of an admin request body (413 beyond)."""
    auth: bool = False
    """``-auth``: the admin API (but health and login) and the proxy require credentials."""
    users: tuple[User, ...] = field(default=(), repr=False)
    """The users of ``-auth``, passwords as bcrypt hashes."""
    jwt_secret: str = field(default="", repr=False)
    """Signs admin tokens; empty: a secret kept in the store, shared by every instance on it."""
    token_seconds: int = DEFAULT_TOKEN_SECONDS
    main_pid: int = 0
    """Set by the server at start: the main process, which every worker dies with."""
    private_store: bool = False
    """Set by the server at start: ``redis_url`` is a redis-server this process started for its workers."""
    instance_id: str = ""
    """Set by the server at start: names this simproxy process (all its workers) in the metrics."""

    @property
    def ca_home(self) -> Path:
        return Path(self.ca_folder) if self.ca_folder else Path.home() / ".simproxy"

    def __post_init__(self) -> None:
        self._check_types()
        self._check_network()
        self._check_sizes()
        self._check_mode()
        self._check_store()
        self._check_body_files()
        if self.auth and not self.users:
            raise ValueError("authentication is on but no user is given")

    def _check_body_files(self) -> None:
        path = self.response_body_files_path
        if path and not os.path.isabs(path):
            raise ValueError("Response body files path should be absolute")
        if path and not os.path.isdir(path):
            raise ValueError("Response body files path does not exist")
        for source in self.templating_data_sources:
            if len(source.split()) != 2:
                raise ValueError(f'Failed to import template data source: expected "<name> <csv file>", got {source!r}')
        for origin in self.response_body_files_allow_origin:
            parsed = urlsplit(origin)
            if parsed.scheme not in ("http", "https", "ftp") or not parsed.netloc:
                raise ValueError(f"Origin is not a valid url: {origin}")

    def _check_types(self) -> None:
        ints = ("admin_port", "proxy_port", "journal_size", "logs_size", "cache_size", "workers")
        bools = (
            "webserver",
            "capture_on_miss",
            "disable_cache",
            "no_import_check",
            "openapi_validation",
            "join_fleet",
            "tls_verification",
            "enable_middleware_api",
        )
        strs = (
            "listen_on_host",
            "destination",
            "mode",
            "log_level",
            "upstream_proxy",
            "redis_url",
            "redis_prefix",
        )
        for name in ints:
            if type(getattr(self, name)) is not int:
                raise ValueError(f"{name} must be an integer, got {getattr(self, name)!r}")
        for name in bools:
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be a boolean, got {getattr(self, name)!r}")
        for name in strs:
            if not isinstance(getattr(self, name), str):
                raise ValueError(f"{name} must be a string, got {getattr(self, name)!r}")
        imports: object = self.imports
        if not isinstance(imports, tuple) or not all(isinstance(i, str) for i in imports):
            raise ValueError(f"imports must be a tuple of strings, got {self.imports!r}")

    def _check_network(self) -> None:
        for label, port in (("Admin port", self.admin_port), ("Proxy port", self.proxy_port)):
            if not 1 <= port <= 65535:
                raise ValueError(f"{label} must be between 1 and 65535, got {port}")
        if not self.listen_on_host:
            raise ValueError("Listen-on-host must not be empty")

    def _check_sizes(self) -> None:
        if self.max_pairs < 1:
            raise ValueError(f"Max pairs must be at least 1, got {self.max_pairs}")
        if self.journal_size < 0:
            raise ValueError(f"Journal size must not be negative, got {self.journal_size}")
        if self.logs_size < 0:
            raise ValueError(f"Logs size must not be negative, got {self.logs_size}")
        if self.cache_size < 1 and not self.disable_cache:
            raise ValueError("Cache size must be a positive number, alternatively use the disable-cache flag")
        if self.cache_size < 0:
            raise ValueError(f"Cache size must not be negative, got {self.cache_size}")
        if self.workers < 1:
            raise ValueError(f"Workers must be at least 1, got {self.workers}")
        if self.middleware_queue < 0:
            raise ValueError(f"Middleware queue must not be negative, got {self.middleware_queue}")

    def _check_mode(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"Unknown mode {self.mode!r}, expected one of {', '.join(MODES)}")
        if self.capture_on_miss and self.mode != Mode.SPY:
            raise ValueError("-capture-on-miss can only be used with -spy mode")
        if self.log_level not in LOG_LEVELS:
            raise ValueError(f"Unknown log-level value {self.log_level!r}, expected one of {', '.join(LOG_LEVELS)}")
        try:
            compile_go(self.destination)
        except InvalidPattern as exc:
            raise ValueError(f"Destination {self.destination!r} is not a valid regular expression: {exc}") from None

    def _check_store(self) -> None:
        if self.redis_url and not self.redis_url.startswith(REDIS_SCHEMES):
            raise ValueError(f"Redis URL must start with redis://, rediss:// or unix://, got {self.redis_url!r}")
