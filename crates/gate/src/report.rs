//! The gate's report: one data model, several renderers (text, JSON, JUnit, GitHub).
//!
//! The JSON form is a contract: `format` is [`REPORT_FORMAT`], keys appear in the order of
//! the struct fields below, lists are in a deterministic order (fixtures by property then
//! fixture id; campaigns in `freezegate.toml` order), and `docs/gate-report.schema.json`
//! is its JSON Schema (a test keeps it current). New fields may be added in a minor
//! version; removing or changing one changes the format name. So that adding one breaks no
//! caller, every struct and enum here is `#[non_exhaustive]`: read their fields and match
//! with a `_` arm; the gate builds them.

use serde::Serialize;

use freezegate_replay::{Label, Verdict};

/// The `format` of the JSON report.
pub const REPORT_FORMAT: &str = "freezegate-gate-report-v1";

/// Exit codes of SPEC §8.
pub mod exit {
    /// Nothing blocks.
    pub const OK: u8 = 0;
    /// Blocked.
    pub const BLOCKED: u8 = 1;
    /// Infra only: timeouts or harness errors, nothing else blocks.
    pub const INFRA: u8 = 2;
    /// Bad input, usage or configuration.
    pub const USAGE: u8 = 3;
}

/// The whole report of one gate run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Report {
    /// Always [`REPORT_FORMAT`].
    pub format: &'static str,
    /// The effective settings of the run.
    pub settings: SettingsView,
    /// One entry per pinned fixture replayed, sorted by property then fixture id. A fixture
    /// file with an integrity finding is not replayed and has no entry: the blocking finding
    /// is all it gets.
    pub fixtures: Vec<FixtureResult>,
    /// One entry per property campaign, in file order.
    pub campaigns: Vec<CampaignResult>,
    /// Problems found outside replays: configuration, ledger, fixture integrity, patch
    /// integrity. Sorted by kind, then where.
    pub findings: Vec<Finding>,
    /// Ledger rows that have expired (they excuse nothing).
    pub expired_rows: Vec<FreezeInfo>,
    /// With `--base`: what the patch changed in the ledger and the settings.
    pub patch: Option<PatchSection>,
    /// The decision.
    pub decision: Decision,
    /// Counts for the summary line.
    pub summary: Summary,
}

/// The settings block: what a reviewer must see next to the patch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SettingsView {
    /// Seed of generators and replays.
    pub seed: u64,
    /// Policy replay count in force.
    pub replays: usize,
    /// Parallel runs.
    pub jobs: usize,
    /// This runner's env class.
    pub env_class: String,
    /// This runner's id.
    pub runner_id: String,
    /// The clock reading the run judged against (UTC).
    pub now: String,
    /// The candidate the run judged (`--patch-id`, default the full SHA of `HEAD`): the
    /// `patch_id` of fixtures its campaigns pin and of its infra items.
    pub patch_id: String,
    /// Per property: cases, deadline, replays, oracle kind.
    pub properties: Vec<PropertySettings>,
    /// Every setting that differs from `freezegate.toml`, as `key = value (file: ...; source)`.
    pub overrides: Vec<String>,
    /// Ledger rows that excuse something now.
    pub ledger_active: usize,
    /// Ledger rows that have expired.
    pub ledger_expired: usize,
    /// The binary that runs the Rust properties when it is not the gate's own
    /// (`gate --rust-runner`), as given.
    pub rust_runner: Option<String>,
}

/// One property's effective settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PropertySettings {
    /// The property id.
    pub id: String,
    /// `command`, `worker` or `rust`.
    pub oracle: String,
    /// Campaign size (0 without a generator).
    pub cases: u32,
    /// Per-run deadline.
    pub timeout_ms: u64,
    /// Replay count.
    pub replays: usize,
}

/// What a fixture's replays mean for the merge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FixtureStatus {
    /// Every replay passed: the regression stays fixed.
    Pass,
    /// Every replay failed: blocks (also when a freeze row exists: it excused flicker, not a
    /// regression).
    Regression,
    /// Passes and fails with no active freeze row: blocks.
    Flicker,
    /// Passes and fails, excused by an active freeze row: runs, but has no vote.
    Frozen,
    /// A replay timed out or broke: infra queue.
    Infra,
}

