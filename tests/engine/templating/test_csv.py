"""CSV sources: Go's csv reading and writing, the csv helpers, the mini-SQL and replayable writes."""

from __future__ import annotations

import pytest

from simproxy.engine.templating import CsvMutation, CsvTables, format_csv, parse_csv
from tests.engine.templating.conftest import engine, fails, request, tables, text

CSV1 = "id,name,marks\n1,Test1,55\n2,Test2,56\n*,Dummy,ABSENT"
CSV2 = "id,name,marks\n1,Test1,55\n2,Test2,56\n5553686208582,Test3,66\n"


def sources() -> CsvTables:
    return tables(**{"test-csv1": CSV1, "test-csv2": CSV2})


# -- Go's encoding/csv ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "rows"),
    [
        ("a,b\n1,2\n", [["a", "b"], ["1", "2"]]),
        ("a,b\r\n1,2", [["a", "b"], ["1", "2"]]),
        ('a,"b,c"\n"x""y","multi\nline"\n', [["a", "b,c"], ['x"y', "multi\nline"]]),
        ("a\n\n\nb\n", [["a"], ["b"]]),
        ("a, b\n", [["a", " b"]]),
        ("a,\n", [["a", ""]]),
        ("x\r", [["x"]]),
        ("", []),
    ],
)
def test_parse_csv(data: str, rows: list[list[str]]) -> None:
    assert parse_csv(data) == rows


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("a,b\n1\n", "record on line 2: wrong number of fields"),
        ("a,b\n\n1,2,3\n", "record on line 3: wrong number of fields"),
        ('a,b"c\n', 'parse error on line 1, column 4: bare " in non-quoted-field'),
        ('"ab"c,d\n', 'parse error on line 1, column 4: extraneous or missing " in quoted-field'),
        ('a,"b\n', 'parse error on line 1, column 6: extraneous or missing " in quoted-field'),
        ('x\n"a\nb', 'record on line 2; parse error on line 3, column 2: extraneous or missing " in quoted-field'),
    ],
)
def test_parse_csv_errors_carry_go_messages(data: str, message: str) -> None:
    with pytest.raises(ValueError) as raised:
        parse_csv(data)
    assert str(raised.value) == message


def test_format_csv_quotes_only_when_needed() -> None:
    rows = [["plain", "with,comma", 'say "hi"', "line\nbreak", " lead", "", "\\.", "tail "]]
    assert format_csv(rows) == 'plain,"with,comma","say ""hi""","line\nbreak"," lead",,"\\.",tail \n'
    assert parse_csv(format_csv(rows)) == rows


# -- csv -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{{csv 'test-csv1' 'Id' '2' 'Marks'}}", "56"),
        ("{{csv 'test-csv1' 'NAME' 'test2' 'id'}}", "2"),  # columns and values case-insensitive
        ("{{csv 'test-csv1' 'Id' '51' 'Marks'}}", "ABSENT"),  # the * row is the fallback
        ("{{csv 'test-csv2' 'Id' '51' 'Marks'}}", "{{ csv test-csv2 Id 51 Marks }}"),
        ("{{csv 'test-csv3' 'Id' '55' 'Marks'}}", "{{ csv test-csv3 Id 55 Marks }}"),
        ("{{csv 'test-csv1' 'nope' '1' 'Marks'}}", "{{ csv test-csv1 nope 1 Marks }}"),
        ("{{csv 'test-csv1' 'id' 2 'marks'}}", "56"),
    ],
)
def test_csv_lookup(template: str, expected: str) -> None:
    assert text(template, csv=sources()) == expected


def test_csv_key_is_evaluated_as_a_template_first() -> None:
    assert text("{{csv 'test-csv1' 'id' 'Request.Path.[1]' 'name'}}", req=request("/x/2"), csv=sources()) == "Test2"


def test_csv_key_from_the_request_and_from_each() -> None:
    req = request(query="Ids=1&Ids=2")
    template = "{{#each Request.QueryParam.Ids}}{{csv 'test-csv2' 'Id' this 'Marks'}} | {{/each}}"
    assert text(template, req=req, csv=sources()) == "55 | 56 | "


