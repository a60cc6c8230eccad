//! The members a config may hold, so that a misspelt one is reported with the member that
//! was probably meant instead of being silently ignored.

/// The members of a server entry Junction reads.
pub const SERVER: &[&str] = &[
    "type",
    "command",
    "args",
    "env",
    "envFile",
    "cwd",
    "url",
    "headers",
    "oauth",
    "trusted",
    "disabled",
    "startupTimeoutMs",
    "toolTimeoutMs",
    "taskAfterMs",
    "policy",
    "sampling",
    "roots",
    "protocolVersion",
];

/// Members other hosts write in server entries, ignored without a warning.
pub const OTHER_HOSTS: &[&str] = &[
    "description",
    "timeout",
    "autoApprove",
    "alwaysAllow",
    "transportType",
    "dev",
    "gallery",
    "version",
];

/// The members of the `junction` section.
pub const JUNCTION: &[&str] = &[
    "policy",
    "consentFile",
    "maxToolOutput",
    "maxListItems",
    "maxListBytes",
    "maxMessage",
    "maxServerLog",
    "toolTimeoutMs",
    "systemPrompt",
    "logLevel",
    "markdown",
    "model",
];

/// The warning for member `key` (in `place`) when it is not one of `known`, naming the
/// closest known member when one is near.
pub fn unknown(key: &str, known: &[&str], place: &str) -> Option<String> {
    if known.contains(&key) {
        return None;
    }
    let closest = known
        .iter()
        .map(|k| {
            (
                strsim::levenshtein(&k.to_lowercase(), &key.to_lowercase()),
                *k,
            )
        })
        .min()
        .filter(|(distance, _)| *distance <= 3);
    Some(match closest {
        Some((_, k)) => format!("{place}: unknown member `{key}` is ignored; did you mean `{k}`?"),
        None => format!("{place}: unknown member `{key}` is ignored"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_misspelt_member_gets_the_closest_one() {
        assert_eq!(
            unknown("comand", SERVER, "server `x`").as_deref(),
            Some("server `x`: unknown member `comand` is ignored; did you mean `command`?")
        );
        assert_eq!(
            unknown("ENV", SERVER, "s").as_deref(),
            Some("s: unknown member `ENV` is ignored; did you mean `env`?")
        );
        assert_eq!(
            unknown("zzzzzzzz", SERVER, "s").as_deref(),
            Some("s: unknown member `zzzzzzzz` is ignored")
        );
        assert_eq!(unknown("command", SERVER, "s"), None);
    }
}
