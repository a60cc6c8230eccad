//! Text from a server made safe to show to a person.
//!
//! Everything a server sends (tool names and descriptions, results, errors, log messages,
//! elicitation text and URLs, stderr lines, its name and version) may hold bytes a terminal
//! acts on: an escape sequence that moves the cursor, erases a line or sets the window
//! title (CSI, OSC, the C1 controls), a carriage return that writes over what was shown, a
//! bell. It may also hold characters nobody sees (zero-width spaces, bidirectional
//! overrides that reorder the text around them, Unicode tag characters). [`line()`],
//! [`text`] and [`name`] turn all of these into visible escapes, so that what the person
//! reads is exactly what the server sent:
//!
//! - C0 controls, DEL and C1 controls appear as `\x1b`, `\r`, `\x9b`, …;
//! - bidirectional controls, zero-width and other invisible format characters appear as
//!   `<U+202E>`;
//! - [`name`] also cuts a very long name (tool, prompt, server) to [`NAME_SHOWN`]
//!   characters; [`exact`] spells out every non-ASCII character of a name, for a name
//!   that looks like another.
//!
//! [`json`] does the same for JSON text, keeping it the same JSON value. A GUI or a CLI
//! calls one of these at every point where server text is rendered.
//!
//! ```
//! use junction_host::display;
//!
//! assert_eq!(display::line("evil\x1b[2K\rlibrary.search"), "evil\\x1b[2K\\rlibrary.search");
//! assert_eq!(display::line("abc\u{202E}fed"), "abc<U+202E>fed");
//! assert_eq!(display::text("two\nlines"), "two\nlines");
//! assert_eq!(display::name(&"x".repeat(200)).chars().count(), display::NAME_SHOWN);
//! ```

use std::fmt::Write as _;

/// How many characters of a name are shown at most.
pub const NAME_SHOWN: usize = 80;

/// Whether `c` is a character that shows nothing by itself or changes how the text around
/// it is shown: zero-width spaces and joiners, bidirectional marks, embeddings, overrides
/// and isolates, invisible operators, the byte order mark, the soft hyphen, the Mongolian
/// vowel separator, interlinear annotation marks and tag characters. Controls are not
/// included (see [`char::is_control`]).
pub fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{00AD}'
        | '\u{034F}'
        | '\u{061C}'
        | '\u{115F}'..='\u{1160}'
        | '\u{17B4}'..='\u{17B5}'
        | '\u{180B}'..='\u{180F}'
        | '\u{200B}'..='\u{200F}'
        | '\u{2028}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}'
        | '\u{3164}'
        | '\u{FE00}'..='\u{FE0F}'
        | '\u{FEFF}'
        | '\u{FFA0}'
        | '\u{FFF9}'..='\u{FFFB}'
        | '\u{1D173}'..='\u{1D17A}'
        | '\u{E0000}'..='\u{E0FFF}'
    )
}

/// Appends `c` as the person should see it; `keep` says which controls pass as they are.
fn push(out: &mut String, c: char, keep: impl Fn(char) -> bool) {
    if keep(c) {
        out.push(c);
        return;
    }
    match c {
        '\r' => out.push_str("\\r"),
        '\n' => out.push_str("\\n"),
        '\t' => out.push_str("\\t"),
        c if c.is_control() => {
            let _ = write!(out, "\\x{:02x}", u32::from(c));
        }
        c if is_invisible(c) => {
            let _ = write!(out, "<U+{:04X}>", u32::from(c));
        }
        c => out.push(c),
    }
}

fn escaped(text: &str, keep: impl Fn(char) -> bool + Copy) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        push(&mut out, c, keep);
    }
    out
}

/// `text` as one line: every control (newlines and tabs too) and every invisible
/// character shown as an escape.
pub fn line(text: &str) -> String {
    escaped(text, |_| false)
}

/// `text` over as many lines as it has: newlines and tabs kept, every other control and
/// every invisible character shown as an escape.
pub fn text(text: &str) -> String {
    escaped(text, |c| c == '\n' || c == '\t')
}

