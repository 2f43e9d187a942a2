"""The ``simproxy`` command line: Hoverfly's flags, parsed with the rules of Go's ``flag`` package.

``parse_args`` turns argv and an environment into ``Settings`` or raises ``UsageError``; ``main`` prints
messages, chooses the exit status and starts the server. Every Hoverfly flag is recognised; those not
implemented yet make start-up fail instead of being ignored.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Literal

from admin.settings import Settings
from engine.auth import User, hash_password, valid_hash
from engine.certs import CertificateError, load_ca
from engine.config import ActionSpec, MiddlewareSpec
from engine.version import VERSION

Kind = Literal["bool", "int", "string", "list", "size"]

PROGRAM = "simproxy"
TRUE_WORDS = ("1", "t", "T", "TRUE", "true", "True")
FALSE_WORDS = ("0", "f", "F", "FALSE", "false", "False")
MODE_FLAGS = ("capture", "synthesize", "modify", "spy", "diff")  # Hoverfly's order of precedence
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


@dataclass(frozen=True, slots=True)
class FlagSpec:
    """One command-line flag: its value kind, the default shown by ``-h``, and its help text."""

    name: str
    kind: Kind
    help: str
    default: str = ""
    supported: bool = True
    same_as_now: tuple[str, ...] = ()
    """For a flag not supported yet: values that ask for what simproxy already does (besides the default)."""


def _no(name: str, kind: Kind, help_text: str, default: str = "", same_as_now: tuple[str, ...] = ()) -> FlagSpec:
    return FlagSpec(name, kind, help_text + " (not supported yet)", default, False, same_as_now)


FLAGS: tuple[FlagSpec, ...] = (
    FlagSpec("ap", "string", "Admin API port; env AdminPort", "8888"),
    FlagSpec("pp", "string", "Proxy (or webserver) port; env ProxyPort", "8500"),
    FlagSpec("listen-on-host", "string", "Interface both listeners bind to (0.0.0.0 = all)", "127.0.0.1"),
    FlagSpec("webserver", "bool", "Serve simulations as a plain web server on the proxy port (simulate mode)"),
    FlagSpec("import", "list", "Simulation file or URL imported at start-up (repeatable); env HoverflyImport"),
    FlagSpec("destination", "string", "Regular expression selecting the hosts and URLs to process", "."),
    FlagSpec("dest", "list", "Host to process (repeatable); the values joined with | replace -destination"),
    FlagSpec("capture", "bool", "Start in capture mode"),
    FlagSpec("spy", "bool", "Start in spy mode: simulate, and forward misses to the real server"),
    FlagSpec("synthesize", "bool", "Start in synthesize mode (middleware required)"),
    FlagSpec("modify", "bool", "Start in modify mode (middleware required)"),
    FlagSpec("diff", "bool", "Start in diff mode: compare real responses with the simulation"),
    FlagSpec("capture-on-miss", "bool", "In spy mode, capture the real response of a request that misses"),
    FlagSpec("journal-size", "int", "Journal capacity; 0 disables the journal", "1000"),
    FlagSpec("logs-size", "int", "Log entries kept in memory; 0 disables /api/v2/logs", "1000"),
    FlagSpec("cache-size", "int", "Request cache capacity", "1000"),
    FlagSpec("disable-cache", "bool", "Disable the request cache in front of matching"),
    FlagSpec("log-level", "string", "Log level: panic, fatal, error, warn, info, debug or trace", "info"),
    FlagSpec("v", "bool", "Verbose: log at debug level"),
    FlagSpec("version", "bool", "Print the version and exit"),
    FlagSpec("no-import-check", "bool", "Skip the duplicate-request check on imports; env SKIP_IMPORT_CHECK=true"),
    FlagSpec(
        "upstream-proxy",
        "string",
        "Proxy for outgoing traffic (http:// added if no scheme); env UpstreamProxy",
    ),
    FlagSpec("workers", "int", "Worker processes sharing one store; env SIMPROXY_WORKERS", "1"),
    FlagSpec("redis-url", "string", "Shared store: redis://, rediss:// or unix:// URL; env SIMPROXY_REDIS_URL"),
    FlagSpec("redis-prefix", "string", "Prefix of every Redis key", "simproxy:"),
    FlagSpec("middleware", "string", "Middleware: a URL, or a binary and a script path separated by a space"),
    FlagSpec("enable-middleware-api", "bool", "Allow PUT /api/v2/hoverfly/middleware"),
    FlagSpec(
        "post-serve-action",
        "list",
        'Post-serve action "<name> <binary> <script> <delay ms>" or "<name> <url> <delay ms>" (repeatable)',
    ),
    FlagSpec("templating-data-source", "list", 'Templating data source "<name> <csv path>" (repeatable)'),
    FlagSpec("journal-indexing-key", "list", "Journal index created at start-up (repeatable)"),
    FlagSpec("journal-body-size-limit", "size", "Largest body kept in the journal, e.g. 128KB or 2MB"),
    FlagSpec("upstream-timeout", "string", "Longest wait for a real service's answer, e.g. 30s or 500ms", "60s"),
    FlagSpec("middleware-timeout", "string", "Longest run of a local middleware before it is killed", "30s"),
    FlagSpec("pac-file", "string", "PAC file choosing the upstream proxy of forwarded requests, read at start"),
    FlagSpec("tls-verification", "bool", "Verify the certificates of upstream servers", "true"),
    FlagSpec("plain-http-tunneling", "bool", "Treat CONNECT to a port other than 443 as plain HTTP"),
    FlagSpec("cert", "string", "CA certificate (PEM) that signs the certificates of intercepted hosts"),
    FlagSpec("key", "string", "Private key (PEM) of the -cert CA certificate"),
    _no("generate-ca-cert", "bool", "Generate a CA certificate and key (cert.pem, key.pem) and use them"),
    _no("cert-name", "string", "Common name of a generated CA certificate", "hoverfly.proxy"),
    _no("cert-org", "string", "Organisation of a generated CA certificate", "Hoverfly Authority"),
    _no(
        "client-authentication-destination",
        "string",
        "Regex of upstream hosts given a TLS client certificate",
    ),
    _no("client-authentication-client-cert", "string", "TLS client certificate file"),
    _no("client-authentication-client-key", "string", "TLS client key file"),
    _no("client-authentication-ca-cert", "string", "CA certificate verifying client-authentication hosts"),
    FlagSpec("auth", "bool", "Require authentication on the admin API and the proxy; env HoverflyAuthEnabled=true"),
    FlagSpec("add", "bool", "Add the user given by -username and -password or -password-hash (turns -auth on)"),
    FlagSpec("username", "string", "User name for -add and -auth"),
    FlagSpec("password", "string", "Password for -add and -auth (kept only as a bcrypt hash)"),
    FlagSpec("password-hash", "string", "Bcrypt password hash used instead of -password"),
    FlagSpec("admin", "bool", "Make the added user an administrator", "true"),
    FlagSpec(
        "jwt-secret",
        "string",
        "Secret signing the admin tokens of every instance; env HoverflySecret (default: one kept in the store)",
    ),
    FlagSpec("token-expiration", "string", "Lifetime of an admin token, e.g. 24h or 30m", "24h"),
    _no("db", "string", "Authentication storage, memory or boltdb (deprecated)", "memory"),
    _no("db-path", "string", "BoltDB file used with -db boltdb (deprecated)"),
    FlagSpec("cors", "bool", "Answer CORS pre-flights on the proxy port and allow the origin of other requests"),
    _no("dev", "bool", "Add CORS headers to the admin API for UI development"),
    _no("dev-cors-origin", "string", "Origin allowed by -dev", "http://localhost:4200"),
    FlagSpec(
        "response-body-files-path",
        "string",
        "Absolute directory that relative bodyFile paths resolve against (default: the working directory)",
    ),
    FlagSpec("response-body-files-allow-origin", "list", "URL prefix bodyFile URLs may be loaded from (repeatable)"),
    _no("metrics", "bool", "Log the usage counters every 5 seconds"),
    _no("logs", "string", "Log format: plaintext or json", "plaintext"),
    _no("logs-output", "list", "Log destination, console (the default) or file (repeatable)", "", ("console",)),
    _no("logs-file", "string", "Log file used with -logs-output=file", "hoverfly.log"),
    _no("log-no-color", "bool", "Disable colours in console logs"),
    _no("log-no-quotes", "bool", "Do not quote or escape logged fields"),
)
FLAGS_BY_NAME: Mapping[str, FlagSpec] = MappingProxyType({spec.name: spec for spec in FLAGS})


class UsageError(Exception):
    """Start-up cannot go on: ``exit_code`` 2 for bad syntax, 1 for a fatal error, 0 for help or version."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


