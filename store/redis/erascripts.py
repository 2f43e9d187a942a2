"""The Lua scripts of the state's eras and groups (store/redis/eras.py): each runs as one atomic
step on the server, on the keys of ONE slot: the eras hash in the fleet's slot, or one group's
state and meta hashes in the group's own slot.

The eras hash holds ``current`` (the current era's number) and, per era ``E``, the fields
``E:prev`` (the era before, "" for none), ``E:layout`` (JSON {group id: [keys]}), ``E:overlay``
(JSON {key: value} set over the carried state), ``E:carry`` ("1": the new state starts from the
old one, "": from nothing), ``E:sim`` (the version of the simulation stored when the era started), ``E:fit`` ("1": the
layout is that simulation's), ``E:ready`` ("1"
once drained) and ``E:base`` (JSON of the keys no group of the layout holds, once ready). A
group's meta hash holds ``e`` (the era it belongs to), ``s`` ("1": seeded in that era, "0": sealed
for it, not seeded yet), ``v`` (its version, bumped by every change of its state), and ``i`` and
``w``: the id of the last step that changed it and the version that step made.
"""

from __future__ import annotations

# ``start_era(eras, layout, overlay, carry, sim, fit)`` starts a new era and returns its number:
# its layout ("" = the current era's), overlay, carry ("1" or ""), the simulation version it is of
# ("" = the current era's) and fit ("1": the layout is that simulation's; "" with neither a layout
# nor a simulation given: as the current era's). With no era yet, numbers start from the server
# clock in microseconds, so an era number is not used twice even by a Redis that restarted empty.
# ``above`` (optional): the new era's number is above it (groups sealed for an era the eras hash
# lost). Era numbers are written with '%.0f': Lua would print a number of 16 digits in exponent form.
START_ERA = """
local function start_era(eras, layout, overlay, carry, sim, fit, above)
  local cur = redis.call('HGET', eras, 'current')
  if cur then
    local rec = redis.call('HMGET', eras, cur .. ':layout', cur .. ':sim', cur .. ':fit')
    if layout == '' and sim == '' and fit == '' then fit = rec[3] or '' end
    if layout == '' then layout = rec[1] or '{}' end
    if sim == '' then sim = rec[2] or '' end
  else
    local t = redis.call('TIME')
    redis.call('HSET', eras, 'current', t[1] .. string.rep('0', 6 - #t[2]) .. t[2])
    if layout == '' then layout = '{}' end
  end
  if above and above ~= '' and tonumber(redis.call('HGET', eras, 'current')) < tonumber(above) then
    redis.call('HSET', eras, 'current', above)
  end
  local new = string.format('%.0f', redis.call('HINCRBY', eras, 'current', 1))
  redis.call('HSET', eras, new .. ':prev', cur or '', new .. ':layout', layout, new .. ':overlay', overlay,
    new .. ':carry', carry, new .. ':sim', sim, new .. ':fit', fit)
  return new
end
"""

# KEYS: the eras hash. ARGV: layout, overlay, carry, sim, fit (see START_ERA), "1" to start
# only when the current era is of an older simulation than ``sim``, of none, or of that one in a
# layout that is not its own or not this one (a worker bringing the layout of the simulation it
# serves; two versions of simproxy that group a simulation's keys differently each bring theirs),
# then ``above`` ("" for none). Returns {1, the new era}, or {0, the current era} when it was not started.
ERA_START = (
    START_ERA
    + """
if ARGV[6] == '1' then
  local cur = redis.call('HGET', KEYS[1], 'current')
  if cur then
    local rec = redis.call('HMGET', KEYS[1], cur .. ':sim', cur .. ':fit', cur .. ':layout')
    local sim = rec[1] or ''
    if sim ~= '' and (tonumber(sim) > tonumber(ARGV[4])
        or (sim == ARGV[4] and rec[2] == '1' and rec[3] == ARGV[1])) then
      return {0, cur}
    end
  end
end
return {1, start_era(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[7])}
"""
)

# KEYS: the eras hash. ARGV: an era ("" = the current one). Returns {} when there is no era, else
# {era, ready, layout, overlay, carry, sim, prev, the previous era's layout, its base, base, fit,
# whether the previous era is ready}, each "" when missing.
ERA_READ = """
local e = ARGV[1]
if e == '' then e = redis.call('HGET', KEYS[1], 'current') end
if not e then return {} end
local r = redis.call('HMGET', KEYS[1], e .. ':ready', e .. ':layout', e .. ':overlay', e .. ':carry',
  e .. ':sim', e .. ':prev', e .. ':base', e .. ':fit')
local prev = r[6] or ''
local p = {false, false, false}
if prev ~= '' then p = redis.call('HMGET', KEYS[1], prev .. ':layout', prev .. ':base', prev .. ':ready') end
return {e, r[1] or '', r[2] or '', r[3] or '', r[4] or '', r[5] or '', prev, p[1] or '', p[2] or '', r[7] or '',
  r[8] or '', p[3] or ''}
"""

