"""otto's syntax errors, as Hoverfly reports them for a PAC file that does not parse.

Every expected text here was produced by the real parser: otto v0.5.1 as vendored by Hoverfly
v1.12.10 (``parser.ParseFile``, which is what ``vm.Run`` -- and so gopac's ``ParseBytes`` --
returns), built from Hoverfly's vendor tree and run on each script. None means otto parses it.
"""

from __future__ import annotations

import re

import pytest

from simproxy.engine.gocompat.ottosyntax import syntax_error

# Hoverfly's functional test (functional-tests/core/ft_pac_file_test.go): the body must contain
# "(anonymous): Line 2:5 Unexpected token & (and 1 more errors)". The second line starts with four tabs.
FUNCTIONAL_TEST_PAC = """function FindProxyForURL(url, host) {
\t\t\t\t&BADPACFILE&
\t\t\t}"""

CLASSIC_PAC = """function FindProxyForURL(url, host) {
    if (isPlainHostName(host) || dnsDomainIs(host, ".example.com"))
        return "DIRECT";
    if (shExpMatch(host, "*.internal.*") && isInNet(dnsResolve(host), "10.0.0.0", "255.0.0.0"))
        return "PROXY proxy.internal:8080; DIRECT";
    else if (localHostOrDomainIs(host, "www.example.org")) {
        return "DIRECT";
    }
    return "PROXY 127.0.0.1:8500";
}"""

RULES_PAC = r"""// corporate PAC
var proxies = ["PROXY a:1", 'PROXY b:2', "DIRECT"];
var rules = {direct: [".corp", ".local"], "proxy": /^(www|api)\.example\.(com|org)$/i, n: 0x1F, m: 1.5e3};
function pick(i) { return proxies[i % proxies.length]; }
function FindProxyForURL(url, host) {
    host = host.toLowerCase();
    for (var i = 0; i < rules.direct.length; i++) {
        if (dnsDomainIs(host, rules.direct[i])) { return "DIRECT"; }
    }
    for (var k in rules) { if (k === "n") continue; }
    switch (host) {
        case "a": return pick(0);
        case "b":
        default: break;
    }
    var ip = myIpAddress(), level = dnsDomainLevels(host);
    if (rules.proxy.test(host)) return pick(1);
    return level > 2 ? pick(2) : "DIRECT";
}"""

LOOSE_PAC = """function FindProxyForURL(url, host)
{
\tif (isResolvable(host) && !isInNet(host, "192.168.0.0", "255.255.0.0"))
\t\treturn "DIRECT"
\tif (weekdayRange("MON", "FRI") && timeRange(9, 17) && dateRange("JAN", "DEC"))
\t\treturn "PROXY day.example.com:80"
\tvar f = function named(a, b) { return a + b }, g = new Date().getHours()
\ttry { throw new Error("x") } catch (e) { g = e.message } finally { g = undefined }
\touter: for (;;) { while (1) { break outer } }
\tvar o = { get a() { return 1 }, set a(v) { this._a = v }, 'b c': [1, , 3] }
\treturn url.substring(0, 5) == "https" ? "PROXY secure:3128" : "PROXY plain:3128; SOCKS socks:1080"
}"""


def test_functional_test_script() -> None:
    assert syntax_error(FUNCTIONAL_TEST_PAC) == "(anonymous): Line 2:5 Unexpected token & (and 1 more errors)"


@pytest.mark.parametrize("pac", [CLASSIC_PAC, RULES_PAC, LOOSE_PAC], ids=["classic", "rules", "no-semicolons"])
def test_valid_pac_files(pac: str) -> None:
    assert syntax_error(pac) is None


