//! The model's Markdown, rendered for the terminal one finished line at a time.
//!
//! Streamed text arrives in pieces that cut words and markers anywhere, and a line that has
//! been written cannot be taken back. So [`Markdown`] keeps the unfinished last line to
//! itself and renders a line only once its newline has come ([`Markdown::push`]); the rest
//! is rendered when the answer ends ([`Markdown::finish`]). What spans lines (a fenced code
//! block) is a state carried from line to line, never a re-rendering.
//!
//! What is rendered: ATX headings (`# ...`) in bold, `**bold**` / `__bold__`, `*emphasis*` /
//! `_emphasis_` (not inside `snake_case` words), `` `code` `` and fenced code blocks (in
//! green, indented, nothing inside interpreted), bullet and numbered lists (`•`), block
//! quotes (`│`), rules, and links as their text followed by the URL in brackets, so the
//! address is always seen. Without colour the markers are still removed.
//!
//! The text must already be safe to show ([`junction_host::display::text`]): the only escape
//! sequences in the output are the ones added here.

use super::style::{Paint, Style};

/// A renderer for one answer after another.
#[derive(Debug)]
pub struct Markdown {
    style: Style,
    /// The unfinished last line.
    pending: String,
    /// The fence (```` ``` ```` or `~~~`) of the code block being shown, if any.
    fence: Option<&'static str>,
}

impl Markdown {
    /// A renderer painting with `style` (the model's words in cyan, as unrendered text is).
    pub fn new(style: Style) -> Self {
        Markdown {
            style,
            pending: String::new(),
            fence: None,
        }
    }

    /// Takes the next piece of an answer; returns the lines it finished, rendered, without
    /// their newlines.
    pub fn push(&mut self, piece: &str) -> Vec<String> {
        self.pending.push_str(piece);
        let mut lines = Vec::new();
        while let Some(end) = self.pending.find('\n') {
            let line: String = self.pending.drain(..=end).collect();
            if let Some(shown) = self.line(line.trim_end_matches(['\n', '\r'])) {
                lines.push(shown);
            }
        }
        lines
    }

    /// Ends the answer: its unfinished last line rendered (if any). The next text starts
    /// outside any code block.
    pub fn finish(&mut self) -> Vec<String> {
        let rest = std::mem::take(&mut self.pending);
        let shown = if rest.is_empty() {
            None
        } else {
            self.line(&rest)
        };
        self.fence = None;
        shown.into_iter().collect()
    }

    /// One line, or `None` for a line that only marks something (a code fence).
    fn line(&mut self, line: &str) -> Option<String> {
        let trimmed = line.trim_start();
        if let Some(fence) = self.fence {
            if trimmed.starts_with(fence) && trimmed[fence.len()..].trim().is_empty() {
                self.fence = None;
                return None;
            }
            return Some(format!("    {}", self.paint(&[Paint::Green], line)));
        }
        for fence in ["```", "~~~"] {
            if let Some(language) = trimmed.strip_prefix(fence) {
                self.fence = Some(fence);
                let language = language.trim();
                return (!language.is_empty()).then(|| self.paint(&[Paint::Dim], language));
            }
        }
        let indent = &line[..line.len() - trimmed.len()];
        if let Some(title) = heading(trimmed) {
            return Some(self.inline(title, &[Paint::Bold, Paint::Cyan]));
        }
        if is_rule(trimmed) {
            return Some(self.paint(&[Paint::Dim], "────────────────────────"));
        }
        if let Some(quoted) = trimmed.strip_prefix('>') {
            let quoted = quoted.strip_prefix(' ').unwrap_or(quoted);
            return Some(format!(
                "{indent}{} {}",
                self.paint(&[Paint::Dim], "│"),
                self.inline(quoted, &[Paint::Cyan])
            ));
        }
        if let Some(item) = ["- ", "* ", "+ "]
            .iter()
            .find_map(|bullet| trimmed.strip_prefix(bullet))
        {
            return Some(format!("{indent}• {}", self.inline(item, &[Paint::Cyan])));
        }
        if let Some((number, item)) = numbered(trimmed) {
            return Some(format!(
                "{indent}{number} {}",
                self.inline(item, &[Paint::Cyan])
            ));
        }
        Some(format!("{indent}{}", self.inline(trimmed, &[Paint::Cyan])))
    }

