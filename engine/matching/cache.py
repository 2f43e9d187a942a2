"""The match cache: Hoverfly's request cache (core/cache), kept per worker and mirrored to the store.

A worker answers from its own LRU, so the request path never waits on the store. Every entry it
makes is also written (buffered) to the store, which is what ``GET /api/v2/cache`` lists and what a
worker loads when the simulation grows by an append (Hoverfly keeps the cache across a POST) or
when it starts, so all workers hold the same entries. Entries belong to a *generation*: the
simulation's lineage (new on every replace) and the config's cache epoch (bumped by a flush).

A worker alone on an in-process store mirrors nothing, and holds the entries of ``plain`` requests
(whose md5 key no other request can have) by their fast key: their md5 key is worked out only when
the cache is listed or another request looks for it. The md5 is a third of what a new request costs
the cache, and the cache a fifth of what a request that never comes again costs.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

import orjson

from simproxy.engine.gocompat.gojson import go_text, marshal
from simproxy.engine.matching.scoring import ClosestMiss, CompiledPair, CompiledSimulation
from simproxy.engine.simulation.codec import encode_pair, encode_request, encode_response
from simproxy.engine.wire.hot import hot_value
from simproxy.engine.wire.request import RequestDetails
from simproxy.engine.wire.response import Wire, plain_error

Generation = tuple[str, int]
"""(simulation lineage, cache epoch)."""
FastKey = tuple[str, str, str, str, str, str | None]
"""What a request's md5 key is made of, before hashing: (destination or "", method, path, raw query,
body, content type when there is a body). Equal fast keys give equal md5 keys, so a worker can find
its entries without hashing; entries from other workers are found by md5 once, then by fast key."""
HeldKey = str | FastKey
"""What the LRU holds an entry under: its md5 key, or (an entry a lone worker made) its fast key."""


@hot_value
class CacheEntry:
    key: str
    pair: CompiledPair | None
    """The pair a hit serves; None for a cached miss."""
    miss: Wire | None = None
    """The 502 a cached miss serves again, word for word (with the request of the first miss)."""
    closest: ClosestMiss | None = None


def cache_key(req: RequestDetails, webserver: bool) -> str:
    """Hoverfly's key: md5 of destination (not in webserver mode), form JSON, path, method, query, body."""
    destination = "" if webserver else req.destination
    form = _form_json(req.form) if req.form else ""
    query = canonical_query(req.query) if req.query else ""
    text = f"{destination}{form}{req.path}{req.method}{query}{req.body}"
    return hashlib.md5(text.encode("utf-8", "surrogateescape"), usedforsecurity=False).hexdigest()


def _form_json(form: dict[str, list[str]]) -> str:
    """The form as Hoverfly hashes it: Go's ``json.Marshal`` (names sorted, ``<>&`` escaped), each
    byte that was not UTF-8 already a U+FFFD (checked against Hoverfly v1.12.10's cache keys)."""
    return marshal({go_text(name): [go_text(v) for v in values] for name, values in form.items()}) or ""


def canonical_query(query: dict[str, list[str]]) -> str:
    """``k=v`` for every value, grouped by name, names and then values sorted, joined with ``&``."""
    if len(query) == 1:  # the common case, without sorting
        ((name, values),) = query.items()
        if len(values) == 1:
            return f"{name}={values[0]}"
    return "&".join([f"{name}={value}" for name in sorted(query) for value in sorted(query[name])])


def key_of(fast: FastKey) -> str:
    """The md5 key of the requests whose fast key is ``fast`` (its destination is "" in webserver
    mode, where the md5 leaves the destination out)."""
    destination, method, path, raw_query, body, ctype = fast
    headers = {"Content-Type": [ctype]} if ctype is not None else {}
    return cache_key(RequestDetails.build(method, "http", destination, path, raw_query, body, headers), False)


_PLAIN_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"})
"""Methods no other method starts or ends with."""


