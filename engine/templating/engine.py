"""The templating entry points: ``TemplateEngine`` compiles templates and variables; ``Template.render``
never raises (a failure serves the template unrendered, as Hoverfly does).

The engine also holds what renders share: the clock, the random source, a lazily created Faker,
and small bounded caches of compiled JSONPath, XPath, regex and dynamically parsed ``csv`` keys.

Making an engine is cheap: the parser, the compiler and the helpers (with the JSONPath, XPath
and Faker libraries they use) are imported by the first template or variable compiled, so a worker
whose simulation has no templated response never loads them.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from simproxy.engine.errors import SimulationError
from simproxy.engine.templating.context import RenderContext, RenderResult, RenderState, RequestView, RootData
from simproxy.engine.templating.evaluate import Call, Scope
from simproxy.engine.templating.values import GoFunc, GoInt, RenderFailure

if TYPE_CHECKING:
    from faker import Faker

    from simproxy.engine.gocompat.jsonpath_k8s import JsonPath
    from simproxy.engine.templating.compiler import Usage
    from simproxy.engine.templating.direct import DirectText, StateText
    from simproxy.engine.templating.helpers_time import NowTexts
    from simproxy.engine.templating.render import Program

log = logging.getLogger(__name__)

_CACHE_SIZE = 512
_COMPAT = "-compat hoverfly loads it as Hoverfly does:"
_SERVED_AS_WRITTEN = "every render fails and the template is served as it is written"


class _Cache:
    """A bounded memo: cleared when full, which is enough for the handful of queries a simulation uses."""

    __slots__ = ("items",)

    def __init__(self) -> None:
        self.items: dict[str, Any] = {}

    def get(self, key: str, make: Callable[[str], Any]) -> Any:
        try:
            return self.items[key]
        except KeyError:
            pass
        value = make(key)
        if len(self.items) >= _CACHE_SIZE:
            self.items.clear()
        self.items[key] = value
        return value


def _jsonpath(query: str) -> JsonPath | None:
    from simproxy.engine.gocompat.jsonpath_k8s import compile_jsonpath, prepare

    try:
        return compile_jsonpath(prepare(query))
    except ValueError:
        return None


def _xpath(expr: str) -> Any:
    from simproxy.engine.gocompat.xpath import check_xpath

    try:
        return check_xpath(expr, ".value")
    except SimulationError as exc:
        return exc


@dataclass(frozen=True, slots=True)
class Template:
    uses_state: bool
    """Reads ``State.*`` (or may: ``this`` at the root, ``lookup``, a computed ``csv`` key)."""
    uses_csv: bool
    """Calls any csv helper."""
    writes_csv: bool
    """Calls ``csvAddRow``, ``csvDeleteRows`` or a ``csvSqlCommand`` that is not a literal SELECT."""
    uses_journal: bool
    source: str = field(repr=False)
    program: Program = field(repr=False)
    engine: TemplateEngine = field(repr=False)
    direct: DirectText | None = field(default=None, repr=False)
    """The template as text and request getters when it prints nothing but request fields
    (engine/templating/direct.py): the same text as ``render`` without its machinery."""
    constant: RenderResult | None = field(default=None, repr=False)
    """What a template of text alone renders to (a ``transitionsState`` value without a mustache),
    given without a render when no variable is computed alongside."""
    stated: StateText | None = field(default=None, repr=False)
    """The template as text, request getters and state keys when it prints those alone
    (``{{ State.user }}``): the same text as ``render`` on the same state."""

    def render(self, ctx: RenderContext) -> RenderResult:
        """Render against ``ctx``; any failure gives ``ok=False`` and the template text unchanged."""
        constant = self.constant
        if constant is not None and not ctx.variables.entries:
            return constant
        engine = self.engine
        rt = RenderState(engine, ctx.request, ctx.csv, ctx.journal, ctx.hoverfly)
        try:
            variables = ctx.variables.evaluate(rt)
            state = ctx.state if isinstance(ctx.state, dict) else dict(ctx.state)
            literals = ctx.literals if isinstance(ctx.literals, dict) else dict(ctx.literals)
            root = RootData(
                RequestView(ctx.request, engine.body_func),
                state,
                literals,
                variables,
                rt.kvs,
                rt.internal,
                engine.current_date_time,
            )
            rt.root = root
            text = self.program.render(Scope(rt, root))
        except (RenderFailure, RecursionError) as exc:
            log.warning("template served unrendered: %s", exc)
            return RenderResult(self.source, False, None, ())
        except Exception:
            log.exception("template served unrendered after an unexpected error")
            return RenderResult(self.source, False, None, ())
        status = rt.internal.get("statusCode")
        return RenderResult(text, True, None if status is None else int(status), tuple(rt.headers))


@dataclass(frozen=True, slots=True)
class _Variable:
    name: str
    function: str
    arguments: tuple[Any, ...]
    """Each string argument as (Program of ``{{arg}}``, the text) or the text when that does not
    parse; other values as they are (``requestBody`` keeps its two strings as they are)."""
    callable: bool = True
    """False when Hoverfly's reflection can never call the helper (it takes the options, a bool or
    an array): the variable is always unset."""


@dataclass(frozen=True, slots=True)
class Variables:
    """Hoverfly's variables, computed again at every render (``Vars.<name>``)."""

    entries: tuple[_Variable, ...] = ()
    uses_csv: bool = False
    writes_csv: bool = False
    uses_journal: bool = False

    def evaluate(self, rt: RenderState) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for entry in self.entries:
            if not entry.callable:
                continue
            try:
                if entry.function == "requestBody":
                    from simproxy.engine.templating.helpers_body import fetch_from_request

                    query_type, query = entry.arguments[0], entry.arguments[1]
                    if not isinstance(query_type, str) or not isinstance(query, str):
                        raise RenderFailure("requestBody variables take two strings")
                    values[entry.name] = fetch_from_request(rt, query_type, query)
                else:
                    values[entry.name] = _call_variable(rt, entry)
            except Exception as exc:  # Hoverfly recovers the panic and leaves the variable unset
                log.warning("variable %s left unset: %s", entry.name, exc)
                if entry.function == "requestBody":
                    values[entry.name] = None
        return values