    fn paint(&self, paints: &[Paint], text: &str) -> String {
        self.style.paint_all(paints, text)
    }

    /// Inline markup in `text`, everything painted `paints` plus what the markup adds.
    fn inline(&self, text: &str, paints: &[Paint]) -> String {
        let mut out = String::new();
        let mut plain = String::new();
        let mut previous: Option<char> = None;
        let mut rest = text;
        let with = |extra: Paint| -> Vec<Paint> {
            let mut all = paints.to_vec();
            all.push(extra);
            all
        };
        while let Some(c) = rest.chars().next() {
            let word_before = previous.is_some_and(is_word);
            if let Some((inner, after)) = code_span(rest) {
                self.flush(&mut plain, paints, &mut out);
                out.push_str(&self.paint(&with(Paint::Green), inner));
                (rest, previous) = (after, Some('`'));
                continue;
            }
            if let Some((inner, after)) = strong(rest, word_before) {
                self.flush(&mut plain, paints, &mut out);
                out.push_str(&self.inline(inner, &with(Paint::Bold)));
                (rest, previous) = (after, Some('*'));
                continue;
            }
            if let Some((inner, after)) = emphasis(rest, word_before) {
                self.flush(&mut plain, paints, &mut out);
                out.push_str(&self.inline(inner, &with(Paint::Italic)));
                (rest, previous) = (after, Some('*'));
                continue;
            }
            if let Some((label, url, after)) = link(rest) {
                self.flush(&mut plain, paints, &mut out);
                out.push_str(&self.inline(label, &with(Paint::Underline)));
                out.push_str(&self.paint(&[Paint::Dim], &format!(" ({url})")));
                (rest, previous) = (after, Some(')'));
                continue;
            }
            plain.push(c);
            previous = Some(c);
            rest = &rest[c.len_utf8()..];
        }
        self.flush(&mut plain, paints, &mut out);
        out
    }

    fn flush(&self, plain: &mut String, paints: &[Paint], out: &mut String) {
        if !plain.is_empty() {
            out.push_str(&self.paint(paints, plain));
            plain.clear();
        }
    }
}

/// A character of a word, for underscores: `snake_case` stays as it is.
fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The title of an ATX heading (`#` to `######`, then a space).
fn heading(line: &str) -> Option<&str> {
    let hashes = line.len() - line.trim_start_matches('#').len();
    if !(1..=6).contains(&hashes) {
        return None;
    }
    let title = line[hashes..].strip_prefix(' ')?;
    Some(title.trim().trim_end_matches('#').trim_end())
}

/// `---`, `***` or `___` (three or more, spaces allowed between).
fn is_rule(line: &str) -> bool {
    let marks: String = line.chars().filter(|c| !c.is_whitespace()).collect();
    marks.len() >= 3
        && ['-', '*', '_']
            .iter()
            .any(|m| marks.chars().all(|c| c == *m))
}

/// `12. item` or `12) item`: the number with its mark, and the item.
fn numbered(line: &str) -> Option<(&str, &str)> {
    let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 || digits > 9 {
        return None;
    }
    let after = &line[digits..];
    let item = after
        .strip_prefix(". ")
        .or_else(|| after.strip_prefix(") "))?;
    Some((&line[..digits + 1], item))
}

/// `` `code` ``: what is inside, and what follows.
fn code_span(text: &str) -> Option<(&str, &str)> {
    let inner = text.strip_prefix('`')?;
    let end = inner.find('`').filter(|&e| e > 0)?;
    Some((&inner[..end], &inner[end + 1..]))
}

