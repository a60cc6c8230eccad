//! Calendar dates in the `YYYY-MM-DD` form the example servers read and write, without a
//! date library: days since 1970-01-01 and back (Howard Hinnant's civil-calendar algorithms).

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

/// A day of the proleptic Gregorian calendar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Date {
    year: i64,
    month: i64,
    day: i64,
}

impl Date {
    /// Parses exactly `YYYY-MM-DD` naming a real day.
    pub fn parse(text: &str) -> Option<Date> {
        let bytes = text.as_bytes();
        if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
            return None;
        }
        let number = |from: usize, to: usize| -> Option<i64> {
            let part = &text[from..to];
            part.bytes()
                .all(|b| b.is_ascii_digit())
                .then(|| part.parse().ok())?
        };
        let date = Date {
            year: number(0, 4)?,
            month: number(5, 7)?,
            day: number(8, 10)?,
        };
        // A day that does not exist (2026-02-30) comes back as another one.
        ((1..=12).contains(&date.month) && Date::from_days(date.days()) == date).then_some(date)
    }

    /// Today, in UTC.
    pub fn today() -> Date {
        let seconds = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Date::from_days(i64::try_from(seconds / 86_400).unwrap_or(0))
    }

    /// The day `n` days later (earlier when negative).
    pub fn plus_days(self, n: i64) -> Date {
        Date::from_days(self.days() + n)
    }

    /// Days since 1970-01-01.
    fn days(self) -> i64 {
        let year = if self.month <= 2 {
            self.year - 1
        } else {
            self.year
        };
        let era = year.div_euclid(400);
        let year_of_era = year - era * 400;
        let month_from_march = (self.month + 9) % 12;
        let day_of_year = (153 * month_from_march + 2) / 5 + self.day - 1;
        let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
        era * 146_097 + day_of_era - 719_468
    }

    fn from_days(days: i64) -> Date {
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let day_of_era = z - era * 146_097;
        let year_of_era =
            (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
        let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
        let mp = (5 * day_of_year + 2) / 153;
        let day = day_of_year - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = year_of_era + era * 400 + i64::from(month <= 2);
        Date { year, month, day }
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_real_days_only_and_prints_them_back() {
        for text in ["2026-11-03", "2024-02-29", "1970-01-01", "2000-12-31"] {
            assert_eq!(
                Date::parse(text).map(|d| d.to_string()).as_deref(),
                Some(text)
            );
        }
        for text in [
            "tomorrow",
            "2026-13-01",
            "2026-02-30",
            "2025-02-29",
            "2026-1-03",
            "2026-11-3 ",
            "+026-11-03",
            "2026/11/03",
        ] {
            assert_eq!(Date::parse(text), None, "{text}");
        }
    }

    #[test]
    fn adds_days_across_months_and_years() {
        let date = Date::parse("2026-12-25").unwrap();
        assert_eq!(date.plus_days(14).to_string(), "2027-01-08");
        assert_eq!(date.plus_days(-25).to_string(), "2026-11-30");
        assert_eq!(Date::from_days(0).to_string(), "1970-01-01");
    }
}
