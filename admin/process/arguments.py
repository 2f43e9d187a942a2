"""The command line and environment to ``Settings``: Hoverfly's flags, with Go's ``flag`` rules.

The flag table and Go's syntax live in admin/process/flags.py. ``parse_args`` turns argv and an environment
into ``Settings`` or raises ``UsageError`` (admin/process/cli.py reports it). Every Hoverfly flag is
recognised; those not implemented yet make start-up fail instead of being ignored.
"""

from __future__ import annotations

import os
import re
import ssl
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType

from simproxy.admin.process.flags import (
    FLAGS_BY_NAME,
    MODE_FLAGS,
    ParsedFlags,
    VersionRequested,
    fatal,
    parse_flags,
    quote,
)
from simproxy.admin.settings import LogOptions, Settings
from simproxy.engine.auth import User, hash_password, valid_hash
from simproxy.engine.fleet.config import ActionSpec, MiddlewareSpec, Mode, ProxyLimits
from simproxy.engine.gocompat.dialect import Dialect, dialect_named
from simproxy.engine.gocompat.goregex import InvalidPattern
from simproxy.engine.outbound.clientauth import ClientAuthentication
from simproxy.engine.outbound.hooks import PREFIX
from simproxy.engine.outbound.pool import MAX_POOL


def _port(flags: ParsedFlags, name: str, env: Mapping[str, str], env_name: str, label: str) -> int:
    raw = flags.text(name) if flags.strings.get(name) else env.get(env_name) or FLAGS_BY_NAME[name].default
    if not (raw.isascii() and raw.isdigit()):
        raise fatal(f'{label} must be a number between 1 and 65535, got "{raw}"')
    return int(raw)


LEVEL_WORDS = ("panic", "fatal", "error", "warn", "warning", "info", "debug", "trace")
"""What ``-log-level`` accepts (any case), as Hoverfly does."""


def _log_level(flags: ParsedFlags) -> str:
    level = flags.text("log-level").lower()
    if level not in LEVEL_WORDS:
        given = flags.text("log-level")
        raise fatal(f'Unknown log-level value "{given}", expected one of {", ".join(LEVEL_WORDS)}')
    if flags.switch("v"):
        return "debug"
    return "warning" if level == "warn" else level


def _middleware(flags: ParsedFlags, env: Mapping[str, str]) -> MiddlewareSpec:
    """``-middleware``: a URL (remote), ``"<binary> <script path>"``, a binary alone, or ``python:module:function``
    (an in-process hook); the script is read now. ``-middleware-pool``: long-lived processes."""
    value = flags.text("middleware").strip()
    pool = 0 if _dialect(flags, env).is_hoverfly else flags.number("middleware-pool")  # Hoverfly has none
    if not 0 <= pool <= MAX_POOL:
        raise fatal(f"-middleware-pool must be from 0 (a process per request) to {MAX_POOL}")
    if pool and (not value or value.startswith(("http://", "https://", PREFIX))):
        raise fatal('-middleware-pool needs a local middleware program (-middleware "<binary> <script>")')
    if not value:
        return MiddlewareSpec()
    if value.startswith(("http://", "https://")):
        return MiddlewareSpec(remote=value)
    if value.startswith(PREFIX):
        return MiddlewareSpec(binary=value)
    binary, _, script_path = value.partition(" ")
    script = ""
    if script_path.strip():
        try:
            script = Path(script_path.strip()).read_text(encoding="utf-8")
        except OSError as exc:
            raise fatal(f"Failed to read the middleware script {script_path.strip()!r}: {exc.strerror}") from None
    return MiddlewareSpec(binary=binary, script=script, pool=pool)


def _pac_file(flags: ParsedFlags) -> str:
    path = flags.text("pac-file")
    if not path:
        return ""
    try:
        return Path(path).read_text(encoding="utf-8", errors="surrogateescape")
    except OSError as exc:
        raise fatal(f"Failed to read the PAC file {path!r}: {exc.strerror}") from None


def _ca_files(flags: ParsedFlags) -> tuple[str, str]:
    """``-cert`` and ``-key``: both or neither, and they must be a CA certificate and its key.
    ``-generate-ca-cert`` makes a new CA (``-cert-name``, ``-cert-org``), writes it to ``cert.pem``
    and ``key.pem`` in the working directory, and uses it, as Hoverfly does."""
    if flags.switch("generate-ca-cert"):
        return _generated_ca(flags.text("cert-name"), flags.text("cert-org"))
    cert, key = flags.text("cert"), flags.text("key")
    if bool(cert) != bool(key):
        raise fatal("-cert and -key must be given together")
    if cert:
        from simproxy.engine.server.certs import CertificateError, load_ca

        try:
            load_ca(cert, key)
        except CertificateError as exc:
            raise fatal(f"Failed to load the CA certificate and key: {exc}") from None
    return cert, key


