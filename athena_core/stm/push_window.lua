-- SPEC S3: coalesce, push, trim and refresh the TTL of one STM window, atomically.
-- KEYS[1] = stm:{tenant}:{user}:{agent}   ARGV[1] = window slot (JSON)   ARGV[2] = window size   ARGV[3] = TTL (s)
-- An observation whose execution_id equals the head observation's, and whose step_id is empty or equal,
-- replaces the head's content and timestamp, merges metadata (new wins) and increments coalesced_count.
-- Returns the head's coalesced_count after the call (1 when the event took a new slot), or 0 when the
-- event is already in the window (as a slot's event_id or last_event_id): a push is idempotent, so a
-- retry (Idempotency-Key) or a push racing a rebuild from the event log never shows an event twice.
-- ARGV[4] = the event id; the check is a plain substring find on the raw slots (no decode).
local window = tonumber(ARGV[2])
local ttl = tonumber(ARGV[3])
local event_id = ARGV[4]
if event_id and event_id ~= '' then
  local needle = 'event_id":"' .. event_id .. '"'
  for _, raw in ipairs(redis.call('LRANGE', KEYS[1], 0, window - 1)) do
    if string.find(raw, needle, 1, true) then
      return 0
    end
  end
end
local new = cjson.decode(ARGV[1])
local meta = new.metadata or {}
local exec_id = meta.execution_id

if new.type == 'observation' and exec_id and exec_id ~= '' then
  local head_raw = redis.call('LINDEX', KEYS[1], 0)
  if head_raw then
    local head = cjson.decode(head_raw)
    local head_meta = head.metadata or {}
    local step = meta.step_id or ''
    if head.type == 'observation' and head_meta.execution_id == exec_id
        and (step == '' or step == (head_meta.step_id or '')) then
      head.content = new.content
      head.timestamp = new.timestamp
      for k, v in pairs(meta) do head_meta[k] = v end
      head.metadata = head_meta
      head.coalesced_count = (head.coalesced_count or 1) + 1
      head.last_event_id = new.event_id
      redis.call('LSET', KEYS[1], 0, cjson.encode(head))
      redis.call('EXPIRE', KEYS[1], ttl)
      return head.coalesced_count
    end
  end
end

redis.call('LPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], 0, window - 1)
redis.call('EXPIRE', KEYS[1], ttl)
return 1
