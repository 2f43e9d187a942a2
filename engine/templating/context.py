"""What a render sees and returns: the request and root structs, the render context and result.

The root object has Hoverfly's ``TemplatingData`` fields (``Request``, ``State``,
``CurrentDateTime``, ``Literals``, ``Vars``, ``Kvs``, ``InternalVars``); ``Request`` has the fields
of Hoverfly's ``Request`` struct. Both are Go structs: members are found by their capitalised name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Protocol

from simproxy.engine.templating.csv_store import CsvTables
from simproxy.engine.templating.values import MISSING, GoFunc, GoStruct, StrList, StructFields
from simproxy.engine.wire.hot import hot_value
from simproxy.engine.wire.request import RequestDetails


class JournalEntryView(Protocol):
    @property
    def request_body(self) -> str: ...

    @property
    def response_body(self) -> str: ...


class JournalLookup(Protocol):
    def lookup(self, index: str, key: str) -> JournalEntryView | None: ...


class VariableValues(Protocol):
    """A simulation's variables (engine/templating/engine.py's ``Variables``), as a render reads them."""

    @property
    def entries(self) -> tuple[Any, ...]:
        """The variables; none: nothing to compute."""
        ...

    def evaluate(self, rt: RenderState) -> dict[str, Any]:
        """Each variable's value for this render (``Vars.<name>``)."""
        ...


class NoJournal:
    """A journal with no indexes: ``journal`` prints its own call, ``hasJournalKey`` is false."""

    def lookup(self, index: str, key: str) -> JournalEntryView | None:
        return None


@dataclass(slots=True)
class RenderContext:
    request: RequestDetails
    state: Mapping[str, str]
    literals: Mapping[str, Any]
    """Literal name to its JSON value."""
    variables: VariableValues
    csv: CsvTables
    """Mutated in place by the write helpers."""
    journal: JournalLookup
    hoverfly: bool = False
    """Call helpers as Hoverfly v1.12.10's raymond does where the spec dialect does better on
    purpose (``-compat hoverfly``): ``concat`` then fails the render, as there."""


@hot_value
class RenderResult:
    text: str
    """The rendered text, or the original template text when the render failed."""
    ok: bool
    """False: Hoverfly serves the template unrendered and applies no status or header change."""
    status: int | None
    """The last valid ``setStatusCode`` (100-599), only when ok."""
    headers: tuple[tuple[str, str], ...]
    """``setHeader`` calls in order, only when ok."""


REQUEST_TEXTS: Mapping[str, str] = MappingProxyType({"Method": "method", "Scheme": "scheme", "Host": "destination"})
"""The ``Request`` fields that are strings, and the ``RequestDetails`` attribute each reads."""
REQUEST_MAPS: Mapping[str, str] = MappingProxyType({"QueryParam": "query", "Header": "headers", "FormData": "form"})
"""The ``Request`` fields that are maps of ``[]string``, and the ``RequestDetails`` attribute each reads."""


def _slices(values: Mapping[str, list[str]]) -> dict[str, StrList]:
    return {name: StrList(items) for name, items in values.items()}


class _RequestFields(StructFields):
    """The request view's fields: ``Path`` and the maps made from the request when first read."""

    __slots__ = ("details",)
    details: RequestDetails

    def __missing__(self, name: str) -> Any:
        details = self.details
        if name == "Path":
            value: Any = StrList(details.path.split("/")[1:])
        else:
            attribute = REQUEST_MAPS.get(name)
            if attribute is None:
                return MISSING
            value = _slices(getattr(details, attribute))
        self[name] = value
        return value


class RequestView(GoStruct):
    """Hoverfly's templating ``Request``: values are Go ``[]string``; ``Body`` is a function."""

    __slots__ = ("details",)
    FIELDS = ("QueryParam", "Header", "Path", "Scheme", "Body", "FormData", "Method", "Host")

    def __init__(self, details: RequestDetails, body: GoFunc) -> None:
        # the REQUEST_TEXTS fields, spelled out (a view is made per render; deriving them from the
        # map cost half a microsecond more): tests/engine/templating/test_direct.py holds the direct
        # path, which reads REQUEST_TEXTS, to the same text
        fields = _RequestFields(Method=details.method, Scheme=details.scheme, Host=details.destination, Body=body)
        fields.details = details
        self.fields = fields
        self.details = details

    def debug_fields(self) -> list[Any]:
        fields = super().debug_fields()
        return [*fields[:6], self.details.body, *fields[6:]]


class RootData(GoStruct):
    """Hoverfly's ``TemplatingData``, the root context of every render."""

    __slots__ = ()
    FIELDS = ("Request", "State", "CurrentDateTime", "Literals", "Vars", "Kvs", "InternalVars")

    def __init__(
        self,
        request: RequestView,
        state: dict[str, str],
        literals: dict[str, Any],
        vars_: dict[str, Any],
        kvs: dict[str, Any],
        internal: dict[str, Any],
        current_date_time: GoFunc,
    ) -> None:
        self.fields = StructFields(
            Request=request,
            State=state,
            CurrentDateTime=current_date_time,
            Literals=literals,
            Vars=vars_,
            Kvs=kvs,
            InternalVars=internal,
        )


UNREAD = object()
"""``RenderState.body_json`` before the first body query of the render."""
NOT_JSON = object()
"""``RenderState.body_json`` of a body that is not JSON."""


class RenderState:
    """The state of one render that helpers reach through their call."""

    __slots__ = (
        "body_json",
        "body_xml",
        "body_xml_json",
        "csv",
        "headers",
        "hoverfly",
        "internal",
        "journal",
        "kvs",
        "request",
        "root",
        "services",
    )

    def __init__(
        self, services: Any, request: RequestDetails, csv: CsvTables, journal: JournalLookup, hoverfly: bool = False
    ) -> None:
        self.services = services
        self.request = request
        self.csv = csv
        self.journal = journal
        self.hoverfly = hoverfly
        """``RenderContext.hoverfly``."""
        self.kvs: dict[str, Any] = {}
        self.internal: dict[str, Any] = {}
        self.headers: list[tuple[str, str]] = []
        self.root: Any = None
        self.body_json: Any = UNREAD
        """The request body as Go's decoder reads it, once a jsonpath query has read it."""
        self.body_xml: Any = UNREAD
        """The request body read as XML (or None), once an xpath query has read it."""
        self.body_xml_json: Any = UNREAD
        """The request body as goxml2json decodes it, once a jsonpathfromxml query has read it."""
