"""Inputs for the differential harness, mined at run time from a Hoverfly source tree.

Nothing of Hoverfly's is kept in this repository: ``mine(tree)`` reads the tree the user names and
returns four kinds of input, each with where it came from (``path:line``):

- simulation documents: the JSON files under ``testdata/``, ``docs/``, ``examples/`` and
  ``functional-tests/``, the JSON code blocks of the docs' pages, and the Go string literals (any
  ``.go`` file outside ``vendor/``) that hold a ``schemaVersion``;
- templates: the Go string literals holding ``{{`` in ``core/templating`` tests and
  ``core/hoverfly_funcs_test.go`` (not the expected texts given to ``Equal(...)``), each with the
  request and state its test function sets, and the docs' inline literals and code blocks holding ``{{``;
- matcher cases: the calls of matcher functions in ``core/matching/matchers`` tests (value, input and
  the expected true/false) and the entries of the ``fieldMatcherTests`` table;
- CSV data sources the templating tests create (``NewCsvDataSource("name", "data")``).

The heuristics are simple; whatever they find and cannot use is counted in ``Mined.skipped`` with the
reason, so a report says how much of the tree it covered.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.golit import GoFile, GoSyntaxError

SIMULATION_FOLDERS = ("testdata", "docs", "examples", "functional-tests")
TEMPLATE_SOURCES = ("core/templating", "core/hoverfly_funcs_test.go")
REQUEST_KEYS = ("Method", "Path", "Destination", "Scheme", "Body")
_CODE_BLOCK = re.compile(
    r"^(?P<indent>[ \t]*)(?:\.\. (?:code|code-block|sourcecode)::\s*(?P<lang>\w*)|(?!\.\. ).*::)\s*$"
)
_INLINE = re.compile(r"``(.+?)``", re.DOTALL)
_MATCHER_CONST = re.compile(r"^\s*(?:var\s+|const\s+)?(\w+)\s*=\s*\"(\w*)\"", re.MULTILINE)
_MATCHER_ENTRY = re.compile(r"(\w+):\s*\{\s*MatcherFunction:\s*(\w+)\s*,")
_EXPECT = re.compile(r"\s*\)\s*\.\s*(?:To|Should)\s*\(\s*(BeTrue|BeFalse)\b")


@dataclass(frozen=True)
class Skip:
    """Something a miner found and could not use: which miner, why, and where."""

    miner: str
    reason: str
    origin: str


@dataclass(frozen=True)
class SimulationDoc:
    """A simulation document: its text exactly as in the tree (what is PUT) and its parsed value."""

    origin: str
    text: str
    document: Any


@dataclass(frozen=True)
class RequestSpec:
    """Request details a Go test gives a template (any may be empty: the harness fills the rest)."""

    method: str = ""
    path: str = ""
    destination: str = ""
    query: tuple[tuple[str, str], ...] = ()
    headers: tuple[tuple[str, str], ...] = ()
    body: str | None = None


@dataclass(frozen=True)
class TemplateCase:
    """A template string, with the request and state its test renders it with (if it says)."""

    origin: str
    template: str
    request: RequestSpec = RequestSpec()
    state: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class MatcherCase:
    """Body matchers (a list of Hoverfly matcher objects), the input to match and the test's expectation."""

    origin: str
    matchers: tuple[Any, ...]
    input: str
    expected: bool | None


@dataclass(frozen=True)
class Mined:
    """Everything mined from one tree, and what was found but not used."""

    simulations: tuple[SimulationDoc, ...] = ()
    templates: tuple[TemplateCase, ...] = ()
    matchers: tuple[MatcherCase, ...] = ()
    csv_sources: tuple[tuple[str, str], ...] = ()
    skipped: tuple[Skip, ...] = field(default=())


def _rel(tree: Path, path: Path) -> str:
    return str(path.relative_to(tree))


