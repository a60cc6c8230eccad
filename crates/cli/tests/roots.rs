//! The roots `junction chat` offers: the working directory by default, each `--root DIR`,
//! and a directory added with `/roots add DIR` (the server told with
//! `notifications/roots/list_changed`). The server is the hostile shell script of the
//! host's tests, asking `roots/list` during each call.

use junction_test_support::cli;
use junction_test_support::hostile::{tool, Hostile};
use junction_test_support::process::Run;
use serde_json::{json, Value};

/// The `file://` URI of `dir` as the host writes it (these test paths need no escaping).
fn uri(dir: &std::path::Path) -> String {
    format!("file://{}", std::fs::canonicalize(dir).unwrap().display())
}

#[test]
fn the_working_directory_and_each_root_flag_are_offered_and_an_added_root_is_announced() {
    let server = Hostile::new("roots");
    server.write("tools.json", &json!([tool("look", "Looks around.")]));
    std::fs::write(server.path("roots"), "").unwrap();
    let work = server.path("work");
    let extra = server.path("extra");
    let added = server.path("added");
    for dir in [&work, &extra, &added] {
        std::fs::create_dir_all(dir).unwrap();
    }
    let config = server.path("config.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"fs": server.entry()}}).to_string(),
    )
    .unwrap();
    let model = server.path("model.json");
    let call = json!({"toolCalls": [{"name": "fs__look", "arguments": {}}]});
    std::fs::write(
        &model,
        json!([call, {"text": "one"}, call, {"text": "two"}]).to_string(),
    )
    .unwrap();
    let input = format!(
        "look\n/roots\n/roots add {}\nlook again\n/quit\n",
        added.display()
    );
    let run = Run::of(
        cli::host_command(&server.dir)
            .current_dir(&work)
            .args(["chat", "--yes", "--no-save", "--config"])
            .arg(&config)
            .arg("--model")
            .arg(format!("scripted:{}", model.display()))
            .arg("--root")
            .arg(&extra)
            .env("XDG_STATE_HOME", &server.dir)
            .env("NO_COLOR", "1"),
        Some(&input),
    );
    assert_eq!(
        run.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    let initialize = &server.received_method("initialize")[0];
    assert_eq!(
        initialize["params"]["capabilities"]["roots"],
        json!({"listChanged": true})
    );
    let answers: Vec<Vec<Value>> = server
        .received()
        .into_iter()
        .filter(|m| m["id"] == 701)
        .map(|m| {
            m["result"]["roots"]
                .as_array()
                .unwrap_or_else(|| panic!("{m}"))
                .iter()
                .map(|r| r["uri"].clone())
                .collect()
        })
        .collect();
    let (work, extra, added) = (uri(&work), uri(&extra), uri(&added));
    assert_eq!(
        answers,
        [
            vec![json!(work), json!(extra)],
            vec![json!(work), json!(extra), json!(added)]
        ],
        "stdout:\n{}",
        run.stdout
    );
    assert_eq!(
        server
            .received_method("notifications/roots/list_changed")
            .len(),
        1
    );
    let lines: Vec<&str> = run.stdout.lines().collect();
    let listed = format!("  fs: {work}, {extra}");
    assert!(lines.contains(&listed.as_str()), "{}", run.stdout);
    let told = format!("{added} added; told fs");
    assert!(lines.contains(&told.as_str()), "{}", run.stdout);
}
