//! Running the rounds, and what comes out: the markdown tables and the JSON.

use serde_json::{json, Value};

use crate::subject::Subject;
use crate::workload::Workload;
use crate::Config;

/// The figures of one run of one workload against one subject.
#[derive(Debug)]
pub struct Run {
    /// The workload's name.
    pub workload: String,
    /// The subject's name.
    pub subject: String,
    /// Which round (from 0).
    pub round: usize,
    /// The figures, or why the run failed.
    pub result: Result<Figures, String>,
}

/// What a run measured.
#[derive(Debug, Default)]
pub struct Figures {
    /// Answers per second (throughput workloads).
    pub rate: Option<f64>,
    /// Median latency, µs.
    pub p50_us: Option<f64>,
    /// 99th-percentile latency, µs.
    pub p99_us: Option<f64>,
    /// Calls answered with the right echo.
    pub matched: u64,
    /// Calls answered otherwise.
    pub mismatched: u64,
    /// The first mismatch.
    pub first_error: Option<String>,
    /// Other figures by name.
    pub extra: Vec<(&'static str, f64)>,
}

/// Every round: each workload against each subject in turn (A, B, C, ... then again).
pub async fn run_all(subjects: &[Subject], workloads: &[Workload], config: &Config) -> Vec<Run> {
    let mut runs = Vec::new();
    for round in 0..config.rounds {
        for &workload in workloads {
            for subject in subjects {
                if workload.skip_reason(subject).is_some() {
                    continue;
                }
                let result = match workload.run(subject, config).await {
                    Ok(outcome) => {
                        let mut figures = Figures {
                            extra: outcome.figures,
                            ..Figures::default()
                        };
                        if let Some(mut sample) = outcome.sample {
                            figures.rate = Some(sample.rate());
                            figures.p50_us = Some(sample.quantile_us(0.5));
                            figures.p99_us = Some(sample.quantile_us(0.99));
                            figures.matched = sample.matched;
                            figures.mismatched = sample.mismatched;
                            figures.first_error = sample.first_error;
                        }
                        Ok(figures)
                    }
                    Err(e) => Err(format!("{e:#}")),
                };
                eprintln!(
                    "round {} {:<22} {:<14} {}",
                    round + 1,
                    workload.name(),
                    subject.name,
                    line(&result)
                );
                runs.push(Run {
                    workload: workload.name(),
                    subject: subject.name.clone(),
                    round,
                    result,
                });
            }
        }
    }
    runs
}

fn line(result: &Result<Figures, String>) -> String {
    match result {
        Err(e) => format!("FAILED: {e}"),
        Ok(f) => {
            let mut text = String::new();
            if let (Some(rate), Some(p50), Some(p99)) = (f.rate, f.p50_us, f.p99_us) {
                text.push_str(&format!(
                    "{rate:.0} req/s p50 {p50:.1} µs p99 {p99:.1} µs ({} ok, {} bad)",
                    f.matched, f.mismatched
                ));
            }
            for (name, value) in &f.extra {
                text.push_str(&format!(" {name}={value:.1}"));
            }
            text
        }
    }
}

/// The median over rounds of one figure of `workload` × `subject`.
fn median_of(
    runs: &[Run],
    workload: &str,
    subject: &str,
    pick: impl Fn(&Figures) -> Option<f64>,
) -> Option<f64> {
    let mut values: Vec<f64> = runs
        .iter()
        .filter(|r| r.workload == workload && r.subject == subject)
        .filter_map(|r| r.result.as_ref().ok().and_then(&pick))
        .collect();
    crate::stats::median(&mut values)
}

fn extra(name: &'static str) -> impl Fn(&Figures) -> Option<f64> {
    move |f: &Figures| f.extra.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
}

fn rate(value: f64) -> String {
    if value >= 10_000.0 {
        format!("{:.0}k", value / 1000.0)
    } else if value >= 1000.0 {
        format!("{:.1}k", value / 1000.0)
    } else {
        format!("{value:.0}")
    }
}

/// Prints the tables to stdout.
pub fn print(runs: &[Run], subjects: &[Subject], workloads: &[Workload]) {
    let raw = subjects
        .iter()
        .find(|s| s.is_raw())
        .map(|s| s.name.as_str());
    println!("| workload | subject | req/s | p50 µs | p99 µs | × junction | × raw |");
    println!("|---|---|---:|---:|---:|---:|---:|");
    for workload in workloads.iter().map(|w| w.name()) {
        let junction = median_of(runs, &workload, "junction", |f| f.rate);
        let limit = raw.and_then(|raw| median_of(runs, &workload, raw, |f| f.rate));
        for subject in subjects {
            let Some(r) = median_of(runs, &workload, &subject.name, |f| f.rate) else {
                if runs.iter().any(|run| {
                    run.workload == workload && run.subject == subject.name && run.result.is_err()
                }) {
                    println!("| {workload} | {} | failed | | | | |", subject.name);
                }
                continue;
            };
            let p50 = median_of(runs, &workload, &subject.name, |f| f.p50_us).unwrap_or(0.0);
            let p99 = median_of(runs, &workload, &subject.name, |f| f.p99_us).unwrap_or(0.0);
            let ratio =
                |base: Option<f64>| base.map(|b| format!("{:.2}", r / b)).unwrap_or_default();
            println!(
                "| {workload} | {} | {} | {p50:.0} | {p99:.0} | {} | {} |",
                subject.name,
                rate(r),
                ratio(junction),
                ratio(limit)
            );
        }
    }
    println!();
    print_matrix(runs, subjects, workloads);
    println!();
    println!("| subject | stdio RSS idle MiB | stdio RSS after load MiB | idle HTTP session KiB | cold start ms |");
    println!("|---|---:|---:|---:|---:|");
    let cell = |v: Option<f64>, scale: f64, digits: usize| {
        v.map(|v| format!("{:.*}", digits, v / scale))
            .unwrap_or_else(|| "–".to_owned())
    };
    for subject in subjects {
        let n = subject.name.as_str();
        println!(
            "| {n} | {} | {} | {} | {} |",
            cell(
                median_of(runs, "stdio-c32", n, extra("rss_idle_kib")),
                1024.0,
                1
            ),
            cell(
                median_of(runs, "stdio-c32", n, extra("rss_after_kib")),
                1024.0,
                1
            ),
            cell(
                median_of(runs, "http-idle-session", n, extra("kib_per_session")),
                1.0,
                1
            ),
            cell(
                median_of(runs, "cold-start", n, extra("cold_start_ms")),
                1.0,
                1
            ),
        );
    }
    let failed: Vec<&Run> = runs.iter().filter(|r| r.result.is_err()).collect();
    if !failed.is_empty() {
        println!();
        for run in failed {
            if let Err(e) = &run.result {
                println!(
                    "- failed: {} / {} (round {}): {e}",
                    run.workload,
                    run.subject,
                    run.round + 1
                );
            }
        }
    }
}

/// req/s of every workload (rows) and subject (columns), with the ratio to Junction.
fn print_matrix(runs: &[Run], subjects: &[Subject], workloads: &[Workload]) {
    let names: Vec<&str> = subjects.iter().map(|s| s.name.as_str()).collect();
    println!("| req/s (× junction) | {} |", names.join(" | "));
    println!("|---|{}", "---:|".repeat(names.len()));
    for workload in workloads.iter().map(|w| w.name()) {
        let junction = median_of(runs, &workload, "junction", |f| f.rate);
        let cells: Vec<String> = names
            .iter()
            .map(
                |name| match (median_of(runs, &workload, name, |f| f.rate), junction) {
                    (Some(r), Some(j)) => format!("{} ({:.2})", rate(r), r / j),
                    (Some(r), None) => rate(r),
                    (None, _) => "–".to_owned(),
                },
            )
            .collect();
        if cells.iter().any(|c| c != "–") {
            println!("| {workload} | {} |", cells.join(" | "));
        }
    }
}

/// Every run and every median as JSON.
pub fn json(runs: &[Run], config: &Config, load_at_start: &str) -> Value {
    let runs_json: Vec<Value> = runs
        .iter()
        .map(|r| {
            let figures = match &r.result {
                Ok(f) => json!({
                    "req_per_s": f.rate, "p50_us": f.p50_us, "p99_us": f.p99_us,
                    "matched": f.matched, "mismatched": f.mismatched, "first_error": f.first_error,
                    "figures": f.extra.iter().map(|(n, v)| (n.to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
                }),
                Err(e) => json!({ "error": e }),
            };
            json!({ "workload": r.workload, "subject": r.subject, "round": r.round + 1, "result": figures })
        })
        .collect();
    let mut pairs: Vec<(String, String)> = runs
        .iter()
        .map(|r| (r.workload.clone(), r.subject.clone()))
        .collect();
    pairs.sort();
    pairs.dedup();
    let medians: Vec<Value> = pairs
        .iter()
        .map(|(w, s)| {
            let names: Vec<&'static str> = runs
                .iter()
                .filter(|r| &r.workload == w && &r.subject == s)
                .filter_map(|r| r.result.as_ref().ok())
                .flat_map(|f| f.extra.iter().map(|(n, _)| *n))
                .collect();
            let mut figures = serde_json::Map::new();
            for name in names {
                figures.insert(name.to_owned(), json!(median_of(runs, w, s, extra(name))));
            }
            json!({
                "workload": w, "subject": s,
                "req_per_s": median_of(runs, w, s, |f| f.rate),
                "p50_us": median_of(runs, w, s, |f| f.p50_us),
                "p99_us": median_of(runs, w, s, |f| f.p99_us),
                "figures": figures,
            })
        })
        .collect();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    json!({
        "config": {
            "rounds": config.rounds,
            "warm_s": config.warm.time.as_secs_f64(),
            "measure_s": config.measure.time.as_secs_f64(),
            "idle_sessions": config.idle_sessions,
            "cold_starts": config.cold_starts,
        },
        "machine": {
            "cpus": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
            "loadavg_at_start": load_at_start.trim(),
            "loadavg_at_end": load.trim(),
        },
        "medians": medians,
        "runs": runs_json,
    })
}

/// Runs that failed or had an answer that did not match, one line each.
pub fn failures(runs: &[Run]) -> Vec<String> {
    runs.iter()
        .filter_map(|r| match &r.result {
            Err(e) => Some(format!("{} / {}: {e}", r.workload, r.subject)),
            Ok(f) if f.mismatched > 0 => Some(format!(
                "{} / {}: {} of {} answers did not match; first: {}",
                r.workload,
                r.subject,
                f.mismatched,
                f.matched + f.mismatched,
                f.first_error.as_deref().unwrap_or("?")
            )),
            Ok(f) if f.rate.is_some() && f.matched == 0 => {
                Some(format!("{} / {}: no calls answered", r.workload, r.subject))
            }
            Ok(_) => None,
        })
        .collect()
}