def _argument_text(rt: RenderState, argument: Any) -> str:
    """A string argument rendered as ``{{arg}}`` against a root holding only the request; the text
    itself when that does not parse or fails."""
    if isinstance(argument, str):
        return argument
    program, literal = argument
    engine = rt.services
    root = RootData(RequestView(rt.request, engine.body_func), {}, {}, {}, {}, {}, engine.current_date_time)
    saved, rt.root = rt.root, root
    try:
        text: str = program.render(Scope(rt, root))
    except Exception:
        text = literal
    finally:
        rt.root = saved
    return text


def _call_variable(rt: RenderState, entry: _Variable) -> Any:
    """The helper called with one argument per Go parameter, as Hoverfly's reflection does."""
    from simproxy.engine.templating.registry import HELPERS

    spec = HELPERS[entry.function]
    if spec.options or any(kind not in ("str", "int", "float") for kind in spec.types):
        raise RenderFailure(f"{entry.function} cannot be called as a variable")
    count = len(entry.arguments) if spec.variadic else len(spec.types)
    if len(entry.arguments) < count:
        raise RenderFailure(f"{entry.function} needs {count} arguments")
    args: list[Any] = []
    for i, argument in enumerate(entry.arguments[:count]):
        kind = "str" if spec.variadic else spec.types[i]
        if kind == "str":
            if not isinstance(argument, str | tuple):
                raise RenderFailure(f"argument {i + 1} is not a string")
            args.append(_argument_text(rt, argument))
        elif isinstance(argument, bool) or not isinstance(argument, int | float):
            raise RenderFailure(f"argument {i + 1} is not a number")
        else:
            args.append(GoInt(int(argument)) if kind == "int" else float(argument))
    return spec.run(Call(Scope(rt, None), entry.function, args, {}), *args)


def _request_body(call: Call, query_type: str, query: str) -> Any:
    """``Request.Body``: the body helper, imported with the helpers on its first call."""
    from simproxy.engine.templating.helpers_body import request_body

    return request_body(call, query_type, query)


