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
//! [`render`], [`demo`]).
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
//! use freezegate_gate::rust_prop::{PROPERTY_SUBCOMMAND, Registry};
//! use proptest::prelude::*;
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
//! registry and `std::env::current_exe()` in [`run::Context`].
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
//! [`classify`], [`demo`], [`oracles`] and [`run`] exist only on `target_os = "linux"`. The
//! configuration, the report model, its renderers and schema, the Rust property registry and
//! the patch checks build on every target.

#![cfg_attr(not(test), warn(clippy::unwrap_used, clippy::expect_used))]

#[cfg(target_os = "linux")]
pub mod classify;
pub mod config;
#[cfg(target_os = "linux")]
pub mod demo;
pub mod diffs;
pub mod integrity;
#[cfg(target_os = "linux")]
pub mod oracles;
pub mod patch;
pub mod render;
pub mod report;
#[cfg(target_os = "linux")]
pub mod run;
pub mod rust_prop;
pub mod schema;
