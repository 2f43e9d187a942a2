"""Post-serve actions: a local script or a remote URL run after a response was sent
(hoverfly-admin.md §3.9, §9).

An action waits 200 ms plus its ``delayInMs``, then runs with the served pair (the middleware
payload) on stdin or as a POST body, at most ``concurrency`` at once. When it has finished, the
request's journal entry gets its ``postServeAction`` record (name, invoked, completed, and for a
remote action the correlation id and HTTP status). Nothing here can delay a response: the
proxy has written the response before ``schedule`` is called, and every run is a task the runner
owns and cancels on close.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import uuid
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from simproxy.engine.errors import UpstreamError
from simproxy.engine.execution.scripts import ScriptFiles, run_program
from simproxy.engine.execution.tasks import TaskSet
from simproxy.engine.fleet.config import ActionSpec
from simproxy.engine.journal.entries import post_serve_action_view, record_entry
from simproxy.engine.outbound.goerrors import exec_error
from simproxy.engine.outbound.hooks import HookError, Hooks, hook_name
from simproxy.engine.outbound.middleware import Exchange, encode_exchange, exchange_document
from simproxy.engine.outbound.pool import PoolBusy, PoolFailure, PoolKey, ProcessPool
from simproxy.engine.outbound.upstream import Upstream
from simproxy.engine.simulation.model import Response
from simproxy.engine.wire.request import RequestDetails
from simproxy.engine.wire.response import Wire
from simproxy.store import StoreError

if TYPE_CHECKING:
    from simproxy.engine.fleet.metrics import MetricsBuffer
    from simproxy.engine.journal.recorder import Recorder
    from simproxy.store import JournalStore

log = logging.getLogger(__name__)

BASE_DELAY = 0.2
"""Hoverfly sleeps this long before every action, on top of its ``delayInMs``."""
ACTION_TIMEOUT = 30.0
"""A local action still running after this is killed; a remote one is abandoned (Hoverfly's 30 s)."""
JOURNAL_WAIT = 1.0
"""How long a finished action waits for its request's journal entry to be stored."""
DEFAULT_CONCURRENCY = 64
MAX_PENDING = 10_000
"""Actions waiting or running at once per worker; beyond them an action is dropped (counted in
``/metrics``, and its request's journal entry says so)."""
DROPPED_KEPT = 1_000
"""Dropped actions whose journal entries are still to be marked; beyond them only the count is kept."""


@dataclass(frozen=True, slots=True)
class Served:
    """What an action needs about the request it follows, and where its journal entry is."""

    name: str
    """The name the response gave (recorded even when the fallback action ran)."""
    request: RequestDetails
    wire: Wire
    entry_id: str
    received: float
    latency_ms: float
    mode: str


class ActionRunner:
    def __init__(
        self,
        upstream: Upstream,
        store: JournalStore,
        recorder: Recorder,
        *,
        concurrency: int = DEFAULT_CONCURRENCY,
        hoverfly_payload: bool = False,
        metrics: MetricsBuffer | None = None,
    ) -> None:
        self.upstream = upstream
        self.hoverfly_payload = hoverfly_payload
        """``-compat hoverfly``: empty request maps are ``{}`` and the correlation header is named
        ``X-Correlation-Id``, as Hoverfly sends them."""
        self.store = store
        self.recorder = recorder
        self._slots = asyncio.Semaphore(concurrency)
        self._tasks = TaskSet()
        self._scripts = ScriptFiles("simproxy-actions-")
        self._hooks = Hooks()
        self._pools: dict[PoolKey, ProcessPool] = {}
        self.metrics = metrics
        """Where dropped and failed actions are counted (``/metrics``)."""
        self.dropped = 0
        self.failed = 0
        self.max_pending = MAX_PENDING
        self._unmarked: collections.deque[Served] = collections.deque(maxlen=DROPPED_KEPT)
        """Dropped actions whose journal entries are yet to say so (the oldest go first when full)."""
        self._marking = False

    def __len__(self) -> int:
        return len(self._tasks)

    def schedule(self, action: ActionSpec, served: Served) -> None:
        if len(self._tasks) >= self.max_pending:
            self.dropped += 1
            if self.metrics is not None:
                self.metrics.actions("dropped")
            log.error("post-serve action dropped: too many pending", extra={"fields": {"name": served.name}})
            if served.entry_id:
                self._unmarked.append(served)
                if not self._marking:
                    self._marking = True
                    self._tasks.spawn(self._mark_dropped(), name="post-serve-action:dropped")
            return
        self._tasks.spawn(self._run(action, served), name=f"post-serve-action:{served.name}")

    async def aclose(self) -> None:
        await self._tasks.aclose()
        pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            await pool.aclose()
        await self._hooks.aclose()
        self._scripts.close()

    async def _run(self, action: ActionSpec, served: Served) -> None:
        await asyncio.sleep(BASE_DELAY + action.delay_ms / 1000)
        wire = served.wire
        response = Response(
            status=wire.status, body=wire.raw_body, headers=wire.headers, post_serve_action=wire.post_serve_action
        )
        exchange = Exchange(served.request, response)
        hook = "" if self.hoverfly_payload or action.remote else hook_name(action.binary)
        # a hook is handed a document of its own, as middleware hooks are; the others read JSON text
        payload = b"" if hook else encode_exchange(exchange, empty_maps=self.hoverfly_payload)
        async with self._slots:
            invoked = datetime.now().astimezone()
            failed = False
            if action.remote:
                correlation, status = await self._remote(action, payload)
            elif hook:
                correlation, status = "", 0
                failed = not await self._hook(action, hook, exchange_document(exchange, own=True))
            elif action.pool > 0 and not self.hoverfly_payload:
                correlation, status = "", 0
                failed = not await self._pooled(action, payload)
            else:
                correlation, status = "", 0
                await self._local(action, payload)
            completed = datetime.now().astimezone()
        if failed:
            self.failed += 1
            if self.metrics is not None:
                self.metrics.actions("failed")
        if served.entry_id:
            record = post_serve_action_view(served.name, invoked, completed, correlation, status)
            if failed:
                record["failed"] = True
            await self._journal(served, record)

    async def _mark_dropped(self) -> None:
        """Write ``{"name", "dropped": true}`` into the journal entry of each dropped action, one at a
        time (one task for all of them, however many are dropped)."""
        try:
            while self._unmarked:
                served = self._unmarked.popleft()
                await self._journal(served, {"name": served.name, "dropped": True})
        finally:
            self._marking = False

    async def _hook(self, action: ActionSpec, name: str, document: dict[str, Any]) -> bool:
        """Call the in-process hook; whether it returned without raising."""
        try:
            await asyncio.wait_for(self._hooks.call(name, document), ACTION_TIMEOUT)
        except (HookError, TimeoutError) as exc:
            error = str(exc) or f"no answer within {ACTION_TIMEOUT:g}s"
            log.error(f"Error from post serve action {action.name}", extra={"fields": {"error": error}})
            return False
        return True

    async def _pooled(self, action: ActionSpec, payload: bytes) -> bool:
        """One line to a long-lived process, whose one line back (any text) says it is done."""
        command = (action.binary, self._scripts.path(action.script)) if action.script else (action.binary,)
        key = PoolKey(command, action.pool)
        pool = self._pools.get(key)
        if pool is None:
            pool = self._pools[key] = ProcessPool(key, ACTION_TIMEOUT, queue=MAX_PENDING)
        try:
            reply = await pool.call(payload, lambda line: None)
        except (PoolBusy, PoolFailure) as exc:
            stderr = exc.stderr.decode("utf-8", "replace") if isinstance(exc, PoolFailure) else ""
            log.error(f"Error from post serve action {action.name}", extra={"fields": {"error": str(exc),
                      "stderr": stderr}})  # fmt: skip
            return False
        if reply.strip():
            log.info(f"Output from post serve action {action.name}",
                     extra={"fields": {"output": reply.decode("utf-8", "replace")}})  # fmt: skip
        return True

    async def _local(self, action: ActionSpec, payload: bytes) -> None:
        command = [action.binary, self._scripts.path(action.script)]
        try:
            done = await run_program(command, payload, ACTION_TIMEOUT)
        except TimeoutError:  # an OSError too: caught first
            log.error("Error when executing post serve action", extra={"fields": {"error": "timeout"}})
            return
        except OSError as exc:
            log.error("Error when executing post serve action", extra={"fields": {"error": exec_error(command, exc)}})
            return
        if done.stdout:
            log.info(f"Output from post serve action {action.name}",
                     extra={"fields": {"output": done.stdout.decode("utf-8", "replace")}})  # fmt: skip
        if done.stderr:
            log.error(f"Error from post serve action {action.name}",
                      extra={"fields": {"error": done.stderr.decode("utf-8", "replace")}})  # fmt: skip

    async def _remote(self, action: ActionSpec, payload: bytes) -> tuple[str, int]:
        correlation = str(uuid.uuid4())
        header = "X-Correlation-Id" if self.hoverfly_payload else "X-CORRELATION-ID"
        headers = [("Content-Type", "application/json"), (header, correlation)]
        try:
            resp = await asyncio.wait_for(self.upstream.send("POST", action.remote, headers, payload), ACTION_TIMEOUT)
        except (UpstreamError, TimeoutError) as exc:
            log.error("Error when executing remote post serve action", extra={"fields": {"error": str(exc)}})
            return correlation, 0
        if resp.status != 200:
            log.error("Remote post serve action did not process payload",
                      extra={"fields": {"status": resp.status, "url": action.remote}})  # fmt: skip
        else:
            log.info("Remote post serve action invoked successfully", extra={"fields": {"url": action.remote}})
        return correlation, resp.status

    async def _journal(self, served: Served, record: dict[str, object]) -> None:
        entry = record_entry(
            served.entry_id, served.request, served.wire, served.mode, served.received, served.latency_ms
        )
        body = self.recorder.amended(replace(entry, post_serve_action=record))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + JOURNAL_WAIT
        while True:
            try:
                if await self.store.journal_amend(served.entry_id, body):
                    return
            except StoreError as exc:
                log.warning("post-serve action not recorded in the journal: %s", exc)
                return
            if loop.time() >= deadline:
                return  # the entry was dropped (journal full) or never flushed
            await asyncio.sleep(0.05)
