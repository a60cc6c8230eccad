//! What servers ask back, put to the person at the terminal, always with the asking
//! server's name.
//!
//! - Sampling: the server's messages are shown and the person approves or denies; the
//!   model's answer is shown again before it goes back to the server.
//! - Elicitation, form mode: each field is asked with its title, description, type,
//!   default and choices; a bad value is explained and asked again; the person may accept,
//!   decline or cancel. Choices are shown by their titles (`oneOf` / `anyOf` with `const`
//!   and `title`, or `enumNames`) and may be typed as title, value or number, in any case;
//!   the value is sent. `email`, `uri`, `date` and `date-time` strings are checked
//!   ([`super::formats`]), as are lengths, ranges and the number of choices.
//! - Elicitation, URL mode: the URL and its site are shown and never opened; the person
//!   says whether they will open it.
//!
//! Without a person to ask ([`Answers::Yes`] / [`Answers::No`]) sampling follows the
//! answer mode and elicitations are declined; each is said.

use std::collections::BTreeMap;

use junction::session::BoxFuture;
use junction_host::interaction::{
    Approval, ElicitationAnswer, ElicitationRequest, Interaction, SamplingRequest,
};
use junction_protocol::content::Role;
use junction_protocol::elicitation::{
    ElicitParams, ElicitValue, EnumOption, FormParams, NumberType, PrimitiveSchemaDefinition,
    UrlParams,
};
use junction_protocol::sampling::CreateMessageResult;
use serde_json::Number;

use junction_host::display;

use super::events::{blocks_text, sampling_text};
use super::formats;
use super::style::Paint;
use super::{Answers, Io, Terminal};

/// Answers servers' sampling and elicitation requests at the terminal.
#[derive(Debug, Clone)]
pub struct TerminalInteraction {
    terminal: Terminal,
    answers: Answers,
}

impl TerminalInteraction {
    /// Asks on `terminal`, or answers as `answers` says when there is nobody to ask.
    pub fn new(terminal: Terminal, answers: Answers) -> Self {
        TerminalInteraction { terminal, answers }
    }
}

impl Interaction for TerminalInteraction {
    fn approve_sampling<'a>(&'a self, request: &'a SamplingRequest) -> BoxFuture<'a, Approval> {
        let request = request.clone();
        let answers = self.answers;
        Box::pin(self.terminal.exchange(Approval::Deny, move |io| {
            approve_sampling(io, &request, answers)
        }))
    }

    fn review_sampling<'a>(
        &'a self,
        request: &'a SamplingRequest,
        answer: &'a CreateMessageResult,
    ) -> BoxFuture<'a, Approval> {
        let server = request.server.clone();
        let answer = answer.clone();
        let answers = self.answers;
        Box::pin(self.terminal.exchange(Approval::Deny, move |io| {
            review_sampling(io, &server, &answer, answers)
        }))
    }

    fn elicit<'a>(&'a self, request: &'a ElicitationRequest) -> BoxFuture<'a, ElicitationAnswer> {
        let request = request.clone();
        let answers = self.answers;
        Box::pin(
            self.terminal
                .exchange(ElicitationAnswer::Cancel, move |io| {
                    elicit(io, &request, answers)
                }),
        )
    }
}

/// Asks a yes/no question whose default is no; `None` at the end of the input.
fn yes_no(io: &mut Io, question: &str) -> Option<bool> {
    let question = io
        .style
        .paint(Paint::Yellow, &format!("{question} [y/N]: "));
    loop {
        match io.ask(&question)?.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => return Some(true),
            "" | "n" | "no" => return Some(false),
            other => io.say(&format!("  {other:?} is not an answer here; say y or n")),
        }
    }
}

fn unattended(io: &mut Io, answers: Answers, what: &str) -> Option<Approval> {
    match answers {
        Answers::Ask => None,
        Answers::Yes => {
            io.say(&format!("  not asking: {what} allowed (--yes)"));
            Some(Approval::Allow)
        }
        Answers::No => {
            io.say(&format!("  not asking (non-interactive): {what} denied"));
            Some(Approval::Deny)
        }
    }
}

