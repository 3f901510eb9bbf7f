//! The classify loop on one failing input (SPEC §8 "classify"): first run, shrink,
//! canonicalise, replay the minimal input, act by status.

use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use freezegate_canon::fixture::{self, Meta};
use freezegate_canon::{Canonical, Canonicalization, PropertyId, Value};
use freezegate_replay::{Label, RunContext, SeedStatus, Verdict, verdict};
use serde::Serialize;

use crate::oracles::{Job, PropertyOracles, labels, replay_contexts, run_parallel};

/// What classify did with an input (SPEC §8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Action {
    /// The input passes: nothing to do.
    NoFailure,
    /// The minimal input fails every replay: pinned as a regression.
    PinFixture,
    /// The minimal input flickers: pinned; a human may freeze it from a remote runner.
    FreezeAfterPin,
    /// The minimal input does not reproduce but the origin does (the shrink over-shrank on a
    /// flaky oracle): the origin is pinned as the fixture.
    PinOrigin,
    /// Neither the minimal input nor the origin reproduces: dropped.
    DropNonreproducible,
    /// A run timed out or broke: the runner owners' queue; nothing pinned.
    InfraQueue,
    /// (Gate campaigns only.) The minimal input is an already pinned fixture, whose own
    /// replays decide for it; nothing was replayed or written.
    AlreadyPinned,
}

impl Action {
    /// The action's name (`pin_fixture`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Action::NoFailure => "no_failure",
            Action::PinFixture => "pin_fixture",
            Action::FreezeAfterPin => "freeze_after_pin",
            Action::PinOrigin => "pin_origin",
            Action::DropNonreproducible => "drop_nonreproducible",
            Action::InfraQueue => "infra_queue",
            Action::AlreadyPinned => "already_pinned",
        }
    }

    /// Whether a fixture was pinned.
    pub fn pins(self) -> bool {
        matches!(
            self,
            Action::PinFixture | Action::FreezeAfterPin | Action::PinOrigin
        )
    }

    /// The exit code of `xtask classify` for this action (SPEC §8).
    pub fn exit_code(self) -> u8 {
        match self {
            Action::NoFailure | Action::DropNonreproducible => 0,
            Action::PinFixture | Action::FreezeAfterPin | Action::PinOrigin => 1,
            Action::InfraQueue => 2,
            Action::AlreadyPinned => 1,
        }
    }
}

/// The name [`Action::as_str`] gives.
impl std::fmt::Display for Action {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The `schema` of a classify record's JSON form ([`Record::to_value`]).
pub const RECORD_SCHEMA: &str = "freezegate-classify-record-v1";

/// The record of one classify run: the meta fields (when something was shrunk), the status,
/// the action and the labels of the replays that decided it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Record {
    /// The property.
    pub property_id: PropertyId,
    /// The meta of the (pinned or would-be) fixture; `None` when nothing was shrunk.
    pub meta: Option<Meta>,
    /// The seed-level status of the deciding replays, when they have one.
    pub status: Option<SeedStatus>,
    /// What was done.
    pub action: Action,
    /// The deciding labels: the first run's for `no_failure`/`infra_queue` before shrinking
    /// (followed by the worker's on the input when it was asked), else the replays of the
    /// minimal input (of the origin for `pin_origin`).
    pub labels: Vec<Label>,
    /// The minimal input, canonical, when shrinking ran.
    pub minimal: Option<Canonical>,
    /// Whether the minimal fixture is trivial (`{}`, `[]`, `""`, `0`, `null`): the oracle may
    /// be too weak.
    pub trivial: bool,
    /// Whether the shrinker's budget ran out.
    pub budget_exhausted: bool,
    /// One line on why, for infra items and drops.
    pub message: Option<String>,
    /// Whether the fixture was already pinned (its files are then left as they are).
    pub already_pinned: bool,
    /// Oracle calls this classify made before the verdict's replays: the first run, the
    /// worker's answer on the input when it was asked, and the shrink's. Set on every path,
    /// an infra item's included (the meta's `oracle_calls` where there is a meta).
    pub oracle_calls: u64,
}

