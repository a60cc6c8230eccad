//! RFC 6570 URI templates, for matching a concrete URI against a resource template.
//!
//! Supported expressions: `{var}` (simple: no `/`, `?`, `#` or `&` in the value), `{+var}`
//! (reserved: anything), `{#var}` (fragment), `{/var}` (path segment), `{.var}` (label),
//! and `{?a,b}` / `{&a,b}` (query parameters, in any order, each optional). Matched values are
//! percent-decoded.
//!
//! ```
//! use junction::uri_template::UriTemplate;
//! let t = UriTemplate::parse("library://books/{isbn}").unwrap();
//! let vars = t.matches("library://books/978-0-14").unwrap();
//! assert_eq!(vars["isbn"], "978-0-14");
//! assert!(t.matches("library://books/a/b").is_none());
//! ```

use std::collections::{BTreeMap, HashSet};

/// The most work (ways of splitting a URI between adjacent expressions, and characters
/// scanned for them) one match does by default; past it the URI does not match. Adjacent
/// expressions (`{a}{b}{c}`) can be split in polynomially many ways (a client chooses the
/// URI of a `resources/read`), so the work is bounded: [`UriTemplate::matches_within`] takes
/// another bound, and a server's with
/// [`ServerBuilder::template_match_steps`](crate::server::ServerBuilder::template_match_steps).
pub const MAX_ATTEMPTS: usize = 100_000;

/// A parsed URI template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    source: String,
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Expr { op: Op, vars: Vec<String> },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Simple,
    Reserved,
    Fragment,
    Path,
    Label,
    Query,
    QueryContinue,
}

/// A template that is not valid RFC 6570.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid URI template {template:?}: {reason}")]
pub struct TemplateError {
    /// The template text.
    pub template: String,
    /// What is wrong.
    pub reason: String,
}

impl UriTemplate {
    /// Parses a template.
    pub fn parse(template: &str) -> Result<Self, TemplateError> {
        let error = |reason: &str| TemplateError {
            template: template.to_owned(),
            reason: reason.to_owned(),
        };
        let mut parts = Vec::new();
        let mut rest = template;
        while !rest.is_empty() {
            match rest.find('{') {
                Some(0) => {
                    let end = rest
                        .find('}')
                        .ok_or_else(|| error("a `{` is never closed"))?;
                    let body = &rest[1..end];
                    let (op, names) = match body.chars().next() {
                        Some('+') => (Op::Reserved, &body[1..]),
                        Some('#') => (Op::Fragment, &body[1..]),
                        Some('/') => (Op::Path, &body[1..]),
                        Some('.') => (Op::Label, &body[1..]),
                        Some('?') => (Op::Query, &body[1..]),
                        Some('&') => (Op::QueryContinue, &body[1..]),
                        _ => (Op::Simple, body),
                    };
                    let vars: Vec<String> = names
                        .split(',')
                        .map(|v| {
                            v.trim_end_matches('*')
                                .split(':')
                                .next()
                                .unwrap_or("")
                                .to_owned()
                        })
                        .collect();
                    if vars.iter().any(|v| {
                        v.is_empty()
                            || !v
                                .chars()
                                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
                    }) {
                        return Err(error("a variable name is empty or has characters other than letters, digits, `_` and `.`"));
                    }
                    if vars.len() > 1 && !matches!(op, Op::Query | Op::QueryContinue) {
                        return Err(error("only `{?a,b}` and `{&a,b}` expressions may list several variables here"));
                    }
                    parts.push(Part::Expr { op, vars });
                    rest = &rest[end + 1..];
                }
                Some(i) => {
                    parts.push(Part::Literal(rest[..i].to_owned()));
                    rest = &rest[i..];
                }
                None => {
                    if rest.contains('}') {
                        return Err(error("a `}` has no matching `{`"));
                    }
                    parts.push(Part::Literal(rest.to_owned()));
                    rest = "";
                }
            }
        }
        Ok(UriTemplate {
            source: template.to_owned(),
            parts,
        })
    }

    /// The template text.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The names of the variables, in order.
    pub fn variables(&self) -> Vec<&str> {
        self.parts
            .iter()
            .flat_map(|p| match p {
                Part::Expr { vars, .. } => vars.iter().map(String::as_str).collect(),
                Part::Literal(_) => Vec::new(),
            })
            .collect()
    }

    /// Matches `uri`; returns the variables' (percent-decoded) values when it fits, within
    /// [`MAX_ATTEMPTS`] steps.
    pub fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        self.matches_within(uri, MAX_ATTEMPTS)
    }

    /// [`UriTemplate::matches`] doing at most `max_steps` steps of work; a URI that needs
    /// more does not match.
    pub fn matches_within(&self, uri: &str, max_steps: usize) -> Option<BTreeMap<String, String>> {
        let mut vars = BTreeMap::new();
        let mut search = Search {
            failed: HashSet::new(),
            attempts: 0,
            max: max_steps,
        };
        search.parts(&self.parts, uri, &mut vars).then_some(vars)
    }
}

/// One match: the states (parts left, URI left) known not to match, so none is tried twice,
/// the attempts made so far, and the most it may make.
struct Search {
    failed: HashSet<(usize, usize)>,
    attempts: usize,
    max: usize,
}

impl Search {
    fn parts(&mut self, parts: &[Part], uri: &str, vars: &mut BTreeMap<String, String>) -> bool {
        let state = (parts.len(), uri.len());
        if self.failed.contains(&state) {
            return false;
        }
        let matched = self.attempts < self.max && match_parts(self, parts, uri, vars);
        if !matched {
            self.failed.insert(state);
        }
        matched
    }
}