def plain(req: RequestDetails) -> bool:
    """Whether the fields Hoverfly's md5 runs together (destination, path, method, query, body: no
    separator between them) can be told apart again in ``req``'s, so that no request of another
    fast key has its md5 key: no body (which could spell a query, and whose content type is in the
    fast key only); a destination without ``/`` and a path that starts with ``/`` and has no
    capitals (so the first ``/`` and the method's first capital end them); one of the common
    methods (none of which another method starts or ends with); a query that is its own canonical
    form and that no other query string parses into (no ``&``, no escape, no ``+``, no bare name, no
    ``./``)."""
    if req.body or req.method not in _PLAIN_METHODS or "/" in req.destination:
        return False
    path, raw = req.path, req.raw_query
    if path[:1] != "/":  # a target such as * or a://b
        return False
    if not path.islower() and path.lower() != path:  # islower: no capital, and no copy made to know
        return False
    return not raw or ("=" in raw and "&" not in raw and "%" not in raw and "+" not in raw and raw[:2] != "./")


def fast_key(req: RequestDetails, webserver: bool) -> FastKey:
    ctype = req.headers_lower.get("content-type") if req.body else None
    return (
        "" if webserver else req.destination,
        req.method,
        req.path,
        req.raw_query,
        req.body,
        ctype[0] if ctype else None,
    )


UNKEPT_BODY = 4096
"""The longest request body whose fast key ``MatchCache.unkept`` notes."""


