//! Server prompts as slash commands: `/server:prompt arguments`.
//!
//! Arguments are written `key=value` or positionally; positional values fill the prompt's
//! declared arguments in their declared order, skipping those given by name. Values may be
//! quoted (`"two words"` or `'two words'`). A missing required argument, an unknown prompt
//! or a value too many is an error that says what the prompt takes.
//!
//! ```
//! use junction_host::prompts::{parse_arguments, split_command};
//! use junction_protocol::prompts::{Prompt, PromptArgument};
//!
//! let (server, prompt, rest) = split_command("/weather:forecast Paris days=3").unwrap();
//! assert_eq!((server, prompt), ("weather", "forecast"));
//! let declared = Prompt::new("forecast")
//!     .argument(PromptArgument::new("city").required())
//!     .argument(PromptArgument::new("days"));
//! let args = parse_arguments(&declared, rest).unwrap();
//! assert_eq!(args["city"], "Paris");
//! assert_eq!(args["days"], "3");
//! ```

use std::collections::BTreeMap;

use junction_protocol::prompts::Prompt;

/// Why a command could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    /// The line is not `/server:prompt ...`.
    #[error("a prompt command looks like `/server:prompt key=value ...`, not {0:?}")]
    Syntax(String),
    /// No server has that name.
    #[error("no server is called `{0}`")]
    UnknownServer(String),
    /// The server has no such prompt.
    #[error("server `{server}` has no prompt `{prompt}`; it offers: {offered}")]
    UnknownPrompt {
        /// The server.
        server: String,
        /// The prompt asked for.
        prompt: String,
        /// The prompts it does offer.
        offered: String,
    },
    /// A quote was opened and not closed.
    #[error("a quote is not closed in {0:?}")]
    UnclosedQuote(String),
    /// More positional values than declared arguments.
    #[error("prompt `{prompt}` takes {takes}; {value:?} is one value too many")]
    TooManyValues {
        /// The prompt.
        prompt: String,
        /// Its arguments, in words.
        takes: String,
        /// The first value with no argument left.
        value: String,
    },
    /// Required arguments were not given.
    #[error("prompt `{prompt}` needs {}; it takes {takes}", missing.join(", "))]
    MissingArguments {
        /// The prompt.
        prompt: String,
        /// The missing arguments.
        missing: Vec<String>,
        /// Its arguments, in words.
        takes: String,
    },
}

/// Splits `/server:prompt rest` into its parts.
pub fn split_command(line: &str) -> Result<(&str, &str, &str), CommandError> {
    let syntax = || CommandError::Syntax(line.to_owned());
    let body = line.trim_start().strip_prefix('/').ok_or_else(syntax)?;
    let (head, rest) = match body.find(char::is_whitespace) {
        Some(at) => (&body[..at], body[at..].trim()),
        None => (body, ""),
    };
    let (server, prompt) = head.split_once(':').ok_or_else(syntax)?;
    if server.is_empty() || prompt.is_empty() {
        return Err(syntax());
    }
    Ok((server, prompt, rest))
}

/// Splits `text` into words, honouring single and double quotes and `\` escapes in double
/// quotes.
pub fn split_words(text: &str) -> Result<Vec<String>, CommandError> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut in_word = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' | '\'' => {
                in_word = true;
                let quote = c;
                let mut closed = false;
                while let Some(c) = chars.next() {
                    if c == quote {
                        closed = true;
                        break;
                    }
                    if c == '\\' && quote == '"' {
                        if let Some(escaped) = chars.next() {
                            current.push(escaped);
                        }
                        continue;
                    }
                    current.push(c);
                }
                if !closed {
                    return Err(CommandError::UnclosedQuote(text.to_owned()));
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut current));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                current.push(c);
            }
        }
    }
    if in_word {
        words.push(current);
    }
    Ok(words)
}