def test_csv_key_with_a_large_integer_from_the_body() -> None:
    req = request(body='{"ids": [1, 5553686208582]}')
    template = "{{#each (Request.Body 'jsonpath' '$.ids')}}{{csv 'test-csv2' 'Id' this 'Marks'}} | {{/each}}"
    assert text(template, req=req, csv=sources()) == "55 | 66 | "


def test_csv_key_may_not_run_helpers() -> None:
    # Hoverfly would run csvSqlCommand here: a request could delete rows. The key is used as written.
    csv = sources()
    req = request(query="id=csvSqlCommand 'DELETE FROM test-csv1'")
    assert text("{{csv 'test-csv1' 'id' Request.QueryParam.id 'name'}}", req=req, csv=csv) == "Dummy"
    assert len(csv.tables["test-csv1"]) == 4


def test_csv_miss_inside_each_prints_the_call() -> None:
    req = request(body='{"ids": [1, 2]}')
    template = (
        "{{#each (Request.Body 'jsonpath' '$.ids')}} {{@index}} : Product Name with productId {{this}} is "
        "{{csv 'products' 'productId' this 'productName'}} {{/each}}"
    )
    assert text(template, req=req) == (
        " 0 : Product Name with productId 1 is {{ csv products productId 1 productName }}  "
        "1 : Product Name with productId 2 is {{ csv products productId 2 productName }} "
    )


def test_last_star_row_is_the_fallback() -> None:
    csv = tables(t="k,v\n*,first\na,x\n*,last\n")
    assert text("{{csv 't' 'k' 'zzz' 'v'}}", csv=csv) == "last"


# -- rows, maps and counts ---------------------------------------------------------------------


def test_csv_matching_rows_is_case_sensitive() -> None:
    csv = sources()
    assert text("{{#each (csvMatchingRows 'test-csv1' 'id' '2')}}{{this.name}}{{/each}}", csv=csv) == "Test2"
    assert text("[{{#each (csvMatchingRows 'test-csv1' 'ID' '2')}}x{{/each}}]", csv=csv) == "[]"
    assert text("[{{#each (csvMatchingRows 'test-csv1' 'name' 'test2')}}x{{/each}}]", csv=csv) == "[]"
    assert text("[{{#each (csvMatchingRows 'test-csv99' 'id' '2')}}x{{/each}}]", csv=csv) == "[]"


def test_csv_as_array_includes_the_header() -> None:
    template = "{{#each (csvAsArray 'test-csv1')}}{{#each this}}{{this}}{{/each}}{{/each}}"
    assert text(template, csv=sources()) == "idnamemarks1Test1552Test256*DummyABSENT"
    assert text("[{{csvAsArray 'nope'}}]", csv=sources()) == "[]"


def test_csv_as_map() -> None:
    assert text("{{#each (csvAsMap 'test-csv1')}}{{this.name}}{{/each}}", csv=sources()) == "Test1Test2Dummy"
    assert text("[{{#each (csvAsMap 'nope')}}x{{/each}}]", csv=sources()) == "[]"


def test_csv_count_rows() -> None:
    csv = sources()
    csv.tables["empty"] = []
    assert text("{{csvCountRows 'test-csv1'}}|{{csvCountRows 'empty'}}|{{csvCountRows 'nope'}}", csv=csv) == "3|0|"


# -- writes ---------------------------------------------------------------------------------------


def test_csv_add_row_then_read_it_back_in_the_same_render() -> None:
    csv = sources()
    template = (
        "{{addToArray 'row' '99' false}}{{addToArray 'row' 'Violet' false}}{{addToArray 'row' '55' false}}"
        "{{csvAddRow 'test-csv1' (getArray 'row')}}{{csv 'test-csv1' 'id' '99' 'name'}}"
    )
    assert text(template, csv=csv) == "Violet"
    assert csv.tables["test-csv1"][-1] == ["99", "Violet", "55"]
    assert csv.mutations == [CsvMutation("add", "test-csv1", row=("99", "Violet", "55"))]


