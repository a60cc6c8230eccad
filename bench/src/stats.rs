//! What one run measured, and the medians a table is built from.

use std::time::Duration;

/// The calls of one run: how many, how long, their latencies, and whether each matched.
#[derive(Debug, Default)]
pub struct Sample {
    /// Calls answered with the right echo.
    pub matched: u64,
    /// Calls answered with anything else (an error, another text).
    pub mismatched: u64,
    /// The first mismatch, to show why.
    pub first_error: Option<String>,
    /// Wall time from the first call sent to the last answer.
    pub elapsed: Duration,
    /// Each answered call's latency, in nanoseconds.
    pub latencies: Vec<u64>,
}

impl Sample {
    /// Records one answer.
    pub fn answer(&mut self, latency: Duration, matched: bool, error: impl FnOnce() -> String) {
        self.latencies.push(latency.as_nanos() as u64);
        if matched {
            self.matched += 1;
        } else {
            self.mismatched += 1;
            if self.first_error.is_none() {
                self.first_error = Some(error());
            }
        }
    }

    /// Folds the sample of a concurrent worker into this one (elapsed: the longest).
    pub fn merge(&mut self, other: Sample) {
        self.matched += other.matched;
        self.mismatched += other.mismatched;
        if self.first_error.is_none() {
            self.first_error = other.first_error;
        }
        self.elapsed = self.elapsed.max(other.elapsed);
        self.latencies.extend(other.latencies);
    }

    /// Answers per second.
    pub fn rate(&self) -> f64 {
        let calls = (self.matched + self.mismatched) as f64;
        calls / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// The `q` quantile of the latencies in microseconds (0 when there were none).
    pub fn quantile_us(&mut self, q: f64) -> f64 {
        if self.latencies.is_empty() {
            return 0.0;
        }
        self.latencies.sort_unstable();
        let at = ((self.latencies.len() - 1) as f64 * q).round() as usize;
        self.latencies[at] as f64 / 1000.0
    }
}

/// The median of some figures (the mean of the middle two for an even count).
pub fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    Some(if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_three_is_the_middle_one() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&mut [4.0, 1.0]), Some(2.5));
        assert_eq!(median(&mut []), None);
    }

    #[test]
    fn quantiles_come_from_the_sorted_latencies() {
        let mut sample = Sample {
            latencies: (1..=100).map(|us| us * 1000).collect(),
            ..Sample::default()
        };
        assert_eq!(sample.quantile_us(0.5), 51.0);
        assert_eq!(sample.quantile_us(0.99), 99.0);
    }
}