/// A name (of a tool, prompt, resource or server) as one line, cut to [`NAME_SHOWN`]
/// characters with `…` when longer.
pub fn name(text: &str) -> String {
    let shown = line(text);
    if shown.chars().count() <= NAME_SHOWN {
        return shown;
    }
    let mut cut: String = shown.chars().take(NAME_SHOWN - 1).collect();
    cut.push('…');
    cut
}

/// `text` with every character outside printable ASCII written as `\u{…}`: the exact
/// characters of a name that looks like another, e.g. `d\u{435}lete_book`.
pub fn exact(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_graphic() || c == ' ' {
                c.to_string()
            } else {
                c.escape_unicode().to_string()
            }
        })
        .collect()
}

/// JSON text (as `serde_json` writes it) with every control and invisible character that
/// is still raw written as a `\uXXXX` escape: the same JSON value, safe on a terminal.
/// `serde_json` escapes C0 controls already, not DEL, the C1 controls or bidirectional
/// overrides; outside strings JSON holds only ASCII, so each of these is inside a string.
pub fn json(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if (c.is_control() && !matches!(c, '\n' | '\r' | '\t')) || is_invisible(c) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                let _ = write!(out, "\\u{unit:04x}");
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_of_every_kind_are_shown_not_sent() {
        let csi = "a\x1b[2J\x1b[1;1Hb";
        let osc = "\x1b]0;owned\x07";
        let c1 = "x\u{9b}31my";
        for hostile in [csi, osc, c1, "back\x08space", "del\x7f"] {
            let shown = line(hostile);
            assert!(!shown.chars().any(char::is_control), "{shown:?}");
        }
        assert_eq!(line(csi), "a\\x1b[2J\\x1b[1;1Hb");
        assert_eq!(line(osc), "\\x1b]0;owned\\x07");
        assert_eq!(line(c1), "x\\x9b31my");
    }

    #[test]
    fn invisible_and_reordering_characters_are_made_visible() {
        assert_eq!(line("a\u{200B}b"), "a<U+200B>b");
        assert_eq!(line("\u{202E}txt.exe"), "<U+202E>txt.exe");
        assert_eq!(line("\u{2066}x\u{2069}"), "<U+2066>x<U+2069>");
        assert_eq!(line("tag\u{E0041}"), "tag<U+E0041>");
        assert_eq!(line("\u{FEFF}bom"), "<U+FEFF>bom");
    }

    #[test]
    fn lines_keep_nothing_text_keeps_newlines_and_tabs() {
        assert_eq!(line("a\nb\tc\rd"), "a\\nb\\tc\\rd");
        assert_eq!(text("a\nb\tc\rd"), "a\nb\tc\\rd");
        assert_eq!(text("plain words, ünïcödé ✓"), "plain words, ünïcödé ✓");
    }

    #[test]
    fn exact_spells_out_every_non_ascii_character() {
        assert_eq!(exact("d\u{435}lete_book"), "d\\u{435}lete_book");
        assert_eq!(exact("a\u{200b}b\x1b"), "a\\u{200b}b\\u{1b}");
        assert_eq!(exact("plain_name"), "plain_name");
    }

    #[test]
    fn json_keeps_its_value_and_loses_its_raw_controls() {
        let value = serde_json::json!({"t": "a\u{9b}2J\u{202E}b\u{7f}\u{E0041}\u{1b}"});
        let written = serde_json::to_string_pretty(&value).unwrap();
        let shown = json(&written);
        assert!(
            !shown
                .chars()
                .any(|c| is_invisible(c) || (c.is_control() && c != '\n')),
            "{shown:?}"
        );
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&shown).unwrap(),
            value
        );
    }

    #[test]
    fn long_names_are_cut() {
        let shown = name(&"n".repeat(500));
        assert_eq!(shown.chars().count(), NAME_SHOWN);
        assert!(shown.ends_with('…'));
        assert_eq!(name("search"), "search");
    }
}
