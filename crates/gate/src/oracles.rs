//! Building the oracles of a property and running many runs of them in parallel.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use freezegate_replay::{Label, Oracle, ProcessOracle, RunContext, RunOutcome, WorkerOracle};

use crate::config::Property;
use crate::rust_prop::oracle_command;

/// How a property's oracle is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OracleSource {
    /// An external command from `freezegate.toml`.
    Command(String),
    /// A Rust property registered in code, run by re-executing this binary.
    Rust {
        /// The binary to re-execute (the xtask's own, `std::env::current_exe`).
        exe: PathBuf,
    },
}

impl OracleSource {
    /// The shell command that runs property `id` from this source: the command itself, or
    /// the binary's hidden subcommand ([`oracle_command`]).
    pub fn command(&self, id: &str) -> String {
        match self {
            OracleSource::Command(cmd) => cmd.clone(),
            OracleSource::Rust { exe } => oracle_command(exe, id),
        }
    }
}

/// The oracles of one property: a fresh process per run for replays, and the fastest
/// runner for campaigns and shrinking (a worker where the property speaks the protocol).
#[derive(Clone)]
pub struct PropertyOracles {
    /// One fresh process per run: replays always use this (SPEC §4).
    pub fresh: Arc<dyn Oracle>,
    /// Campaign and shrink runs: a worker when the property has `worker = true` (or is a
    /// Rust property), else the same as `fresh`.
    pub fast: Arc<dyn Oracle>,
    /// Whether `fast` is a worker (else it is `fresh` itself).
    pub worker: bool,
    /// The shell command behind both.
    pub command: String,
    /// `fast`, when it is a worker.
    worker_oracle: Option<Arc<WorkerOracle>>,
}

impl std::fmt::Debug for PropertyOracles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PropertyOracles")
            .field("command", &self.command)
            .finish_non_exhaustive()
    }
}

/// Why a property has no oracle.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OracleError {
    /// No `oracle` in the file and no Rust property of that id. (The gate refuses such a
    /// property earlier, at its place in the file: [`crate::config::Config::check_oracles`].)
    #[error(
        "property {0} has no oracle: give it an `oracle` command in freezegate.toml or register it as a Rust property"
    )]
    Missing(String),
    /// A registered Rust property, but no binary was given to re-execute for its runs
    /// ([`crate::run::Context::exe`] is `None`).
    #[error(
        "property {0} is a Rust property, but no binary to run it was given (the xtask's own, std::env::current_exe)"
    )]
    NoBinary(String),
    /// The command is unusable.
    #[error("property {id}: {message}")]
    Invalid {
        /// The property.
        id: String,
        /// Why.
        message: String,
    },
}

impl PropertyOracles {
    /// The oracles of `property`, run in `root`.
    pub fn new(
        property: &Property,
        source: &OracleSource,
        root: &Path,
    ) -> Result<PropertyOracles, OracleError> {
        let command = source.command(property.id.as_str());
        let worker = match source {
            OracleSource::Command(_) => property.worker,
            OracleSource::Rust { .. } => true,
        };
        let invalid = |e: &dyn std::fmt::Display| OracleError::Invalid {
            id: property.id.to_string(),
            message: e.to_string(),
        };
        let process = ProcessOracle::new(command.clone(), root).map_err(|e| invalid(&e))?;
        let fresh: Arc<dyn Oracle> = match source {
            OracleSource::Command(_) => Arc::new(process),
            OracleSource::Rust { .. } => Arc::new(RustRun(process)),
        };
        let worker_oracle = if worker {
            Some(Arc::new(
                WorkerOracle::new(command.clone(), root).map_err(|e| invalid(&e))?,
            ))
        } else {
            None
        };
        let fast: Arc<dyn Oracle> = match &worker_oracle {
            Some(w) => Arc::clone(w) as Arc<dyn Oracle>,
            None => Arc::clone(&fresh),
        };
        Ok(PropertyOracles {
            fresh,
            fast,
            worker,
            command,
            worker_oracle,
        })
    }

    /// Whether the worker has answered a candidate yet; `None` when `fast` is no worker.
    pub fn worker_has_answered(&self) -> Option<bool> {
        self.worker_oracle.as_ref().map(|w| w.has_answered())
    }

    /// The same oracles with a fresh process for every run, `fast` too: for a property whose
    /// worker cannot be used (one that never answers).
    pub fn fresh_only(&self) -> PropertyOracles {
        PropertyOracles {
            fresh: Arc::clone(&self.fresh),
            fast: Arc::clone(&self.fresh),
            worker: false,
            command: self.command.clone(),
            worker_oracle: None,
        }
    }
}

/// A fresh-process run of a Rust property's hidden subcommand: its exit 0 is `assert_pass`
/// only when the harness's stdout line [`crate::rust_prop::PASS_LINE`] shows that the
/// check returned. The code under test runs in that process and can end it with status 0
/// itself (`std::process::exit(0)` in a panic hook, `_exit(0)` in an `atexit` handler, after
/// the harness's `failure:` line): such a run is a `harness_error`, never a pass.
pub struct RustRun<O>(pub O);