CASES = [
    pytest.param("", None, id="valid: empty"),
    pytest.param("// nothing\n/* at all */\n", None, id="valid: comments only"),
    pytest.param("BADPACFILE", None, id="valid: undefined name is a runtime, not a syntax, error"),
    pytest.param(
        "x = {+: 1, if: 2 b: 3, 'c': 4, 5: 6};", None, id="valid: otto takes any token as an object key and no commas"
    ),
    pytest.param("function f(a, b,) { return f(a, b,); }", None, id="valid: trailing commas in calls and parameters"),
    pytest.param("a &^= b;", None, id="valid: Go's and-not assignment"),
    pytest.param("switch (a) { case 1: x", None, id="valid: a switch may end with the input"),
    pytest.param("x = /[ab\ny", None, id="valid: unterminated class in a regexp ends at the line"),
    pytest.param("for (var k = 0 in o) {}", None, id="valid: var in for-in with an initialiser"),
    pytest.param("for (a < b in c;;) {}", None, id="valid: in after a relational operator in a for head"),
    pytest.param("x = /(?<host>[a-z]+)(?i:x)/;", None, id="valid: named group and flags in a regexp"),
    pytest.param("var résumé = 1, \\u0061bc = résumé + abc;", None, id="valid: unicode identifiers and escapes"),
    pytest.param(
        "function FindProxyForURL(url, host) { return 'DIRECT' }}",
        "(anonymous): Line 1:56 Unexpected token }",
        id="unexpected token",
    ),
    pytest.param(
        "function FindProxyForURL(url, host) {\n  retrun DIRECT;\n}",
        "(anonymous): Line 2:10 Unexpected identifier",
        id="unexpected identifier",
    ),
    pytest.param("var a = 'x' 'y';", "(anonymous): Line 1:13 Unexpected string", id="unexpected string"),
    pytest.param("var a = 1 2;", "(anonymous): Line 1:11 Unexpected number", id="unexpected number"),
    pytest.param(
        "var a = class;",
        "(anonymous): Line 1:9 Unexpected reserved word (and 1 more errors)",
        id="unexpected reserved word",
    ),
    pytest.param(
        "var true = 1;", "(anonymous): Line 1:5 Unexpected token true (and 1 more errors)", id="unexpected true"
    ),
    pytest.param(
        "var a = if;", "(anonymous): Line 1:9 Unexpected token if (and 1 more errors)", id="unexpected keyword"
    ),
    pytest.param(
        'function FindProxyForURL(url, host) {\n  return "DIRECT";\n',
        "(anonymous): Line 3:1 Unexpected end of input",
        id="unexpected end of input: open brace",
    ),
    pytest.param(
        "var a = 1 +",
        "(anonymous): Line 1:12 Unexpected end of input (and 1 more errors)",
        id="unexpected end of input: open expression",
    ),
    pytest.param(
        "var a = 1; /* never closed",
        "(anonymous): Line 1:27 Unexpected end of input",
        id="unexpected end of input: unterminated comment",
    ),
    pytest.param(
        "var a = 1 @ 2;", "(anonymous): Line 1:11 Unexpected token ILLEGAL (and 1 more errors)", id="illegal character"
    ),
    pytest.param(
        'var a = "DIRECT;\nvar b = 2;',
        "(anonymous): Line 1:9 Unexpected token ILLEGAL (and 1 more errors)",
        id="unterminated string",
    ),
    pytest.param(
        "var \\x61 = 1;",
        "(anonymous): Line 1:5 Unexpected token ILLEGAL (and 1 more errors)",
        id="bad identifier escape",
    ),
    pytest.param(
        "var a = 3in;",
        "(anonymous): Line 1:9 Unexpected token ILLEGAL (and 1 more errors)",
        id="number followed by a letter",
    ),
    pytest.param(
        "var a = 08;",
        "(anonymous): Line 1:9 Unexpected token ILLEGAL (and 1 more errors)",
        id="octal-looking number with 8",
    ),
    pytest.param(
        "var a = 0x;",
        "(anonymous): Line 1:9 Unexpected token ILLEGAL (and 1 more errors)",
        id="hex prefix without digits",
    ),
    pytest.param(
        "var a = '\\x4';",
        '(anonymous): Line 1:9 invalid escape: \\x: len("4") != 2',
        id="invalid \\x escape, too short",
    ),
    pytest.param('var a = "\\u12g4";', '(anonymous): Line 1:9 invalid escape: \\u: "12g4"', id="invalid \\u escape"),
    pytest.param(
        "var o = {'\\x': 1};",
        '(anonymous): Line 1:10 invalid escape: \\x: len("") != 2',
        id="invalid escape in an object key",
    ),
    pytest.param(
        "var r = /abc\n;", "(anonymous): Line 1:9 Invalid regular expression: missing /", id="regexp missing slash"
    ),
    pytest.param(
        "var r = /(abc/;",
        "(anonymous): Line 1:9 Invalid regular expression: Unterminated group",
        id="regexp unterminated group",
    ),
    pytest.param(
        "x = /[a\u00e9",
        "(anonymous): Line 1:5 Invalid regular expression: Invalid UTF-8 character",
        id="regexp class open at the end of input loses the last byte",
    ),
    pytest.param(
        "var r = /abc)/;",
        "(anonymous): Line 1:9 Invalid regular expression: Unmatched ')'",
        id="regexp unmatched paren",
    ),
    pytest.param(
        "var r = /[abc",
        "(anonymous): Line 1:9 Invalid regular expression: Unterminated character class",
        id="regexp unterminated class at end of input",
    ),
    pytest.param(
        "if (/^www(?=\\.)/.test(host)) {}",
        "(anonymous): Line 1:5 Invalid regular expression: re2: Invalid (?=) <lookahead>",
        id="regexp lookahead",
    ),
    pytest.param(
        "var r = /(a)\\1/;",
        "(anonymous): Line 1:9 Invalid regular expression: re2: Invalid \\1 <backreference>",
        id="regexp backreference",
    ),
    pytest.param(
        "var r = /a{2,1}/;",
        "(anonymous): Line 1:9 Invalid regular expression: invalid repeat count: `{2,1}`",
        id="regexp Go: invalid repeat count",
    ),
    pytest.param(
        "var r = /(a{100}b){20}/;",
        "(anonymous): Line 1:9 Invalid regular expression: invalid repeat count: `{20}`",
        id="regexp Go: repeat count over 1000 when nested",
    ),
    pytest.param(
        "var r = /+a/.source;",
        "(anonymous): Line 1:9 Invalid regular expression: missing argument to repetition operator: `+`",
        id="regexp Go: missing argument",
    ),
    pytest.param(
        "var r = /a**/;",
        "(anonymous): Line 1:9 Invalid regular expression: invalid nested repetition operator: `**`",
        id="regexp Go: nested repetition",
    ),
    pytest.param(
        "var r = /[z-a]/;",
        "(anonymous): Line 1:9 Invalid regular expression: invalid character class range: `z-a`",
        id="regexp Go: class range",
    ),
    pytest.param(
        "var r = /(?<=a)b/;",
        "(anonymous): Line 1:9 Invalid regular expression: invalid named capture: `(?<=a)b`",
        id="regexp Go: named capture",
    ),
    pytest.param(
        "var r = /(?x)a/;",
        "(anonymous): Line 1:9 Invalid regular expression: invalid or unsupported Perl syntax: `(?x`",
        id="regexp Go: Perl syntax",
    ),
    pytest.param(
        "var r = /[\\B]/;",
        "(anonymous): Line 1:9 Invalid regular expression: invalid escape sequence: `\\B`",
        id="regexp Go: escape in class",
    ),
    pytest.param(
        "var r = /[]a/;",
        "(anonymous): Line 1:9 Invalid regular expression: missing closing ]: `[]a`",
        id="regexp Go: missing closing bracket",
    ),
    pytest.param(
        "var r = /[[:foo:]]/;",
        "(anonymous): Line 1:9 Invalid regular expression: invalid character class range: `[:foo:]`",
        id="regexp Go: POSIX class name",
    ),
    pytest.param(
        'if (host = "a" || url = "b") {}',
        "(anonymous): Line 1:12 invalid left-hand side in assignment (and 2 more errors)",
        id="invalid assignment target",
    ),
    pytest.param("++f();", "(anonymous): Line 1:1 invalid left-hand side in assignment", id="invalid prefix increment"),
    pytest.param(
        "var a = 1--;",
        "(anonymous): Line 1:10 invalid left-hand side in assignment (and 1 more errors)",
        id="invalid postfix decrement",
    ),
    pytest.param(
        "for (a + b in c) {}", "(anonymous): Line 1:1 Invalid left-hand side in for-in", id="invalid for-in target"
    ),
    pytest.param(
        "function f() { break; }",
        "(anonymous): Line 1:16 Illegal break statement (and 1 more errors)",
        id="illegal break",
    ),
    pytest.param(
        "switch (a) { case 1: continue; }",
        "(anonymous): Line 1:22 Illegal continue statement",
        id="illegal continue in switch",
    ),
    pytest.param(
        'return "DIRECT";', "(anonymous): Line 1:1 Illegal return statement", id="illegal return at top level"
    ),
    pytest.param(
        "while (1) { break nowhere; }", "(anonymous): Line 1:13 Undefined label 'nowhere'", id="undefined label"
    ),
    pytest.param(
        "a: while (1) { (function () { continue a; }); }",
        "(anonymous): Line 1:31 Undefined label 'a'",
        id="label crossing a function",
    ),
    pytest.param("a: a: x;", "(anonymous): Line 1:4 Label 'a' already exists", id="duplicate label"),
    pytest.param(
        "function f() {\n  throw\n  new Error('x');\n}",
        "(anonymous): Line 2:3 Illegal newline after throw (and 1 more errors)",
        id="newline after throw",
    ),
    pytest.param("throw", "(anonymous): Line 1:1 Unexpected end of input", id="throw at end of input"),
    pytest.param(
        "try { x(); }\nvar a;",
        "(anonymous): Line 1:1 Missing catch or finally after try",
        id="try without catch or finally",
    ),
    pytest.param(
        "switch (a) { default: x(); default: y(); }",
        "(anonymous): Line 1:28 Already saw a default in switch",
        id="second default in switch",
    ),
    pytest.param("try {} catch (1) {}", "(anonymous): Line 1:15 Unexpected number", id="catch without a name"),
    pytest.param(
        "function (url, host) { return 'DIRECT'; }",
        "(anonymous): Line 1:10 Unexpected token ( (and 3 more errors)",
        id="function statement without a name",
    ),
    pytest.param("function f(a b) {}", "(anonymous): Line 1:14 Unexpected identifier", id="bad parameter list"),
    pytest.param("host.;", "(anonymous): Line 1:6 Unexpected token ;", id="missing dot member"),
    pytest.param(
        "var a = 1;\n\udcff",
        "(anonymous): Line 2:1 Invalid UTF-8 character (and 2 more errors)",
        id="invalid UTF-8 byte",
    ),
    pytest.param(
        "var été = '日本'; @",
        "(anonymous): Line 1:23 Unexpected token ILLEGAL (and 1 more errors)",
        id="column counts UTF-8 bytes",
    ),
    pytest.param(
        "\t\tvar a = ;", "(anonymous): Line 1:11 Unexpected token ; (and 1 more errors)", id="column after tabs"
    ),
    pytest.param(
        "var a = 1;\r\nvar b = 2;\r\nvar c = ;",
        "(anonymous): Line 3:9 Unexpected token ; (and 1 more errors)",
        id="CRLF line endings",
    ),
    pytest.param(
        "var a = 1;\rvar b = ;", "(anonymous): Line 2:9 Unexpected token ; (and 1 more errors)", id="CR line endings"
    ),
    pytest.param(
        "var a = 1;\u2028var b = ;",
        "(anonymous): Line 2:9 Unexpected token ; (and 1 more errors)",
        id="U+2028 line separator",
    ),
    pytest.param(
        "a\r \nb", "(anonymous): Line 2:1 Unexpected token ILLEGAL (and 1 more errors)", id="otto's look-ahead after CR"
    ),
    pytest.param(
        "a = 1 /*\n*/ b = 2",
        "(anonymous): Line 2:4 Unexpected identifier (and 1 more errors)",
        id="multi-line comment is not a line break",
    ),
    pytest.param("a\n++\nb", None, id="no semicolon before a postfix on the next line"),
    pytest.param(
        'function FindProxyForURL(url, host) {\n  if (dnsDomainIs(host, , ".a")) return "DIRECT";\n'
        '  else if (x y) return z;\n  return "PROXY p:1";\n}',
        "(anonymous): Line 2:25 Unexpected token , (and 5 more errors)",
        id="recovery: many errors",
    ),
    pytest.param(
        "var a = ; if (x) { y = }",
        "(anonymous): Line 1:9 Unexpected token ; (and 3 more errors)",
        id="recovery: statement keyword after an error",
    ),
    pytest.param(
        "else { return 1; }",
        "(anonymous): Line 1:1 Unexpected token else (and 2 more errors)",
        id="recovery: else without if",
    ),
    pytest.param(
        "var a = 1;\n//# sourceMappingURL=data:application/json;base64,eyJ2ZXJzaW9uIjoyfQ==",
        "sourcemap: got version=2, but only 3rd version is supported",
        id="inline source map with the wrong version",
    ),
]


