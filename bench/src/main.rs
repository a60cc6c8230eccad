//! junction-bench: one Rust load generator run against Junction, rmcp, the TypeScript SDK,
//! the Python SDK (MCPServer, the FastMCP of mcp 2.x, and the low-level server) and a raw
//! echo that answers the same frames without MCP logic. Every subject serves the same `echo`
//! tool; every answer is checked. See bench/README.md.
//!
//! ```text
//! cargo run --release -p junction-bench -- run [--quick] [--only NAMES] [--out results.json]
//! cargo run -p junction-bench -- smoke          # a few hundred calls per Junction workload
//! cargo run -p junction-bench -- frames [--calls N] [--stateless]   # a stdio session's input
//! ```

mod http;
mod peers;
mod report;
mod stats;
mod stdio;
mod subject;
mod wire;
mod workload;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use subject::Subject;
use workload::Workload;

/// How much one run of a throughput workload may send: whichever runs out first.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// At most this many calls.
    pub calls: u64,
    /// For at most this long.
    pub time: Duration,
}

/// The sizes of one benchmark.
#[derive(Clone, Debug)]
pub struct Config {
    /// Rounds; each runs every workload against every subject, interleaved.
    pub rounds: usize,
    /// Sent before measuring, on the same connection or session.
    pub warm: Budget,
    /// The measured part.
    pub measure: Budget,
    /// Sessions opened by the idle-session workload.
    pub idle_sessions: usize,
    /// Cold starts per run (their median is the run's figure).
    pub cold_starts: usize,
}

#[derive(Parser)]
#[command(
    name = "junction-bench",
    about = "Junction side by side with rmcp, the TypeScript and Python SDKs and a raw echo"
)]
enum Cli {
    /// The benchmark: every workload against every subject, interleaved, medians of rounds.
    Run(RunArgs),
    /// A few hundred calls per workload against Junction and the raw echo only (no peers to
    /// install); fails when any answer did not match. No timing is judged.
    Smoke {
        /// Write every figure as JSON here.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Prints the frames of a stdio session, one per line, for a server to read from a file:
    /// `initialize` and `notifications/initialized` (not for 2026-07-28), then the echo calls.
    /// Under `valgrind --tool=callgrind` the server's instructions per call come out the same
    /// on a loaded machine (see the README).
    Frames {
        /// How many calls.
        #[arg(long, default_value_t = 2000)]
        calls: u64,
        /// 2026-07-28 calls, with no handshake.
        #[arg(long)]
        stateless: bool,
    },
}

#[derive(clap::Args)]
struct RunArgs {
    /// One round of half-second runs (a first look; the README's table is a full run).
    #[arg(long)]
    quick: bool,
    /// Only these subjects and/or workloads (comma-separated names, as in the table).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Write every figure as JSON here.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Rounds (default 3, 1 with --quick).
    #[arg(long)]
    rounds: Option<usize>,
    /// Seconds measured per throughput run (default 2, 0.5 with --quick).
    #[arg(long)]
    seconds: Option<f64>,
    /// Another Junction build as an extra subject: NAME=PATH of its bench-junction-echo.
    #[arg(long, value_name = "NAME=PATH")]
    extra: Vec<String>,
    /// Where peers are installed (default bench/.cache).
    #[arg(long)]
    cache: Option<PathBuf>,
}

fn main() -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("junction-bench: {e}");
            return ExitCode::FAILURE;
        }
    };
    // One thread: the generator takes at most one core, leaving the other to the server.
    let result = runtime.block_on(async {
        match Cli::parse() {
            Cli::Run(args) => run(args).await,
            Cli::Smoke { out } => smoke(out).await,
            Cli::Frames { calls, stateless } => frames(calls, stateless),
        }
    });
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("junction-bench: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn frames(calls: u64, stateless: bool) -> anyhow::Result<ExitCode> {
    use std::io::Write as _;
    let mut out = Vec::new();
    let family = if stateless {
        wire::Family::Stateless
    } else {
        writeln!(out, "{}\n{}", wire::initialize(), wire::initialized())?;
        wire::Family::Handshake
    };
    for id in 1..=calls {
        wire::call(&mut out, id, family);
        out.push(b'\n');
    }
    std::io::stdout().lock().write_all(&out)?;
    Ok(ExitCode::SUCCESS)
}

async fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let cache = args
        .cache
        .clone()
        .unwrap_or_else(|| peers::repo().join("bench/.cache"));
    std::fs::create_dir_all(&cache)?;
    // A misspelt name would otherwise count as a subject nobody has, and quietly run less.
    let extras: Vec<&str> = args
        .extra
        .iter()
        .filter_map(|e| e.split_once('=').map(|(name, _)| name))
        .collect();
    let subjects_known = [
        "junction",
        "rmcp",
        "rmcp-pipes",
        "ts-sdk",
        "py-mcpserver",
        "py-lowlevel",
        "raw",
    ];
    let workloads_known = Workload::names();
    if let Some(unknown) = args.only.iter().find(|o| {
        !workloads_known.contains(o)
            && !subjects_known.contains(&o.as_str())
            && !extras.contains(&o.as_str())
    }) {
        anyhow::bail!(
            "--only: no subject or workload is called {unknown:?}; subjects: {}{}; workloads: {}",
            subjects_known.join(", "),
            extras.iter().map(|e| format!(", {e}")).collect::<String>(),
            workloads_known.join(", ")
        );
    }
    let wanted = |name: &str| args.only.is_empty() || args.only.iter().any(|o| o == name);
    let subject_named = |name: &str| args.only.iter().any(|o| o == name);
    let any_subject_named = args.only.iter().any(|o| !workloads_known.contains(o));
    let take = |name: &str| !any_subject_named || subject_named(name);

    let mut subjects = vec![Subject::junction(
        "junction",
        peers::sibling("bench-junction-echo")?,
    )];
    for extra in &args.extra {
        let (name, path) = extra
            .split_once('=')
            .ok_or_else(|| anyhow::anyhow!("--extra wants NAME=PATH, got {extra}"))?;
        subjects.push(Subject::junction(name, PathBuf::from(path)));
    }
    if take("rmcp") || take("rmcp-pipes") {
        eprintln!("junction-bench: building bench/rmcp-echo (release; first time takes minutes)");
        let rmcp = peers::rmcp(&cache)?;
        subjects.push(Subject::rmcp("rmcp", rmcp.clone(), false));
        subjects.push(Subject::rmcp("rmcp-pipes", rmcp, true));
    }
    if ["ts-sdk", "py-mcpserver", "py-lowlevel"]
        .iter()
        .any(|n| take(n))
    {
        let tools = peers::tools(&cache)?;
        let here = peers::repo().join("bench/peers");
        subjects.push(Subject::ts(
            tools.node,
            here.join("ts-echo.mjs"),
            tools.node_modules,
        ));
        subjects.push(Subject::py(
            "py-mcpserver",
            tools.python.clone(),
            here.join("py-echo.py"),
            "mcpserver",
        ));
        subjects.push(Subject::py(
            "py-lowlevel",
            tools.python,
            here.join("py-echo.py"),
            "lowlevel",
        ));
    }
    subjects.push(Subject::raw(peers::sibling("bench-raw-echo")?));
    subjects.retain(|s| take(&s.name));

    let any_workload_named = args.only.iter().any(|o| workloads_known.contains(o));
    let workloads: Vec<Workload> = workload::ALL
        .into_iter()
        .filter(|w| !any_workload_named || wanted(&w.name()))
        .collect();
    let seconds = args.seconds.unwrap_or(if args.quick { 0.5 } else { 2.0 });
    let config = Config {
        rounds: args.rounds.unwrap_or(if args.quick { 1 } else { 3 }),
        warm: Budget {
            calls: u64::MAX,
            time: Duration::from_secs_f64(seconds / 5.0),
        },
        measure: Budget {
            calls: u64::MAX,
            time: Duration::from_secs_f64(seconds),
        },
        idle_sessions: if args.quick { 200 } else { 500 },
        cold_starts: if args.quick { 3 } else { 5 },
    };
    let load_at_start = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let results = report::run_all(&subjects, &workloads, &config).await;
    report::print(&results, &subjects, &workloads);
    if let Some(out) = &args.out {
        std::fs::write(
            out,
            serde_json::to_vec_pretty(&report::json(&results, &config, &load_at_start))?,
        )?;
        eprintln!("junction-bench: wrote {}", out.display());
    }
    Ok(ExitCode::SUCCESS)
}

async fn smoke(out: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let subjects = vec![
        Subject::junction("junction", peers::sibling("bench-junction-echo")?),
        Subject::raw(peers::sibling("bench-raw-echo")?),
    ];
    let config = Config {
        rounds: 1,
        warm: Budget {
            calls: 32,
            time: Duration::from_secs(60),
        },
        measure: Budget {
            calls: 320,
            time: Duration::from_secs(60),
        },
        idle_sessions: 20,
        cold_starts: 1,
    };
    let load_at_start = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let results = report::run_all(&subjects, &workload::ALL, &config).await;
    report::print(&results, &subjects, &workload::ALL);
    if let Some(out) = &out {
        std::fs::write(
            out,
            serde_json::to_vec_pretty(&report::json(&results, &config, &load_at_start))?,
        )?;
    }
    let failures = report::failures(&results);
    for failure in &failures {
        eprintln!("junction-bench smoke: {failure}");
    }
    Ok(if failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
