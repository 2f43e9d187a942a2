"""The pytest plugin (the ``pytest11`` entry point ``simproxy``; docs/pytest.md): a ``simproxy``
fixture on one simproxy per session, and record-or-replay with ``@pytest.mark.simproxy``.

* ``simproxy_server`` (session): the session's simproxy (admin/kit/harness.py ``Server``), started on
  the first test that uses it, on free loopback ports, with ``--simproxy-args``; or the instance at
  ``--simproxy-url`` and ``--simproxy-proxy-url``. Stopped at the end of the session, at exit, and
  by the kernel if pytest is killed.
* ``simproxy`` (function): resets that server (simulation, journal, state, cache, simulate mode),
  applies the test's marker, sets the proxy environment for the test's duration, and hands out a
  ``Simproxy`` (client, URLs, CA bundle, ``verify``).
* A cassette being recorded is written once the test's body has passed, and only if the recording
  holds what the test did: a recording that captured no request, or during which the real service
  could not be reached, fails the test instead and names the likely cause (admin/kit/report.py). The
  files written are listed at the end of the run.
* A failing test that used simproxy gets a ``simproxy`` section in its report: recording or
  replaying which cassette, and each request simproxy answered with its own 502 (a miss with its
  closest pair and the fields that differed, an unreachable service with the reason).
* ``@pytest.mark.simproxy(simulation="cassettes/x.json", mode=..., pairs=[...], env=True)`` makes a
  test use the fixture even when it does not ask for it. A cassette is recorded in stateful capture
  (a request repeated while recording is replayed in the same sequence), and by one test: a second
  test of the session that records it, or replays what the first just recorded, is an error.

Loading it costs nothing: the harness, the admin client and any HTTP library are imported, and
simproxy started, only when a test uses the fixture.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Generator, Iterator, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from simproxy.admin.kit.cassettes import Cassette
    from simproxy.admin.kit.harness import Server, Simproxy
    from simproxy.admin.kit.report import Situation

RECORD_MODES = ("none", "new", "all")  # admin.kit.cassettes.RecordMode's values, without importing it here
MARKER = (
    "simproxy(simulation=None, mode=None, pairs=None, env=True): use the simproxy fixture; replay the "
    "simulation file (relative to the test's folder) or record it (--simproxy-record); put pairs; set the mode"
)


@dataclass(frozen=True, slots=True)
class PluginOptions:
    """The command line and ini options, read once at configure time."""

    args: tuple[str, ...]
    admin_url: str
    proxy_url: str
    ca_cert: str
    record: str

    @classmethod
    def read(cls, config: pytest.Config) -> PluginOptions:
        def option(name: str) -> str:
            given = config.getoption(name)
            return str(given) if given is not None else str(config.getini(name) or "")

        options = cls(
            args=tuple(shlex.split(option("simproxy_args"))),
            admin_url=option("simproxy_url"),
            proxy_url=option("simproxy_proxy_url"),
            ca_cert=option("simproxy_ca_cert"),
            record=option("simproxy_record") or "new",
        )
        if options.record not in RECORD_MODES:
            raise pytest.UsageError(f"simproxy_record: {options.record!r} is none of {', '.join(RECORD_MODES)}")
        if bool(options.admin_url) != bool(options.proxy_url):
            raise pytest.UsageError("--simproxy-url and --simproxy-proxy-url go together: give both or neither")
        return options


OPTIONS = pytest.StashKey[PluginOptions]()
RECORDED = pytest.StashKey[dict[Path, str]]()
"""The cassettes this session records: file (resolved) -> node id of the test recording it."""
WRITTEN = pytest.StashKey[list[str]]()
"""What the end-of-run summary says of each cassette written."""


@dataclass(frozen=True, slots=True)
class SimproxyUse:
    """How a test uses simproxy (stashed on the item by the fixture): for the recording written
    after its body passes, and for the report of a failure."""

    proxy: Simproxy
    situation: Situation
    recording: Cassette | None
    new: bool
    """Whether the recorded cassette's file did not exist before."""


USE = pytest.StashKey[SimproxyUse]()
REFUSED = pytest.StashKey[bool]()
"""The test failed because its recording was refused: that message already says what simproxy saw."""