impl FixtureStatus {
    /// The status's name.
    pub fn as_str(self) -> &'static str {
        match self {
            FixtureStatus::Pass => "pass",
            FixtureStatus::Regression => "regression",
            FixtureStatus::Flicker => "flicker",
            FixtureStatus::Frozen => "frozen",
            FixtureStatus::Infra => "infra",
        }
    }

    /// Whether this status blocks the merge.
    pub fn blocks(self) -> bool {
        matches!(self, FixtureStatus::Regression | FixtureStatus::Flicker)
    }
}

/// The name [`FixtureStatus::as_str`] gives.
impl std::fmt::Display for FixtureStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A freeze row as the report shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct FreezeInfo {
    /// The property.
    pub property_id: String,
    /// The fixture id.
    pub fixture_id: String,
    /// The env class of the row.
    pub env_class: String,
    /// The human who vouches for it.
    pub owner: String,
    /// The named cause of non-determinism.
    pub reason: String,
    /// When it stops excusing anything (UTC).
    pub expires_at: String,
}

/// The replays of one pinned fixture.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct FixtureResult {
    /// The property.
    pub property_id: String,
    /// The fixture id (file name).
    pub fixture_id: String,
    /// The fixture's path relative to the repository root.
    pub path: String,
    /// The labels in run-index order.
    pub labels: Vec<Label>,
    /// The verdict of the labels.
    pub verdict: Verdict,
    /// What it means for the merge.
    pub status: FixtureStatus,
    /// The active freeze row that covers it, if any.
    pub freeze: Option<FreezeInfo>,
    /// A note for people: "freeze can be lifted", why a flicker is not frozen, how an infra
    /// run ended and the last line its oracle wrote to stderr.
    pub note: Option<String>,
    /// The failure signature of the first failing replay, if any.
    pub signature: Option<String>,
    /// Wall time of its replays, from the first one starting to the last one ending, in
    /// milliseconds (redact in snapshots). Never more than the run's.
    pub duration_ms: u64,
}

/// What a property's campaign found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CampaignStatus {
    /// Every case passed.
    Pass,
    /// A case failed: shrunk, pinned and classified (see `action`). Blocks unless dropped as
    /// not reproduced or already pinned.
    Failure,
    /// A case or the generator timed out or broke, and no case failed (or the only failures
    /// could not be classified): infra queue.
    Infra,
    /// The property has no generator: fixtures only.
    NoGenerator,
}

impl CampaignStatus {
    /// The status's name, as the JSON report spells it (`no_generator`).
    pub fn as_str(self) -> &'static str {
        match self {
            CampaignStatus::Pass => "pass",
            CampaignStatus::Failure => "failure",
            CampaignStatus::Infra => "infra",
            CampaignStatus::NoGenerator => "no_generator",
        }
    }
}

