//! `envFile`: variables for a server read from a dotenv file (VS Code's `mcp.json` has it).
//!
//! One `KEY=VALUE` per line; blank lines and lines starting with `#` are skipped, an
//! `export ` prefix is allowed, and a value in matching single or double quotes loses them.

/// The variables of a dotenv file's text, in order; lines that are not `KEY=VALUE` are
/// returned as errors with their (1-based) number.
pub fn parse(text: &str) -> Result<Vec<(String, String)>, usize> {
    let mut vars = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((key, value)) = line.split_once('=') else {
            return Err(number + 1);
        };
        let key = key.trim();
        if key.is_empty() || key.chars().any(char::is_whitespace) {
            return Err(number + 1);
        }
        let value = value.trim();
        let unquoted = ['"', '\'']
            .iter()
            .find_map(|q| value.strip_prefix(*q).and_then(|v| v.strip_suffix(*q)))
            .unwrap_or(value);
        vars.push((key.to_owned(), unquoted.to_owned()));
    }
    Ok(vars)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_values_quotes_comments_and_export_are_read() {
        let text = "# secrets\nTOKEN=abc\nexport NAME=\"Ada L\"\n\nSINGLE='x=y'\nEMPTY=\n";
        assert_eq!(
            parse(text).unwrap(),
            [
                ("TOKEN".to_owned(), "abc".to_owned()),
                ("NAME".to_owned(), "Ada L".to_owned()),
                ("SINGLE".to_owned(), "x=y".to_owned()),
                ("EMPTY".to_owned(), String::new()),
            ]
        );
    }

    #[test]
    fn a_line_that_is_not_a_variable_is_reported_by_number() {
        assert_eq!(parse("A=1\nnot a variable\n"), Err(2));
    }
}
