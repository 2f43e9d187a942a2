"""Engine errors (a branch of the tree drawn in store/errors.py).

EngineError
├── SimulationError   a simulation that cannot be compiled (admin answers 400, nothing stored)
└── ImportFailure     a simulation Hoverfly rejects at import time with 500 "An error occurred: ..."
"""

from __future__ import annotations

from store.errors import SimproxyError


class EngineError(SimproxyError):
    """Base class of engine errors."""


class SimulationError(EngineError):
    """The simulation is well-formed JSON of the right shape but cannot be used.

    ``path`` points at the offending element, e.g. ``data.pairs[3].request.path[0]``.
    """

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        self.message = message


class ImportFailure(EngineError):
    """A failure Hoverfly reports as 500 ``An error occurred: <reason>`` (e.g. a bad delay)."""
