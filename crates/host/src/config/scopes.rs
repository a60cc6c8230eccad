//! Where server definitions are found, and how the files found are merged.
//!
//! Like Claude Code, the host reads two scopes, lowest precedence first:
//!
//! - **user**: `$XDG_CONFIG_HOME/junction/mcp.json` (`~/.config/junction/mcp.json`), the
//!   user's own servers, in every directory;
//! - **project**: `.vscode/mcp.json` (VS Code's `servers` format) and then `.mcp.json` at
//!   the project root, which is the nearest directory at or above the working directory
//!   that holds `.git`, or the working directory itself outside a repository (so a file of
//!   some unrelated directory above is never picked up).
//!
//! On a name clash the file of higher precedence wins (project over user, `.mcp.json` over
//! `.vscode/mcp.json`), and [`merge`] says so once. A file given with `--config` replaces
//! discovery altogether.
//!
//! A project file comes with the repository, so it may name any command: its servers start
//! only once the user approved them (see [`super::approval`]), and its `junction` section may
//! tighten the policy but not loosen it ([`Config::restrict_to_project`]), and lower the
//! host's limits but not raise them ([`merge`]).

use std::fmt;
use std::path::{Path, PathBuf};

use super::Config;
use crate::policy::Action;

/// Which kind of file a server definition came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Scope {
    /// A file named on the command line (`--config`): it replaces discovery.
    #[default]
    Given,
    /// The user's own file, `$XDG_CONFIG_HOME/junction/mcp.json`.
    User,
    /// A file of the project: `.mcp.json` or `.vscode/mcp.json` at its root.
    Project,
}

impl Scope {
    /// The word for it, as `junction mcp --scope` takes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Given => "--config",
            Scope::User => "user",
            Scope::Project => "project",
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The user's directory of Junction files: `$XDG_CONFIG_HOME/junction`, else
/// `$HOME/.config/junction`.
pub fn user_config_dir() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let base = match (var("XDG_CONFIG_HOME"), var("HOME")) {
        (Some(config), _) => PathBuf::from(config),
        (None, Some(home)) => PathBuf::from(home).join(".config"),
        (None, None) => return None,
    };
    Some(base.join("junction"))
}

/// The user-scope config file (which may not exist yet).
pub fn user_config_file() -> Option<PathBuf> {
    user_config_dir().map(|dir| dir.join("mcp.json"))
}

/// The project root for `dir`: the nearest directory at or above it holding `.git`, else
/// `dir` itself.
pub fn project_root(dir: &Path) -> PathBuf {
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .unwrap_or(dir)
        .to_owned()
}

/// The project-scope files of `root`, lowest precedence first (which may not exist).
pub fn project_files(root: &Path) -> [PathBuf; 2] {
    [
        root.join(".vscode").join("mcp.json"),
        root.join(".mcp.json"),
    ]
}

/// The project file `junction mcp add --scope project` writes: `.mcp.json`.
pub fn project_file(root: &Path) -> PathBuf {
    root.join(".mcp.json")
}