class MatchCache:
    """A bounded LRU of match results for one generation; ``pending`` collects what to mirror.

    ``mirrored=False`` (a worker alone on an in-process store) collects nothing: there is no other
    worker to share entries with, and the admin API lists this cache itself (``entries``). Such a
    cache holds the entries of ``plain`` requests by their fast key, without working their md5 key
    out (``CacheEntry.key`` ""), and finds them by it: such a request shares its md5 key with no
    other fast key. A plain request looks further only while the cache holds entries by md5 key
    (other requests', a preloaded pair's); any other request looks by md5 key, among those and
    among the plain entries, whose md5 keys it works out then, once each (``_plain_with``).
    """

    def __init__(self, capacity: int, *, enabled: bool = True, mirrored: bool = True) -> None:
        self.capacity = capacity
        self.enabled = enabled
        self.mirrored = mirrored
        self.generation: Generation = ("", 0)
        self._entries: OrderedDict[HeldKey, CacheEntry] = OrderedDict()
        self._plain_may_share: set[str] = set()
        """The md5 keys held (a request's that is not plain, a preloaded or a loaded entry's): while
        there is none, a plain request that its fast key finds nothing for has nothing more to find."""
        self._md5_of: dict[FastKey, str] = {}
        """The md5 keys worked out for plain entries (by ``entries`` and ``_plain_with``)."""
        self._plain_by_md5: dict[str, FastKey] = {}
        """md5 key -> the plain entry's fast key, for the plain entries held when last asked."""
        self._unindexed: list[FastKey] | None = None
        """Plain entries held since ``_plain_by_md5`` was last brought up to date; None until a
        request first looks among them by md5 key (a load of plain requests keeps no list)."""
        self._plain_fast: FastKey | None = None
        """The fast key of the last lookup, when it was a plain request's (``holds_by_fast``)."""
        self._recent: HeldKey | None = None
        """The key last made the most recently used, as the object it was given as: touching it
        again changes nothing, and is not looked up (a tuple's lookup hashes six fields)."""
        self._aliases: OrderedDict[FastKey, HeldKey] = OrderedDict()
        """Fast key -> what the entry a lookup found by md5 key for it is held under."""
        self._unkept: dict[FastKey, None] = {}
        """Fast keys whose lookup found nothing and whose result was not kept (it depends on headers
        or state): nothing has been added since, so their next lookup can skip the md5."""
        self.changes = 0
        """Bumped by every entry added and every reset: a result worked out across an await (a
        stateful request) is kept, or noted ``unkept``, only if nothing changed since its lookup."""
        self.pending: dict[str, CacheEntry] = {}
        self.dropped = 0
        """Entries not mirrored because the store was away and newer ones filled the buffer."""

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: HeldKey) -> CacheEntry | None:
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
            self._recent = key
        return entry

    def lookup(self, req: RequestDetails, webserver: bool) -> tuple[FastKey, str, CacheEntry | None]:
        """(fast key, md5 key, entry) for a request: the md5 key is "" when the fast key decided (it
        found the entry, a plain request found nothing while nothing is held by md5 key, or it is
        ``unkept`` and nothing was added since). ``recent`` is then what the entry found is held
        under."""
        fast = fast_key(req, webserver)
        alone = not self.mirrored and plain(req)
        self._plain_fast = fast if alone else None
        if alone:
            entries = self._entries
            entry = entries.get(fast)
            if entry is not None:
                entries.move_to_end(fast)
                self._recent = fast
                return fast, "", entry
            if not self._plain_may_share:
                return fast, "", None
        known = self._aliases.get(fast)
        if known is not None:
            entry = self._entries.get(known)
            if entry is not None:
                self._entries.move_to_end(known)
                self._recent = known
                return fast, "", entry
        if fast in self._unkept:
            return fast, "", None
        key = cache_key(req, webserver)
        entry = self.get(key)
        if entry is not None:
            self._alias(fast, key)
        elif not self.mirrored and not alone:
            held = self._plain_with(key)
            if held is not None:
                entry = self.get(held)
                self._alias(fast, held)
        return fast, key, entry

    def holds_by_fast(self, fast: FastKey, req: RequestDetails) -> bool:
        """Whether the entry of ``req`` (whose fast key is ``fast``) is held by its fast key: a lone
        worker's plain request. Known without asking ``plain`` again when ``fast`` is the very key
        the last lookup made (the result of a request matched without waiting)."""
        return not self.mirrored and (fast is self._plain_fast or plain(req))

    @property
    def recent(self) -> HeldKey | None:
        """What the entry last found, put or touched is held under (``touch`` takes it)."""
        return self._recent

    def _plain_with(self, key: str) -> FastKey | None:
        """The fast key of the plain entry held whose md5 key is ``key``, if any; the plain entries
        held since the last call get their md5 key worked out first (once each)."""
        index, entries = self._plain_by_md5, self._entries
        unindexed = self._unindexed
        if unindexed is None:  # the first time: every plain entry held
            unindexed = [k for k in entries if not isinstance(k, str)]
        self._unindexed = []
        if unindexed:
            known = self._md5_of
            for fast in unindexed:
                if fast in entries:
                    index[known.get(fast) or known.setdefault(fast, key_of(fast))] = fast
            if len(index) > 2 * self.capacity:  # keep only what is still held
                self._plain_by_md5 = index = {k: f for k, f in index.items() if f in entries}
                self._md5_of = {f: k for k, f in index.items()}
        found = index.get(key)
        return found if found is not None and found in entries else None

    def touch(self, key: HeldKey) -> None:
        """Make the entry held under ``key``, if kept, the most recently used."""
        if key is self._recent:
            return
        try:
            self._entries.move_to_end(key)
        except KeyError:  # evicted: nothing to make recent
            return
        self._recent = key

    def unkept(self, fast: FastKey) -> None:
        """The request of ``fast`` found nothing and its result was not kept (Hoverfly does not cache
        a result that depends on headers or state): until an entry is added, its lookups find nothing.
        Not for a long body: the note would keep it alive, for an md5 that costs little beside it."""
        if self.enabled and len(fast[4]) <= UNKEPT_BODY:
            if len(self._unkept) >= 2 * self.capacity:
                self._unkept.clear()
            self._unkept[fast] = None

    def put(self, entry: CacheEntry, *, mirror: bool = True, fast: FastKey | None = None) -> None:
        """Hold ``entry`` as the most recently used: under its ``key``, or when that is "" (an
        unmirrored cache, a plain request) under ``fast``. A preloaded pair's entry, put by its md5
        key, takes the place of a plain entry with that key, as Hoverfly's overwrites."""
        if not self.enabled:
            return
        self.changes += 1
        if self._unkept:
            self._unkept.clear()  # the new entry may be under one of their md5 keys
        entries = self._entries
        held: HeldKey
        if entry.key:
            held = entry.key
            self._plain_may_share.add(held)
            if not self.mirrored and fast is None and held not in entries:
                replaced = self._plain_with(held)
                if replaced is not None:
                    del entries[replaced]
        else:
            assert fast is not None and not self.mirrored, "an entry without its md5 key needs its fast key"
            held = fast
            if self._unindexed is not None:
                self._unindexed.append(fast)
                if len(self._unindexed) > 2 * self.capacity:  # no request looked by md5 for a while
                    self._unindexed = None  # all of them again, next time
        entries[held] = entry
        entries.move_to_end(held)
        self._recent = held
        while len(entries) > self.capacity:
            evicted = entries.popitem(last=False)[0]
            if isinstance(evicted, str):
                self._plain_may_share.discard(evicted)
        if fast is not None and entry.key:
            self._alias(fast, held)
        if mirror and self.mirrored:
            self.pending[entry.key] = entry
            if len(self.pending) > 2 * self.capacity:  # the store is away: mirror the newest only
                self.restore_pending({})

    def _alias(self, fast: FastKey, key: HeldKey) -> None:
        self._aliases[fast] = key
        while len(self._aliases) > 2 * self.capacity:  # an alias of an evicted entry finds nothing
            self._aliases.popitem(last=False)

    def reset(self, generation: Generation) -> None:
        self.generation = generation
        self.changes += 1
        self._entries.clear()
        self._recent = None
        self._plain_may_share.clear()
        self._md5_of.clear()
        self._plain_by_md5.clear()
        self._unindexed = None
        self._aliases.clear()
        self._unkept.clear()
        self.pending.clear()

    def dump(self, entry: CacheEntry) -> bytes:
        """``dump_entry`` for this cache's generation."""
        return dump_entry(entry, self.generation)

    def entries(self) -> list[CacheEntry]:
        """Every entry with its md5 key, least recently used first; of entries with one md5 key
        (held under two fast keys), the most recently used."""
        known, md5_of = self._md5_of, {}
        listed: dict[str, CacheEntry] = {}
        for held, entry in self._entries.items():
            if isinstance(held, str):
                key = held
            else:
                key = md5_of[held] = known.get(held) or key_of(held)
                entry = replace(entry, key=key)
            listed.pop(key, None)
            listed[key] = entry
        self._md5_of = md5_of
        return list(listed.values())

    def listed(self) -> int:
        """How many entries ``entries`` lists. Entries of one md5 key can be held twice only by a
        plain request's fast key beside an md5 key: while the cache holds keys of one kind, each
        entry is listed, and no md5 key is worked out to count them."""
        held = len(self._entries)
        md5_held = len(self._plain_may_share)  # every key held that is an md5 key
        return held if md5_held in (0, held) else len(self.entries())

    def restore_pending(self, pending: dict[str, CacheEntry]) -> None:
        """Put back entries a failed mirror took (newer ones win), keeping at most ``capacity``;
        what is given up is counted in ``dropped``."""
        merged = {**pending, **self.pending}
        excess = max(len(merged) - self.capacity, 0)
        self.pending = dict(list(merged.items())[excess:])
        self.dropped += excess

    def take_dropped(self) -> int:
        dropped, self.dropped = self.dropped, 0
        return dropped

    def take_pending(self) -> dict[str, CacheEntry]:
        pending, self.pending = self.pending, {}
        return pending


