"""Log lines as logrus's text formatter writes them: which values it quotes."""

from __future__ import annotations

import pytest

from simproxy.engine.journal.logs import text_line


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("plain-value_1.2/x@y^z+w", "plain-value_1.2/x@y^z+w"),
        ("", ""),  # logrus leaves an empty value unquoted
        ("two words", '"two words"'),
        ("line\n", '"line\\n"'),  # a trailing line break is quoted too
        ('say "hi"', '"say \\"hi\\""'),
        ("é", '"é"'),
    ],
)
def test_a_value_is_quoted_unless_every_character_is_one_logrus_leaves_plain(value: str, written: str) -> None:
    entry = {"level": "info", "msg": "m", "time": "2026-11-26T00:00:00Z", "field": value}
    assert text_line(entry, colour=False) == f'time="2026-11-26T00:00:00Z" level=info msg=m field={written}\n'
    assert text_line(entry, colour=False, quotes=False).endswith(f" field={value}\n")