/// Shows a server's sampling request and asks whether the model may answer it.
pub fn approve_sampling(io: &mut Io, request: &SamplingRequest, answers: Answers) -> Approval {
    let params = &request.params;
    io.say(&format!(
        "  {} wants the model to answer (at most {} tokens):",
        display::name(&request.server),
        params.max_tokens
    ));
    if let Some(system) = &params.system_prompt {
        io.say(&format!("    system: {}", display::line(system)));
    }
    for message in &params.messages {
        let role = match message.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        let text = display::text(&blocks_text(message.content.blocks()));
        for (i, line) in text.lines().enumerate() {
            if i == 0 {
                io.say(&format!("    {role}: {line}"));
            } else {
                io.say(&format!("      {line}"));
            }
        }
    }
    if let Some(tools) = &params.tools {
        let names: Vec<String> = tools.iter().map(|t| display::name(&t.name)).collect();
        io.say(&format!("    tools offered: {}", names.join(", ")));
    }
    if let Some(approval) = unattended(io, answers, "the request") {
        return approval;
    }
    match yes_no(
        io,
        &format!("Let the model answer {}?", display::name(&request.server)),
    ) {
        Some(true) => Approval::Allow,
        Some(false) => Approval::Deny,
        None => {
            io.say("  no answer: denied");
            Approval::Deny
        }
    }
}

/// Shows the model's answer and asks whether it may go back to the server.
pub fn review_sampling(
    io: &mut Io,
    server: &str,
    answer: &CreateMessageResult,
    answers: Answers,
) -> Approval {
    io.say(&format!(
        "  the model ({}) answered:",
        display::name(&answer.model)
    ));
    for line in display::text(&sampling_text(answer)).lines() {
        io.say(&format!("    {line}"));
    }
    if let Some(approval) = unattended(io, answers, "sending the answer") {
        return approval;
    }
    match yes_no(
        io,
        &format!("Send this answer to {}?", display::name(server)),
    ) {
        Some(true) => Approval::Allow,
        Some(false) => Approval::Deny,
        None => {
            io.say("  no answer: not sent");
            Approval::Deny
        }
    }
}

/// Puts a server's question to the person.
pub fn elicit(io: &mut Io, request: &ElicitationRequest, answers: Answers) -> ElicitationAnswer {
    if answers != Answers::Ask {
        io.say(&format!(
            "  not asking (non-interactive): {}'s question declined",
            display::name(&request.server)
        ));
        return ElicitationAnswer::Decline;
    }
    let answer = match &request.params {
        ElicitParams::Form(form) => fill_form(io, &request.server, form),
        ElicitParams::Url(url) => visit_url(io, &request.server, url),
    };
    answer.unwrap_or_else(|| {
        io.say("  no answer: cancelled");
        ElicitationAnswer::Cancel
    })
}

/// `[a]ccept / [d]ecline / [c]ancel`: `Some(true)` to go on, the answer otherwise.
fn choose(io: &mut Io, question: &str) -> Option<Result<(), ElicitationAnswer>> {
    let question = io.style.paint(
        Paint::Yellow,
        &format!("{question} [a]ccept, [d]ecline, [c]ancel: "),
    );
    loop {
        match io.ask(&question)?.trim().to_ascii_lowercase().as_str() {
            "a" | "accept" | "y" | "yes" => return Some(Ok(())),
            "d" | "decline" | "n" | "no" => return Some(Err(ElicitationAnswer::Decline)),
            "c" | "cancel" => return Some(Err(ElicitationAnswer::Cancel)),
            other => io.say(&format!("  {other:?} is not an answer here")),
        }
    }
}

fn visit_url(io: &mut Io, server: &str, params: &UrlParams) -> Option<ElicitationAnswer> {
    io.say(&format!(
        "  {} asks you to open: {}",
        display::name(server),
        display::line(&params.url)
    ));
    io.say(&format!(
        "  site: {}",
        display::exact(&display::line(site(&params.url)))
    ));
    io.say(
        "  Junction never opens URLs itself; open it in your browser only if you trust the site.",
    );
    match choose(io, "Will you open it?")? {
        Ok(()) => Some(ElicitationAnswer::Accept(BTreeMap::new())),
        Err(answer) => Some(answer),
    }
}

