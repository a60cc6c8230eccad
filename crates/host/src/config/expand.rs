//! `${VAR}` expansion, in the dialects config files use.

/// Expands `${VAR}`, `${VAR:-default}` and `${env:VAR}` in `text` with `lookup`.
///
/// As in Claude Code, a variable that is unset and has no default stays as written (so the
/// mistake shows up where the value is used), and a bare `$VAR` is never expanded.
///
/// ```
/// use junction_host::config::expand;
/// let env = |name: &str| (name == "TOKEN").then(|| "s3cret".to_owned());
/// assert_eq!(expand("Bearer ${TOKEN}", &env), "Bearer s3cret");
/// assert_eq!(expand("${PORT:-8080}", &env), "8080");
/// assert_eq!(expand("${env:TOKEN}", &env), "s3cret");
/// assert_eq!(expand("${MISSING} $TOKEN", &env), "${MISSING} $TOKEN");
/// ```
pub fn expand(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> String {
    expand_checked(text, lookup).0
}

/// [`expand`], and the names of the variables that were unset with no default (left as
/// written), in order. The config reader makes each of those an error.
pub fn expand_checked(
    text: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> (String, Vec<String>) {
    let mut out = String::with_capacity(text.len());
    let mut missing = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return (out, missing);
        };
        let inner = &after[..end];
        let body = inner.strip_prefix("env:").unwrap_or(inner);
        let (name, default) = match body.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (body, None),
        };
        match (lookup(name), default) {
            (Some(value), _) => out.push_str(&value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => {
                missing.push(name.to_owned());
                out.push_str(&rest[start..start + 2 + end + 1]);
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    (out, missing)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "HOME" => Some("/home/ada".to_owned()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn unset_variables_without_a_default_are_named() {
        let (text, missing) = expand_checked("${NOPE}/${HOME}/${ALSO:-x}/${env:GONE}", &env);
        assert_eq!(text, "${NOPE}//home/ada/x/${env:GONE}");
        assert_eq!(missing, ["NOPE", "GONE"]);
    }

    #[test]
    fn set_variables_are_replaced_everywhere_in_the_text() {
        assert_eq!(
            expand("${HOME}/a:${HOME}/b", &env),
            "/home/ada/a:/home/ada/b"
        );
    }

    #[test]
    fn a_default_is_used_only_when_the_variable_is_unset() {
        assert_eq!(expand("${NOPE:-x}", &env), "x");
        assert_eq!(expand("${HOME:-x}", &env), "/home/ada");
        assert_eq!(expand("${EMPTY:-x}", &env), "");
        assert_eq!(expand("${NOPE:-}", &env), "");
    }

    #[test]
    fn unset_variables_and_unterminated_references_stay_literal() {
        assert_eq!(expand("a ${NOPE} b", &env), "a ${NOPE} b");
        assert_eq!(expand("a ${HOME", &env), "a ${HOME");
        assert_eq!(expand("$HOME", &env), "$HOME");
    }

    #[test]
    fn the_vs_code_env_prefix_is_accepted() {
        assert_eq!(expand("${env:HOME}", &env), "/home/ada");
    }
}