fn match_parts(
    search: &mut Search,
    parts: &[Part],
    uri: &str,
    vars: &mut BTreeMap<String, String>,
) -> bool {
    search.attempts += 1;
    let Some((first, rest)) = parts.split_first() else {
        return uri.is_empty();
    };
    match first {
        Part::Literal(lit) => uri
            .strip_prefix(lit.as_str())
            .is_some_and(|tail| search.parts(rest, tail, vars)),
        Part::Expr {
            op: op @ (Op::Query | Op::QueryContinue),
            vars: names,
        } => {
            let lead = if *op == Op::Query { '?' } else { '&' };
            let end = uri.find('#').unwrap_or(uri.len());
            let (query, tail) = uri.split_at(end);
            if query.is_empty() {
                return search.parts(rest, tail, vars);
            }
            let Some(query) = query.strip_prefix(lead) else {
                return false;
            };
            for pair in query.split('&') {
                let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                if names.iter().any(|n| n == k) {
                    vars.insert(k.to_owned(), decode(v));
                }
            }
            search.parts(rest, tail, vars)
        }
        Part::Expr { op, vars: names } => {
            let (prefix, allowed): (&str, fn(char) -> bool) = match op {
                Op::Simple => ("", |c| !matches!(c, '/' | '?' | '#' | '&')),
                Op::Reserved => ("", |_| true),
                Op::Fragment => ("#", |_| true),
                Op::Path => ("/", |c| !matches!(c, '/' | '?' | '#')),
                Op::Label => (".", |c| !matches!(c, '.' | '/' | '?' | '#')),
                // Handled by the arm above.
                Op::Query | Op::QueryContinue => return false,
            };
            let Some(body) = uri.strip_prefix(prefix) else {
                return false;
            };
            let limit = body
                .char_indices()
                .find(|&(_, c)| !allowed(c))
                .map_or(body.len(), |(i, _)| i);
            // Scanning the value's candidates is work too.
            search.attempts += limit;
            if search.attempts >= search.max {
                return false;
            }
            // Try the longest value first, then shorter ones, so later literals still match.
            let mut ends: Vec<usize> = body[..limit]
                .char_indices()
                .map(|(i, _)| i)
                .skip(1)
                .collect();
            if limit > 0 {
                ends.push(limit);
            }
            for &end in ends.iter().rev() {
                if search.failed.contains(&(rest.len(), body.len() - end)) {
                    continue;
                }
                if search.attempts >= search.max {
                    return false;
                }
                let mut attempt = vars.clone();
                attempt.insert(names[0].clone(), decode(&body[..end]));
                if search.parts(rest, &body[end..], &mut attempt) {
                    *vars = attempt;
                    return true;
                }
            }
            false
        }
    }
}

fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(b) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(t: &str, uri: &str) -> Option<Vec<(String, String)>> {
        UriTemplate::parse(t)
            .unwrap()
            .matches(uri)
            .map(|v| v.into_iter().collect())
    }

    #[test]
    fn simple_variables_stop_at_slashes() {
        assert_eq!(
            m("test://template/{id}/data", "test://template/123/data"),
            Some(vec![("id".into(), "123".into())])
        );
        assert_eq!(
            m("test://template/{id}/data", "test://template/1/2/data"),
            None
        );
        assert_eq!(
            m("tasks://{id}", "tasks://17"),
            Some(vec![("id".into(), "17".into())])
        );
        assert_eq!(m("tasks://{id}", "tasks://"), None);
        assert_eq!(
            m("a/{x}-{y}", "a/1-2-3"),
            Some(vec![("x".into(), "1-2".into()), ("y".into(), "3".into())])
        );
    }

    #[test]
    fn reserved_path_and_query_expressions() {
        assert_eq!(
            m("file:///{+path}", "file:///a/b%20c"),
            Some(vec![("path".into(), "a/b c".into())])
        );
        assert_eq!(
            m("x://s{/seg}", "x://s/one"),
            Some(vec![("seg".into(), "one".into())])
        );
        assert_eq!(
            m("x://search{?q,limit}", "x://search?limit=5&q=rivers"),
            Some(vec![
                ("limit".into(), "5".into()),
                ("q".into(), "rivers".into())
            ])
        );
        assert_eq!(m("x://search{?q}", "x://search"), Some(vec![]));
    }

    #[test]
    fn rejects_bad_templates() {
        assert!(UriTemplate::parse("x://{unclosed").is_err());
        assert!(UriTemplate::parse("x://}").is_err());
        assert!(UriTemplate::parse("x://{}").is_err());
        assert_eq!(
            UriTemplate::parse("a{b}{?c,d}").unwrap().variables(),
            vec!["b", "c", "d"]
        );
    }

    /// Found by the fuzzer: adjacent expressions over a long URI took longer than 10 s
    /// (every split of the URI between them was tried again and again).
    #[test]
    fn adjacent_expressions_over_a_long_uri_match_in_bounded_work() {
        let t = UriTemplate::parse("t{a}{b}{c}{d}{e}x").unwrap();
        let long = format!("t{}", "y".repeat(20_000));
        assert_eq!(t.matches(&long), None);
        let fits = format!("t{}x", "y".repeat(5));
        let vars = t.matches(&fits).unwrap();
        assert_eq!(vars.values().map(String::len).sum::<usize>(), 5);
    }

    #[test]
    fn a_lower_bound_on_the_work_makes_a_costly_uri_not_match() {
        let t = UriTemplate::parse("t{a}{b}x").unwrap();
        let uri = format!("t{}x", "y".repeat(200));
        assert!(t.matches(&uri).is_some());
        assert_eq!(t.matches_within(&uri, 100), None);
        assert!(t.matches_within("tyyx", 100).is_some());
    }
}
