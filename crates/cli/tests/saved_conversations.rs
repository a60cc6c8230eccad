//! Conversations are saved and resumed across real processes: a `junction run` leaves a
//! file under `$XDG_DATA_HOME/junction/conversations/`, and a later `run --resume ID` or
//! `chat --continue` sends the model everything said before. The model is a local fake of
//! the Anthropic API that records what it was sent.

use std::path::{Path, PathBuf};

use junction_test_support::cli;
use junction_test_support::fake_model::{anthropic_text, FakeModel};
use junction_test_support::process::Run;
use serde_json::Value;

/// A data directory and a working directory for one test, removed when it ends.
struct Dirs {
    root: PathBuf,
}

impl Dirs {
    fn new(test: &str) -> Dirs {
        let root =
            std::env::temp_dir().join(format!("junction-saved-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("data")).unwrap();
        std::fs::create_dir_all(root.join("work")).unwrap();
        Dirs { root }
    }

    fn data(&self) -> PathBuf {
        self.root.join("data")
    }

    fn work(&self) -> PathBuf {
        self.root.join("work")
    }

    fn saved(&self) -> PathBuf {
        self.data().join("junction").join("conversations")
    }
}

impl Drop for Dirs {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// `junction ARGS` in the test's working directory, with its data directory, the fake API
/// as the Anthropic endpoint and `stdin` piped in.
fn junction(dirs: &Dirs, api: &FakeModel, args: &[&str], stdin: &str) -> Run {
    Run::of(
        cli::host_command(&dirs.root.join("config"))
            .args(args)
            .current_dir(dirs.work())
            .env("XDG_DATA_HOME", dirs.data())
            .env("ANTHROPIC_API_KEY", "sk-test-not-a-real-key")
            .env("ANTHROPIC_BASE_URL", &api.base),
        Some(stdin),
    )
}

/// The texts of the user and assistant messages the model was sent, in order.
fn texts_sent(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter_map(|block| block["text"].as_str().map(str::to_owned))
        .collect()
}

fn files(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

#[test]
fn a_run_is_saved_and_a_later_run_resumes_it_by_id() {
    let dirs = Dirs::new("resume");
    let api = FakeModel::start(vec![
        anthropic_text("Hello Ada."),
        anthropic_text("Your name is Ada."),
    ]);
    let model = ["--model", "anthropic:claude-test"];
    let first = junction(
        &dirs,
        &api,
        &[
            &["run", "--output-format", "json"][..],
            &model,
            &["My name is Ada."],
        ]
        .concat(),
        "",
    );
    assert_eq!(first.code, 0, "{first:?}");
    let id = first.json()["conversationId"]
        .as_str()
        .expect("the run says its conversation's id")
        .to_owned();
    assert!(
        first.stderr.contains(&format!("--resume {id}")),
        "{first:?}"
    );
    let saved = files(&dirs.saved());
    assert_eq!(saved, vec![dirs.saved().join(format!("{id}.json"))]);
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&saved[0]).unwrap()).unwrap();
    assert_eq!(file["id"], id.as_str());
    assert_eq!(
        file["conversation"]["messages"].as_array().unwrap().len(),
        2
    );

    let second = junction(
        &dirs,
        &api,
        &[&["run", "--resume", &id][..], &model, &["What is my name?"]].concat(),
        "",
    );
    assert_eq!(second.code, 0, "{second:?}");
    assert_eq!(second.stdout.trim(), "Your name is Ada.");
    assert!(
        second
            .stderr
            .contains(&format!("resumed conversation {id} (2 messages)")),
        "{second:?}"
    );
    let received = api.received();
    assert_eq!(received.len(), 2);
    assert_eq!(texts_sent(&received[0]), ["My name is Ada."]);
    assert_eq!(
        texts_sent(&received[1]),
        ["My name is Ada.", "Hello Ada.", "What is my name?"],
        "the resumed run sends the model everything said before"
    );
    assert_eq!(files(&dirs.saved()).len(), 1, "the same file goes on");
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&saved[0]).unwrap()).unwrap();
    assert_eq!(
        file["conversation"]["messages"].as_array().unwrap().len(),
        4
    );
}

#[test]
fn chat_continue_goes_on_with_the_latest_conversation_of_the_directory() {
    let dirs = Dirs::new("continue");
    let api = FakeModel::start(vec![
        anthropic_text("Noted: blue."),
        anthropic_text("You said blue."),
    ]);
    let model = ["--model", "anthropic:claude-test"];
    let first = junction(
        &dirs,
        &api,
        &[&["chat"][..], &model].concat(),
        "My colour is blue.\n/quit\n",
    );
    assert_eq!(first.code, 0, "{first:?}");
    assert!(first.stdout.contains("Noted: blue."), "{first:?}");

    let second = junction(
        &dirs,
        &api,
        &[&["chat", "--continue"][..], &model].concat(),
        "Which colour?\n/quit\n",
    );
    assert_eq!(second.code, 0, "{second:?}");
    assert!(second.stdout.contains("You said blue."), "{second:?}");
    assert_eq!(
        texts_sent(&api.received()[1]),
        ["My colour is blue.", "Noted: blue.", "Which colour?"]
    );
}

#[test]
fn wrong_ids_and_nothing_to_continue_are_errors_that_start_no_server() {
    let dirs = Dirs::new("errors");
    let api = FakeModel::start(Vec::new());
    let model = ["--model", "anthropic:claude-test"];
    let outside = junction(
        &dirs,
        &api,
        &[
            &["run", "--resume", "../../../etc/passwd"][..],
            &model,
            &["hi"],
        ]
        .concat(),
        "",
    );
    assert_eq!(outside.code, 1, "{outside:?}");
    assert!(
        outside.stderr.contains("is not a conversation id"),
        "{outside:?}"
    );
    let missing = junction(
        &dirs,
        &api,
        &[
            &["run", "--resume", "20260101T000000Z-00000000"][..],
            &model,
            &["hi"],
        ]
        .concat(),
        "",
    );
    assert_eq!(missing.code, 1, "{missing:?}");
    assert!(
        missing.stderr.contains("no saved conversation"),
        "{missing:?}"
    );
    let nothing = junction(
        &dirs,
        &api,
        &[&["run", "--continue"][..], &model, &["hi"]].concat(),
        "",
    );
    assert_eq!(nothing.code, 1, "{nothing:?}");
    assert!(
        nothing.stderr.contains("no saved conversation to continue"),
        "{nothing:?}"
    );
    assert!(api.received().is_empty(), "the model was never asked");
}

#[test]
fn no_save_leaves_no_file() {
    let dirs = Dirs::new("no-save");
    let api = FakeModel::start(vec![anthropic_text("Fine.")]);
    let run = junction(
        &dirs,
        &api,
        &["run", "--no-save", "--model", "anthropic:claude-test", "hi"],
        "",
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(files(&dirs.saved()).is_empty());
    assert!(!run.stderr.contains("--resume"), "{run:?}");
}
