//! Replays for freezegate: run an oracle on a candidate (a fresh process, a long-lived
//! worker, or a Rust closure), label each run, and turn a fixed-length label list into a
//! verdict (SPEC §4, §6).
//!
//! - [`Label`], [`Verdict`], [`SeedStatus`] and the total function [`verdict`]; a
//!   [`ReplayPlan`] fixes N and the seed before the runs, and only accepts label lists of its
//!   own length ([`LabelList`]).
//! - [`Oracle`]: the one runner interface the replayer, the shrinker and the gate take.
//!   Runners: [`ProcessOracle`] (a fresh `sh -c CMD` per run, killed as a process group at
//!   its deadline), [`WorkerOracle`] (the line protocol of worker mode), [`InProcessOracle`]
//!   (a closure over the candidate's [`Value`], canon's lossless JSON value; the
//!   [`freezegate_canon`] crate is re-exported).
//! - Errors keep their cause behind [`std::error::Error::source`]; print one with
//!   [`ErrorChain`] (re-exported from `freezegate-canon`) to show its causes too.
//! - [`replay`]: N runs in parallel up to a job limit, labels in run-index order, the verdict
//!   and the detection power of N ([`detection_power`]).
//!
//! # Example
//!
//! ```
//! use freezegate_replay::{replay, Label, ProcessOracle, ReplayOptions, ReplayPlan, Verdict};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // Fails on odd replays: a flicker.
//! let oracle = ProcessOracle::new(r#"[ $((FREEZEGATE_REPLAY % 2)) -eq 0 ]"#, ".")?;
//! let plan = ReplayPlan::new(4, 20260917)?;
//! let report = replay(&oracle, br#"{"role":"","user_id":0}"#, &plan, &ReplayOptions::default());
//! assert_eq!(report.labels(), [Label::AssertPass, Label::AssertFail, Label::AssertPass, Label::AssertFail]);
//! assert_eq!(report.verdict, Verdict::FreezeEligible);
//! # Ok(())
//! # }
//! ```
//!
//! # Invariants
//!
//! - The verdict is a total function of the label list and the N fixed before the run.
//! - Labels come back in run-index order whatever order the runs finished in.
//! - A process run never outlives its deadline by more than the grace period and the time it
//!   takes to kill: at the deadline its whole process group gets SIGTERM, then SIGKILL; when
//!   a run returns, no process of its group is still running, and no output held open by a
//!   process outside the group is waited for.
//! - Where this process is a child subreaper ([`become_child_subreaper`]), a run's processes
//!   that left its group (`setsid`, `setpgid`) are killed when it ends too, known by the
//!   mark every run puts in its environment or by the run's pipes they hold; a run's sweep
//!   never touches another run's processes, the group of this process, or a child no run
//!   started. A worker counts as one run that ends when it is stopped. Without the setting
//!   they are out of reach ([`ProcessOracle`] has the limits).
//! - Captured output is bounded (the last bytes of each stream are kept); a chatty oracle
//!   cannot exhaust memory or deadlock the runner on a full pipe.
//! - `Oracle::run` never fails: whatever goes wrong is a `harness_error` or `timeout` label
//!   with a message.
//! - The crate installs no signal handler. A run's process group is its own, so a terminal's
//!   Ctrl-C does not reach it: a program that handles SIGINT, SIGTERM or SIGHUP itself calls
//!   [`kill_active_runs`] before it exits, which kills every run still going.
//!
//! # Platforms
//!
//! The process runners are Linux-only (`pidfd`, `PR_SET_CHILD_SUBREAPER`, `/proc`):
//! [`ProcessOracle`], [`WorkerOracle`], [`ShellCommand`], [`kill_active_runs`],
//! [`become_child_subreaper`], [`group_is_running`] and [`ConfigError`] exist only on
//! `target_os = "linux"`. Everything else (labels, verdicts, plans, [`replay`] and
//! [`InProcessOracle`]) builds on every target, so a crate that only needs the verdict types,
//! such as `freezegate-ledger`, builds on macOS too.

#![cfg_attr(not(test), warn(clippy::unwrap_used, clippy::expect_used))]

// The runners of processes need Linux (`pidfd`, `PR_SET_CHILD_SUBREAPER`, `/proc`); labels,
// verdicts, plans, the replayer and the in-process oracle build everywhere.
#[cfg(target_os = "linux")]
mod command;
#[cfg(target_os = "linux")]
mod escape;
mod inprocess;
mod label;
mod oracle;
pub mod panics;
#[cfg(target_os = "linux")]
mod process;
mod replay;
#[cfg(target_os = "linux")]
mod worker;

#[cfg(target_os = "linux")]
pub use command::{CommandEnd, CommandOutput, DEFAULT_STDOUT_CAP, ShellCommand};
#[cfg(target_os = "linux")]
pub use escape::{kill_active_runs, kill_orphans};
pub use inprocess::{Failure, InProcessOracle};
pub use label::{
    Label, LabelList, MAX_REPLAYS, POWER_RATES, PlanError, ReplayPlan, SeedStatus, Verdict,
    detection_power, letters, verdict, verdict_of_names,
};
pub use oracle::{
    DEFAULT_TIMEOUT, Excerpt, Exit, Oracle, RunContext, RunOutcome, mode_difference_causes,
    telling_line,
};
#[cfg(target_os = "linux")]
pub use process::{
    ConfigError, DEFAULT_GRACE, DEFAULT_OUTPUT_CAP, ProcessOracle, become_child_subreaper,
    group_is_running,
};
pub use replay::{REPORT_SCHEMA, ReplayOptions, ReplayReport, replay};
#[cfg(target_os = "linux")]
pub use worker::WorkerOracle;

/// The canonical form crate whose [`Value`] the in-process oracle's closure takes,
/// re-exported so that a user needs one dependency and gets the version this crate was
/// built with.
pub use freezegate_canon;
/// Prints an error with its causes on one line (`a: b: c`), from `freezegate-canon`.
pub use freezegate_canon::ErrorChain;
pub use freezegate_canon::Value;
