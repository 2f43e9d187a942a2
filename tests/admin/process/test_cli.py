"""Tests of the ``simproxy`` command line (admin.process.cli) and of the start-up ``Settings`` it builds.

Nothing here opens a socket: ``main`` is exercised only on paths that end before the server starts, or with
a stand-in ``admin.process.server`` module.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import subprocess
import sys
import types
from pathlib import Path

import bcrypt
import pytest

from simproxy.admin.command import COMMAND
from simproxy.admin.process.arguments import parse_args
from simproxy.admin.process.cli import main
from simproxy.admin.process.flags import HelpRequested, UsageError, VersionRequested, usage_text
from simproxy.admin.settings import LogOptions, Settings
from simproxy.engine.fleet.config import ActionSpec, MiddlewareSpec
from simproxy.engine.version import VERSION

ROOT = Path(__file__).resolve().parents[3]

SUPPORTED = [
    "ap", "pp", "listen-on-host", "webserver", "import", "destination", "dest", "capture", "spy",
    "synthesize", "modify", "diff", "capture-on-miss", "journal-size", "logs-size", "cache-size",
    "disable-cache", "log-level", "v", "version", "no-import-check", "upstream-proxy", "workers",
    "redis-url", "redis-prefix", "join-fleet", "response-body-files-path", "response-body-files-allow-origin",
    "templating-data-source", "journal-indexing-key", "journal-body-size-limit", "tls-verification",
    "middleware", "enable-middleware-api", "post-serve-action", "plain-http-tunneling", "cert", "key", "cors",
    "pac-file", "upstream-timeout", "middleware-timeout", "auth", "add", "username", "password", "password-hash",
    "admin", "jwt-secret", "token-expiration", "max-body-size", "max-header-size", "max-admin-body-size",
    "read-timeout", "idle-timeout", "max-pairs", "logs", "logs-output", "logs-file", "log-no-color", "log-no-quotes",
    "generate-ca-cert", "cert-name", "cert-org", "dev", "dev-cors-origin", "metrics",
    "client-authentication-destination", "client-authentication-client-cert", "client-authentication-client-key",
    "client-authentication-ca-cert", "db", "db-path", "compat", "middleware-pool", "middleware-queue",
    "post-serve-action-pool", "openapi-validation",
]  # fmt: skip
ALL_FLAGS = SUPPORTED
ENV_NAMES = [
    "AdminPort", "ProxyPort", "UpstreamProxy", "HoverflyImport", "SKIP_IMPORT_CHECK",
    "SIMPROXY_REDIS_URL", "SIMPROXY_WORKERS",
]  # fmt: skip


def parse(*argv: str, **env: str) -> Settings:
    return parse_args(argv, env)


def error_of(*argv: str, **env: str) -> UsageError:
    with pytest.raises(UsageError) as info:
        parse_args(argv, env)
    return info.value


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV_NAMES:
        monkeypatch.delenv(name, raising=False)


# --- syntax


@pytest.mark.parametrize(
    "argv", [["-ap", "1234"], ["--ap", "1234"], ["-ap=1234"], ["--ap=1234"], ["-ap", "1", "-ap", "1234"]]
)
def test_value_flag_forms(argv: list[str]) -> None:
    assert parse(*argv).admin_port == 1234


def test_defaults() -> None:
    assert parse() == Settings()


def test_value_may_start_with_a_dash_or_be_empty() -> None:
    assert parse("-destination", "-ap").destination == "-ap"
    assert parse("-redis-prefix=").redis_prefix == ""


@pytest.mark.parametrize("argv", [["-webserver"], ["--webserver"]])
def test_boolean_without_value_is_true(argv: list[str]) -> None:
    assert parse(*argv).webserver is True


@pytest.mark.parametrize("word", ["1", "t", "T", "TRUE", "true", "True"])
def test_boolean_true_words(word: str) -> None:
    assert parse(f"-webserver={word}").webserver is True


@pytest.mark.parametrize("word", ["0", "f", "F", "FALSE", "false", "False"])
def test_boolean_false_words(word: str) -> None:
    assert parse("-webserver", f"--webserver={word}").webserver is False


@pytest.mark.parametrize("word", ["yes", "", "tRUE", "2"])
def test_bad_boolean_value(word: str) -> None:
    error = error_of(f"-disable-cache={word}")
    assert error.exit_code == 2
    assert error.message == f'invalid boolean value "{word}" for -disable-cache: parse error'


def test_boolean_does_not_take_the_next_argument() -> None:
    # Go's trap: "false" is the first positional argument, so parsing stops and -ap is never read.
    settings = parse("-webserver", "false", "-ap", "9999")
    assert settings.webserver is True
    assert settings.admin_port == 8888


@pytest.mark.parametrize("stop", ["positional", "-", "", "--"])
def test_parsing_stops_at_first_non_flag(stop: str) -> None:
    settings = parse("-pp", "9000", stop, "-ap", "1234", "-no-such-flag")
    assert settings.proxy_port == 9000
    assert settings.admin_port == 8888


@pytest.mark.parametrize(
    ("text", "value"),
    [("0", 0), ("+7", 7), ("0x10", 16), ("010", 8), ("0o10", 8), ("0b11", 3), ("1_000", 1000)],
)
def test_go_integer_syntax(text: str, value: int) -> None:
    assert parse("-journal-size", text).journal_size == value


@pytest.mark.parametrize(
    ("text", "reason"),
    [("abc", "parse error"), ("", "parse error"), ("1.5", "parse error"), (" 1", "parse error"),
     ("08", "parse error"), ("_1", "parse error"), ("99999999999999999999", "value out of range")],
)  # fmt: skip
def test_bad_integer_value(text: str, reason: str) -> None:
    error = error_of(f"-journal-size={text}")
    assert error.exit_code == 2
    assert error.message == f'invalid value "{text}" for flag -journal-size: {reason}'


def test_negative_journal_and_logs_sizes_become_zero() -> None:
    settings = parse("-journal-size", "-5", "-logs-size=-1")
    assert (settings.journal_size, settings.logs_size) == (0, 0)


def test_unknown_flag() -> None:
    error = error_of("-ap", "1", "-nope", "x")
    assert (error.exit_code, error.message) == (2, "flag provided but not defined: -nope")


@pytest.mark.parametrize("flag", ["-ap", "--import", "-workers"])
def test_flag_needs_an_argument(flag: str) -> None:
    error = error_of(flag)
    assert (error.exit_code, error.message) == (2, f"flag needs an argument: -{flag.lstrip('-')}")


@pytest.mark.parametrize("arg", ["---ap", "-=1", "--=1"])
def test_bad_flag_syntax(arg: str) -> None:
    error = error_of(arg)
    assert (error.exit_code, error.message) == (2, f"bad flag syntax: {arg}")


def test_repeatable_import_accumulates_after_env_import() -> None:
    settings = parse("-import", "a.json", "--import=b.json", "-import", "", HoverflyImport="env.json")
    assert settings.imports == ("env.json", "a.json", "b.json")


def test_dest_values_are_joined_and_replace_destination() -> None:
    assert parse("-destination", "ignored", "-dest", "a.com", "-dest=b.org").destination == "a.com|b.org"
    assert parse("-destination", "api\\..*").destination == "api\\..*"


# --- environment


def test_env_ports_and_flag_precedence() -> None:
    settings = parse(AdminPort="9001", ProxyPort="9002")
    assert (settings.admin_port, settings.proxy_port) == (9001, 9002)
    settings = parse("-ap", "7001", "-pp", "7002", AdminPort="9001", ProxyPort="9002")
    assert (settings.admin_port, settings.proxy_port) == (7001, 7002)
    # As in Hoverfly, an empty flag value falls back to the environment.
    assert parse("-ap=", AdminPort="9001").admin_port == 9001


@pytest.mark.parametrize(
    ("argv", "env", "expected"),
    [
        ([], {}, ""),
        (["-upstream-proxy", "proxy.corp:3128"], {}, "http://proxy.corp:3128"),
        (["-upstream-proxy=https://proxy.corp"], {}, "https://proxy.corp"),
        (["-upstream-proxy=http://proxy.corp"], {}, "http://proxy.corp"),
        ([], {"UpstreamProxy": "proxy.env:1"}, "proxy.env:1"),
        (["-upstream-proxy", "flag:2"], {"UpstreamProxy": "proxy.env:1"}, "http://flag:2"),
    ],
)
def test_upstream_proxy(argv: list[str], env: dict[str, str], expected: str) -> None:
    assert parse_args(argv, env).upstream_proxy == expected


def test_skip_import_check_env() -> None:
    assert parse(SKIP_IMPORT_CHECK="true").no_import_check is True
    assert parse(SKIP_IMPORT_CHECK="1").no_import_check is False
    assert parse("-no-import-check").no_import_check is True
    assert parse("-no-import-check=false", SKIP_IMPORT_CHECK="true").no_import_check is False


def test_openapi_validation_is_on_unless_turned_off() -> None:
    assert parse().openapi_validation is True
    assert parse("-openapi-validation").openapi_validation is True
    assert parse("-openapi-validation=false").openapi_validation is False


def test_simproxy_env_and_flag_precedence() -> None:
    settings = parse(SIMPROXY_REDIS_URL="redis://env:6379/0", SIMPROXY_WORKERS="4")
    assert (settings.redis_url, settings.workers) == ("redis://env:6379/0", 4)
    settings = parse("-redis-url=", "-workers", "2", SIMPROXY_REDIS_URL="redis://env", SIMPROXY_WORKERS="4")
    assert (settings.redis_url, settings.workers) == ("", 2)
    assert parse("-redis-prefix", "team-a:").redis_prefix == "team-a:"


def test_bad_workers_env_is_fatal() -> None:
    error = error_of(SIMPROXY_WORKERS="many")
    assert (error.exit_code, error.message) == (1, 'SIMPROXY_WORKERS must be an integer, got "many"')


# --- modes and log levels


@pytest.mark.parametrize("mode", ["capture", "spy", "diff"])
def test_mode_flags(mode: str) -> None:
    assert parse(f"-{mode}").mode == mode


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-capture", "-spy"], "Two or more modes supplied, check your flags"),
        (["-spy", "-diff"], "Two or more modes supplied, check your flags"),
        (["-synthesize", "-capture"], "Two or more modes supplied, check your flags"),
        (["-synthesize"], "Synthesize mode chosen although middleware not supplied"),
        (["-synthesize", "-spy"], "Synthesize mode chosen although middleware not supplied"),
        (["-modify"], "Modify mode chosen although middleware not supplied"),
        (["-capture-on-miss"], "-capture-on-miss can only be used with -spy mode"),
        (["-capture", "-capture-on-miss"], "-capture-on-miss can only be used with -spy mode"),
        (["-webserver", "-spy", "-capture-on-miss"],
         "-capture-on-miss cannot be used with -webserver, which starts in simulate mode"),
    ],
)  # fmt: skip
def test_mode_errors_are_fatal(argv: list[str], message: str) -> None:
    error = error_of(*argv)
    assert (error.exit_code, error.message) == (1, message)


def test_webserver_overrides_mode_flags() -> None:
    settings = parse("-webserver", "-capture", "-spy", "-synthesize")
    assert (settings.webserver, settings.mode) == (True, "simulate")


def test_capture_on_miss_with_spy() -> None:
    settings = parse("-spy", "-capture-on-miss")
    assert (settings.mode, settings.capture_on_miss) == ("spy", True)


@pytest.mark.parametrize(
    ("given", "level"),
    [("panic", "panic"), ("fatal", "fatal"), ("error", "error"), ("warn", "warning"), ("warning", "warning"),
     ("info", "info"), ("DEBUG", "debug"), ("trace", "trace")],
)  # fmt: skip
def test_log_levels(given: str, level: str) -> None:
    assert parse("-log-level", given).log_level == level


def test_verbose_sets_debug_and_bad_level_is_fatal() -> None:
    assert parse("-v", "-log-level=error").log_level == "debug"
    error = error_of("-log-level", "loud", "-v")
    assert (error.exit_code, error.message) == (
        1, 'Unknown log-level value "loud", expected one of panic, fatal, error, warn, warning, info, debug, trace'
    )  # fmt: skip


# --- values checked after parsing


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["-ap", "abc"], 'Admin port must be a number between 1 and 65535, got "abc"'),
        (["-pp", "0"], "Proxy port must be between 1 and 65535, got 0"),
        (["-ap", "70000"], "Admin port must be between 1 and 65535, got 70000"),
        (
            ["-cache-size", "0"],
            "Cache size must be a positive number, alternatively use the disable-cache flag",
        ),
        (["-destination", "("], "is not a valid regular expression"),
        (["-redis-url", "http://x"], "Redis URL must start with redis://, rediss:// or unix://"),
        (["-workers", "0"], "Workers must be at least 1, got 0"),
    ],
)
def test_invalid_values_are_fatal(argv: list[str], fragment: str) -> None:
    error = error_of(*argv)
    assert error.exit_code == 1
    assert fragment in error.message


def test_cache_size_zero_allowed_with_disable_cache() -> None:
    settings = parse("-disable-cache", "-cache-size=0")
    assert (settings.disable_cache, settings.cache_size) == (True, 0)


@pytest.mark.parametrize("url", ["redis://h:6379/0", "rediss://h", "unix:///tmp/r.sock"])
def test_redis_url_schemes(url: str) -> None:
    assert parse("-redis-url", url).redis_url == url


# --- storage and dialect


def test_db_memory_writes_nothing_and_db_path_alone_is_ignored_as_in_hoverfly() -> None:
    assert parse().db_path == ""
    assert parse("-db", "memory").db_path == ""
    assert parse("-db-path", "/tmp/x.db").db_path == ""


def test_db_boltdb_keeps_its_data_in_db_path_or_requests_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert parse("-db", "boltdb").db_path == str(tmp_path / "requests.db")
    assert parse("-db=boltdb", "-db-path", "sub/x.db").db_path == str(tmp_path / "sub" / "x.db")


def test_unknown_db_is_fatal() -> None:
    error = error_of("-db", "postgres")
    assert (error.exit_code, error.message) == (1, 'Unknown database type "postgres": expected memory or boltdb')


def test_compat_chooses_the_dialect_by_flag_then_environment() -> None:
    assert parse().dialect.name == "spec"
    assert parse("-compat", "hoverfly").dialect.product == "Hoverfly"
    assert parse(SIMPROXY_COMPAT="hoverfly").dialect.version_key == "hoverflyVersion"
    assert parse("-compat", "spec", SIMPROXY_COMPAT="hoverfly").dialect.name == "spec"
    error = error_of("-compat", "wiremock")
    assert error.exit_code == 1
    assert error.message == 'invalid value "wiremock" for flag -compat: expected spec or hoverfly'


def test_tls_verification_is_on_unless_turned_off() -> None:
    assert parse().tls_verification is True
    assert parse("-tls-verification=false").tls_verification is False


def test_unsupported_flag_syntax_is_still_checked() -> None:
    # Go's trap: "false" is a positional argument, so parsing stops there and -cert-name is never read
    assert parse("-admin", "false", "-cert-name").admin_port == 8888
    assert error_of("-cert-name").exit_code == 2
    assert error_of("-metrics=maybe").exit_code == 2


# --- help, version and main()


@pytest.mark.parametrize("arg", ["-h", "-help", "--help", "--h", "-h=1"])
def test_help(arg: str, capsys: pytest.CaptureFixture[str], clean_env: None) -> None:
    with pytest.raises(HelpRequested):
        parse(arg)
    assert main(["-ap", "1", arg, "-nope"]) == 0
    out, err = capsys.readouterr()
    assert out == ""
    assert err == usage_text()


def test_usage_says_what_simproxy_is_and_shows_both_command_forms() -> None:
    lines = usage_text().splitlines()
    assert lines[0] == (
        "simproxy: an HTTP proxy that answers from a simulation (service virtualisation),"
        " wire-compatible with Hoverfly's admin API v2"
    )
    forms = lines[lines.index("Usage:") + 1 : lines.index("Flags:")]
    assert [line.split("   ")[0].strip() for line in forms if line.strip()][:2] == [
        "simproxy [flags]", "simproxy fleet N [flags]"
    ]  # fmt: skip


def test_help_names_each_subcommand_with_what_it_does(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-h"]) == 0
    err = capsys.readouterr().err
    usage = err[err.index("Usage:\n") : err.index("Flags:\n")]
    assert "  simproxy openapi FILE      print the simulation an OpenAPI or Swagger document" in usage
    assert "simproxy openapi --no-validation FILE: without request validation" in usage
    assert "  simproxy fleet N [flags]   N instances on this machine" in usage


def test_usage_lists_every_flag_sorted_with_defaults() -> None:
    text = usage_text()
    lines = text.splitlines()
    assert lines[lines.index("Flags:") + 1] == "  -add"
    names = [line.split()[0][1:] for line in lines[1:] if line.startswith("  -")]
    assert names == sorted(ALL_FLAGS)
    for expected in [
        '  -ap string\n    \tAdmin API port; env AdminPort (default "8888")\n',
        "  -pp string\n    \t",
        '(default "8500")\n  -read-timeout string',
        "  -journal-size int\n    \t",
        "  -import value\n    \t",
        "  -v\tVerbose",
        '(default "127.0.0.1")',
        '(default ".")',
        '(default "info")',
        '(default "simproxy:")',
        '(default "hoverfly.proxy")',
        "(default 1000)\n  -jwt-secret string",
        "(default true)\n  -ap string",
    ]:
        assert expected in text
    assert "(default 1)\n" in text.split("  -workers int")[1]
    assert "(default true)" in text.split("  -tls-verification")[1].split("\n  -")[0]
    assert "not supported" not in text


def test_version(capsys: pytest.CaptureFixture[str], clean_env: None) -> None:
    with pytest.raises(VersionRequested):
        parse("-version", "-cert", "x", "-capture", "-spy")
    assert main(["-version", "-cert", "x"]) == 0
    assert capsys.readouterr() == (VERSION + "\n", "")


def test_version_after_a_syntax_error_is_not_printed(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-version", "-nope"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == 'flag provided but not defined: -nope\nrun "simproxy -h" for the flags\n'


def test_main_syntax_error_shows_the_flags_entry_and_a_hint_not_the_whole_usage(
    capsys: pytest.CaptureFixture[str], clean_env: None
) -> None:
    assert main(["-journal-size", "big"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        'invalid value "big" for flag -journal-size: parse error\n'
        "  -journal-size int\n    \tJournal capacity; 0 disables the journal (default 1000)\n"
        'run "simproxy -h" for the flags\n'
    )
    assert main(["-pp"]) == 2
    assert capsys.readouterr().err == (
        'flag needs an argument: -pp\n  -pp string\n    \tProxy (or webserver) port; env ProxyPort (default "8500")\n'
        'run "simproxy -h" for the flags\n'
    )
    assert main(["-webserver=maybe"]) == 2
    assert capsys.readouterr().err.splitlines()[0] == 'invalid boolean value "maybe" for -webserver: parse error'
    assert main(["---x"]) == 2
    assert capsys.readouterr().err == 'bad flag syntax: ---x\nrun "simproxy -h" for the flags\n'


@pytest.mark.parametrize(
    ("argv", "stderr"),
    [
        (["-capture", "-diff"], "simproxy: Two or more modes supplied, check your flags\n"),
        (["-modify"], "simproxy: Modify mode chosen although middleware not supplied\n"),
        (["-db", "bolt"], 'simproxy: Unknown database type "bolt": expected memory or boltdb\n'),
    ],
)
def test_main_fatal_errors(argv: list[str], stderr: str, capsys: pytest.CaptureFixture[str], clean_env: None) -> None:
    assert main(argv) == 1
    assert capsys.readouterr() == ("", stderr)


def test_main_reads_argv_and_environment_then_runs_the_server(monkeypatch: pytest.MonkeyPatch, clean_env: None) -> None:
    started: list[Settings] = []

    def run(settings: Settings) -> int:
        started.append(settings)
        return 3

    monkeypatch.setitem(sys.modules, "simproxy.admin.process.server", types.SimpleNamespace(run=run))
    monkeypatch.setattr(sys, "argv", ["simproxy", "-pp", "9500", "-webserver"])
    monkeypatch.setenv("AdminPort", "9888")
    assert main() == 3
    assert started == [Settings(admin_port=9888, proxy_port=9500, webserver=True)]


@pytest.mark.slow  # starts a process
def test_python_dash_m_admin() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([*COMMAND, "-version"], capture_output=True, text=True, env=env, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (0, VERSION + "\n", "")
    done = subprocess.run([*COMMAND, "-x"], capture_output=True, text=True, env=env, check=False)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == 'flag provided but not defined: -x\nrun "simproxy -h" for the flags\n'


# --- Settings


def test_settings_is_frozen_slotted_and_picklable() -> None:
    settings = Settings(imports=("a.json",), mode="spy", capture_on_miss=True, redis_url="unix:///r.sock")
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.admin_port = 1  # type: ignore[misc]
    assert not hasattr(settings, "__dict__")
    assert pickle.loads(pickle.dumps(settings)) == settings


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"admin_port": 0}, "Admin port must be between 1 and 65535"),
        ({"proxy_port": 65536}, "Proxy port must be between 1 and 65535"),
        ({"admin_port": "8888"}, "admin_port must be an integer"),
        ({"webserver": 1}, "webserver must be a boolean"),
        ({"imports": ["a.json"]}, "imports must be a tuple of strings"),
        ({"journal_size": -1}, "Journal size must not be negative"),
        ({"logs_size": -1}, "Logs size must not be negative"),
        ({"cache_size": 0}, "Cache size must be a positive number, alternatively use the disable-cache flag"),
        ({"cache_size": -1, "disable_cache": True}, "Cache size must not be negative"),
        ({"workers": 0}, "Workers must be at least 1"),
        ({"mode": "record"}, "Unknown mode 'record'"),
        ({"capture_on_miss": True}, "-capture-on-miss can only be used with -spy mode"),
        ({"log_level": "warn"}, "Unknown log-level value 'warn'"),
        ({"destination": "[a-"}, "is not a valid regular expression"),
        ({"redis_url": "localhost:6379"}, "Redis URL must start with"),
        ({"listen_on_host": ""}, "Listen-on-host must not be empty"),
    ],
)
def test_settings_validation(changes: dict[str, object], fragment: str) -> None:
    with pytest.raises(ValueError) as info:
        Settings(**changes)  # type: ignore[arg-type]
    assert fragment in str(info.value)


def test_settings_accepts_every_mode_and_level() -> None:
    for mode in ("simulate", "capture", "spy", "synthesize", "modify", "diff"):
        assert Settings(mode=mode).mode == mode
    for level in ("panic", "fatal", "error", "warning", "info", "debug", "trace"):
        assert Settings(log_level=level).log_level == level


def test_response_body_files_flags(tmp_path: Path) -> None:
    settings = parse("-response-body-files-path", str(tmp_path), "-response-body-files-allow-origin",
                     "https://files.example.com/", "-response-body-files-allow-origin=http://127.0.0.1:9/")  # fmt: skip
    assert settings.response_body_files_path == str(tmp_path)
    assert settings.response_body_files_allow_origin == ("https://files.example.com/", "http://127.0.0.1:9/")
    assert (
        error_of("-response-body-files-path", "relative/dir").message == "Response body files path should be absolute"
    )
    missing = str(tmp_path / "missing")
    assert error_of("-response-body-files-path", missing).message == "Response body files path does not exist"
    assert error_of("-response-body-files-allow-origin", "not a url").message.startswith("Origin is not a valid url")


def test_journal_flags() -> None:
    settings = parse("-journal-indexing-key", "Request.QueryParam.id", "-journal-indexing-key=Request.Method",
                     "-journal-body-size-limit", "2KB")  # fmt: skip
    assert settings.journal_indexing_keys == ("Request.QueryParam.id", "Request.Method")
    assert settings.journal_body_size_limit == 2048
    assert parse("-journal-body-size-limit=512").journal_body_size_limit == 512
    assert parse("-journal-body-size-limit=1mb").journal_body_size_limit == 1024**2
    for bad in ("0", "-5", "12XB", "many"):
        assert error_of(f"-journal-body-size-limit={bad}").exit_code == 1
    # simproxy's default (Hoverfly keeps bodies whole): 1 MB; an empty value keeps them whole
    assert parse().journal_body_size_limit == 1024**2
    assert parse("-journal-body-size-limit=").journal_body_size_limit == 0


# --- middleware


def test_middleware_flag_reads_the_script(tmp_path: Path) -> None:
    script = tmp_path / "mw.py"
    script.write_text("print('hi')\n")
    settings = parse("-synthesize", "-middleware", f"python3 {script}")
    assert settings.mode == "synthesize"
    assert settings.middleware == MiddlewareSpec(binary="python3", script="print('hi')\n")
    assert parse("-middleware", "http://mw.test/x").middleware == MiddlewareSpec(remote="http://mw.test/x")
    assert parse("-middleware", "cat").middleware == MiddlewareSpec(binary="cat")
    assert "Failed to read the middleware script" in error_of("-middleware", f"python3 {tmp_path}/none").message
    assert parse("-modify", "-middleware", "cat").mode == "modify"


def test_middleware_pool_queue_and_python_hook_flags(tmp_path: Path) -> None:
    script = tmp_path / "loop.py"
    script.write_text("for line in open(0): print(line, end='')\n")
    settings = parse("-middleware", f"python3 {script}", "-middleware-pool", "4", "-middleware-queue", "100")
    assert settings.middleware == MiddlewareSpec(binary="python3", script=script.read_text(), pool=4)
    assert settings.middleware_queue == 100
    assert parse().middleware_queue == 0 and parse("-middleware", "cat").middleware.pool == 0
    hook = parse("-synthesize", "-middleware", "python:my_hooks.rewrite:answer")
    assert hook.middleware == MiddlewareSpec(binary="python:my_hooks.rewrite:answer")
    assert "-middleware-pool must be from 0" in error_of("-middleware", "cat", "-middleware-pool", "-1").message
    compat = parse("-compat", "hoverfly", "-middleware", f"python3 {script}", "-middleware-pool", "4")
    assert compat.middleware.pool == 0  # Hoverfly has no such thing: its answers stay Hoverfly's
    for value in ("http://mw.test/x", "python:m:f", ""):
        message = error_of("-middleware", value, "-middleware-pool", "2").message
        assert "-middleware-pool needs a local middleware program" in message


def test_post_serve_action_flags(tmp_path: Path) -> None:
    script = tmp_path / "cb.sh"
    script.write_text("cat\n")
    settings = parse(
        "-post-serve-action", f"local sh {script} 250",
        "-post-serve-action", "hook http://hook.test/cb x",
        "-post-serve-action", f"gone sh {tmp_path}/missing.sh 10",
    )  # fmt: skip
    assert settings.post_serve_actions == (
        ActionSpec(name="local", binary="sh", script="cat\n", delay_ms=250),
        ActionSpec(name="hook", remote="http://hook.test/cb", delay_ms=1000),  # a bad delay is 1000
    )  # an unreadable script skips its action, as Hoverfly does
    message = "Failed to import post serve action due to invalid input passed"
    assert error_of("-post-serve-action", "just two").message == message


def test_timeouts() -> None:
    assert (parse().upstream_timeout, parse().middleware_timeout) == (60.0, 30.0)
    settings = parse("-upstream-timeout", "500ms", "-middleware-timeout", "2m")
    assert (settings.upstream_timeout, settings.middleware_timeout) == (0.5, 120.0)
    assert parse("-upstream-timeout", "3").upstream_timeout == 3.0
    assert "expected a duration" in error_of("-upstream-timeout", "soon").message
    assert "expected a duration" in error_of("-middleware-timeout", "0s").message


# --- authentication


def test_auth_is_off_unless_asked_for() -> None:
    settings = parse("-username", "u", "-password", "p")
    assert (settings.auth, settings.users) == (False, ())


@pytest.mark.parametrize("switch", [("-auth",), ("-add",)])
def test_auth_with_a_user_keeps_only_a_bcrypt_hash_of_the_password(switch: tuple[str, ...]) -> None:
    settings = parse(*switch, "-username", "admin", "-password", "s3cret")
    assert settings.auth is True
    (user,) = settings.users
    assert user.username == "admin" and user.password_hash.startswith("$2b$10$")
    assert "s3cret" not in repr(settings) and user.password_hash not in repr(settings)
    assert bcrypt.checkpw(b"s3cret", user.password_hash.encode())


def test_auth_takes_a_given_hash_and_hoverflys_environment() -> None:
    given = bcrypt.hashpw(b"pw", bcrypt.gensalt(4)).decode()
    settings = parse("-username", "a", "-password-hash", given, HoverflyAuthEnabled="true",
                     HoverflyAdmin="ops", HoverflyAdminPass="pw2")  # fmt: skip
    assert settings.auth is True
    assert [(u.username, u.password_hash == given) for u in settings.users] == [("a", True), ("ops", False)]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("-auth",), "authentication is on but no user is given"),
        (("-auth", "-username", "u"), "needs -password or -password-hash"),
        (("-auth", "-password", "p"), "-auth needs -username"),
        (("-auth", "-username", "u", "-password-hash", "not-a-hash"), "-password-hash is not a bcrypt hash"),
    ],
)
def test_auth_without_a_usable_user_does_not_start(args: tuple[str, ...], message: str) -> None:
    error = error_of(*args)
    assert error.exit_code == 1 and message in error.message


def test_the_token_secret_and_lifetime() -> None:
    assert parse("-jwt-secret", "k1").jwt_secret == "k1"
    assert parse(HoverflySecret="k2").jwt_secret == "k2"
    assert parse().token_seconds == 86_400
    assert parse("-token-expiration", "30m").token_seconds == 1_800
    assert "k1" not in repr(parse("-jwt-secret", "k1"))
    assert error_of("-token-expiration", "soon").exit_code == 1


def test_the_limits_of_a_client_have_defaults_and_flags() -> None:
    limits = parse().proxy_limits
    assert (limits.max_body, limits.max_head, limits.read_timeout, limits.idle_timeout) == (64 << 20, 1 << 20, 60, 120)
    assert parse().max_admin_body == 128 << 20
    given = parse("-max-body-size", "2KB", "-max-header-size=512", "-read-timeout", "2s", "-idle-timeout", "500ms",
                  "-max-admin-body-size", "1MB")  # fmt: skip
    limits = given.proxy_limits
    assert (limits.max_body, limits.max_head, limits.read_timeout, limits.idle_timeout) == (2048, 512, 2, 0.5)
    assert given.max_admin_body == 1 << 20
    assert error_of("-max-body-size", "0").exit_code == 1


@pytest.mark.parametrize("argv", [["fleet"], ["fleet", "x"], ["fleet", "0"], ["fleet", "2", "-no-such-flag"]])
def test_fleet_refuses_a_bad_count_or_bad_flags_before_starting_anything(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "usage: simproxy fleet N" in err or "flag provided but not defined: -no-such-flag" in err
    assert err.endswith('run "simproxy -h" for the flags\n')
    assert "Flags:" not in err  # the hint, not the whole usage


def test_fleet_help_and_fleet_errors_read_as_the_commands_do(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fleet", "-h"]) == 0
    assert capsys.readouterr().err.startswith("usage: simproxy fleet N [flags]")
    assert main(["fleet", "2", "-h"]) == 0  # was 2, after an empty "simproxy: " line
    assert capsys.readouterr().err == usage_text()
    assert main(["fleet", "2", "-capture", "-spy"]) == 1
    assert capsys.readouterr().err == "simproxy: Two or more modes supplied, check your flags\n"


# --- logs


def test_logs_go_to_the_console_as_coloured_quoted_text_by_default() -> None:
    assert parse().logs == LogOptions("plaintext", ("console",), "hoverfly.log", colour=True, quotes=True)


def test_logs_flags_choose_the_format_the_outputs_and_the_file() -> None:
    options = parse(
        "-logs", "json", "-logs-output", "file", "-logs-output=console", "-logs-output=file",
        "-logs-file", "/tmp/x.log", "-log-no-color", "-log-no-quotes",
    ).logs  # fmt: skip
    assert options == LogOptions("json", ("file", "console"), "/tmp/x.log", colour=False, quotes=False)
    assert parse("-logs-output", "file").logs.outputs == ("file",)  # the console only when asked for


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("-logs", "xml"), "Unknown logs format 'xml', expected one of plaintext, json"),
        (("-logs-output", "syslog"), "Unknown logs output type 'syslog', expected console or file"),
        (("-logs-file", "a.log"), "-logs-file is not allowed unless -logs-output is set to 'file'."),
    ],
)
def test_bad_logs_flags_are_fatal(args: tuple[str, ...], message: str) -> None:
    assert (error_of(*args).exit_code, error_of(*args).message) == (1, message)


def test_hoverflys_tls_verification_variable_turns_verification_off() -> None:
    assert parse(HoverflyTlsVerification="false").tls_verification is False
    assert parse(HoverflyTlsVerification="true").tls_verification is True
    assert parse("-tls-verification=false", HoverflyTlsVerification="true").tls_verification is False


def test_hoverflys_token_expiration_variable_is_in_hours_unless_the_flag_says() -> None:
    assert parse(HoverflyTokenExpiration="2").token_seconds == 7200
    assert parse("-token-expiration", "30m", HoverflyTokenExpiration="2").token_seconds == 1800
    assert "HoverflyTokenExpiration='soon'" in error_of(HoverflyTokenExpiration="soon").message


def test_generate_ca_cert_writes_a_new_ca_and_uses_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cryptography import x509

    monkeypatch.chdir(tmp_path)
    settings = parse("-generate-ca-cert", "-cert-name", "tests.proxy", "-cert-org", "Tests Inc")
    assert (settings.cert, settings.key, settings.ca_generated) == (
        str(tmp_path / "cert.pem"), str(tmp_path / "key.pem"), True
    )  # fmt: skip
    subject = x509.load_pem_x509_certificate((tmp_path / "cert.pem").read_bytes()).subject
    assert {a.rfc4514_attribute_name: a.value for a in subject} == {"CN": "tests.proxy", "O": "Tests Inc"}
    assert (tmp_path / "key.pem").stat().st_mode & 0o777 == 0o600
    default = parse("-generate-ca-cert")  # Hoverfly's defaults
    subject = x509.load_pem_x509_certificate((tmp_path / "cert.pem").read_bytes()).subject
    assert default.ca_generated and {a.rfc4514_attribute_name: a.value for a in subject} == {
        "CN": "hoverfly.proxy", "O": "Hoverfly Authority"
    }  # fmt: skip


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("-client-authentication-destination", "h"), "-client-authentication-destination needs"),
        (
            ("-client-authentication-destination", "(", "-client-authentication-client-cert", "c",
             "-client-authentication-client-key", "k"),
            "-client-authentication-destination is not a valid regular expression",
        ),
        (
            ("-client-authentication-destination", "h", "-client-authentication-client-cert", "/no/cert.pem",
             "-client-authentication-client-key", "/no/key.pem"),
            "Unable to load client certs file",
        ),
    ],
)  # fmt: skip
def test_bad_client_authentication_flags_are_fatal(args: tuple[str, ...], message: str) -> None:
    error = error_of(*args)
    assert error.exit_code == 1 and error.message.startswith(message)
