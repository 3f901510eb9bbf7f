//! Two-stage validation (SPEC §7): the JSON value is mapped into rows, collecting every
//! schema problem, then every rule is checked on every row; all problems come back at once.

use std::collections::HashMap;
use std::fmt;

use freezegate_canon::{
    Canonicalization, Digest, FixtureId, Int, Position, PropertyId, Value, to_pretty_string,
};
use freezegate_replay::Label;

use crate::policy::Policy;
use crate::row::{EnvClass, Key, ROW_FIELDS, Row, SCHEMA, Seed};
use crate::signers::AllowedSigners;
use crate::stamp::Timestamp;

/// The `schema` value of the JSON report of `ledger check`.
pub const CHECK_SCHEMA: &str = "freezegate-ledger-check-v1";

/// How bad a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Severity {
    /// The ledger is invalid.
    Error,
    /// Worth a look; fails only where the caller is strict (expired rows).
    Warning,
}

impl Severity {
    /// `error` or `warning`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// The name [`Severity::as_str`] gives.
impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which rule a problem breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Rule {
    /// The envelope: an object with exactly `schema` (= `freezegate-ledger-v1`) and `rows`.
    Envelope,
    /// A field the schema does not have.
    UnknownField,
    /// A required field is absent (never defaulted).
    MissingField,
    /// A field of the wrong JSON type or shape (hex, timestamp, label, name).
    Shape,
    /// A row keyed by a test name instead of a fixture digest.
    NameKeyed,
    /// `fixture_id` is not the prefix of `fixture_digest`.
    IdPrefix,
    /// The replays are not both passes and fails, and nothing else.
    Replays,
    /// The row was recorded under another replay count than today's policy (a warning).
    ReplayCount,
    /// The env class may not freeze under the policy.
    EnvClass,
    /// The owner is not exactly one principal of `freeze/allowed_signers`.
    Owner,
    /// An empty `reason`, `runner_id` or `patch_id`.
    Empty,
    /// `created_at` lies in the future.
    CreatedAt,
    /// `expires_at` is not after `created_at`, or later than the policy allows.
    ExpiresAt,
    /// The row has expired (a warning; it excuses nothing).
    Expired,
    /// Another row has the same key (every row of that key breaks it).
    Duplicate,
    /// The fixture file is missing, unreadable or does not hash to the digest.
    Fixture,
    /// `seed` is not an integer from 0 to 2^64-1, so no run can have it.
    Seed,
    /// `canonicalization` or `origin_digest` is not what the fixture's meta file records.
    Meta,
}

impl Rule {
    /// The rule's name in machine-readable reports (`owner`, `duplicate`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Rule::Envelope => "envelope",
            Rule::UnknownField => "unknown_field",
            Rule::MissingField => "missing_field",
            Rule::Shape => "shape",
            Rule::NameKeyed => "name_keyed",
            Rule::IdPrefix => "id_prefix",
            Rule::Replays => "replays",
            Rule::ReplayCount => "replay_count",
            Rule::EnvClass => "env_class",
            Rule::Owner => "owner",
            Rule::Empty => "empty",
            Rule::CreatedAt => "created_at",
            Rule::ExpiresAt => "expires_at",
            Rule::Expired => "expired",
            Rule::Duplicate => "duplicate",
            Rule::Fixture => "fixture",
            Rule::Seed => "seed",
            Rule::Meta => "meta",
        }
    }
}

/// The name [`Rule::as_str`] gives.
impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One problem of a ledger: which row (index and fixture id), which field, which rule, and
/// where in the file.
///
/// Shown as `error: line 12, column 7: row 2 (fixture 363379742f80b51b), note: unknown
/// field`; [`Problem::in_file`] puts the file's name first.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Problem {
    /// Error or warning.
    pub severity: Severity,
    /// The rule broken.
    pub rule: Rule,
    /// 0-based index of the row in what was checked; `None` for the envelope. For text
    /// ([`crate::check`], [`crate::check_and_load`], the schema problems of
    /// [`crate::Ledger::from_slice`]), the row's place in the file; for a [`crate::Ledger`]
    /// ([`crate::Ledger::check`], [`crate::Ledger::broken_rules`]), its index in
    /// [`crate::Ledger::rows`], which are sorted by key. The two agree on a rendered ledger,
    /// whose rows are in that order.
    pub row: Option<usize>,
    /// The row's `fixture_id` as written, when it is a string.
    pub fixture_id: Option<String>,
    /// The field, when one is to blame: a row's field (`replays[1]` for one label), or for
    /// the envelope (no row) the key to blame.
    pub field: Option<String>,
    /// What is wrong, in lowercase words.
    pub message: String,
    /// Where in the ledger text: the key of the field (the element for `replays[i]`), else
    /// the start of the row, else of the document. `None` when the ledger was not read from
    /// text ([`crate::Ledger::check`], [`crate::Ledger::from_value`]).
    pub at: Option<Position>,
}

