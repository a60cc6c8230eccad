//! The names under which server tools reach the model.
//!
//! LLM APIs take function names matching `^[a-zA-Z0-9_-]{1,64}$`; MCP tool names may hold
//! dots and be 128 characters long, and two servers may both offer `search`. Each tool is
//! therefore offered as `server__tool`, where:
//!
//! - characters outside `[a-zA-Z0-9_-]` become `_`;
//! - a name that is longer than 64 characters, or that two tools would share after
//!   sanitizing, is cut and given a suffix `-` + 6 hex digits of a hash of the original
//!   (server, tool) pair, so it is stable from run to run;
//! - in the (very unlikely) event that a suffixed name is still taken, the hash is salted
//!   until it is free, visiting tools in a fixed order, so the result never depends on the
//!   order servers answered in.
//!
//! [`ToolNames::resolve`] maps a name back to the server's config key and the tool's
//! original name, which is what the server receives.
//!
//! ```
//! use junction_host::naming::ToolNames;
//! use junction_protocol::tools::Tool;
//!
//! let tool = |n: &str| Tool::new(n, Tool::empty_input_schema());
//! let names = ToolNames::new([
//!     ("library".to_owned(), tool("search")),
//!     ("web".to_owned(), tool("search")),
//!     ("files".to_owned(), tool("read.file")),
//! ]);
//! assert_eq!(names.resolve("web__search").unwrap().server, "web");
//! let entry = names.resolve("files__read_file").unwrap();
//! assert_eq!(entry.tool.name, "read.file");
//! ```

use std::collections::{BTreeMap, BTreeSet, HashMap};

use junction_protocol::tools::Tool;

use crate::display::is_invisible;
use crate::model::ModelTool;

/// The longest name LLM APIs accept.
pub const MAX_NAME: usize = 64;

/// What separates the server key from the tool name.
pub const SEPARATOR: &str = "__";

/// One tool as the model sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolEntry {
    /// The name the model uses.
    pub model_name: String,
    /// The server's config key.
    pub server: String,
    /// The tool as the server declared it (with its original name).
    pub tool: Tool,
}

/// The bijection between model names and (server, tool).
#[derive(Debug, Clone, Default)]
pub struct ToolNames {
    entries: Vec<ToolEntry>,
    by_name: HashMap<String, usize>,
}

/// Replaces every character outside `[a-zA-Z0-9_-]` with `_`.
pub fn sanitize(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Whether `name` is acceptable to LLM APIs.
pub fn is_valid_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= MAX_NAME && sanitize(name) == name
}

/// A description without control characters (other than newline and tab) and without
/// invisible format characters ([`is_invisible`]: zero-width spaces and joiners,
/// bidirectional controls, the byte order mark, tag characters): text the user cannot see must not reach the model either.
pub fn clean_description(text: &str) -> String {
    text.chars()
        .filter(|&c| !is_invisible(c) && (!c.is_control() || c == '\n' || c == '\t'))
        .collect()
}

