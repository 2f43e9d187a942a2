"""The Lua scripts of the Redis store (store/redis/): each runs as one atomic step on the server."""

from __future__ import annotations

from simproxy.store.base import METRICS_KEEP_S, TRAFFIC_KEEP_S
from simproxy.store.redis.erascripts import START_ERA

# Generation counters never go backwards, even when Redis restarts empty: a
# counter that is missing starts again from the server clock in microseconds, above any value it
# held before (it would take a million bumps a second to outrun the clock). Workers compare these
# numbers for equality, so a counter restarting from 0 would make a new document look like the
# one they already hold.
BUMP = """
local function bump(key)
  if redis.call('EXISTS', key) == 0 then
    local t = redis.call('TIME')
    redis.call('SET', key, t[1] .. string.rep('0', 6 - #t[2]) .. t[2])
  end
  return redis.call('INCR', key)
end
"""

# KEYS: the counter. Returns its new value.
BUMP_ONE = BUMP + "return bump(KEYS[1])\n"

# KEYS: document hash, generation, the write's marker, then the write's effects' keys (cache hash,
# recency zset, sequence counter, the state's eras hash). ARGV: body, expected version ("" =
# unconditional), ms to keep the outcome, "1" to clear the cache (else ""), "1" to start an era of
# the state (a write of the simulation: store/redis/eras.py), then the JSON of the state values the
# era sets over the old state. The era keeps the old layout and is of the simulation written; a
# worker that steps on it starts one in the simulation's layout. The marker, set to "pending" for
# a while (the write's lease) before the write is sent, is what lets the write be applied: a copy
# that reaches Redis after the lease ran out (its reply was given up on) changes nothing. The
# outcome replaces it, so a copy sent again, or the writer looking the outcome up, gets the first
# copy's. Returns -1 when the lease ran out, 0 when the document was not at the expected version,
# else the generation written.
WRITE_DOCUMENT = (
    BUMP
    + START_ERA
    + """
local mark = redis.call('GET', KEYS[3])
if mark == false then return -1 end
if mark ~= 'pending' then return tonumber(mark) end
if ARGV[2] ~= '' then
  local current = redis.call('HGET', KEYS[1], 'v') or '0'
  if current ~= ARGV[2] then
    redis.call('SET', KEYS[3], '0', 'PX', ARGV[3])
    return 0
  end
end
local gen = bump(KEYS[2])
redis.call('HSET', KEYS[1], 'v', gen, 'body', ARGV[1])
if ARGV[4] == '1' then redis.call('DEL', KEYS[4], KEYS[5], KEYS[6]) end
if ARGV[5] == '1' then start_era(KEYS[7], '', ARGV[6], '1', string.format('%.0f', gen), '') end
redis.call('SET', KEYS[3], gen, 'PX', ARGV[3])
return gen
"""
)

# KEYS: the failures hash. ARGV: now (ms), window (ms), limit. Returns 1 when locked (and the lock
# refreshed to now), 0 otherwise; a last failure older than the window clears the count.
LOGIN_LOCKED = """
local count = tonumber(redis.call('HGET', KEYS[1], 'count') or '0')
local last = tonumber(redis.call('HGET', KEYS[1], 'last') or '0')
if tonumber(ARGV[1]) - last >= tonumber(ARGV[2]) then
  if count > 0 then redis.call('DEL', KEYS[1]) end
  return 0
end
if count >= tonumber(ARGV[3]) then
  redis.call('HSET', KEYS[1], 'last', ARGV[1])
  return 1
end
return 0
"""


BATCH_KEEP_MS = 86_400_000
"""How long a writer's batch numbers are kept after its last batch: longer than any batch waits to be
sent again (a worker cut off from a Redis that kept its data)."""

# The opening of every batched write (store/batches.py). KEYS[1]: the writer's batch hash. ARGV[1]: the
# kind of write, ARGV[2]: the batch's number in the writer's sequence (0: not a batch). A batch whose
# number is not above the highest one of its kind applied is a copy of one applied already: nothing
# is done and 0 returned. The write's own keys and arguments follow, as K and A. The hash's expiry
# is set with a writer's first batch of a kind and then with every 32nd: a day is far longer than
# 32 batches take, and a call saved in every batch is a tenth of what a flush costs Redis.
BATCH = f"""
local seq = tonumber(ARGV[2])
if seq > 0 then
  if tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0') >= seq then return 0 end
  if redis.call('HSET', KEYS[1], ARGV[1], seq) == 1 or seq % 32 == 1 then
    redis.call('PEXPIRE', KEYS[1], {BATCH_KEEP_MS})
  end
end
local K, A = {{}}, {{}}
for i = 2, #KEYS do K[i - 1] = KEYS[i] end
for i = 3, #ARGV do A[i - 2] = ARGV[i] end
"""