impl<O: Oracle> Oracle for RustRun<O> {
    fn run(&self, candidate: &[u8], ctx: &RunContext) -> RunOutcome {
        let mut outcome = self.0.run(candidate, ctx);
        if outcome.label == Label::AssertPass && !crate::rust_prop::passed(&outcome.stdout.text) {
            outcome.label = Label::HarnessError;
            outcome.message = Some(format!(
                "exit 0 without the harness's stdout line `{}` (or with a `failure:` line after it): code in the run's process ended it with status 0 before the check passed (a panic hook or exit handler that exits 0)",
                crate::rust_prop::PASS_LINE
            ));
        }
        outcome
    }
}

/// One run to do: which oracle, which candidate, which context.
pub struct Job {
    /// The oracle.
    pub oracle: Arc<dyn Oracle>,
    /// The candidate's canonical bytes.
    pub candidate: Arc<Vec<u8>>,
    /// Seed, property, replay index, deadline.
    pub ctx: RunContext,
}

/// Runs `jobs` on `threads` threads and returns their outcomes in job order, whatever the
/// completion order. `tick` is called after each finished run with the count done so far.
pub fn run_parallel(
    jobs: Vec<Job>,
    threads: usize,
    tick: &(dyn Fn(usize) + Sync),
) -> Vec<RunOutcome> {
    let total = jobs.len();
    let slots: Vec<Mutex<Option<RunOutcome>>> = (0..total).map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let threads = threads.clamp(1, total.max(1));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(job) = jobs.get(i) else { break };
                    let outcome = job.oracle.run(&job.candidate, &job.ctx);
                    if let Ok(mut slot) = slots[i].lock() {
                        *slot = Some(outcome);
                    }
                    tick(done.fetch_add(1, Ordering::Relaxed) + 1);
                }
            });
        }
    });
    slots
        .into_iter()
        .map(|slot| {
            slot.into_inner().ok().flatten().unwrap_or_else(|| {
                RunOutcome::not_run("the run's thread panicked before it recorded an outcome")
            })
        })
        .collect()
}

/// The contexts of the `n` replays of one candidate: replay indices `0..n`.
pub fn replay_contexts(seed: u64, property: &str, timeout_ms: u64, n: usize) -> Vec<RunContext> {
    (0..n)
        .map(|i| {
            RunContext::new(seed)
                .with_property(property)
                .with_replay(u32::try_from(i).unwrap_or(u32::MAX))
                .with_timeout(Duration::from_millis(timeout_ms))
        })
        .collect()
}

/// The labels of a list of outcomes.
pub fn labels(outcomes: &[RunOutcome]) -> Vec<Label> {
    outcomes.iter().map(|o| o.label).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Rust property's run that exits 0 without the harness's `pass` line (the code under
    /// test exited from a panic hook, or an exit handler turned the harness's exit 1 into 0)
    /// is a `harness_error`; one with it is a pass.
    #[test]
    fn a_rust_run_passes_only_with_the_harness_pass_line() {
        let dir = tempfile::tempdir().unwrap();
        let config = crate::config::Config::parse(
            "[[property]]\nid = \"p\"\n",
            Path::new("freezegate.toml"),
        )
        .unwrap();
        let property = config.property("p").unwrap().clone();
        let run = |script: &str| {
            let exe = dir.path().join("runner");
            std::fs::write(&exe, format!("#!/bin/sh\ncat >/dev/null\n{script}\n")).unwrap();
            let mut mode = std::fs::metadata(&exe).unwrap().permissions();
            std::os::unix::fs::PermissionsExt::set_mode(&mut mode, 0o755);
            std::fs::set_permissions(&exe, mode).unwrap();
            let source = OracleSource::Rust { exe };
            let oracles = PropertyOracles::new(&property, &source, dir.path()).unwrap();
            let ctx = RunContext::new(1).with_timeout(Duration::from_secs(10));
            oracles.fresh.run(b"1", &ctx).label
        };
        assert_eq!(run("echo; echo pass; exit 0"), Label::AssertPass);
        // Honest output after the harness's line (an `atexit` handler's summary, C stdio
        // flushed at exit) keeps the pass (a red-team audit found it a harness_error).
        assert_eq!(
            run("echo; echo pass; echo 'atexit: flushed metrics'; exit 0"),
            Label::AssertPass
        );
        assert_eq!(
            run("printf '\\npass\\nc lib: 3'; exit 0"),
            Label::AssertPass
        );
        assert_eq!(run("exit 0"), Label::HarnessError);
        assert_eq!(
            run("echo pass; echo 'failure: panicked at src/lib.rs:1:1'; exit 0"),
            Label::HarnessError
        );
        assert_eq!(
            run("echo 'failure: panicked at src/lib.rs:1:1'; exit 0"),
            Label::HarnessError
        );
        assert_eq!(
            run("echo 'failure: panicked at src/lib.rs:1:1'; exit 1"),
            Label::AssertFail
        );
    }
}
