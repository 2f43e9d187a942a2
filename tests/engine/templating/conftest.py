"""Rendering with a fixed clock and a seeded random source, so every test is deterministic."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from simproxy.engine.templating import (
    CsvTables,
    JournalLookup,
    NoJournal,
    RenderContext,
    RenderResult,
    TemplateEngine,
    Variables,
    parse_csv,
)
from simproxy.engine.wire.request import RequestDetails
from tests.engine.conftest import request

NOW = datetime(2018, 1, 1, tzinfo=UTC)
"""The injected clock: 2018-01-01T00:00:00Z, Unix 1514764800 (Hoverfly's own test date)."""


def engine(seed: int = 1, now: datetime = NOW, *, lenient: bool = False) -> TemplateEngine:
    return TemplateEngine(now=lambda: now, rng=random.Random(seed), lenient=lenient)


def tables(**sources: str) -> CsvTables:
    """CSV sources given as text, e.g. ``tables(pets="id,name\\n1,Rex\\n")``."""
    return CsvTables({name: parse_csv(text) for name, text in sources.items()})


@dataclass(frozen=True)
class Entry:
    request_body: str
    response_body: str


class Journal:
    """A journal index: (index name, key) -> entry."""

    def __init__(self, entries: Mapping[tuple[str, str], Entry]) -> None:
        self.entries = dict(entries)

    def lookup(self, index: str, key: str) -> Entry | None:
        return self.entries.get((index, key))


def context(
    *,
    req: RequestDetails | None = None,
    state: Mapping[str, str] | None = None,
    literals: Mapping[str, Any] | None = None,
    variables: Sequence[Mapping[str, Any]] = (),
    csv: CsvTables | None = None,
    journal: JournalLookup | None = None,
    using: TemplateEngine | None = None,
    hoverfly: bool = False,
) -> RenderContext:
    eng = using or engine()
    return RenderContext(
        request=req or request(),
        state=state or {},
        literals=literals or {},
        variables=eng.compile_variables(variables, "data.variables") if variables else Variables(),
        csv=csv if csv is not None else CsvTables({}),
        journal=journal or NoJournal(),
        hoverfly=hoverfly,
    )


def render(template: str, *, using: TemplateEngine | None = None, **kwargs: Any) -> RenderResult:
    eng = using or engine()
    return eng.compile(template, "data.pairs[0].response.body").render(context(using=eng, **kwargs))


def text(template: str, **kwargs: Any) -> str:
    """The rendered text of a render that must succeed."""
    result = render(template, **kwargs)
    assert result.ok, f"render failed for {template!r}"
    return result.text


def fails(template: str, **kwargs: Any) -> bool:
    """The render failed: the template text comes back unchanged and nothing else applies."""
    result = render(template, **kwargs)
    if result.ok:
        return False
    assert result.text == template
    assert result.status is None
    assert result.headers == ()
    return True