def _files(tree: Path, under: str, suffix: str) -> Iterator[Path]:
    """Files below ``tree/under`` ending in ``suffix``, sorted, ``vendor`` and hidden folders skipped."""
    root = tree / under
    if root.is_file():
        if root.name.endswith(suffix):
            yield root
        return
    if not root.is_dir():
        return
    for path in sorted(root.rglob(f"*{suffix}")):
        parts = path.relative_to(tree).parts
        if "vendor" in parts or any(p.startswith(".") for p in parts) or "node_modules" in parts:
            continue
        if path.is_file():
            yield path


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _is_simulation(value: Any) -> bool:
    """A simulation document has ``data`` (with pairs) or a ``meta`` with a ``schemaVersion``."""
    if not isinstance(value, dict):
        return False
    data, meta = value.get("data"), value.get("meta")
    return (isinstance(data, dict) and "pairs" in data) or (isinstance(meta, dict) and "schemaVersion" in meta)


def rst_blocks(text: str) -> Iterator[tuple[int, str, str]]:
    """The literal blocks of an reStructuredText page: (first line, language or "", dedented text)."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        match = _CODE_BLOCK.match(lines[i])
        if match is None or match["indent"] is None:
            i += 1
            continue
        indent = len(match["indent"].expandtabs())
        j = i + 1
        while j < len(lines) and re.match(r"^\s+:\w[\w-]*:", lines[j]):  # directive options
            j += 1
        body: list[str] = []
        while j < len(lines) and (not lines[j].strip() or len(lines[j].expandtabs()) - len(lines[j].lstrip()) > indent):
            body.append(lines[j])
            j += 1
        block = textwrap.dedent("\n".join(body)).strip("\n")
        if block:
            yield i + 2, (match["lang"] or ""), block
        i = max(j, i + 1)


def _strings_in(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings_in(item)


class _Miner:
    """Collects cases and skips while walking one tree."""

    def __init__(self, tree: Path) -> None:
        self.tree = tree
        self.simulations: list[SimulationDoc] = []
        self.templates: list[TemplateCase] = []
        self.matchers: list[MatcherCase] = []
        self.csv: dict[str, str] = {}
        self.skipped: list[Skip] = []
        self._seen_sims: set[str] = set()
        self._seen_templates: set[str] = set()
        self._go: dict[Path, GoFile | None] = {}

    def skip(self, miner: str, reason: str, origin: str) -> None:
        self.skipped.append(Skip(miner, reason, origin))

    def go(self, path: Path) -> GoFile | None:
        if path not in self._go:
            text = _read(path)
            try:
                self._go[path] = None if text is None else GoFile(text, _rel(self.tree, path))
            except GoSyntaxError as exc:
                self.skip("go", f"unreadable Go source: {exc}", _rel(self.tree, path))
                self._go[path] = None
        return self._go[path]

    # -- simulations ------------------------------------------------------------------------

    def add_simulation(self, origin: str, text: str, *, miner: str) -> None:
        try:
            value = json.loads(text)
        except ValueError:
            self.skip(miner, "not JSON (a fragment, a format string or an annotated example)", origin)
            return
        if not _is_simulation(value):
            self.skip(miner, "JSON but not a simulation document", origin)
            return
        key = json.dumps(value, sort_keys=True)
        if key in self._seen_sims:
            self.skip(miner, "duplicate of a document already mined", origin)
            return
        self._seen_sims.add(key)
        self.simulations.append(SimulationDoc(origin, text, value))

    def simulations_from_files(self) -> None:
        for folder in SIMULATION_FOLDERS:
            for path in _files(self.tree, folder, ".json"):
                text = _read(path)
                if text is None:
                    self.skip("simulation files", "unreadable", _rel(self.tree, path))
                    continue
                try:
                    value = json.loads(text)
                except ValueError:
                    self.skip("simulation files", "invalid JSON file", _rel(self.tree, path))
                    continue
                if _is_simulation(value):
                    self.add_simulation(_rel(self.tree, path), text, miner="simulation files")

    def simulations_from_docs(self) -> None:
        for suffix in (".rst", ".md"):
            for path in _files(self.tree, "docs", suffix):
                text = _read(path) or ""
                for line, _lang, block in rst_blocks(text):
                    if "schemaVersion" in block or '"pairs"' in block:
                        self.add_simulation(f"{_rel(self.tree, path)}:{line}", block, miner="docs code blocks")

    def simulations_from_go(self) -> None:
        for path in _files(self.tree, "", ".go"):
            if "schemaVersion" not in (_read(path) or ""):
                continue
            source = self.go(path)
            if source is None:
                continue
            for lit in source.literals:
                if "schemaVersion" in lit.value:
                    self.add_simulation(f"{source.path}:{lit.line}", lit.value, miner="Go string literals")

    # -- templates --------------------------------------------------------------------------

    def add_template(self, case: TemplateCase, miner: str) -> None:
        key = json.dumps([case.template, case.request.__dict__, case.state], sort_keys=True, default=list)
        if key in self._seen_templates:
            self.skip(miner, "duplicate template", case.origin)
            return
        self._seen_templates.add(key)
        self.templates.append(case)

    def templates_from_go(self) -> None:
        for under in TEMPLATE_SOURCES:
            for path in _files(self.tree, under, "_test.go"):
                source = self.go(path)
                if source is None:
                    continue
                self.csv_from_go(source)
                for lit in source.literals:
                    if "{{" not in lit.value:
                        continue
                    origin = f"{source.path}:{lit.line}"
                    before = source.code[max(0, lit.start - 40) : lit.start].rstrip()
                    if before.endswith(("Equal(", "ContainSubstring(", "Equal(\n")):
                        continue  # an expected output, not a template
                    function = source.function_at(lit.start)
                    if function is None:
                        self.skip("Go templates", "outside a test function", origin)
                        continue
                    request, state = _request_of(source, function.start, function.end)
                    self.add_template(TemplateCase(origin, lit.value, request, state), "Go templates")

    def csv_from_go(self, source: GoFile) -> None:
        for match in re.finditer(r"NewCsvDataSource\s*\(", source.code):
            args = source.string_args(match.end() - 1, 2)
            if args is None:
                self.skip(
                    "CSV data sources",
                    "arguments are not string literals",
                    f"{source.path}:{source.line_of(match.start())}",
                )
            else:
                self.csv.setdefault(args[0], args[1])

    def templates_from_docs(self) -> None:
        for suffix in (".rst", ".md"):
            for path in _files(self.tree, "docs", suffix):
                text = _read(path) or ""
                rel = _rel(self.tree, path)
                in_blocks: set[str] = set()
                for line, lang, block in rst_blocks(text):
                    if "{{" not in block or lang in ("bash", "sh", "shell", "python", "yaml"):
                        continue
                    try:
                        value = json.loads(block)
                    except ValueError:
                        value = None
                    found = [s for s in _strings_in(value) if "{{" in s] if value is not None else [block]
                    for template in found:
                        in_blocks.add(template)
                        self.add_template(TemplateCase(f"{rel}:{line}", template), "docs templates")
                for match in _INLINE.finditer(text):
                    template = match[1]
                    if "{{" in template and template not in in_blocks:
                        origin = f"{rel}:{text.count(chr(10), 0, match.start()) + 1}"
                        self.add_template(TemplateCase(origin, template), "docs templates")
                for number, line_text in enumerate(text.splitlines(), 1):
                    if "{{" in line_text and "``" not in line_text and line_text.lstrip().startswith("|"):
                        self.skip("docs templates", "template in a table cell without a literal", f"{rel}:{number}")

    # -- matchers ---------------------------------------------------------------------------

    def matcher_names(self) -> dict[str, str]:
        """Go function name -> matcher name, read from ``core/matching/matchers`` (its constants and
        the ``Matchers`` registry), so a new matcher in a later tree is picked up."""
        constants = _constants(self.tree)
        registry = _read(self.tree / "core" / "matching" / "matchers" / "matchers.go") or ""
        names: dict[str, str] = {}
        for constant, function in _MATCHER_ENTRY.findall(registry):
            if constants.get(constant):
                names.setdefault(function, constants[constant])
        return names

    def matchers_from_calls(self) -> None:
        names = self.matcher_names()
        if not names:
            self.skip("matcher calls", "no matcher registry found (core/matching/matchers/matchers.go)", "")
            return
        call = re.compile(r"(?<![\w.])(?:matchers\.)?(" + "|".join(map(re.escape, sorted(names))) + r")\s*\(")
        for path in _files(self.tree, "core/matching/matchers", "_test.go"):
            source = self.go(path)
            if source is None:
                continue
            for match in call.finditer(source.code):
                if source.code[max(0, match.start() - 5) : match.start()].rstrip().endswith("func"):
                    continue
                origin = f"{source.path}:{source.line_of(match.start())}"
                open_paren = match.end() - 1
                args = source.string_args(open_paren, 2)
                if args is None:
                    self.skip("matcher calls", "value or input is not a string literal", origin)
                    continue
                outcome = _EXPECT.match(source.code, source.closing(open_paren))
                expected = None if outcome is None else outcome[1] == "BeTrue"
                matcher = {"matcher": names[match[1]], "value": args[0]}
                self.matchers.append(MatcherCase(origin, (matcher,), args[1], expected))

    def matchers_from_table(self) -> None:
        names = {k.lower(): v for k, v in _constants(self.tree).items()}
        for path in _files(self.tree, "core/matching", "_test.go"):
            source = self.go(path)
            if source is None or "toMatch:" not in source.code:
                continue
            starts = [m.start() for m in re.finditer(r"\bname:", source.code)]
            for start, end in zip(starts, [*starts[1:], len(source.code)], strict=True):
                origin = f"{source.path}:{source.line_of(start)}"
                case = _table_entry(source, start, end, names)
                if isinstance(case, str):
                    self.skip("matcher table", case, origin)
                else:
                    matchers, input_, expected = case
                    self.matchers.append(MatcherCase(origin, matchers, input_, expected))


def _constants(tree: Path) -> dict[str, str]:
    """The matcher-name constants (``Json`` -> ``json``) of ``core/matching/matchers``."""
    found: dict[str, str] = {}
    for path in _files(tree, "core/matching/matchers", ".go"):
        if not path.name.endswith("_test.go"):
            found.update((m[1], m[2]) for m in _MATCHER_CONST.finditer(_read(path) or ""))
    return found


def _go_value(source: GoFile, pos: int) -> tuple[bool, Any]:
    """The value written at ``pos``: a string literal, a number, ``true``/``false``, a ``[]string{...}``."""
    lit = source.literal_at(pos)
    if lit is not None:
        return True, lit.value
    rest = source.code[pos:].lstrip()
    number = re.match(r"-?\d+(\.\d+)?\b", rest)
    if number:
        return True, json.loads(number[0])
    word = re.match(r"(true|false|nil)\b", rest)
    if word:
        return True, {"true": True, "false": False, "nil": None}[word[1]]
    if rest.startswith("[]string{"):
        start = pos + (len(source.code[pos:]) - len(rest)) + len("[]string")
        return True, [lit.value for lit in source.literals_in(start, source.closing(start))]
    return False, None


def _table_entry(
    source: GoFile, start: int, end: int, names: dict[str, str]
) -> tuple[tuple[Any, ...], str, bool | None] | str:
    """One ``fieldMatcherTests`` entry as (matchers, input, expected), or the reason it is not usable."""
    code = source.code[start:end]
    to_match = re.search(r"\btoMatch:", code)
    if to_match is None:
        return "no toMatch"
    ok, input_ = _go_value(source, start + to_match.end())
    if not ok or not isinstance(input_, str):
        return "toMatch is not a string literal"
    expected_match = re.search(r"\bequals:\s*(BeTrue|BeFalse)", code)
    expected = None if expected_match is None else expected_match[1] == "BeTrue"
    if re.search(r"\bmatchers:\s*nil\b", code):
        return (), input_, expected
    objects: list[dict[str, Any]] = []
    chained = "DoMatch:" in code
    for item in re.finditer(r"\{([^{}]*?\bValue:)", code):
        body_start = start + item.start()
        body_end = source.closing(body_start)
        segment = source.code[body_start:body_end]
        value_at = segment.find("Value:")
        ok, value = _go_value(source, body_start + value_at + len("Value:"))
        if not ok:
            return "a matcher value that is not a literal"
        name = ""
        matcher = re.search(r"\bMatcher:\s*", segment[:value_at])
        if matcher is not None:
            written = source.literal_at(body_start + matcher.end())
            constant = re.match(r"(?:matchers\.)?(\w+)", segment[matcher.end() :])
            if written is not None:
                name = written.value
            elif constant is not None and constant[1].lower() in names:
                name = names[constant[1].lower()]
            else:
                return "a matcher name that is neither a literal nor a known constant"
        objects.append({"matcher": name, "value": value})
    if not objects:
        return "no matcher objects"
    if chained:
        chain = objects[-1]
        for outer in reversed(objects[:-1]):
            chain = {**outer, "doMatch": chain}
        return (chain,), input_, expected
    return tuple(objects), input_, expected


def _request_of(source: GoFile, start: int, end: int) -> tuple[RequestSpec, tuple[tuple[str, str], ...]]:
    """The request fields and state a test function sets (``Body: "..."``, ``Query: map...{...}``)."""
    fields: dict[str, str] = {}
    maps: dict[str, tuple[tuple[str, str], ...]] = {}
    for details in re.finditer(r"RequestDetails\s*\{", source.code[start:end]):
        region_start = start + details.end() - 1
        region_end = source.closing(region_start)
        for key in REQUEST_KEYS:
            match = re.search(rf"\b{key}:\s*", source.code[region_start:region_end])
            lit = None if match is None else source.literal_at(region_start + match.end())
            if lit is not None:
                fields.setdefault(key, lit.value)
        for key in ("Query", "Headers"):
            pattern = rf"\b{key}:\s*(?:map\[string\]\[\]string|url\.Values|http\.Header)\s*\{{"
            match = re.search(pattern, source.code[region_start:region_end])
            if match and key not in maps:
                brace = region_start + match.end() - 1
                region = source.text[brace : source.closing(brace)]
                maps[key] = tuple(
                    (k, v)
                    for k, values in re.findall(r'"([^"]*)"\s*:\s*\{([^}]*)\}', region)
                    for v in re.findall(r'"([^"]*)"', values)
                )
    state: tuple[tuple[str, str], ...] = ()
    match = re.search(r"map\[string\]string\s*\{", source.code[start:end])
    if match:
        brace = start + match.end() - 1
        state = tuple(re.findall(r'"([^"]*)"\s*:\s*"([^"]*)"', source.text[brace : source.closing(brace)]))
    request = RequestSpec(
        method=fields.get("Method", ""),
        path=fields.get("Path", ""),
        destination=fields.get("Destination", ""),
        query=maps.get("Query", ()),
        headers=maps.get("Headers", ()),
        body=fields.get("Body"),
    )
    return request, state


def mine(tree: Path) -> Mined:
    """Every input the harness takes from the Hoverfly tree at ``tree``."""
    miner = _Miner(tree)
    miner.simulations_from_files()
    miner.simulations_from_docs()
    miner.simulations_from_go()
    miner.templates_from_go()
    miner.templates_from_docs()
    miner.matchers_from_calls()
    miner.matchers_from_table()
    return Mined(
        simulations=tuple(miner.simulations),
        templates=tuple(miner.templates),
        matchers=tuple(miner.matchers),
        csv_sources=tuple(sorted(miner.csv.items())),
        skipped=tuple(miner.skipped),
    )
