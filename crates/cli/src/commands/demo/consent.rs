//! The demo's user at the consent prompt: shown the same question a person sees in
//! `junction chat`, and answering "deny" in plain sight.

use std::io::Write;

use junction::session::BoxFuture;
use junction_host::consent::{Consent, ConsentAnswer, ConsentRequest};
use junction_host::display;
use junction_host::events::describe_annotations;

use crate::terminal::events::call_name;
use crate::terminal::style::Paint;
use crate::terminal::Style;

/// Denies every call it is asked about, printing the question and the answer on stdout.
#[derive(Debug)]
pub struct DemoConsent {
    style: Style,
}

impl DemoConsent {
    /// A user who says no, shown with `style`.
    pub fn new(style: Style) -> Self {
        DemoConsent { style }
    }

    /// The lines of one question and its answer.
    fn lines(&self, request: &ConsentRequest) -> Vec<String> {
        let trust = if request.trusted {
            "trusted server"
        } else {
            "declared by an untrusted server, not believed"
        };
        let question = if request.rememberable {
            "Allow? [o]nce, [a]lways, [d]eny (default deny): "
        } else {
            "Allow? [o]nce, [d]eny (default deny): "
        };
        vec![
            format!(
                "  {} would receive: {}",
                call_name(&request.server, &request.tool),
                display::line(&request.arguments.to_string())
            ),
            format!(
                "  annotations ({trust}): {}",
                describe_annotations(request.annotations.as_ref())
            ),
            format!(
                "{}d   (answered by the demo's user)",
                self.style.paint(Paint::Yellow, question)
            ),
        ]
    }
}

impl Consent for DemoConsent {
    fn ask<'a>(&'a self, request: &'a ConsentRequest) -> BoxFuture<'a, ConsentAnswer> {
        let lines = self.lines(request);
        let mut out = std::io::stdout().lock();
        for line in lines {
            let _ = writeln!(out, "{line}");
        }
        let _ = out.flush();
        Box::pin(std::future::ready(ConsentAnswer::Deny))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use junction_protocol::tools::ToolAnnotations;
    use serde_json::json;

    #[test]
    fn the_question_shows_the_arguments_and_annotations_and_the_answer_is_deny() {
        let request = ConsentRequest {
            server: "tasks".into(),
            tool: "delete_task".into(),
            model_name: "tasks__delete_task".into(),
            arguments: json!({"id": 15}),
            annotations: Some(ToolAnnotations::default().destructive(true)),
            trusted: true,
            reason: "it may destroy data".into(),
            rememberable: true,
            changes: Vec::new(),
            disguised: false,
        };
        let consent = DemoConsent::new(Style::plain());
        assert_eq!(
            consent.lines(&request),
            [
                r#"  tasks.delete_task would receive: {"id":15}"#,
                "  annotations (trusted server): destructive=true",
                "Allow? [o]nce, [a]lways, [d]eny (default deny): d   (answered by the demo's user)",
            ]
        );
        let answer = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(consent.ask(&request));
        assert_eq!(answer, ConsentAnswer::Deny);
    }
}