# KEYS: the eras hash. ARGV: the era, its base. Marks the era ready with its base, drops its
# overlay (carried into its groups and base by now) and forgets every field of the era before it
# (no one drains from it again): 1, or 0 when it was ready already (or is gone). So the hash holds
# the fields of two eras at most, however many were started.
ERA_READY = """
local e = ARGV[1]
local r = redis.call('HMGET', KEYS[1], e .. ':ready', e .. ':layout', e .. ':prev')
if r[1] == '1' or not r[2] then return 0 end
redis.call('HSET', KEYS[1], e .. ':ready', '1', e .. ':base', ARGV[2])
redis.call('HDEL', KEYS[1], e .. ':overlay')
local prev = r[3] or ''
if prev ~= '' then
  redis.call('HDEL', KEYS[1], prev .. ':prev', prev .. ':layout', prev .. ':overlay', prev .. ':carry',
    prev .. ':sim', prev .. ':fit', prev .. ':ready', prev .. ':base')
end
return 1
"""

# KEYS: a group's state hash and meta hash. ARGV: an era. Seals the group for that era when it
# belongs to an older one (no step of an older era holds on it from now on) and returns its state
# as HGETALL gives it.
GROUP_SEAL = """
if tonumber(redis.call('HGET', KEYS[2], 'e') or '0') < tonumber(ARGV[1]) then
  redis.call('HSET', KEYS[2], 'e', ARGV[1], 's', '0')
end
return redis.call('HGETALL', KEYS[1])
"""

# KEYS: a group's state hash and meta hash. ARGV: an era, then (key, value) pairs. Makes the pairs
# the group's state in that era, unless it was seeded in that era already or belongs to a later
# one (another drainer was first): 1 when seeded, else 0.
GROUP_SEED = """
local m = redis.call('HMGET', KEYS[2], 'e', 's')
local e, era = tonumber(m[1] or '0'), tonumber(ARGV[1])
if e > era or (e == era and m[2] == '1') then return 0 end
redis.call('DEL', KEYS[1])
for i = 2, #ARGV, 500 do redis.call('HSET', KEYS[1], unpack(ARGV, i, math.min(i + 499, #ARGV))) end
redis.call('HSET', KEYS[2], 'e', ARGV[1], 's', '1')
redis.call('PERSIST', KEYS[2])
redis.call('HINCRBY', KEYS[2], 'v', 1)
return 1
"""

# KEYS: a group's state hash and meta hash. Returns {era, seeded, version, the state as HGETALL
# gives it}.
GROUP_READ = """
local m = redis.call('HMGET', KEYS[2], 'e', 's', 'v')
return {m[1] or '', m[2] or '', tonumber(m[3] or '0'), redis.call('HGETALL', KEYS[1])}
"""

# KEYS: a group's state hash and meta hash. ARGV: an era, the version the caller's copy of the group
# is of, the step's id ("" for none), m, m (key, value) pairs to set, then the keys to remove.
# Returns {1, the version it made} when the group's last step was this one (the same call sent
# again, as a Cluster client does when a node was slow to answer: it is not taken twice); -1 when
# the group is not seeded in that era (the era changed: nothing done); {0, version, the group's
# state as HGETALL gives it} when the group is at another version; else {1, version now}. The meta
# hash keeps the id of the last step that changed the group (``i``) and the version it made
# (``w``). Three calls in Redis for a step that sets keys.
GROUP_ADVANCE = """
local m = redis.call('HMGET', KEYS[2], 'e', 's', 'v', 'i', 'w')
if ARGV[3] ~= '' and m[4] == ARGV[3] then return {1, tonumber(m[5])} end
if m[1] ~= ARGV[1] or m[2] ~= '1' then return -1 end
local v = m[3] or '0'
if v ~= ARGV[2] then return {0, tonumber(v), redis.call('HGETALL', KEYS[1])} end
local n = tonumber(ARGV[4])
if n > 0 then redis.call('HSET', KEYS[1], unpack(ARGV, 5, 4 + 2 * n)) end
if #ARGV > 4 + 2 * n then redis.call('HDEL', KEYS[1], unpack(ARGV, 5 + 2 * n, #ARGV)) end
if #ARGV == 4 then return {1, tonumber(v)} end
local now = tonumber(v) + 1
redis.call('HSET', KEYS[2], 'v', now, 'i', ARGV[3], 'w', now)
return {1, now}
"""

# KEYS: a group's state hash and meta hash. ARGV: an era, then milliseconds. Deletes the state of
# a group sealed for that era and not seeded in it (a group of the era before that the era's layout
# has no more), and keeps its meta hash for that long as a tombstone: a drainer of an older era
# that comes late finds the group sealed for a later one and seeds nothing (a seed of a later era
# that has the group again makes the meta hash last): 1, else 0.
GROUP_DROP = """
local m = redis.call('HMGET', KEYS[2], 'e', 's')
if m[1] ~= ARGV[1] or m[2] == '1' then return 0 end
redis.call('DEL', KEYS[1])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1
"""
