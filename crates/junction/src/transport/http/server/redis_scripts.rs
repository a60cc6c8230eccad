//! The Lua scripts that keep what Redis holds for the sessions bounded: each runs atomically
//! in Redis, so that instances writing events of one session, or creating sessions, at the
//! same time never count past a bound.
//!
//! Per session, besides its streams (`P:s:ID:ev:STREAM`), two keys account for its events:
//! `P:s:ID:evi`, a list with one `"STREAM SEQ BYTES"` entry per event kept, oldest first, and
//! `P:s:ID:evb`, the bytes of those events. Over all sessions, the sorted set `P:live` holds
//! every live session's id, scored by the milliseconds (Redis' clock) of its last activity.

/// The Lua function `forget(s)`: deletes every key of the session whose record key is `s`.
const FORGET: &str = r"
local function forget(s)
  local keys = {s, s .. ':subs', s .. ':req', s .. ':streams', s .. ':evi', s .. ':evb'}
  for _, stream in ipairs(redis.call('SMEMBERS', s .. ':streams')) do
    keys[#keys + 1] = s .. ':ev:' .. stream
  end
  redis.call('DEL', unpack(keys))
end
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
";

/// Appends one event and evicts the session's oldest events while it holds more than its
/// count or its bytes (the newest event always stays, whatever its size); a stream left
/// empty is deleted with its request. Renews the session's keys and its place in `P:live`.
///
/// ARGV: the session's record key `P:s:ID`, the stream, the entry's sequence (one more than
/// the event's), the data, the most events, the most bytes, the ttl in seconds, the `P:live`
/// key, the session id.
const APPEND: &str = r"
local s, stream, n, data = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local max_events, max_bytes, ttl = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local key, streams, index, size = s .. ':ev:' .. stream, s .. ':streams', s .. ':evi', s .. ':evb'
redis.call('XADD', key, '0-' .. n, 'd', data)
redis.call('SADD', streams, stream)
redis.call('RPUSH', index, stream .. ' ' .. n .. ' ' .. #data)
local bytes = redis.call('INCRBY', size, #data)
while (bytes > max_bytes or redis.call('LLEN', index) > max_events)
    and redis.call('LLEN', index) > 1 do
  local old_stream, old_n, old_size =
    string.match(redis.call('LPOP', index), '^(%d+) (%d+) (%d+)$')
  if not old_stream then break end
  local old = s .. ':ev:' .. old_stream
  redis.call('XDEL', old, '0-' .. old_n)
  bytes = redis.call('DECRBY', size, old_size)
  if redis.call('XLEN', old) == 0 then
    redis.call('DEL', old)
    redis.call('SREM', streams, old_stream)
    redis.call('HDEL', s .. ':req', old_stream)
  end
end
for _, k in ipairs({key, streams, index, size}) do
  redis.call('EXPIRE', k, ttl)
end
redis.call('ZADD', ARGV[8], 'XX', now_ms(), ARGV[9])
";

/// Enters a new session in `P:live` and, while more sessions live than the cap, forgets the
/// one idle the longest and publishes its end on the routing channel (origin 0, so that every
/// instance, this one included, closes its copy). Entries older than the idle timeout (their
/// records expired) are dropped first. Returns how many sessions it ended.
///
/// ARGV: the `P:live` key, the session id, the cap, the idle timeout in ms, the record key
/// prefix `P:s:`, the routing channel.
const ENTER: &str = r"
local live, id, cap = ARGV[1], ARGV[2], tonumber(ARGV[3])
local now = now_ms()
redis.call('ZREMRANGEBYSCORE', live, '-inf', now - tonumber(ARGV[4]))
redis.call('ZADD', live, now, id)
local over = redis.call('ZCARD', live) - cap
local ended = 0
if over > 0 then
  for _, old in ipairs(redis.call('ZRANGE', live, 0, over)) do
    if ended < over and old ~= id then
      forget(ARGV[5] .. old)
      redis.call('ZREM', live, old)
      redis.call('PUBLISH', ARGV[6], cjson.encode({o = 0, s = old, k = 'end'}))
      ended = ended + 1
    end
  end
end
return ended
";

/// Forgets a session the client ended. ARGV: its record key, the `P:live` key, its id.
const REMOVE: &str = r"
forget(ARGV[1])
redis.call('ZREM', ARGV[2], ARGV[3])
";

/// Renews a session's place in `P:live` (its record's expiry is renewed by the caller).
/// ARGV: the `P:live` key, the session id.
const TOUCH: &str = r"
redis.call('ZADD', ARGV[1], 'XX', now_ms(), ARGV[2])
";

/// The scripts, each with the helper functions it uses.
pub(super) struct Scripts {
    pub append: redis::Script,
    pub enter: redis::Script,
    pub remove: redis::Script,
    pub touch: redis::Script,
}

impl Scripts {
    pub fn new() -> Scripts {
        let with_helpers = |body: &str| redis::Script::new(&format!("{FORGET}{body}"));
        Scripts {
            append: with_helpers(APPEND),
            enter: with_helpers(ENTER),
            remove: with_helpers(REMOVE),
            touch: with_helpers(TOUCH),
        }
    }
}