def _client_auth(flags: ParsedFlags) -> ClientAuthentication | None:
    """Hoverfly's mutual TLS flags, their files checked now (Hoverfly finds out at the first request)."""
    destination = flags.text("client-authentication-destination")
    if not destination:
        return None
    cert, key = flags.text("client-authentication-client-cert"), flags.text("client-authentication-client-key")
    if not cert or not key:
        raise fatal("-client-authentication-destination needs -client-authentication-client-cert and -key")
    try:
        auth = ClientAuthentication(destination, cert, key, flags.text("client-authentication-ca-cert"))
        auth.context()
    except InvalidPattern as exc:
        raise fatal(f"-client-authentication-destination is not a valid regular expression: {exc}") from None
    except (OSError, ssl.SSLError) as exc:
        raise fatal(f"Unable to load client certs file: {exc}") from None
    return auth


def _generated_ca(common_name: str, organisation: str) -> tuple[str, str]:
    from simproxy.engine.server.certs import generate_ca

    ca = generate_ca(common_name, organisation)
    cert, key = Path("cert.pem").absolute(), Path("key.pem").absolute()
    try:
        cert.write_bytes(ca.cert_pem)
        descriptor = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "wb") as out:
            out.write(ca.key_pem)
    except OSError as exc:
        raise fatal(f"Failed to generate certificate: {exc.strerror}: {exc.filename}") from None
    return str(cert), str(key)


def _post_serve_actions(flags: ParsedFlags) -> tuple[ActionSpec, ...]:
    """Hoverfly's rules: 4 tokens local, 3 remote; a bad delay is 1000 ms; an unreadable script skips the action."""
    actions: list[ActionSpec] = []
    pool = flags.number("post-serve-action-pool")
    if not 0 <= pool <= MAX_POOL:
        raise fatal(f"-post-serve-action-pool must be from 0 (a process per action) to {MAX_POOL}")
    for value in flags.repeated("post-serve-action"):
        tokens = value.split()
        if len(tokens) not in (3, 4):
            raise fatal("Failed to import post serve action due to invalid input passed")
        delay = int(tokens[-1]) if re.fullmatch(r"[+-]?[0-9]+", tokens[-1]) else 1000
        if len(tokens) == 3 and tokens[1].startswith(PREFIX):  # an in-process hook
            actions.append(ActionSpec(name=tokens[0], binary=tokens[1], delay_ms=delay))
            continue
        if len(tokens) == 3:
            actions.append(ActionSpec(name=tokens[0], remote=tokens[1], delay_ms=delay))
            continue
        try:
            script = Path(tokens[2]).read_text(encoding="utf-8")
        except OSError:
            continue
        actions.append(ActionSpec(name=tokens[0], binary=tokens[1], script=script, delay_ms=delay, pool=pool))
    return tuple(actions)


def _mode(flags: ParsedFlags) -> str:
    """Hoverfly's getInitialMode: -webserver wins, then the first mode flag in precedence order."""
    chosen = [name for name in MODE_FLAGS if flags.switch(name)]
    if flags.switch("webserver") or not chosen:
        mode = Mode.SIMULATE.value
    elif chosen[0] in (Mode.SYNTHESIZE, Mode.MODIFY) and not flags.text("middleware").strip():
        raise fatal(f"{chosen[0].capitalize()} mode chosen although middleware not supplied")
    elif len(chosen) > 1:
        raise fatal("Two or more modes supplied, check your flags")
    else:
        mode = str(chosen[0])
    if flags.switch("capture-on-miss"):
        if not flags.switch("spy"):
            raise fatal("-capture-on-miss can only be used with -spy mode")
        if mode != Mode.SPY:
            raise fatal("-capture-on-miss cannot be used with -webserver, which starts in simulate mode")
    return mode


def _destination(flags: ParsedFlags) -> str:
    dests = flags.repeated("dest")
    return "|".join(dests) if dests else flags.text("destination")


def _upstream_proxy(flags: ParsedFlags, env: Mapping[str, str]) -> str:
    value = flags.text("upstream-proxy")
    if not value:
        return env.get("UpstreamProxy", "")
    return value if value.startswith(("http://", "https://")) else "http://" + value


def _imports(flags: ParsedFlags, env: Mapping[str, str]) -> tuple[str, ...]:
    first = env.get("HoverflyImport", "")
    return tuple(path for path in (first, *flags.repeated("import")) if path)


def _workers(flags: ParsedFlags, env: Mapping[str, str]) -> int:
    if "workers" in flags.given or not env.get("SIMPROXY_WORKERS"):
        return flags.number("workers")
    raw = env["SIMPROXY_WORKERS"]
    try:
        return int(raw.strip())
    except ValueError:
        raise fatal(f'SIMPROXY_WORKERS must be an integer, got "{raw}"') from None


