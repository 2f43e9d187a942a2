"""Global faults (``data.globalActions.faults``), compiled with the simulation.

A rule applies to a request as a global delay does (engine/simulation/delays.py): its Go regex is
searched in ``destination + path`` and its method, when set, must be the request's. The first rule
that applies gives the fault, and only to an answer whose pair asked for none. Whether the fault
is then applied to that request (its ``fraction``) is rolled when the answer is written.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.errors import SimulationError
from engine.gocompat.goregex import GoRegex, InvalidPattern, compile_go
from engine.simulation.model import Fault, Simulation


@dataclass(frozen=True, slots=True)
class FaultRule:
    pattern: GoRegex
    method: str
    """Lower-cased; empty matches every method."""
    fault: Fault

    def applies(self, destination_and_path: str, method: str) -> bool:
        if self.method and self.method != method.lower():
            return False
        return self.pattern.search(destination_and_path) is not None


FaultRules = tuple[FaultRule, ...]
"""A plain tuple, so that a simulation without global faults costs one truthiness check."""


def compile_faults(sim: Simulation) -> FaultRules:
    """The simulation's global faults, their patterns compiled (``SimulationError`` names a bad one)."""
    rules = []
    for index, entry in enumerate(sim.faults):
        try:
            pattern = compile_go(entry.url_pattern)
        except InvalidPattern as exc:
            path = f"data.globalActions.faults[{index}].urlPattern"
            raise SimulationError(path, f"invalid pattern {entry.url_pattern!r}: {exc}") from exc
        rules.append(FaultRule(pattern, entry.http_method.lower(), entry.fault))
    return tuple(rules)


def global_fault(rules: FaultRules, destination: str, path: str, method: str) -> Fault | None:
    """The fault of the first rule that applies to the request, if any."""
    target = destination + path
    return next((rule.fault for rule in rules if rule.applies(target, method)), None)