/// The name [`CampaignStatus::as_str`] gives.
impl std::fmt::Display for CampaignStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One property's campaign.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct CampaignResult {
    /// The property.
    pub property_id: String,
    /// Cases generated.
    pub cases: u32,
    /// Cases looked at, in the generator's order: all of them, unless the first failing case
    /// blocks, then the cases up to and including it. Cases run `jobs * 4` at a time, but
    /// outcomes past that case are not counted, so the count never depends on `jobs`.
    pub cases_run: u32,
    /// Outcome.
    pub status: CampaignStatus,
    /// Whether the campaign blocks the merge ([`CampaignResult::blocks`]), as
    /// [`Report::decide`] sets it: a `failure` that was dropped as not reproduced or whose
    /// minimal input is already pinned does not, so that a reader of the JSON report needs
    /// no rule of its own to tell them apart.
    pub blocking: bool,
    /// Index of the failing case reported below: the first one that blocks, else the first
    /// one shrunk.
    pub failing_case: Option<u32>,
    /// The classify action taken on the failure (`pin_fixture`, ...).
    pub action: Option<String>,
    /// The pinned (or would-be) fixture's id.
    pub fixture_id: Option<String>,
    /// The minimal failing input, canonical: the input of the fixture `fixture_id` names,
    /// which for `pin_origin` is the failing case itself, pinned as it is.
    pub minimal: Option<String>,
    /// Labels of that input's replays.
    pub labels: Vec<Label>,
    /// The failure signature the reported case failed with (its first run's; the shrinker
    /// keeps it, so the minimal input fails with it too), if the oracle gave one.
    pub signature: Option<String>,
    /// Whether the fixture was already pinned before this run.
    pub already_pinned: bool,
    /// Whether the minimal fixture is trivial (the oracle may be too weak).
    pub trivial: bool,
    /// Oracle calls spent shrinking, over every failing case shrunk.
    pub oracle_calls: u64,
    /// Failing cases shrunk and classified: the first failing case, and while the failures
    /// shrunk so far do not block (already pinned, not reproduced, infra), further ones, at
    /// most [`crate::run::MAX_CAMPAIGN_SHRINKS`].
    pub shrinks: u32,
    /// A note for people.
    pub note: Option<String>,
    /// The campaign's infra item, for the runner owners' queue: the first case that timed out
    /// or broke the harness, a generator that failed, or a failing case whose replays did.
    /// Set whenever there is one, also next to a failure (which blocks on its own).
    pub infra: Option<String>,
    /// Wall time in milliseconds (redact in snapshots).
    pub duration_ms: u64,
}

impl CampaignResult {
    /// Whether the campaign blocks the merge: a failure that was not dropped as not
    /// reproduced and whose minimal input is not already pinned (a pinned fixture's own
    /// replays decide for it, frozen or not).
    pub fn blocks(&self) -> bool {
        self.status == CampaignStatus::Failure
            && !self.already_pinned
            && self.action.as_deref() != Some("drop_nonreproducible")
    }
}

/// Where a finding comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FindingKind {
    /// `freezegate.toml`.
    Config,
    /// `freeze/ledger.json` or `freeze/allowed_signers`.
    Ledger,
    /// A fixture, origin or meta file, or a fixture folder without a property.
    Integrity,
    /// A patch check (signatures, gaming moves, weakening overrides).
    Patch,
    /// A campaign that ran fewer cases than the property asks for.
    Campaign,
}

impl FindingKind {
    /// The kind's name, as the JSON report spells it (`integrity`).
    pub fn as_str(self) -> &'static str {
        match self {
            FindingKind::Config => "config",
            FindingKind::Ledger => "ledger",
            FindingKind::Integrity => "integrity",
            FindingKind::Patch => "patch",
            FindingKind::Campaign => "campaign",
        }
    }
}

/// The name [`FindingKind::as_str`] gives.
impl std::fmt::Display for FindingKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A problem found outside replays.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[non_exhaustive]
pub struct Finding {
    /// Where it comes from.
    pub kind: FindingKind,
    /// Whether it blocks (else a warning).
    pub blocking: bool,
    /// The file (relative to the root), when there is one.
    pub file: Option<String>,
    /// The 1-based line, when there is one.
    pub line: Option<u64>,
    /// The 1-based column (in characters) on that line, when the finding points at a place
    /// in a JSON file: a ledger problem's key, the byte where a fixture stops parsing.
    pub column: Option<u64>,
    /// A stable rule id, e.g. `ledger.owner` or `integrity.name`.
    pub rule: String,
    /// One sentence.
    pub message: String,
}

/// The outcome of the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Outcome {
    /// Nothing blocks.
    Pass,
    /// Something blocks the merge.
    Blocked,
    /// Only infra items (timeouts, harness errors).
    Infra,
}

/// The decision and its exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Decision {
    /// Pass, blocked or infra.
    pub outcome: Outcome,
    /// The exit code (SPEC §8).
    pub exit_code: u8,
}