def _no_import_check(flags: ParsedFlags, env: Mapping[str, str]) -> bool:
    if "no-import-check" in flags.given:
        return flags.switch("no-import-check")
    return env.get("SKIP_IMPORT_CHECK") == "true"


def _auth_enabled(flags: ParsedFlags, env: Mapping[str, str]) -> bool:
    return flags.switch("auth") or flags.switch("add") or env.get("HoverflyAuthEnabled") == "true"


def _users(flags: ParsedFlags, env: Mapping[str, str]) -> tuple[User, ...]:
    """The users of -auth: -username with -password or -password-hash, and $HoverflyAdmin/$HoverflyAdminPass.

    Hoverfly also accepts an empty user name and password (anyone can then log in) and asks on the
    terminal when no user is given; simproxy refuses to start instead (docs/security.md).
    """
    if not _auth_enabled(flags, env):
        return ()
    users: list[User] = []
    username, password, given_hash = flags.text("username"), flags.text("password"), flags.text("password-hash")
    if username or password or given_hash:
        if not username:
            raise fatal("-auth needs -username with -password or -password-hash")
        if given_hash:
            if not valid_hash(given_hash):
                raise fatal("-password-hash is not a bcrypt hash")
            users.append(User(username, given_hash, admin=flags.switch("admin")))
        elif password:
            users.append(User(username, hash_password(password), admin=flags.switch("admin")))
        else:
            raise fatal(f"-username {quote(username)} needs -password or -password-hash")
    env_user, env_password = env.get("HoverflyAdmin", ""), env.get("HoverflyAdminPass", "")
    if env_user and env_password and env_user not in {u.username for u in users}:
        users.append(User(env_user, hash_password(env_password)))
    if not users:
        raise fatal("authentication is on but no user is given: set -username and -password (or -password-hash)")
    return tuple(users)


def _token_seconds(flags: ParsedFlags, env: Mapping[str, str]) -> int:
    """``-token-expiration``, else Hoverfly's ``HoverflyTokenExpiration`` (whole hours), else 24 hours."""
    hours = env.get("HoverflyTokenExpiration", "")
    if hours and "token-expiration" not in flags.given:
        try:
            return max(_parse_int(hours) * 3600, 1)
        except ValueError:
            raise fatal(f"failed to get token exipration delta, HoverflyTokenExpiration={hours!r}") from None
    return max(int(_seconds(flags, "token-expiration")), 1)


def _parse_int(text: str) -> int:
    if not text.strip().lstrip("+-").isdigit():
        raise ValueError(text)
    return int(text)


def _redis_url(flags: ParsedFlags, env: Mapping[str, str]) -> str:
    if "redis-url" in flags.given:
        return flags.text("redis-url")
    return env.get("SIMPROXY_REDIS_URL", "")


def _dialect(flags: ParsedFlags, env: Mapping[str, str]) -> Dialect:
    name = flags.text("compat") if "compat" in flags.given else env.get("SIMPROXY_COMPAT", "spec")
    try:
        return dialect_named(name or "spec")
    except ValueError as exc:
        raise fatal(f"invalid value {quote(name)} for flag -compat: {exc}") from None


def _db_path(flags: ParsedFlags) -> str:
    """``-db boltdb``: the file the private store is saved in (absolute); "" for ``-db memory``."""
    backend = flags.text("db")
    if backend == "memory":
        return ""
    if backend != "boltdb":
        raise fatal(f"Unknown database type {quote(backend)}: expected memory or boltdb")
    return os.path.abspath(flags.text("db-path") or FLAGS_BY_NAME["db-path"].default)


_SIZE = re.compile(r"(\d+)\s*(KB|MB|GB)?", re.IGNORECASE)
_UNITS = MappingProxyType({"": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3})


def _seconds(flags: ParsedFlags, name: str) -> float:
    """A duration: ``30s``, ``500ms``, ``2m`` or plain seconds; above 0."""
    text = flags.text(name).strip()
    match = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)?", text)
    value = float(match[1]) * {"ms": 0.001, "m": 60.0, "h": 3600.0}.get(match[2] or "s", 1.0) if match else 0.0
    if value <= 0:
        raise fatal(f"invalid value {quote(text)} for flag -{name}: expected a duration such as 30s or 500ms")
    return value


def _size(flags: ParsedFlags, name: str) -> int:
    """Hoverfly's size strings: ``<n>``, ``<n>KB``, ``<n>MB``, ``<n>GB`` (1024-based); must be above 0."""
    text = flags.strings.get(name)
    if text is None:
        text = FLAGS_BY_NAME[name].default
    if not text:
        return 0
    match = _SIZE.fullmatch(text.strip())
    if match is None or int(match[1]) <= 0:
        raise fatal(f"invalid value {quote(text)} for flag -{name}: expected a size such as 512, 128KB or 2MB")
    return int(match[1]) * _UNITS[(match[2] or "").upper()]


