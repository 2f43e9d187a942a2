"""The Lua scripts of the Redis store (store/redis.py): each runs as one atomic step on the server."""

from __future__ import annotations

# Generation and state-version counters never go backwards, even when Redis restarts empty: a
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

# KEYS: document hash, generation. ARGV: body, expected version ("" = unconditional).
WRITE_DOCUMENT = (
    BUMP
    + """
if ARGV[2] ~= '' then
  local current = redis.call('HGET', KEYS[1], 'v') or '0'
  if current ~= ARGV[2] then return false end
end
local gen = bump(KEYS[2])
redis.call('HSET', KEYS[1], 'v', gen, 'body', ARGV[1])
return gen
"""
)


# KEYS: state hash, its version. ARGV: n, then n (key, value) pairs required; m, then m (key, value)
# pairs to set; then the keys to remove. Returns 1 when applied, 0 when a required value did not hold.
STATE_TRANSITION = (
    BUMP
    + """
local n = tonumber(ARGV[1])
for i = 0, n - 1 do
  if redis.call('HGET', KEYS[1], ARGV[2 + 2 * i]) ~= ARGV[3 + 2 * i] then return 0 end
end
local at = 2 + 2 * n
local m = tonumber(ARGV[at])
for i = 0, m - 1 do
  redis.call('HSET', KEYS[1], ARGV[at + 1 + 2 * i], ARGV[at + 2 + 2 * i])
end
for i = at + 1 + 2 * m, #ARGV do
  redis.call('HDEL', KEYS[1], ARGV[i])
end
if m > 0 or #ARGV > at + 2 * m then bump(KEYS[2]) end
return 1
"""
)

# KEYS: state hash, its version. ARGV: the version the caller decided on, m, m (key, value) pairs to
# set, then the keys to remove. Returns {applied (1/0), version now, the state as HGETALL gives it}.
STATE_STEP = (
    BUMP
    + """
local v = tonumber(redis.call('GET', KEYS[2]) or '0')
if v ~= tonumber(ARGV[1]) then return {0, v, redis.call('HGETALL', KEYS[1])} end
local m = tonumber(ARGV[2])
for i = 0, m - 1 do
  redis.call('HSET', KEYS[1], ARGV[3 + 2 * i], ARGV[4 + 2 * i])
end
for i = 3 + 2 * m, #ARGV do
  redis.call('HDEL', KEYS[1], ARGV[i])
end
if #ARGV > 2 then v = bump(KEYS[2]) end
return {1, v, redis.call('HGETALL', KEYS[1])}
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


# KEYS: cache hash, recency zset, sequence counter. ARGV: capacity, then (key, entry) pairs.
CACHE_PUT = """
for i = 2, #ARGV, 2 do
  redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
  redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[3]), ARGV[i])
end
local excess = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[1])
if excess > 0 then
  local oldest = redis.call('ZRANGE', KEYS[2], 0, excess - 1)
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, excess - 1)
  for _, key in ipairs(oldest) do redis.call('HDEL', KEYS[1], key) end
end
return 1
"""


# KEYS: id list, entries hash, then one hash per index. ARGV: limit, n, the 2n lengths of the ids and
# entries, comma-separated, then all of them concatenated (id1 entry1 id2 entry2 ...), then for each
# index: its key count m and m (key, id) pairs. Three arguments instead of 2n keep redis-py's
# pure-Python command packing off the workers' CPU (it cost ~4 us an entry), and the writes go in
# chunks of 500 (Lua's unpack() has a stack limit). Trims the oldest entries beyond the limit.
JOURNAL_APPEND = """
local limit = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
local blob = ARGV[4]
local lengths = string.gmatch(ARGV[3], '%d+')
local pos = 1
local ids, fields = {}, {}
local function write()
  if #ids > 0 then
    redis.call('RPUSH', KEYS[1], unpack(ids))
    redis.call('HSET', KEYS[2], unpack(fields))
    ids, fields = {}, {}
  end
end
for i = 1, n do
  local id_end = pos + tonumber(lengths()) - 1
  local id = string.sub(blob, pos, id_end)
  pos = id_end + 1
  local entry_end = pos + tonumber(lengths()) - 1
  ids[#ids + 1] = id
  fields[#fields + 1] = id
  fields[#fields + 1] = string.sub(blob, pos, entry_end)
  pos = entry_end + 1
  if #ids == 500 then write() end
end
write()
local at = 5
for k = 3, #KEYS do
  local m = tonumber(ARGV[at])
  at = at + 1
  for i = 1, m do
    redis.call('HSET', KEYS[k], ARGV[at], ARGV[at + 1])
    at = at + 2
  end
end
local excess = redis.call('LLEN', KEYS[1]) - limit
if excess > 0 then
  local oldest = redis.call('LRANGE', KEYS[1], 0, excess - 1)
  redis.call('LTRIM', KEYS[1], excess, -1)
  for i = 1, #oldest, 500 do
    redis.call('HDEL', KEYS[2], unpack(oldest, i, math.min(i + 499, #oldest)))
  end
end
return 1
"""

# HMGET in chunks: Lua's unpack() cannot spread ten thousand arguments at once.
JOURNAL_AMEND = """
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
"""

JOURNAL_ENTRIES = """
local ids = redis.call('LRANGE', KEYS[1], 0, -1)
local out = {}
for i = 1, #ids, 1000 do
  local chunk = {}
  for j = i, math.min(i + 999, #ids) do chunk[#chunk + 1] = ids[j] end
  local values = redis.call('HMGET', KEYS[2], unpack(chunk))
  for k = 1, #chunk do out[#out + 1] = values[k] end
end
return out
"""
