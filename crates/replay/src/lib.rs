//! Replays for freezegate: run a pinned fixture N times on an oracle and turn the label list
//! into a verdict (SPEC §6).

#![cfg_attr(not(test), warn(clippy::unwrap_used, clippy::expect_used))]

mod label;

pub use label::{Label, SeedStatus, Verdict, verdict};