impl Record {
    /// The record as a JSON object: its own `schema` ([`RECORD_SCHEMA`]), the meta fields in
    /// meta order but the meta's `schema` (the record is not a meta file, and a tool that
    /// tells files apart by their `schema` must not take it for one), then `status`,
    /// `action`, `labels`, `trivial`, `budget_exhausted`, `message` and `already_pinned`.
    pub fn to_value(&self) -> Value {
        let mut members = vec![("schema".to_owned(), Value::String(RECORD_SCHEMA.to_owned()))];
        match &self.meta {
            Some(meta) => {
                if let Value::Object(m) = meta.to_value() {
                    members.extend(m.into_iter().filter(|(k, _)| k != "schema"));
                }
            }
            None => members.push((
                "property_id".to_owned(),
                Value::String(self.property_id.to_string()),
            )),
        }
        let opt = |s: Option<&str>| s.map_or(Value::Null, |s| Value::String(s.to_owned()));
        members.push(("status".into(), opt(self.status.map(SeedStatus::as_str))));
        members.push(("action".into(), Value::String(self.action.as_str().into())));
        members.push((
            "labels".into(),
            Value::Array(
                self.labels
                    .iter()
                    .map(|l| Value::String(l.as_str().into()))
                    .collect(),
            ),
        ));
        members.push(("trivial".into(), Value::Bool(self.trivial)));
        members.push((
            "budget_exhausted".into(),
            Value::Bool(self.budget_exhausted),
        ));
        members.push(("message".into(), opt(self.message.as_deref())));
        members.push(("already_pinned".into(), Value::Bool(self.already_pinned)));
        Value::Object(members)
    }
}

impl Record {
    /// The record for people: one `key: value` line each for the action, status, labels (one
    /// letter per run: `P` pass, `F` fail, `T` timeout, `E` harness error), fixture, minimal
    /// input and why, only those that apply.
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "property: {}\naction: {}\n",
            self.property_id,
            self.action.as_str()
        );
        if let Some(status) = self.status {
            out.push_str(&format!("status: {}\n", status.as_str()));
        }
        if !self.labels.is_empty() {
            let letters = freezegate_replay::letters(&self.labels);
            out.push_str(&format!("labels: {letters}\n"));
        }
        if let Some(meta) = &self.meta {
            out.push_str(&format!(
                "fixture: fixtures/{}/{}.json{}\n",
                meta.property_id,
                meta.fixture_id,
                if self.action.pins() {
                    ""
                } else {
                    " (not pinned)"
                }
            ));
            out.push_str(&format!("oracle_calls: {}\n", meta.oracle_calls));
        }
        if let Some(minimal) = &self.minimal {
            out.push_str(&format!("minimal: {}\n", minimal.as_str()));
        }
        if self.budget_exhausted {
            out.push_str("budget_exhausted: true\n");
        }
        if let Some(message) = &self.message {
            out.push_str(&format!("why: {message}\n"));
        }
        out
    }
}

/// Everything classify needs besides the input.
pub struct Plan<'a> {
    /// Repository root (fixtures go under `root/fixtures`).
    pub root: &'a Path,
    /// The property.
    pub property: &'a PropertyId,
    /// Its oracles.
    pub oracles: &'a PropertyOracles,
    /// Canonical form of its fixtures.
    pub canonicalization: Canonicalization,
    /// Seed of every run.
    pub seed: u64,
    /// Replay count.
    pub replays: usize,
    /// Per-run deadline.
    pub timeout_ms: u64,
    /// Parallel replays.
    pub jobs: usize,
    /// The most oracle calls before the replays: the first run on the input (and the
    /// worker's answer on it, see [`classify_observed`]) included, the shrink gets the rest.
    pub max_calls: u64,
    /// `pinned_at` of a pinned fixture (UTC `YYYY-MM-DDTHH:MM:SSZ`).
    pub pinned_at: String,
    /// `patch_id` of a pinned fixture.
    pub patch_id: String,
    /// Whether to write the fixture files (the gate and `classify` do).
    pub pin: bool,
    /// Stop after shrinking when the minimal input is already pinned: its own replays decide
    /// for it (the gate's campaigns set this; `classify` does not). Unless the input itself
    /// fails every replay while the pinned fixture does not: that stable failure, which a
    /// flaky oracle let the shrinker carry onto a flake, is pinned as it is (`pin_origin`).
    pub stop_if_pinned: bool,
    /// The pinned fixtures of the property (by id) whose replays earlier in this run did not
    /// all fail (the gate's fixture phase: a pass, a flicker, frozen or not, an infra item).
    /// A minimal input among them does not fail every replay, whatever a second set of
    /// replays of a flake shows by chance; with [`Plan::stop_if_pinned`], a failing case that
    /// shrinks onto one and fails every one of its own replays is pinned as it is. `None`
    /// (`classify`): none known.
    pub unsteady: Option<&'a BTreeSet<String>>,
}