/// FNV-1a, 64 bits: small, stable across platforms and releases (unlike `DefaultHasher`).
fn fnv1a(bytes: impl IntoIterator<Item = u8>) -> u64 {
    bytes.into_iter().fold(0xcbf2_9ce4_8422_2325, |hash, b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn suffixed(base: &str, server: &str, tool: &str, salt: u32) -> String {
    let key = format!("{server}\0{tool}\0{salt}");
    let hash = fnv1a(key.bytes()) & 0xff_ffff;
    let suffix = format!("-{hash:06x}");
    let keep = base.len().min(MAX_NAME - suffix.len());
    format!("{}{suffix}", &base[..keep])
}

impl ToolNames {
    /// Names every (server key, tool) pair. A pair listed twice is kept once.
    pub fn new(tools: impl IntoIterator<Item = (String, Tool)>) -> Self {
        let mut unique: BTreeMap<(String, String), Tool> = BTreeMap::new();
        for (server, tool) in tools {
            let key = (server, tool.name.clone());
            if unique.contains_key(&key) {
                tracing::warn!(server = %key.0, tool = %key.1, "a server listed the same tool twice; keeping the first");
                continue;
            }
            unique.insert(key, tool);
        }
        let bases: Vec<String> = unique
            .keys()
            .map(|(server, tool)| format!("{}{SEPARATOR}{}", sanitize(server), sanitize(tool)))
            .collect();
        let mut counts: HashMap<&str, usize> = HashMap::new();
        for base in &bases {
            *counts.entry(base.as_str()).or_default() += 1;
        }
        let plain = |base: &str| base.len() <= MAX_NAME && counts.get(base) == Some(&1);
        // Plain names are reserved first, so a suffixed name can never take one.
        let mut taken: BTreeSet<String> = bases.iter().filter(|b| plain(b)).cloned().collect();
        let mut names = ToolNames::default();
        for (((server, tool_name), tool), base) in unique.into_iter().zip(&bases) {
            let model_name = if plain(base) {
                base.clone()
            } else {
                let mut salt = 0;
                loop {
                    let candidate = suffixed(base, &server, &tool_name, salt);
                    if taken.insert(candidate.clone()) {
                        break candidate;
                    }
                    salt += 1;
                }
            };
            names
                .by_name
                .insert(model_name.clone(), names.entries.len());
            names.entries.push(ToolEntry {
                model_name,
                server,
                tool,
            });
        }
        names
    }

    /// The tool the model means by `model_name`.
    pub fn resolve(&self, model_name: &str) -> Option<&ToolEntry> {
        self.by_name.get(model_name).map(|&i| &self.entries[i])
    }

    /// The model name of `tool` of `server`.
    pub fn model_name(&self, server: &str, tool: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|e| e.server == server && e.tool.name == tool)
            .map(|e| e.model_name.as_str())
    }

    /// Every tool, ordered by server key then tool name.
    pub fn entries(&self) -> &[ToolEntry] {
        &self.entries
    }

    /// The function list for the model: only tools, under their model names.
    pub fn model_tools(&self) -> Vec<ModelTool> {
        self.entries
            .iter()
            .map(|e| ModelTool {
                name: e.model_name.clone(),
                description: e
                    .tool
                    .description
                    .as_deref()
                    .or(e.tool.title.as_deref())
                    .map(clean_description),
                input_schema: serde_json::Value::Object(e.tool.input_schema.clone()),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str) -> Tool {
        Tool::new(name, Tool::empty_input_schema())
    }

    fn names(pairs: &[(&str, &str)]) -> ToolNames {
        ToolNames::new(pairs.iter().map(|(s, t)| (s.to_string(), tool(t))))
    }

    #[test]
    fn simple_names_are_server_double_underscore_tool() {
        let n = names(&[("library", "search"), ("web", "search")]);
        assert_eq!(n.model_name("library", "search"), Some("library__search"));
        assert_eq!(n.model_name("web", "search"), Some("web__search"));
        assert_eq!(n.resolve("web__search").unwrap().server, "web");
    }

    #[test]
    fn invalid_characters_are_replaced() {
        let n = names(&[("fs", "read.file/v2")]);
        let name = n.model_name("fs", "read.file/v2").unwrap();
        assert_eq!(name, "fs__read_file_v2");
        assert_eq!(n.resolve(name).unwrap().tool.name, "read.file/v2");
    }

    #[test]
    fn names_that_collide_after_sanitizing_both_get_distinct_stable_suffixes() {
        let n = names(&[("fs", "a.b"), ("fs", "a_b"), ("fs", "c")]);
        let dotted = n.model_name("fs", "a.b").unwrap().to_owned();
        let underscored = n.model_name("fs", "a_b").unwrap().to_owned();
        assert_ne!(dotted, underscored);
        assert!(
            dotted.starts_with("fs__a_b-") && dotted.len() == "fs__a_b-".len() + 6,
            "{dotted}"
        );
        assert!(underscored.starts_with("fs__a_b-"), "{underscored}");
        assert_eq!(n.model_name("fs", "c"), Some("fs__c"));
        let again = names(&[("fs", "c"), ("fs", "a_b"), ("fs", "a.b")]);
        assert_eq!(again.model_name("fs", "a.b"), Some(dotted.as_str()));
        assert_eq!(again.model_name("fs", "a_b"), Some(underscored.as_str()));
    }

    #[test]
    fn long_names_are_cut_to_64_with_a_hash_and_never_collapse() {
        let long_a = format!("{}a", "x".repeat(100));
        let long_b = format!("{}b", "x".repeat(100));
        let n = names(&[("server", &long_a), ("server", &long_b)]);
        let a = n.model_name("server", &long_a).unwrap();
        let b = n.model_name("server", &long_b).unwrap();
        assert_ne!(a, b);
        for name in [a, b] {
            assert_eq!(name.len(), MAX_NAME);
            assert!(is_valid_name(name), "{name}");
        }
        assert_eq!(n.resolve(a).unwrap().tool.name, long_a);
    }

    #[test]
    fn a_suffixed_name_never_takes_a_plain_one() {
        let first = names(&[("s", "a.b"), ("s", "a_b")]);
        let taken = first.model_name("s", "a.b").unwrap().to_owned();
        let n = names(&[("s", "a.b"), ("s", "a_b"), ("s", &taken["s__".len()..])]);
        assert_eq!(
            n.model_name("s", &taken["s__".len()..]),
            Some(taken.as_str())
        );
        let moved = n.model_name("s", "a.b").unwrap();
        assert_ne!(moved, taken);
        let all: BTreeSet<&str> = n.entries().iter().map(|e| e.model_name.as_str()).collect();
        assert_eq!(all.len(), 3);
    }

    #[test]
    fn every_name_is_valid_for_llm_apis() {
        let n = names(&[
            ("ü srv", "tool with spaces"),
            ("s", ""),
            ("s", &"é".repeat(80)),
        ]);
        for entry in n.entries() {
            assert!(is_valid_name(&entry.model_name), "{}", entry.model_name);
        }
    }

    #[test]
    fn the_function_list_holds_tools_under_model_names() {
        let n = ToolNames::new([("s".to_owned(), tool("t").description("does t"))]);
        let tools = n.model_tools();
        assert_eq!(tools.len(), 1);
        assert_eq!(tools[0].name, "s__t");
        assert_eq!(tools[0].description.as_deref(), Some("does t"));
        assert_eq!(tools[0].input_schema["type"], "object");
    }

    #[test]
    fn descriptions_lose_invisible_and_control_characters() {
        let hidden = "Adds numbers.\u{200B}\u{202E}\u{0007} Also\tnote\nthis\u{FEFF}";
        assert_eq!(clean_description(hidden), "Adds numbers. Also\tnote\nthis");
        let n = ToolNames::new([("s".to_owned(), tool("t").description(hidden))]);
        assert_eq!(
            n.model_tools()[0].description.as_deref(),
            Some("Adds numbers. Also\tnote\nthis")
        );
    }

    #[test]
    fn a_duplicate_listing_is_kept_once() {
        let n = names(&[("s", "t"), ("s", "t")]);
        assert_eq!(n.entries().len(), 1);
        assert_eq!(n.model_name("s", "t"), Some("s__t"));
    }
}