/// The host part of a URL, shown so that a look-alike link stands out.
fn site(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host)
}

fn fill_form(io: &mut Io, server: &str, form: &FormParams) -> Option<ElicitationAnswer> {
    let schema = &form.requested_schema;
    if let Err(refusal) = choose(io, &format!("Answer {}'s form?", display::name(server)))? {
        return Some(refusal);
    }
    let mut content = BTreeMap::new();
    for (name, field) in &schema.properties {
        let required = schema.is_required(name);
        if let Some(value) = ask_field(io, name, field, required)? {
            content.insert(name.clone(), value);
        }
    }
    if let Err(why) = schema.check(&content) {
        // Each field was checked as it was typed; this guards the form as a whole.
        io.say(&format!(
            "  the form is not valid ({}); cancelled",
            display::line(&why.to_string())
        ));
        return Some(ElicitationAnswer::Cancel);
    }
    Some(ElicitationAnswer::Accept(content))
}

/// A select field's choices: each value with the title shown for it (the value itself
/// when the schema gives none), in order.
fn choices(field: &PrimitiveSchemaDefinition) -> Vec<(&str, &str)> {
    use PrimitiveSchemaDefinition as P;
    fn options(o: &[EnumOption]) -> Vec<(&str, &str)> {
        o.iter()
            .map(|o| (o.value.as_str(), o.title.as_str()))
            .collect()
    }
    match field {
        P::TitledSingleSelect(b) => options(&b.one_of),
        P::TitledMultiSelect(b) => options(&b.items.any_of),
        P::LegacyTitledEnum(b) => {
            let names = b.enum_names.as_deref().unwrap_or_default();
            b.values
                .iter()
                .enumerate()
                .map(|(i, v)| (v.as_str(), names.get(i).map_or(v.as_str(), String::as_str)))
                .collect()
        }
        _ => field
            .allowed_values()
            .unwrap_or_default()
            .into_iter()
            .map(|v| (v, v))
            .collect(),
    }
}

/// The title shown for `value` of a select field.
fn title_of<'a>(field: &'a PrimitiveSchemaDefinition, value: &'a str) -> &'a str {
    choices(field)
        .into_iter()
        .find(|(v, _)| *v == value)
        .map_or(value, |(_, title)| title)
}

/// The kind of a field, its choices (by title) and its default (as it may be typed), in
/// words.
fn describe(field: &PrimitiveSchemaDefinition) -> (String, Option<String>) {
    use PrimitiveSchemaDefinition as P;
    let shown: Vec<&str> = choices(field).into_iter().map(|(_, title)| title).collect();
    let choices = (!shown.is_empty()).then(|| shown.join(" | "));
    let titled = |d: &Option<String>| d.as_deref().map(|d| title_of(field, d).to_owned());
    let titles = |d: &Option<Vec<String>>| {
        d.as_ref().map(|d| {
            d.iter()
                .map(|v| title_of(field, v))
                .collect::<Vec<_>>()
                .join(", ")
        })
    };
    match field {
        P::String(s) => {
            let kind = match &s.format {
                Some(format) => format!("text, {}", format.as_str()),
                None => "text".to_owned(),
            };
            (kind, s.default.clone())
        }
        P::Number(n) => (
            match n.kind {
                NumberType::Integer => "whole number".to_owned(),
                NumberType::Number => "number".to_owned(),
            },
            n.default.as_ref().map(Number::to_string),
        ),
        P::Boolean(b) => ("yes/no".to_owned(), b.default.map(|d| d.to_string())),
        P::UntitledSingleSelect(s) => (one_of(choices), titled(&s.default)),
        P::TitledSingleSelect(s) => (one_of(choices), titled(&s.default)),
        P::LegacyTitledEnum(s) => (one_of(choices), titled(&s.default)),
        P::UntitledMultiSelect(m) => (any_of(choices), titles(&m.default)),
        P::TitledMultiSelect(m) => (any_of(choices), titles(&m.default)),
    }
}

fn one_of(choices: Option<String>) -> String {
    format!("one of {}", choices.unwrap_or_default())
}

