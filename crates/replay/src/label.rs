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

    /// One letter for the label, as reports write a run of labels: `P` pass, `F` fail,
    /// `T` timeout, `E` harness error.
    ///
    /// ```
    /// use freezegate_replay::Label;
    /// let letters: String = [Label::AssertFail, Label::AssertPass, Label::Timeout]
    ///     .iter()
    ///     .map(|l| l.letter())
    ///     .collect();
    /// assert_eq!(letters, "FPT");
    /// ```
    pub fn letter(self) -> char {
        match self {
            Label::AssertPass => 'P',
            Label::AssertFail => 'F',
            Label::Timeout => 'T',
            Label::HarnessError => 'E',
        }
    }
}

/// A run of labels as their letters ([`Label::letter`]): `FPFT`.
pub fn letters(labels: &[Label]) -> String {
    labels.iter().map(|l| l.letter()).collect()
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

/// The verdict of a label list given by name (a ledger row, a report), for a replay count
/// `n`: `reject_malformed` if a name is not one of the four labels or the length is not
/// `n`, otherwise as [`verdict`].
pub fn verdict_of_names<S: AsRef<str>>(names: &[S], n: usize) -> Verdict {
    let labels: Option<Vec<Label>> = names.iter().map(|s| Label::from_name(s.as_ref())).collect();
    match labels {
        Some(labels) => verdict(&labels, n),
        None => Verdict::RejectMalformed,
    }
}

/// The failure rates the detection power of a replay count is reported for.
pub const POWER_RATES: [f64; 3] = [0.05, 0.2, 0.5];

/// The chance that a flake failing independently with rate `p` shows both outcomes in `n`
/// runs, `1 - p^n - (1-p)^n`: how likely `n` replays are to call it `freeze_eligible` rather
/// than stable. Replays are a budget, not a proof: with `p = 0.05` and `n = 7` this is about
/// 0.30.
pub fn detection_power(p: f64, n: usize) -> f64 {
    let n = i32::try_from(n).unwrap_or(i32::MAX);
    let power = 1.0 - p.powi(n) - (1.0 - p).powi(n);
    power.clamp(0.0, 1.0)
}

/// Errors in setting up a replay plan.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// A replay count of zero.
    #[error("the replay count must be at least 1")]
    ZeroReplays,
    /// A replay count over [`MAX_REPLAYS`].
    #[error("a replay count of {n} is over the most a plan allows, {MAX_REPLAYS}")]
    TooManyReplays {
        /// The count asked for.
        n: usize,
    },
    /// A label list whose length is not the plan's replay count.
    #[error("{got} labels for a plan of {expected} replays")]
    WrongLength {
        /// The plan's replay count.
        expected: usize,
        /// The list's length.
        got: usize,
    },
}

/// The most replays a plan allows: far more than any verdict needs (the detection power of
/// 10 000 replays is 1 for any flicker rate of interest), and few enough that the per-run
/// bookkeeping of a plan is allocated up front without question.
pub const MAX_REPLAYS: usize = 10_000;

/// A replay count `n` (1 to [`MAX_REPLAYS`]) and a seed, fixed before the runs (SPEC §6). Label lists
/// are checked against it once ([`ReplayPlan::labels`]), so a [`LabelList`] always has the
/// plan's length and its verdict is never `reject_malformed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ReplayPlan {
    n: usize,
    seed: u64,
}

impl ReplayPlan {
    /// A plan of `n` replays under `seed`.
    pub fn new(n: usize, seed: u64) -> Result<ReplayPlan, PlanError> {
        if n == 0 {
            return Err(PlanError::ZeroReplays);
        }
        if n > MAX_REPLAYS {
            return Err(PlanError::TooManyReplays { n });
        }
        Ok(ReplayPlan { n, seed })
    }

    /// The replay count N.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The seed every replay gets.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Accepts a label list of exactly this plan's length.
    pub fn labels(&self, labels: Vec<Label>) -> Result<LabelList, PlanError> {
        if labels.len() != self.n {
            return Err(PlanError::WrongLength {
                expected: self.n,
                got: labels.len(),
            });
        }
        Ok(LabelList { labels })
    }

    /// The verdict of any label list under this plan (`reject_malformed` for a wrong
    /// length): total, like [`verdict`].
    pub fn verdict(&self, labels: &[Label]) -> Verdict {
        verdict(labels, self.n)
    }

    /// The detection power of this plan's N for each of [`POWER_RATES`].
    pub fn detection_power(&self) -> [(f64, f64); 3] {
        POWER_RATES.map(|p| (p, detection_power(p, self.n)))
    }
}

/// A label list of the length its [`ReplayPlan`] fixed, in run-index order.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LabelList {
    labels: Vec<Label>,
}

impl LabelList {
    /// The labels, in run-index order.
    pub fn as_slice(&self) -> &[Label] {
        &self.labels
    }

    /// The verdict; never `reject_malformed`, since the length was checked.
    pub fn verdict(&self) -> Verdict {
        verdict(&self.labels, self.labels.len())
    }