/// The ledger's own text (an owner, a fixture id, a field name) as messages and the table
/// show it: as it is when `{:?}` would escape none of it (and it is not empty), else quoted
/// and escaped, so that it stays one line and sends nothing to a terminal.
///
/// ```
/// assert_eq!(freezegate_ledger::shown("alice@example.com"), "alice@example.com");
/// assert_eq!(freezegate_ledger::shown("bob\n\u{1b}[2J"), r#""bob\n\u{1b}[2J""#);
/// ```
pub fn shown(text: &str) -> std::borrow::Cow<'_, str> {
    let quoted = format!("{text:?}");
    if !text.is_empty() && quoted.get(1..quoted.len() - 1) == Some(text) {
        std::borrow::Cow::Borrowed(text)
    } else {
        std::borrow::Cow::Owned(quoted)
    }
}

impl Problem {
    /// The row and field to blame and what is wrong, without severity or position:
    /// `row 2 (fixture 363379742f80b51b), note: unknown field`.
    ///
    /// The fixture id and the field name are the ledger's own text, so one that holds a
    /// character that `{:?}` would escape (a line break, a terminal escape, a quote) is
    /// written quoted and escaped, `row 0 (fixture "x\n\u{1b}]0;t\u{7}")`, as values are: a
    /// problem stays one line and sends nothing to a terminal.
    pub fn describe(&self) -> String {
        let mut out = match (self.row, &self.fixture_id) {
            (Some(row), Some(id)) => format!("row {row} (fixture {})", shown(id)),
            (Some(row), None) => format!("row {row} (no fixture id)"),
            (None, _) => "ledger".to_owned(),
        };
        if let Some(field) = &self.field {
            out.push_str(", ");
            out.push_str(&shown(field));
        }
        out.push_str(": ");
        out.push_str(&self.message);
        out
    }

    /// The problem as the JSON object of `ledger check --format json` (and of its
    /// `Serialize`): `severity`, `rule`, `row`, `fixture_id`, `field`, `message`, `line` and
    /// `column`, absent values `null`.
    pub fn to_value(&self) -> Value {
        let opt = |v: &Option<String>| v.clone().map_or(Value::Null, Value::String);
        let int = |n: Option<usize>| n.map_or(Value::Null, |n| Value::Int(Int::from(n)));
        Value::Object(vec![
            (
                "severity".to_owned(),
                Value::String(self.severity.as_str().to_owned()),
            ),
            (
                "rule".to_owned(),
                Value::String(self.rule.as_str().to_owned()),
            ),
            ("row".to_owned(), int(self.row)),
            ("fixture_id".to_owned(), opt(&self.fixture_id)),
            ("field".to_owned(), opt(&self.field)),
            ("message".to_owned(), Value::String(self.message.clone())),
            ("line".to_owned(), int(self.at.map(|at| at.line))),
            ("column".to_owned(), int(self.at.map(|at| at.column))),
        ])
    }

    /// The problem with the ledger file's name before its position:
    /// `error: freeze/ledger.json: line 12, column 7: row 2 (...), note: unknown field`.
    pub fn in_file<'a>(&'a self, file: &'a str) -> impl fmt::Display + 'a {
        InFile {
            problem: self,
            file: Some(file),
        }
    }
}

struct InFile<'a> {
    problem: &'a Problem,
    file: Option<&'a str>,
}

impl fmt::Display for InFile<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.problem;
        write!(f, "{}: ", p.severity.as_str())?;
        if let Some(file) = self.file {
            write!(f, "{file}: ")?;
        }
        if let Some(at) = p.at {
            write!(f, "{at}: ")?;
        }
        f.write_str(&p.describe())
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        InFile {
            problem: self,
            file: None,
        }
        .fmt(f)
    }
}

