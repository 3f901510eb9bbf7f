//! Replaying one candidate N times in parallel, and the report of it.

use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use freezegate_canon::{Digest, FixtureId, ValueError};
use serde::Serialize;

use crate::label::{LabelList, ReplayPlan, Verdict};
use crate::oracle::{DEFAULT_TIMEOUT, Oracle, RunContext, RunOutcome};

/// The `schema` of the JSON replay report.
pub const REPORT_SCHEMA: &str = "freezegate-replay-v1";

/// How a replay is run, apart from its plan: [`ReplayOptions::default`], then the `with_`
/// methods (the struct may gain fields, so it is not built by a struct expression outside
/// this crate).
///
/// ```
/// use std::time::Duration;
/// use freezegate_replay::ReplayOptions;
///
/// let options = ReplayOptions::default()
///     .with_jobs(2)
///     .with_timeout(Duration::from_secs(5))
///     .with_property_id("tax.total");
/// assert_eq!(options.jobs, 2);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReplayOptions {
    /// How many runs may be in flight at once (at least 1 is used).
    pub jobs: usize,
    /// The deadline of each run; one too large for the clock (`Duration::MAX`) means no
    /// deadline.
    pub timeout: Duration,
    /// The property id every run sees (`PROPERTY_ID`); may be empty.
    pub property_id: String,
}

impl Default for ReplayOptions {
    fn default() -> ReplayOptions {
        ReplayOptions {
            jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
            timeout: DEFAULT_TIMEOUT,
            property_id: String::new(),
        }
    }
}

impl ReplayOptions {
    /// These options with at most `jobs` runs in flight.
    #[must_use]
    pub fn with_jobs(mut self, jobs: usize) -> ReplayOptions {
        self.jobs = jobs;
        self
    }

    /// These options with `timeout` as each run's deadline.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> ReplayOptions {
        self.timeout = timeout;
        self
    }

    /// These options with `property_id` as the `PROPERTY_ID` every run sees.
    #[must_use]
    pub fn with_property_id(mut self, property_id: impl Into<String>) -> ReplayOptions {
        self.property_id = property_id.into();
        self
    }
}

/// Runs `oracle` on `candidate` (canonical bytes) `plan.n()` times, run `i` with
/// `FREEZEGATE_REPLAY = i` and the plan's seed, up to `options.jobs` runs at once on scoped
/// threads. The report holds the runs in run-index order, whatever order they finished in.
///
/// `candidate` is passed as given, unchecked: give it canonical bytes, such as
/// `freezegate_canon::fixture::read_fixture(..)?.0.bytes()` (which checks the file), not a
/// fixture file's bytes as read, whose trailing newline makes every run a harness error.
///
/// Replays for a verdict must run a fresh process each ([`crate::ProcessOracle`]), so that
/// process-level nondeterminism can show.
pub fn replay<O: Oracle + ?Sized>(
    oracle: &O,
    candidate: &[u8],
    plan: &ReplayPlan,
    options: &ReplayOptions,
) -> ReplayReport {
    let start = Instant::now();
    let n = plan.n();
    let jobs = options.jobs.clamp(1, n);
    let next = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<RunOutcome>>> = Mutex::new(vec![None; n]);
    let base = RunContext::new(plan.seed())
        .with_property(options.property_id.clone())
        .with_timeout(options.timeout);
    let work = || {
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= n {
                return;
            }
            let ctx = base
                .clone()
                .with_replay(u32::try_from(i).unwrap_or(u32::MAX));
            let outcome = oracle.run(candidate, &ctx);
            let mut slots = slots
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            slots[i] = Some(outcome);
        }
    };
    if jobs == 1 {
        work();
    } else {
        std::thread::scope(|scope| {
            for _ in 0..jobs {
                scope.spawn(work);
            }
        });
    }
    let runs: Vec<RunOutcome> = slots
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .into_iter()
        .map(|slot| slot.unwrap_or_else(|| RunOutcome::not_run("the run was never started")))
        .collect();
    let labels = plan.labels(runs.iter().map(|r| r.label).collect());
    let labels = match labels {
        Ok(labels) => labels,
        // Unreachable: one slot per planned run. Kept total rather than panicking.
        Err(_) => return ReplayReport::malformed(*plan, options, candidate, runs, jobs),
    };
    let verdict = labels.verdict();
    ReplayReport {
        plan: *plan,
        property_id: options.property_id.clone(),
        fixture_digest: Digest::of(candidate),
        timeout: options.timeout,
        jobs,
        runs,
        labels: Some(labels),
        verdict,
        elapsed: start.elapsed(),
    }
}

