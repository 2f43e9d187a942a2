"""A tiny Hoverfly-like source tree for the differential harness's tests (written by the tests, never
taken from Hoverfly): a simulation file, a docs page with a JSON code block and templates, Go test
files with an embedded simulation, a template test, matcher calls and a matcher table."""

from __future__ import annotations

from pathlib import Path

SIMULATION = """{
  "data": {
    "pairs": [
      {"request": {"path": [{"matcher": "exact", "value": "/one"}],
                   "destination": [{"matcher": "glob", "value": "*.test"}],
                   "query": {"id": [{"matcher": "exact", "value": "7"}]},
                   "headers": {"X-Key": [{"matcher": "exact", "value": "k"}]}},
       "response": {"status": 201, "body": "first", "headers": {"X-One": ["1"]}}},
      {"request": {"path": [{"matcher": "exact", "value": "/seq"}], "requiresState": {"sequence:1": "1"}},
       "response": {"status": 200, "body": "seq 1", "transitionsState": {"sequence:1": "2"}}},
      {"request": {"path": [{"matcher": "exact", "value": "/seq"}], "requiresState": {"sequence:1": "2"}},
       "response": {"status": 200, "body": "seq 2"}}
    ]
  },
  "meta": {"schemaVersion": "v5.2"}
}
"""

DOCS = """Sequences
=========

.. code:: json

    {
      "data": {"pairs": [{"request": {"path": [{"matcher": "regex", "value": "^/items/\\\\d+$"}]},
                          "response": {"status": 200, "body": "item"}}]},
      "meta": {"schemaVersion": "v5"}
    }

A path segment: ``{{ Request.Path.[1] }}``; the method: ``{{ Request.Method }}``.

.. code:: handlebars

    {{ randomUuid }}

+-------+----------------------+
| cell  | {{ Request.Method }} |
+-------+----------------------+
"""

GO_SIMULATIONS = """package testdata

var Legacy = `{
    "data": {"pairs": [{"request": {"path": {"exactMatch": "/legacy"}, "method": {"exactMatch": "GET"}},
                        "response": {"status": 200, "body": "legacy", "headers": {}}}]},
    "meta": {"schemaVersion": "v2"}
}`

// a format string is not a document
var Format = "{\\"meta\\": {\\"schemaVersion\\": %q}}"

var Joined = "{\\"data\\": {\\"pairs\\": []}, " +
	"\\"meta\\": {\\"schemaVersion\\": \\"v5\\"}}"
"""

GO_TEMPLATES = """package templating_test

func Test_QueryParam(t *testing.T) {
	template, err := ApplyTemplate(&models.RequestDetails{
		Path:  "/a/b",
		Query: map[string][]string{"id": {"7"}},
	}, make(map[string]string), `{{ Request.QueryParam.id }} of {{ Request.Path.[1] }}`)
	Expect(template).To(Equal(`{{ not a template }}`))
}

func Test_Csv(t *testing.T) {
	template, _ := ApplyTemplate(
		&models.RequestDetails{},
		map[string]string{"k": "v"},
		"{{csv 'people' 'id' '1' 'name'}} {{ State.k }}",
	)
}

func initiateTemplator() *templating.Templator {
	source, _ := templating.NewCsvDataSource("people", "id,name\\n1,Ada\\n")
	return nil
}
"""

MATCHERS_GO = """package matchers

var Matchers = map[string]MatcherDetails{
	Exact: {
		MatcherFunction:     ExactMatch,
	},
	Glob: {
		MatcherFunction:     GlobMatch,
	},
}
"""

MATCHER_TESTS = """package matchers_test

const sample = "test"

func Test_Glob(t *testing.T) {
	Expect(matchers.GlobMatch("t*st", `test`)).To(BeTrue())
	Expect(matchers.GlobMatch("*esT", sample)).To(BeFalse())
	Expect(matchers.GlobMatch(1, "yes")).To(BeFalse())
}

/*
func Test_Commented(t *testing.T) {
	Expect(matchers.ExactMatch("a", "b")).To(BeFalse())
}
*/

func Test_Exact(t *testing.T) {
	actual := "same"
	Expect(matchers.ExactMatch("same", actual)).To(BeTrue())
}
"""

FIELD_TABLE = """package matching_test

var fieldMatcherTests = []fieldMatcherTest{
	{
		name: "GlobTrue",
		matchers: []models.RequestFieldMatchers{
			{
				Matcher: matchers.Glob,
				Value:   "a*",
			},
		},
		toMatch: "abc",
		equals:  BeTrue(),
	},
	{
		name: "NotALiteral",
		matchers: []models.RequestFieldMatchers{
			{
				Matcher: matchers.Exact,
				Value:   "x",
			},
		},
		toMatch: someVariable,
		equals:  BeFalse(),
	},
}
"""

VENDORED = 'package y\n\nvar S = `{"meta": {"schemaVersion": "v5"}, "data": {"pairs": []}}`\n'


def write_tree(root: Path) -> Path:
    """Write the tiny tree under ``root`` and return it."""
    files = {
        "testdata/sim.json": SIMULATION,
        "testdata/not-a-simulation.json": '{"hello": "world"}',
        "docs/pages/keyconcepts/state.rst": DOCS,
        "functional-tests/testdata/sims.go": GO_SIMULATIONS,
        "core/templating/templating_test.go": GO_TEMPLATES,
        "core/matching/matchers/matchers.go": MATCHERS_GO,
        "core/matching/matchers/exact_match.go": 'package matchers\n\nvar Exact = "exact"\n',
        "core/matching/matchers/glob_match.go": 'package matchers\n\nvar Glob = "glob"\n',
        "core/matching/matchers/glob_match_test.go": MATCHER_TESTS,
        "core/matching/field_matcher_test.go": FIELD_TABLE,
        "vendor/github.com/x/y/ignored.go": VENDORED,
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root