/// The outcome of validating a ledger: every problem, errors and warnings, in row order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Report {
    /// The problems, sorted by row (envelope problems first), each row's in field order.
    pub problems: Vec<Problem>,
}

impl Report {
    /// The errors.
    pub fn errors(&self) -> impl Iterator<Item = &Problem> {
        self.problems
            .iter()
            .filter(|p| p.severity == Severity::Error)
    }

    /// The warnings.
    pub fn warnings(&self) -> impl Iterator<Item = &Problem> {
        self.problems
            .iter()
            .filter(|p| p.severity == Severity::Warning)
    }

    /// The report as one JSON document (`freezegate-ledger-check-v1`): `ok` (under
    /// `strict`), then every problem with `severity`, `rule`, `row`, `fixture_id`, `field`,
    /// `message`, `line` and `column` (absent values are `null`). Under `strict` an expired
    /// row is an error, as in [`Report::strict`] and `ledger check --strict`, so that the
    /// document agrees with itself.
    pub fn to_json(&self, strict: bool) -> String {
        to_pretty_string(&self.to_value(strict))
    }

    /// The value [`Report::to_json`] writes.
    pub(crate) fn to_value(&self, strict: bool) -> Value {
        let problems = self
            .problems
            .iter()
            .map(|p| {
                if strict && p.rule == Rule::Expired {
                    Problem {
                        severity: Severity::Error,
                        ..p.clone()
                    }
                    .to_value()
                } else {
                    p.to_value()
                }
            })
            .collect();
        Value::Object(vec![
            ("schema".to_owned(), Value::String(CHECK_SCHEMA.to_owned())),
            ("ok".to_owned(), Value::Bool(!self.fails(strict))),
            ("problems".to_owned(), Value::Array(problems)),
        ])
    }

    /// The report as `ledger check --strict` judges it: expired rows are errors, not warnings,
    /// so that the problems, the counts and the verdict agree.
    pub fn strict(mut self) -> Report {
        for problem in &mut self.problems {
            if problem.rule == Rule::Expired {
                problem.severity = Severity::Error;
            }
        }
        self
    }

    /// Whether the ledger fails: any error, or with `strict` also an expired row.
    pub fn fails(&self, strict: bool) -> bool {
        self.problems
            .iter()
            .any(|p| p.severity == Severity::Error || (strict && p.rule == Rule::Expired))
    }
}

/// What the lookup found for a row's fixture file.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FixtureFile {
    /// The file's bytes (canonical bytes plus one `\n`).
    Found(Vec<u8>),
    /// No such file.
    Missing,
    /// The file exists but could not be read; the text says why.
    Unreadable(String),
}

/// What a fixture's meta file records that a row repeats: the canonical form and the origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recorded {
    /// The meta file's `canonicalization`.
    pub canonicalization: Canonicalization,
    /// The meta file's `origin_digest`.
    pub origin_digest: Digest,
}

/// How validation reaches fixture files: the caller decides where they live, so the crate
/// holds no file-system policy of its own. Any `Fn(&PropertyId, FixtureId) -> FixtureFile`
/// is one (it knows no meta files).
pub trait FixtureLookup {
    /// The fixture file of `property` named `id`.
    fn fixture(&self, property: &PropertyId, id: FixtureId) -> FixtureFile;

    /// What the meta file of that fixture records, when the caller can read it; a row's
    /// `canonicalization` and `origin_digest` must then be the same (rule `meta`). `None`
    /// (the default): no meta file is known, and the row is not compared with one (a
    /// fixture whose meta file is missing or broken is an integrity error of its folder).
    fn recorded(&self, property: &PropertyId, id: FixtureId) -> Option<Recorded> {
        let _ = (property, id);
        None
    }
}

impl<F: Fn(&PropertyId, FixtureId) -> FixtureFile> FixtureLookup for F {
    fn fixture(&self, property: &PropertyId, id: FixtureId) -> FixtureFile {
        self(property, id)
    }
}

/// Everything validation needs from outside: policy, clock reading, signers, fixtures. Built
/// with [`Checks::new`] (the struct may gain fields, so it is not built by a struct
/// expression outside this crate).
#[non_exhaustive]
pub struct Checks<'a> {
    /// Replay count, env classes that may freeze, longest freeze.
    pub policy: &'a Policy,
    /// The time to judge against (the crate never reads the clock).
    pub now: Timestamp,
    /// The principals of `freeze/allowed_signers`.
    pub signers: &'a AllowedSigners,
    /// Where fixture files are read from.
    pub fixtures: &'a dyn FixtureLookup,
}

