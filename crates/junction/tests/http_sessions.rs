//! Sessions a client can pile up: the cap on live sessions, what an idle session costs
//! (memory read from /proc/self/status), and a soak of many sessions opened, left idle and
//! expired. The full-size soak is `#[ignore]`d (run it with `--ignored`); a small one runs
//! in CI.
#![cfg(all(feature = "http-server", feature = "http-client"))]

use std::sync::Arc;
use std::time::{Duration, Instant};

use junction_test_support::http::{self, session_id, start, test_server, Raw, INIT, INITIALIZED};
use serde_json::json;
use tokio::sync::Semaphore;

/// The tests measure this process's memory, so they take turns.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A guard against a test hanging for ever; never a measure of speed.
const PATIENCE: Duration = Duration::from_secs(600);

/// Resident memory in kB, after handing the allocator's free pages back to the system: glibc
/// keeps freed memory in its per-thread arenas, so without the trim RSS after the sessions
/// ended measures the allocator's caching, not what Junction still holds.
fn rss_kb() -> u64 {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory; it has no preconditions.
    unsafe {
        libc::malloc_trim(0);
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

fn gate() -> Arc<Semaphore> {
    Arc::new(Semaphore::new(0))
}

/// Initializes a session with `init` as the body; its id.
async fn open(raw: &Raw, init: &str) -> String {
    let response = raw.post(&[], init).await;
    assert_eq!(response.status(), 200);
    let id = session_id(&response);
    let _ = response.bytes().await;
    let accepted = raw.post(&[("mcp-session-id", &id)], INITIALIZED).await;
    assert_eq!(accepted.status(), 202);
    id
}

async fn ping(raw: &Raw, session: &str) -> u16 {
    let ping = r#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#;
    raw.post(&[("mcp-session-id", session)], ping)
        .await
        .status()
        .as_u16()
}

#[tokio::test]
async fn beyond_the_cap_the_session_idle_the_longest_is_ended() {
    let _turn = SERIAL.lock().await;
    let running = start(|h| h.max_sessions(3), test_server(gate())).await;
    let raw = Raw::new(running.url("/mcp"));
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(open(&raw, INIT).await);
    }
    // Touch the first, so the second is the one idle the longest.
    assert_eq!(ping(&raw, &ids[0]).await, 200);
    let newest = open(&raw, INIT).await;
    assert_eq!(ping(&raw, &ids[1]).await, 404);
    for id in [&ids[0], &ids[2], &newest] {
        assert_eq!(ping(&raw, id).await, 200);
    }
}

#[tokio::test]
async fn beyond_the_cap_with_every_session_busy_initialize_gets_503() {
    let _turn = SERIAL.lock().await;
    let running = start(|h| h.max_sessions(2), test_server(gate())).await;
    let raw = Raw::new(running.url("/mcp"));
    let mut streams = Vec::new();
    for _ in 0..2 {
        let id = open(&raw, INIT).await;
        // An open GET stream makes the session busy.
        let stream = raw.get(&[("mcp-session-id", &id)]).await;
        assert_eq!(stream.status(), 200);
        streams.push(stream);
    }
    let refused = raw.post(&[], INIT).await;
    assert_eq!(refused.status(), 503);
    assert_eq!(refused.headers()["retry-after"], "1");
    drop(streams);
}

/// The attack: each session kept its whole `initialize` (up to 4 MiB) for 30 minutes.
#[tokio::test]
async fn an_idle_session_does_not_keep_a_bloated_initialize() {
    let _turn = SERIAL.lock().await;
    let running = start(|h| h, test_server(gate())).await;
    let raw = Raw::new(running.url("/mcp"));
    let junk = "j".repeat(1_000_000);
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-11-25",
        "capabilities":{"experimental":{"junk":junk},"junk":junk},
        "clientInfo":{"name":junk,"version":"1"}}})
    .to_string();
    open(&raw, &init).await;
    let before = rss_kb();
    let sessions = 50;
    let mut ids = Vec::new();
    for _ in 0..sessions {
        ids.push(open(&raw, &init).await);
    }
    let per_session = (rss_kb().saturating_sub(before)) / sessions;
    eprintln!("an idle session after a 3 MB initialize: {per_session} kB");
    // It kept about 3,000 kB each (the whole initialize) before.
    assert!(per_session < 1024, "{per_session} kB per idle session");
}

