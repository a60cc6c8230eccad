//! JSONC (JSON with comments and trailing commas, as VS Code writes it) to plain JSON.
//!
//! Comments become spaces and newlines stay, so the JSON parser's line and column numbers
//! still point into the original file.

/// Blanks out `//` and `/* */` comments and commas that precede `}` or `]`.
pub(crate) fn to_json(text: &str) -> String {
    let without_comments = strip_comments(text);
    strip_trailing_commas(&without_comments)
}

fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => {
                    if let Some(escaped) = chars.next() {
                        out.push(escaped);
                    }
                }
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                    out.push(' ');
                }
            }
            ('/', Some('*')) => {
                chars.next();
                out.push_str("  ");
                let mut previous = ' ';
                for c in chars.by_ref() {
                    out.push(if c == '\n' { '\n' } else { ' ' });
                    if previous == '*' && c == '/' {
                        break;
                    }
                    previous = c;
                }
            }
            _ => out.push(c),
        }
    }
    out
}

fn strip_trailing_commas(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if in_string {
            if c == '\\' && i + 1 < chars.len() {
                out.push(c);
                out.push(chars[i + 1]);
                i += 2;
                continue;
            }
            if c == '"' {
                in_string = false;
            }
            out.push(c);
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if c == ',' {
            let next = chars[i + 1..].iter().find(|c| !c.is_whitespace());
            out.push(if matches!(next, Some('}') | Some(']')) {
                ' '
            } else {
                ','
            });
        } else {
            out.push(c);
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::to_json;

    #[test]
    fn comments_and_trailing_commas_are_removed_but_strings_are_untouched() {
        let text = "{\n  // a comment\n  \"url\": \"http://x//y\", /* block\n comment */\n  \"a\": [1, 2,],\n  \"s\": \"a,}\\\"//\",\n}";
        let value: serde_json::Value = serde_json::from_str(&to_json(text)).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"url": "http://x//y", "a": [1, 2], "s": "a,}\"//"})
        );
    }

    #[test]
    fn line_numbers_are_kept() {
        let text = "{\n/* one\ntwo */\n\"a\": nope}";
        let err = serde_json::from_str::<serde_json::Value>(&to_json(text)).unwrap_err();
        assert_eq!(err.line(), 4);
    }
}
