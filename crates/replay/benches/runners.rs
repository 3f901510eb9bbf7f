//! Runner overhead against its floors: `cargo bench -p freezegate-replay --bench runners`.
//!
//! 1. The process runner against a plain loop of `std::process::Command` spawning the same
//!    `sh -c CMD` with stdin piped (the candidate written, stdin closed, the child waited
//!    for), with the same number of threads, measured in the same run, rounds interleaved.
//!    Target: at most 1.3x the floor for an oracle that exits at once.
//! 2. Worker mode against process mode for one trivial Python oracle. Target: at least 20x
//!    the throughput.
//!
//! Prints tables of medians over several rounds.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use freezegate_replay::{
    Oracle, ProcessOracle, ReplayOptions, ReplayPlan, RunContext, WorkerOracle, replay,
};

const CANDIDATE: &[u8] = br#"{"role":"","user_id":0}"#;

type BenchResult = Result<(), Box<dyn std::error::Error>>;

/// `runs` spawns of `sh -c cmd` on `jobs` threads, the floor the runner is held to.
fn floor(cmd: &str, dir: &Path, runs: usize, jobs: usize) -> Duration {
    let start = Instant::now();
    std::thread::scope(|s| {
        for t in 0..jobs {
            s.spawn(move || {
                for _ in (t..runs).step_by(jobs) {
                    let child = Command::new("sh")
                        .arg("-c")
                        .arg(cmd)
                        .current_dir(dir)
                        .stdin(Stdio::piped())
                        .spawn();
                    let Ok(mut child) = child else { continue };
                    if let Some(mut stdin) = child.stdin.take() {
                        let _ = stdin.write_all(CANDIDATE);
                        let _ = stdin.write_all(b"\n");
                    }
                    let _ = child.wait();
                }
            });
        }
    });
    start.elapsed()
}

/// The same runs through [`replay`] on a [`ProcessOracle`].
fn runner(
    oracle: &ProcessOracle,
    runs: usize,
    jobs: usize,
) -> Result<Duration, Box<dyn std::error::Error>> {
    let plan = ReplayPlan::new(runs, 1)?;
    let options = ReplayOptions::default()
        .with_jobs(jobs)
        .with_timeout(Duration::from_secs(10));
    let start = Instant::now();
    let report = replay(oracle, CANDIDATE, &plan, &options);
    let elapsed = start.elapsed();
    if report.labels().iter().any(|l| l.is_infra()) {
        return Err("a benchmark run broke".into());
    }
    Ok(elapsed)
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn per_run_us(d: Duration, runs: usize) -> f64 {
    d.as_secs_f64() * 1e6 / runs as f64
}

const PY_ORACLE: &str = r#"
import os, sys
if os.environ.get("FREEZEGATE_WORKER") == "1":
    for line in sys.stdin:
        sys.stdout.write("pass\n")
        sys.stdout.flush()
else:
    sys.stdin.read()
"#;

fn main() -> BenchResult {
    // `cargo bench` passes `--bench`; a filter or `--test` from `cargo test --benches` means
    // a quick smoke run.
    let quick = std::env::args().any(|a| a == "--test");
    let dir = tempfile::tempdir()?;
    let rounds = if quick { 1 } else { 15 };
    let runs = if quick { 20 } else { 200 };

    println!(
        "## process runner overhead (per run; {rounds} rounds of {runs} runs, floor and runner \
         back to back, their order alternating; medians, and the median of the per-round ratios)"
    );
    println!();
    println!("| oracle | jobs | floor µs/run | runner µs/run | ratio (median) | ratio (range) |");
    println!("|---|---|---|---|---|---|");
    for cmd in ["exit 0", "cat >/dev/null"] {
        let oracle = ProcessOracle::new(cmd, dir.path())?;
        for jobs in [1, 2] {
            let (mut f, mut r, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
            // Warm up both paths once.
            floor(cmd, dir.path(), 10, jobs);
            runner(&oracle, 10, jobs)?;
            for round in 0..rounds {
                // Alternate which goes first, so drift in the machine's load cancels out.
                let (fi, ri) = if round % 2 == 0 {
                    let fi = per_run_us(floor(cmd, dir.path(), runs, jobs), runs);
                    (fi, per_run_us(runner(&oracle, runs, jobs)?, runs))
                } else {
                    let ri = per_run_us(runner(&oracle, runs, jobs)?, runs);
                    (per_run_us(floor(cmd, dir.path(), runs, jobs), runs), ri)
                };
                f.push(fi);
                r.push(ri);
                ratios.push(ri / fi);
            }
            let lo = ratios.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = ratios.iter().copied().fold(0.0, f64::max);
            println!(
                "| `{cmd}` | {jobs} | {:.0} | {:.0} | {:.2}x | {lo:.2}-{hi:.2} |",
                median(f),
                median(r),
                median(ratios)
            );
        }
    }

    std::fs::write(dir.path().join("oracle.py"), PY_ORACLE)?;
    // `python3` may be a launcher script (pyenv's shim costs hundreds of milliseconds per
    // start); the interpreter it resolves to is measured too.
    let exe = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()?;
    let exe = String::from_utf8(exe.stdout)?.trim().to_owned();
    println!();
    println!("## worker mode against process mode (trivial Python oracle, 1 job)");
    println!();
    println!("| interpreter | process calls/s | worker calls/s | ratio |");
    println!("|---|---|---|---|");
    for python in ["python3", exe.as_str()] {
        let cmd = format!("exec {python} oracle.py");
        let process = ProcessOracle::new(cmd.as_str(), dir.path())?;
        let worker = WorkerOracle::new(cmd.as_str(), dir.path())?;
        let ctx = RunContext::new(1);
        let process_calls = if quick { 5 } else { 60 };
        let worker_calls = if quick { 100 } else { 20_000 };
        // Start the worker before timing: throughput, not start-up, is compared.
        worker.run(CANDIDATE, &ctx);
        let (mut p, mut w) = (Vec::new(), Vec::new());
        for _ in 0..rounds.min(3) {
            let start = Instant::now();
            for _ in 0..process_calls {
                process.run(CANDIDATE, &ctx);
            }
            p.push(process_calls as f64 / start.elapsed().as_secs_f64());
            let start = Instant::now();
            for _ in 0..worker_calls {
                worker.run(CANDIDATE, &ctx);
            }
            w.push(worker_calls as f64 / start.elapsed().as_secs_f64());
        }
        let (p, w) = (median(p), median(w));
        println!("| `{python}` | {p:.1} | {w:.0} | {:.0}x |", w / p);
    }
    Ok(())
}