    /// The labels' names, in run-index order (as a ledger row's `replays`).
    pub fn names(&self) -> Vec<&'static str> {
        self.labels.iter().map(|l| l.as_str()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const ALL: [Label; 4] = [
        Label::AssertPass,
        Label::AssertFail,
        Label::Timeout,
        Label::HarnessError,
    ];

    fn label() -> impl Strategy<Value = Label> {
        proptest::sample::select(ALL.to_vec())
    }

    fn labels(max: usize) -> impl Strategy<Value = Vec<Label>> {
        proptest::collection::vec(label(), 1..max)
    }

    /// The verdict written out from SPEC §6's table, as an oracle for the function.
    fn by_the_table(labels: &[Label]) -> Verdict {
        let count = |l: Label| labels.iter().filter(|&&x| x == l).count();
        if count(Label::Timeout) + count(Label::HarnessError) > 0 {
            Verdict::InfraQueue
        } else if count(Label::AssertFail) == labels.len() {
            Verdict::BlockPatch
        } else if count(Label::AssertPass) == labels.len() {
            Verdict::NotReproduced
        } else {
            Verdict::FreezeEligible
        }
    }

    #[test]
    fn every_verdict_has_an_example() {
        use Label::*;
        assert_eq!(verdict(&[AssertFail; 7], 7), Verdict::BlockPatch);
        assert_eq!(verdict(&[AssertPass; 7], 7), Verdict::NotReproduced);
        assert_eq!(
            verdict(&[AssertPass, AssertFail], 2),
            Verdict::FreezeEligible
        );
        assert_eq!(verdict(&[AssertFail, Timeout], 2), Verdict::InfraQueue);
        assert_eq!(verdict(&[HarnessError], 1), Verdict::InfraQueue);
        assert_eq!(verdict(&[AssertFail; 6], 7), Verdict::RejectMalformed);
        assert_eq!(verdict(&[], 0), Verdict::RejectMalformed);
        assert_eq!(Verdict::BlockPatch.status(), Some(SeedStatus::StableFail));
        assert_eq!(
            Verdict::NotReproduced.status(),
            Some(SeedStatus::StablePass)
        );
        assert_eq!(Verdict::FreezeEligible.status(), Some(SeedStatus::Flicker));
        assert_eq!(Verdict::InfraQueue.status(), None);
    }

    #[test]
    fn names_round_trip_through_serde() -> Result<(), freezegate_canon::ValueError> {
        for l in ALL {
            let v = freezegate_canon::to_value(&l)?;
            assert_eq!(v, freezegate_canon::Value::String(l.as_str().to_owned()));
            assert_eq!(Label::from_name(l.as_str()), Some(l));
        }
        Ok(())
    }

    #[test]
    fn power_of_seven_replays() {
        let p = |rate| (detection_power(rate, 7) * 1e4).round() / 1e4;
        assert_eq!(p(0.05), 0.3017);
        assert_eq!(p(0.2), 0.7903);
        assert_eq!(p(0.5), 0.9844);
        assert_eq!(detection_power(0.5, 1), 0.0);
    }

    proptest! {
        #[test]
        fn verdict_follows_the_table(list in labels(20)) {
            prop_assert_eq!(verdict(&list, list.len()), by_the_table(&list));
        }

        #[test]
        fn verdict_is_invariant_under_permutation(list in labels(20), seed in any::<u64>()) {
            use rand_core::{RngCore, SeedableRng};
            let mut shuffled = list.clone();
            let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
            for i in (1..shuffled.len()).rev() {
                let j = (rng.next_u64() % (i as u64 + 1)) as usize;
                shuffled.swap(i, j);
            }
            prop_assert_eq!(verdict(&list, list.len()), verdict(&shuffled, shuffled.len()));
        }

        #[test]
        fn any_infra_label_gives_infra_queue(
            list in labels(20),
            infra in proptest::sample::select(vec![Label::Timeout, Label::HarnessError]),
            at in any::<proptest::sample::Index>(),
        ) {
            let mut list = list;
            let i = at.index(list.len() + 1);
            list.insert(i, infra);
            prop_assert_eq!(verdict(&list, list.len()), Verdict::InfraQueue);
        }

        #[test]
        fn wrong_length_is_malformed(list in labels(20), n in 0usize..25) {
            prop_assume!(n != list.len());
            prop_assert_eq!(verdict(&list, n), Verdict::RejectMalformed);
            let plan = ReplayPlan::new(n.max(1), 1);
            if let Ok(plan) = plan && plan.n() != list.len() {
                prop_assert_eq!(plan.verdict(&list), Verdict::RejectMalformed);
                prop_assert!(plan.labels(list.clone()).is_err());
            }
        }

        #[test]
        fn checked_lists_never_reject(list in labels(20), seed in any::<u64>()) {
            let plan = ReplayPlan::new(list.len(), seed).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let checked = plan.labels(list.clone()).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_ne!(checked.verdict(), Verdict::RejectMalformed);
            prop_assert_eq!(checked.verdict(), verdict(&list, list.len()));
        }

        #[test]
        fn unknown_names_are_malformed(
            list in labels(10),
            junk in "[a-z_]{0,12}",
            at in any::<proptest::sample::Index>(),
        ) {
            prop_assume!(Label::from_name(&junk).is_none());
            let mut names: Vec<String> = list.iter().map(|l| l.as_str().to_owned()).collect();
            prop_assert_eq!(verdict_of_names(&names, names.len()), verdict(&list, list.len()));
            let i = at.index(names.len());
            names[i] = junk;
            prop_assert_eq!(verdict_of_names(&names, names.len()), Verdict::RejectMalformed);
        }

        #[test]
        fn power_is_a_probability_and_grows_with_n(p in 0.001f64..0.999, n in 1usize..60) {
            let a = detection_power(p, n);
            let b = detection_power(p, n + 1);
            prop_assert!((0.0..=1.0).contains(&a));
            prop_assert!(b + 1e-12 >= a);
        }
    }
}