/// Why classify could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClassifyError {
    /// The input has no canonical form.
    #[error("the input has no canonical form")]
    Canonical(#[source] freezegate_canon::ValueError),
    /// The shrinker refused the input.
    #[error("shrinking failed")]
    Shrink(#[source] freezegate_shrink::ShrinkError),
    /// Writing the fixture files failed. `record` is what the classification found, with
    /// the meta of the fixture it could not write: the property failed, and a caller that
    /// reports the failure needs its minimal input and labels all the same.
    #[error("pinning the fixture failed")]
    Pin {
        /// Why the write failed.
        #[source]
        source: freezegate_canon::Error,
        /// The classification, as it would have been with the fixture pinned.
        record: Box<Record>,
    },
}

pub(crate) const TRIVIAL: [&[u8]; 5] = [b"{}", b"[]", b"\"\"", b"0", b"null"];

/// Whether fixture `id` of the plan's property is pinned: its file is there as a regular file.
/// A folder or a link in its place is not a pinned fixture (the pin reports it, and so does
/// the integrity check).
fn pinned_file(plan: &Plan<'_>, id: freezegate_canon::FixtureId) -> bool {
    std::fs::symlink_metadata(fixture::fixture_path(plan.root, plan.property, id))
        .is_ok_and(|m| m.is_file())
}

/// What a record's message says when a fixture's missing meta file was written.
const COMPLETED: &str = "its meta file was missing and is written now";

/// The meta an already pinned fixture keeps, the one its meta file records (its first pin's
/// origin, `pinned_at` and `patch_id`), for the record to show what is on disk; `this_run`,
/// the meta this run would have written, when that file cannot be read (the gate's
/// integrity check reports it).
fn kept_meta(plan: &Plan<'_>, this_run: Meta) -> Meta {
    fixture::read_meta(plan.root, plan.property, this_run.fixture_id).unwrap_or(this_run)
}

/// Appends `more` to the record's message.
fn add_message(record: &mut Record, more: &str) {
    record.message = Some(match record.message.take() {
        Some(message) => format!("{message}; {more}"),
        None => more.to_owned(),
    });
}

/// Writes a fixture's files, only those that are missing (`fixture::pin` never rewrites a
/// file that exists), so that an interrupted pin of a fixture already there (`existing`) is
/// completed. Returns whether it completed one: the fixture's file was there and its meta
/// file was not.
fn write_pin(
    plan: &Plan<'_>,
    existing: bool,
    meta: &Meta,
    fixture: &Canonical,
    origin: &Canonical,
) -> Result<bool, freezegate_canon::Error> {
    let completes =
        existing && !fixture::meta_path(plan.root, plan.property, meta.fixture_id).exists();
    fixture::pin(plan.root, meta, fixture, origin)?;
    Ok(completes)
}

/// The error of a pin that failed: `record` completed with `meta` and `minimal` as they
/// would have been.
fn pin_failed(
    source: freezegate_canon::Error,
    mut record: Record,
    meta: Meta,
    minimal: &Canonical,
) -> ClassifyError {
    record.meta = Some(meta);
    record.minimal = Some(minimal.clone());
    ClassifyError::Pin {
        source,
        record: Box::new(record),
    }
}

/// Runs the classify loop on `input` (SPEC §8).
pub fn classify(plan: &Plan<'_>, input: &Value) -> Result<Record, ClassifyError> {
    classify_observed(plan, input, None)
}

/// The classify loop on an input whose first run was already observed (a campaign's failing
/// case, run through the property's fast oracle): `first` stands for the first run, so a
/// flaky failure that was seen once is not lost to a second look. With `None` the first run
/// happens here, in a fresh process (SPEC §8), and for a property whose fast oracle is a
/// worker the worker is then asked about the input too: it is what shrinks, so a worker that
/// cannot answer (it dies, or never flushes its answer) or that does not fail the input the
/// way the fresh process does would leave the input un-shrunk behind a pin. Such an input
/// is shrunk with a fresh process per candidate instead, and the record's message says why.
/// An input whose every shrink candidate timed out or broke goes to the infra queue.
/// `plan.max_calls` counts these first runs.
pub fn classify_observed(
    plan: &Plan<'_>,
    input: &Value,
    first: Option<freezegate_replay::RunOutcome>,
) -> Result<Record, ClassifyError> {
    let form = plan.canonicalization;
    let origin =
        freezegate_canon::canonicalize_value(input, form).map_err(ClassifyError::Canonical)?;
    let timeout = Duration::from_millis(plan.timeout_ms);
    let ctx = RunContext::new(plan.seed)
        .with_property(plan.property.as_str())
        .with_timeout(timeout);
    // The worker's answer on the input is needed when the first run was a fresh process and
    // the shrinker will ask the worker anything (it gets a call).
    let check_worker = first.is_none() && plan.oracles.worker && plan.max_calls >= 2;
    // A failure a campaign's worker saw: when no fresh process fails the input again, the
    // worker and a fresh process disagree, and the record says so.
    let seen_by_worker = first.is_some() && plan.oracles.worker;
    let first = match first {
        Some(outcome) => outcome,
        None => plan.oracles.fresh.run(origin.bytes(), &ctx),
    };
    let mut record = Record {
        property_id: plan.property.clone(),
        meta: None,
        status: None,
        action: Action::NoFailure,
        labels: vec![first.label],
        minimal: None,
        trivial: false,
        budget_exhausted: false,
        message: None,
        already_pinned: false,
        oracle_calls: 1,
    };
    match first.label {
        Label::AssertPass => return Ok(record),
        Label::Timeout | Label::HarnessError => {
            record.action = Action::InfraQueue;
            record.message = Some(format!(
                "the first run was labelled {} ({}): a timeout or harness error is never shrunk",
                first.label, first.exit
            ));
            return Ok(record);
        }
        Label::AssertFail => {}
    }
    // The runs on the input so far, all counted in `oracle_calls` and in the budget.
    let mut first_calls = 1;
    // A worker that cannot answer on the input, or does not fail it the way the fresh
    // process did (a flake that hangs on state each process draws anew, such as Python's
    // hash seed, is fixed for a worker's life), would leave the input un-shrunk: the
    // shrinker asks a fresh process per candidate instead, as the replays do.
    let mut fast = Arc::clone(&plan.oracles.fast);
    let mut worker_note = None;
    if check_worker {
        first_calls += 1;
        record.oracle_calls = first_calls;
        let answer = plan.oracles.fast.run(origin.bytes(), &ctx);
        record.labels.push(answer.label);
        if let Some(message) = worker_disagreement(&answer, &first) {
            fast = Arc::clone(&plan.oracles.fresh);
            worker_note = Some(message);
        }
    }
    let worker_note = worker_note.as_deref();
    let signature = first.signature.clone();
    // Candidates asked; those the oracle declined ("cannot test": outside its domain); and
    // those that timed out or broke (the last one's outcome). A declined candidate is judged,
    // like a passing one: it is not a smaller failure.
    let asked = Cell::new(0u64);
    let declined = Cell::new(0u64);
    let broken: RefCell<(u64, Option<freezegate_replay::RunOutcome>)> = RefCell::new((0, None));
    let still_fails = |candidate: &Value| -> bool {
        let Ok(bytes) = freezegate_canon::value_bytes(candidate, form) else {
            return false;
        };
        let out = fast.run(&bytes, &ctx);
        asked.set(asked.get() + 1);
        if out.declined {
            declined.set(declined.get() + 1);
            return false;
        }
        if out.label.is_infra() {
            let mut broken = broken.borrow_mut();
            broken.0 += 1;
            broken.1 = Some(out);
            return false;
        }
        out.fails_like(signature.as_deref())
    };
    let options = freezegate_shrink::Options::default()
        .with_max_calls(plan.max_calls.saturating_sub(first_calls))
        .with_canonicalization(form);
    let shrunk =
        freezegate_shrink::shrink(input, still_fails, &options).map_err(ClassifyError::Shrink)?;
    let oracle_calls = shrunk.oracle_calls + first_calls;
    record.oracle_calls = oracle_calls;
    let (broken, last_broken) = broken.into_inner();
    let (asked, declined) = (asked.get(), declined.get());
    // No candidate passed or failed, and some broke: the oracle could not say whether a
    // smaller input fails. Candidates that were all declined leave an input that is minimal
    // within the oracle's domain, and it is pinned as it is.
    if shrunk.path.is_empty()
        && broken > 0
        && broken + declined == asked
        && let Some(last) = last_broken
    {
        record.action = Action::InfraQueue;
        let (lead, rest) = if declined == 0 {
            (
                format!("every one of the {broken} shrink candidates"),
                String::new(),
            )
        } else {
            (
                format!("{broken} of the {asked} shrink candidates"),
                format!(", and the oracle declined the other {declined} (cannot test)"),
            )
        };
        record.message = Some(format!(
            "{lead} timed out or broke, the last labelled {} ({}){rest}: the oracle could not judge any smaller input, so the input is not pinned un-shrunk",
            last.label,
            why(&last)
        ));
        if let Some(note) = worker_note {
            add_message(&mut record, note);
        }
        return Ok(record);
    }
    record.budget_exhausted = shrunk.budget_exhausted;
    let minimal = freezegate_canon::canonicalize_value(&shrunk.value, form)
        .map_err(ClassifyError::Canonical)?;
    record.trivial = TRIVIAL.contains(&minimal.bytes());
    // The meta of a fixture: the origin, the seed, when and where, and the shrink path.
    let meta_of = |fixture: &Canonical, path: Value| Meta {
        property_id: plan.property.clone(),
        fixture_id: fixture.fixture_id(),
        fixture_digest: fixture.digest(),
        origin_id: origin.fixture_id(),
        origin_digest: origin.digest(),
        canonicalization: form,
        seed: plan.seed,
        pinned_at: plan.pinned_at.clone(),
        patch_id: plan.patch_id.clone(),
        oracle_calls,
        shrink_path: match path {
            Value::Array(steps) => steps,
            other => vec![other],
        },
    };

    let replay = |candidate: &Canonical| replay_fresh(plan, candidate);
    // A minimal input already pinned decides through its own replays, unless the failing
    // case itself fails every replay while that fixture does not: then the case is a stable
    // failure the pinned fixture (a flake, perhaps frozen) does not explain, one the shrinker
    // reached only because a flaky oracle failed the fixture once on the way. It is pinned
    // as it is, so that a freeze of the flake never excuses it.
    let mut unexplained = None;
    if plan.stop_if_pinned && pinned_file(plan, minimal.fixture_id()) {
        let (origin_labels, origin_verdict) = replay(&origin);
        if matches!(
            origin_verdict,
            Verdict::InfraQueue | Verdict::RejectMalformed
        ) {
            // The case failed, then timed out or broke on a replay: an infra item, never a
            // failure the pinned fixture (perhaps a frozen flake) excuses.
            record.action = Action::InfraQueue;
            record.labels = origin_labels;
            record.message = Some(format!(
                "the minimal input is pinned fixture {}, but a replay of the failing case itself timed out or broke: infra queue, nothing pinned",
                minimal.fixture_id()
            ));
            if let Some(note) = worker_note {
                add_message(&mut record, note);
            }
            record.minimal = Some(minimal);
            return Ok(record);
        }
        // A fixture whose replays earlier in this run did not all fail does not fail every
        // replay: a flake's second set of replays may fail all by chance (likelier the more
        // often it fails), which must not excuse a stable failure that shrank onto it.
        let unsteady = plan
            .unsteady
            .is_some_and(|ids| ids.contains(&minimal.fixture_id().to_string()));
        if origin_verdict == Verdict::BlockPatch
            && (unsteady || replay(&minimal).1 != Verdict::BlockPatch)
        {
            unexplained = Some(origin_labels);
        } else {
            record.already_pinned = true;
            record.action = Action::AlreadyPinned;
            record.labels = Vec::new();
            let meta = meta_of(&minimal, freezegate_shrink::path_to_value(&shrunk.path));
            record.message =
                Some("the minimal input is already pinned: its replays decide for it".into());
            if seen_by_worker && origin_verdict == Verdict::NotReproduced {
                // Said here too, or a reader sees only the pinned fixture's passing replays.
                add_message(&mut record, &worker_only(plan.replays));
            }
            if let Some(note) = worker_note {
                add_message(&mut record, note);
            }
            if plan.pin {
                match write_pin(plan, true, &meta, &minimal, &origin) {
                    Ok(true) => add_message(&mut record, COMPLETED),
                    Ok(false) => {}
                    Err(e) => return Err(pin_failed(e, record, meta, &minimal)),
                }
            }
            record.meta = Some(kept_meta(plan, meta));
            record.minimal = Some(minimal);
            return Ok(record);
        }
    }
    let mut fixture = minimal.clone();
    let mut path = freezegate_shrink::path_to_value(&shrunk.path);
    if let Some(origin_labels) = unexplained {
        record.labels = origin_labels;
        record.status = Verdict::BlockPatch.status();
        record.action = Action::PinOrigin;
        record.message = Some(format!(
            "the minimal input is pinned fixture {}, which does not fail every replay, but this case failed all {} of its own: a stable failure that fixture (perhaps a frozen flake) does not explain, so the case is pinned as it is",
            minimal.fixture_id(),
            plan.replays
        ));
        fixture = origin.clone();
        path = Value::Array(Vec::new());
    } else {
        let (min_labels, min_verdict) = replay(&minimal);
        record.labels = min_labels;
        record.status = min_verdict.status();
        record.action = match min_verdict {
            Verdict::BlockPatch => Action::PinFixture,
            Verdict::FreezeEligible => Action::FreezeAfterPin,
            Verdict::InfraQueue | Verdict::RejectMalformed => {
                record.message = Some(
                    "a replay of the minimal input timed out or broke: infra queue, nothing pinned"
                        .into(),
                );
                Action::InfraQueue
            }
            Verdict::NotReproduced => {
                let (origin_labels, origin_verdict) = replay(&origin);
                match origin_verdict {
                    Verdict::BlockPatch | Verdict::FreezeEligible => {
                        record.labels = origin_labels;
                        record.status = origin_verdict.status();
                        record.message = Some(
                            "the minimal input does not reproduce but the origin does: the shrink over-shrank on a flaky oracle, so the origin is pinned"
                                .into(),
                        );
                        fixture = origin.clone();
                        path = Value::Array(Vec::new());
                        Action::PinOrigin
                    }
                    Verdict::InfraQueue | Verdict::RejectMalformed => {
                        record.labels = origin_labels;
                        record.status = None;
                        record.message = Some(
                            "a replay of the origin timed out or broke: infra queue, nothing pinned"
                                .into(),
                        );
                        Action::InfraQueue
                    }
                    Verdict::NotReproduced => {
                        let mut message = String::from(
                            "neither the minimal input nor the origin failed again: not reproduced, dropped",
                        );
                        if seen_by_worker {
                            message.push_str(&format!(" ({})", worker_only(plan.replays)));
                        }
                        record.message = Some(message);
                        Action::DropNonreproducible
                    }
                }
            }
        };
    }
    let meta = meta_of(&fixture, path);
    // An already pinned fixture is never rewritten: its files are protected, and its meta
    // records when and where it was first pinned. `pin` writes only what is missing, so an
    // interrupted pin of the same fixture is completed.
    let existing = pinned_file(plan, fixture.fixture_id());
    record.already_pinned = existing;
    if plan.pin && record.action.pins() {
        match write_pin(plan, existing, &meta, &fixture, &origin) {
            Ok(true) => add_message(&mut record, COMPLETED),
            Ok(false) => {}
            Err(e) => {
                if let Some(note) = worker_note {
                    add_message(&mut record, note);
                }
                return Err(pin_failed(e, record, meta, &minimal));
            }
        }
    }
    record.meta = Some(if existing {
        let this_run = (
            meta.origin_id,
            meta.pinned_at.clone(),
            meta.patch_id.clone(),
        );
        let kept = kept_meta(plan, meta);
        if (kept.origin_id, &kept.pinned_at, &kept.patch_id)
            != (this_run.0, &this_run.1, &this_run.2)
        {
            add_message(
                &mut record,
                &format!(
                    "the fixture was pinned before (at {}, patch {}): its files are kept as they are, and this record shows its meta",
                    kept.pinned_at, kept.patch_id
                ),
            );
        }
        kept
    } else {
        meta
    });
    if let Some(note) = worker_note {
        add_message(&mut record, note);
    }
    record.minimal = Some(minimal);
    Ok(record)
}

/// What a failure only the worker saw means: the worker failed the case, and none of its
/// `replays` fresh-process replays did.
fn worker_only(replays: usize) -> String {
    format!(
        "the worker failed the origin and none of its {replays} fresh-process replays did: a flake fixed for a worker's life, state the code under test keeps from one input to the next, or a command that answers differently without FREEZEGATE_WORKER, where a failure must exit 1"
    )
}

/// The labels and verdict of `plan.replays` fresh-process replays of `candidate`.
fn replay_fresh(plan: &Plan<'_>, candidate: &Canonical) -> (Vec<Label>, Verdict) {
    let shared = Arc::new(candidate.bytes().to_vec());
    let jobs = replay_contexts(
        plan.seed,
        plan.property.as_str(),
        plan.timeout_ms,
        plan.replays,
    )
    .into_iter()
    .map(|ctx| Job {
        oracle: Arc::clone(&plan.oracles.fresh),
        candidate: Arc::clone(&shared),
        ctx,
    })
    .collect();
    let outcomes = run_parallel(jobs, plan.jobs, &|_| {});
    let labels = labels(&outcomes);
    let v = verdict(&labels, plan.replays);
    (labels, v)
}

/// A campaign's failing case `input` that is the origin of the pinned fixture `pinned`, whose
/// own replays do not block this run (a flake, perhaps frozen): the record that pins the case
/// as it is (`pin_origin`) when it fails every one of its own fresh replays, a stable failure
/// that the fixture's flicker does not explain; `None` when it does not (the fixture's
/// replays decide for it, as for any case the shrinker carries onto a pinned fixture); an
/// `infra_queue` record when a replay timed out or broke. A fixture that is its own origin is
/// never asked about: its replays are the case's.
pub fn unexplained_origin(
    plan: &Plan<'_>,
    input: &Value,
    pinned: &Meta,
) -> Result<Option<Record>, ClassifyError> {
    if pinned.origin_digest == pinned.fixture_digest {
        return Ok(None);
    }
    let replayed = pin_if_stable(plan, input, |replays| {
        format!(
            "the case is the origin of pinned fixture {}, which does not fail every replay, but it failed all {replays} of its own: a stable failure that fixture (perhaps a frozen flake) does not explain, so the case is pinned as it is",
            pinned.fixture_id
        )
    })?;
    Ok(match replayed {
        Unshrunk::Decided(record) => Some(*record),
        Unshrunk::Undecided(_) => None,
    })
}

/// What the N fresh replays of a failing case showed ([`unshrunk_stable`]).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Unshrunk {
    /// A stable failure, pinned as it is (`pin_origin`), or an infra item (`infra_queue`,
    /// nothing pinned): the record.
    Decided(Box<Record>),
    /// Neither: the replays' labels (they mixed passes and fails, or all passed).
    Undecided(Vec<Label>),
}