@pytest.mark.parametrize(("script", "expected"), CASES)
def test_matches_otto(script: str, expected: str | None) -> None:
    assert syntax_error(script) == expected


def test_recovery_through_a_long_broken_else_if_chain() -> None:
    """otto's recovery skips the closing braces, so the blocks nest deeper with every ``else if``."""
    branches = "".join(
        f'  if (dnsDomainIs(host, ".c{i}.com") || shExpMatch(url,, "*x{i}*")) {{ return "PROXY p{i}:8080"; }}\n  else '
        for i in range(300)
    )
    pac = "function FindProxyForURL(url, host) {\n" + branches + "{ return 'DIRECT'; }\n}\n"
    assert syntax_error(pac) == "(anonymous): Line 2:54 Unexpected token , (and 1500 more errors)"


def test_deep_nesting_is_followed() -> None:
    # otto: None, and "Line 1:2001 Unexpected end of input" without the last ")"
    assert syntax_error("(" * 1000 + "a" + ")" * 1000) is None
    assert syntax_error("(" * 1000 + "a" + ")" * 999) == "(anonymous): Line 1:2001 Unexpected end of input"
    # otto: "(anonymous): Line 1:6000 Unexpected end of input"
    assert syntax_error("{" * 3000 + "}" * 2999) == "(anonymous): Line 1:6000 Unexpected end of input"