# -- Hoverfly's eager preloading (core/hoverfly_funcs.go CacheMatcher.PreloadCache) ---------------


def preload_entries(sim: CompiledSimulation, webserver: bool) -> list[CacheEntry]:
    """Entries for pairs whose request is fully exact (see hoverfly-engine.md §5.3), in order."""
    out = []
    for cp in sim.pairs:
        req = cp.pair.request
        fields = (req.body, req.destination, req.method, req.path, req.scheme)
        if req.headers or req.requires_state or any(f is None or len(f) != 1 or f[0].name != "exact" for f in fields):
            continue
        if not all(isinstance(f[0].value, str) for f in fields if f):
            continue
        query = _preload_query(req.query)
        if query is None:
            continue
        body, destination, method, path, _ = (f[0].value for f in fields if f)
        details = RequestDetails(method, "", destination, path, query, body, {})
        out.append(CacheEntry(cache_key(details, webserver), cp))
    return out


def _preload_query(query: Any) -> dict[str, list[str]] | None:
    out: dict[str, list[str]] = {}
    for name, matchers in query or ():
        values: list[str] = []
        for m in matchers:
            if m.name == "exact" and isinstance(m.value, str):
                values.append(m.value)
            elif m.name == "array" and m.config is None and isinstance(m.value, list):
                values.extend(str(v) for v in m.value)
            else:
                return None
        out[name] = values
    return out


