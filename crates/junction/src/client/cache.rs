//! The client's cache of cacheable 2026-07-28 results (the caching utility, SEP-2549).
//!
//! A server marks list results and `resources/read` with `ttlMs` (how long the answer stays
//! fresh) and `cacheScope`. While an answer is fresh, asking the same method with the same
//! params again is answered from here, without a round trip; a page of a list is its own
//! entry (its cursor is part of the key). An answer with `ttlMs` 0, absent or negative is
//! never kept, and neither is one reached through `input_required` rounds (its inputs are
//! not part of the key).
//!
//! The matching notification makes an entry stale at once, before its ttl:
//! `notifications/tools/list_changed` drops `tools/list`, the prompts one `prompts/list`,
//! the resources one `resources/list` and `resources/templates/list`, and
//! `notifications/resources/updated` the `resources/read` of that URI. A list request that
//! fails (a cursor the server no longer knows, say) drops every page of that list.
//!
//! The cache belongs to one [`Client`](super::Client), which is one authorization context,
//! so `"private"` answers are reused only within it, as the scope requires; nothing here is
//! shared between clients, which is all `"public"` would additionally allow.
//!
//! It is bounded by bytes ([`ClientOptions::cache_bytes`](super::ClientOptions::cache_bytes),
//! 4 MiB by default; 0 turns it off): the oldest entries go first.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use junction_protocol::method::{Notification as _, Request as _};
use junction_protocol::prompts::ListPrompts;
use junction_protocol::resources::{ListResourceTemplates, ListResources, ReadResource};
use junction_protocol::tools::ListTools;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::sync::lock;

/// The cache's default size.
pub(super) const DEFAULT_BYTES: usize = 4 << 20;

