"""Hoverfly's flags and Go's ``flag`` syntax: the table of every flag, parsing argv into values, usage text.

admin/process/cli.py turns the parsed values into ``Settings`` (Hoverfly's start-up rules) and runs the server.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from simproxy.engine.fleet.config import Mode
from simproxy.engine.version import VERSION

Kind = Literal["bool", "int", "string", "list", "size"]

PROGRAM = "simproxy"
TRUE_WORDS = ("1", "t", "T", "TRUE", "true", "True")
FALSE_WORDS = ("0", "f", "F", "FALSE", "false", "False")
MODE_FLAGS = (Mode.CAPTURE, Mode.SYNTHESIZE, Mode.MODIFY, Mode.SPY, Mode.DIFF)  # Hoverfly's order of precedence
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


@dataclass(frozen=True, slots=True)
class FlagSpec:
    """One command-line flag: its value kind, the default shown by ``-h``, and its help text."""

    name: str
    kind: Kind
    help: str
    default: str = ""


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
    FlagSpec(
        "openapi-validation",
        "bool",
        "Answer 422 to a request that breaks an imported OpenAPI document (false: answer it as usual)",
        "true",
    ),
    FlagSpec("no-import-check", "bool", "Skip the duplicate-request check on imports; env SKIP_IMPORT_CHECK=true"),
    FlagSpec(
        "upstream-proxy",
        "string",
        "Proxy for outgoing traffic (http:// added if no scheme); env UpstreamProxy",
    ),
    FlagSpec("workers", "int", "Worker processes sharing one store; env SIMPROXY_WORKERS", "1"),
    FlagSpec("redis-url", "string", "Shared store: redis://, rediss:// or unix:// URL; env SIMPROXY_REDIS_URL"),
    FlagSpec("redis-prefix", "string", "Prefix of every Redis key", "simproxy:"),
    FlagSpec(
        "join-fleet",
        "bool",
        "On a shared store, apply -import, data sources and mode flags only when they differ from the last start-up"
        " applied there (a pod that restarts or scales out joins the fleet without resetting it)",
    ),
    FlagSpec(
        "middleware",
        "string",
        "Middleware: a URL, a binary and a script path separated by a space, or python:package.module:function",
    ),
    FlagSpec("enable-middleware-api", "bool", "Allow PUT /api/v2/hoverfly/middleware"),
    FlagSpec(
        "post-serve-action",
        "list",
        'Post-serve action "<name> <binary> <script> <delay ms>" or "<name> <url> <delay ms>" (repeatable)',
    ),
    FlagSpec("templating-data-source", "list", 'Templating data source "<name> <csv path>" (repeatable)'),
    FlagSpec("journal-indexing-key", "list", "Journal index created at start-up (repeatable)"),
    FlagSpec(
        "journal-body-size-limit",
        "size",
        "Largest body kept in the journal, e.g. 128KB or 2MB; empty (-journal-body-size-limit=) keeps bodies whole",
        "1MB",
    ),
    FlagSpec("upstream-timeout", "string", "Longest wait for a real service's answer, e.g. 30s or 500ms", "60s"),
    FlagSpec("middleware-timeout", "string", "Longest run of a local middleware before it is killed", "30s"),
    FlagSpec(
        "middleware-pool",
        "int",
        "Keep N long-lived middleware processes per worker, one JSON document per line (0: a process per request)",
        "0",
    ),
    FlagSpec(
        "post-serve-action-pool",
        "int",
        "Keep N long-lived processes per worker for each local -post-serve-action (0: a process per action)",
        "0",
    ),
    FlagSpec(
        "middleware-queue",
        "int",
        "Requests a worker lets wait for its long-lived middleware before it answers 503 (0: 64 per process)",
        "0",
    ),
    FlagSpec("pac-file", "string", "PAC file choosing the upstream proxy of forwarded requests, read at start"),
    FlagSpec("tls-verification", "bool", "Verify the certificates of upstream servers", "true"),
    FlagSpec("plain-http-tunneling", "bool", "Treat CONNECT to a port other than 443 as plain HTTP"),
    FlagSpec("cert", "string", "CA certificate (PEM) that signs the certificates of intercepted hosts"),
    FlagSpec("key", "string", "Private key (PEM) of the -cert CA certificate"),
    FlagSpec("generate-ca-cert", "bool", "Generate a CA certificate and key (cert.pem, key.pem) and use them"),
    FlagSpec("cert-name", "string", "Common name of the CA certificate -generate-ca-cert makes", "hoverfly.proxy"),
    FlagSpec("cert-org", "string", "Organisation of the CA certificate -generate-ca-cert makes", "Hoverfly Authority"),
    FlagSpec(
        "client-authentication-destination", "string", "Regex of real hosts sent a TLS client certificate (mutual TLS)"
    ),
    FlagSpec("client-authentication-client-cert", "string", "TLS client certificate file (PEM)"),
    FlagSpec("client-authentication-client-key", "string", "TLS client key file (PEM)"),
    FlagSpec(
        "client-authentication-ca-cert", "string", "CA certificate verifying those hosts (default: none verified)"
    ),
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
    FlagSpec("max-body-size", "size", "Largest proxied request body, e.g. 64MB (413 beyond)", "64MB"),
    FlagSpec("max-header-size", "size", "Largest proxied request target and headers (431 beyond)", "1MB"),
    FlagSpec(
        "max-pairs", "int", "Pairs a simulation may hold (imports beyond: 413; captures beyond: not stored)", "100000"
    ),
    FlagSpec("max-admin-body-size", "size", "Largest admin request body, e.g. 128MB (413 beyond)", "128MB"),
    FlagSpec("read-timeout", "string", "Longest a proxied request may take to arrive (408 beyond)", "60s"),
    FlagSpec("idle-timeout", "string", "Longest a kept-alive proxy connection may wait for its next request", "120s"),
    FlagSpec(
        "db",
        "string",
        "Storage: memory, or boltdb to keep the simulation, state, configuration and users in -db-path across restarts",
        "memory",
    ),
    FlagSpec("db-path", "string", "File -db boltdb keeps its data in", "requests.db"),
    FlagSpec("cors", "bool", "Answer CORS pre-flights on the proxy port and allow the origin of other requests"),
    FlagSpec("dev", "bool", "Add CORS headers to every admin API answer, for UI development"),
    FlagSpec("dev-cors-origin", "string", "Origin allowed by -dev", "http://localhost:4200"),
    FlagSpec(
        "response-body-files-path",
        "string",
        "Absolute directory that relative bodyFile paths resolve against (default: the working directory)",
    ),
    FlagSpec("response-body-files-allow-origin", "list", "URL prefix bodyFile URLs may be loaded from (repeatable)"),
    FlagSpec("metrics", "bool", "Log the fleet's request counts by mode every 5 seconds"),
    FlagSpec("logs", "string", "Log format: plaintext (logrus text) or json (one object per line)", "plaintext"),
    FlagSpec("logs-output", "list", "Log destination, console (standard output, the default) or file (repeatable)"),
    FlagSpec("logs-file", "string", "Log file used with -logs-output=file", "hoverfly.log"),
    FlagSpec("log-no-color", "bool", "Disable colours in console logs"),
    FlagSpec("log-no-quotes", "bool", "Do not quote or escape logged fields"),
    FlagSpec(
        "compat",
        "string",
        "Where the spec and Hoverfly differ, answer as: spec, or hoverfly (v1.12.10); env SIMPROXY_COMPAT",
        "spec",
    ),
)
FLAGS_BY_NAME: Mapping[str, FlagSpec] = MappingProxyType({spec.name: spec for spec in FLAGS})


class UsageError(Exception):
    """Start-up cannot go on: ``exit_code`` 2 for bad syntax, 1 for a fatal error, 0 for help or version.

    ``flag``: the known flag a syntax error is about (its usage entry is shown with the error).
    """

    def __init__(self, message: str, exit_code: int, flag: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
        self.flag = flag


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


def quote(text: str) -> str:
    """Approximate Go's ``%q``: a double-quoted string with escapes."""
    return json.dumps(text, ensure_ascii=False)