def test_csv_add_row_to_a_missing_source_does_nothing() -> None:
    csv = sources()
    assert text("{{csvAddRow 'nope' (split 'a,b' ',')}}", csv=csv) == ""
    assert csv.mutations == []


def test_csv_delete_rows() -> None:
    csv = sources()
    assert text("{{csvDeleteRows 'test-csv1' 'id' '*' true}}", csv=csv) == "1"
    assert csv.tables["test-csv1"] == [["id", "name", "marks"], ["1", "Test1", "55"], ["2", "Test2", "56"]]
    assert text("[{{csvDeleteRows 'test-csv1' 'id' '1' false}}]", csv=csv) == "[]"
    assert csv.mutations == [
        CsvMutation("delete", "test-csv1", column="id", value="*"),
        CsvMutation("delete", "test-csv1", column="id", value="1"),
    ]


def test_csv_delete_rows_needs_the_exact_column_and_an_existing_source() -> None:
    csv = sources()
    assert text("[{{csvDeleteRows 'test-csv1' 'ID' '1' true}}][{{csvDeleteRows 'x' 'id' '1' true}}]", csv=csv) == "[][]"
    assert csv.mutations == []


def test_a_short_row_added_then_deleted_over_fails_where_hoverfly_crashes() -> None:
    csv = sources()
    assert fails("{{csvAddRow 'test-csv1' (split 'only' ',')}}{{csvDeleteRows 'test-csv1' 'marks' 'x' true}}", csv=csv)
    assert csv.tables["test-csv1"][-1] == ["only"]  # side effects before the failure stay


def test_apply_replays_mutations_on_a_fresh_copy() -> None:
    csv = sources()
    template = (
        "{{csvAddRow 'test-csv1' (split '3,Test3,70' ',')}}"
        "{{csvSqlCommand \"UPDATE test-csv1 SET marks = '60', name='Renamed' WHERE id == '1'\"}}"
        "{{csvSqlCommand \"DELETE FROM test-csv1 WHERE id = '2'\"}}"
        "{{csvDeleteRows 'test-csv1' 'id' '*' false}}"
    )
    assert text(template, csv=csv) == ""
    fresh = sources()
    fresh.tables["test-csv1"].append(["4", "Other", "10"])  # another worker's write
    for mutation in csv.mutations:
        fresh.apply(mutation)
    assert fresh.tables["test-csv1"] == [
        ["id", "name", "marks"],
        ["1", "Renamed", "60"],
        ["4", "Other", "10"],
        ["3", "Test3", "70"],
    ]
    assert fresh.mutations == []


# -- mini-SQL -------------------------------------------------------------------------------------


def _rows(sql: str, csv: CsvTables | None = None) -> str:
    return text(
        f'{{{{#each (csvSqlCommand "{sql}")}}}}{{{{this.id}}}},{{{{this.name}}}},{{{{this.marks}}}};{{{{/each}}}}',
        csv=csv or sources(),
    )


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT * FROM test-csv1", "1,Test1,55;2,Test2,56;*,Dummy,ABSENT;"),
        ("select * from test-csv1 where id == '1'", "1,Test1,55;"),
        ("SELECT * FROM test-csv1 WHERE id = '1'", "1,Test1,55;"),
        ("SELECT * FROM test-csv1 WHERE id != '1'", "2,Test2,56;*,Dummy,ABSENT;"),
        ("SELECT * FROM test-csv1 WHERE 1==1", "1,Test1,55;2,Test2,56;*,Dummy,ABSENT;"),
        ("SELECT * FROM test-csv1 WHERE '1'=='1'", "1,Test1,55;2,Test2,56;*,Dummy,ABSENT;"),
        ("SELECT * FROM test-csv1 WHERE marks > '55'", "2,Test2,56;*,Dummy,ABSENT;"),
        ("SELECT * FROM test-csv1 WHERE marks >= '56'", "2,Test2,56;*,Dummy,ABSENT;"),
        ("SELECT * FROM test-csv1 WHERE marks < '56'", "1,Test1,55;*,Dummy,ABSENT;"),
        ("SELECT * FROM test-csv1 WHERE marks <= '55'", "1,Test1,55;*,Dummy,ABSENT;"),
        ("SELECT * FROM test-csv1 WHERE name < 'x'", "1,Test1,55;2,Test2,56;*,Dummy,ABSENT;"),
        ("SELECT * FROM test-csv1 WHERE id = '1' OR id = '2'", ""),  # OR is ignored: both conditions ANDed
        ("SELECT * FROM test-csv1 WHERE id = '1' AND marks = '55'", "1,Test1,55;"),
        ("SELECT * FROM test-csv1 WHERE id = 1", "1,Test1,55;2,Test2,56;*,Dummy,ABSENT;"),  # unquoted: ignored
        ("SELECT * FROM test-csv1 WHERE nope = '1'", ""),
        ("SELECT * FROM nope", ""),
        ("SELECT Name FROM test-csv1", ""),
        ("SELECT * test-csv1", ""),
        ("INSERT INTO test-csv1 VALUES ('1')", ""),
    ],
)
def test_sql_select(sql: str, expected: str) -> None:
    assert _rows(sql) == expected