/// One request's identity: its method and its params without `_meta`, as JSON.
type Key = (&'static str, String);

/// The cacheable answers of one client, bounded by bytes.
#[derive(Debug)]
pub(super) struct ResultCache {
    max_bytes: usize,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    entries: HashMap<Key, Entry>,
    /// Keys oldest first, for eviction; a key may appear again after a newer answer, and the
    /// stale occurrences are skipped.
    order: VecDeque<(Key, u64)>,
    bytes: usize,
    next: u64,
}

#[derive(Debug)]
struct Entry {
    answer: Box<RawValue>,
    fresh_until: Instant,
    uri: Option<String>,
    serial: u64,
}

impl ResultCache {
    /// A cache holding at most `max_bytes` of answers.
    pub(super) fn new(max_bytes: usize) -> Self {
        ResultCache {
            max_bytes,
            state: Mutex::new(State::default()),
        }
    }

    /// The key of `method` with `params` (a JSON object whose `_meta` is left out).
    pub(super) fn key(method: &'static str, params: &Map<String, Value>) -> Key {
        let mut params = params.clone();
        params.remove("_meta");
        (method, Value::Object(params).to_string())
    }

    /// The fresh answer to `key`, if there is one; a stale one is dropped.
    pub(super) fn get(&self, key: &Key) -> Option<Box<RawValue>> {
        let mut state = lock(&self.state);
        if let Some(entry) = state.entries.get(key) {
            if entry.fresh_until > Instant::now() {
                return Some(entry.answer.clone());
            }
            state.remove(key);
        }
        None
    }

    /// Keeps `answer` to `key` for its `ttlMs` (not at all when that is 0, absent or not a
    /// number, or when the answer is larger than the whole cache).
    pub(super) fn put(
        &self,
        key: Key,
        params: &Map<String, Value>,
        answer: &RawValue,
        ttl_ms: Option<&Value>,
    ) {
        let Some(ttl) = fresh_for(ttl_ms) else {
            return;
        };
        let size = answer.get().len();
        let Some(fresh_until) = Instant::now().checked_add(ttl) else {
            return;
        };
        if size > self.max_bytes {
            return;
        }
        let mut state = lock(&self.state);
        state.remove(&key);
        while state.bytes + size > self.max_bytes {
            if !state.evict_oldest() {
                break;
            }
        }
        if state.order.len() > 2 * state.entries.len() + 16 {
            let State { order, entries, .. } = &mut *state;
            order.retain(|(key, serial)| entries.get(key).is_some_and(|e| e.serial == *serial));
        }
        let serial = state.next;
        state.next += 1;
        state.bytes += size;
        state.order.push_back((key.clone(), serial));
        state.entries.insert(
            key,
            Entry {
                answer: answer.to_owned(),
                fresh_until,
                uri: params.get("uri").and_then(Value::as_str).map(str::to_owned),
                serial,
            },
        );
    }

    /// Drops every answer of `method` (a list changed, or one of its pages failed).
    pub(super) fn forget_method(&self, method: &str) {
        lock(&self.state).retain(|(m, _), _| *m != method);
    }

    /// Drops what a server notification makes stale.
    pub(super) fn invalidate(&self, notification: &str, params: Option<&RawValue>) {
        use junction_protocol::prompts::PromptListChanged;
        use junction_protocol::resources::{ResourceListChanged, ResourceUpdated};
        use junction_protocol::tools::ToolListChanged;
        match notification {
            ToolListChanged::METHOD => self.forget_method(ListTools::METHOD),
            PromptListChanged::METHOD => self.forget_method(ListPrompts::METHOD),
            ResourceListChanged::METHOD => {
                self.forget_method(ListResources::METHOD);
                self.forget_method(ListResourceTemplates::METHOD);
            }
            ResourceUpdated::METHOD => {
                let uri = params
                    .and_then(|p| serde_json::from_str::<Value>(p.get()).ok())
                    .and_then(|p| p.get("uri").and_then(Value::as_str).map(str::to_owned));
                lock(&self.state).retain(|(m, _), entry| {
                    *m != ReadResource::METHOD || (uri.is_some() && entry.uri != uri)
                });
            }
            _ => {}
        }
    }

    /// Drops everything (a new session replaced the old one).
    pub(super) fn clear(&self) {
        let mut state = lock(&self.state);
        state.entries.clear();
        state.order.clear();
        state.bytes = 0;
    }
}

impl State {
    fn remove(&mut self, key: &Key) {
        if let Some(entry) = self.entries.remove(key) {
            self.bytes -= entry.answer.get().len();
        }
    }

    fn retain(&mut self, mut keep: impl FnMut(&Key, &Entry) -> bool) {
        let mut freed = 0;
        self.entries.retain(|key, entry| {
            let kept = keep(key, entry);
            if !kept {
                freed += entry.answer.get().len();
            }
            kept
        });
        self.bytes -= freed;
    }

    /// Drops the oldest live entry; false when there is none.
    fn evict_oldest(&mut self) -> bool {
        while let Some((key, serial)) = self.order.pop_front() {
            if self.entries.get(&key).is_some_and(|e| e.serial == serial) {
                self.remove(&key);
                return true;
            }
        }
        false
    }
}

/// How long an answer with this `ttlMs` stays fresh, when it is a positive number of
/// milliseconds.
fn fresh_for(ttl_ms: Option<&Value>) -> Option<Duration> {
    let ms = ttl_ms?.as_u64().filter(|&ms| ms > 0)?;
    Some(Duration::from_millis(ms))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn raw(value: Value) -> Box<RawValue> {
        RawValue::from_string(value.to_string()).unwrap()
    }

    fn params(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn only_answers_with_a_positive_ttl_are_kept() {
        let cache = ResultCache::new(DEFAULT_BYTES);
        for (i, ttl) in [json!(0), json!(-5), json!("60000"), Value::Null]
            .into_iter()
            .enumerate()
        {
            let p = params(json!({"cursor": i.to_string()}));
            let key = ResultCache::key(ListTools::METHOD, &p);
            cache.put(
                key.clone(),
                &p,
                &raw(json!({"tools": [], "ttlMs": ttl})),
                Some(&ttl),
            );
            assert!(cache.get(&key).is_none(), "ttlMs {ttl} was kept");
        }
        let p = params(json!({}));
        let key = ResultCache::key(ListTools::METHOD, &p);
        let ttl = json!(60000);
        cache.put(
            key.clone(),
            &p,
            &raw(json!({"tools": [], "ttlMs": ttl})),
            Some(&ttl),
        );
        assert!(cache.get(&key).is_some());
    }

    #[test]
    fn the_key_leaves_out_meta_but_not_the_cursor() {
        let a = ResultCache::key(
            ListTools::METHOD,
            &params(json!({"_meta": {"x": 1}, "cursor": "2"})),
        );
        let b = ResultCache::key(ListTools::METHOD, &params(json!({"cursor": "2"})));
        let c = ResultCache::key(ListTools::METHOD, &params(json!({"cursor": "3"})));
        assert_eq!(a, b);
        assert_ne!(b, c);
    }

    #[test]
    fn an_update_drops_only_the_read_of_its_uri() {
        let cache = ResultCache::new(DEFAULT_BYTES);
        let keys: Vec<Key> = ["a://1", "a://2"]
            .iter()
            .map(|uri| {
                let p = params(json!({"uri": uri}));
                let key = ResultCache::key(ReadResource::METHOD, &p);
                let ttl = json!(60000);
                cache.put(
                    key.clone(),
                    &p,
                    &raw(json!({"contents": [], "ttlMs": ttl})),
                    Some(&ttl),
                );
                key
            })
            .collect();
        let update = raw(json!({"uri": "a://1"}));
        cache.invalidate("notifications/resources/updated", Some(&update));
        assert!(cache.get(&keys[0]).is_none());
        assert!(cache.get(&keys[1]).is_some());
    }

    #[test]
    fn the_oldest_answers_go_when_the_bytes_run_out() {
        let ttl = json!(60000);
        let answer = raw(json!({"tools": [], "ttlMs": 60000, "pad": "x".repeat(100)}));
        let size = answer.get().len();
        let cache = ResultCache::new(size * 2);
        let keys: Vec<Key> = (0..3)
            .map(|i| {
                let p = params(json!({"cursor": i.to_string()}));
                let key = ResultCache::key(ListTools::METHOD, &p);
                cache.put(key.clone(), &p, &answer, Some(&ttl));
                key
            })
            .collect();
        assert!(cache.get(&keys[0]).is_none());
        assert!(cache.get(&keys[1]).is_some());
        assert!(cache.get(&keys[2]).is_some());
        assert_eq!(lock(&cache.state).bytes, size * 2);
        let big = raw(json!({"tools": [], "ttlMs": 60000, "pad": "x".repeat(size * 2)}));
        let p = params(json!({}));
        cache.put(
            ResultCache::key(ListTools::METHOD, &p),
            &p,
            &big,
            Some(&ttl),
        );
        assert!(cache
            .get(&ResultCache::key(ListTools::METHOD, &p))
            .is_none());
    }
}
