"""Global faults (``data.globalActions.faults``), compiled with the simulation.

A rule applies to a request as a global delay does (engine/simulation/delays.py): its Go regex is
searched in ``destination + path`` and its method, when set, must be the request's. The first rule
that applies gives the fault, and only to an answer whose pair asked for none. Whether that request
gets it (its ``fraction``) is rolled there, once: the answer carries the fault only when it does.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from simproxy.engine.errors import SimulationError
from simproxy.engine.gocompat.goregex import GoRegex, InvalidPattern, compile_go
from simproxy.engine.simulation.model import Fault, Simulation


def rolled(fault: Fault, rng: random.Random) -> bool:
    """Whether this request gets ``fault``: its ``fraction`` is the probability (1: no roll)."""
    return fault.fraction >= 1 or rng.random() < fault.fraction


@dataclass(frozen=True, slots=True)
class FaultRule:
    pattern: GoRegex
    method: str
    """Lower-cased; empty matches every method."""
    fault: Fault
    given: Fault
    """What an answer the roll chose carries: ``fault`` with ``fraction`` 1, so never rolled again."""

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
        rules.append(FaultRule(pattern, entry.http_method.lower(), entry.fault, replace(entry.fault, fraction=1.0)))
    return tuple(rules)


def global_fault(rules: FaultRules, destination: str, path: str, method: str, rng: random.Random) -> Fault | None:
    """The fault this request gets from the first rule that applies to it: None when none applies,
    or when the rule's ``fraction`` leaves this request alone (rolled here, once)."""
    target = destination + path
    rule = next((rule for rule in rules if rule.applies(target, method)), None)
    return None if rule is None or not rolled(rule.fault, rng) else rule.given