class HelpRequested(UsageError):
    """``-h``, ``-help`` or ``--help``: print the usage on stderr, exit 0."""

    def __init__(self) -> None:
        super().__init__("", 0)


class VersionRequested(UsageError):
    """``-version``: print the version on stdout, exit 0."""

    def __init__(self) -> None:
        super().__init__(VERSION, 0)


@dataclass(slots=True)
class ParsedFlags:
    """Values of the flags given on the command line, by kind, and the names given in order."""

    strings: dict[str, str] = field(default_factory=dict)
    ints: dict[str, int] = field(default_factory=dict)
    bools: dict[str, bool] = field(default_factory=dict)
    lists: dict[str, list[str]] = field(default_factory=dict)
    given: list[str] = field(default_factory=list)

    def text(self, name: str) -> str:
        return self.strings.get(name, FLAGS_BY_NAME[name].default)

    def number(self, name: str) -> int:
        return self.ints.get(name, int(FLAGS_BY_NAME[name].default or "0"))

    def switch(self, name: str) -> bool:
        return self.bools.get(name, FLAGS_BY_NAME[name].default == "true")

    def repeated(self, name: str) -> tuple[str, ...]:
        return tuple(self.lists.get(name, ()))


def _quote(text: str) -> str:
    """Approximate Go's ``%q``: a double-quoted string with escapes."""
    return json.dumps(text, ensure_ascii=False)


