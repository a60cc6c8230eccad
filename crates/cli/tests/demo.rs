//! `junction demo` end to end: the binary starts its three example servers as child
//! processes of itself, plays the scripted conversation and passes every check.

use junction_test_support::cli::junction;

#[test]
fn the_demo_plays_the_mission_and_every_check_passes() {
    let run = junction(&["demo"]);
    let context = format!(
        "exit {}\nstdout:\n{}\nstderr:\n{}",
        run.code, run.stdout, run.stderr
    );
    assert_eq!(run.code, 0, "{context}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    let has = |line: &str| lines.contains(&line);
    let passes = |check: &str| {
        lines.iter().any(|l| {
            l.strip_prefix("PASS  ")
                .is_some_and(|l| l.starts_with(check))
        })
    };
    for check in [
        "the three servers started as child processes",
        "the model script's tool calls name offered tools and fit their input schemas",
        "the library wire log exists and is not empty",
        "the calendar wire log exists and is not empty",
        "the tasks wire log exists and is not empty",
        "the secret 4711-SECRET appears in no wire log",
        "the library's wire log holds no calendar query (\"dentist\")",
        "the calendar's wire log holds no library query (\"science\")",
        "the tasks wire log holds no library or calendar query",
        "the denied tasks__delete_task never reached the tasks server",
        "the record survived: tasks://15 still reads \"Clean out the garage\"",
        "tool error seen verbatim: No copies of 'Maps of Small Rivers' are available. Search for another title.",
        "tool error seen verbatim: Date 'tomorrow' is not in YYYY-MM-DD form. Try again, for example 2026-11-03.",
        "the retries succeeded",
        "the model was told the user declined tasks__delete_task",
        "the library's inventory_report ran as a task and the model got its report",
    ] {
        assert!(passes(check), "no PASS line for {check:?}\n{context}");
    }
    assert!(!run.stdout.contains("FAIL"), "{context}");
    assert!(has("all 16 checks passed"), "{context}");

    // The transcript: the tools under their prefixed names, the primitives, the errors
    // verbatim as the model received them, and the consent question with its answer.
    for tool in [
        "library__search",
        "library__checkout",
        "calendar__search",
        "calendar__add_event",
        "calendar__delete_event",
        "tasks__delete_task",
        "library__inventory_report",
    ] {
        assert!(
            lines.iter().any(|l| l.trim_start().starts_with(tool)),
            "{tool} is not listed\n{context}"
        );
    }
    for line in [
        "  /library:reading_list <subject>  Asks for a reading list on a subject, from the library's own catalogue.",
        "+ /library:reading_list subject=science added 1 message to the conversation",
        "+ attached @library:library://policy (283 characters)",
        "← library.checkout error: No copies of 'Maps of Small Rivers' are available. Search for another title.",
        "← calendar.add_event error: Date 'tomorrow' is not in YYYY-MM-DD form. Try again, for example 2026-11-03.",
        "? consent needed for tasks.delete_task: it is not marked read-only",
        "  tasks.delete_task would receive: {\"id\":15}",
        "Allow? [o]nce, [a]lways, [d]eny (default deny): d   (answered by the demo's user)",
        "  consent for tasks.delete_task: denied",
    ] {
        assert!(has(line), "line {line:?} missing\n{context}");
    }
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("you: My locker code is 4711-SECRET; never share it.")),
        "{context}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("← calendar.add_event ok: Added event 7: Study session on ")),
        "{context}"
    );
    // The inventory report runs as a task: its status is shown until it completes (the
    // first may already name the shelf, if the handler said so before it became a task).
    let task_lines: Vec<&&str> = lines
        .iter()
        .filter(|l| l.starts_with("  library.inventory_report task "))
        .collect();
    assert!(
        task_lines.first().is_some_and(
            |l| l.ends_with(" working") || l.ends_with(" working: Counting the science shelf")
        ) && task_lines.last().is_some_and(|l| l.contains(" completed")),
        "{context}"
    );
    assert!(
        has("← library.inventory_report ok: Inventory of 5 titles:"),
        "{context}"
    );
}

#[test]
fn a_kept_directory_holds_the_databases_and_wire_logs_and_a_second_run_starts_afresh() {
    let dir = std::env::temp_dir().join(format!("junction-demo-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let dir_arg = dir.to_string_lossy().into_owned();
    for _ in 0..2 {
        let run = junction(&["demo", "--dir", &dir_arg]);
        assert_eq!(
            run.code, 0,
            "stdout:\n{}\nstderr:\n{}",
            run.stdout, run.stderr
        );
        assert!(
            run.stdout.contains("all 16 checks passed"),
            "{}",
            run.stdout
        );
    }
    for server in ["library", "calendar", "tasks"] {
        assert!(dir.join(format!("{server}.db")).is_file(), "{server}.db");
        let log = std::fs::read_to_string(dir.join(format!("{server}.wire.jsonl")))
            .expect("the wire log is kept");
        assert!(log
            .lines()
            .all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok()));
        assert!(!log.contains("4711-SECRET"));
    }
    std::fs::remove_dir_all(&dir).expect("remove the kept directory");
}

/// The demo passes on each protocol family, pinned: on 2026-07-28 every server is reached
/// through `server/discover` and no `initialize` crosses the wire; on 2025-11-25 the reverse.
#[test]
fn the_demo_passes_pinned_to_either_protocol_family() {
    for (version, spoken, absent) in [
        ("2026-07-28", "\"server/discover\"", "\"initialize\""),
        ("2025-11-25", "\"initialize\"", "\"server/discover\""),
    ] {
        let dir = std::env::temp_dir().join(format!(
            "junction-demo-{version}-test-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let dir_arg = dir.to_string_lossy().into_owned();
        let run = junction(&["demo", "--protocol-version", version, "--dir", &dir_arg]);
        let context = format!(
            "{version}: stdout:\n{}\nstderr:\n{}",
            run.stdout, run.stderr
        );
        assert_eq!(run.code, 0, "{context}");
        assert!(!run.stdout.contains("FAIL"), "{context}");
        assert!(
            run.stdout
                .lines()
                .any(|l| l.starts_with("all ") && l.ends_with(" checks passed")),
            "{context}"
        );
        for server in ["library", "calendar", "tasks"] {
            let log = std::fs::read_to_string(dir.join(format!("{server}.wire.jsonl")))
                .expect("the wire log is kept");
            assert!(
                log.contains(spoken),
                "{version}: {server} log lacks {spoken}"
            );
            assert!(
                !log.contains(absent),
                "{version}: {server} log has {absent}"
            );
        }
        std::fs::remove_dir_all(&dir).expect("remove the kept directory");
    }
}
