//! The freezegate gate: the promotion path of SPEC §1 as one CI check. It reads
//! `freezegate.toml`, validates the freeze ledger and every fixture file, replays every pinned
//! fixture N times (a fresh, killable process per run), runs each property's campaign under
//! the fixed seed, shrinks, pins and classifies a new failure, and decides: a regression or an
//! unfrozen flicker blocks, a frozen flicker runs without a vote, timeouts and harness errors
//! go to the infra queue. With a base revision it also judges the patch's own commits
//! ([`patch`]): signatures on protected paths and the moves a patch uses to game a suite.
//!
//! It is a library so that a repository can call it from its own xtask; freezegate's own
//! `xtask` binary is a thin shell over it ([`run::run_with_base`], [`classify::classify`],
//! [`freeze::freeze`], [`render`], [`demo`], [`process::setup`]).
//!
//! # Main items
//!
//! - [`config::Config`] (`freezegate.toml`, [`config::Config::load`]),
//!   [`config::RunOverrides`] (the environment and flags, [`config::RunOverrides::from_env`])
//!   and [`config::Settings`] (the two resolved, [`config::Settings::resolve`]).
//! - [`run::Context`] (root, `now` as a [`Timestamp`], the Rust properties, `patch_id`) and
//!   [`run::run`] / [`run::run_with_base`], which give a [`report::Report`]; call
//!   [`report::Report::decide`] for its [`report::Decision`] and exit code.
//! - [`render`]: the report as text ([`render::settings_text`], [`render::body_text`]),
//!   JSON ([`render::json`]), JUnit ([`render::junit`]) or GitHub annotations
//!   ([`render::github`]); [`schema`] holds the JSON schemas.
//! - [`rust_prop::Registry`]: Rust properties with a proptest strategy.
//! - [`process::setup`]: the process-wide set-up of a binary that runs oracles (the child
//!   subreaper and SIGINT, SIGTERM and SIGHUP), with [`process::park_if_stopping`] and
//!   [`process::kill_active_runs`].
//! - [`classify::classify`] (one failing input through shrink, pin, replay and action),
//!   [`freeze::freeze`] (a flicker's freeze row, with `freezegate.toml`'s settings alone),
//!   [`patch::check_patch`] (patch integrity), [`diffs`] (the ledger and settings diffs of a
//!   patch), [`demo::Demo`].
//!
//! The crates below are re-exported ([`freezegate_canon`], [`freezegate_replay`],
//! [`freezegate_shrink`], [`freezegate_ledger`], [`proptest`] for the strategies, and
//! [`time`] for the `OffsetDateTime` of a [`Timestamp`]), so a project needs this one
//! dependency.
//!
//! ```
//! use freezegate_gate::Timestamp;
//! use freezegate_gate::time::OffsetDateTime;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let now = Timestamp::from_datetime(OffsetDateTime::from_unix_timestamp(1_789_633_805)?)?;
//! assert_eq!(now.to_string(), "2026-09-17T08:30:05Z");
//! # Ok(())
//! # }
//! ```
//!
//! # Your own xtask
//!
//! A repository runs the gate from its own binary: the hidden subcommand of its Rust
//! properties first (each run re-executes the binary), then [`process::setup`], so that a
//! terminal's Ctrl-C or a CI runner's cancel kills the oracles with the gate (they run in
//! process groups of their own, which those signals do not reach) and the process exits with
//! 128 + the signal; then the settings, the context, the gate and a renderer. Exit codes as
//! in freezegate's own xtask: the decision's `0`, `1` or `2`, and `3` when the gate cannot
//! run. An error is printed with its causes ([`ErrorChain`]): the messages of these crates
//! leave the cause to [`std::error::Error::source`], so `{error}` alone would print
//! `freeze/ledger.json: the ledger is not valid JSON` without the line and column that follow
//! it.
//!
//! ```no_run
//! use std::process::ExitCode;
//!
//! use freezegate_gate::config::{Config, RunOverrides, Settings};
//! use freezegate_gate::render::{self, Style};
//! use freezegate_gate::rust_prop::{PROPERTY_SUBCOMMAND, Registry, RegistryError};
//! use freezegate_gate::{ErrorChain, process, run};
//!
//! /// The repository's Rust properties (see "Rust properties" below); none here.
//! fn registry() -> Result<Registry, RegistryError> {
//!     Ok(Registry::new())
//! }
//!
//! fn main() -> ExitCode {
//!     match xtask() {
//!         Ok(code) => ExitCode::from(code),
//!         Err(error) => {
//!             // After a stopping signal the signal's thread exits, with 128 + the signal.
//!             process::park_if_stopping();
//!             // The error with its causes, on one line.
//!             eprintln!("error: {}", ErrorChain(&*error));
//!             ExitCode::from(3)
//!         }
//!     }
//! }
//!
//! /// The command line of docs/threat-model.md's CI recipe: `[-C DIR] [gate] [--base REV]
//! /// [--rust-runner BINARY] [--format text|json]`. Anything else is refused (exit 3): a gate
//! /// that ignored `--base` would pass a patch it never judged.
//! #[derive(Default)]
//! struct Cli {
//!     dir: Option<std::path::PathBuf>,
//!     base: Option<String>,
//!     rust_runner: Option<std::path::PathBuf>,
//!     json: bool,
//! }
//!
//! fn cli(mut args: impl Iterator<Item = String>) -> Result<Cli, String> {
//!     let mut cli = Cli::default();
//!     while let Some(arg) = args.next() {
//!         let mut value = || args.next().ok_or(format!("{arg} needs a value"));
//!         match arg.as_str() {
//!             "gate" => {}
//!             "-C" => cli.dir = Some(value()?.into()),
//!             "--base" => cli.base = Some(value()?),
//!             "--rust-runner" => cli.rust_runner = Some(value()?.into()),
//!             "--format" => cli.json = match value()?.as_str() {
//!                 "json" => true,
//!                 "text" => false,
//!                 other => return Err(format!("unknown format {other}")),
//!             },
//!             other => return Err(format!("unexpected argument {other}")),
//!         }
//!     }
//!     Ok(cli)
//! }
//!
//! fn xtask() -> Result<u8, Box<dyn std::error::Error>> {
//!     let registry = registry()?;
//!     let args: Vec<String> = std::env::args().collect();
//!     // `xtask __freezegate-property ID`: one run of a Rust property (or, with
//!     // FREEZEGATE_GENERATE=1, its campaign inputs), an oracle itself, so it keeps the
//!     // default signal handling.
//!     if let [_, subcommand, id] = args.as_slice()
//!         && subcommand == PROPERTY_SUBCOMMAND
//!     {
//!         return Ok(registry.serve_stdio(id));
//!     }
//!     let cli = cli(args.into_iter().skip(1))?;
//!     // Adopt the oracles' orphans; on SIGINT, SIGTERM or SIGHUP kill every run and exit.
//!     if let Err(error) = process::setup() {
//!         eprintln!("warning: {}", ErrorChain(&error));
//!     }
//!     let root = match cli.dir {
//!         Some(dir) => dir,
//!         None => std::env::current_dir()?,
//!     };
//!     let config = Config::load(&root)?;
//!     let overrides = RunOverrides::from_env(|key| std::env::var(key).ok());
//!     let cores = std::thread::available_parallelism().map_or(1, usize::from);
//!     let settings = Settings::resolve(config, &overrides, cores)?;
//!     let patch_id = run::head_commit(&root).ok_or("cannot read the commit of HEAD")?;
//!     // A build of the tree under test, when this binary is the base revision's (`gate
//!     // --base` in CI, see "Rust properties" below).
//!     let ctx = run::Context::new(root, &registry, patch_id).with_rust_runner(cli.rust_runner);
//!     // With `--base REV`, also judges the patch's own commits REV..HEAD.
//!     let mut report = run::run_with_base(&settings, &ctx, cli.base.as_deref())?;
//!     report.decide();
//!     // Kill what oracles left running that no run could be tied to.
//!     process::kill_orphans(process::ORPHAN_LIMIT);
//!     // Print nothing made of runs a signal killed.
//!     process::park_if_stopping();
//!     if cli.json {
//!         print!("{}", render::json(&report));
//!     } else {
//!         print!("{}", render::settings_text(&report.settings));
//!         print!("{}", render::body_text(&report, Style { color: false }));
//!     }
//!     Ok(report.decision.exit_code)
//! }
//! ```
//!
//! # Rust properties
//!
//! A Rust project registers in-process properties in its xtask: an id, a proptest strategy
//! for a serde-serializable input type, and the check ([`rust_prop::Registry`]). The gate
//! draws campaign inputs from the strategy, its randomness a `rand_pcg` stream seeded from the
//! policy seed and the property id,
//! and turns them into canonical JSON. Every run — campaign case, shrink candidate, replay —
//! re-executes the xtask binary (`std::env::current_exe`, never `cargo`) with the hidden
//! subcommand [`rust_prop::PROPERTY_SUBCOMMAND`] and the candidate on stdin, so each replay is
//! a fresh process the gate can kill at its deadline, exactly like an external oracle. The
//! xtask's part is to route that subcommand to [`rust_prop::Registry::serve`]:
//!
//! ```
//! use freezegate_gate::proptest::prelude::*;
//! use freezegate_gate::rust_prop::{PROPERTY_SUBCOMMAND, Registry};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! /// The repository's properties, registered once, used by `gate` and the hidden subcommand.
//! fn registry() -> Result<Registry, freezegate_gate::rust_prop::RegistryError> {
//!     let mut registry = Registry::new();
//!     registry.property(
//!         "money.split_keeps_the_total",
//!         (0u64..1_000_000, 1u64..20),
//!         |&(cents, parts): &(u64, u64)| {
//!             let share = cents / parts;
//!             let shares: Vec<u64> = (0..parts)
//!                 .map(|i| share + u64::from(i < cents % parts))
//!                 .collect();
//!             if shares.iter().sum::<u64>() == cents {
//!                 Ok(())
//!             } else {
//!                 Err("the shares do not add up to the total".to_owned())
//!             }
//!         },
//!     )?;
//!     Ok(registry)
//! }
//!
//! // In the xtask's main: `xtask __freezegate-property ID` serves one run on stdin. Here the
//! // candidate comes from memory; the xtask passes its real stdin and stdout, and
//! // FREEZEGATE_WORKER=1 selects worker mode.
//! let args = [PROPERTY_SUBCOMMAND, "money.split_keeps_the_total"];
//! let mut stdout = Vec::new();
//! let code = registry()?.serve(args[1], false, &mut &b"[1001,3]\n"[..], &mut stdout);
//! assert_eq!(code, 0);
//! // An input of another shape is not a failure: "cannot test this input".
//! let code = registry()?.serve(args[1], false, &mut &b"{\"x\":1}\n"[..], &mut stdout);
//! assert_eq!(code, 125);
//! # Ok(())
//! # }
//! ```
//!
//! In `freezegate.toml` such a property has an `id` and no `oracle`; the xtask passes its
//! registry and `std::env::current_exe()` in [`run::Context`], and routes the hidden
//! subcommand to [`rust_prop::Registry::serve_stdio`], which also serves the campaign inputs
//! (`FREEZEGATE_GENERATE=1`, [`rust_prop::GENERATE_ENV`]).
//!
//! A gate built from the base revision, as CI should build it for `--base`
//! (docs/threat-model.md), holds the base's code: its own registry would test the base, not
//! the patch. Build the patch's xtask too (it is the patch's code, like any oracle: give the
//! job no secrets) and pass it as [`run::Context::rust_runner`] (`gate --rust-runner
//! BINARY`): the Rust properties' inputs and runs then come from that binary, and the gate's
//! decision from the base's. Without it, `--base` reports a warning
//! (`patch.rust_properties_of_this_build`).
//!
//! # Snapshot tests
//!
//! Every rendering of a [`report::Report`] is deterministic for the same repository once
//! three inputs are fixed: `now` ([`run::Context::with_now`]; it dates pins and judges
//! freeze rows), the core count that `jobs` defaults to (the `cores` of
//! [`config::Settings::resolve`], shown in the settings block) and the wall times, which
//! [`report::Report::clear_durations`] sets to zero. Paths are relative to the root, lists
//! are sorted, and nothing else reads the clock. Text that oracles and generators print (a
//! stderr line a note quotes) is theirs. [`report::Report`] is `serde::Serialize` as the
//! JSON report ([`render::json`]), so `insta::assert_json_snapshot!(report, {
//! ".summary.duration_ms" => "[ms]", ".fixtures[].duration_ms" => "[ms]",
//! ".campaigns[].duration_ms" => "[ms]" })` (insta's `redactions` feature) works too. The
//! gate pins new failures under `fixtures/` of its root, so run it on a copy:
//!
//! ```no_run
//! use freezegate_gate::config::{Config, RunOverrides, Settings};
//! use freezegate_gate::render::{self, Style};
//! use freezegate_gate::rust_prop::Registry;
//! use freezegate_gate::{Timestamp, run};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // A copy of a repository with a `freezegate.toml`, made by the test.
//! let root = std::path::PathBuf::from("target/snapshot-repo");
//! let registry = Registry::new();
//! // A fixed core count, not the machine's: `jobs` is in the settings block.
//! let settings = Settings::resolve(Config::load(&root)?, &RunOverrides::default(), 2)?;
//! let now: Timestamp = "2026-09-17T12:00:00Z".parse()?;
//! let ctx = run::Context::new(root, &registry, "the-patch-id".to_owned()).with_now(now);
//! let mut report = run::run(&settings, &ctx)?;
//! report.decide();
//! report.clear_durations();
//! let body = render::body_text(&report, Style { color: false });
//! insta::assert_snapshot!("text", render::settings_text(&report.settings) + &body);
//! insta::assert_snapshot!("junit", render::junit(&report));
//! insta::assert_snapshot!("github", render::github(&report));
//! insta::assert_json_snapshot!("json", report);
//! # Ok(())
//! # }
//! ```
//!
//! # Invariants
//!
//! The gate owns the file system, git and policy; the crates below it receive them as
//! parameters. It reads the clock in one place ([`run::clock_now`]) and the environment only
//! through [`config::RunOverrides::from_env`], whose caller passes the lookup. A pinned
//! fixture's files are never rewritten. Every override of the signed policy is listed in the
//! settings block of the report.
//!
//! # Platforms
//!
//! Running oracles needs the Linux-only process runners of `freezegate-replay`, so
//! [`classify`], [`demo`], [`oracles`], [`process`] and [`run`] exist only on
//! `target_os = "linux"`. The configuration, the report model, its renderers and schema, the
//! Rust property registry and the patch checks build on every target.