/// Counts for the summary line.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[non_exhaustive]
pub struct Summary {
    /// Fixtures that fail every replay (frozen or not).
    pub regressions: usize,
    /// Flickering fixtures without an active freeze row.
    pub unfrozen_flickers: usize,
    /// Flickering fixtures excused by a freeze row (no vote).
    pub frozen: usize,
    /// Infra items: fixtures in the infra queue and campaigns with an infra item (also
    /// those whose failure blocks).
    pub infra: usize,
    /// Campaign failures that block (new fixtures).
    pub new_failures: usize,
    /// Blocking findings.
    pub blocking_findings: usize,
    /// Warnings.
    pub warnings: usize,
    /// Fixtures replayed.
    pub fixtures: usize,
    /// Replays run in all.
    pub replays: usize,
    /// Wall time of the whole run in milliseconds (redact in snapshots).
    pub duration_ms: u64,
}

impl Report {
    /// Sets every wall time of the report to zero: the run's, each fixture's and each
    /// campaign's `duration_ms`, the only values the gate itself changes between identical
    /// runs once `now` is fixed ([`crate::run::Context::with_now`]) and `jobs` is given
    /// (the `cores` of [`crate::config::Settings::resolve`]). For snapshot tests of the text,
    /// JUnit and GitHub renderings, where insta's redactions cannot reach (the summary line
    /// says `in 0.0 s`, JUnit's `time` attributes `0.000`); a serde snapshot of the report can
    /// redact the fields instead (`".campaigns[].duration_ms" => "[ms]"`).
    pub fn clear_durations(&mut self) {
        self.summary.duration_ms = 0;
        for fixture in &mut self.fixtures {
            fixture.duration_ms = 0;
        }
        for campaign in &mut self.campaigns {
            campaign.duration_ms = 0;
        }
    }

    /// Computes counts and the decision from the lists (`duration_ms` is kept).
    pub fn decide(&mut self) {
        let s = &mut self.summary;
        s.regressions = count(&self.fixtures, FixtureStatus::Regression);
        s.unfrozen_flickers = count(&self.fixtures, FixtureStatus::Flicker);
        s.frozen = count(&self.fixtures, FixtureStatus::Frozen);
        s.infra = count(&self.fixtures, FixtureStatus::Infra)
            + self.campaigns.iter().filter(|c| c.infra.is_some()).count();
        for c in &mut self.campaigns {
            c.blocking = c.blocks();
        }
        s.new_failures = self.campaigns.iter().filter(|c| c.blocking).count();
        s.blocking_findings = self.findings.iter().filter(|f| f.blocking).count();
        s.warnings = self.findings.iter().filter(|f| !f.blocking).count();
        s.fixtures = self.fixtures.len();
        s.replays = self.fixtures.iter().map(|f| f.labels.len()).sum();
        let blocked =
            s.regressions + s.unfrozen_flickers + s.new_failures + s.blocking_findings > 0;
        self.decision = if blocked {
            Decision {
                outcome: Outcome::Blocked,
                exit_code: exit::BLOCKED,
            }
        } else if s.infra > 0 {
            Decision {
                outcome: Outcome::Infra,
                exit_code: exit::INFRA,
            }
        } else {
            Decision {
                outcome: Outcome::Pass,
                exit_code: exit::OK,
            }
        };
    }

