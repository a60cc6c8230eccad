//! The string formats a form field may ask for (`email`, `uri`, `date`, `date-time`),
//! checked as the person types, so that a bad answer is asked again with the reason rather
//! than sent to a server that refuses it.
//!
//! The checks follow the formats' definitions closely enough to catch what people mistype
//! (a missing `@`, a path without a scheme, 2025-02-30, a time without its offset); they do
//! not try to decide whether an address exists. An unknown format is not checked.

use junction_protocol::elicitation::StringFormat;

/// `Ok` when `text` is in `format`, else why not, as a sentence for the person.
pub fn check(format: &StringFormat, text: &str) -> Result<(), String> {
    let (valid, hint) = match format {
        StringFormat::Email => (
            email(text),
            "must be an email address, like name@example.com",
        ),
        StringFormat::Uri => (
            uri(text),
            "must be a URI with its scheme, like https://example.com/page",
        ),
        StringFormat::Date => (date(text), "must be a date as YYYY-MM-DD, like 2025-11-25"),
        StringFormat::DateTime => (
            date_time(text),
            "must be a date and time with its offset, like 2025-11-25T14:30:00Z",
        ),
        // A format this client does not know: the server checks it.
        _ => return Ok(()),
    };
    if valid {
        Ok(())
    } else {
        Err(hint.to_owned())
    }
}

/// `local@domain`: one `@`, no spaces, a domain of dot-separated labels with at least one
/// dot.
fn email(text: &str) -> bool {
    let Some((local, domain)) = text.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && !text.chars().any(char::is_whitespace)
        && !domain.contains('@')
        && domain.contains('.')
        && domain.split('.').all(|label| {
            !label.is_empty()
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label.chars().all(|c| c.is_alphanumeric() || c == '-')
        })
}

/// RFC 3986: a scheme (a letter, then letters, digits, `+`, `-`, `.`), a colon, and more,
/// with no spaces or controls.
fn uri(text: &str) -> bool {
    let Some((scheme, rest)) = text.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        && !rest.is_empty()
        && !text.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// `full-date` of RFC 3339: `YYYY-MM-DD`, a day the month has.
fn date(text: &str) -> bool {
    let bytes = text.as_bytes();
    if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
        return false;
    }
    let (Some(year), Some(month), Some(day)) =
        (number(&text[..4]), number(&text[5..7]), number(&text[8..]))
    else {
        return false;
    };
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// `date-time` of RFC 3339: a date, `T`, `hh:mm:ss`, optional fractions, and `Z` or an
/// offset `±hh:mm`.
fn date_time(text: &str) -> bool {
    let Some((day, time)) = text.split_once(['T', 't']) else {
        return false;
    };
    if !date(day) {
        return false;
    }
    let (clock, offset) = match time.find(['Z', 'z', '+', '-']) {
        Some(at) => time.split_at(at),
        None => return false,
    };
    let clock = match clock.split_once('.') {
        Some((whole, fraction)) => {
            if fraction.is_empty() || !fraction.bytes().all(|b| b.is_ascii_digit()) {
                return false;
            }
            whole
        }
        None => clock,
    };
    let offset_ok = match offset {
        "Z" | "z" => true,
        _ => hours_minutes(&offset[1..], 23),
    };
    offset_ok && clock.len() == 8 && clock.as_bytes()[5] == b':' && {
        // A leap second (60) is allowed, as RFC 3339 allows it.
        hours_minutes(&clock[..5], 23) && number(&clock[6..]).is_some_and(|s| s <= 60)
    }
}

/// `hh:mm` with hours at most `max_hours`.
fn hours_minutes(text: &str, max_hours: u32) -> bool {
    text.len() == 5
        && text.as_bytes()[2] == b':'
        && number(&text[..2]).is_some_and(|h| h <= max_hours)
        && number(&text[3..]).is_some_and(|m| m <= 59)
}

/// Digits only, as a number.
fn number(text: &str) -> Option<u32> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emails_need_a_local_part_an_at_and_a_dotted_domain() {
        for good in [
            "ada@example.com",
            "a.b+c@mail.example.org",
            "zoë@exämple.de",
        ] {
            assert!(check(&StringFormat::Email, good).is_ok(), "{good}");
        }
        for bad in [
            "ada",
            "ada@",
            "@example.com",
            "ada@example",
            "ada@@example.com",
            "a da@example.com",
            "ada@exa_mple.com",
            "ada@.example.com",
        ] {
            let why = check(&StringFormat::Email, bad).unwrap_err();
            assert!(why.contains("email address"), "{bad}: {why}");
        }
    }

    #[test]
    fn uris_need_a_scheme() {
        for good in [
            "https://example.com/a?b=c",
            "mailto:ada@example.com",
            "urn:isbn:0451450523",
        ] {
            assert!(check(&StringFormat::Uri, good).is_ok(), "{good}");
        }
        for bad in [
            "example.com",
            "/tmp/file",
            "1http://x",
            "https://exa mple.com",
            "https:",
        ] {
            assert!(check(&StringFormat::Uri, bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn dates_are_real_days() {
        for good in ["2025-11-25", "2024-02-29", "2000-02-29"] {
            assert!(check(&StringFormat::Date, good).is_ok(), "{good}");
        }
        for bad in [
            "2025-02-29",
            "1900-02-29",
            "2025-13-01",
            "2025-04-31",
            "25-11-25",
            "2025/11/25",
            "2025-11-25T",
        ] {
            assert!(check(&StringFormat::Date, bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn date_times_need_a_time_and_an_offset() {
        for good in [
            "2025-11-25T14:30:00Z",
            "2025-11-25t14:30:00.123+02:00",
            "2016-12-31T23:59:60-05:30",
        ] {
            assert!(check(&StringFormat::DateTime, good).is_ok(), "{good}");
        }
        for bad in [
            "2025-11-25",
            "2025-11-25T14:30:00",
            "2025-11-25T24:00:00Z",
            "2025-11-25T14:30Z",
            "2025-11-25T14:30:00.Z",
            "2025-11-25T14:30:00+2:00",
            "2025-02-30T10:00:00Z",
        ] {
            let why = check(&StringFormat::DateTime, bad).unwrap_err();
            assert!(why.contains("with its offset"), "{bad}: {why}");
        }
    }

    #[test]
    fn unknown_formats_are_not_checked() {
        assert!(check(&StringFormat::Other("color".into()), "anything").is_ok());
    }
}