/// Opens `sessions` sessions over `clients` concurrent clients, leaves them idle until they
/// expire, and returns the memory (kB) at the start, with them all open, and after.
///
/// It does so twice and measures the second round: the first brings the allocator's arenas,
/// the session map and the connection pool to their working size, which they keep (glibc
/// does not hand every freed page back). What a leak would show is growth from one round to
/// the next.
async fn soak_sessions(sessions: usize) -> (u64, u64, u64) {
    let began = Instant::now();
    let idle = Duration::from_secs(2);
    let running = start(
        move |h| h.idle_timeout(idle).max_sessions(sessions + 1),
        test_server(gate()),
    )
    .await;
    let raw = Arc::new(Raw::new(running.url("/mcp")));
    round(&raw, sessions, idle).await;
    let start_kb = rss_kb();
    let open_kb = round(&raw, sessions, idle).await;
    let after_kb = rss_kb();
    // Reported, never asserted: the soak's wall-clock time, for the README's figures.
    eprintln!(
        "{sessions} idle sessions: two rounds of opening them and letting them expire took {:.1?}",
        began.elapsed()
    );
    (start_kb, open_kb, after_kb)
}

/// One round of the soak: opens the sessions, then waits until they all expired; the
/// memory (kB) while they were all open.
async fn round(raw: &Arc<Raw>, sessions: usize, idle: Duration) -> u64 {
    let clients = 8;
    let mut tasks = Vec::new();
    for c in 0..clients {
        let raw = raw.clone();
        tasks.push(tokio::spawn(async move {
            let mut ids = Vec::new();
            for _ in (c..sessions).step_by(clients) {
                ids.push(open(&raw, INIT).await);
            }
            ids
        }));
    }
    let mut ids = Vec::new();
    for task in tasks {
        ids.extend(task.await.unwrap());
    }
    assert_eq!(ids.len(), sessions);
    let open_kb = rss_kb();
    // Expiry: every session ends once idle, the last one opened too. A ping that finds it
    // alive makes it active again, so each wait is longer than an idle period and a reaping.
    let expired = tokio::time::timeout(PATIENCE, async {
        loop {
            tokio::time::sleep(idle * 3).await;
            if ping(raw, &ids[ids.len() - 1]).await == 404 {
                return;
            }
        }
    })
    .await;
    assert!(expired.is_ok(), "the sessions never expired");
    tokio::time::sleep(idle).await;
    open_kb
}

fn check_soak(sessions: usize, (start, open, after): (u64, u64, u64)) {
    eprintln!(
        "{sessions} idle sessions: RSS {start} kB at the start, {open} kB with them open ({} bytes each above the warmed-up start), {after} kB after they expired",
        (open.saturating_sub(start)) * 1024 / sessions as u64
    );
    assert!(
        after <= start + start / 10,
        "memory did not come back: {start} kB → {after} kB"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_sessions_expire_and_give_their_memory_back() {
    let _turn = SERIAL.lock().await;
    check_soak(500, soak_sessions(500).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "soak: 10,000 sessions, minutes; run with --ignored"]
async fn soak_10000_idle_sessions_expire_and_give_their_memory_back() {
    let _turn = SERIAL.lock().await;
    check_soak(10_000, soak_sessions(10_000).await);
}

/// Sends `calls` echo calls over `sessions` sessions, each answer checked against its call.
async fn soak_calls(sessions: usize, calls: usize) {
    let began = Instant::now();
    let running = start(|h| h.max_sessions(sessions + 1), test_server(gate())).await;
    let raw = Arc::new(Raw::new(running.url("/mcp")));
    let mut tasks = Vec::new();
    for s in 0..sessions {
        let raw = raw.clone();
        let per = calls / sessions + usize::from(s < calls % sessions);
        tasks.push(tokio::spawn(async move {
            let id = open(&raw, INIT).await;
            for n in 0..per {
                let text = format!("{s}-{n}");
                let call = json!({"jsonrpc":"2.0","id":n + 1,"method":"tools/call",
                    "params":{"name":"echo","arguments":{"text":text}}});
                let response = raw
                    .post(&[("mcp-session-id", &id)], &call.to_string())
                    .await;
                let answer = http::answer(response).await;
                assert_eq!(answer["id"], n + 1);
                assert_eq!(answer["result"]["content"][0]["text"], text);
            }
            per
        }));
    }
    let mut matched = 0;
    for task in tasks {
        matched += task.await.unwrap();
    }
    assert_eq!(matched, calls);
    let took = began.elapsed();
    eprintln!(
        "{calls} calls over {sessions} sessions in {took:.1?} ({:.0} calls/s): every answer matched its call",
        calls as f64 / took.as_secs_f64()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_across_sessions_are_each_answered_once_and_matched() {
    let _turn = SERIAL.lock().await;
    soak_calls(10, 2_000).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "soak: 1,000,000 calls, long; run with --ignored"]
async fn soak_1000000_calls_across_100_sessions() {
    let _turn = SERIAL.lock().await;
    soak_calls(100, 1_000_000).await;
}
