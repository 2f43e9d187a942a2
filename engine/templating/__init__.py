"""Response templating compatible with Hoverfly 1.12.10 (its fork of the raymond Handlebars engine).

``TemplateEngine.compile`` turns a template into a ``Template`` once; ``Template.render`` fills it
for one request and never raises. The helpers, CSV data sources and journal queries are Hoverfly's.
"""

from simproxy.engine.templating.context import JournalEntryView, JournalLookup, NoJournal, RenderContext, RenderResult
from simproxy.engine.templating.csv_store import CsvMutation, CsvTables, format_csv, parse_csv
from simproxy.engine.templating.engine import Template, TemplateEngine, Variables

__all__ = (
    "CsvMutation",
    "CsvTables",
    "JournalEntryView",
    "JournalLookup",
    "NoJournal",
    "RenderContext",
    "RenderResult",
    "Template",
    "TemplateEngine",
    "Variables",
    "format_csv",
    "parse_csv",
)
