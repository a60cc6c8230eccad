//! Engine tests over the in-memory transport, asserting exact message sequences.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use junction_protocol::{jsonrpc, ErrorObject, Notification};
use serde_json::json;
use serde_json::value::RawValue;

use super::*;
use crate::error::RequestError;
use crate::transport::memory;

/// `sleep` takes `{"ms": n}` and answers after that long; `fail` answers an error;
/// `count` counts how many handlers finished; anything else echoes.
#[derive(Default)]
struct TestService {
    finished: Arc<AtomicUsize>,
    notifications: Arc<std::sync::Mutex<Vec<String>>>,
}

impl Service for TestService {
    fn request<'a>(
        &'a self,
        req: IncomingRequest,
    ) -> BoxFuture<'a, Result<Box<RawValue>, ErrorObject>> {
        Box::pin(async move {
            let params: serde_json::Value = req
                .params
                .as_deref()
                .map(|p| serde_json::from_str(p.get()).unwrap())
                .unwrap_or(json!({}));
            match req.method.as_str() {
                "sleep" => {
                    let ms = params["ms"].as_u64().unwrap_or(0);
                    for step in 1..=4 {
                        tokio::time::sleep(Duration::from_millis(ms / 4)).await;
                        req.context.progress(step as f64, Some(4.0), None);
                    }
                    self.finished.fetch_add(1, Ordering::SeqCst);
                    Ok(jsonrpc::to_raw(&json!({"slept": ms})).unwrap())
                }
                "fail" => Err(ErrorObject::invalid_params("nope")),
                _ => Ok(req.params.unwrap_or_else(jsonrpc::empty_object)),
            }
        })
    }
    fn notification<'a>(&'a self, n: Notification, _: &'a Peer) -> BoxFuture<'a, ()> {
        self.notifications.lock().unwrap().push(n.method);
        Box::pin(async {})
    }
}

fn raw_session() -> (memory::RawPeer, Peer, Arc<AtomicUsize>) {
    let (conn, raw) = memory::raw();
    let service = TestService::default();
    let finished = service.finished.clone();
    let peer = Session::start(conn, service, SessionOptions::default());
    (raw, peer, finished)
}

#[tokio::test]
async fn slow_request_does_not_delay_a_fast_one() {
    let (mut raw, _peer, _) = raw_session();
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"sleep","params":{"ms":400}}"#)
        .await;
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"echo","params":{"x":1}}"#)
        .await;
    assert_eq!(
        raw.recv().await.unwrap(),
        json!({"jsonrpc":"2.0","id":2,"result":{"x":1}})
    );
    assert_eq!(
        raw.recv().await.unwrap(),
        json!({"jsonrpc":"2.0","id":1,"result":{"slept":400}})
    );
}

