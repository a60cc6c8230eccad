//! CI's smoke of the benchmark harness: `junction-bench smoke` runs a few hundred calls of
//! every workload against Junction's echo server and the raw echo (the debug builds), and
//! every answer must be the right echo. Speed is the benchmark's business, never a test's.

use std::process::Command;

#[test]
fn every_workload_answers_every_call_with_the_right_echo() {
    let out =
        std::env::temp_dir().join(format!("junction-bench-smoke-{}.json", std::process::id()));
    let status = Command::new(env!("CARGO_BIN_EXE_junction-bench"))
        .args(["smoke", "--out"])
        .arg(&out)
        .status()
        .expect("junction-bench runs");
    assert!(
        status.success(),
        "junction-bench smoke failed (its stderr names the run)"
    );

    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&out).expect("the report")).expect("JSON");
    let _ = std::fs::remove_file(&out);
    let runs = report["runs"].as_array().expect("runs");
    let throughput = [
        "stdio-c1",
        "stdio-c32",
        "stdio-2026-c32",
        "http-s1-json",
        "http-s32-json",
        "http-s32-sse",
        "http-sessionless-c1",
        "http-2026-c1",
        "http-2026-c32",
    ];
    for subject in ["junction", "raw"] {
        for workload in throughput {
            let run = runs
                .iter()
                .find(|r| r["subject"] == subject && r["workload"] == workload)
                .unwrap_or_else(|| panic!("no {workload} run for {subject}"));
            let result = &run["result"];
            assert_eq!(result["mismatched"], 0, "{subject} {workload}: {result}");
            // 320 measured calls, split evenly over the connections of HTTP workloads.
            assert!(
                result["matched"].as_u64() >= Some(320),
                "{subject} {workload}: {result}"
            );
        }
        let idle = runs
            .iter()
            .find(|r| r["subject"] == subject && r["workload"] == "http-idle-session")
            .expect("an idle-session run");
        assert!(
            idle["result"]["figures"]["kib_per_session"].is_number(),
            "{idle}"
        );
        let cold = runs
            .iter()
            .find(|r| r["subject"] == subject && r["workload"] == "cold-start")
            .expect("a cold-start run");
        assert!(
            cold["result"]["figures"]["cold_start_ms"].as_f64() > Some(0.0),
            "{cold}"
        );
    }
}

/// `frames` is what a callgrind run of the echo server reads (see the README): the server,
/// its stdin a file that ends, answers every call with the right echo, in both families.
#[test]
fn the_echo_server_answers_every_frame_of_a_file_that_ends() {
    for family in [&[][..], &["--stateless"][..]] {
        let frames = Command::new(env!("CARGO_BIN_EXE_junction-bench"))
            .args(["frames", "--calls", "500"])
            .args(family)
            .output()
            .expect("junction-bench frames runs");
        assert!(frames.status.success());
        let input = std::env::temp_dir().join(format!(
            "junction-bench-frames-{}-{}.jsonl",
            std::process::id(),
            family.len()
        ));
        std::fs::write(&input, &frames.stdout).expect("the frames are written");
        let served = Command::new(env!("CARGO_BIN_EXE_bench-junction-echo"))
            .arg("stdio")
            .stdin(std::fs::File::open(&input).expect("the frames"))
            .output()
            .expect("the echo server runs");
        let _ = std::fs::remove_file(&input);
        assert!(served.status.success(), "{family:?}");
        let answers: Vec<serde_json::Value> = served
            .stdout
            .split(|&b| b == b'\n')
            .filter(|line| !line.is_empty())
            .map(|line| serde_json::from_slice(line).expect("each answer is JSON"))
            .collect();
        let calls: Vec<&serde_json::Value> = answers.iter().filter(|a| a["id"] != 0).collect();
        assert_eq!(calls.len(), 500, "{family:?}: every call answered");
        for answer in calls {
            let id = answer["id"].as_u64().expect("a numeric id");
            assert_eq!(
                answer["result"]["content"][0]["text"],
                format!("Echo: m{id}"),
                "{family:?}"
            );
        }
    }
}

#[test]
fn a_name_in_only_that_is_no_subject_or_workload_is_refused_before_anything_runs() {
    let cache = std::env::temp_dir().join(format!("junction-bench-only-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_junction-bench"))
        .args(["run", "--quick", "--only", "junction,2026-c32", "--cache"])
        .arg(&cache)
        .output()
        .expect("junction-bench runs");
    let _ = std::fs::remove_dir_all(&cache);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(r#"no subject or workload is called "2026-c32""#)
            && stderr.contains("http-2026-c32"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "nothing was measured");
}
