//! The canonical form of a tool name, so that a look-alike cannot dodge a rule.
//!
//! A server chooses its tool names. One that wants to run a tool the user denied can offer
//! it as `Delete_Book`, `ｄｅｌｅｔｅ_book` (full-width), `dеlete_book` (a Cyrillic `е`),
//! `delete\u{200B}_book` (a zero-width space) and so on: each looks like the denied name
//! and none is equal to it. Rules and remembered answers therefore compare
//! [`canonical`] forms: invisible characters and controls removed, NFKC-normalised,
//! lower-cased, and each character replaced by its prototype in the Unicode confusables
//! table (UTS #39 skeleton), lower-cased again.
//!
//! [`is_disguised`] says whether a name leaves the set the specification recommends for
//! tool names (ASCII letters, digits, `_`, `-`, `.`): such a name is flagged to the user
//! and never allowed without asking.
//!
//! ```
//! use junction_host::policy::canonical::{canonical, is_disguised};
//!
//! assert_eq!(canonical("dеlete_Book"), canonical("delete_book")); // Cyrillic е
//! assert!(is_disguised("dеlete_book"));
//! assert!(!is_disguised("delete_book"));
//! ```

use unicode_normalization::UnicodeNormalization;
use unicode_security::confusable_detection::skeleton;

use crate::display::is_invisible;

/// `name` with invisible characters and controls removed, NFKC-normalised, case-folded
/// and confusables mapped to their prototypes.
pub fn canonical(name: &str) -> String {
    let visible: String = name
        .chars()
        .filter(|&c| !c.is_control() && !is_invisible(c))
        .collect();
    let folded = visible.nfkc().collect::<String>().to_lowercase();
    skeleton(&folded).collect::<String>().to_lowercase()
}

/// Whether `name` holds a character outside ASCII letters, digits, `_`, `-` and `.`, the
/// characters the specification says tool names should be made of.
pub fn is_disguised(name: &str) -> bool {
    !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seven ways to write `delete_book` so that it looks the same or nearly.
    pub(crate) const LOOK_ALIKES: [&str; 7] = [
        "Delete_Book",
        "ｄｅｌｅｔｅ_ｂｏｏｋ",
        "d\u{0435}lete_book",
        "delete\u{200B}_book",
        "de1ete_book",
        "delete_boo\u{212A}",
        "\u{217E}elete_book",
    ];

    #[test]
    fn every_look_alike_has_the_canonical_form_of_the_original() {
        let original = canonical("delete_book");
        for name in LOOK_ALIKES {
            assert_eq!(canonical(name), original, "{name:?}");
        }
        assert_ne!(canonical("delete_books"), original);
        assert_ne!(canonical("add_book"), original);
    }

    #[test]
    fn names_outside_the_recommended_characters_are_flagged() {
        for name in LOOK_ALIKES.iter().filter(|n| !n.is_ascii()) {
            assert!(is_disguised(name), "{name:?}");
        }
        assert!(is_disguised("search\u{1b}[2K"));
        assert!(!is_disguised("library.search-v2_x"));
    }
}