#[tokio::test]
async fn cancelled_handler_is_stopped_and_not_answered() {
    let (mut raw, _peer, finished) = raw_session();
    raw.send(r#"{"jsonrpc":"2.0","id":"a","method":"sleep","params":{"ms":200}}"#)
        .await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a","reason":"user"}}"#).await;
    raw.send(r#"{"jsonrpc":"2.0","id":"b","method":"echo"}"#)
        .await;
    assert_eq!(
        raw.recv().await.unwrap(),
        json!({"jsonrpc":"2.0","id":"b","result":{}})
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        finished.load(Ordering::SeqCst),
        0,
        "the handler kept running"
    );
    assert!(
        raw.sent.try_recv().is_err(),
        "a cancelled request was answered"
    );
}

#[tokio::test]
async fn a_request_cancelled_before_or_after_its_token_is_made_is_cancelled_either_way() {
    let (_raw, peer, _) = raw_session();
    let (early, handle) = context::RequestContext::incoming(RequestId::from(1), None, peer.clone());
    assert!(!early.is_cancelled());
    handle.cancel();
    assert!(early.is_cancelled());
    assert!(
        early.cancellation().is_cancelled(),
        "a token made after the cancellation starts cancelled"
    );
    let (late, handle) = context::RequestContext::incoming(RequestId::from(2), None, peer);
    let token = late.cancellation();
    assert!(!token.is_cancelled() && !late.is_cancelled());
    let waiter = tokio::spawn({
        let late = late.clone();
        async move { late.cancelled().await }
    });
    tokio::task::yield_now().await;
    handle.cancel();
    tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .expect("the waiter woke")
        .unwrap();
    assert!(token.is_cancelled() && late.is_cancelled());
    // A handle that outlives its request cancels nothing.
    drop((late, token));
    handle.cancel();
}

#[tokio::test]
async fn duplicate_in_flight_id_is_refused() {
    let (mut raw, _peer, _) = raw_session();
    raw.send(r#"{"jsonrpc":"2.0","id":7,"method":"sleep","params":{"ms":100}}"#)
        .await;
    raw.send(r#"{"jsonrpc":"2.0","id":7,"method":"echo"}"#)
        .await;
    let dup = raw.recv().await.unwrap();
    assert_eq!(dup["id"], 7);
    assert_eq!(dup["error"]["code"], -32600);
    assert_eq!(raw.recv().await.unwrap()["result"], json!({"slept":100}));
}

#[tokio::test]
async fn malformed_frames_get_errors_and_the_session_goes_on() {
    let (mut raw, _peer, _) = raw_session();
    raw.send("{oops").await;
    assert_eq!(raw.recv().await.unwrap()["error"]["code"], -32700);
    raw.send(r#"{"jsonrpc":"2.0","id":3}"#).await;
    let e = raw.recv().await.unwrap();
    assert_eq!(
        (e["id"].clone(), e["error"]["code"].clone()),
        (json!(3), json!(-32600))
    );
    raw.send(r#"{"jsonrpc":"2.0","id":4,"method":"echo"}"#)
        .await;
    assert_eq!(raw.recv().await.unwrap()["id"], 4);
}

#[tokio::test]
async fn responses_to_unknown_ids_are_dropped() {
    let (mut raw, _peer, _) = raw_session();
    raw.send(r#"{"jsonrpc":"2.0","id":999,"result":{}}"#).await;
    raw.send(r#"{"jsonrpc":"2.0","id":5,"method":"echo"}"#)
        .await;
    assert_eq!(
        raw.recv().await.unwrap(),
        json!({"jsonrpc":"2.0","id":5,"result":{}})
    );
}

#[tokio::test]
async fn outgoing_request_times_out_and_cancels_on_the_peer() {
    let (mut raw, peer, _) = raw_session();
    let call = tokio::spawn({
        let peer = peer.clone();
        async move {
            peer.request_raw(
                "never",
                None,
                RequestOptions::default().timeout(Duration::from_millis(50)),
            )
            .await
        }
    });
    let req = raw.recv().await.unwrap();
    assert_eq!(req["method"], "never");
    let cancel = raw.recv().await.unwrap();
    assert_eq!(cancel["method"], "notifications/cancelled");
    assert_eq!(cancel["params"]["requestId"], req["id"]);
    assert!(matches!(
        call.await.unwrap(),
        Err(RequestError::Timeout { .. })
    ));
}

#[tokio::test]
async fn dropping_a_request_future_cancels_it() {
    let (mut raw, peer, _) = raw_session();
    let call =
        tokio::spawn(async move { peer.request_raw("never", None, Default::default()).await });
    let req = raw.recv().await.unwrap();
    call.abort();
    let cancel = raw.recv().await.unwrap();
    assert_eq!(cancel["method"], "notifications/cancelled");
    assert_eq!(cancel["params"]["requestId"], req["id"]);
}

#[tokio::test]
async fn remote_errors_and_closed_connections_are_reported() {
    let (a, b) = memory::pair(Default::default());
    let server = Session::start(b, TestService::default(), SessionOptions::default());
    let client = Session::start(a, TestService::default(), SessionOptions::default());
    let err = client
        .request_raw("fail", None, Default::default())
        .await
        .unwrap_err();
    assert_eq!(err.remote().unwrap().code.0, -32602);
    server.close();
    let err = client
        .request_raw("echo", None, Default::default())
        .await
        .unwrap_err();
    assert!(matches!(err, RequestError::Closed { .. }), "{err:?}");
    client.closed().await;
}

#[tokio::test]
async fn progress_reaches_the_requester_and_only_increases() {
    let (a, b) = memory::pair(Default::default());
    let _server = Session::start(b, TestService::default(), SessionOptions::default());
    let client = Session::start(a, TestService::default(), SessionOptions::default());
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = seen.clone();
    let options =
        RequestOptions::default().on_progress(move |u| sink.lock().unwrap().push(u.progress));
    let params = jsonrpc::to_raw(&json!({"ms": 40})).unwrap();
    client
        .request_raw("sleep", Some(params), options)
        .await
        .unwrap();
    assert_eq!(*seen.lock().unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
}

#[tokio::test]
async fn progress_restarts_the_timeout_when_asked() {
    let (a, b) = memory::pair(Default::default());
    let _server = Session::start(b, TestService::default(), SessionOptions::default());
    let client = Session::start(a, TestService::default(), SessionOptions::default());
    let mut options = RequestOptions::default()
        .timeout(Duration::from_millis(150))
        .on_progress(|_| {});
    options.reset_timeout_on_progress = true;
    options.max_total = Some(Duration::from_secs(5));
    // 4 steps of 100 ms: longer than the timeout in total, shorter between updates.
    let params = jsonrpc::to_raw(&json!({"ms": 400})).unwrap();
    let result = client
        .request_raw("sleep", Some(params), options)
        .await
        .unwrap();
    assert_eq!(result.get(), r#"{"slept":400}"#);
}

#[tokio::test]
async fn notifications_reach_the_service_in_order() {
    let (conn, raw) = memory::raw();
    let service = TestService::default();
    let seen = service.notifications.clone();
    let _peer = Session::start(conn, service, SessionOptions::default());
    for m in ["a", "b", "c"] {
        raw.send(format!(r#"{{"jsonrpc":"2.0","method":"{m}"}}"#))
            .await;
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(*seen.lock().unwrap(), vec!["a", "b", "c"]);
}

#[tokio::test]
async fn malformed_input_table_each_answered_while_the_session_keeps_serving() {
    use crate::transport::{FrameError, Inbound};
    // (frame, expected id, expected code)
    let table: Vec<(Vec<u8>, serde_json::Value, i64)> = vec![
        (b"{oops".to_vec(), json!(null), -32700),
        (b"".to_vec(), json!(null), -32700),
        (
            br#"{"jsonrpc":"2.0","id":3,"method":"pi"#.to_vec(),
            json!(null),
            -32700,
        ),
        (
            br#"{"jsonrpc":"2.0","id":4,"method":"ping"} x"#.to_vec(),
            json!(null),
            -32700,
        ),
        (vec![b'{', 0xc3, 0x28, b'}'], json!(null), -32700),
        (br#""just a string""#.to_vec(), json!(null), -32600),
        (b"42".to_vec(), json!(null), -32600),
        (b"null".to_vec(), json!(null), -32600),
        (b"[]".to_vec(), json!(null), -32600),
        (
            br#"[{"jsonrpc":"2.0","id":6,"method":"ping"}]"#.to_vec(),
            json!(null),
            -32600,
        ),
        (
            br#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#.to_vec(),
            json!(1),
            -32600,
        ),
        (br#"{"id":8,"method":"ping"}"#.to_vec(), json!(8), -32600),
        (
            br#"{"jsonrpc":2.0,"id":9,"method":"ping"}"#.to_vec(),
            json!(9),
            -32600,
        ),
        (br#"{"jsonrpc":"2.0","id":2}"#.to_vec(), json!(2), -32600),
        (
            br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#.to_vec(),
            json!(null),
            -32600,
        ),
        (
            br#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#.to_vec(),
            json!(null),
            -32600,
        ),
        (
            br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#.to_vec(),
            json!(null),
            -32600,
        ),
        (
            br#"{"jsonrpc":"2.0","id":10,"method":3}"#.to_vec(),
            json!(10),
            -32600,
        ),
        (
            br#"{"jsonrpc":"2.0","id":11,"method":"x","params":[1]}"#.to_vec(),
            json!(11),
            -32600,
        ),
        (
            br#"{"jsonrpc":"2.0","id":12,"method":"x","params":"s"}"#.to_vec(),
            json!(12),
            -32600,
        ),
        (
            br#"{"jsonrpc":"2.0","id":13,"result":{},"error":{"code":1,"message":"m"}}"#.to_vec(),
            json!(13),
            -32600,
        ),
        (
            br#"{"jsonrpc":"2.0","id":14,"method":"x","result":{}}"#.to_vec(),
            json!(14),
            -32600,
        ),
        (
            br#"{"jsonrpc":"2.0","id":15,"error":"bad"}"#.to_vec(),
            json!(15),
            -32600,
        ),
        (
            br#"{"jsonrpc":"2.0","result":{}}"#.to_vec(),
            json!(null),
            -32600,
        ),
    ];
    assert!(table.len() >= 20);
    let (mut raw, _peer, _) = raw_session();
    for (i, (frame, id, code)) in table.into_iter().enumerate() {
        let shown = String::from_utf8_lossy(&frame).into_owned();
        raw.send(frame).await;
        let answer = raw.recv().await.unwrap();
        assert_eq!(answer["jsonrpc"], "2.0", "{shown}");
        assert_eq!(
            answer.get("id").cloned().unwrap_or(json!(null)),
            id,
            "{shown}: {answer}"
        );
        assert_eq!(answer["error"]["code"], code, "{shown}: {answer}");
        assert!(!answer["error"]["message"].as_str().unwrap().is_empty());
        let probe = 1000 + i as i64;
        raw.send(format!(
            r#"{{"jsonrpc":"2.0","id":{probe},"method":"echo"}}"#
        ))
        .await;
        assert_eq!(
            raw.recv().await.unwrap(),
            json!({"jsonrpc":"2.0","id":probe,"result":{}}),
            "after {shown}"
        );
    }
    // A frame the transport refused for its size is answered too.
    raw.frames
        .send(Inbound::Refused(Box::new(FrameError::TooLarge {
            size: 5_000_000,
            limit: 4_194_304,
            response_to: None,
        })))
        .await
        .unwrap();
    let answer = raw.recv().await.unwrap();
    assert_eq!(answer["error"]["code"], -32600);
    assert!(answer["error"]["message"]
        .as_str()
        .unwrap()
        .contains("4194304"));
    raw.send(r#"{"jsonrpc":"2.0","id":"last","method":"echo"}"#)
        .await;
    assert_eq!(raw.recv().await.unwrap()["id"], "last");
}

/// Sends a `sleep` request, then ends the input; returns what the session wrote afterwards.
async fn answers_after_end_of_input(finish_running_on_eof: bool) -> Vec<serde_json::Value> {
    let (conn, raw) = memory::raw();
    let options = SessionOptions {
        finish_running_on_eof,
        ..SessionOptions::default()
    };
    let peer = Session::start(conn, TestService::default(), options);
    raw.send(r#"{"jsonrpc":"2.0","id":7,"method":"sleep","params":{"ms":40}}"#)
        .await;
    let memory::RawPeer { frames, mut sent } = raw;
    drop(frames);
    let mut written = Vec::new();
    while let Some(out) = sent.recv().await {
        written.push(serde_json::from_slice(&out.message.encode()).unwrap());
    }
    peer.closed().await;
    written
}

#[tokio::test]
async fn with_finish_running_on_eof_a_running_request_is_answered_after_end_of_input() {
    assert_eq!(
        answers_after_end_of_input(true).await,
        vec![json!({"jsonrpc":"2.0","id":7,"result":{"slept":40}})]
    );
}

#[tokio::test]
async fn by_default_end_of_input_stops_running_requests_unanswered() {
    assert_eq!(
        answers_after_end_of_input(false).await,
        Vec::<serde_json::Value>::new()
    );
}

#[tokio::test]
async fn after_end_of_input_outgoing_requests_fail_at_once() {
    let (conn, raw) = memory::raw();
    let peer = Session::start(conn, TestService::default(), SessionOptions::default());
    let memory::RawPeer { frames, sent } = raw;
    let waiting = tokio::spawn({
        let peer = peer.clone();
        async move { peer.request_raw("echo", None, Default::default()).await }
    });
    drop(frames);
    let err = waiting.await.unwrap().unwrap_err();
    assert!(matches!(err, RequestError::Closed { .. }), "{err:?}");
    drop(sent);
}

#[tokio::test]
async fn a_connection_with_a_request_id_prefix_numbers_its_requests_with_it() {
    let (mut conn, mut raw) = memory::raw();
    conn.request_id_prefix = Some("7f3a-".to_owned());
    let peer = Session::start(conn, TestService::default(), SessionOptions::default());
    let call = tokio::spawn({
        let peer = peer.clone();
        async move {
            let first = peer.request_raw("echo", None, Default::default()).await;
            let second = peer.request_raw("echo", None, Default::default()).await;
            (first, second)
        }
    });
    for expected in ["7f3a-1", "7f3a-2"] {
        let request = raw.recv().await.unwrap();
        assert_eq!(request["id"], expected);
        let answer = json!({"jsonrpc": "2.0", "id": expected, "result": {"n": expected}});
        raw.send(answer.to_string()).await;
    }
    let (first, second) = call.await.unwrap();
    assert_eq!(first.unwrap().get(), r#"{"n":"7f3a-1"}"#);
    assert_eq!(second.unwrap().get(), r#"{"n":"7f3a-2"}"#);
}

#[tokio::test]
async fn close_stops_the_reading_of_messages_already_queued() {
    let (conn, raw) = memory::raw();
    let service = TestService::default();
    let seen = service.notifications.clone();
    let peer = Session::start(conn, service, SessionOptions::default());
    // Queued before the session's task first runs (one thread): a loop that read what is
    // queued before it looked at the close would read them all, as it would read a peer
    // that never stops sending.
    const QUEUED: usize = 20;
    for _ in 0..QUEUED {
        assert!(raw.send(r#"{"jsonrpc":"2.0","method":"queued"}"#).await);
    }
    peer.close();
    // Nothing reads the session's output here: gone, it counts as written.
    drop(raw);
    peer.closed().await;
    assert_eq!(seen.lock().unwrap().len(), 0, "read after the close");
}