@dataclass(frozen=True, slots=True)
class MarkerOptions:
    """The keywords of ``@pytest.mark.simproxy`` (the closest one)."""

    simulation: str | None = None
    mode: str | None = None
    pairs: tuple[Mapping[str, Any], ...] = ()
    env: bool = True

    @classmethod
    def of(cls, item: pytest.Item) -> MarkerOptions:
        marker = item.get_closest_marker("simproxy")
        if marker is None:
            return cls()
        known = [f.name for f in fields(cls)]
        unknown = sorted(set(marker.kwargs) - set(known))
        if marker.args or unknown:
            given = ", ".join([*map(repr, marker.args), *unknown])
            pytest.fail(f"@pytest.mark.simproxy takes keywords {', '.join(known)}; not {given}", pytrace=False)
        kwargs = dict(marker.kwargs)
        if "pairs" in kwargs:
            kwargs["pairs"] = tuple(kwargs["pairs"] or ())
        return cls(**kwargs)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("simproxy", "simproxy (HTTP simulation proxy)")
    for name, metavar, text in (
        ("args", "ARGS", "flags of the simproxy the session starts, in shell syntax: --simproxy-args='-workers 2'"),
        ("url", "ADMIN_URL", "use the simproxy or Hoverfly whose admin API is there instead of starting one"),
        ("proxy-url", "PROXY_URL", "that instance's proxy (with --simproxy-url)"),
        ("ca-cert", "FILE", "the CA certificate to trust (default: the one GET /api/v2/hoverfly/ca-cert serves)"),
    ):
        dest = "simproxy_" + name.replace("-", "_")
        group.addoption(f"--simproxy-{name}", dest=dest, metavar=metavar, default=None, help=text)
        parser.addini(dest, f"simproxy: {text}", default="")
    record = "record simulation files: none (never; a missing one is an error), new (missing ones; default), all"
    group.addoption("--simproxy-record", dest="simproxy_record", choices=RECORD_MODES, default=None, help=record)
    parser.addini("simproxy_record", f"simproxy: {record}", default="new")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER)
    config.stash[OPTIONS] = PluginOptions.read(config)
    config.stash[RECORDED] = {}
    config.stash[WRITTEN] = []


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """Once the test's body passed, write the cassette it recorded (or fail it, saying why not)."""
    yield  # a test that failed stops here: nothing is written
    use = item.stash.get(USE, None)
    if use is not None and use.recording is not None:
        _write_recording(item, use, use.recording)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    """A failed test body that used simproxy: its report gets the ``simproxy`` section."""
    report = yield
    use = item.stash.get(USE, None)
    if use is not None and report.failed and report.when == "call" and not item.stash.get(REFUSED, False):
        report.sections.append(("simproxy", _section(use)))
    return report


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """The cassettes this run wrote: a recording is never silent (a mistyped path shows here)."""
    written = config.stash.get(WRITTEN, [])
    if written:
        terminalreporter.section("simproxy")
        for line in written:
            terminalreporter.line(line)


@pytest.fixture(scope="session")
def simproxy_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The session's simproxy, started by the first test that uses it (see ``simproxy``)."""
    from simproxy.admin.kit.harness import Server, ServerSettings

    options = request.config.stash[OPTIONS]
    settings = ServerSettings(options.args, options.admin_url, options.proxy_url, options.ca_cert)
    server = Server(settings, tmp_path_factory.mktemp("simproxy"))
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def simproxy(request: pytest.FixtureRequest, simproxy_server: Server) -> Iterator[Simproxy]:
    """simproxy for this test: reset, its marker applied, and the environment pointing at it
    (``HTTP(S)_PROXY``, the CA bundle variables; ``NO_PROXY`` removed) until the test ends."""
    from simproxy.admin.kit.cassettes import CassetteError
    from simproxy.admin.kit.client import ApiError
    from simproxy.admin.kit.harness import CLEARED_VARIABLES, HarnessError, Simproxy

    options = MarkerOptions.of(request.node)
    problem = ""
    try:
        simproxy_server.reset()
        proxy = Simproxy(simproxy_server)
        use = _prepare(request, proxy, options)
        env = proxy.env if options.env else {}
    except CassetteError as error:
        problem = str(error)
    except (HarnessError, ApiError, OSError) as error:  # OSError: its admin API does not answer
        log = "" if simproxy_server.settings.external else f"\n(simproxy's log: {simproxy_server.log_path})"
        problem = f"{error}{log}"
    if problem:
        pytest.fail(problem, pytrace=False)  # out of the except clause: no chain of exceptions shown
    request.node.stash[USE] = use
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        for name in CLEARED_VARIABLES if env else ():
            patch.delenv(name, raising=False)
        yield proxy