fn any_of(choices: Option<String>) -> String {
    format!(
        "any of {}, separated by commas",
        choices.unwrap_or_default()
    )
}

fn field_description(field: &PrimitiveSchemaDefinition) -> Option<&str> {
    use PrimitiveSchemaDefinition as P;
    match field {
        P::String(b) => b.description.as_deref(),
        P::Number(b) => b.description.as_deref(),
        P::Boolean(b) => b.description.as_deref(),
        P::UntitledSingleSelect(b) => b.description.as_deref(),
        P::TitledSingleSelect(b) => b.description.as_deref(),
        P::UntitledMultiSelect(b) => b.description.as_deref(),
        P::TitledMultiSelect(b) => b.description.as_deref(),
        P::LegacyTitledEnum(b) => b.description.as_deref(),
    }
}

/// Asks one field until its value is valid; `Some(None)` leaves an optional field empty.
fn ask_field(
    io: &mut Io,
    name: &str,
    field: &PrimitiveSchemaDefinition,
    required: bool,
) -> Option<Option<ElicitValue>> {
    let (kind, default) = describe(field);
    let kind = display::line(&kind);
    let label = match field.label() {
        Some(title) if title != name => {
            format!("{} ({})", display::line(title), display::name(name))
        }
        _ => display::name(name),
    };
    if let Some(description) = field_description(field) {
        io.say(&format!("  {label}: {}", display::line(description)));
    }
    let mut hint = vec![kind];
    if required {
        hint.push("required".to_owned());
    }
    if let Some(default) = &default {
        hint.push(format!("default {}", display::line(default)));
    }
    let prompt = format!("  {label} [{}]: ", hint.join("; "));
    loop {
        let typed = io.ask(&prompt)?;
        let typed = typed.trim();
        let text = if typed.is_empty() {
            match &default {
                Some(default) => default.clone(),
                None if required => {
                    io.say(&format!("  {} is required", display::name(name)));
                    continue;
                }
                None => return Some(None),
            }
        } else {
            typed.to_owned()
        };
        let checked = parse_value(field, &text)
            .and_then(|v| field.check(&v).map(|()| v))
            .and_then(|v| match (field, &v) {
                (PrimitiveSchemaDefinition::String(s), ElicitValue::String(text)) => {
                    match &s.format {
                        Some(format) => formats::check(format, text).map(|()| v),
                        None => Ok(v),
                    }
                }
                _ => Ok(v),
            });
        match checked {
            Ok(value) => return Some(Some(value)),
            Err(why) => io.say(&format!(
                "  {} {}; try again",
                display::name(name),
                display::line(&why)
            )),
        }
    }
}

/// Reads typed text as a value of the field's kind. A choice may be typed as its value or
/// its title, in any case, or as its position in the list (from 1); the value is sent.
fn parse_value(field: &PrimitiveSchemaDefinition, text: &str) -> Result<ElicitValue, String> {
    use PrimitiveSchemaDefinition as P;
    let options = choices(field);
    let shown: Vec<&str> = options.iter().map(|(_, title)| *title).collect();
    let find = |word: &str| -> Option<String> {
        let exact = options.iter().find(|(v, _)| *v == word);
        let folded = || {
            options.iter().find(|(v, t)| {
                v.to_lowercase() == word.to_lowercase() || t.to_lowercase() == word.to_lowercase()
            })
        };
        let position = || {
            word.parse::<usize>()
                .ok()
                .filter(|i| (1..=options.len()).contains(i))
                .map(|i| &options[i - 1])
        };
        exact
            .or_else(folded)
            .or_else(position)
            .map(|(v, _)| (*v).to_owned())
    };
    let choice = |word: &str| -> Result<String, String> {
        find(word).ok_or_else(|| {
            format!(
                "{} is not a choice; choose from: {}",
                display::line(&format!("{word:?}")),
                shown.join(", ")
            )
        })
    };
    match field {
        P::String(_) => Ok(ElicitValue::String(text.to_owned())),
        P::Number(_) => text
            .parse::<Number>()
            .map(ElicitValue::Number)
            .map_err(|_| "must be a number".to_owned()),
        P::Boolean(_) => match text.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Ok(ElicitValue::Boolean(true)),
            "n" | "no" | "false" => Ok(ElicitValue::Boolean(false)),
            _ => Err("must be yes or no".to_owned()),
        },
        P::UntitledSingleSelect(_) | P::TitledSingleSelect(_) | P::LegacyTitledEnum(_) => {
            find(text)
                .map(ElicitValue::String)
                .ok_or_else(|| format!("must be one of: {}", shown.join(", ")))
        }
        P::UntitledMultiSelect(_) | P::TitledMultiSelect(_) => text
            .split(',')
            .map(str::trim)
            .filter(|w| !w.is_empty())
            .map(choice)
            .collect::<Result<Vec<_>, _>>()
            .map(ElicitValue::StringArray),
    }
}