def test_nesting_beyond_the_limit_is_reported_not_raised() -> None:
    # Our own text: otto would say "Line 1:100001 Unexpected end of input (and 100000 more errors)".
    assert syntax_error("(" * 100_000) == "(anonymous): Line 1:10000 Nesting too deep to check"


def test_lone_surrogates_other_than_escaped_bytes_read_as_replacement_character() -> None:
    # otto, given U+FFFD: None
    assert syntax_error("var a = '\ud800';") is None
    assert syntax_error("var a = '\ufffd';") is None


_TOKEN = re.compile(r'\s+|[A-Za-z_$][\w$]*|\d+|"[^"]*"|&&|\|\||.')

# CLASSIC_PAC cut into tokens; each entry deletes or repeats the token at that index.
MUTATIONS = [
    ("delete", 0, "(anonymous): Line 1:29 Unexpected token { (and 5 more errors)"),
    ("delete", 3, "(anonymous): Line 1:28 Unexpected token ,"),
    ("delete", 5, "(anonymous): Line 1:30 Unexpected identifier"),
    ("delete", 8, "(anonymous): Line 1:36 Unexpected token { (and 5 more errors)"),
    ("delete", 12, None),
    ("delete", 15, None),
    ("delete", 17, None),
    ("delete", 20, "(anonymous): Line 2:32 Unexpected identifier (and 1 more errors)"),
    ("delete", 23, "(anonymous): Line 2:66 Unexpected token )"),
    ("delete", 25, "(anonymous): Line 2:51 Unexpected string (and 1 more errors)"),
    ("delete", 28, "(anonymous): Line 3:9 Unexpected token return"),
    ("delete", 31, None),
    ("delete", 34, None),
    ("delete", 38, "(anonymous): Line 4:8 Unexpected identifier"),
    ("delete", 40, "(anonymous): Line 4:41 Unexpected token && (and 4 more errors)"),
    ("delete", 42, "(anonymous): Line 4:25 Unexpected string (and 5 more errors)"),
    ("delete", 45, "(anonymous): Line 5:9 Unexpected token return"),
    ("delete", 49, None),
    ("delete", 51, None),
    ("delete", 53, None),
    ("delete", 55, "(anonymous): Line 4:70 Unexpected string (and 5 more errors)"),
    ("delete", 58, "(anonymous): Line 4:82 Unexpected string (and 5 more errors)"),
    ("delete", 61, "(anonymous): Line 5:9 Unexpected token return"),
    ("delete", 64, None),
    ("delete", 67, None),
    ("delete", 71, "(anonymous): Line 6:58 Unexpected token { (and 1 more errors)"),
    ("delete", 74, None),
    ("delete", 76, "(anonymous): Line 6:34 Unexpected token , (and 3 more errors)"),
    ("delete", 79, None),
    ("delete", 81, "(anonymous): Line 6:59 Unexpected token { (and 1 more errors)"),
    ("delete", 85, None),
    ("delete", 88, None),
    ("delete", 92, None),
    ("delete", 95, None),
    ("repeat", 2, None),
    ("repeat", 8, "(anonymous): Line 1:36 Unexpected token ) (and 1 more errors)"),
    ("repeat", 16, "(anonymous): Line 3:9 Unexpected token return"),
    ("repeat", 23, "(anonymous): Line 3:9 Unexpected token return"),
    ("repeat", 29, "(anonymous): Line 2:68 Unexpected token )"),
    ("repeat", 38, "(anonymous): Line 5:9 Unexpected token return"),
    ("repeat", 44, "(anonymous): Line 4:40 Unexpected string (and 5 more errors)"),
    ("repeat", 51, None),
    ("repeat", 57, "(anonymous): Line 4:81 Unexpected string (and 5 more errors)"),
    ("repeat", 64, "(anonymous): Line 5:22 Unexpected string (and 4 more errors)"),
    ("repeat", 73, "(anonymous): Line 6:61 Unexpected token { (and 1 more errors)"),
    ("repeat", 79, "(anonymous): Line 6:57 Unexpected string (and 3 more errors)"),
    ("repeat", 87, "(anonymous): Line 7:24 Unexpected string"),
    ("repeat", 95, None),
]


@pytest.mark.parametrize(("operation", "index", "expected"), MUTATIONS)
def test_mutations_of_a_valid_pac_file(operation: str, index: int, expected: str | None) -> None:
    tokens = _TOKEN.findall(CLASSIC_PAC)
    assert len(tokens) == 98
    if operation == "delete":
        del tokens[index]
    else:
        tokens.insert(index, tokens[index])
    assert syntax_error("".join(tokens)) == expected
