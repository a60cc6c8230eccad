//! The environment a stdio server starts with.
//!
//! A server gets only what it needs to run, never the host's secrets (`ANTHROPIC_API_KEY`,
//! cloud credentials, tokens of other servers): the variables of [`SAFE`] (and `LC_*`)
//! that are set in the host, as the TypeScript SDK's `getDefaultEnvironment` and Claude
//! Desktop do, plus the entry's own `env` (after its `envFile`). A `null` value in the
//! entry's `env` removes a variable, also one of the safe list.

use std::collections::BTreeMap;

/// The variables a server inherits from the host when they are set.
pub const SAFE: &[&str] = &[
    "HOME",
    "LOGNAME",
    "PATH",
    "SHELL",
    "TERM",
    "USER",
    "LANG",
    "LANGUAGE",
    "TMPDIR",
    "TZ",
    // Windows, as the TypeScript SDK keeps them.
    "APPDATA",
    "HOMEDRIVE",
    "HOMEPATH",
    "LOCALAPPDATA",
    "PROCESSOR_ARCHITECTURE",
    "SYSTEMDRIVE",
    "SYSTEMROOT",
    "TEMP",
    "USERNAME",
    "USERPROFILE",
    "PROGRAMFILES",
];

/// Whether a variable of the host reaches servers.
pub fn is_safe(name: &str) -> bool {
    SAFE.contains(&name) || name.starts_with("LC_")
}

/// The environment for a server: the safe variables of `host` (skipping values that start
/// with `()`, exported shell functions) with `own` applied over them (`None` removes).
pub fn for_server(
    host: impl IntoIterator<Item = (String, String)>,
    own: &BTreeMap<String, Option<String>>,
) -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> = host
        .into_iter()
        .filter(|(name, value)| is_safe(name) && !value.starts_with("()"))
        .collect();
    for (name, value) in own {
        match value {
            Some(value) => {
                env.insert(name.clone(), value.clone());
            }
            None => {
                env.remove(name);
            }
        }
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_safe_variables_and_the_entrys_own_reach_a_server() {
        let host = [
            ("PATH", "/bin"),
            ("HOME", "/home/ada"),
            ("LC_ALL", "C"),
            ("ANTHROPIC_API_KEY", "sk-secret"),
            ("AWS_SECRET_ACCESS_KEY", "x"),
            ("TERM", "() { :; }"),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned()));
        let own = [
            ("TOKEN".to_owned(), Some("t".to_owned())),
            ("HOME".to_owned(), None),
        ]
        .into();
        let env = for_server(host, &own);
        let names: Vec<&str> = env.keys().map(String::as_str).collect();
        assert_eq!(names, ["LC_ALL", "PATH", "TOKEN"]);
    }
}