#[cfg(test)]
mod tests {
    use super::super::scripted;
    use super::*;
    use junction_protocol::elicitation::RequestedSchema;
    use junction_protocol::sampling::{CreateMessageParams, SamplingMessage};

    fn sampling() -> SamplingRequest {
        SamplingRequest {
            server: "tasks".into(),
            params: CreateMessageParams::new(
                vec![SamplingMessage::user_text("Summarize: shipped the report")],
                100,
            )
            .system_prompt("Be brief."),
        }
    }

    fn form() -> ElicitationRequest {
        let schema = RequestedSchema::new()
            .required(
                "name",
                PrimitiveSchemaDefinition::string()
                    .title("Your name")
                    .description("As on your card"),
            )
            .required("age", PrimitiveSchemaDefinition::integer())
            .optional(
                "colour",
                PrimitiveSchemaDefinition::single_select(["red", "blue"]),
            )
            .optional("subscribe", PrimitiveSchemaDefinition::boolean())
            .optional(
                "tags",
                PrimitiveSchemaDefinition::multi_select(["a", "b", "c"]),
            );
        ElicitationRequest {
            server: "signup".into(),
            params: FormParams::new("Who are you?", schema).into(),
        }
    }

    #[tokio::test]
    async fn sampling_shows_the_server_and_messages_then_the_answer_for_review() {
        let (terminal, out) = scripted("y\nn\n");
        let user = TerminalInteraction::new(terminal, Answers::Ask);
        let request = sampling();
        assert_eq!(user.approve_sampling(&request).await, Approval::Allow);
        let answer = CreateMessageResult::text("scripted", "One report shipped.");
        assert_eq!(
            user.review_sampling(&request, &answer).await,
            Approval::Deny
        );
        let shown = out.text();
        for expected in [
            "tasks wants the model to answer (at most 100 tokens):",
            "system: Be brief.",
            "user: Summarize: shipped the report",
            "Let the model answer tasks? [y/N]",
            "the model (scripted) answered:",
            "One report shipped.",
            "Send this answer to tasks? [y/N]",
        ] {
            assert!(
                shown.contains(expected),
                "{expected:?} missing in:\n{shown}"
            );
        }
    }

    #[tokio::test]
    async fn sampling_is_denied_at_the_end_of_input_and_unattended_without_reading() {
        let (terminal, out) = scripted("");
        let user = TerminalInteraction::new(terminal.clone(), Answers::Ask);
        assert_eq!(user.approve_sampling(&sampling()).await, Approval::Deny);
        let user = TerminalInteraction::new(terminal.clone(), Answers::No);
        assert_eq!(user.approve_sampling(&sampling()).await, Approval::Deny);
        let user = TerminalInteraction::new(terminal, Answers::Yes);
        assert_eq!(user.approve_sampling(&sampling()).await, Approval::Allow);
        let answer = CreateMessageResult::text("m", "ok");
        assert_eq!(
            user.review_sampling(&sampling(), &answer).await,
            Approval::Allow
        );
        let shown = out.text();
        assert!(shown.contains("no answer: denied"), "{shown}");
        assert!(shown.contains("the request denied"), "{shown}");
        assert!(shown.contains("the request allowed (--yes)"), "{shown}");
    }