impl<'a> Checks<'a> {
    /// Checks against `policy` at `now`, with owners from `signers` and fixture files from
    /// `fixtures`.
    pub fn new(
        policy: &'a Policy,
        now: Timestamp,
        signers: &'a AllowedSigners,
        fixtures: &'a dyn FixtureLookup,
    ) -> Checks<'a> {
        Checks {
            policy,
            now,
            signers,
            fixtures,
        }
    }
}

/// A row as far as it could be read: each field is `None` when absent or malformed.
#[derive(Debug, Default)]
pub(crate) struct RawRow {
    pub index: usize,
    pub id_text: Option<String>,
    pub property_id: Option<PropertyId>,
    pub fixture_id: Option<FixtureId>,
    pub fixture_digest: Option<Digest>,
    pub origin_digest: Option<Digest>,
    pub canonicalization: Option<Canonicalization>,
    pub seed: Option<Seed>,
    pub env_class: Option<EnvClass>,
    pub runner_id: Option<String>,
    pub replays: Option<Vec<Label>>,
    pub patch_id: Option<String>,
    pub owner: Option<String>,
    pub reason: Option<String>,
    pub created_at: Option<Timestamp>,
    pub expires_at: Option<Timestamp>,
}

impl RawRow {
    pub(crate) fn from_row(index: usize, row: &Row) -> RawRow {
        RawRow {
            index,
            id_text: Some(row.fixture_id.to_string()),
            property_id: Some(row.property_id.clone()),
            fixture_id: Some(row.fixture_id),
            fixture_digest: Some(row.fixture_digest),
            origin_digest: Some(row.origin_digest),
            canonicalization: Some(row.canonicalization),
            seed: Some(row.seed.clone()),
            env_class: Some(row.env_class),
            runner_id: Some(row.runner_id.clone()),
            replays: Some(row.replays.clone()),
            patch_id: Some(row.patch_id.clone()),
            owner: Some(row.owner.clone()),
            reason: Some(row.reason.clone()),
            created_at: Some(row.created_at),
            expires_at: Some(row.expires_at),
        }
    }

    /// The typed row, when every field was read.
    pub(crate) fn into_row(self) -> Option<Row> {
        Some(Row {
            property_id: self.property_id?,
            fixture_id: self.fixture_id?,
            fixture_digest: self.fixture_digest?,
            origin_digest: self.origin_digest?,
            canonicalization: self.canonicalization?,
            seed: self.seed?,
            env_class: self.env_class?,
            runner_id: self.runner_id?,
            replays: self.replays?,
            patch_id: self.patch_id?,
            owner: self.owner?,
            reason: self.reason?,
            created_at: self.created_at?,
            expires_at: self.expires_at?,
        })
    }

    fn key(&self) -> Option<Key> {
        Some(Key {
            property_id: self.property_id.clone()?,
            fixture_digest: self.fixture_digest?,
            seed: self.seed.clone()?,
            env_class: self.env_class?,
        })
    }
}

/// Fields that name a test instead of a fixture.
const NAME_FIELDS: [&str; 6] = ["nodeid", "node_id", "test", "test_id", "name", "testcase"];

pub(crate) struct Sink<'p> {
    problems: &'p mut Vec<Problem>,
}

impl Sink<'_> {
    fn push(
        &mut self,
        severity: Severity,
        rule: Rule,
        raw: Option<(&RawRow, &str)>,
        message: String,
    ) {
        let (row, fixture_id, field) = match raw {
            Some((r, field)) => (
                Some(r.index),
                r.id_text.clone(),
                (!field.is_empty()).then(|| field.to_owned()),
            ),
            None => (None, None, None),
        };
        self.problems.push(Problem {
            severity,
            rule,
            row,
            fixture_id,
            field,
            message,
            at: None,
        });
    }

    fn error(&mut self, rule: Rule, raw: &RawRow, field: &str, message: String) {
        self.push(Severity::Error, rule, Some((raw, field)), message);
    }

    /// An envelope problem; `key` is the member to blame, if one is.
    fn envelope(&mut self, key: Option<&str>, message: String) {
        self.problems.push(Problem {
            severity: Severity::Error,
            rule: Rule::Envelope,
            row: None,
            fixture_id: None,
            field: key.map(str::to_owned),
            message,
            at: None,
        });
    }
}

