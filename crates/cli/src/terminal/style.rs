//! Colour for terminal output: on only when stdout is a terminal and `NO_COLOR` is unset
//! (<https://no-color.org>: any non-empty value turns colour off).

use std::io::IsTerminal;

/// A colour or weight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paint {
    /// Headings and names.
    Bold,
    /// Secondary detail: logs, stderr tails.
    Dim,
    /// Failures and refusals.
    Red,
    /// Success.
    Green,
    /// Questions that wait on the person.
    Yellow,
    /// The model's words.
    Cyan,
    /// Emphasis in the model's Markdown.
    Italic,
    /// Link text in the model's Markdown.
    Underline,
}

impl Paint {
    fn code(self) -> &'static str {
        match self {
            Paint::Bold => "1",
            Paint::Dim => "2",
            Paint::Red => "31",
            Paint::Green => "32",
            Paint::Yellow => "33",
            Paint::Cyan => "36",
            Paint::Italic => "3",
            Paint::Underline => "4",
        }
    }
}

/// Whether output is coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    colour: bool,
}

impl Style {
    /// Colour when stdout is a terminal and `NO_COLOR` is unset or empty.
    pub fn detect() -> Self {
        Style::detect_on(&std::io::stdout())
    }

    /// Colour when `stream` is a terminal and `NO_COLOR` is unset or empty.
    pub fn detect_on(stream: &impl IsTerminal) -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Style {
            colour: stream.is_terminal() && !no_color,
        }
    }

    /// No colour.
    #[cfg(test)]
    pub fn plain() -> Self {
        Style { colour: false }
    }

    /// Colour always.
    #[cfg(test)]
    pub fn coloured() -> Self {
        Style { colour: true }
    }

    /// `text` in every one of `paints` at once, or as it is without colour.
    pub fn paint_all(self, paints: &[Paint], text: &str) -> String {
        if self.colour && !paints.is_empty() {
            let codes: Vec<&str> = paints.iter().map(|p| p.code()).collect();
            format!("\x1b[{}m{text}\x1b[0m", codes.join(";"))
        } else {
            text.to_owned()
        }
    }

    /// `text` in `paint`, or as it is without colour.
    pub fn paint(self, paint: Paint, text: &str) -> String {
        if self.colour {
            format!("\x1b[{}m{text}\x1b[0m", paint.code())
        } else {
            text.to_owned()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_output_has_no_escape_codes_and_coloured_output_resets() {
        assert_eq!(Style::plain().paint(Paint::Red, "no"), "no");
        assert_eq!(
            Style::coloured().paint(Paint::Red, "no"),
            "\x1b[31mno\x1b[0m"
        );
    }
}
