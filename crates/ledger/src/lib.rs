//! The freeze ledger of freezegate (`freeze/ledger.json`, schema `freezegate-ledger-v1`):
//! typed rows, two-stage validation that reports every problem at once, expiry, lookup of
//! the row that freezes a run, diffs, deterministic rendering and crash-safe writes.
//!
//! A freeze row excuses one property's pinned, flickering fixture (keyed by the fixture's
//! digest, never by a test name) for a bounded time, vouched for by a human owner. The crate
//! never reads the clock or the environment: policy values ([`Policy`]) and `now` are
//! parameters, and fixture files are reached through a lookup the caller passes in
//! ([`FixtureLookup`]).
//!
//! - Validation ([`check`]) is two-stage: a JSON syntax error stops with its line and column;
//!   then every schema problem (unknown or missing field, wrong shape) and every rule
//!   problem (replays, env class, owner, timestamps, duplicates, fixture hashes) of every
//!   row is collected into one [`Report`], each [`Problem`] naming row, fixture id and field,
//!   and, for a ledger read from text, the line and column of the field's key.
//! - Rendering ([`Ledger::render`]) sorts rows by [`Key`], writes each row's keys in the fixed
//!   order [`ROW_FIELDS`], two-space indent, trailing newline; render ∘ parse is the identity
//!   on rendered ledgers.
//! - Every type a test would snapshot ([`Ledger`], [`Row`], [`Diff`], [`Problem`]) is
//!   `serde::Serialize` as the JSON the file or `ledger check` holds, for insta's snapshot
//!   macros and their redactions.
//! - Writing ([`update`]) takes an exclusive lock on `freeze/.ledger.lock`, re-reads the
//!   ledger, applies the change and replaces the file atomically; a ledger that is a symbolic
//!   link is written through to its target, with the lock beside the target.
//!
//! # Main items
//!
//! - [`read`] loads `freeze/ledger.json` ([`LEDGER_PATH`]) from disk (a missing file is an
//!   empty ledger); [`Ledger::from_slice`] reads bytes; [`check`] and [`check_and_load`]
//!   validate with [`Checks`] ([`Policy`], `now` as a [`Timestamp`], [`AllowedSigners`], a
//!   [`FixtureLookup`]) into a [`Report`] of [`Problem`]s.
//! - [`Ledger`] and its [`Row`]s ([`Key`], [`EnvClass`], [`Seed`]): [`Ledger::active_row`],
//!   [`Ledger::expiring`], [`Ledger::diff`] ([`Diff`]), [`Ledger::render`].
//! - [`freeze_row`] and [`precheck`] decide a freeze ([`Refusal`] when it is refused);
//!   [`update`] writes.
//! - The types of a [`Row`]'s fields are re-exported ([`PropertyId`], [`FixtureId`],
//!   [`Digest`], [`Canonicalization`], [`Label`], and the crates [`freezegate_canon`] and
//!   [`freezegate_replay`]), and so is the [`time`] crate whose `OffsetDateTime` a
//!   [`Timestamp`] is made from ([`Timestamp::from_datetime`]) and gives back
//!   ([`Timestamp::datetime`]), so this one dependency is enough.
//! - [`Error`] keeps its cause behind [`std::error::Error::source`] (a syntax error's line
//!   and column under a [`Error::File`]); print it with [`ErrorChain`] to show the causes.
//!
//! # Snapshot tests
//!
//! In a repository that keeps its ledger under review, with `insta` (feature `json`); the
//! repository's `docs/ledger.md` has the rest of the recipe:
//!
//! ```no_run
//! use std::path::Path;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let head = freezegate_ledger::read(Path::new(freezegate_ledger::LEDGER_PATH))?;
//! insta::assert_json_snapshot!(head.rows());
//! // What a patch changed, by key (`base`: the ledger at the base revision):
//! # let base = freezegate_ledger::Ledger::new();
//! insta::assert_json_snapshot!(base.diff(&head));
//! # Ok(())
//! # }
//! ```
//!
//! With insta's `redactions` feature,
//! `insta::assert_json_snapshot!(ledger, { ".rows[].expires_at" => "[expires_at]" })` hides
//! what changes on every renewal.
//!
//! # Example
//!
//! ```
//! use freezegate_ledger::{check, AllowedSigners, Checks, FixtureFile, Ledger, Policy, Timestamp};
//! use freezegate_ledger::{FixtureId, PropertyId};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let text = br#"{"schema": "freezegate-ledger-v1", "rows": [{"nodeid": "tests/test_tax.py::test_total"}]}"#;
//! let signers = AllowedSigners::parse("alice@example.com ssh-ed25519 AAAAC3Nza\n")?;
//! let no_fixtures = |_: &PropertyId, _: FixtureId| FixtureFile::Missing;
//! let (policy, now) = (Policy::default(), "2026-09-17T12:00:00Z".parse::<Timestamp>()?);
//! let checks = Checks::new(&policy, now, &signers, &no_fixtures);
//! let report = check(text, &checks)?;
//! assert!(report.fails(false));
//! // Besides the missing fields, the row is told why a test name cannot key it.
//! let nodeid = report
//!     .problems
//!     .iter()
//!     .find(|p| p.field.as_deref() == Some("nodeid"))
//!     .ok_or("no problem about the nodeid field")?;
//! assert_eq!(
//!     nodeid.in_file("freeze/ledger.json").to_string(),
//!     "error: freeze/ledger.json: line 1, column 46: row 0 (no fixture id), nodeid: \
//!      rows must be keyed by a fixture digest, not a test name"
//! );
//!
//! // A missing ledger is empty; an empty file is a syntax error, never an empty ledger.
//! assert_eq!(Ledger::from_slice(b"").unwrap_err().syntax().map(|e| e.line), Some(1));
//! assert!(Ledger::new().render().ends_with("\"rows\": []\n}\n"));
//! # Ok(())
//! # }
//! ```