/// Stage two, part one: maps a parsed ledger into rows as far as they can be read,
/// collecting every envelope and schema problem. Consumes the value so that its memory is
/// released row by row.
pub(crate) fn map_value(value: Value, problems: &mut Vec<Problem>) -> Vec<RawRow> {
    let mut sink = Sink { problems };
    let Value::Object(members) = value else {
        sink.envelope(
            None,
            format!(
                "the ledger must be an object {{\"schema\": {SCHEMA:?}, \"rows\": [...]}}, not {}",
                value.kind()
            ),
        );
        return Vec::new();
    };
    let mut schema_seen = false;
    let mut rows_value = None;
    for (key, v) in members {
        match key.as_str() {
            "schema" => {
                schema_seen = true;
                match &v {
                    Value::String(s) if s == SCHEMA => {}
                    Value::String(s) => sink.envelope(
                        Some("schema"),
                        format!("unknown schema {s:?}: this reader understands {SCHEMA:?}"),
                    ),
                    other => sink.envelope(
                        Some("schema"),
                        format!("must be the string {SCHEMA:?}, not {}", other.kind()),
                    ),
                }
            }
            "rows" => rows_value = Some(v),
            other => sink.envelope(
                Some(other),
                "unknown field: a ledger holds only \"schema\" and \"rows\"".to_owned(),
            ),
        }
    }
    if !schema_seen {
        sink.envelope(
            Some("schema"),
            format!("missing field (expected {SCHEMA:?})"),
        );
    }
    let items = match rows_value {
        Some(Value::Array(items)) => items,
        Some(other) => {
            sink.envelope(
                Some("rows"),
                format!("must be an array, not {}", other.kind()),
            );
            return Vec::new();
        }
        None => {
            sink.envelope(Some("rows"), "missing field".to_owned());
            return Vec::new();
        }
    };
    items
        .into_iter()
        .enumerate()
        .map(|(index, item)| map_row(index, item, &mut sink))
        .collect()
}

/// A sink that collects problems into `problems`.
pub(crate) fn row_sink(problems: &mut Vec<Problem>) -> Sink<'_> {
    Sink { problems }
}

/// Maps one row value, collecting its schema problems.
pub(crate) fn map_row(index: usize, item: Value, sink: &mut Sink<'_>) -> RawRow {
    let mut raw = RawRow {
        index,
        ..RawRow::default()
    };
    let Value::Object(members) = item else {
        sink.error(
            Rule::Shape,
            &raw,
            "",
            format!("a row must be an object, not {}", item.kind()),
        );
        return raw;
    };
    if let Some((_, Value::String(id))) = members.iter().find(|(k, _)| k == "fixture_id") {
        raw.id_text = Some(id.clone());
    }
    let has_digest = members.iter().any(|(k, _)| k == "fixture_digest");
    let mut seen = [false; ROW_FIELDS.len()];
    let mut name_keyed = false;
    for (key, v) in members {
        let Some(slot) = ROW_FIELDS.iter().position(|f| *f == key) else {
            if !has_digest && NAME_FIELDS.contains(&key.as_str()) {
                name_keyed = true;
                sink.error(
                    Rule::NameKeyed,
                    &raw,
                    &key,
                    "rows must be keyed by a fixture digest, not a test name".to_owned(),
                );
            } else if key == "merge" {
                sink.error(
                    Rule::UnknownField,
                    &raw,
                    &key,
                    "unknown field: a freeze row never approves a merge".to_owned(),
                );
            } else {
                sink.error(Rule::UnknownField, &raw, &key, "unknown field".to_owned());
            }
            continue;
        };
        seen[slot] = true;
        map_field(&mut raw, ROW_FIELDS[slot], v, sink);
    }
    if name_keyed {
        let missing: Vec<&str> = ROW_FIELDS
            .iter()
            .zip(seen)
            .filter(|(_, seen)| !seen)
            .map(|(f, _)| *f)
            .collect();
        sink.error(
            Rule::MissingField,
            &raw,
            "",
            format!("missing fields {}", missing.join(", ")),
        );
        return raw;
    }
    for (slot, field) in ROW_FIELDS.iter().enumerate() {
        if !seen[slot] {
            sink.error(
                Rule::MissingField,
                &raw,
                field,
                "missing field (every field is required; none has a default)".to_owned(),
            );
        }
    }
    raw
}