# K: the counters hash. A: (mode, count) pairs.
ADD_COUNTERS = (
    BATCH
    + """
for i = 1, #A, 2 do redis.call('HINCRBY', K[1], A[i], A[i + 1]) end
return 1
"""
)

# K: the logs list. A: the limit, then the records.
LOGS_APPEND = (
    BATCH
    + """
for i = 2, #A, 500 do redis.call('RPUSH', K[1], unpack(A, i, math.min(i + 499, #A))) end
redis.call('LTRIM', K[1], -tonumber(A[1]), -1)
return 1
"""
)

# K: cache hash, recency zset, sequence counter. A: capacity, then (key, entry) pairs.
CACHE_PUT = (
    BATCH
    + """
for i = 2, #A, 2 do
  redis.call('HSET', K[1], A[i], A[i + 1])
  redis.call('ZADD', K[2], redis.call('INCR', K[3]), A[i])
end
local excess = redis.call('ZCARD', K[2]) - tonumber(A[1])
if excess > 0 then
  local oldest = redis.call('ZRANGE', K[2], 0, excess - 1)
  redis.call('ZREMRANGEBYRANK', K[2], 0, excess - 1)
  for _, key in ipairs(oldest) do redis.call('HDEL', K[1], key) end
end
return 1
"""
)


# The journal is kept in pages: a flush's entries are one page, stored whole, so Redis does the
# same few things per flush whatever its size and nothing per entry (per entry it spent ~3 us of
# CPU in Lua and hash updates; one 200-byte entry costs it now about what copying it does). Two
# lists, oldest page first: heads (``n,l1,...,ln|`` then the n ids, each li bytes long) and pages
# (``m1,...,mn|`` then the n entries); the meta hash holds ``total`` (entries kept), ``skip``
# (entries at the start of the first page dropped already: the journal is cut to its limit
# exactly), ``counts`` (each page's entry count, comma-separated: dropping a page reads no head)
# and ``amended``, how many entries the amended hash holds (id -> an entry written again, read in
# place of the page's).
JOURNAL_PAGES = """
local function ids_of(head)
  local bar = string.find(head, '|', 1, true)
  local ids, pos, first = {}, bar + 1, true
  for len in string.gmatch(string.sub(head, 1, bar - 1), '%d+') do
    if first then
      first = false
    else
      local stop = pos + tonumber(len)
      ids[#ids + 1] = string.sub(head, pos, stop - 1)
      pos = stop
    end
  end
  return ids
end
local function entry_of(page, j)
  local bar = string.find(page, '|', 1, true)
  local pos, i = bar + 1, 0
  for len in string.gmatch(string.sub(page, 1, bar - 1), '%d+') do
    i = i + 1
    local stop = pos + tonumber(len)
    if i == j then return string.sub(page, pos, stop - 1) end
    pos = stop
  end
  return false
end
-- where each wanted id is among the entries kept: {position in ARGV -> {page, index in page}}
local function find(heads_key, meta_key, wanted)
  local skip = tonumber(redis.call('HGET', meta_key, 'skip') or '0')
  local heads = redis.call('LRANGE', heads_key, 0, -1)
  local want, where = {}, {}
  for i = 1, #wanted do want[wanted[i]] = i end
  for p = 1, #heads do
    local ids = ids_of(heads[p])
    for j = (p == 1 and skip + 1 or 1), #ids do
      local w = want[ids[j]]
      if w then where[w] = {p, j} end
    end
  end
  return where
end
"""

