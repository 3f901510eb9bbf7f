//! Labels of single runs and the verdict of a label list (SPEC §6).

use std::fmt;

use serde::{Deserialize, Serialize};

/// The outcome of one run of an oracle on one input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Label {
    /// The property held (oracle exit 0).
    AssertPass,
    /// The property failed (oracle exit 1).
    AssertFail,
    /// The run was still going at its deadline and was killed.
    Timeout,
    /// The harness broke: any other exit code, death by signal, or a failure to start.
    HarnessError,
}

impl Label {
    /// The label's name as written in reports and the ledger (`assert_pass`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Label::AssertPass => "assert_pass",
            Label::AssertFail => "assert_fail",
            Label::Timeout => "timeout",
            Label::HarnessError => "harness_error",
        }
    }

    /// Parses a label name; `None` for anything but the four names.
    pub fn from_name(name: &str) -> Option<Label> {
        match name {
            "assert_pass" => Some(Label::AssertPass),
            "assert_fail" => Some(Label::AssertFail),
            "timeout" => Some(Label::Timeout),
            "harness_error" => Some(Label::HarnessError),
            _ => None,
        }
    }

    /// Whether the label says the infrastructure, not the property, decided the run.
    pub fn is_infra(self) -> bool {
        matches!(self, Label::Timeout | Label::HarnessError)
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a fixed-length label list means (SPEC §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The list does not have the fixed length N (or is empty).
    RejectMalformed,
    /// Some run timed out or broke: the runner owners' queue, never the ledger.
    InfraQueue,
    /// Every run failed: a stable regression; the patch is blocked.
    BlockPatch,
    /// Every run passed: the failure did not reproduce.
    NotReproduced,
    /// Passes and fails, nothing else: a flicker a human may freeze.
    FreezeEligible,
}

impl Verdict {
    /// The verdict's name (`block_patch`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::RejectMalformed => "reject_malformed",
            Verdict::InfraQueue => "infra_queue",
            Verdict::BlockPatch => "block_patch",
            Verdict::NotReproduced => "not_reproduced",
            Verdict::FreezeEligible => "freeze_eligible",
        }
    }

    /// The seed-level status of a verdict, where it has one.
    pub fn status(self) -> Option<SeedStatus> {
        match self {
            Verdict::BlockPatch => Some(SeedStatus::StableFail),
            Verdict::NotReproduced => Some(SeedStatus::StablePass),
            Verdict::FreezeEligible => Some(SeedStatus::Flicker),
            Verdict::RejectMalformed | Verdict::InfraQueue => None,
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The seed-level status names of SPEC §6.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SeedStatus {
    /// Every replay failed (= [`Verdict::BlockPatch`]).
    StableFail,
    /// Every replay passed (= [`Verdict::NotReproduced`]).
    StablePass,
    /// Passes and fails (= [`Verdict::FreezeEligible`]).
    Flicker,
}

impl SeedStatus {
    /// The status's name (`stable_fail`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            SeedStatus::StableFail => "stable_fail",
            SeedStatus::StablePass => "stable_pass",
            SeedStatus::Flicker => "flicker",
        }
    }
}

impl fmt::Display for SeedStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The verdict of `labels` for a replay count `n` fixed before the run (SPEC §6), in this
/// order: `reject_malformed` unless there are exactly `n` labels (and `n > 0`); then
/// `infra_queue` if any label is a timeout or harness error; `block_patch` if all failed;
/// `not_reproduced` if all passed; otherwise `freeze_eligible`.
pub fn verdict(labels: &[Label], n: usize) -> Verdict {
    if n == 0 || labels.len() != n {
        return Verdict::RejectMalformed;
    }
    if labels.iter().any(|l| l.is_infra()) {
        return Verdict::InfraQueue;
    }
    if labels.iter().all(|&l| l == Label::AssertFail) {
        Verdict::BlockPatch
    } else if labels.iter().all(|&l| l == Label::AssertPass) {
        Verdict::NotReproduced
    } else {
        Verdict::FreezeEligible
    }
}
