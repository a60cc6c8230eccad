//! Tool-call consent at the terminal: allow once, for this session (until the host exits),
//! always (remembered by the host's policy file), or deny.
//!
//! The host has already shown which call asks and why (its `ConsentAsked` event); this adds
//! the full arguments and the declared annotations, then asks. An empty answer or the end
//! of the input denies. Without a person to ask ([`Answers::Yes`] / [`Answers::No`]) the
//! answer is given at once and said; a tool whose definition changed since it was allowed
//! is never allowed that way, since nobody reviewed the change.

use junction::session::BoxFuture;
use junction_host::consent::{Consent, ConsentAnswer, ConsentRequest};
use junction_host::display;
use junction_host::events::describe_annotations;

use super::events::{call_name, compact};
use super::style::Paint;
use super::{shorten, Answers, Io, Terminal};

/// How many characters of one changed field are shown.
const CHANGE_SHOWN: usize = 400;

/// How many characters of the arguments are shown (all of them, within reason: the person
/// decides on what the server would receive).
const ARGUMENTS_SHOWN: usize = 4_000;

/// Answers consent questions at the terminal.
#[derive(Debug, Clone)]
pub struct TerminalConsent {
    terminal: Terminal,
    answers: Answers,
}

impl TerminalConsent {
    /// Asks on `terminal`, or answers as `answers` says when there is nobody to ask.
    pub fn new(terminal: Terminal, answers: Answers) -> Self {
        TerminalConsent { terminal, answers }
    }
}

impl Consent for TerminalConsent {
    fn ask<'a>(&'a self, request: &'a ConsentRequest) -> BoxFuture<'a, ConsentAnswer> {
        let request = request.clone();
        let answers = self.answers;
        Box::pin(self.terminal.exchange(ConsentAnswer::Deny, move |io| {
            consent(io, &request, answers)
        }))
    }
}

