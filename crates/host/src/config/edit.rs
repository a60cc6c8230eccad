//! Adding and removing server entries in a config file without disturbing the rest of it.
//!
//! The file is edited as text: everything outside the entry added or removed (other keys,
//! comments of JSONC files, indentation) stays byte for byte. The result is checked by
//! parsing it before anything is written, and it is written to a new file that is then
//! renamed over the old one, so a bad entry or a failed write never loses the file.

use std::io::Write as _;
use std::path::Path;

use serde_json::Value;

use super::{jsonc, name_problem, Config, ConfigError};

/// Why an entry could not be added or removed.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    /// The file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// The file, or the file with the change, is not a valid config; nothing was written.
    #[error(transparent)]
    Invalid(#[from] ConfigError),
    /// The name cannot be a server's.
    #[error("`{name}` cannot name a server: {reason}")]
    BadName {
        /// The name.
        name: String,
        /// Why.
        reason: &'static str,
    },
    /// A server of that name is already in the file.
    #[error("{}: a server called `{name}` is already defined; remove it first (junction mcp remove {name})", path.display())]
    Exists {
        /// The file.
        path: std::path::PathBuf,
        /// The name.
        name: String,
    },
    /// No server of that name is in the file.
    #[error("{}: no server is called `{name}`", path.display())]
    Missing {
        /// The file.
        path: std::path::PathBuf,
        /// The name.
        name: String,
    },
}

/// Writes `text` to `path` through a temporary file in the same directory renamed over it.
pub fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    let dir = dir.unwrap_or(Path::new("."));
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let temp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = (|| {
        let mut file = std::fs::File::create(&temp)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

/// Adds server `name` with `entry` to the file at `path` (created when missing, with
/// `servers_key` as its servers member: `servers` for VS Code files, `mcpServers` else).
pub fn add_server(
    path: &Path,
    servers_key: &str,
    name: &str,
    entry: &Value,
) -> Result<(), EditError> {
    if let Some(reason) = name_problem(name) {
        return Err(EditError::BadName {
            name: name.to_owned(),
            reason,
        });
    }
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => {
            return Err(EditError::Io {
                path: path.to_owned(),
                source,
            })
        }
    };
    let new = if text.trim().is_empty() {
        let mut servers = serde_json::Map::new();
        servers.insert(name.to_owned(), entry.clone());
        let mut root = serde_json::Map::new();
        root.insert(servers_key.to_owned(), Value::Object(servers));
        let mut out = serde_json::to_string_pretty(&Value::Object(root)).unwrap_or_default();
        out.push('\n');
        out
    } else {
        check(path, &text)?;
        let doc = Document::parse(&text).map_err(|at| syntax(path, &text, at))?;
        match doc.servers() {
            Some(servers) => {
                if servers.member(name).is_some() {
                    return Err(EditError::Exists {
                        path: path.to_owned(),
                        name: name.to_owned(),
                    });
                }
                insert(&text, servers, name, entry)
            }
            None => {
                let mut servers = serde_json::Map::new();
                servers.insert(name.to_owned(), entry.clone());
                insert(&text, &doc.root, servers_key, &Value::Object(servers))
            }
        }
    };
    check(path, &new)?;
    write(path, &new)
}

/// Removes server `name` from the file at `path`.
pub fn remove_server(path: &Path, name: &str) -> Result<(), EditError> {
    let text = std::fs::read_to_string(path).map_err(|source| EditError::Io {
        path: path.to_owned(),
        source,
    })?;
    check(path, &text)?;
    let doc = Document::parse(&text).map_err(|at| syntax(path, &text, at))?;
    let missing = || EditError::Missing {
        path: path.to_owned(),
        name: name.to_owned(),
    };
    let servers = doc.servers().ok_or_else(missing)?;
    let index = servers.member(name).ok_or_else(missing)?;
    let new = remove(&text, servers, index);
    check(path, &new)?;
    write(path, &new)
}

fn write(path: &Path, text: &str) -> Result<(), EditError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| EditError::Io {
            path: path.to_owned(),
            source,
        })?;
    }
    write_atomically(path, text).map_err(|source| EditError::Io {
        path: path.to_owned(),
        source,
    })
}

/// Parses `text` as a config; every variable counts as set, since the entries are checked
/// for their shape here, not run.
fn check(path: &Path, text: &str) -> Result<(), ConfigError> {
    Config::parse(text, path, &|_| Some(String::new())).map(drop)
}

fn syntax(path: &Path, text: &str, at: usize) -> EditError {
    let before = &text[..at.min(text.len())];
    EditError::Invalid(ConfigError::Syntax {
        path: path.to_owned(),
        line: before.matches('\n').count() + 1,
        column: before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1,
        message: "unexpected character".to_owned(),
    })
}

/// The byte range of one member of an object.
#[derive(Debug)]
struct Member {
    key: String,
    key_start: usize,
    value_end: usize,
    object: Option<Object>,
}

/// An object: where its braces are and its members.
#[derive(Debug)]
struct Object {
    open: usize,
    close: usize,
    members: Vec<Member>,
}