def _syntax(message: str, flag: str = "") -> UsageError:
    return UsageError(message, 2, flag)


def fatal(message: str) -> UsageError:
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
            raise _syntax(f"invalid value {quote(value)} for flag -{spec.name}: {exc}", spec.name) from None
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
            raise _syntax(f"invalid boolean value {quote(value)} for -{name}: parse error", name)
        flags.bools[name] = parsed
    else:
        if not equals:
            if not args:
                raise _syntax(f"flag needs an argument: -{name}", name)
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


def _usage_entry(spec: FlagSpec) -> str:
    type_name = {"bool": "", "int": "int", "string": "string"}.get(spec.kind, "value")
    head = f"  -{spec.name}" + (f" {type_name}" if type_name else "")
    text = head + ("\t" if len(head) <= 4 else "\n    \t") + spec.help
    if spec.kind in ("string", "size") and spec.default:
        text += f" (default {quote(spec.default)})"
    elif (spec.kind == "int" and spec.default != "0") or (spec.kind == "bool" and spec.default == "true"):
        text += f" (default {spec.default})"
    return text + "\n"


DESCRIPTION = (
    f"{PROGRAM}: an HTTP proxy that answers from a simulation (service virtualisation),"
    " wire-compatible with Hoverfly's admin API v2"
)
"""What simproxy is, in one line: the first line of ``-h``."""
HINT = f'run "{PROGRAM} -h" for the flags'
"""What follows a syntax error on the command line, instead of the whole usage."""