def _syntax(message: str) -> UsageError:
    return UsageError(message, 2)


def _fatal(message: str) -> UsageError:
    return UsageError(message, 1)


def _parse_go_bool(text: str) -> bool | None:
    if text in TRUE_WORDS:
        return True
    return False if text in FALSE_WORDS else None


def _parse_go_int(text: str) -> int:
    """Parse like Go's ``strconv.ParseInt(text, 0, 64)``; raise ``ValueError`` with Go's reason."""
    body = text[1:] if text[:1] in "+-" else text
    if not body or not body.isascii() or any(c.isspace() for c in body) or body[0] == "_":
        raise ValueError("parse error")
    try:
        if len(body) > 1 and body[0] == "0" and (body[1].isdigit() or body[1] == "_"):
            value = int(body, 8)  # a leading 0 means octal in Go
        else:
            value = int(body, 0)
    except ValueError:
        raise ValueError("parse error") from None
    value = -value if text[0] == "-" else value
    if not INT64_MIN <= value <= INT64_MAX:
        raise ValueError("value out of range")
    return value


def _store(flags: ParsedFlags, spec: FlagSpec, value: str) -> None:
    if spec.kind == "int":
        try:
            flags.ints[spec.name] = _parse_go_int(value)
        except ValueError as exc:
            raise _syntax(f"invalid value {_quote(value)} for flag -{spec.name}: {exc}") from None
    elif spec.kind == "list":
        flags.lists.setdefault(spec.name, []).append(value)
    else:
        flags.strings[spec.name] = value


def _parse_one(flags: ParsedFlags, args: list[str]) -> bool:
    """Consume one flag from the front of ``args``; return False when flag parsing is over."""
    if not args or len(args[0]) < 2 or args[0][0] != "-":
        return False
    arg = args.pop(0)
    dashes = 2 if arg[1] == "-" else 1
    if arg == "--":
        return False
    name = arg[dashes:]
    if not name or name[0] in "-=":
        raise _syntax(f"bad flag syntax: {arg}")
    name, equals, value = name.partition("=")
    spec = FLAGS_BY_NAME.get(name)
    if spec is None:
        if name in ("h", "help"):
            raise HelpRequested()
        raise _syntax(f"flag provided but not defined: -{name}")
    if spec.kind == "bool":
        parsed = _parse_go_bool(value) if equals else True
        if parsed is None:
            raise _syntax(f"invalid boolean value {_quote(value)} for -{name}: parse error")
        flags.bools[name] = parsed
    else:
        if not equals:
            if not args:
                raise _syntax(f"flag needs an argument: -{name}")
            value = args.pop(0)
        _store(flags, spec, value)
    if name not in flags.given:
        flags.given.append(name)
    return True


