"""The root of simproxy's error tree, and the store's own errors.

The root lives in the lowest layer so that every package (admin -> engine -> store) can extend it:

    SimproxyError
    ├── store.StoreError              a store operation failed
    │   ├── store.StoreUnavailable    the backing server cannot be reached (admin answers 503)
    │   │   └── store.WriteUnconfirmed  ... while a document write was sent: applied or not, unknown
    │   ├── store.SimulationChanged   a state step decided on a simulation that was replaced meanwhile
    │   └── store.EraChanged          a state step decided in an era of the state that has ended
    ├── engine.EngineError            see engine/errors.py
    ├── admin.ApiError                see admin/errors.py (carries the HTTP status)
    ├── admin.kit.client.ClientError      a call of the Python admin client failed
    │   ├── admin.kit.client.ApiError           the server refused it (its status and error text)
    │   └── admin.kit.client.ServerUnreachable  no answer came (also a ConnectionError)
    └── admin.kit.harness.HarnessError    the pytest harness cannot give a test its simproxy
        └── admin.kit.cassettes.CassetteError   a cassette that cannot be replayed or recorded
"""

from __future__ import annotations


class SimproxyError(Exception):
    """Base class of every error simproxy raises on purpose."""


class StoreError(SimproxyError):
    """A store operation failed."""


class StoreUnavailable(StoreError):
    """The backing server (Redis) cannot be reached right now."""


class WriteUnconfirmed(StoreUnavailable):
    """A document write was sent, then the store stopped answering for longer than its outcome was
    looked for: it was applied or not before the store stopped, and it can no longer be applied."""


class SimulationChanged(StoreError):
    """A state step was decided on a simulation that is no longer the stored one: nothing was
    changed. The worker loads the new simulation and decides again."""


class EraChanged(StoreError):
    """A state step was decided in an era of the state that has ended (an import, or a write of the
    whole state, started another one): nothing was changed. The worker reads the state again."""