/// A campaign's failing case that the bound on shrinks left unshrunk
/// ([`crate::run::MAX_CAMPAIGN_SHRINKS`]) and that failed a first fresh run: the record that
/// pins it as it is (`pin_origin`) when it fails every one of its N fresh replays too, a
/// stable failure that no failure shrunk before it explains (those did not block); an
/// `infra_queue` record when a replay timed out or broke; the labels otherwise. Failures
/// that only a long-lived worker shows cannot use up the bound to hide it.
pub fn unshrunk_stable(plan: &Plan<'_>, input: &Value) -> Result<Unshrunk, ClassifyError> {
    pin_if_stable(plan, input, |replays| {
        format!(
            "the campaign stopped shrinking after {} failures that do not block (MAX_CAMPAIGN_SHRINKS), but this case failed all {replays} of its own replays: a stable failure, pinned as it is",
            crate::run::MAX_CAMPAIGN_SHRINKS
        )
    })
}

/// Pins `input` as it is (`pin_origin`, message `why(N)`) when it fails every one of N fresh
/// replays. When a replay timed out or broke, the record is an infra item (`infra_queue`,
/// nothing pinned): a case that failed and then fails or breaks on every replay is neither a
/// flicker a freeze could excuse nor a pass (SPEC §1: any replay that timed out or broke goes
/// to the infra queue).
fn pin_if_stable(
    plan: &Plan<'_>,
    input: &Value,
    why: impl FnOnce(usize) -> String,
) -> Result<Unshrunk, ClassifyError> {
    let origin = freezegate_canon::canonicalize_value(input, plan.canonicalization)
        .map_err(ClassifyError::Canonical)?;
    let (labels, v) = replay_fresh(plan, &origin);
    if matches!(v, Verdict::InfraQueue | Verdict::RejectMalformed) {
        let letters = freezegate_replay::letters(&labels);
        return Ok(Unshrunk::Decided(Box::new(Record {
            property_id: plan.property.clone(),
            meta: None,
            status: None,
            action: Action::InfraQueue,
            trivial: TRIVIAL.contains(&origin.bytes()),
            minimal: Some(origin),
            budget_exhausted: false,
            message: Some(format!(
                "the case failed, but its {} fresh replays ({letters}) timed out or broke: infra queue, nothing pinned",
                plan.replays
            )),
            already_pinned: false,
            oracle_calls: 1 + u64::try_from(plan.replays).unwrap_or(u64::MAX),
            labels,
        })));
    }
    if v != Verdict::BlockPatch {
        return Ok(Unshrunk::Undecided(labels));
    }
    let calls = 1 + u64::try_from(plan.replays).unwrap_or(u64::MAX);
    let meta = Meta {
        property_id: plan.property.clone(),
        fixture_id: origin.fixture_id(),
        fixture_digest: origin.digest(),
        origin_id: origin.fixture_id(),
        origin_digest: origin.digest(),
        canonicalization: plan.canonicalization,
        seed: plan.seed,
        pinned_at: plan.pinned_at.clone(),
        patch_id: plan.patch_id.clone(),
        oracle_calls: calls,
        shrink_path: Vec::new(),
    };
    let existing = pinned_file(plan, origin.fixture_id());
    let mut record = Record {
        property_id: plan.property.clone(),
        meta: None,
        status: Verdict::BlockPatch.status(),
        action: Action::PinOrigin,
        labels,
        trivial: TRIVIAL.contains(&origin.bytes()),
        minimal: None,
        budget_exhausted: false,
        message: Some(why(plan.replays)),
        already_pinned: existing,
        oracle_calls: calls,
    };
    if plan.pin {
        match write_pin(plan, existing, &meta, &origin, &origin) {
            Ok(true) => add_message(&mut record, COMPLETED),
            Ok(false) => {}
            Err(e) => return Err(pin_failed(e, record, meta, &origin)),
        }
    }
    record.meta = Some(if existing {
        kept_meta(plan, meta)
    } else {
        meta
    });
    record.minimal = Some(origin);
    Ok(Unshrunk::Decided(Box::new(record)))
}