/// Merges configs given lowest precedence first. A server defined again replaces the earlier
/// definition (the returned notes say so, once per clash); rules add up; a setting of a later
/// file replaces an earlier one, except that a project file's limit
/// ([`Config::lower_limits_only`]) replaces only a higher one (or the host's default, when
/// higher): a repository may not raise the bounds that protect the user.
pub fn merge(configs: Vec<Config>) -> (Config, Vec<String>) {
    let mut merged = Config::default();
    let mut notes = Vec::new();
    for config in configs {
        for server in config.servers {
            if let Some(old) = merged.servers.iter_mut().find(|s| s.name == server.name) {
                notes.push(format!(
                    "server `{}` of {} ({}) is used instead of the one of {} ({})",
                    server.name,
                    server.source.display(),
                    server.scope,
                    old.source.display(),
                    old.scope
                ));
                *old = server;
            } else {
                merged.servers.push(server);
            }
        }
        merged.policy.rules.extend(config.policy.rules);
        merged.policy.consent_file = config.policy.consent_file.or(merged.policy.consent_file);
        let mut limits = Limits {
            project: config.lower_limits_only.as_deref(),
            warnings: &mut merged.warnings,
        };
        limits.set(
            "maxToolOutput",
            &mut merged.max_tool_output,
            config.max_tool_output,
            crate::agent::DEFAULT_MAX_TOOL_OUTPUT,
        );
        limits.set(
            "maxListItems",
            &mut merged.max_list_items,
            config.max_list_items,
            junction::client::MAX_LIST_ITEMS,
        );
        limits.set(
            "maxListBytes",
            &mut merged.max_list_bytes,
            config.max_list_bytes,
            junction::client::MAX_LIST_BYTES,
        );
        limits.set(
            "maxMessage",
            &mut merged.max_message,
            config.max_message,
            junction::transport::DEFAULT_MAX_FRAME,
        );
        limits.set(
            "maxServerLog",
            &mut merged.max_server_log,
            config.max_server_log,
            usize::try_from(crate::server_log::MAX_BYTES).unwrap_or(usize::MAX),
        );
        limits.set(
            "toolTimeoutMs",
            &mut merged.tool_timeout,
            config.tool_timeout,
            crate::tool_call::DEFAULT_TOOL_TIMEOUT,
        );
        merged.system_prompt = config.system_prompt.or(merged.system_prompt);
        merged.log_level = config.log_level.or(merged.log_level);
        merged.markdown = config.markdown.or(merged.markdown);
        merged.model = config.model.or(merged.model);
        merged.warnings.extend(config.warnings);
    }
    merged.servers.sort_by(|a, b| a.name.cmp(&b.name));
    (merged, notes)
}

/// Sets the limits of one file over those merged so far.
struct Limits<'a> {
    /// The file's path, when it is a project file (which may only lower a limit).
    project: Option<&'a Path>,
    warnings: &'a mut Vec<String>,
}

impl Limits<'_> {
    /// `junction.<key>`: `new` replaces `current` (whose absence means `default`), unless
    /// the file is a project file and `new` is higher, which is ignored with a warning.
    fn set<T: Ord + Copy + fmt::Debug>(
        &mut self,
        key: &str,
        current: &mut Option<T>,
        new: Option<T>,
        default: T,
    ) {
        let Some(new) = new else { return };
        let applies = current.unwrap_or(default);
        match self.project {
            Some(path) if new > applies => self.warnings.push(format!(
                "{}: `junction.{key}` of a project file may lower the limit but not raise it: {applies:?} applies, not {new:?}",
                path.display()
            )),
            _ => *current = Some(new),
        }
    }
}

impl Config {
    /// Marks every server as coming from `scope`.
    pub fn in_scope(mut self, scope: Scope) -> Config {
        for server in &mut self.servers {
            server.scope = scope;
        }
        self
    }

