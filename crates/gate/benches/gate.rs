//! The gate's overhead against its floor: `cargo bench -p freezegate-gate --bench gate`.
//!
//! 1 000 pinned fixtures × 7 replays of an oracle that exits at once (`true`), through the
//! gate library (validation, fixture integrity, the ledger, replays, decision), against the
//! floor: the same 7 000 `sh -c true` spawns with the candidate piped to stdin, from a plain
//! loop of `std::process::Command` on the same number of threads (2). Both are measured in
//! the same run, rounds interleaved; the median is reported. Target: overhead under 15%.
//!
//! Without `--bench` (as under `cargo test --benches`) it makes one round over 50 fixtures, a
//! smoke test of the setup and the report check whose figures mean nothing.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use freezegate_canon::fixture::{self, Meta};
use freezegate_canon::{Canonicalization, Value, canonicalize_value};
use freezegate_gate::config::{Config, RunOverrides, Settings};
use freezegate_gate::run::{self, Context};
use freezegate_gate::rust_prop::Registry;

type BenchResult = Result<(), Box<dyn std::error::Error>>;

const FIXTURES: usize = 1_000;
const REPLAYS: usize = 7;
const JOBS: usize = 2;
const ROUNDS: usize = 3;
const SMOKE_FIXTURES: usize = 50;
const SMOKE_ROUNDS: usize = 1;

fn floor(dir: &Path, candidates: &[Vec<u8>]) -> Duration {
    let start = Instant::now();
    std::thread::scope(|s| {
        for t in 0..JOBS {
            s.spawn(move || {
                let mut i = t;
                while i < candidates.len() * REPLAYS {
                    let candidate = &candidates[i / REPLAYS];
                    if let Ok(mut child) = Command::new("sh")
                        .arg("-c")
                        .arg("true")
                        .current_dir(dir)
                        .stdin(Stdio::piped())
                        .spawn()
                    {
                        if let Some(mut stdin) = child.stdin.take() {
                            let _ = stdin.write_all(candidate);
                            let _ = stdin.write_all(b"\n");
                        }
                        let _ = child.wait();
                    }
                    i += JOBS;
                }
            });
        }
    });
    start.elapsed()
}

fn main() -> BenchResult {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") {
        return Ok(());
    }
    // `cargo bench` passes `--bench`; without it (`cargo test --benches`) a quick smoke run.
    let full = args.iter().any(|a| a == "--bench");
    let (fixtures, rounds) = if full {
        (FIXTURES, ROUNDS)
    } else {
        (SMOKE_FIXTURES, SMOKE_ROUNDS)
    };
    let tmp = tempfile::tempdir()?;
    let root = tmp.path();
    std::fs::write(
        root.join("freezegate.toml"),
        format!(
            "[policy]\nreplays = {REPLAYS}\njobs = {JOBS}\n\n[[property]]\nid = \"bench.exits_at_once\"\noracle = \"true\"\n"
        ),
    )?;
    let property: freezegate_canon::PropertyId = "bench.exits_at_once".parse()?;
    let mut candidates = Vec::with_capacity(fixtures);
    for i in 0..fixtures {
        let value = Value::Object(vec![
            ("case".into(), Value::int(i as i64)),
            (
                "tags".into(),
                Value::Array(vec![Value::from("a"), Value::from("b")]),
            ),
        ]);
        let c = canonicalize_value(&value, Canonicalization::V1)?;
        let meta = Meta {
            property_id: property.clone(),
            fixture_id: c.fixture_id(),
            fixture_digest: c.digest(),
            origin_id: c.fixture_id(),
            origin_digest: c.digest(),
            canonicalization: Canonicalization::V1,
            seed: 20_260_917,
            pinned_at: "2026-12-01T00:00:00Z".into(),
            patch_id: "bench".into(),
            oracle_calls: 1,
            shrink_path: Vec::new(),
        };
        fixture::pin(root, &meta, &c, &c)?;
        candidates.push(c.into_bytes());
    }
    let config = Config::load(root)?;
    let settings = Settings::resolve(config, &RunOverrides::default(), JOBS)?;
    let registry = Registry::new();
    let ctx = Context::new(root.to_path_buf(), &registry, "bench".into())
        .with_exe(None)
        .with_max_shrink_calls(1);
    let mut floors = Vec::new();
    let mut gates = Vec::new();
    for _ in 0..rounds {
        floors.push(floor(root, &candidates).as_secs_f64());
        let start = Instant::now();
        let report = run::run(&settings, &ctx)?;
        gates.push(start.elapsed().as_secs_f64());
        if report.summary.fixtures != fixtures || report.decision.exit_code != 0 {
            return Err(format!("unexpected report: {}", report.summary_line()).into());
        }
    }
    let median = |mut xs: Vec<f64>| {
        xs.sort_by(f64::total_cmp);
        xs[xs.len() / 2]
    };
    let (f, g) = (median(floors), median(gates));
    println!(
        "gate overhead: {fixtures} fixtures × {REPLAYS} replays, jobs {JOBS}, median of {rounds} rounds{}",
        if full {
            ""
        } else {
            " (smoke run: the figures mean nothing)"
        }
    );
    println!("| | wall time | per run |");
    println!("|---|---|---|");
    let runs = (fixtures * REPLAYS) as f64;
    println!(
        "| floor: plain `sh -c true` loop | {f:.2} s | {:.0} µs |",
        f * 1e6 / runs
    );
    println!(
        "| gate (validate, replay, decide) | {g:.2} s | {:.0} µs |",
        g * 1e6 / runs
    );
    println!(
        "| overhead | {:+.1}% | target < 15% |",
        (g / f - 1.0) * 100.0
    );
    Ok(())
}