/// `**strong**` or `__strong__` (the underscores not inside a word).
fn strong(text: &str, word_before: bool) -> Option<(&str, &str)> {
    let marker = ["**", "__"].into_iter().find(|m| text.starts_with(m))?;
    if marker == "__" && word_before {
        return None;
    }
    delimited(&text[2..], marker)
}

/// `*emphasis*` or `_emphasis_` (the underscores not inside a word).
fn emphasis(text: &str, word_before: bool) -> Option<(&str, &str)> {
    let marker = ["*", "_"].into_iter().find(|m| text.starts_with(m))?;
    if marker == "_" && word_before {
        return None;
    }
    delimited(&text[1..], marker)
}

/// The text up to the closing `marker`, which must hug it (no space just inside), and, for
/// underscores, not be followed by a letter or digit.
fn delimited<'a>(text: &'a str, marker: &str) -> Option<(&'a str, &'a str)> {
    if text.starts_with(char::is_whitespace) {
        return None;
    }
    let end = text.find(marker).filter(|&e| e > 0)?;
    let inner = &text[..end];
    let after = &text[end + marker.len()..];
    if inner.ends_with(char::is_whitespace)
        || (marker.starts_with('_') && after.starts_with(is_word))
    {
        return None;
    }
    Some((inner, after))
}

/// `[label](url)`: the label, the URL and what follows.
fn link(text: &str) -> Option<(&str, &str, &str)> {
    let rest = text.strip_prefix('[')?;
    let close = rest.find("](")?;
    let label = &rest[..close];
    if label.is_empty() || label.contains(['[', ']']) {
        return None;
    }
    let target = &rest[close + 2..];
    let end = target.find(')')?;
    let url = &target[..end];
    if url.is_empty() || url.contains(char::is_whitespace) {
        return None;
    }
    Some((label, url, &target[end + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(text: &str) -> Vec<String> {
        let mut md = Markdown::new(Style::plain());
        let mut lines = md.push(text);
        lines.extend(md.finish());
        lines
    }

    #[test]
    fn markers_are_removed_and_links_show_their_url() {
        assert_eq!(
            plain("# Title\nSome **bold**, *em*, _also em_ and `code`.\nSee [the docs](https://x.dev/a)."),
            [
                "Title",
                "Some bold, em, also em and code.",
                "See the docs (https://x.dev/a)."
            ]
        );
    }

    #[test]
    fn lists_quotes_rules_and_code_blocks() {
        assert_eq!(
            plain("- one\n  * two\n3. three\n> quoted\n---\n```rust\nlet **x** = 1;\n```\nafter"),
            [
                "• one",
                "  • two",
                "3. three",
                "│ quoted",
                "────────────────────────",
                "rust",
                "    let **x** = 1;",
                "after"
            ]
        );
    }

    #[test]
    fn what_is_not_markup_is_left_as_it_is() {
        assert_eq!(
            plain("snake_case_name and 2 * 3 * 4, a ** b, [not a link] (x), #hashtag, __init__x"),
            ["snake_case_name and 2 * 3 * 4, a ** b, [not a link] (x), #hashtag, __init__x"]
        );
    }

    #[test]
    fn streamed_pieces_render_each_line_once_it_is_finished() {
        let mut md = Markdown::new(Style::plain());
        assert!(
            md.push("Some **bo").is_empty(),
            "nothing before the newline"
        );
        assert_eq!(md.push("ld** text\n- it"), ["Some bold text"]);
        assert_eq!(md.push("em\n```\ncode *x*"), ["• item"]);
        // The block is still open at the end; the next answer starts outside it.
        assert_eq!(md.finish(), ["    code *x*"]);
        assert_eq!(md.push("*em*\n"), ["em"]);
    }

    #[test]
    fn colour_is_added_around_the_marked_text_only() {
        let mut md = Markdown::new(Style::coloured());
        assert_eq!(
            md.push("a **b** [c](u)\n"),
            ["\x1b[36ma \x1b[0m\x1b[36;1mb\x1b[0m\x1b[36m \x1b[0m\x1b[36;4mc\x1b[0m\x1b[2m (u)\x1b[0m"]
        );
    }
}