/// Puts one consent question and returns the answer.
pub fn consent(io: &mut Io, request: &ConsentRequest, answers: Answers) -> ConsentAnswer {
    io.say(&format!(
        "  {} would receive: {}",
        call_name(&request.server, &request.tool),
        compact(&request.arguments, ARGUMENTS_SHOWN)
    ));
    io.say(&format!(
        "  server: `{}` (its name in your config); tool: `{}`",
        display::name(&request.server),
        display::exact(&request.tool)
    ));
    if request.disguised {
        io.say(&io.style.paint(
            Paint::Red,
            "  ! this tool's name has look-alike or invisible characters: it is not the name it looks like",
        ));
    }
    let changed = !request.changes.is_empty() || request.reason.contains("definition changed");
    if changed {
        io.say(&io.style.paint(
            Paint::Red,
            "  ! this tool changed since you allowed it; review what changed:",
        ));
        for change in &request.changes {
            io.say(&format!(
                "    {}",
                shorten(&display::line(change), CHANGE_SHOWN)
            ));
        }
    }
    let trust = if request.trusted {
        "trusted server"
    } else {
        "declared by an untrusted server, not believed"
    };
    io.say(&format!(
        "  annotations ({trust}): {}",
        describe_annotations(request.annotations.as_ref())
    ));
    match answers {
        // A changed definition waits for a person to review it: `--yes` does not accept it.
        Answers::Yes if changed => {
            io.say("  not asking: a changed tool needs your review; denied (--yes does not accept changes)");
            return ConsentAnswer::NobodyToAsk;
        }
        Answers::Yes => {
            io.say("  not asking: allowed once (--yes)");
            return ConsentAnswer::AllowOnce;
        }
        Answers::No => {
            io.say("  not asking (non-interactive): denied; pass --yes to allow");
            return ConsentAnswer::NobodyToAsk;
        }
        Answers::Ask => {}
    }
    let question = if request.rememberable {
        "Allow? [o]nce, [s]ession, [a]lways, [d]eny (default deny): "
    } else {
        "Allow? [o]nce, [d]eny (default deny): "
    };
    let question = io.style.paint(Paint::Yellow, question);
    loop {
        let Some(answer) = io.ask(&question) else {
            io.say("  no answer: denied");
            return ConsentAnswer::Deny;
        };
        match answer.trim().to_ascii_lowercase().as_str() {
            "o" | "once" | "y" | "yes" => return ConsentAnswer::AllowOnce,
            "s" | "session" if request.rememberable => return ConsentAnswer::AllowForSession,
            "a" | "always" if request.rememberable => return ConsentAnswer::AlwaysAllow,
            "a" | "always" | "s" | "session" => io.say(
                "  a rule decides this tool, so the answer cannot be remembered; answer once or deny",
            ),
            "" | "d" | "deny" | "n" | "no" => return ConsentAnswer::Deny,
            other => io.say(&format!("  {other:?} is not an answer here")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::scripted;
    use super::*;
    use junction_protocol::tools::ToolAnnotations;
    use serde_json::json;

    fn request(rememberable: bool) -> ConsentRequest {
        ConsentRequest {
            server: "tasks".into(),
            tool: "delete_task".into(),
            model_name: "tasks__delete_task".into(),
            arguments: json!({"id": 3}),
            annotations: Some(ToolAnnotations::default().destructive(true)),
            trusted: false,
            reason: "it is not marked read-only".into(),
            rememberable,
            changes: Vec::new(),
            disguised: false,
        }
    }

    #[tokio::test]
    async fn each_answer_is_read_from_the_input() {
        let (terminal, out) = scripted("o\nalways\ns\nsession\nd\n\n");
        let consent = TerminalConsent::new(terminal, Answers::Ask);
        let r = request(true);
        assert_eq!(consent.ask(&r).await, ConsentAnswer::AllowOnce);
        assert_eq!(consent.ask(&r).await, ConsentAnswer::AlwaysAllow);
        assert_eq!(consent.ask(&r).await, ConsentAnswer::AllowForSession);
        assert_eq!(consent.ask(&r).await, ConsentAnswer::AllowForSession);
        assert_eq!(consent.ask(&r).await, ConsentAnswer::Deny);
        assert_eq!(consent.ask(&r).await, ConsentAnswer::Deny);
        let shown = out.text();
        assert!(
            shown.contains(r#"tasks.delete_task would receive: {"id":3}"#),
            "{shown}"
        );
        assert!(shown.contains("not believed): destructive=true"), "{shown}");
        assert!(
            shown.contains("[o]nce, [s]ession, [a]lways, [d]eny"),
            "{shown}"
        );
    }

    #[tokio::test]
    async fn a_bad_answer_is_asked_again_and_the_end_of_input_denies() {
        let (terminal, out) = scripted("maybe\nyes\n");
        let consent = TerminalConsent::new(terminal, Answers::Ask);
        assert_eq!(consent.ask(&request(true)).await, ConsentAnswer::AllowOnce);
        assert!(out.text().contains("\"maybe\" is not an answer here"));
        assert_eq!(consent.ask(&request(true)).await, ConsentAnswer::Deny);
        assert!(out.text().contains("no answer: denied"));
    }

    #[tokio::test]
    async fn session_and_always_are_not_offered_when_they_cannot_be_remembered() {
        let (terminal, out) = scripted("a\ns\no\n");
        let consent = TerminalConsent::new(terminal, Answers::Ask);
        assert_eq!(consent.ask(&request(false)).await, ConsentAnswer::AllowOnce);
        let shown = out.text();
        assert!(!shown.contains("[a]lways"), "{shown}");
        assert!(!shown.contains("[s]ession"), "{shown}");
        assert_eq!(shown.matches("cannot be remembered").count(), 2, "{shown}");
        assert!(shown.contains("cannot be remembered"), "{shown}");
    }

    #[tokio::test]
    async fn without_a_person_the_answer_is_given_and_said_without_reading() {
        let (terminal, out) = scripted("o\n");
        let consent = TerminalConsent::new(terminal.clone(), Answers::No);
        assert_eq!(
            consent.ask(&request(true)).await,
            ConsentAnswer::NobodyToAsk
        );
        assert!(out
            .text()
            .contains("not asking (non-interactive): denied; pass --yes to allow"));
        let consent = TerminalConsent::new(terminal.clone(), Answers::Yes);
        assert_eq!(consent.ask(&request(true)).await, ConsentAnswer::AllowOnce);
        assert!(out.text().contains("allowed once (--yes)"));
        // The input was never read.
        assert_eq!(terminal.with(|io| io.ask("")).as_deref(), Some("o"));
    }
}