# -- the mirrored (store) form ---------------------------------------------------------------------

MIRRORED_MISS_LIMIT = 64 * 1024
"""A cached miss's 502 is mirrored word for word up to this many bytes. A longer one quotes a large
request or the closest pair's large response: it is mirrored without its text, and a worker that
loads such an entry works the miss out again (the same answer, the request's headers aside) rather
than have Redis carry a copy of a large body for each distinct request."""


def dump_entry(entry: CacheEntry, generation: Generation) -> bytes:
    """What the store keeps: pair indexes into the generation's simulation, never the pairs
    themselves (a 100 MB pair would otherwise be copied into Redis once per distinct request)."""
    closest = entry.closest
    miss = entry.miss.body if entry.miss is not None and len(entry.miss.body) <= MIRRORED_MISS_LIMIT else None
    return orjson.dumps(
        {
            "key": entry.key,
            "generation": list(generation),
            "pair": None if entry.pair is None else entry.pair.index,
            "closest": None
            if closest is None
            else {"pair": closest.index, "missedFields": list(closest.missed_fields), "state": closest.state},
            "miss": None if miss is None else miss.decode("utf-8", "surrogateescape"),
        }
    )


def load_entry(raw: bytes, sim: CompiledSimulation, generation: Generation) -> CacheEntry | None:
    """A mirrored entry this worker can serve from, or None: another generation, or a miss
    mirrored without its text (MIRRORED_MISS_LIMIT)."""
    decoded = _decode(raw, sim, generation)
    if decoded is None:
        return None
    key, pair, closest, miss = decoded
    if pair is not None:
        return CacheEntry(key, pair)
    return None if miss is None else CacheEntry(key, None, plain_error(502, miss, outcome="miss"), closest)


def listing(raws: Iterable[bytes], sim: CompiledSimulation, generation: Generation) -> list[dict[str, Any]]:
    """``GET /api/v2/cache``'s elements for the mirrored entries of this generation, each pair
    encoded once however many entries name it."""
    views: dict[int, orjson.Fragment] = {}

    def pair_view(index: int) -> orjson.Fragment:
        view = views.get(index)
        if view is None:
            view = views[index] = orjson.Fragment(orjson.dumps(encode_pair(sim.pairs[index].pair)))
        return view

    out = []
    for raw in raws:
        decoded = _decode(raw, sim, generation)
        if decoded is None:
            continue
        key, pair, closest, _ = decoded
        view: dict[str, Any] = {"key": key}
        if pair is not None:
            view["matchingPair"] = pair_view(pair.index)
        view["headerMatch"] = False
        view["closestMiss"] = (
            None
            if closest is None
            else {
                "response": encode_response(closest.pair.response),
                "requestMatcher": encode_request(closest.pair.request),
                "missedFields": list(closest.missed_fields),
            }
        )
        out.append(view)
    return out


def _decode(
    raw: bytes, sim: CompiledSimulation, generation: Generation
) -> tuple[str, CompiledPair | None, ClosestMiss | None, str | None] | None:
    """(key, pair, closest miss, miss text) of a mirrored entry of this generation whose indexes
    name pairs of ``sim``; None otherwise."""
    doc = orjson.loads(raw)
    if tuple(doc.get("generation") or ()) != generation:
        return None
    pairs = sim.pairs
    index = doc.get("pair")
    if index is not None:
        return (doc["key"], pairs[index], None, None) if 0 <= index < len(pairs) else None
    near = doc.get("closest")
    closest = None
    if near is not None:
        at = near["pair"]
        if not 0 <= at < len(pairs):
            return None
        closest = ClosestMiss(pairs[at].pair, tuple(near["missedFields"]), dict(near["state"]), at)
    return doc["key"], None, closest, doc.get("miss")