def parse_flags(argv: Sequence[str]) -> ParsedFlags:
    """Scan ``argv`` with Go's rules; arguments after the first non-flag are ignored."""
    flags = ParsedFlags()
    args = list(argv)
    while _parse_one(flags, args):
        pass
    return flags


def _port(flags: ParsedFlags, name: str, env: Mapping[str, str], env_name: str, label: str) -> int:
    raw = flags.text(name) if flags.strings.get(name) else env.get(env_name) or FLAGS_BY_NAME[name].default
    if not (raw.isascii() and raw.isdigit()):
        raise _fatal(f'{label} must be a number between 1 and 65535, got "{raw}"')
    return int(raw)


def _log_level(flags: ParsedFlags) -> str:
    level = flags.text("log-level").lower()
    if level not in ("panic", "fatal", "error", "warn", "warning", "info", "debug", "trace"):
        raise _fatal(f'Unknown log-level value "{flags.text("log-level")}"')
    if flags.switch("v"):
        return "debug"
    return "warning" if level == "warn" else level


def _middleware(flags: ParsedFlags) -> MiddlewareSpec:
    """``-middleware``: a URL (remote), or ``"<binary> <script path>"``, or a binary alone; the script is read now."""
    value = flags.text("middleware").strip()
    if not value:
        return MiddlewareSpec()
    if value.startswith(("http://", "https://")):
        return MiddlewareSpec(remote=value)
    binary, _, script_path = value.partition(" ")
    script = ""
    if script_path.strip():
        try:
            script = Path(script_path.strip()).read_text(encoding="utf-8")
        except OSError as exc:
            raise _fatal(f"Failed to read the middleware script {script_path.strip()!r}: {exc.strerror}") from None
    return MiddlewareSpec(binary=binary, script=script)


def _pac_file(flags: ParsedFlags) -> str:
    path = flags.text("pac-file")
    if not path:
        return ""
    try:
        return Path(path).read_text(encoding="utf-8", errors="surrogateescape")
    except OSError as exc:
        raise _fatal(f"Failed to read the PAC file {path!r}: {exc.strerror}") from None


def _ca_files(flags: ParsedFlags) -> tuple[str, str]:
    """``-cert`` and ``-key``: both or neither, and they must be a CA certificate and its key."""
    cert, key = flags.text("cert"), flags.text("key")
    if bool(cert) != bool(key):
        raise _fatal("-cert and -key must be given together")
    if cert:
        try:
            load_ca(cert, key)
        except CertificateError as exc:
            raise _fatal(f"Failed to load the CA certificate and key: {exc}") from None
    return cert, key


def _post_serve_actions(flags: ParsedFlags) -> tuple[ActionSpec, ...]:
    """Hoverfly's rules: 4 tokens local, 3 remote; a bad delay is 1000 ms; an unreadable script skips the action."""
    actions: list[ActionSpec] = []
    for value in flags.repeated("post-serve-action"):
        tokens = value.split()
        if len(tokens) not in (3, 4):
            raise _fatal("Failed to import post serve action due to invalid input passed")
        delay = int(tokens[-1]) if re.fullmatch(r"[+-]?[0-9]+", tokens[-1]) else 1000
        if len(tokens) == 3:
            actions.append(ActionSpec(name=tokens[0], remote=tokens[1], delay_ms=delay))
            continue
        try:
            script = Path(tokens[2]).read_text(encoding="utf-8")
        except OSError:
            continue
        actions.append(ActionSpec(name=tokens[0], binary=tokens[1], script=script, delay_ms=delay))
    return tuple(actions)


def _mode(flags: ParsedFlags) -> str:
    """Hoverfly's getInitialMode: -webserver wins, then the first mode flag in precedence order."""
    chosen = [name for name in MODE_FLAGS if flags.switch(name)]
    if flags.switch("webserver") or not chosen:
        mode = "simulate"
    elif chosen[0] in ("synthesize", "modify") and not flags.text("middleware").strip():
        raise _fatal(f"{chosen[0].capitalize()} mode chosen although middleware not supplied")
    elif len(chosen) > 1:
        raise _fatal("Two or more modes supplied, check your flags")
    else:
        mode = chosen[0]
    if flags.switch("capture-on-miss"):
        if not flags.switch("spy"):
            raise _fatal("-capture-on-miss can only be used with -spy mode")
        if mode != "spy":
            raise _fatal("-capture-on-miss cannot be used with -webserver, which starts in simulate mode")
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
        raise _fatal(f'SIMPROXY_WORKERS must be an integer, got "{raw}"') from None


