-- Hands a lease's unused requests back. KEYS: one counter per window. ARGV: the requests, the
-- tolerance in ms, then each window's ms-to-reset as the lease knew it: a counter whose reset is
-- elsewhere belongs to a newer window, which owes the lease nothing.
for i = 1, #KEYS do
  local ttl = redis.call('PTTL', KEYS[i])
  if ttl > 0 and math.abs(ttl - tonumber(ARGV[2 + i])) <= tonumber(ARGV[2]) then
    local count = tonumber(redis.call('GET', KEYS[i]) or '0')
    redis.call('DECRBY', KEYS[i], math.min(tonumber(ARGV[1]), count))
  end
end
return 0