fn takes(prompt: &Prompt) -> String {
    let args = prompt.arguments.as_deref().unwrap_or_default();
    if args.is_empty() {
        return "no arguments".to_owned();
    }
    args.iter()
        .map(|a| {
            if a.is_required() {
                a.name.clone()
            } else {
                format!("[{}]", a.name)
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Reads the arguments of `prompt` from `text`.
pub fn parse_arguments(
    prompt: &Prompt,
    text: &str,
) -> Result<BTreeMap<String, String>, CommandError> {
    let declared = prompt.arguments.as_deref().unwrap_or_default();
    let mut values = BTreeMap::new();
    let mut positional = Vec::new();
    for word in split_words(text)? {
        // `key=value` names an argument only when `key` is one; otherwise the `=` is data.
        match word.split_once('=') {
            Some((key, value)) if declared.iter().any(|a| a.name == key) => {
                values.insert(key.to_owned(), value.to_owned());
            }
            _ => positional.push(word),
        }
    }
    let open: Vec<&str> = declared
        .iter()
        .filter(|a| !values.contains_key(&a.name))
        .map(|a| a.name.as_str())
        .collect();
    let mut open = open.into_iter();
    for value in positional {
        match open.next() {
            Some(argument) => {
                values.insert(argument.to_owned(), value);
            }
            None => {
                return Err(CommandError::TooManyValues {
                    prompt: prompt.name.clone(),
                    takes: takes(prompt),
                    value,
                })
            }
        }
    }
    let missing: Vec<String> = declared
        .iter()
        .filter(|a| a.is_required() && !values.contains_key(&a.name))
        .map(|a| a.name.clone())
        .collect();
    if !missing.is_empty() {
        return Err(CommandError::MissingArguments {
            prompt: prompt.name.clone(),
            missing,
            takes: takes(prompt),
        });
    }
    Ok(values)
}

/// Finds `name` among `prompts` of `server`.
pub fn find_prompt<'a>(
    server: &str,
    prompts: &'a [Prompt],
    name: &str,
) -> Result<&'a Prompt, CommandError> {
    prompts
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| CommandError::UnknownPrompt {
            server: server.to_owned(),
            prompt: name.to_owned(),
            offered: if prompts.is_empty() {
                "no prompts".to_owned()
            } else {
                prompts
                    .iter()
                    .map(|p| p.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            },
        })
}

#[cfg(test)]
mod tests {
    use junction_protocol::prompts::PromptArgument;

    use super::*;

    fn forecast() -> Prompt {
        Prompt::new("forecast")
            .argument(PromptArgument::new("city").required())
            .argument(PromptArgument::new("days"))
            .argument(PromptArgument::new("units"))
    }

    #[test]
    fn commands_split_into_server_prompt_and_arguments() {
        assert_eq!(split_command("/a:b").unwrap(), ("a", "b", ""));
        assert_eq!(split_command("  /a:b  x y ").unwrap(), ("a", "b", "x y"));
        assert!(matches!(split_command("a:b"), Err(CommandError::Syntax(_))));
        assert!(matches!(
            split_command("/ab x"),
            Err(CommandError::Syntax(_))
        ));
        assert!(matches!(split_command("/:b"), Err(CommandError::Syntax(_))));
    }

    #[test]
    fn positional_values_fill_declared_arguments_in_order_around_named_ones() {
        let args = parse_arguments(&forecast(), "days=5 Paris metric").unwrap();
        assert_eq!(args["city"], "Paris");
        assert_eq!(args["days"], "5");
        assert_eq!(args["units"], "metric");
    }

    #[test]
    fn quotes_keep_spaces_and_unknown_keys_are_plain_values() {
        let args = parse_arguments(&forecast(), r#""New York" 'a=b' units="de \"g\"""#).unwrap();
        assert_eq!(args["city"], "New York");
        assert_eq!(args["days"], "a=b");
        assert_eq!(args["units"], "de \"g\"");
    }

    #[test]
    fn a_missing_required_argument_is_named() {
        let err = parse_arguments(&forecast(), "days=2").unwrap_err();
        assert_eq!(
            err.to_string(),
            "prompt `forecast` needs city; it takes city [days] [units]"
        );
    }

    #[test]
    fn one_value_too_many_is_refused() {
        let err = parse_arguments(&forecast(), "a b c d").unwrap_err();
        assert!(
            matches!(err, CommandError::TooManyValues { ref value, .. } if value == "d"),
            "{err}"
        );
    }

    #[test]
    fn an_unclosed_quote_is_refused() {
        assert!(matches!(
            split_words("\"open"),
            Err(CommandError::UnclosedQuote(_))
        ));
        assert_eq!(
            split_words("'' x").unwrap(),
            vec!["".to_owned(), "x".to_owned()]
        );
    }

    #[test]
    fn unknown_prompts_list_what_the_server_offers() {
        let prompts = [forecast()];
        let err = find_prompt("weather", &prompts, "nope").unwrap_err();
        assert_eq!(
            err.to_string(),
            "server `weather` has no prompt `nope`; it offers: forecast"
        );
    }
}