/// Why a run timed out or broke: its message, else how it ended.
fn why(outcome: &freezegate_replay::RunOutcome) -> String {
    outcome
        .message
        .clone()
        .unwrap_or_else(|| outcome.exit.to_string())
}

/// The sentence for a worker whose answer on the input (`answer`) is not the failure a fresh
/// process showed (`fresh`), or `None` when it fails the input the same way. A worker that
/// cannot answer or gives another answer cannot shrink the input: what it would keep is the
/// un-shrunk input.
fn worker_disagreement(
    answer: &freezegate_replay::RunOutcome,
    fresh: &freezegate_replay::RunOutcome,
) -> Option<String> {
    if answer.fails_like(fresh.signature.as_deref()) {
        return None;
    }
    Some(if answer.label.is_infra() {
        format!(
            "the worker could not answer on the input, which a fresh process fails: it was labelled {} ({}), so the input was shrunk with a fresh process per candidate",
            answer.label,
            why(answer)
        )
    } else {
        format!(
            "the worker and a fresh process disagree on the input: the worker gives {} and a fresh process {} ({}), so the input was shrunk with a fresh process per candidate",
            answer.describe(),
            fresh.describe(),
            freezegate_replay::mode_difference_causes(answer.label, fresh.label)
        )
    })
}