def settings_from_flags(flags: ParsedFlags, env: Mapping[str, str]) -> Settings:
    """Apply Hoverfly's start-up rules (environment fallbacks, mode choice) and build ``Settings``."""
    if flags.switch("version"):
        raise VersionRequested()
    log_level = _log_level(flags)
    mode = _mode(flags)
    cert, key = _ca_files(flags)
    try:
        return Settings(
            admin_port=_port(flags, "ap", env, "AdminPort", "Admin port"),
            proxy_port=_port(flags, "pp", env, "ProxyPort", "Proxy port"),
            listen_on_host=flags.text("listen-on-host") or FLAGS_BY_NAME["listen-on-host"].default,
            webserver=flags.switch("webserver"),
            imports=_imports(flags, env),
            destination=_destination(flags),
            mode=mode,
            capture_on_miss=flags.switch("capture-on-miss"),
            journal_size=max(flags.number("journal-size"), 0),
            logs_size=max(flags.number("logs-size"), 0),
            cache_size=flags.number("cache-size"),
            disable_cache=flags.switch("disable-cache"),
            log_level=log_level,
            no_import_check=_no_import_check(flags, env),
            openapi_validation=flags.switch("openapi-validation"),
            join_fleet=flags.switch("join-fleet"),
            # either one turns it off, as in Hoverfly
            tls_verification=flags.switch("tls-verification") and env.get("HoverflyTlsVerification") != "false",
            middleware=_middleware(flags, env),
            post_serve_actions=_post_serve_actions(flags),
            cert=cert,
            key=key,
            ca_generated=flags.switch("generate-ca-cert"),
            dev_cors_origin=flags.text("dev-cors-origin") if flags.switch("dev") else "",
            metrics_log=flags.switch("metrics"),
            db_path=_db_path(flags),
            dialect=_dialect(flags, env),
            client_auth=_client_auth(flags),
            ca_folder=env.get("SIMPROXY_HOME", ""),
            plain_http_tunneling=flags.switch("plain-http-tunneling"),
            cors=flags.switch("cors"),
            pac=_pac_file(flags),
            upstream_timeout=_seconds(flags, "upstream-timeout"),
            middleware_timeout=_seconds(flags, "middleware-timeout"),
            middleware_queue=flags.number("middleware-queue"),
            enable_middleware_api=flags.switch("enable-middleware-api"),
            upstream_proxy=_upstream_proxy(flags, env),
            workers=_workers(flags, env),
            share_proxy_port=env.get("SIMPROXY_SHARE_PROXY_PORT") == "1",
            redis_url=_redis_url(flags, env),
            auth=_auth_enabled(flags, env),
            users=_users(flags, env),
            jwt_secret=flags.text("jwt-secret") or env.get("HoverflySecret", ""),
            token_seconds=_token_seconds(flags, env),
            proxy_limits=ProxyLimits(
                max_body=_size(flags, "max-body-size"),
                max_head=_size(flags, "max-header-size"),
                read_timeout=_seconds(flags, "read-timeout"),
                idle_timeout=_seconds(flags, "idle-timeout"),
            ),
            max_admin_body=_size(flags, "max-admin-body-size"),
            max_pairs=flags.number("max-pairs"),
            redis_prefix=flags.text("redis-prefix"),
            response_body_files_path=flags.text("response-body-files-path"),
            templating_data_sources=flags.repeated("templating-data-source"),
            journal_indexing_keys=flags.repeated("journal-indexing-key"),
            journal_body_size_limit=_size(flags, "journal-body-size-limit"),
            logs=_log_options(flags),
            response_body_files_allow_origin=flags.repeated("response-body-files-allow-origin"),
        )
    except ValueError as exc:
        raise fatal(str(exc)) from None


def _log_options(flags: ParsedFlags) -> LogOptions:
    outputs = flags.repeated("logs-output") or ("console",)
    if "logs-file" in flags.given and "file" not in outputs:
        raise fatal("-logs-file is not allowed unless -logs-output is set to 'file'.")
    return LogOptions(
        format=flags.text("logs"),
        outputs=tuple(dict.fromkeys(outputs)),
        file=flags.text("logs-file"),
        colour=not flags.switch("log-no-color"),
        quotes=not flags.switch("log-no-quotes"),
    )


def parse_args(argv: Sequence[str], env: Mapping[str, str]) -> Settings:
    """Parse the command line and environment into ``Settings``.

    Raises ``UsageError``; its subclasses ``HelpRequested`` and ``VersionRequested`` stand for ``-h``
    and ``-version``.
    """
    return settings_from_flags(parse_flags(argv), env)