fn map_field(raw: &mut RawRow, field: &'static str, v: Value, sink: &mut Sink<'_>) {
    if field == "seed" {
        match v {
            Value::Int(n) => raw.seed = Some(Seed::from(n)),
            other => sink.error(
                Rule::Shape,
                raw,
                field,
                format!("must be an integer, not {}", other.kind()),
            ),
        }
        return;
    }
    if field == "replays" {
        let Value::Array(items) = v else {
            sink.error(
                Rule::Shape,
                raw,
                field,
                format!("must be an array of labels, not {}", v.kind()),
            );
            return;
        };
        let mut labels = Vec::with_capacity(items.len());
        let mut ok = true;
        for (i, item) in items.iter().enumerate() {
            match item {
                Value::String(s) if Label::from_name(s).is_some() => {
                    labels.extend(Label::from_name(s));
                }
                other => {
                    ok = false;
                    let shown = match other {
                        Value::String(s) => format!("{s:?}"),
                        other => other.kind().to_owned(),
                    };
                    sink.error(
                        Rule::Shape,
                        raw,
                        &format!("replays[{i}]"),
                        format!(
                            "{shown} is not a label (assert_pass, assert_fail, timeout, harness_error)"
                        ),
                    );
                }
            }
        }
        if ok {
            raw.replays = Some(labels);
        }
        return;
    }
    let Value::String(text) = v else {
        sink.error(
            Rule::Shape,
            raw,
            field,
            format!("must be a string, not {}", v.kind()),
        );
        return;
    };
    let shape = |sink: &mut Sink<'_>, raw: &RawRow, message: String| {
        sink.error(Rule::Shape, raw, field, message);
    };
    match field {
        "property_id" => match text.parse() {
            Ok(p) => raw.property_id = Some(p),
            Err(e) => shape(sink, raw, e.to_string()),
        },
        "fixture_id" => match text.parse() {
            Ok(id) => raw.fixture_id = Some(id),
            Err(e) => shape(sink, raw, e.to_string()),
        },
        "fixture_digest" => match text.parse() {
            Ok(d) => raw.fixture_digest = Some(d),
            Err(e) => shape(sink, raw, e.to_string()),
        },
        "origin_digest" => match text.parse::<Digest>() {
            Ok(d) => raw.origin_digest = Some(d),
            Err(e) => shape(sink, raw, e.to_string().replace("fixture digest", "digest")),
        },
        "canonicalization" => match text.parse() {
            Ok(c) => raw.canonicalization = Some(c),
            Err(e) => shape(sink, raw, e.to_string()),
        },
        "env_class" => match text.parse() {
            Ok(c) => raw.env_class = Some(c),
            Err(e) => shape(sink, raw, e.to_string()),
        },
        "created_at" | "expires_at" => match text.parse::<Timestamp>() {
            Ok(t) if field == "created_at" => raw.created_at = Some(t),
            Ok(t) => raw.expires_at = Some(t),
            Err(e) => shape(sink, raw, e.to_string()),
        },
        "runner_id" => raw.runner_id = Some(text),
        "patch_id" => raw.patch_id = Some(text),
        "owner" => raw.owner = Some(text),
        _ => raw.reason = Some(text),
    }
}

/// How many other rows of a duplicated key a `duplicate` problem names by number.
const DUPLICATES_NAMED: usize = 3;

