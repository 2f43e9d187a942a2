"""Random helpers and ``faker``: shapes of the values, the seeded source, and Hoverfly's crash cases."""

from __future__ import annotations

import ipaddress
import re
import uuid
from collections import Counter

import pytest

from simproxy.engine.templating.faker_map import TABLE
from tests.engine.templating.conftest import engine, fails, render, text


def test_same_seed_same_values_and_values_change_between_calls() -> None:
    template = "{{randomString}} {{randomUuid}} {{randomInteger}} {{randomFloat}} {{faker 'Name'}}"
    first, second = text(template, using=engine(seed=7)), text(template, using=engine(seed=7))
    assert first == second
    assert text(template, using=engine(seed=8)) != first
    left, right = text("{{randomUuid}}|{{randomUuid}}").split("|")
    assert left != right


def test_random_string_is_3_to_15_ascii_letters() -> None:
    eng = engine(seed=3)
    lengths = set()
    for _ in range(200):
        value = render("{{randomString}}", using=eng).text
        assert re.fullmatch(r"[a-zA-Z]{3,15}", value)
        lengths.add(len(value))
    assert min(lengths) == 3 and max(lengths) == 15


@pytest.mark.parametrize("count", [0, 2, 40])
def test_random_string_length(count: int) -> None:
    assert re.fullmatch(rf"[a-zA-Z]{{{count}}}", text(f"{{{{randomStringLength {count}}}}}"))


def test_negative_random_string_length_fails_where_hoverfly_crashes() -> None:
    assert fails("{{randomStringLength -1}}")


def test_random_boolean_and_integer() -> None:
    values = {text("{{randomBoolean}}", using=engine(seed=s)) for s in range(20)}
    assert values == {"true", "false"}
    number = int(text("{{randomInteger}}"))
    assert 0 <= number < 2**63


def test_random_integer_range_is_min_inclusive_max_exclusive() -> None:
    eng = engine(seed=5)
    seen = {int(render("{{randomIntegerRange 1 4}}", using=eng).text) for _ in range(100)}
    assert seen == {1, 2, 3}
    assert text("{{randomIntegerRange 7 8}}") == "7"
    assert text("{{randomIntegerRange -3 -2}}") == "-3"


@pytest.mark.parametrize("template", ["{{randomIntegerRange 5 5}}", "{{randomIntegerRange 5 4}}"])
def test_random_integer_range_with_max_not_above_min_fails_where_hoverfly_crashes(template: str) -> None:
    assert fails(template)


def test_random_floats_print_six_decimals() -> None:
    assert re.fullmatch(r"0\.\d{6}", text("{{randomFloat}}"))
    value = text("{{randomFloatRange 7.0 8.0}}")
    assert re.fullmatch(r"7\.\d{6}", value)
    assert text("{{randomFloatRange -1.5 -1.5}}") == "-1.500000"


def test_fake_addresses() -> None:
    assert "@" in text("{{randomEmail}}")
    assert isinstance(ipaddress.ip_address(text("{{randomIPv4}}")), ipaddress.IPv4Address)
    assert isinstance(ipaddress.ip_address(text("{{randomIPv6}}")), ipaddress.IPv6Address)


def test_random_uuid_is_a_lower_case_version_4_uuid() -> None:
    value = text("{{randomUuid}}")
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", value)
    assert uuid.UUID(value).version == 4


@pytest.mark.parametrize(
    "method", ["Name", "Email", "JobTitle", "City", "UUID", "Company", "Word", "HTTPMethod", "Noun"]
)
def test_faker_string_methods(method: str) -> None:
    assert text(f"{{{{faker '{method}'}}}}") != ""


def test_faker_numbers_print_as_go_prints_a_reflect_value() -> None:
    assert re.fullmatch(r"%!s\(int=\d{4}\)", text("{{faker 'Year'}}"))
    assert re.fullmatch(r"%!s\(bool=(true|false)\)", text("{{faker 'Bool'}}"))
    assert re.fullmatch(r"%!s\(float64=-?[\d.e+-]+\)", text("{{faker 'Latitude'}}"))


def test_faker_unknown_or_miscased_name_renders_empty() -> None:
    assert text("[{{faker 'NoSuchThing'}}][{{faker 'name'}}][{{faker 'Rand'}}]") == "[][][]"


@pytest.mark.parametrize("method", ["Number", "Sentence", "Regex", "IntRange"])
def test_faker_method_with_arguments_fails_where_hoverfly_crashes(method: str) -> None:
    assert fails(f"{{{{faker '{method}'}}}}")


def test_faker_result_is_truthy_only_for_a_known_method() -> None:
    assert text("{{#if (faker 'Name')}}y{{else}}n{{/if}}{{#if (faker 'Nope')}}y{{else}}n{{/if}}") == "yn"


def test_every_zero_argument_gofakeit_method_renders_a_value() -> None:
    eng = engine(seed=11)
    for method in TABLE:
        assert render(f"{{{{{{faker '{method}'}}}}}}", using=eng).text != "", method


def test_random_letters_are_drawn_uniformly_from_all_52() -> None:
    drawn = text("{{randomStringLength 52000}}", using=engine(seed=11))
    counts = Counter(drawn)
    assert sorted(counts) == sorted("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    chi_square = sum((n - 1000) ** 2 / 1000 for n in counts.values())
    assert chi_square < 86.7  # 51 degrees of freedom: a uniform draw exceeds it once in a thousand