def test_sql_select_projects_columns() -> None:
    template = (
        "{{#each (csvSqlCommand 'SELECT name, marks FROM test-csv1 WHERE id = \\'2\\'')}}"
        "{{this.id}}|{{this.name}}|{{this.marks}}{{/each}}"
    )
    assert text(template, csv=sources()) == "|Test2|56"


def test_sql_update_and_delete_change_the_data_and_print_nothing() -> None:
    csv = sources()
    assert text("[{{csvSqlCommand \"UPDATE test-csv1 SET marks = '60' WHERE id == '1'\"}}]", csv=csv) == "[]"
    assert _rows("SELECT * FROM test-csv1 WHERE id == '1'", csv) == "1,Test1,60;"
    assert text("{{csvSqlCommand \"DELETE FROM test-csv2 WHERE id == '5553686208582'\"}}", csv=csv) == ""
    assert text("{{#each (csvSqlCommand 'SELECT * FROM test-csv2')}}{{this.id}};{{/each}}", csv=csv) == "1;2;"
    assert [m.kind for m in csv.mutations] == ["update", "sql_delete"]
    assert csv.mutations[0].assignments == (("marks", "60"),)
    assert csv.mutations[0].conditions == (("id", "==", "1"),)


def test_sql_update_set_values_keep_commas_inside_quotes() -> None:
    csv = sources()
    text("{{csvSqlCommand \"UPDATE test-csv1 SET name = 'a, b', marks=\\\"7\\\" WHERE id = '2'\"}}", csv=csv)
    assert csv.tables["test-csv1"][2] == ["2", "a, b", "7"]


def test_sql_update_of_an_unknown_column_changes_nothing() -> None:
    csv = sources()
    text("{{csvSqlCommand \"UPDATE test-csv1 SET grade = 'A'\"}}", csv=csv)
    assert csv.tables == sources().tables
    assert csv.mutations == []


def test_sql_on_a_source_without_a_header_fails_where_hoverfly_crashes() -> None:
    csv = sources()
    csv.tables["empty"] = []
    assert fails("{{csvSqlCommand 'SELECT * FROM empty'}}", csv=csv)


# -- what a template touches ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("template", "uses", "writes"),
    [
        ("{{Request.Method}}", False, False),
        ("{{csv 's' 'a' 'b' 'c'}}", True, False),
        ("{{csvCountRows 's'}}", True, False),
        ("{{csvSqlCommand 'SELECT * FROM s'}}", True, False),
        ("{{csvSqlCommand 'delete from s'}}", True, True),
        ("{{csvSqlCommand Request.Body}}", True, True),
        ("{{csvAddRow 's' (getArray 'r')}}", True, True),
        ("{{csvDeleteRows 's' 'a' 'b' false}}", True, True),
    ],
)
def test_template_flags_csv_use(template: str, uses: bool, writes: bool) -> None:
    compiled = engine().compile(template, "body")
    assert (compiled.uses_csv, compiled.writes_csv) == (uses, writes)