/// Stage two, part two: every rule on every row, given policy, `now`, signers and fixtures.
pub(crate) fn check_rules(rows: &[RawRow], checks: &Checks<'_>, problems: &mut Vec<Problem>) {
    let mut sink = Sink { problems };
    let keys: Vec<Option<Key>> = rows.iter().map(RawRow::key).collect();
    let mut rows_of: HashMap<&Key, Vec<usize>> = HashMap::with_capacity(rows.len());
    for (raw, key) in rows.iter().zip(&keys) {
        check_row(raw, checks, &mut sink);
        if let Some(key) = key {
            rows_of.entry(key).or_default().push(raw.index);
        }
    }
    // Every row of a key that several rows share breaks the rule, the first as much as the
    // others: which of them would be in force must not depend on where it is in the file.
    for (raw, key) in rows.iter().zip(&keys) {
        let Some(key) = key else { continue };
        let Some(all) = rows_of.get(key).filter(|all| all.len() > 1) else {
            continue;
        };
        // At most a few others by number, so that a ledger of thousands of copies of one
        // row is reported in a size that grows with the rows, not with their square.
        let others: Vec<usize> = all.iter().copied().filter(|&i| i != raw.index).collect();
        let rows_word = if others.len() == 1 { "row" } else { "rows" };
        let mut named: Vec<String> = others
            .iter()
            .take(DUPLICATES_NAMED)
            .map(usize::to_string)
            .collect();
        if others.len() > DUPLICATES_NAMED {
            named.push(format!("and {} more", others.len() - DUPLICATES_NAMED));
        }
        sink.error(
            Rule::Duplicate,
            raw,
            "",
            format!(
                "same (property_id, fixture_digest, seed, env_class) as {rows_word} {}: {key}; a key with several rows freezes nothing",
                named.join(", ")
            ),
        );
    }
}

fn check_row(raw: &RawRow, checks: &Checks<'_>, sink: &mut Sink<'_>) {
    let policy = checks.policy;
    if let (Some(id), Some(digest)) = (raw.fixture_id, raw.fixture_digest)
        && !id.is_prefix_of(&digest)
    {
        sink.error(
            Rule::IdPrefix,
            raw,
            "fixture_id",
            format!("{id} is not the first 16 hex of fixture_digest {digest}"),
        );
    }
    if let Some(env) = raw.env_class
        && !policy.freeze_env_classes.contains(&env)
    {
        sink.error(
            Rule::EnvClass,
            raw,
            "env_class",
            format!(
                "env class {env} may not freeze (policy allows: {})",
                policy.classes_text()
            ),
        );
    }
    for (field, value) in [
        ("runner_id", &raw.runner_id),
        ("patch_id", &raw.patch_id),
        ("reason", &raw.reason),
    ] {
        if value.as_deref().is_some_and(|v| v.trim().is_empty()) {
            let message = if field == "reason" {
                "must name the cause of non-determinism; it is empty"
            } else {
                "must not be empty"
            };
            sink.error(Rule::Empty, raw, field, message.to_owned());
        }
    }
    if let Some(labels) = &raw.replays {
        let n = raw
            .property_id
            .as_ref()
            .map_or(policy.replays, |p| policy.replays_for(p));
        check_replays(raw, labels, n, sink);
    }
    if let Some(seed) = &raw.seed
        && seed.int().to_u64().is_none()
    {
        sink.error(
            Rule::Seed,
            raw,
            "seed",
            format!("{seed} is not an integer from 0 to 2^64-1: no run has such a seed"),
        );
    }
    if let Some(owner) = &raw.owner
        && !checks.signers.allows(owner)
    {
        sink.error(
            Rule::Owner,
            raw,
            "owner",
            format!("{owner:?} is not exactly one principal of freeze/allowed_signers"),
        );
    }
    if let Some(created) = raw.created_at
        && created > checks.now
    {
        sink.error(
            Rule::CreatedAt,
            raw,
            "created_at",
            format!("{created} is in the future (now is {})", checks.now),
        );
    }
    if let (Some(created), Some(expires)) = (raw.created_at, raw.expires_at) {
        // `None`: the limit lies past the last instant a timestamp can hold, so no
        // `expires_at` passes it.
        let limit = created.plus_days(i64::from(policy.max_freeze_days));
        if expires <= created {
            sink.error(
                Rule::ExpiresAt,
                raw,
                "expires_at",
                format!("{expires} is not after created_at {created}"),
            );
        } else if limit.is_some_and(|limit| expires > limit) {
            sink.error(
                Rule::ExpiresAt,
                raw,
                "expires_at",
                format!(
                    "{expires} is more than {} days after created_at {created}",
                    policy.max_freeze_days
                ),
            );
        }
    }
    if let Some(expires) = raw.expires_at
        && expires <= checks.now
    {
        sink.push(
            Severity::Warning,
            Rule::Expired,
            Some((raw, "expires_at")),
            format!("expired at {expires}; the row excuses nothing"),
        );
    }
    if let (Some(property), Some(id), Some(digest)) =
        (&raw.property_id, raw.fixture_id, raw.fixture_digest)
    {
        check_fixture(raw, checks.fixtures.fixture(property, id), digest, sink);
        if let Some(recorded) = checks.fixtures.recorded(property, id) {
            check_recorded(raw, recorded, sink);
        }
    }
}