#![cfg_attr(not(test), warn(clippy::unwrap_used, clippy::expect_used))]

#[cfg(target_os = "linux")]
pub mod classify;
pub mod config;
#[cfg(target_os = "linux")]
pub mod demo;
pub mod diffs;
#[cfg(target_os = "linux")]
pub mod freeze;
pub mod integrity;
#[cfg(target_os = "linux")]
pub mod oracles;
#[cfg(unix)]
pub mod outputs;
pub mod patch;
#[cfg(target_os = "linux")]
pub mod process;
pub mod render;
pub mod report;
#[cfg(target_os = "linux")]
pub mod run;
pub mod rust_prop;
pub mod schema;

pub use freezegate_canon;
/// Prints an error with its causes on one line (`a: b: c`), from `freezegate-canon`.
pub use freezegate_canon::ErrorChain;
/// The `serde` of [`freezegate_canon::to_value`] and the Rust properties' input types
/// (`freezegate_canon::serde`).
pub use freezegate_canon::serde;
pub use freezegate_ledger;
pub use freezegate_ledger::Timestamp;
/// The date-time crate of [`Timestamp::from_datetime`] and [`Timestamp::datetime`] (the
/// ledger's re-export), so that a user needs one dependency.
pub use freezegate_ledger::time;
pub use freezegate_replay;
pub use freezegate_shrink;
pub use proptest;