def _no_import_check(flags: ParsedFlags, env: Mapping[str, str]) -> bool:
    if "no-import-check" in flags.given:
        return flags.switch("no-import-check")
    return env.get("SKIP_IMPORT_CHECK") == "true"


def _auth_enabled(flags: ParsedFlags, env: Mapping[str, str]) -> bool:
    return flags.switch("auth") or flags.switch("add") or env.get("HoverflyAuthEnabled") == "true"


def _users(flags: ParsedFlags, env: Mapping[str, str]) -> tuple[User, ...]:
    """The users of -auth: -username with -password or -password-hash, and $HoverflyAdmin/$HoverflyAdminPass.

    Hoverfly also accepts an empty user name and password (anyone can then log in) and asks on the
    terminal when no user is given; simproxy refuses to start instead (README, security).
    """
    if not _auth_enabled(flags, env):
        return ()
    users: list[User] = []
    username, password, given_hash = flags.text("username"), flags.text("password"), flags.text("password-hash")
    if username or password or given_hash:
        if not username:
            raise _fatal("-auth needs -username with -password or -password-hash")
        if given_hash:
            if not valid_hash(given_hash):
                raise _fatal("-password-hash is not a bcrypt hash")
            users.append(User(username, given_hash, admin=flags.switch("admin")))
        elif password:
            users.append(User(username, hash_password(password), admin=flags.switch("admin")))
        else:
            raise _fatal(f"-username {_quote(username)} needs -password or -password-hash")
    env_user, env_password = env.get("HoverflyAdmin", ""), env.get("HoverflyAdminPass", "")
    if env_user and env_password and env_user not in {u.username for u in users}:
        users.append(User(env_user, hash_password(env_password)))
    if not users:
        raise _fatal("authentication is on but no user is given: set -username and -password (or -password-hash)")
    return tuple(users)


def _token_seconds(flags: ParsedFlags) -> int:
    return max(int(_seconds(flags, "token-expiration")), 1)


def _redis_url(flags: ParsedFlags, env: Mapping[str, str]) -> str:
    if "redis-url" in flags.given:
        return flags.text("redis-url")
    return env.get("SIMPROXY_REDIS_URL", "")


def _asks_for_what_we_do(flags: ParsedFlags, spec: FlagSpec) -> bool:
    """A flag not supported yet is harmless when its value is its default (``-db=memory``,
    ``-logs-output=console``, ``-tls-verification=true``): clients such as hoverctl pass those."""
    if spec.kind == "bool":
        return flags.bools.get(spec.name) == (spec.default == "true")
    allowed = {spec.default, *spec.same_as_now}
    if spec.kind == "list":
        return all(value in allowed for value in flags.lists.get(spec.name, ()))
    if spec.kind == "int":
        return str(flags.ints.get(spec.name)) in allowed
    return flags.strings.get(spec.name) in allowed


def _check_supported(flags: ParsedFlags) -> None:
    unsupported = [
        name
        for name in flags.given
        if not FLAGS_BY_NAME[name].supported and not _asks_for_what_we_do(flags, FLAGS_BY_NAME[name])
    ]
    if unsupported:
        raise _fatal("\n".join(f"flag -{name} is not supported yet" for name in unsupported))


_SIZE = re.compile(r"(\d+)\s*(KB|MB|GB)?", re.IGNORECASE)
_UNITS = {"": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3}


def _seconds(flags: ParsedFlags, name: str) -> float:
    """A duration: ``30s``, ``500ms``, ``2m`` or plain seconds; above 0."""
    text = flags.text(name).strip()
    match = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)?", text)
    value = float(match[1]) * {"ms": 0.001, "m": 60.0, "h": 3600.0}.get(match[2] or "s", 1.0) if match else 0.0
    if value <= 0:
        raise _fatal(f"invalid value {_quote(text)} for flag -{name}: expected a duration such as 30s or 500ms")
    return value