COMMANDS: tuple[tuple[str, str], ...] = (
    (f"{PROGRAM} [flags]", "one instance: the admin API and dashboard on -ap, the proxy on -pp"),
    (
        f"{PROGRAM} fleet N [flags]",
        "N instances on this machine sharing one store and the proxy port\n"
        "(admin ports -ap, -ap+1, ...; the flags as for one instance)",
    ),
    (
        f"{PROGRAM} openapi FILE",
        "print the simulation an OpenAPI or Swagger document (YAML or JSON) becomes\n"
        "(simproxy openapi --no-validation FILE: without request validation)",
    ),
)
"""Each form of the command (the server and its subcommands) and what it does, as ``-h`` lists them."""


def usage_text() -> str:
    """``-h``: what simproxy is, each form of the command (its subcommands) with what it does, then
    every flag Go-style, sorted by name, with its type, help and default."""
    entries = "".join(_usage_entry(spec) for spec in sorted(FLAGS, key=lambda spec: spec.name))
    width = max(len(form) for form, _ in COMMANDS) + 3
    forms = ""
    for form, what in COMMANDS:
        first, *more = what.split("\n")
        forms += f"  {form:<{width}}{first}\n" + "".join(f"  {'':<{width}}{line}\n" for line in more)
    return f"{DESCRIPTION}\n\nUsage:\n{forms}\nFlags:\n{entries}"


def syntax_error_text(error: UsageError) -> str:
    """A syntax error as the command reports it: the error, the usage entry of the flag it names
    (if any), and where to find the others."""
    spec = FLAGS_BY_NAME.get(error.flag)
    return f"{error.message}\n{_usage_entry(spec) if spec else ''}{HINT}\n"


def report(error: UsageError) -> int:
    """Write what the command says for ``error`` (help, version, a syntax or a fatal error) and
    return its exit status."""
    if isinstance(error, HelpRequested):
        sys.stderr.write(usage_text())
    elif isinstance(error, VersionRequested):
        sys.stdout.write(error.message + "\n")
    elif error.exit_code == 2:
        sys.stderr.write(syntax_error_text(error))
    else:
        sys.stderr.write("".join(f"{PROGRAM}: {line}\n" for line in error.message.splitlines()))
    return error.exit_code