/// What a replay found.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ReplayReport {
    /// The plan: N and the seed.
    pub plan: ReplayPlan,
    /// The property id the runs saw.
    pub property_id: String,
    /// The digest of the replayed candidate's canonical bytes.
    pub fixture_digest: Digest,
    /// The deadline of each run.
    pub timeout: Duration,
    /// How many runs were in flight at most.
    pub jobs: usize,
    /// Every run, in run-index order.
    pub runs: Vec<RunOutcome>,
    labels: Option<LabelList>,
    /// The verdict of the labels.
    pub verdict: Verdict,
    /// Wall time of the whole replay.
    pub elapsed: Duration,
}

impl ReplayReport {
    fn malformed(
        plan: ReplayPlan,
        options: &ReplayOptions,
        candidate: &[u8],
        runs: Vec<RunOutcome>,
        jobs: usize,
    ) -> ReplayReport {
        ReplayReport {
            plan,
            property_id: options.property_id.clone(),
            fixture_digest: Digest::of(candidate),
            timeout: options.timeout,
            jobs,
            runs,
            labels: None,
            verdict: Verdict::RejectMalformed,
            elapsed: Duration::ZERO,
        }
    }

    /// The checked label list (run-index order); `None` only if the verdict is
    /// `reject_malformed`.
    pub fn label_list(&self) -> Option<&LabelList> {
        self.labels.as_ref()
    }

    /// The labels in run-index order.
    pub fn labels(&self) -> Vec<crate::Label> {
        self.runs.iter().map(|r| r.label).collect()
    }

    /// The replayed candidate's fixture id.
    pub fn fixture_id(&self) -> FixtureId {
        self.fixture_digest.fixture_id()
    }

    /// The report as a JSON document: the schema below, keys in this order, two-space
    /// indent, trailing newline. Stable: fields are only ever added, and `schema` changes
    /// if one changes meaning.
    ///
    /// ```text
    /// {
    ///   "schema": "freezegate-replay-v1",
    ///   "property_id": "",                       // empty when none was given
    ///   "fixture_id": "84a6b2a276edd51b",
    ///   "fixture_digest": "<64 hex>",
    ///   "seed": 20260917,
    ///   "replays": 7,                            // N, fixed before the runs
    ///   "timeout_ms": 10000,
    ///   "jobs": 2,
    ///   "labels": ["assert_fail", ...],          // run-index order, N of them
    ///   "verdict": "block_patch",                // SPEC §6
    ///   "status": "stable_fail",                 // stable_fail | stable_pass | flicker | null
    ///   "detection_power": [{"p": 0.05, "power": 0.301663}, ...],  // p = 0.05, 0.2, 0.5
    ///   "runs": [{"replay": 0, "label": "assert_fail", "exit": "exit 1",
    ///             "duration_us": 1234, "signature": null, "message": null,
    ///             "stderr_last_line": null}, ...],     // the error's stderr line (telling_line)
    ///   "elapsed_us": 5678
    /// }
    /// ```
    pub fn to_json(&self) -> Result<String, ValueError> {
        let doc = JsonReport {
            schema: REPORT_SCHEMA,
            property_id: &self.property_id,
            fixture_id: self.fixture_id().to_string(),
            fixture_digest: self.fixture_digest.to_string(),
            seed: self.plan.seed(),
            replays: self.plan.n(),
            timeout_ms: duration_ms(self.timeout),
            jobs: self.jobs,
            labels: self.runs.iter().map(|r| r.label.as_str()).collect(),
            verdict: self.verdict.as_str(),
            status: self.verdict.status().map(|s| s.as_str()),
            detection_power: self
                .plan
                .detection_power()
                .iter()
                .map(|&(p, power)| JsonPower {
                    p,
                    power: (power * 1e6).round() / 1e6,
                })
                .collect(),
            runs: self
                .runs
                .iter()
                .enumerate()
                .map(|(i, r)| JsonRun {
                    replay: i,
                    label: r.label.as_str(),
                    exit: r.exit.to_string(),
                    duration_us: duration_us(r.duration),
                    signature: r.signature.as_deref(),
                    message: r.message.as_deref(),
                    stderr_last_line: last_line(&r.stderr.text),
                })
                .collect(),
            elapsed_us: duration_us(self.elapsed),
        };
        let value = freezegate_canon::to_value(&doc)?;
        Ok(freezegate_canon::to_pretty_string(&value))
    }