# K: heads, pages, meta hash, amended hash, then one hash per index. A: the limit, n, the page's
# head and its entries (JOURNAL_PAGES), then for each index: its key count m and m (key, id) pairs.
# Drops the oldest entries beyond the limit: whole pages, then the first entries of the first one.
JOURNAL_APPEND = (
    BATCH
    + JOURNAL_PAGES
    + """
local limit = tonumber(A[1])
local n = tonumber(A[2])
if n > 0 then
  redis.call('RPUSH', K[1], A[3])
  redis.call('RPUSH', K[2], A[4])
end
local at = 5
for k = 5, #K do
  local m = tonumber(A[at])
  at = at + 1
  for i = 1, m do
    redis.call('HSET', K[k], A[at], A[at + 1])
    at = at + 2
  end
end
local meta = redis.call('HMGET', K[3], 'total', 'skip', 'counts', 'amended')
local total = tonumber(meta[1] or '0') + n
local skip = tonumber(meta[2] or '0')
local counts = meta[3] or ''
local amended = tonumber(meta[4] or '0')
if n > 0 then counts = counts == '' and tostring(n) or counts .. ',' .. n end
local excess = total - limit
while excess > 0 and counts ~= '' do
  local first, rest = string.match(counts, '^(%d+),?(.*)$')
  local live = tonumber(first) - skip
  local gone = math.min(live, excess)
  if amended > 0 then
    local ids = ids_of(redis.call('LINDEX', K[1], 0))
    for i = skip + 1, skip + gone do amended = amended - redis.call('HDEL', K[4], ids[i]) end
  end
  if gone == live then
    redis.call('LPOP', K[1])
    redis.call('LPOP', K[2])
    counts, skip = rest, 0
  else
    skip = skip + gone
  end
  total = total - gone
  excess = excess - gone
end
if n > 0 or meta[1] then
  redis.call('HSET', K[3], 'total', total, 'skip', skip, 'counts', counts, 'amended', amended)
end
return 1
"""
)

# KEYS: the instance's totals hash, then the hash of the traffic's minute (when there is traffic).
# ARGV: the writer's field in the totals ("" = not a batch), the batch number, "1" when the writer's
# earlier batches were applied (resumed), n, n (field, amount) increments, then the traffic's (field,
# amount) pairs. The writer's highest batch number lives in the totals it guards: when it is gone
# while earlier batches were applied, the totals were lost (Redis restarted empty) and 2 is returned
# with nothing added, for the writer to send its whole totals; 0 for a copy already applied; else 1.
# The totals' expiry is set by a writer's first batch and every 32nd (and every heartbeat).
METRICS_ADD = f"""
local expire = true
if ARGV[1] ~= '' then
  local last = redis.call('HGET', KEYS[1], ARGV[1])
  if last == false and ARGV[3] == '1' then return 2 end
  if last and tonumber(last) >= tonumber(ARGV[2]) then return 0 end
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  expire = last == false or tonumber(ARGV[2]) % 32 == 1
end
local n = tonumber(ARGV[4])
for i = 5, 4 + 2 * n, 2 do redis.call('HINCRBYFLOAT', KEYS[1], ARGV[i], ARGV[i + 1]) end
if expire then redis.call('EXPIRE', KEYS[1], {METRICS_KEEP_S}) end
if KEYS[2] then
  for i = 5 + 2 * n, #ARGV, 2 do redis.call('HINCRBYFLOAT', KEYS[2], ARGV[i], ARGV[i + 1]) end
  redis.call('EXPIRE', KEYS[2], {TRAFFIC_KEEP_S + 60})
end
return 1
"""

# KEYS: heads, meta hash, amended hash. ARGV: the id, the entry. Writes the entry in place of the
# kept entry of that id: 1, or 0 when there is none.
JOURNAL_AMEND = (
    JOURNAL_PAGES
    + """
if not find(KEYS[1], KEYS[2], {ARGV[1]})[1] then return 0 end
if redis.call('HSET', KEYS[3], ARGV[1], ARGV[2]) == 1 then redis.call('HINCRBY', KEYS[2], 'amended', 1) end
return 1
"""
)

# KEYS: heads, pages, meta hash, amended hash. ARGV: ids. The kept entry of each id, false if none.
JOURNAL_FIND = (
    JOURNAL_PAGES
    + """
local where = find(KEYS[1], KEYS[3], ARGV)
local pages, out = {}, {}
for i = 1, #ARGV do
  local at = where[i]
  out[i] = false
  if at then
    out[i] = redis.call('HGET', KEYS[4], ARGV[i])
    if not out[i] then
      pages[at[1]] = pages[at[1]] or redis.call('LINDEX', KEYS[2], at[1] - 1)
      out[i] = entry_of(pages[at[1]], at[2])
    end
  end
end
return out
"""
)

# KEYS: heads, pages, meta hash, amended hash. Returns {skip, heads, pages, amended as HGETALL}.
JOURNAL_READ = """
return {tonumber(redis.call('HGET', KEYS[3], 'skip') or '0'), redis.call('LRANGE', KEYS[1], 0, -1),
  redis.call('LRANGE', KEYS[2], 0, -1), redis.call('HGETALL', KEYS[4])}
"""