    /// The one summary line that ends the text report, e.g.
    /// `gate: blocked — 1 regression, 1 unfrozen flicker · 2 frozen (no vote) · 1 infra ·
    /// 31 fixtures × 7 replays in 4.1 s`.
    pub fn summary_line(&self) -> String {
        let s = &self.summary;
        let word = match self.decision.outcome {
            Outcome::Pass => "pass",
            Outcome::Blocked => "blocked",
            Outcome::Infra => "infra only",
        };
        let plural =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let mut blocking = Vec::new();
        if s.regressions > 0 {
            blocking.push(plural(s.regressions, "regression", "regressions"));
        }
        if s.unfrozen_flickers > 0 {
            blocking.push(plural(
                s.unfrozen_flickers,
                "unfrozen flicker",
                "unfrozen flickers",
            ));
        }
        if s.new_failures > 0 {
            blocking.push(plural(s.new_failures, "new failure", "new failures"));
        }
        if s.blocking_findings > 0 {
            blocking.push(plural(
                s.blocking_findings,
                "blocking finding",
                "blocking findings",
            ));
        }
        let mut parts = Vec::new();
        if !blocking.is_empty() {
            parts.push(blocking.join(", "));
        }
        if s.frozen > 0 {
            parts.push(format!("{} frozen (no vote)", s.frozen));
        }
        if s.infra > 0 {
            parts.push(format!("{} infra", s.infra));
        }
        if s.warnings > 0 {
            parts.push(plural(s.warnings, "warning", "warnings"));
        }
        let uniform = self
            .fixtures
            .first()
            .map(|f| f.labels.len())
            .filter(|n| self.fixtures.iter().all(|f| f.labels.len() == *n));
        let runs = match uniform {
            Some(n) => format!(
                "{} × {}",
                plural(s.fixtures, "fixture", "fixtures"),
                plural(n, "replay", "replays")
            ),
            None => format!(
                "{}, {}",
                plural(s.fixtures, "fixture", "fixtures"),
                plural(s.replays, "replay", "replays")
            ),
        };
        let secs = s.duration_ms as f64 / 1000.0;
        parts.push(format!("{runs} in {secs:.1} s"));
        format!("gate: {word} — {}", parts.join(" · "))
    }
}

fn count(fixtures: &[FixtureResult], status: FixtureStatus) -> usize {
    fixtures.iter().filter(|f| f.status == status).count()
}

/// What a patch changed, shown with `--base`: the commits judged, the ledger diff and the
/// settings diff between the base revision and the working tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PatchSection {
    /// The base revision as given.
    pub base: String,
    /// Commits of `base..HEAD` judged, merges included.
    pub commits: usize,
    /// Freeze rows added, removed or changed, by key.
    pub ledger_diff: Vec<LedgerChange>,
    /// Settings that differ between the base's `freezegate.toml` and the working tree's.
    pub settings_diff: Vec<SettingChange>,
}

/// One freeze row the patch adds, removes or changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct LedgerChange {
    /// `added`, `removed` or `changed`.
    pub change: String,
    /// The row's property.
    pub property_id: String,
    /// The row's fixture id.
    pub fixture_id: String,
    /// The row's seed.
    pub seed: String,
    /// The row's env class.
    pub env_class: String,
    /// The owner (the new one for a change).
    pub owner: String,
    /// The expiry (the new one for a change).
    pub expires_at: String,
    /// For a change, the fields that differ.
    pub fields: Vec<String>,
}

/// One setting that differs between the base revision and the working tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SettingChange {
    /// `policy.seed`, `property[tax.total].cases`, ...
    pub key: String,
    /// The value at the base (`null` when the setting did not exist).
    pub base: Option<String>,
    /// The value now (`null` when it was removed).
    pub head: Option<String>,
    /// Whether the change weakens the policy (other seed, fewer replays or cases, a longer
    /// deadline, a longer freeze, more env classes that may freeze, a property removed).
    pub weakens: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Statuses and actions print as the JSON report spells them.
    #[test]
    fn statuses_and_actions_display_as_the_report_spells_them() {
        assert_eq!(FixtureStatus::Regression.to_string(), "regression");
        assert_eq!(
            FixtureStatus::Frozen.to_string(),
            FixtureStatus::Frozen.as_str()
        );
        assert_eq!(
            crate::classify::Action::FreezeAfterPin.to_string(),
            "freeze_after_pin"
        );
        // The names are serde's: each as_str is what the JSON report writes.
        for status in [
            CampaignStatus::Pass,
            CampaignStatus::Failure,
            CampaignStatus::Infra,
            CampaignStatus::NoGenerator,
        ] {
            assert_eq!(
                serde_json::to_value(status).ok(),
                Some(serde_json::Value::from(status.to_string()))
            );
        }
        for kind in [
            FindingKind::Config,
            FindingKind::Ledger,
            FindingKind::Integrity,
            FindingKind::Patch,
            FindingKind::Campaign,
        ] {
            assert_eq!(
                serde_json::to_value(kind).ok(),
                Some(serde_json::Value::from(kind.to_string()))
            );
        }
    }
}
