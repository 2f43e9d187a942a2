"""Wire shapes of the admin API: pure converters from engine values to JSON-ready dicts, and back.

Key orders follow Hoverfly's Go structs (clients and tests compare bytes); map keys are sorted.
Request bodies are read the way Go's decoder reads them: keys match case-insensitively.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from types import MappingProxyType
from typing import Any

from simproxy.admin.api.jsonbody import decode, shown, wrong_shape
from simproxy.admin.errors import BadRequest
from simproxy.engine.fleet.config import COUNTERS, MODES, MiddlewareSpec, Mode, ModeArguments, RuntimeConfig
from simproxy.engine.gocompat.dialect import Dialect
from simproxy.engine.modes.cors import cors_view
from simproxy.engine.simulation.codec import export_simulation
from simproxy.engine.simulation.model import Simulation
from simproxy.engine.version import VERSION

SCHEMA_VERSION = "v5.3"
MALFORMED = "Malformed JSON"
NOT_A_MODE = "Not a valid mode"

# Which arguments each mode shows, in Hoverfly's field order (core/modes/*.go View()).
_ARGUMENT_ORDER = (
    "headersWhitelist",
    "matchingStrategy",
    "stateful",
    "overwriteDuplicate",
    "captureOnMiss",
    "captureDelay",
)
_SHOWN: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        Mode.SIMULATE.value: ("matchingStrategy",),
        Mode.CAPTURE.value: ("headersWhitelist", "stateful", "overwriteDuplicate", "captureDelay"),
        Mode.SPY.value: _ARGUMENT_ORDER,
        Mode.DIFF.value: ("headersWhitelist",),
        Mode.MODIFY.value: (),
        Mode.SYNTHESIZE.value: (),
    }
)


# -- reading request bodies the Go way ---------------------------------------------------------------


def load_object(body: bytes) -> dict[str, Any]:
    """A JSON object body; ``null`` counts as an empty object (Go leaves the struct at zero values).

    Anything else is Hoverfly's ``Malformed JSON``, which the spec dialect follows with where and
    why (admin/api/jsonbody.py)."""
    value = decode(body, MALFORMED)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise wrong_shape(MALFORMED, "the body must be a JSON object", value)
    return value


def get_field(obj: dict[str, Any], name: str) -> Any:
    """``obj[name]``, or the value of a key equal to ``name`` ignoring case (encoding/json's rule)."""
    if name in obj:
        return obj[name]
    lowered = name.lower()
    for key, value in obj.items():
        if key.lower() == lowered:
            return value
    return None


_KINDS: Mapping[type, str] = MappingProxyType(
    {str: "a string", int: "a whole number", bool: "true or false", list: "an array", dict: "an object"}
)


def typed(obj: dict[str, Any], name: str, kind: type, default: Any, *, where: str = "") -> Any:
    """The member ``name`` of ``obj`` (``default`` when absent or null), which must be a ``kind``:
    else Hoverfly's ``Malformed JSON`` (the spec dialect names the member, ``where`` + ``name``)."""
    value = get_field(obj, name)
    if value is None:
        return default
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise wrong_shape(MALFORMED, f'"{where}{name}" must be {_KINDS[kind]}', value)
    return value


# -- simulation ----------------------------------------------------------------------------


def now_rfc3339() -> str:
    """Go's RFC 3339 with seconds and the local offset (``Z`` for UTC)."""
    text = datetime.now().astimezone().isoformat(timespec="seconds")
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def meta_view(dialect: Dialect) -> dict[str, str]:
    return {"schemaVersion": SCHEMA_VERSION, dialect.version_key: dialect.release, "timeExported": now_rfc3339()}


def simulation_view(sim: Simulation, dialect: Dialect) -> dict[str, Any]:
    return {"data": export_simulation(sim), "meta": meta_view(dialect)}


def warnings_view(warnings: tuple[str, ...]) -> dict[str, Any]:
    return {"warnings": [{"message": w} for w in warnings]}


# -- configuration ---------------------------------------------------------------------------


def arguments_view(mode: str, args: ModeArguments) -> dict[str, Any]:
    shown = args.to_json()
    if mode == "simulate":
        shown.setdefault("matchingStrategy", "strongest")
    allowed = _SHOWN.get(mode, ())
    return {key: shown[key] for key in _ARGUMENT_ORDER if key in allowed and key in shown}


def mode_view(config: RuntimeConfig) -> dict[str, Any]:
    return {"mode": config.mode, "arguments": arguments_view(config.mode, config.args())}


def counters_view(counters: dict[str, int]) -> dict[str, int]:
    return {name: int(counters.get(name, 0)) for name in COUNTERS}


def usage_view(counters: dict[str, int], dialect: Dialect) -> dict[str, Any]:
    """The spec's dialect gives both wrappers: ``metrics`` (the spec's) and ``usage`` (Hoverfly's, what
    its clients read); Hoverfly's gives ``usage`` alone."""
    shown = {"counters": counters_view(counters)}
    return dict.fromkeys(dialect.usage_keys, shown)


def middleware_view(spec: MiddlewareSpec) -> dict[str, Any]:
    """Hoverfly's three members; ``pool`` too when a long-lived pool is set (only the spec dialect
    accepts one)."""
    view: dict[str, Any] = {"binary": spec.binary, "script": spec.script, "remote": spec.remote}
    if spec.pool:
        view["pool"] = spec.pool
    return view


def config_view(
    config: RuntimeConfig,
    counters: dict[str, int],
    *,
    webserver: bool,
    upstream_proxy: str,
    cors: bool = False,
    release: str = VERSION,
) -> dict[str, Any]:
    return {
        "cors": cors_view(cors),
        "destination": config.destination,
        "middleware": middleware_view(config.middleware),
        "mode": config.mode,
        "arguments": arguments_view(config.mode, config.args()),
        "isWebServer": webserver,
        "usage": {"counters": counters_view(counters)},
        "version": release,
        "upstreamProxy": upstream_proxy,
    }


def parse_mode(body: bytes, *, webserver: bool, product: str = "simproxy") -> tuple[str, ModeArguments]:
    """Validate a ``PUT .../mode`` body in Hoverfly's order and return the mode and its arguments."""
    obj = load_object(body)
    mode = typed(obj, "mode", str, "")
    raw_args = typed(obj, "arguments", dict, {})
    whitelist = typed(raw_args, "headersWhitelist", list, [], where="arguments.")
    for header in whitelist:
        if not isinstance(header, str):
            raise wrong_shape(MALFORMED, '"arguments.headersWhitelist" must hold strings', header)
    strategy = typed(raw_args, "matchingStrategy", str, None, where="arguments.")
    flags = {key: typed(raw_args, key, bool, False, where="arguments.") for key in _ARGUMENT_ORDER[2:]}
    if mode not in MODES:
        raise BadRequest(NOT_A_MODE, detailed=f"{NOT_A_MODE}: {shown(mode)}; one of {', '.join(sorted(MODES))}")
    if webserver and mode in ("capture", "modify"):
        raise BadRequest(f"Cannot change the mode of {product} to {mode} when running as a webserver")
    if "*" in whitelist and len(whitelist) > 1:
        raise BadRequest("Must provide a list containing only an asterix, or a list containing only headers names")
    if mode == "simulate" and strategy is not None and strategy.lower() not in ("strongest", "first"):
        raise BadRequest("Only matching strategy of 'first' or 'strongest' is permitted")
    if mode in ("simulate", "spy") and strategy is None:
        strategy = "strongest"
    return mode, ModeArguments(
        headers_whitelist=tuple(whitelist),
        matching_strategy=strategy,
        stateful=flags["stateful"],
        overwrite_duplicate=flags["overwriteDuplicate"],
        capture_on_miss=flags["captureOnMiss"],
        capture_delay=flags["captureDelay"],
    )