/// The row's `canonicalization` and `origin_digest` against the fixture's meta file (SPEC
/// §3: the choice of form is recorded in both; the origin is the one the fixture was shrunk
/// from).
fn check_recorded(raw: &RawRow, recorded: Recorded, sink: &mut Sink<'_>) {
    if let Some(form) = raw.canonicalization
        && form != recorded.canonicalization
    {
        sink.error(
            Rule::Meta,
            raw,
            "canonicalization",
            format!(
                "{} but the fixture's meta file records {}",
                form.as_str(),
                recorded.canonicalization.as_str()
            ),
        );
    }
    if let Some(origin) = raw.origin_digest
        && origin != recorded.origin_digest
    {
        sink.error(
            Rule::Meta,
            raw,
            "origin_digest",
            format!(
                "{origin} but the fixture's meta file records {}",
                recorded.origin_digest
            ),
        );
    }
}

fn check_replays(raw: &RawRow, labels: &[Label], n: usize, sink: &mut Sink<'_>) {
    let count = |l: Label| labels.iter().filter(|&&x| x == l).count();
    let (pass, fail) = (count(Label::AssertPass), count(Label::AssertFail));
    let infra = labels.len() - pass - fail;
    let message = if labels.is_empty() {
        Some("no replays: a freeze needs the labels that justified it".to_owned())
    } else if infra > 0 {
        Some(format!(
            "{infra} of {} replays timed out or broke the harness: that belongs to the infra queue, never the ledger",
            labels.len()
        ))
    } else if pass == 0 {
        Some(format!(
            "all {fail} replays failed: this is a regression that must block, not a freeze"
        ))
    } else if fail == 0 {
        Some(format!(
            "all {pass} replays passed: the failure did not reproduce, there is nothing to freeze"
        ))
    } else {
        None
    };
    if let Some(message) = message {
        sink.error(Rule::Replays, raw, "replays", message);
    }
    if labels.len() != n {
        sink.push(
            Severity::Warning,
            Rule::ReplayCount,
            Some((raw, "replays")),
            format!(
                "recorded with {} replays; today's policy runs {n}",
                labels.len()
            ),
        );
    }
}

fn check_fixture(raw: &RawRow, file: FixtureFile, digest: Digest, sink: &mut Sink<'_>) {
    let message = match file {
        FixtureFile::Missing => {
            "the fixture file does not exist (a freeze row never stands in for a missing fixture)"
                .to_owned()
        }
        FixtureFile::Unreadable(why) => format!("the fixture file cannot be read: {why}"),
        FixtureFile::Found(bytes) => match bytes.split_last() {
            Some((b'\n', body)) if !body.ends_with(b"\n") => {
                let actual = Digest::of(body);
                if actual == digest {
                    return;
                }
                // Bytes canonical in neither form (v1's sorted members are canonical in the
                // ordered form too) are the fixture's problem, whatever they hash to.
                let canonical = freezegate_canon::canonicalize(body, Canonicalization::V1Ordered)
                    .is_ok_and(|c| c.bytes() == body);
                if canonical {
                    format!("the fixture file hashes to {actual}, not to fixture_digest")
                } else {
                    "the fixture file is not canonical bytes plus one newline".to_owned()
                }
            }
            _ => "the fixture file is not canonical bytes plus one newline".to_owned(),
        },
    };
    sink.error(Rule::Fixture, raw, "fixture_digest", message);
}

/// Sorts problems by row (envelope first), then each row's by field in the order of
/// [`ROW_FIELDS`] (problems of the whole row first, `replays[i]` with `replays`, unknown fields last), keeping the order
/// they were found in otherwise.
pub(crate) fn sort_problems(problems: &mut [Problem]) {
    problems.sort_by_key(|p| {
        let field = match p.field.as_deref() {
            None => 0,
            Some(name) => ROW_FIELDS
                .iter()
                .position(|f| Some(*f) == name.split('[').next())
                .map_or(ROW_FIELDS.len() + 1, |i| i + 1),
        };
        (p.row.map_or(0, |r| r + 1), field)
    });
}
