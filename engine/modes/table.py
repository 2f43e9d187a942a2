"""The mode table: each mode's class by its name. Adding a mode is a class and a line here (and its
name in ``engine.fleet.config.Mode``); nothing else dispatches on mode names."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from simproxy.engine.fleet.config import Mode
from simproxy.engine.modes.base import Kit, ProxyMode
from simproxy.engine.modes.capture_mode import CaptureMode
from simproxy.engine.modes.diff import DiffMode
from simproxy.engine.modes.modify import ModifyMode, SynthesizeMode
from simproxy.engine.modes.simulate import SimulateMode, SpyMode

_CLASSES = (SimulateMode, CaptureMode, SpyMode, SynthesizeMode, ModifyMode, DiffMode)
MODE_CLASSES: Mapping[Mode, type[SimulateMode | CaptureMode | SynthesizeMode | ModifyMode | DiffMode]] = (
    MappingProxyType({cls.name: cls for cls in _CLASSES})
)


def build_modes(kit: Kit) -> dict[str, ProxyMode]:
    """One worker's modes, by name (a mode in the store's configuration is looked up here)."""
    return {name.value: make(kit) for name, make in MODE_CLASSES.items()}  # plain keys: fast lookups
