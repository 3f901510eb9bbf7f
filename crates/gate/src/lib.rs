//! The freezegate gate: the promotion path of SPEC §1 as one CI check, and the patch
//! integrity checks of SPEC §9 step 2.

#![cfg_attr(not(test), warn(clippy::unwrap_used, clippy::expect_used))]

pub mod classify;
pub mod config;
pub mod demo;
pub mod oracles;
pub mod patch;
pub mod render;
pub mod report;
pub mod run;
pub mod rust_prop;
pub mod schema;
