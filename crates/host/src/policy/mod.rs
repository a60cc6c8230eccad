//! Which tool calls run without asking, which ask, and which never reach the server.
//!
//! A [`Policy`] decides for one call, in this order:
//!
//! 1. a matching `deny` rule denies; 2. a matching `ask` rule asks; 3. a matching `allow`
//!    rule, or an earlier "always allow" or "allow for this session" answer, allows;
//! 4. otherwise a tool that declares `readOnlyHint: true` is allowed **only when its server
//!    is trusted**: the specification says annotations from untrusted servers must not be
//!    believed, so on an untrusted server everything else asks.
//!
//! Rules are globs (`*` matches any run of characters) over `server__tool`, written with the
//! config key of the server and the tool's own name (not the name the model sees), e.g.
//! `library__*` or `*__delete_*`. "Always allow" answers are kept in a JSON file
//! ([`Remembered`]) and read back at the next start; "allow for this session" answers are
//! kept in memory only, until the policy is dropped. The definition each tool was allowed
//! in is pinned ([`Pins`], in a file too when the host is given one): a tool whose
//! definition changed since asks again, whatever allowed it before.
//!
//! ```
//! use junction_host::policy::{Action, Policy, Rule};
//! use junction_protocol::tools::{Tool, ToolAnnotations};
//!
//! let policy = Policy::new(vec![Rule::new("*__delete_*", Action::Deny)]);
//! let read = Tool::new("search", Tool::empty_input_schema())
//!     .annotations(ToolAnnotations::default().read_only(true));
//! assert_eq!(policy.decide("library", &read, true).action, Action::Allow);
//! assert_eq!(policy.decide("library", &read, false).action, Action::Ask);
//! let delete = Tool::new("delete_book", Tool::empty_input_schema());
//! assert_eq!(policy.decide("library", &delete, true).action, Action::Deny);
//! ```

pub mod canonical;
pub mod definition;
mod pins;
mod remembered;

pub use pins::{default_pins_file, Pins};
pub use remembered::{default_consent_file, Recall, Remembered};

use junction_protocol::tools::Tool;

use crate::naming::SEPARATOR;
use crate::state_file::StateFileError;
use canonical::{canonical, is_disguised};

/// What to do with a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    /// Run it without asking.
    Allow,
    /// Ask the user first.
    Ask,
    /// Never run it; the model is told the user declined.
    Deny,
}

impl Action {
    /// Reads `allow`, `ask` or `deny`.
    pub fn parse(text: &str) -> Option<Action> {
        match text {
            "allow" => Some(Action::Allow),
            "ask" => Some(Action::Ask),
            "deny" => Some(Action::Deny),
            _ => None,
        }
    }

    /// The word for this action.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Allow => "allow",
            Action::Ask => "ask",
            Action::Deny => "deny",
        }
    }
}

/// One rule: a glob over `server__tool` and what to do when it matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// The glob; `*` matches any run of characters.
    pub pattern: String,
    /// What a match means.
    pub action: Action,
}

impl Rule {
    /// A rule.
    pub fn new(pattern: impl Into<String>, action: Action) -> Self {
        Rule {
            pattern: pattern.into(),
            action,
        }
    }

    /// Whether the rule covers `tool` of `server`. The part before the first `__` is
    /// matched against the server's config key as a whole (config keys never hold `__`, so
    /// `a__*` never covers a server `a_`), the part after it against the tool's
    /// [canonical](canonical::canonical) name (so a look-alike of a covered name is covered
    /// too). A pattern without `__` is matched against `server__tool`, with the tool's
    /// canonical name.
    pub fn matches(&self, server: &str, tool: &str) -> bool {
        let tool = canonical(tool);
        match self.pattern.split_once(SEPARATOR) {
            Some((server_glob, tool_glob)) => {
                glob_match(server_glob, server) && glob_match(&canonical_pattern(tool_glob), &tool)
            }
            None => glob_match(
                &canonical_pattern(&self.pattern),
                &format!("{server}{SEPARATOR}{tool}"),
            ),
        }
    }
}

/// A glob whose literal parts are in [canonical](canonical::canonical) form.
pub(crate) fn canonical_pattern(pattern: &str) -> String {
    pattern
        .split('*')
        .map(canonical)
        .collect::<Vec<_>>()
        .join("*")
}

/// Whether `text` matches `pattern`, where `*` matches any run of characters (also none).
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// The outcome of [`Policy::decide`], with the reason shown to the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// What to do.
    pub action: Action,
    /// Why, in words.
    pub reason: String,
    /// Whether an "always allow" answer may be remembered for this tool (not when an `ask`
    /// rule asked, since the rule would win again anyway).
    pub rememberable: bool,
    /// When the tool was allowed before in another definition: what changed, one line per
    /// field.
    pub changes: Vec<String>,
    /// Whether the tool's name has characters outside those the specification recommends
    /// (look-alike or invisible ones); such a tool is never allowed without asking.
    pub disguised: bool,
}

/// Rules, remembered answers, and the definitions tools were allowed in.
#[derive(Debug)]
pub struct Policy {
    rules: Vec<Rule>,
    remembered: Remembered,
    session: Remembered,
    pins: Pins,
}

