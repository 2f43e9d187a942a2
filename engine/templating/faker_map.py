"""gofakeit v6's zero-argument ``Faker`` methods, answered by the Python ``Faker`` package.

Each name gives a value of the Go result type, printed as raymond prints gofakeit's
``[]reflect.Value`` (Go ``%s``: ``%!s(int=7)`` for numbers). Where Faker has no such data
(beers, Minecraft, parts of speech beyond four) a word of the nearest kind stands in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from simproxy.engine.gocompat.gojson import format_v_float

if TYPE_CHECKING:
    from faker import Faker

Producer = Callable[["Faker"], Any]


def _word(pos: str) -> Producer:
    return lambda f: f.word(part_of_speech=pos)


def _int(go_type: str, low: int, high: int) -> Producer:
    return lambda f: (go_type, f.random.randint(low, high))


def _hex(bits: int) -> Producer:
    return lambda f: "0x" + format(f.random.getrandbits(bits), f"0{bits // 4}x")


def _when(start: str, end: str) -> Producer:
    return lambda f: ("time", f.date_time_between(start_date=start, end_date=end))


_NOUN, _VERB, _ADJ, _ADV = _word("noun"), _word("verb"), _word("adjective"), _word("adverb")
_PREPOSITIONS = ("about", "above", "across", "after", "against", "along", "among", "around", "before", "behind")
_PRONOUNS = ("I", "you", "he", "she", "it", "we", "they", "me", "him", "her", "us", "them")
_CONNECTIVES = ("and", "but", "so", "then", "because", "however", "moreover", "therefore", "for example")


def _address(f: Faker) -> Any:
    fields = [f.street_address(), f.street_name(), f.city(), f.state(), f.zipcode(), f.country()]
    return ("struct", [*fields, ("float64", float(f.latitude())), ("float64", float(f.longitude()))])


_TABLE: Mapping[str, Producer] = MappingProxyType(
    {
        "AchAccount": lambda f: f.numerify("############"),
        "AchRouting": lambda f: f.aba(),
        "Address": _address,
        "Animal": _NOUN,
        "AnimalType": _NOUN,
        "AppAuthor": lambda f: f.company(),
        "AppName": lambda f: f.word().title() + f.word(),
        "AppVersion": lambda f: f"{f.random.randint(1, 5)}.{f.random.randint(0, 20)}.{f.random.randint(0, 20)}",
        "BS": lambda f: f.bs().split()[-1],
        "BeerAlcohol": lambda f: f"{f.random.uniform(2, 10):.1f}%",
        "BeerBlg": lambda f: f"{f.random.uniform(5, 20):.1f}°Blg",
        "BeerIbu": lambda f: f"{f.random.randint(10, 100)} IBU",
        "BitcoinAddress": lambda f: "1" + f.pystr(min_chars=25, max_chars=33),
        "BitcoinPrivateKey": lambda f: "5" + f.pystr(min_chars=50, max_chars=50),
        "Blurb": lambda f: f.catch_phrase().split()[-1].title(),
        "Book": lambda f: ("struct", [f.sentence(nb_words=3).rstrip("."), f.name(), f.word()]),
        "BookAuthor": lambda f: f.name(),
        "BookTitle": lambda f: f.sentence(nb_words=3).rstrip("."),
        "Bool": lambda f: ("bool", f.boolean()),
        "BuzzWord": lambda f: f.bs().split()[0],
        "Car": lambda f: (
            "struct",
            [_NOUN(f), f.word().title(), f.word().title(), ("int", f.random.randint(1990, 2024))],
        ),
        "CelebrityActor": lambda f: f.name(),
        "CelebrityBusiness": lambda f: f.name(),
        "CelebritySport": lambda f: f.name(),
        "ChromeUserAgent": lambda f: f.chrome(),
        "City": lambda f: f.city(),
        "Color": lambda f: f.color_name(),
        "Comment": lambda f: f.word(),
        "Company": lambda f: f.company(),
        "CompanySuffix": lambda f: f.company_suffix(),
        "Contact": lambda f: ("struct", [f.phone_number(), f.email()]),
        "Country": lambda f: f.country(),
        "CountryAbr": lambda f: f.country_code(),
        "CreditCard": lambda f: ("struct", [f.credit_card_provider(), f.credit_card_number(), f.credit_card_expire()]),
        "CreditCardCvv": lambda f: f.credit_card_security_code(),
        "CreditCardExp": lambda f: f.credit_card_expire(),
        "CreditCardType": lambda f: f.credit_card_provider(),
        "Currency": lambda f: ("struct", [f.currency_code(), f.currency_name()]),
        "CurrencyLong": lambda f: f.currency_name(),
        "CurrencyShort": lambda f: f.currency_code(),
        "Cusip": lambda f: f.bothify("??????##?").upper(),
        "Date": _when("-50y", "+1y"),
        "Day": _int("int", 1, 31),
        "Digit": lambda f: str(f.random_digit()),
        "DomainName": lambda f: f.domain_name(),
        "DomainSuffix": lambda f: f.tld(),
        "Email": lambda f: f.email(),
        "Emoji": lambda f: f.emoji(),
        "FileExtension": lambda f: f.file_extension(),
        "FileMimeType": lambda f: f.mime_type(),
        "FirefoxUserAgent": lambda f: f.firefox(),
        "FirstName": lambda f: f.first_name(),
        "FlipACoin": lambda f: f.random.choice(("Heads", "Tails")),
        "Float32": lambda f: ("float32", f.random.uniform(-1e6, 1e6)),
        "Float64": lambda f: ("float64", f.random.uniform(-1e9, 1e9)),
        "FutureDate": _when("+1d", "+1y"),
        "Gamertag": lambda f: f.user_name() + str(f.random.randint(1, 99)),
        "Gender": lambda f: f.random.choice(("male", "female")),
        "HTTPMethod": lambda f: f.http_method(),
        "HTTPStatusCode": lambda f: ("int", f.http_status_code()),
        "HTTPStatusCodeSimple": lambda f: ("int", f.random.choice((200, 301, 302, 400, 404, 500))),
        "HTTPVersion": lambda f: f.random.choice(("HTTP/1.0", "HTTP/1.1", "HTTP/2.0")),
        "HackerPhrase": lambda f: f.sentence(),
        "HexColor": lambda f: f.hex_color(),
        "HexUint128": _hex(128),
        "HexUint16": _hex(16),
        "HexUint256": _hex(256),
        "HexUint32": _hex(32),
        "HexUint64": _hex(64),
        "HexUint8": _hex(8),
        "Hour": _int("int", 0, 23),
        "IPv4Address": lambda f: f.ipv4(),
        "IPv6Address": lambda f: f.ipv6(),
        "InputName": lambda f: f.random.choice(("first_name", "last_name", "email", "phone", "address", "city")),
        "Int16": _int("int16", -(2**15), 2**15 - 1),
        "Int32": _int("int32", -(2**31), 2**31 - 1),
        "Int64": _int("int64", -(2**63), 2**63 - 1),
        "Int8": _int("int8", -128, 127),
        "Isin": lambda f: f.bothify("??#########").upper() + str(f.random_digit()),
        "Job": lambda f: ("struct", [f.company(), f.job(), f.word(), f.word()]),
        "JobDescriptor": _ADJ,
        "JobLevel": _NOUN,
        "JobTitle": lambda f: f.job(),
        "Language": lambda f: f.language_name(),
        "LanguageAbbreviation": lambda f: f.language_code(),
        "LanguageBCP": lambda f: f.locale().replace("_", "-"),
        "LastName": lambda f: f.last_name(),
        "Latitude": lambda f: ("float64", float(f.latitude())),
        "Letter": lambda f: f.random_letter(),
        "Longitude": lambda f: ("float64", float(f.longitude())),
        "LoremIpsumWord": lambda f: f.word(),
        "MacAddress": lambda f: f.mac_address(),
        "Map": lambda f: ("map", {f.word(): f.word() for _ in range(f.random.randint(1, 4))}),
        "MiddleName": lambda f: f.first_name(),
        "Minute": _int("int", 0, 59),
        "Month": _int("int", 1, 12),
        "MonthString": lambda f: f.month_name(),
        "Movie": lambda f: ("struct", [f.sentence(nb_words=2).rstrip("."), f.word()]),
        "MovieName": lambda f: f.sentence(nb_words=2).rstrip("."),
        "Name": lambda f: f.name(),
        "NamePrefix": lambda f: f.prefix(),
        "NameSuffix": lambda f: f.suffix(),
        "NanoSecond": _int("int", 0, 999_999_999),
        "NiceColors": lambda f: ("[]string", [f.hex_color() for _ in range(5)]),
        "OperaUserAgent": lambda f: f.opera(),
        "PastDate": _when("-1y", "-1d"),
        "Person": lambda f: ("struct", [f.first_name(), f.last_name(), f.random.choice(("male", "female")), f.ssn()]),
        "PetName": lambda f: f.first_name(),
        "Phone": lambda f: f.numerify("##########"),
        "PhoneFormatted": lambda f: f.phone_number(),
        "Phrase": lambda f: f.sentence(nb_words=3).rstrip(".").lower(),
        "Product": lambda f: (
            "struct",
            [f.catch_phrase(), f.sentence(), ("float64", round(f.random.uniform(1, 1000), 2))],
        ),
        "ProductDescription": lambda f: f.sentence(),
        "ProductName": lambda f: f.catch_phrase(),
        "ProductUPC": lambda f: f.numerify("############"),
        "Question": lambda f: f.sentence().rstrip(".") + "?",
        "Quote": lambda f: f'"{f.sentence()}" - {f.name()}',
        "RGBColor": lambda f: ("[]int", [f.random.randint(0, 255) for _ in range(3)]),
        "SSN": lambda f: f.ssn().replace("-", ""),
        "SafariUserAgent": lambda f: f.safari(),
        "SafeColor": lambda f: f.safe_color_name(),
        "Second": _int("int", 0, 59),
        "SentenceSimple": lambda f: f.sentence(),
        "Slogan": lambda f: f.catch_phrase(),
        "State": lambda f: f.state(),
        "StateAbr": lambda f: f.state_abbr(),
        "Street": lambda f: f.street_address(),
        "StreetName": lambda f: f.last_name(),
        "StreetNumber": lambda f: f.building_number(),
        "StreetPrefix": lambda f: f.random.choice(("North", "East", "West", "South", "New", "Lake", "Port")),
        "StreetSuffix": lambda f: f.street_suffix(),
        "TimeZone": lambda f: f.timezone().split("/")[-1].replace("_", " "),
        "TimeZoneAbv": lambda f: f.random.choice(("UTC", "EST", "PST", "CET", "GMT", "IST", "JST")),
        "TimeZoneFull": lambda f: f.timezone(),
        "TimeZoneOffset": lambda f: ("float32", float(f.random.randint(-12, 14))),
        "TimeZoneRegion": lambda f: f.timezone(),
        "URL": lambda f: f.url(),
        "UUID": lambda f: f.uuid4(),
        "Uint16": _int("uint16", 0, 2**16 - 1),
        "Uint32": _int("uint32", 0, 2**32 - 1),
        "Uint64": _int("uint64", 0, 2**64 - 1),
        "Uint8": _int("uint8", 0, 255),
        "UserAgent": lambda f: f.user_agent(),
        "Username": lambda f: f.user_name(),
        "Vowel": lambda f: f.random.choice("aeiou"),
        "WeekDay": lambda f: f.day_of_week(),
        "Word": lambda f: f.word(),
        "Year": _int("int", 1900, 2025),
        "Zip": lambda f: f.zipcode(),
    }
)

_NOUNS = "Noun NounAbstract NounCollectiveAnimal NounCollectivePeople NounCollectiveThing NounCommon NounConcrete"
_NOUNS += " NounCountable NounProper NounUncountable BeerHop BeerMalt BeerName BeerStyle BeerYeast Bird BookGenre"
_NOUNS += " Breakfast CarFuelType CarMaker CarModel CarTransmissionType CarType Cat Dessert Dinner Dog Drink"
_NOUNS += " EmojiAlias EmojiCategory EmojiDescription EmojiTag FarmAnimal Fruit HackerAbbreviation HackerNoun"
_NOUNS += " HipsterWord Hobby Lunch MovieGenre ProductCategory ProductFeature ProductMaterial ProgrammingLanguage"
_NOUNS += " ProgrammingLanguageBest School Snack Vegetable MinecraftAnimal MinecraftArmorPart MinecraftArmorTier"
_NOUNS += " MinecraftBiome MinecraftDye MinecraftFood MinecraftMobBoss MinecraftMobHostile MinecraftMobNeutral"
_NOUNS += " MinecraftMobPassive MinecraftOre MinecraftTool MinecraftVillagerJob MinecraftVillagerLevel"
_NOUNS += " MinecraftVillagerStation MinecraftWeapon MinecraftWeather MinecraftWood PhraseNoun NounDeterminer"
_VERBS = "Verb VerbAction VerbHelping VerbIntransitive VerbLinking VerbTransitive HackerVerb HackeringVerb PhraseVerb"
_ADJECTIVES = "Adjective AdjectiveDemonstrative AdjectiveDescriptive AdjectiveIndefinite AdjectiveInterrogative"
_ADJECTIVES += " AdjectivePossessive AdjectiveProper AdjectiveQuantitative HackerAdjective Interjection"
_ADVERBS = "Adverb AdverbDegree AdverbFrequencyDefinite AdverbFrequencyIndefinite AdverbManner AdverbPlace"
_ADVERBS += " AdverbTimeDefinite AdverbTimeIndefinite PhraseAdverb"
_ERRORS = "Error ErrorDatabase ErrorGRPC ErrorHTTP ErrorHTTPClient ErrorHTTPServer ErrorObject ErrorRuntime"
_ERRORS += " ErrorValidation"
_GROUPS = (
    (_NOUNS, _NOUN),
    (_VERBS, _VERB),
    (_ADJECTIVES, _ADJ),
    (_ADVERBS, _ADV),
    (_ERRORS, lambda f: f.sentence(nb_words=4).rstrip(".").lower()),
    (
        "Preposition PrepositionCompound PrepositionDouble PrepositionSimple PhrasePreposition",
        lambda f: f.random.choice(_PREPOSITIONS),
    ),
    (
        "Pronoun PronounDemonstrative PronounIndefinite PronounInterrogative PronounObject PronounPersonal",
        lambda f: f.random.choice(_PRONOUNS),
    ),
    ("PronounPossessive PronounReflective PronounRelative", lambda f: f.random.choice(_PRONOUNS)),
    (
        "Connective ConnectiveCasual ConnectiveComparative ConnectiveComplaint ConnectiveExamplify",
        lambda f: f.random.choice(_CONNECTIVES),
    ),
    ("ConnectiveListing ConnectiveTime", lambda f: f.random.choice(_CONNECTIVES)),
)
TABLE: Mapping[str, Producer] = MappingProxyType(
    {**_TABLE, **{name: producer for names, producer in _GROUPS for name in names.split()}}
)
"""Every zero-argument gofakeit method name and how to produce its value."""

NEEDS_ARGUMENTS = frozenset(
    [
        "CSV",
        "CreditCardNumber",
        "DateRange",
        "Dice",
        "DigitN",
        "EmailText",
        "FixedWidth",
        "Float32Range",
        "Float64Range",
        "Generate",
        "HipsterParagraph",
        "HipsterSentence",
        "Image",
        "ImageJpeg",
        "ImagePng",
        "ImageURL",
        "IntRange",
        "JSON",
        "LatitudeInRange",
        "LetterN",
        "Lexify",
        "LogLevel",
        "LongitudeInRange",
        "LoremIpsumParagraph",
        "LoremIpsumSentence",
        "Markdown",
        "Number",
        "Numerify",
        "Paragraph",
        "Password",
        "Price",
        "RandomInt",
        "RandomMapKey",
        "RandomString",
        "RandomUint",
        "Regex",
        "SQL",
        "Sentence",
        "ShuffleAnySlice",
        "ShuffleInts",
        "ShuffleStrings",
        "Slice",
        "Struct",
        "Svg",
        "Teams",
        "Template",
        "UintRange",
        "Weighted",
        "XML",
    ]
)
"""gofakeit methods that take arguments: calling them from ``faker`` crashes Hoverfly."""


def go_print(value: Any) -> str:
    """A gofakeit result as Go's ``%s`` prints the ``reflect.Value`` holding it."""
    if isinstance(value, str):
        return value
    kind, payload = value
    if kind in ("float64", "float32"):
        return f"%!s({kind}={format_v_float(payload)})"
    if kind == "bool":
        return f"%!s(bool={'true' if payload else 'false'})"
    if kind == "time":
        assert isinstance(payload, datetime)
        text = payload.strftime("%Y-%m-%d %H:%M:%S")
        micros = f"{payload.microsecond:06d}".rstrip("0")
        return text + ("." + micros if micros else "") + " +0000 UTC"
    if kind == "[]string":
        return "[" + " ".join(payload) + "]"
    if kind == "[]int":
        return "[" + " ".join(f"%!s(int={n})" for n in payload) + "]"
    if kind == "struct":
        return "&{" + " ".join(go_print(item) for item in payload) + "}"
    if kind == "map":
        return "map[" + " ".join(f"{k}:{v}" for k, v in sorted(payload.items())) + "]"
    return f"%!s({kind}={payload})"