def _system_now() -> datetime:
    return datetime.now(UTC)


class TemplateEngine:
    def __init__(
        self,
        *,
        now: Callable[[], datetime] | None = None,
        rng: random.Random | None = None,
        lenient: bool = False,
        specialise: bool = True,
    ) -> None:
        self.lenient = lenient
        """Whether a template Hoverfly stores though it cannot run as written (it does not parse, or
        calls a helper that does not exist or with arguments that cannot work) compiles to what
        Hoverfly then serves (``-compat hoverfly``'s writes, and any stored document), or is refused
        naming what is wrong and what ``-compat hoverfly`` would do."""
        self.specialise = specialise
        """Compile to ``engine.templating.fast``'s specialised nodes where they apply; off, only the
        general nodes, which the specialised ones are tested against."""
        self.now: Callable[[], datetime] = now or _system_now
        self.system_clock = now is None
        """No clock was given: ``now`` reads the system's in nanoseconds, without a datetime."""
        self._now_texts: NowTexts | None = None
        self.rng = rng if rng is not None else random.Random()
        self._faker: Faker | None = None
        self._jsonpaths = _Cache()
        self._xpaths = _Cache()
        self._regexes = _Cache()
        self._dynamic = _Cache()
        self.body_func = GoFunc(
            ("str", "str"), True, _request_body, "func(string, string, *raymond.Options) interface {}"
        )
        self.current_date_time = GoFunc(
            ("str", "str", "str"), False, lambda _call, a, b, c: f"{a} {b} {c}", "func(string, string, string) string"
        )

    @property
    def now_texts(self) -> NowTexts:
        """``now``'s texts of the current second (engine/templating/helpers_time.py), made when first used."""
        if self._now_texts is None:
            from simproxy.engine.templating.helpers_time import NowTexts

            self._now_texts = NowTexts()
        return self._now_texts

    # -- compiling --------------------------------------------------------------------------

    def compile(self, text: str, where: str) -> Template:
        """Parse and check a template; ``SimulationError(where, ...)`` when it cannot work (unless
        ``lenient``: then as Hoverfly runs it). A template nested deeper than Python's stack allows
        is refused either way."""
        from simproxy.engine.templating.compiler import CompileError, Compiler
        from simproxy.engine.templating.direct import direct_text, state_text
        from simproxy.engine.templating.parser import NestedTooDeeply, TemplateSyntaxError, parse
        from simproxy.engine.templating.registry import HELPERS
        from simproxy.engine.templating.render import Program, Unparsed

        compiler = Compiler(HELPERS, strict=not self.lenient, specialise=self.specialise)
        try:
            program = compiler.program(parse(text))
        except NestedTooDeeply as exc:  # Hoverfly runs it; simproxy cannot
            raise SimulationError(where, f"template parse error: {exc}") from exc
        except TemplateSyntaxError as exc:
            if self.lenient:  # Hoverfly keeps no template, and every render of it fails
                return Template(False, False, False, False, text, Program((Unparsed(str(exc)),), None), self)
            raise SimulationError(where, f"template parse error: {exc} ({_COMPAT} {_SERVED_AS_WRITTEN})") from exc
        except CompileError as exc:
            raise SimulationError(where, f"template error: {exc} ({_COMPAT} {exc.behaviour})") from exc
        except RecursionError:
            raise SimulationError(where, "template error: the template is nested too deeply") from None
        assert program is not None
        compiler.finish()
        usage = compiler.usage
        alone = program.text_alone()
        constant = None if alone is None else RenderResult(alone, True, None, ())
        direct = direct_text(program)
        stated = state_text(program) if direct is None and usage.state else None
        return Template(
            usage.state,
            usage.csv,
            usage.writes_csv,
            usage.journal,
            text,
            program,
            self,
            direct,
            constant,
            stated,
        )

    def compile_variables(self, variables: Sequence[Mapping[str, Any]], where: str) -> Variables:
        """Hoverfly's ``{name, function, arguments}`` variables; an unknown function is refused."""
        from simproxy.engine.templating.compiler import Usage
        from simproxy.engine.templating.registry import (
            CSV_HELPERS,
            CSV_WRITERS,
            HELPERS,
            JOURNAL_HELPERS,
            RAYMOND_BUILTINS,
        )

        entries = []
        usage = Usage()
        for variable in variables:
            name, function = variable.get("name"), variable.get("function")
            if not isinstance(function, str) or function not in HELPERS or function in RAYMOND_BUILTINS:
                raise SimulationError(where, f"function {function} not supported for custom variable {name}")
            arguments = variable.get("arguments")
            arguments = arguments if isinstance(arguments, list) else []
            if function == "requestBody":  # its two arguments are used as they are
                compiled = tuple(arguments)
            else:
                compiled = tuple(self._variable_argument(argument, usage) for argument in arguments)
            spec = HELPERS[function]
            usable = function == "requestBody" or not (
                spec.options or any(kind not in ("str", "int", "float") for kind in spec.types)
            )
            if not usable:
                log.warning("variable %s will stay unset: %s cannot be called as a variable", name, function)
            entries.append(_Variable(str(name), function, compiled, usable))
            usage.csv = usage.csv or function in CSV_HELPERS
            usage.writes_csv = usage.writes_csv or function in CSV_WRITERS
            usage.journal = usage.journal or function in JOURNAL_HELPERS
        return Variables(tuple(entries), usage.csv, usage.writes_csv, usage.journal)

    def _variable_argument(self, argument: Any, usage: Usage) -> Any:
        if not isinstance(argument, str):
            return argument
        from simproxy.engine.templating.compiler import Compiler
        from simproxy.engine.templating.parser import TemplateSyntaxError, parse
        from simproxy.engine.templating.registry import HELPERS

        compiler = Compiler(HELPERS, strict=False)
        try:
            program = compiler.program(parse("{{" + argument + "}}"))
        except (TemplateSyntaxError, RecursionError):
            return argument
        usage.csv = usage.csv or compiler.usage.csv
        usage.writes_csv = usage.writes_csv or compiler.usage.writes_csv
        usage.journal = usage.journal or compiler.usage.journal
        return (program, argument)

    # -- services for helpers -------------------------------------------------------------------

    def faker(self) -> Faker:
        """The engine's Faker, made (and the ``faker`` package imported) on the first call."""
        if self._faker is None:
            from faker import Faker

            fake = Faker("en_US")
            fake.seed_instance(self.rng.getrandbits(64))
            self._faker = fake
        return self._faker

    def jsonpath(self, query: str) -> JsonPath | None:
        return self._jsonpaths.get(query, _jsonpath)  # type: ignore[no-any-return]

    def xpath(self, expr: str) -> Any:
        compiled = self._xpaths.get(expr, _xpath)
        if isinstance(compiled, SimulationError):
            raise RenderFailure(f"invalid XPath {expr!r} (Hoverfly crashes): {compiled.message}")
        return compiled

    def regex(self, pattern: str, make: Callable[[str], Any]) -> Any:
        compiled = self._regexes.get(pattern, lambda p: _try(make, p))
        if isinstance(compiled, Exception):
            raise compiled
        return compiled

    def dynamic_value(self, scope: Scope, value: str) -> str:
        """Hoverfly's ``csv`` key: ``{{ value }}`` rendered against the current context when that
        gives text; helpers may not run in it (the value can come from the request)."""
        program = self._dynamic.get(value, _parse_dynamic)
        if program is None:
            return value
        try:
            inner = Scope(scope.rt, scope.ctx[-1])
            text = program.render(inner)
        except Exception:
            return value
        return text or value


def _parse_dynamic(value: str) -> Program | None:
    from simproxy.engine.templating.compiler import Compiler
    from simproxy.engine.templating.parser import TemplateSyntaxError, parse
    from simproxy.engine.templating.registry import HELPERS

    try:
        return Compiler(HELPERS, strict=False, allow_helpers=False).program(parse("{{ " + value + " }}"))
    except (TemplateSyntaxError, RecursionError):
        return None


def _try(make: Callable[[str], Any], key: str) -> Any:
    try:
        return make(key)
    except Exception as exc:
        return exc


__all__ = ("Template", "TemplateEngine", "Variables")