@pytest.fixture(autouse=True)
def _simproxy_marked(request: pytest.FixtureRequest) -> None:
    """A test marked ``simproxy`` gets the fixture without asking for it."""
    if request.node.get_closest_marker("simproxy") is not None:
        request.getfixturevalue("simproxy")


def _prepare(request: pytest.FixtureRequest, proxy: Simproxy, options: MarkerOptions) -> SimproxyUse:
    """Apply the marker: replay its cassette or start recording it, put its pairs, set its mode."""
    from simproxy.admin.kit.cassettes import Cassette, CassetteError, RecordMode
    from simproxy.admin.kit.report import Situation

    log = None if proxy.server.settings.external else proxy.server.log_path
    situation, recording, new = Situation(proxy.proxy_url, log=log), None, False
    if options.simulation is not None:
        path = (request.path.parent / options.simulation).resolve()
        cassette = Cassette(path, _shown(path, request.config.rootpath))
        recorded, test = request.config.stash[RECORDED], request.node.nodeid
        if recorded.get(path, test) != test:  # it would record over, or replay, another test's recording
            own = f"{Path(options.simulation).parent / _file_name(request.node.name)}.json"
            raise CassetteError(
                f"{cassette.shown} is recorded by test {recorded[path]}; "
                f'give each test its own file (e.g. simulation="{own}")'
            )
        records = cassette.records(RecordMode(request.config.stash[OPTIONS].record))
        situation = Situation(proxy.proxy_url, cassette.shown, records, log)
        if records:
            recorded[path] = test
            recording, new = cassette, not path.exists()
            # every request goes to the real service, and is kept; one made again is kept as the
            # next step of a sequence, so the replay answers each time as the service did
            proxy.mode("capture", stateful=True)
            return SimproxyUse(proxy, situation, recording, new)
        cassette.replay(proxy.client)
    if options.pairs:
        proxy.add_pairs(*options.pairs)  # after the cassette's, which keeps its global actions
    if options.mode is not None:
        proxy.mode(options.mode)
    return SimproxyUse(proxy, situation, recording, new)


def _write_recording(item: pytest.Item, use: SimproxyUse, cassette: Cassette) -> None:
    """Write what the test recorded; a recording that would lie fails the test instead."""
    from simproxy.admin.kit.report import empty_recording, failed_recording, failure_of

    entries = _journal(use.proxy)
    failures = [failure for entry in entries or () if (failure := failure_of(entry)) is not None]
    document = use.proxy.client.simulation()
    pairs = ((document or {}).get("data") or {}).get("pairs") or []
    refusal = (
        failed_recording(cassette.shown, failures)
        if failures
        else empty_recording(cassette.shown, use.proxy.proxy_url)
        if not pairs
        else ""
    )
    if refusal:
        item.stash[REFUSED] = True
        pytest.fail(refusal, pytrace=False)
    cassette.save(document)
    noun = "pair" if len(pairs) == 1 else "pairs"
    item.config.stash[WRITTEN].append(
        f"recorded {cassette.shown} ({'new file, ' if use.new else ''}{len(pairs)} {noun})"
    )


def _journal(proxy: Simproxy) -> list[Any] | None:
    """The test's journal entries; None when the journal cannot be read (``-journal-size 0``)."""
    from simproxy.admin.kit.client import ApiError

    try:
        return proxy.journal()
    except ApiError:
        return None


def _section(use: SimproxyUse) -> str:
    """The ``simproxy`` section of the failing test's report (what simproxy saw; admin/kit/report.py)."""
    from simproxy.admin.kit.client import ApiError
    from simproxy.admin.kit.report import section

    try:
        mode = use.proxy.client.mode()
        entries = _journal(use.proxy)
    except (ApiError, OSError) as error:
        return f"{use.situation.headline(None)}\nsimproxy did not answer after the test: {error}"
    if entries is None:
        return f"{use.situation.headline(mode)}\n(the journal is off: -journal-size 0)"
    return section(use.situation, mode, entries)


def _file_name(test: str) -> str:
    """A test's name as a file name: ``test_pay[card-10]`` -> ``test_pay-card-10``."""
    return re.sub(r"[^\w.-]+", "-", test).strip("-")


def _shown(path: Path, root: Path) -> str:
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)