impl Object {
    fn member(&self, key: &str) -> Option<usize> {
        self.members.iter().position(|m| m.key == key)
    }
}

struct Document {
    root: Object,
}

impl Document {
    /// Parses the top-level object, and the members of its objects one level down.
    fn parse(text: &str) -> Result<Document, usize> {
        let mut scanner = Scanner {
            text: text.as_bytes(),
            at: 0,
        };
        scanner.blank();
        let root = scanner.object(true)?;
        Ok(Document { root })
    }

    /// The servers object: `mcpServers`, else `servers`.
    fn servers(&self) -> Option<&Object> {
        ["mcpServers", "servers"].iter().find_map(|key| {
            let index = self.root.member(key)?;
            self.root.members[index].object.as_ref()
        })
    }
}

struct Scanner<'a> {
    text: &'a [u8],
    at: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    /// Skips whitespace and comments.
    fn blank(&mut self) {
        loop {
            match (self.peek(), self.text.get(self.at + 1)) {
                (Some(c), _) if c.is_ascii_whitespace() => self.at += 1,
                (Some(b'/'), Some(b'/')) => {
                    while self.peek().is_some_and(|c| c != b'\n') {
                        self.at += 1;
                    }
                }
                (Some(b'/'), Some(b'*')) => {
                    self.at += 2;
                    while self.at < self.text.len() && !self.text[self.at..].starts_with(b"*/") {
                        self.at += 1;
                    }
                    self.at = (self.at + 2).min(self.text.len());
                }
                _ => return,
            }
        }
    }

    fn string(&mut self) -> Result<String, usize> {
        let start = self.at;
        if self.peek() != Some(b'"') {
            return Err(self.at);
        }
        self.at += 1;
        while let Some(c) = self.peek() {
            self.at += 1;
            match c {
                b'\\' => self.at += 1,
                b'"' => {
                    let raw = std::str::from_utf8(&self.text[start..self.at]).map_err(|_| start)?;
                    return serde_json::from_str(raw).map_err(|_| start);
                }
                _ => {}
            }
        }
        Err(self.at)
    }

    /// Skips one value; an object's members are kept when `keep` is set (one level deep).
    fn value(&mut self, keep: bool) -> Result<Option<Object>, usize> {
        match self.peek() {
            Some(b'{') => self.object(keep).map(|o| keep.then_some(o)),
            Some(b'[') => {
                self.at += 1;
                loop {
                    self.blank();
                    match self.peek() {
                        Some(b']') => {
                            self.at += 1;
                            return Ok(None);
                        }
                        Some(b',') => self.at += 1,
                        Some(_) => {
                            self.value(false)?;
                        }
                        None => return Err(self.at),
                    }
                }
            }
            Some(b'"') => self.string().map(|_| None),
            Some(_) => {
                let start = self.at;
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || b"+-.".contains(&c))
                {
                    self.at += 1;
                }
                if self.at == start {
                    Err(start)
                } else {
                    Ok(None)
                }
            }
            None => Err(self.at),
        }
    }

    fn object(&mut self, keep_members: bool) -> Result<Object, usize> {
        if self.peek() != Some(b'{') {
            return Err(self.at);
        }
        let open = self.at;
        self.at += 1;
        let mut members = Vec::new();
        loop {
            self.blank();
            match self.peek() {
                Some(b'}') => {
                    self.at += 1;
                    return Ok(Object {
                        open,
                        close: self.at - 1,
                        members,
                    });
                }
                Some(b',') => self.at += 1,
                Some(b'"') => {
                    let key_start = self.at;
                    let key = self.string()?;
                    self.blank();
                    if self.peek() != Some(b':') {
                        return Err(self.at);
                    }
                    self.at += 1;
                    self.blank();
                    let object = self.value(keep_members)?;
                    members.push(Member {
                        key,
                        key_start,
                        value_end: self.at,
                        object,
                    });
                }
                _ => return Err(self.at),
            }
        }
    }
}

