//! The peers a full run needs, installed into a cache directory on first use: Node with the
//! TypeScript SDK and a Python venv with PyPI `mcp` (through `scripts/install-tools`, so the
//! pins are the interop tests' own), and rmcp's echo server (built from `bench/rmcp-echo`
//! with its own lock file and target dir).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context as _};

/// The repository root (this crate lives in `bench/`).
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// Node and Python as `scripts/install-tools` installed them.
pub struct Tools {
    /// The Node 22 executable.
    pub node: PathBuf,
    /// The `node_modules` holding `@modelcontextprotocol/sdk`.
    pub node_modules: PathBuf,
    /// The venv's python, with `mcp` importable.
    pub python: PathBuf,
}

/// Runs `scripts/install-tools` (idempotent; well under a second when nothing changed) into
/// `$JUNCTION_TOOLS` or, unset, `cache/tools`, and reads the env.sh it wrote.
pub fn tools(cache: &Path) -> anyhow::Result<Tools> {
    let dir = std::env::var_os("JUNCTION_TOOLS")
        .map(PathBuf::from)
        .unwrap_or_else(|| cache.join("tools"));
    let output = Command::new(repo().join("scripts/install-tools"))
        .arg("--quiet")
        .env("JUNCTION_TOOLS", &dir)
        .output()
        .context("running scripts/install-tools")?;
    if !output.status.success() {
        bail!(
            "scripts/install-tools failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let env_sh = std::fs::read_to_string(dir.join("env.sh")).context("reading env.sh")?;
    let vars: HashMap<&str, &str> = env_sh
        .lines()
        .filter_map(|l| l.strip_prefix("export ")?.split_once('='))
        .map(|(k, v)| (k, v.trim_matches('"')))
        .collect();
    let var = |name: &str| {
        vars.get(name)
            .map(PathBuf::from)
            .with_context(|| format!("env.sh has no {name}"))
    };
    Ok(Tools {
        node: var("JUNCTION_NODE")?,
        node_modules: var("JUNCTION_NODE_MODULES")?,
        python: var("JUNCTION_PYTHON")?,
    })
}

/// Builds `bench/rmcp-echo` in release mode into `$JUNCTION_BENCH_RMCP_TARGET` or
/// `cache/rmcp-target` (a no-op when built) and returns the binary.
pub fn rmcp(cache: &Path) -> anyhow::Result<PathBuf> {
    let target = std::env::var_os("JUNCTION_BENCH_RMCP_TARGET")
        .map(PathBuf::from)
        .unwrap_or_else(|| cache.join("rmcp-target"));
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--release", "--quiet", "--manifest-path"])
        .arg(repo().join("bench/rmcp-echo/Cargo.toml"))
        .arg("--target-dir")
        .arg(&target)
        .env_remove("CARGO_TARGET_DIR")
        .status()
        .context("running cargo for bench/rmcp-echo")?;
    if !status.success() {
        bail!("building bench/rmcp-echo failed");
    }
    Ok(target.join("release/bench-rmcp-echo"))
}

/// A binary built next to this one (`bench-junction-echo`, `bench-raw-echo`).
pub fn sibling(name: &str) -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let path = exe.parent().context("no parent dir")?.join(name);
    if !path.exists() {
        bail!(
            "{} is missing: build the junction-bench package (cargo build -p junction-bench)",
            path.display()
        );
    }
    Ok(path)
}
