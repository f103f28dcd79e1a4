-- One atomic step per request, for every window, the rejection count, the ban and a lease.
-- KEYS: ban, rejections, then one counter per window. ARGV: ban threshold, ban length in ms
-- (0: the caller records bans), the most requests to lease beyond this one (0: none), the lease
-- share and floor (see budget-leases.ts), then limit and ttl (ms) per window.
-- Returns: outcome (0 rejected, 1 admitted, 2 banned, 3 ban now), ban ms left or requests leased,
-- then count and ms-to-reset per window.
local n = #KEYS - 2
local counts, ttls, fresh = {}, {}, {}
for i = 1, n do
  counts[i] = tonumber(redis.call('GET', KEYS[i + 2]) or '0')
  ttls[i] = redis.call('PTTL', KEYS[i + 2])
  fresh[i] = ttls[i] < 0
  if fresh[i] then counts[i] = 0; ttls[i] = tonumber(ARGV[5 + 2 * i]) end
end
local function reply(outcome, extra)
  local out = { outcome, extra }
  for i = 1, n do out[#out + 1] = counts[i]; out[#out + 1] = ttls[i] end
  return out
end
local banLeft = redis.call('PTTL', KEYS[1])
if banLeft > 0 then return reply(2, banLeft) end
local blockingTtl = -1
for i = 1, n do
  if counts[i] >= tonumber(ARGV[4 + 2 * i]) and ttls[i] > blockingTtl then blockingTtl = ttls[i] end
end
if blockingTtl < 0 then
  local lease = tonumber(ARGV[3])
  for i = 1, n do
    local remaining = tonumber(ARGV[4 + 2 * i]) - counts[i] - 1
    if remaining < tonumber(ARGV[5]) then lease = 0
    else lease = math.min(lease, math.floor(remaining / tonumber(ARGV[4]))) end
  end
  for i = 1, n do
    counts[i] = redis.call('INCRBY', KEYS[i + 2], 1 + lease)
    if fresh[i] then redis.call('PEXPIRE', KEYS[i + 2], ttls[i]) end
  end
  return reply(1, lease)
end
local rejections = redis.call('INCR', KEYS[2])
if rejections == 1 then redis.call('PEXPIRE', KEYS[2], blockingTtl) end
if rejections > tonumber(ARGV[1]) then
  redis.call('DEL', KEYS[2])
  local banMs = tonumber(ARGV[2])
  if banMs > 0 then redis.call('SET', KEYS[1], '1', 'PX', banMs) end
  return reply(3, banMs)
end
return reply(0, 0)