impl Policy {
    /// A policy with `rules` whose "always allow" answers last for this run only.
    pub fn new(rules: Vec<Rule>) -> Self {
        Policy::with_remembered(rules, Remembered::in_memory())
    }

    /// A policy with `rules` and answers kept in `remembered`.
    pub fn with_remembered(rules: Vec<Rule>, remembered: Remembered) -> Self {
        Policy {
            rules,
            remembered,
            session: Remembered::in_memory(),
            pins: Pins::in_memory(),
        }
    }

    /// This policy with the definitions tools were allowed in kept in `pins` (by default
    /// in memory, for this run only).
    pub fn with_pins(mut self, pins: Pins) -> Self {
        self.pins = pins;
        self
    }

    /// The definitions tools were allowed in.
    pub fn pins(&self) -> &Pins {
        &self.pins
    }

    /// The rules.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The answers kept across runs.
    pub fn remembered(&self) -> &Remembered {
        &self.remembered
    }

    /// Decides what to do with a call of `tool` on `server`:
    ///
    /// 1. a `deny` rule denies;
    /// 2. a tool allowed earlier (by a rule, an answer or its annotations) whose
    ///    definition changed since asks, with what changed;
    /// 3. an `ask` rule asks;
    /// 4. an "always" or "this session" answer given for this definition allows;
    /// 5. a name with look-alike or invisible characters asks;
    /// 6. an `allow` rule allows; then a read-only tool of a trusted server; else ask.
    pub fn decide(&self, server: &str, tool: &Tool, trusted: bool) -> Decision {
        let disguised = is_disguised(&tool.name);
        let matching = |action: Action| {
            self.rules
                .iter()
                .find(|r| r.action == action && r.matches(server, &tool.name))
        };
        let decision = |action, reason: String, rememberable| Decision {
            action,
            reason,
            rememberable,
            changes: Vec::new(),
            disguised,
        };
        if let Some(rule) = matching(Action::Deny) {
            return decision(
                Action::Deny,
                format!("the rule `{}` denies it", rule.pattern),
                false,
            );
        }
        if let Some(changes) = self.changed(server, tool) {
            return Decision {
                changes,
                ..decision(
                    Action::Ask,
                    "its definition changed since it was allowed".to_owned(),
                    true,
                )
            };
        }
        if let Some(rule) = matching(Action::Ask) {
            return decision(
                Action::Ask,
                format!("the rule `{}` asks for it", rule.pattern),
                false,
            );
        }
        if self.remembered.recall(server, tool) == Recall::Same {
            return decision(
                Action::Allow,
                "you chose to always allow it".to_owned(),
                true,
            );
        }
        if self.session.recall(server, tool) == Recall::Same {
            return decision(
                Action::Allow,
                "you allowed it for this session".to_owned(),
                true,
            );
        }
        if disguised {
            return decision(
                Action::Ask,
                "its name has characters outside A-Z a-z 0-9 _ - . (look-alike or invisible ones)"
                    .to_owned(),
                true,
            );
        }
        if let Some(rule) = matching(Action::Allow) {
            return decision(
                Action::Allow,
                format!("the rule `{}` allows it", rule.pattern),
                true,
            );
        }
        let read_only = tool
            .annotations
            .as_ref()
            .is_some_and(|a| a.read_only_hint == Some(true));
        match (trusted, read_only) {
            (true, true) => decision(
                Action::Allow,
                "a trusted server marks it read-only".to_owned(),
                true,
            ),
            (true, false) => decision(Action::Ask, "it is not marked read-only".to_owned(), true),
            (false, _) => decision(
                Action::Ask,
                format!("`{server}` is not trusted, so its annotations are not believed"),
                true,
            ),
        }
    }

    /// What changed in `tool` since it was last allowed, if it was allowed before in
    /// another definition (by an answer kept across runs, for this session, or once) and
    /// not since in this one.
    fn changed(&self, server: &str, tool: &Tool) -> Option<Vec<String>> {
        let answers = [&self.session, &self.remembered].map(|a| a.recall(server, tool));
        if answers.contains(&Recall::Same) {
            return None;
        }
        if let Some(Recall::Changed(changes)) = answers
            .into_iter()
            .find(|r| matches!(r, Recall::Changed(_)))
        {
            return Some(changes);
        }
        match self.pins.recall(server, tool) {
            Recall::Changed(changes) => Some(changes),
            Recall::Same | Recall::Unknown => None,
        }
    }

    /// Records that `tool` of `server` is allowed as it is now (saving the pin when it is
    /// new or changed and the pins are kept in a file): a later call of a changed definition
    /// asks again (see [`Policy::decide`]). The host pins every call it lets run.
    pub fn pin(&self, server: &str, tool: &Tool) -> Result<(), StateFileError> {
        self.pins.pin(server, tool)
    }

    /// Remembers an "always allow" answer for `tool` as it is now (and saves it, when a
    /// file is configured).
    pub fn remember(&self, server: &str, tool: &Tool) -> Result<(), StateFileError> {
        self.remembered.insert(server, tool)
    }

    /// Allows `tool` of `server`, as it is now, until this policy is dropped; nothing is
    /// saved.
    pub fn allow_for_session(&self, server: &str, tool: &Tool) {
        // An in-memory set has no file to fail on.
        let _ = self.session.insert(server, tool);
    }
}

#[cfg(test)]
mod tests;