/// The indentation of the line holding byte `at`.
fn indent_of(text: &str, at: usize) -> &str {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[line_start..];
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// Where the significant text after `from` starts (after whitespace and comments).
fn next_significant(text: &str, from: usize) -> usize {
    let mut scanner = Scanner {
        text: text.as_bytes(),
        at: from,
    };
    scanner.blank();
    scanner.at
}

/// `text` with member `key: value` added at the end of `object`.
fn insert(text: &str, object: &Object, key: &str, value: &Value) -> String {
    let outer = indent_of(text, object.open);
    let indent = match object.members.first() {
        Some(first) => indent_of(text, first.key_start).to_owned(),
        None => format!("{outer}  "),
    };
    let pretty = serde_json::to_string_pretty(value).unwrap_or_default();
    let pretty = pretty.replace('\n', &format!("\n{indent}"));
    let member = format!(
        "{}: {pretty}",
        serde_json::to_string(key).unwrap_or_default()
    );
    match object.members.last() {
        None => format!(
            "{}\n{indent}{member}\n{outer}{}",
            &text[..=object.open],
            &text[object.close..]
        ),
        // Before a trailing comma (JSONC), which then follows the new member.
        Some(last) => format!(
            "{},\n{indent}{member}{}",
            &text[..last.value_end],
            &text[last.value_end..]
        ),
    }
}

/// `text` without member `index` of `object` (and the comma that separated it).
fn remove(text: &str, object: &Object, index: usize) -> String {
    let member = &object.members[index];
    let bytes = text.as_bytes();
    // The comma after the member, if any, and the rest of its line when that is blank.
    let after_comma = |from: usize| {
        let next = next_significant(text, from);
        if bytes.get(next) == Some(&b',') {
            next + 1
        } else {
            from
        }
    };
    let rest_of_line = |mut at: usize| {
        while bytes.get(at).is_some_and(|c| *c == b' ' || *c == b'\t') {
            at += 1;
        }
        if bytes.get(at) == Some(&b'\n') {
            at + 1
        } else {
            at
        }
    };
    let line_start = |at: usize| {
        let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        if text[start..at].trim().is_empty() {
            start
        } else {
            at
        }
    };
    let (start, end) = if index + 1 < object.members.len() || index == 0 {
        (
            line_start(member.key_start),
            rest_of_line(after_comma(member.value_end)),
        )
    } else {
        // The last of several: from the end of the one before, so that the comma before it
        // goes and a trailing one stays.
        (object.members[index - 1].value_end, member.value_end)
    };
    format!("{}{}", &text[..start], &text[end..])
}

/// The raw entry of server `name` in `text`, as written (before variables are expanded).
pub fn raw_entry(text: &str, name: &str) -> Option<Value> {
    let root: Value = serde_json::from_str(&jsonc::to_json(text)).ok()?;
    ["mcpServers", "servers"]
        .iter()
        .find_map(|key| root.get(key)?.get(name).cloned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("junction-edit-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn adding_and_removing_keeps_comments_and_other_members() {
        let dir = scratch("jsonc");
        let path = dir.join("mcp.json");
        let original = "{\n  // my servers\n  \"servers\": {\n    \"a\": {\"command\": \"a\"}, // keep me\n  },\n  \"inputs\": [],\n}\n";
        std::fs::write(&path, original).unwrap();
        add_server(&path, "servers", "b", &json!({"command": "b"})).unwrap();
        let added = std::fs::read_to_string(&path).unwrap();
        assert!(
            added.contains("// my servers") && added.contains("// keep me"),
            "{added}"
        );
        assert!(added.contains("\"inputs\": []"), "{added}");
        let config = Config::parse(&added, &path, &|_| None).unwrap();
        assert_eq!(config.servers.len(), 2, "{added}");
        remove_server(&path, "b").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), original);
        remove_server(&path, "a").unwrap();
        let emptied = std::fs::read_to_string(&path).unwrap();
        assert!(emptied.contains("// my servers"), "{emptied}");
        assert!(Config::parse(&emptied, &path, &|_| None)
            .unwrap()
            .servers
            .is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn removing_the_last_of_several_takes_its_comma() {
        let dir = scratch("last");
        let path = dir.join(".mcp.json");
        std::fs::write(
            &path,
            "{\"mcpServers\": {\"a\": {\"command\": \"a\"}, \"b\": {\"command\": \"b\"}}, \"x\": 1}",
        )
        .unwrap();
        remove_server(&path, "b").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"mcpServers\": {\"a\": {\"command\": \"a\"}}, \"x\": 1}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_new_file_or_one_without_servers_gets_the_member() {
        let dir = scratch("new");
        let path = dir.join("sub").join(".mcp.json");
        add_server(&path, "mcpServers", "a", &json!({"command": "a"})).unwrap();
        let other = dir.join("other.json");
        std::fs::write(&other, "{\"junction\": {\"logLevel\": \"info\"}}").unwrap();
        add_server(&other, "mcpServers", "a", &json!({"command": "a"})).unwrap();
        for path in [path, other] {
            let text = std::fs::read_to_string(&path).unwrap();
            let config = Config::parse(&text, &path, &|_| None).unwrap();
            assert_eq!(config.servers[0].name, "a", "{text}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_input_is_refused_and_the_file_is_left_as_it_was() {
        let dir = scratch("bad");
        let path = dir.join(".mcp.json");
        let original = "{\"mcpServers\": {\"a\": {\"command\": \"a\"}}}";
        std::fs::write(&path, original).unwrap();
        let refused = [
            add_server(&path, "mcpServers", "a", &json!({"command": "x"})),
            add_server(&path, "mcpServers", "x__y", &json!({"command": "x"})),
            add_server(&path, "mcpServers", "b", &json!({"url": "ftp://x"})),
            add_server(&path, "mcpServers", "b", &json!(["not", "an", "entry"])),
            remove_server(&path, "nope"),
        ];
        for result in refused {
            assert!(result.is_err());
        }
        assert_eq!(std::fs::read_to_string(&path).unwrap(), original);
        std::fs::write(&path, "{\"mcpServers\": {").unwrap();
        assert!(matches!(
            add_server(&path, "mcpServers", "b", &json!({"command": "b"})),
            Err(EditError::Invalid(ConfigError::Syntax { .. }))
        ));
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"mcpServers\": {"
        );
        let leftovers: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary file is left behind");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