    /// What a project file may not decide, taken out with a warning each: `allow` rules (a
    /// cloned repository would otherwise let its own, or the user's, tools run unasked) and
    /// `junction.consentFile` (where the user's answers are kept); and its limits are marked
    /// as able only to lower those that apply ([`merge`]).
    pub fn restrict_to_project(&mut self, path: &Path) {
        self.lower_limits_only = Some(path.to_owned());
        let before = self.policy.rules.len();
        self.policy.rules.retain(|r| r.action != Action::Allow);
        if self.policy.rules.len() != before {
            self.warnings.push(format!(
                "{}: `allow` rules of a project file are ignored (a repository may not allow calls for you); put them in {}",
                path.display(),
                user_config_file().map_or_else(|| "the user config".to_owned(), |p| p.display().to_string())
            ));
        }
        if self.policy.consent_file.take().is_some() {
            self.warnings.push(format!(
                "{}: `junction.consentFile` of a project file is ignored",
                path.display()
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str, path: &str, scope: Scope) -> Config {
        Config::parse(text, Path::new(path), &|_| None)
            .unwrap()
            .in_scope(scope)
    }

    #[test]
    fn a_project_server_replaces_the_user_one_of_the_same_name_and_says_so() {
        let user = parse(
            r#"{"mcpServers": {"a": {"command": "user-a"}, "b": {"command": "user-b"}},
                "junction": {"model": "openai:u", "toolTimeoutMs": 5, "maxListItems": 9, "maxMessage": 100}}"#,
            "/u/mcp.json",
            Scope::User,
        );
        let project = parse(
            r#"{"mcpServers": {"a": {"command": "project-a"}}, "junction": {"model": "anthropic:p", "maxListItems": 3}}"#,
            "/p/.mcp.json",
            Scope::Project,
        );
        let (merged, notes) = merge(vec![user, project]);
        let a = merged.server("a").unwrap();
        assert_eq!(a.scope, Scope::Project);
        assert_eq!(merged.server("b").unwrap().scope, Scope::User);
        assert_eq!(
            notes,
            ["server `a` of /p/.mcp.json (project) is used instead of the one of /u/mcp.json (user)"]
        );
        assert_eq!(merged.model.as_deref(), Some("anthropic:p"));
        assert_eq!(
            merged.tool_timeout,
            Some(std::time::Duration::from_millis(5))
        );
        assert_eq!(
            merged.max_list_items,
            Some(3),
            "the project's replaces the user's"
        );
        assert_eq!(
            merged.max_message,
            Some(100),
            "the user's stays where the project is silent"
        );
    }

    #[test]
    fn a_project_file_may_deny_but_not_allow() {
        let mut project = parse(
            r#"{"mcpServers": {"a": {"command": "x", "policy": {"*": "allow"}}},
                "junction": {"policy": {"*__rm": "deny", "*": "allow"}, "consentFile": "/tmp/c.json"}}"#,
            "/p/.mcp.json",
            Scope::Project,
        );
        project.restrict_to_project(Path::new("/p/.mcp.json"));
        assert!(project
            .policy
            .rules
            .iter()
            .all(|r| r.action == Action::Deny));
        assert_eq!(project.policy.rules.len(), 1);
        assert_eq!(project.policy.consent_file, None);
        assert_eq!(project.warnings.len(), 2, "{:?}", project.warnings);
    }

    #[test]
    fn a_project_file_may_lower_the_limits_but_not_raise_them() {
        let user = parse(
            r#"{"junction": {"maxToolOutput": 5000, "maxListItems": 50, "toolTimeoutMs": 60000}}"#,
            "/u/mcp.json",
            Scope::User,
        );
        let mut project = parse(
            r#"{"junction": {"maxToolOutput": 90000000, "maxListItems": 10,
                             "maxMessage": 1099511627776, "maxServerLog": 1024,
                             "toolTimeoutMs": 30000}}"#,
            "/p/.mcp.json",
            Scope::Project,
        );
        project.restrict_to_project(Path::new("/p/.mcp.json"));
        let (merged, _) = merge(vec![user, project]);
        assert_eq!(
            merged.max_tool_output,
            Some(5000),
            "raising the user's is ignored"
        );
        assert_eq!(
            merged.max_list_items,
            Some(10),
            "lowering the user's applies"
        );
        assert_eq!(merged.max_message, None, "raising the default is ignored");
        assert_eq!(
            merged.max_server_log,
            Some(1024),
            "lowering the default applies"
        );
        assert_eq!(
            merged.tool_timeout,
            Some(std::time::Duration::from_secs(30))
        );
        assert_eq!(
            merged.warnings,
            [
                "/p/.mcp.json: `junction.maxToolOutput` of a project file may lower the limit but not raise it: 5000 applies, not 90000000",
                "/p/.mcp.json: `junction.maxMessage` of a project file may lower the limit but not raise it: 4194304 applies, not 1099511627776",
            ]
        );
    }

    #[test]
    fn a_user_file_may_raise_the_limits() {
        let user = parse(
            r#"{"junction": {"maxToolOutput": 90000000}}"#,
            "/u/mcp.json",
            Scope::User,
        );
        let (merged, _) = merge(vec![user]);
        assert_eq!(merged.max_tool_output, Some(90_000_000));
        assert!(merged.warnings.is_empty(), "{:?}", merged.warnings);
    }

    #[test]
    fn the_project_root_is_the_git_root_or_the_directory_itself() {
        let dir = std::env::temp_dir().join(format!("junction-root-{}", std::process::id()));
        let deep = dir.join("repo").join("src").join("deep");
        std::fs::create_dir_all(&deep).unwrap();
        assert_eq!(project_root(&deep), deep);
        std::fs::create_dir_all(dir.join("repo").join(".git")).unwrap();
        assert_eq!(project_root(&deep), dir.join("repo"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
