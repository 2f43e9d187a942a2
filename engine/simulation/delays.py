"""Response delays (hoverfly-engine.md §7): per-response fixed and log-normal, else the global ones.

Compiled with the simulation; a delay is only computed here, and applied by the engine with
``asyncio.sleep`` so a delayed response never holds up any other request on the worker.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from simproxy.engine.errors import ImportFailure
from simproxy.engine.gocompat.goregex import GoRegex, InvalidPattern, compile_go
from simproxy.engine.simulation.model import LogNormal, Response, Simulation


@dataclass(frozen=True, slots=True)
class GlobalDelay:
    pattern: GoRegex
    method: str
    """Lower-cased; empty matches every method."""
    fixed_ms: int = 0
    log_normal: LogNormal | None = None

    def applies(self, destination_and_path: str, method: str) -> bool:
        if self.method and self.method != method.lower():
            return False
        return self.pattern.search(destination_and_path) is not None


@dataclass(frozen=True, slots=True)
class Delays:
    fixed: tuple[GlobalDelay, ...] = ()
    log_normal: tuple[GlobalDelay, ...] = ()
    any: bool = field(init=False, compare=False)
    """Some global delay is set: without one, a response's own delay decides (every request asks)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "any", bool(self.fixed or self.log_normal))

    @classmethod
    def compile(cls, sim: Simulation) -> Delays:
        return cls(
            tuple(GlobalDelay(_pattern(d.url_pattern), d.http_method.lower(), d.delay) for d in sim.delays),
            tuple(
                GlobalDelay(_pattern(d.url_pattern), d.http_method.lower(), log_normal=d.params)
                for d in sim.delays_log_normal
            ),
        )

    def __bool__(self) -> bool:
        return self.any

    def for_response(self, response: Response, destination: str, path: str, method: str, rng: random.Random) -> float:
        """Seconds to wait before sending ``response`` (Hoverfly's precedence, §7.4)."""
        if response.fixed_delay > 0 or response.log_normal_delay is not None:
            ms = max(response.fixed_delay, 0)
            if response.log_normal_delay is not None:
                ms += sample_log_normal(response.log_normal_delay, rng)
            return ms / 1000
        if not self.any:
            return 0.0
        target = destination + path
        ms = 0
        fixed = next((d for d in self.fixed if d.applies(target, method)), None)
        if fixed is not None:
            ms += max(fixed.fixed_ms, 0)
        spread = next((d for d in self.log_normal if d.applies(target, method)), None)
        if spread is not None and spread.log_normal is not None:
            ms += sample_log_normal(spread.log_normal, rng)
        return ms / 1000


def _pattern(text: str) -> GoRegex:
    try:
        return compile_go(text)
    except InvalidPattern as exc:  # Hoverfly's import error (a 500), whichever check meets it first
        raise ImportFailure(f"Response delay entry skipped due to invalid pattern : {text}") from exc


def sample_log_normal(params: LogNormal, rng: random.Random) -> int:
    """One draw in ms: mu = ln(median), sigma = sqrt(2 (ln(mean) - mu)), truncated, then clamped."""
    mu = math.log(params.median)
    sigma = math.sqrt(max(2 * (math.log(params.mean) - mu), 0.0))
    value = int(rng.lognormvariate(mu, sigma))
    if params.max and value > params.max:
        return params.max
    if params.min and value < params.min:
        return params.min
    return value