    /// The report as text for people: one line per run, the verdict, and the detection
    /// power of N with a reminder that replays are a budget, not a proof.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "fixture {}  property {}  seed {}  replays {}  timeout {} ms  jobs {}",
            self.fixture_id(),
            if self.property_id.is_empty() {
                "-"
            } else {
                &self.property_id
            },
            self.plan.seed(),
            self.plan.n(),
            duration_ms(self.timeout),
            self.jobs
        );
        for (i, run) in self.runs.iter().enumerate() {
            let _ = write!(
                out,
                "run {i:>3}  {:<13}  {:>8.1} ms  {}",
                run.label.as_str(),
                run.duration.as_secs_f64() * 1e3,
                run.exit
            );
            if let Some(sig) = &run.signature {
                let _ = write!(out, "  failure: {sig}");
            }
            if let Some(message) = &run.message {
                let _ = write!(out, "  ({message})");
            }
            // Why a run broke, and what a failure without a signature (a crash: an uncaught
            // exception exits 1) said.
            let unexplained = run.label.is_infra()
                || (run.label == crate::Label::AssertFail && run.signature.is_none());
            if unexplained && let Some(line) = last_line(&run.stderr.text) {
                let _ = write!(out, "  stderr: {line}");
            }
            out.push('\n');
        }
        let _ = write!(out, "verdict: {}", self.verdict);
        if let Some(status) = self.verdict.status() {
            let _ = write!(out, " ({status})");
        }
        out.push('\n');
        let powers: Vec<String> = self
            .plan
            .detection_power()
            .iter()
            .map(|(p, power)| format!("p={p}: {power:.3}"))
            .collect();
        let _ = writeln!(
            out,
            "detection power of N={} (chance that a flake failing at rate p shows both outcomes): {}",
            self.plan.n(),
            powers.join(", ")
        );
        out.push_str("replays are a budget, not a proof: a flake can pass or fail all N runs\n");
        out
    }
}

fn duration_us(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

fn duration_ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[derive(Serialize)]
struct JsonReport<'a> {
    schema: &'static str,
    property_id: &'a str,
    fixture_id: String,
    fixture_digest: String,
    seed: u64,
    replays: usize,
    timeout_ms: u64,
    jobs: usize,
    labels: Vec<&'static str>,
    verdict: &'static str,
    status: Option<&'static str>,
    detection_power: Vec<JsonPower>,
    runs: Vec<JsonRun<'a>>,
    elapsed_us: u64,
}

#[derive(Serialize)]
struct JsonPower {
    p: f64,
    power: f64,
}

#[derive(Serialize)]
struct JsonRun<'a> {
    replay: usize,
    label: &'static str,
    exit: String,
    duration_us: u64,
    signature: Option<&'a str>,
    message: Option<&'a str>,
    stderr_last_line: Option<&'a str>,
}