    #[tokio::test]
    async fn a_form_is_filled_field_by_field_and_bad_values_are_asked_again() {
        // name: empty (required) then "Ada"; age: "old" then "36.5" then "36";
        // colour: "green" then "2"; subscribe: empty (optional, skipped); tags: "a, 3".
        let (terminal, out) = scripted("a\n\nAda\nold\n36.5\n36\ngreen\n2\n\na, 3\n");
        let user = TerminalInteraction::new(terminal, Answers::Ask);
        let answer = user.elicit(&form()).await;
        let expected: BTreeMap<String, ElicitValue> = [
            ("name".to_owned(), ElicitValue::from("Ada")),
            ("age".to_owned(), ElicitValue::from(36)),
            ("colour".to_owned(), ElicitValue::from("blue")),
            (
                "tags".to_owned(),
                ElicitValue::from(vec!["a".to_owned(), "c".to_owned()]),
            ),
        ]
        .into_iter()
        .collect();
        assert_eq!(answer, ElicitationAnswer::Accept(expected));
        let shown = out.text();
        for expected in [
            "Answer signup's form? [a]ccept, [d]ecline, [c]ancel",
            "Your name (name): As on your card",
            "Your name (name) [text; required]: ",
            "name is required",
            "age [whole number; required]: ",
            "age must be a number; try again",
            "age must be a whole number; try again",
            "colour [one of red | blue]: ",
            "colour must be one of: red, blue; try again",
            "subscribe [yes/no]: ",
            "tags [any of a | b | c, separated by commas]: ",
        ] {
            assert!(
                shown.contains(expected),
                "{expected:?} missing in:\n{shown}"
            );
        }
    }

    #[tokio::test]
    async fn defaults_fill_empty_answers() {
        let schema = RequestedSchema::new().required(
            "count",
            PrimitiveSchemaDefinition::Number(
                junction_protocol::elicitation::NumberSchema::new(NumberType::Integer)
                    .default_value(3),
            ),
        );
        let request = ElicitationRequest {
            server: "s".into(),
            params: FormParams::new("How many?", schema).into(),
        };
        let (terminal, out) = scripted("a\n\n");
        let answer = TerminalInteraction::new(terminal, Answers::Ask)
            .elicit(&request)
            .await;
        assert_eq!(
            answer,
            ElicitationAnswer::Accept([("count".to_owned(), ElicitValue::from(3))].into())
        );
        assert!(out
            .text()
            .contains("count [whole number; required; default 3]"));
    }

    #[tokio::test]
    async fn a_form_can_be_declined_or_cancelled_and_the_end_of_input_cancels() {
        let (terminal, _) = scripted("d\nc\na\nAda\n");
        let user = TerminalInteraction::new(terminal, Answers::Ask);
        assert_eq!(user.elicit(&form()).await, ElicitationAnswer::Decline);
        assert_eq!(user.elicit(&form()).await, ElicitationAnswer::Cancel);
        // Accepted, then the input ends in the middle of the form.
        assert_eq!(user.elicit(&form()).await, ElicitationAnswer::Cancel);
    }

    #[tokio::test]
    async fn a_url_is_shown_with_its_site_and_never_opened() {
        let request = ElicitationRequest {
            server: "pay".into(),
            params: UrlParams::new(
                "Sign in to pay",
                "e1",
                "https://user@pay.example.com:8443/login?x=1",
            )
            .into(),
        };
        let (terminal, out) = scripted("a\nd\n");
        let user = TerminalInteraction::new(terminal, Answers::Ask);
        assert_eq!(
            user.elicit(&request).await,
            ElicitationAnswer::Accept(BTreeMap::new())
        );
        assert_eq!(user.elicit(&request).await, ElicitationAnswer::Decline);
        let shown = out.text();
        assert!(
            shown.contains("pay asks you to open: https://user@pay.example.com:8443/login?x=1"),
            "{shown}"
        );
        assert!(shown.contains("site: pay.example.com:8443"), "{shown}");
        assert!(shown.contains("never opens URLs"), "{shown}");
    }

    #[tokio::test]
    async fn without_a_person_elicitations_are_declined_and_said() {
        let (terminal, out) = scripted("a\n");
        let user = TerminalInteraction::new(terminal, Answers::Yes);
        assert_eq!(user.elicit(&form()).await, ElicitationAnswer::Decline);
        assert!(out.text().contains("signup's question declined"));
    }
}
