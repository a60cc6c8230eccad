//! `junction completions SHELL`: a script the shell accepts, completing the commands and
//! their flags.

use std::io::Write;
use std::process::{Command, Stdio};

use junction_test_support::cli::junction;

#[test]
fn bash_completions_parse_in_bash_and_know_the_commands_and_flags() {
    let run = junction(&["completions", "bash"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    for word in [
        "chat",
        "run",
        "completions",
        "--log-level",
        "--root",
        "--no-roots",
    ] {
        assert!(run.stdout.contains(word), "{word} missing:\n{}", run.stdout);
    }
    let mut bash = Command::new("bash")
        .args(["-n", "/dev/stdin"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bash runs");
    bash.stdin
        .take()
        .unwrap()
        .write_all(run.stdout.as_bytes())
        .unwrap();
    let checked = bash.wait_with_output().unwrap();
    assert!(
        checked.status.success(),
        "{}",
        String::from_utf8_lossy(&checked.stderr)
    );
}

#[test]
fn zsh_and_fish_completions_are_written_and_an_unknown_shell_is_a_usage_error() {
    let zsh = junction(&["completions", "zsh"]);
    assert_eq!(zsh.code, 0, "{}", zsh.stderr);
    assert!(
        zsh.stdout.starts_with("#compdef junction"),
        "{}",
        zsh.stdout
    );
    let fish = junction(&["completions", "fish"]);
    assert_eq!(fish.code, 0, "{}", fish.stderr);
    assert!(
        fish.stdout.contains("complete -c junction"),
        "{}",
        fish.stdout
    );
    let unknown = junction(&["completions", "tcsh"]);
    assert_eq!(unknown.code, 2);
    assert!(unknown.stderr.contains("tcsh"), "{}", unknown.stderr);
}