/// The line of captured stderr that says what went wrong ([`crate::telling_line`]), at most
/// 200 characters of it.
fn last_line(text: &str) -> Option<&str> {
    let line = crate::telling_line(text)?;
    Some(match line.char_indices().nth(200) {
        Some((i, _)) => &line[..i],
        None => line,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Label;
    use crate::oracle::Exit;

    /// An oracle that fails on odd replays, with fixed durations, finishing out of order.
    fn flicker(_: &[u8], ctx: &RunContext) -> RunOutcome {
        // Later runs finish first.
        std::thread::sleep(Duration::from_millis(u64::from(7 - ctx.replay.min(7))));
        let d = Duration::from_micros(1000 + u64::from(ctx.replay));
        if ctx.replay % 2 == 1 {
            RunOutcome::new(Label::AssertFail, d, Exit::Code(1)).with_signature("odd")
        } else {
            RunOutcome::new(Label::AssertPass, d, Exit::Code(0))
        }
    }

    fn fixed_report() -> Result<ReplayReport, PlanErrorOr> {
        let plan = ReplayPlan::new(4, 20260917)?;
        let options = ReplayOptions {
            jobs: 4,
            timeout: Duration::from_millis(500),
            property_id: "demo.flicker".into(),
        };
        let mut report = replay(&flicker, br#"{"role":"","user_id":0}"#, &plan, &options);
        report.elapsed = Duration::from_micros(4321);
        Ok(report)
    }

    type PlanErrorOr = crate::label::PlanError;

    /// The text names the stderr line of a failure without a signature (a crash), not of
    /// one with a signature or of a pass.
    #[test]
    fn text_quotes_the_stderr_of_a_failure_without_a_signature() -> Result<(), PlanErrorOr> {
        let oracle = |_: &[u8], ctx: &RunContext| {
            let mut out = match ctx.replay {
                0 => RunOutcome::new(Label::AssertFail, Duration::ZERO, Exit::Code(1)),
                1 => {
                    let mut o = RunOutcome::new(Label::AssertFail, Duration::ZERO, Exit::Code(1));
                    o.signature = Some("named".into());
                    o
                }
                _ => RunOutcome::new(Label::AssertPass, Duration::ZERO, Exit::Code(0)),
            };
            out.stderr.text = format!("TypeError: run {}\n    at f (x.js:1:1)\n", ctx.replay);
            out
        };
        let report = replay(
            &oracle,
            b"0",
            &ReplayPlan::new(3, 1)?,
            &ReplayOptions::default(),
        );
        let text = report.to_text();
        assert!(text.contains("stderr: TypeError: run 0\n"), "{text}");
        assert!(
            !text.contains("run 1\n") && !text.contains("run 2\n"),
            "{text}"
        );
        Ok(())
    }

    #[test]
    fn labels_come_back_in_run_index_order() -> Result<(), PlanErrorOr> {
        let report = fixed_report()?;
        use Label::*;
        assert_eq!(
            report.labels(),
            vec![AssertPass, AssertFail, AssertPass, AssertFail]
        );
        assert_eq!(report.verdict, Verdict::FreezeEligible);
        assert_eq!(report.fixture_id().to_string(), "84a6b2a276edd51b");
        Ok(())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]
        #[test]
        fn labels_follow_run_indices_whatever_the_completion_order(
            runs in proptest::collection::vec((proptest::bool::ANY, 0u64..3), 1..12),
            jobs in 1usize..6,
        ) {
            let oracle = |_: &[u8], ctx: &RunContext| {
                let (fails, delay) = runs[ctx.replay as usize];
                std::thread::sleep(Duration::from_millis(delay));
                let label = if fails { Label::AssertFail } else { Label::AssertPass };
                RunOutcome::new(label, Duration::ZERO, Exit::Returned)
            };
            let plan = ReplayPlan::new(runs.len(), 3).map_err(|e| proptest::test_runner::TestCaseError::fail(e.to_string()))?;
            let options = ReplayOptions { jobs, ..ReplayOptions::default() };
            let report = replay(&oracle, b"0", &plan, &options);
            let expected: Vec<Label> = runs
                .iter()
                .map(|&(fails, _)| if fails { Label::AssertFail } else { Label::AssertPass })
                .collect();
            proptest::prop_assert_eq!(report.labels(), expected.clone());
            proptest::prop_assert_eq!(report.verdict, crate::verdict(&expected, expected.len()));
        }
    }

    #[test]
    fn last_line_skips_blank_lines_and_is_capped() {
        assert_eq!(last_line("a\nb  \n\n"), Some("b"));
        assert_eq!(last_line(" \n"), None);
        assert_eq!(last_line(&"x".repeat(500)).map(str::len), Some(200));
    }

    #[test]
    fn text_report() -> Result<(), PlanErrorOr> {
        insta::assert_snapshot!(fixed_report()?.to_text());
        Ok(())
    }

    #[test]
    fn json_report() -> Result<(), Box<dyn std::error::Error>> {
        insta::assert_snapshot!(fixed_report()?.to_json()?);
        Ok(())
    }
}
