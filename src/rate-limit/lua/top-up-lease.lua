-- Adds requests to a lease held here, counting no request. KEYS: one counter per window. ARGV:
-- the most requests to lease, the lease share and floor, then the limit per window. Grants none if
-- a window has reset (its next request starts it, one at a time) or is short of room.
-- Returns: requests leased, then count and ms-to-reset per window.
local n = #KEYS
local lease = tonumber(ARGV[1])
local counts, ttls = {}, {}
for i = 1, n do
  counts[i] = tonumber(redis.call('GET', KEYS[i]) or '0')
  ttls[i] = redis.call('PTTL', KEYS[i])
  local remaining = tonumber(ARGV[3 + i]) - counts[i]
  if ttls[i] <= 0 or remaining < tonumber(ARGV[3]) then lease = 0
  else lease = math.min(lease, math.floor(remaining / tonumber(ARGV[2]))) end
end
if lease > 0 then
  for i = 1, n do counts[i] = redis.call('INCRBY', KEYS[i], lease) end
end
local out = { lease }
for i = 1, n do out[#out + 1] = counts[i]; out[#out + 1] = ttls[i] end
return out
