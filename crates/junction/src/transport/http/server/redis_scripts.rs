//! The Lua scripts that keep what Redis holds for the sessions bounded: each runs atomically
//! in Redis, so that instances writing events of one session, or creating sessions, at the
//! same time never count past a bound.
//!
//! Per session, besides its streams (`P:s:ID:ev:STREAM`), two keys account for its events:
//! `P:s:ID:evi`, a list with one `"STREAM SEQ BYTES"` entry per event kept, oldest first, and
//! `P:s:ID:evb`, the bytes of those events. Over all sessions, the sorted set `P:live` holds
//! every live session's id, scored by the milliseconds (Redis' clock) of its last activity,
//! or, while the session is busy on an instance (a request in flight, a stream open), of the
//! end of that instance's lease on it: a score in the future marks a busy session, which is
//! never ended to make room, and a lease that its instance stopped renewing (the instance
//! died) runs out on its own.

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
redis.call('ZADD', ARGV[8], 'XX', 'GT', now_ms(), ARGV[9])
";

/// Enters a new session in `P:live` and, while more sessions live than the cap (two instances
/// admitted one each at once), forgets the one idle the longest, never a busy one, and
/// publishes its end on the routing channel (origin 0, so that every instance, this one
/// included, closes its copy). Entries older than the idle timeout (their records expired)
/// are dropped first. Returns how many sessions it ended.
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
  for _, old in ipairs(redis.call('ZRANGEBYSCORE', live, '-inf', now, 'LIMIT', 0, over + 1)) do
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

/// Makes room for a new session before it is served: while the live sessions are at the
/// cap, forgets the ones idle the longest and publishes their ends (as [`ENTER`] does).
/// Returns 0, ending none, when there is no room and every live session is busy (its score
/// is a lease in the future); 1 otherwise. Entries older than the idle timeout are dropped
/// first.
///
/// ARGV: the `P:live` key, the cap, the idle timeout in ms, the record key prefix `P:s:`,
/// the routing channel.
const ADMIT: &str = r"
local live, cap = ARGV[1], tonumber(ARGV[2])
local now = now_ms()
redis.call('ZREMRANGEBYSCORE', live, '-inf', now - tonumber(ARGV[3]))
local over = redis.call('ZCARD', live) - cap + 1
if over <= 0 then return 1 end
local idle = redis.call('ZRANGEBYSCORE', live, '-inf', now, 'LIMIT', 0, over)
if #idle == 0 then return 0 end
for _, old in ipairs(idle) do
  forget(ARGV[4] .. old)
  redis.call('ZREM', live, old)
  redis.call('PUBLISH', ARGV[5], cjson.encode({o = 0, s = old, k = 'end'}))
end
return 1
";

/// An instance's sessions' business: the first `ARGV[3]` sessions are busy there, leased until
/// the lease (`ARGV[2]` ms) from now (never shortening a longer lease); the rest settled there
/// (idle now, after being active since the last report), scored now, which ends their lease.
///
/// ARGV: the `P:live` key, the lease in ms, the number of busy sessions, the busy sessions'
/// ids, the settled sessions' ids.
const ACTIVITY: &str = r"
local live, lease, busy = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local now = now_ms()
for i = 4, #ARGV do
  if i < 4 + busy then
    redis.call('ZADD', live, 'XX', 'GT', now + lease, ARGV[i])
  else
    redis.call('ZADD', live, 'XX', now, ARGV[i])
  end
end
";

/// Forgets a session the client ended. ARGV: its record key, the `P:live` key, its id.
const REMOVE: &str = r"
forget(ARGV[1])
redis.call('ZREM', ARGV[2], ARGV[3])
";

/// Renews a session's place in `P:live` (its record's expiry is renewed by the caller): its
/// score becomes now plus a lease (0 for none), unless it is later already.
/// ARGV: the `P:live` key, the session id, the lease in ms.
const TOUCH: &str = r"
redis.call('ZADD', ARGV[1], 'XX', 'GT', now_ms() + tonumber(ARGV[3]), ARGV[2])
";

/// The scripts, each with the helper functions it uses.
pub(super) struct Scripts {
    pub append: redis::Script,
    pub enter: redis::Script,
    pub admit: redis::Script,
    pub activity: redis::Script,
    pub remove: redis::Script,
    pub touch: redis::Script,
}

impl Scripts {
    pub fn new() -> Scripts {
        let with_helpers = |body: &str| redis::Script::new(&format!("{FORGET}{body}"));
        Scripts {
            append: with_helpers(APPEND),
            enter: with_helpers(ENTER),
            admit: with_helpers(ADMIT),
            activity: with_helpers(ACTIVITY),
            remove: with_helpers(REMOVE),
            touch: with_helpers(TOUCH),
        }
    }
}