def _size(flags: ParsedFlags, name: str) -> int:
    """Hoverfly's size strings: ``<n>``, ``<n>KB``, ``<n>MB``, ``<n>GB`` (1024-based); must be above 0."""
    text = flags.strings.get(name)
    if text is None:
        return 0
    match = _SIZE.fullmatch(text.strip())
    if match is None or int(match[1]) <= 0:
        raise _fatal(f"invalid value {_quote(text)} for flag -{name}: expected a size such as 512, 128KB or 2MB")
    return int(match[1]) * _UNITS[(match[2] or "").upper()]


def settings_from_flags(flags: ParsedFlags, env: Mapping[str, str]) -> Settings:
    """Apply Hoverfly's start-up rules (environment fallbacks, mode choice) and build ``Settings``."""
    if flags.switch("version"):
        raise VersionRequested()
    _check_supported(flags)
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
            tls_verification=flags.switch("tls-verification"),
            middleware=_middleware(flags),
            post_serve_actions=_post_serve_actions(flags),
            cert=cert,
            key=key,
            ca_folder=env.get("SIMPROXY_HOME", ""),
            plain_http_tunneling=flags.switch("plain-http-tunneling"),
            cors=flags.switch("cors"),
            pac=_pac_file(flags),
            upstream_timeout=_seconds(flags, "upstream-timeout"),
            middleware_timeout=_seconds(flags, "middleware-timeout"),
            enable_middleware_api=flags.switch("enable-middleware-api"),
            upstream_proxy=_upstream_proxy(flags, env),
            workers=_workers(flags, env),
            redis_url=_redis_url(flags, env),
            auth=_auth_enabled(flags, env),
            users=_users(flags, env),
            jwt_secret=flags.text("jwt-secret") or env.get("HoverflySecret", ""),
            token_seconds=_token_seconds(flags),
            redis_prefix=flags.text("redis-prefix"),
            response_body_files_path=flags.text("response-body-files-path"),
            templating_data_sources=flags.repeated("templating-data-source"),
            journal_indexing_keys=flags.repeated("journal-indexing-key"),
            journal_body_size_limit=_size(flags, "journal-body-size-limit"),
            response_body_files_allow_origin=flags.repeated("response-body-files-allow-origin"),
        )
    except ValueError as exc:
        raise _fatal(str(exc)) from None


def parse_args(argv: Sequence[str], env: Mapping[str, str]) -> Settings:
    """Parse the command line and environment into ``Settings``.

    Raises ``UsageError``; its subclasses ``HelpRequested`` and ``VersionRequested`` stand for ``-h``
    and ``-version``.
    """
    return settings_from_flags(parse_flags(argv), env)


def _usage_entry(spec: FlagSpec) -> str:
    type_name = {"bool": "", "int": "int", "string": "string"}.get(spec.kind, "value")
    head = f"  -{spec.name}" + (f" {type_name}" if type_name else "")
    text = head + ("\t" if len(head) <= 4 else "\n    \t") + spec.help
    if spec.kind == "string" and spec.default:
        text += f" (default {_quote(spec.default)})"
    elif (spec.kind == "int" and spec.default != "0") or (spec.kind == "bool" and spec.default == "true"):
        text += f" (default {spec.default})"
    return text + "\n"


def usage_text() -> str:
    """Go-style usage: every flag, sorted by name, with its type, help and default."""
    entries = "".join(_usage_entry(spec) for spec in sorted(FLAGS, key=lambda spec: spec.name))
    return f"Usage of {PROGRAM}:\n{entries}"


def _report(error: UsageError) -> int:
    if isinstance(error, HelpRequested):
        sys.stderr.write(usage_text())
    elif isinstance(error, VersionRequested):
        sys.stdout.write(error.message + "\n")
    elif error.exit_code == 2:
        sys.stderr.write(f"{error.message}\n{usage_text()}")
    else:
        sys.stderr.write("".join(f"{PROGRAM}: {line}\n" for line in error.message.splitlines()))
    return error.exit_code


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point: parse ``sys.argv[1:]`` and ``os.environ``, then run the server."""
    args = sys.argv[1:] if argv is None else argv
    try:
        settings = parse_args(args, os.environ)
    except UsageError as error:
        return _report(error)
    run: Callable[[Settings], int] = importlib.import_module("admin.server").run
    return run(settings)