#![cfg_attr(not(test), warn(clippy::unwrap_used, clippy::expect_used))]

mod check;
mod error;
mod freeze;
mod ledger;
mod list;
mod locate;
mod policy;
mod row;
mod scan;
mod schema;
mod ser;
mod signers;
mod stamp;
mod store;

pub use check::{
    CHECK_SCHEMA, Checks, FixtureFile, FixtureLookup, Problem, Recorded, Report, Rule, Severity,
    shown,
};
pub use error::Error;
pub use freeze::{
    FREEZE_SCHEMA, FreezeOutcome, FreezeRequest, LIFT_SCHEMA, Refusal, freeze_row, precheck,
    renewable,
};
pub use ledger::{Diff, Ledger, check, check_and_load};
pub use list::{LIST_SCHEMA, Listed, expiry_text, list_json, list_text};
pub use policy::Policy;
pub use row::{EnvClass, Key, ROW_FIELDS, Row, SCHEMA, Seed};
pub use schema::{json_schema, json_schema_text};
pub use signers::AllowedSigners;
pub use stamp::Timestamp;
/// The date-time crate of [`Timestamp::from_datetime`] and [`Timestamp::datetime`],
/// re-exported so that a user needs one dependency and gets the version this crate was built
/// with. Its macros (`datetime!`) expand to paths of a `time` dependency of your own, so they
/// need one; the types and functions do not.
pub use time;

/// The canonical form crate whose ids key the rows, re-exported so that a user needs one
/// dependency and gets the version this crate was built with.
pub use freezegate_canon;
/// Prints an error with its causes on one line (`a: b: c`), from `freezegate-canon`.
pub use freezegate_canon::ErrorChain;
pub use freezegate_canon::{Canonicalization, Digest, FixtureId, PropertyId, Value};
/// The replay crate whose [`Label`]s a row records, re-exported likewise.
pub use freezegate_replay;
pub use freezegate_replay::Label;
pub use store::{
    LEDGER_PATH, LOCK_FILE_NAME, SIGNERS_PATH, check_writable, leftover_temporaries, lock_path,
    read, read_bytes, update, update_waiting, write_target,
};
