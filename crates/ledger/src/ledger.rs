//! The ledger: its rows, parsing, rendering, lookup, expiry and diff.

use std::cmp::Ordering;

use freezegate_canon::{Digest, FixtureId, ParseError, PropertyId, Value, to_pretty_string};

use crate::check::{self, Checks, Problem, RawRow, Report, Rule, Severity};
use crate::error::Error;
use crate::locate::locate;
use crate::row::{EnvClass, Key, Row, SCHEMA, Seed};
use crate::scan::read_rows;
use crate::stamp::Timestamp;

/// The rows of `freeze/ledger.json`, always sorted by [`Key`].
///
/// A ledger read from a file has passed the schema (every field present and well-formed,
/// nothing unknown); the rules (owner, expiry, fixtures, ...) are checked separately by
/// [`Ledger::check`] or [`check`], since they depend on policy, signers, fixtures and `now`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ledger {
    rows: Vec<Row>,
}

/// What changed between two ledgers, by key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diff {
    /// Rows whose key only the new ledger has.
    pub added: Vec<Row>,
    /// Rows whose key only the old ledger has.
    pub removed: Vec<Row>,
    /// Rows present in both whose fields differ: (old, new).
    pub changed: Vec<(Row, Row)>,
}

impl Diff {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

/// Validates ledger text in both stages: a syntax error stops with its line and column
/// (`Err`); otherwise every schema and rule problem of every row is in the report, each
/// naming its row by its place in the file.
pub fn check(text: &[u8], checks: &Checks<'_>) -> Result<Report, ParseError> {
    validate(text, checks).map(|(_, report)| report)
}

/// [`check`] that also returns the ledger of every row that passed the schema, from one
/// parse: what a gate needs to validate the ledger and then look rows up.
pub fn check_and_load(text: &[u8], checks: &Checks<'_>) -> Result<(Ledger, Report), ParseError> {
    let (raws, report) = validate(text, checks)?;
    let ledger = Ledger::from_rows(raws.into_iter().filter_map(RawRow::into_row).collect());
    Ok((ledger, report))
}

/// Both stages over text: the rows as far as they were read, and every problem, sorted and
/// placed in the text.
fn validate(text: &[u8], checks: &Checks<'_>) -> Result<(Vec<RawRow>, Report), ParseError> {
    let mut problems = Vec::new();
    let rows = read_rows(text, &mut problems)?;
    check::check_rules(&rows.raws, checks, &mut problems);
    check::sort_problems(&mut problems);
    locate(text, rows.starts.as_deref(), &mut problems);
    Ok((rows.raws, Report { problems }))
}

impl Ledger {
    /// An empty ledger (what a missing `freeze/ledger.json` means).
    pub fn new() -> Ledger {
        Ledger::default()
    }

    /// A ledger of these rows, sorted by key. Rows with equal keys (which break the
    /// `duplicate` rule) are sorted by their rendered text, so the order of `rows` never
    /// changes the ledger: not its rendering, its equality or a diff.
    pub fn from_rows(mut rows: Vec<Row>) -> Ledger {
        rows.sort_by(Row::cmp_rows);
        Ledger { rows }
    }

    /// The rows, sorted by key.
    pub fn rows(&self) -> &[Row] {
        &self.rows
    }

    /// The rows, owned.
    pub fn into_rows(self) -> Vec<Row> {
        self.rows
    }

    /// Whether the ledger has no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Parses ledger text. A syntax error is [`Error::Syntax`]; any schema problem (unknown
    /// or missing field, wrong type or shape) is [`Error::Schema`] with all of them. An
    /// empty text is a syntax error, never an empty ledger.
    pub fn from_slice(text: &[u8]) -> Result<Ledger, Error> {
        let mut problems = Vec::new();
        let rows = read_rows(text, &mut problems)?;
        locate(text, rows.starts.as_deref(), &mut problems);
        Ledger::from_raw(rows.raws, problems)
    }

    /// Maps a parsed ledger into rows (see [`Ledger::from_slice`]).
    pub fn from_value(value: Value) -> Result<Ledger, Error> {
        let mut problems = Vec::new();
        let raws = check::map_value(value, &mut problems);
        Ledger::from_raw(raws, problems)
    }

    fn from_raw(raws: Vec<RawRow>, mut problems: Vec<Problem>) -> Result<Ledger, Error> {
        if !problems.is_empty() {
            check::sort_problems(&mut problems);
            return Err(Error::Schema {
                schema: SCHEMA,
                problems,
            });
        }
        Ok(Ledger::from_rows(
            raws.into_iter().filter_map(RawRow::into_row).collect(),
        ))
    }

    /// Checks every rule on every row (the schema holds by construction). A problem names
    /// its row by its index in [`Ledger::rows`] (sorted by key, whatever the order of the
    /// file the ledger was read from) and has no position in a text.
    pub fn check(&self, checks: &Checks<'_>) -> Report {
        let raws: Vec<RawRow> = self
            .rows
            .iter()
            .enumerate()
            .map(|(i, r)| RawRow::from_row(i, r))
            .collect();
        let mut problems = Vec::new();
        check::check_rules(&raws, checks, &mut problems);
        check::sort_problems(&mut problems);
        Report { problems }
    }

    /// The rules each row breaks (the errors of [`Ledger::check`]), by row index, each rule
    /// once and sorted: a row with any freezes nothing. What [`crate::Listed`] shows.
    pub fn broken_rules(&self, checks: &Checks<'_>) -> Vec<Vec<Rule>> {
        let mut broken = vec![Vec::new(); self.rows.len()];
        for problem in self.check(checks).problems {
            if problem.severity != Severity::Error {
                continue;
            }
            if let Some(rules) = problem.row.and_then(|i| broken.get_mut(i))
                && !rules.contains(&problem.rule)
            {
                rules.push(problem.rule);
            }
        }
        for rules in &mut broken {
            rules.sort();
        }
        broken
    }

    /// The ledger as a JSON value: `schema` then `rows`, rows sorted by key, each row's
    /// keys in the fixed order.
    pub fn to_value(&self) -> Value {
        Value::Object(vec![
            ("schema".to_owned(), Value::String(SCHEMA.to_owned())),
            (
                "rows".to_owned(),
                Value::Array(self.rows.iter().map(Row::to_value).collect()),
            ),
        ])
    }

    /// The file text: [`Ledger::to_value`] with two-space indent and a trailing newline.
    /// Parsing and rendering a rendered ledger gives the same bytes.
    pub fn render(&self) -> String {
        to_pretty_string(&self.to_value())
    }

    /// Adds `row`, or renews (replaces) the row with the same key; returns the replaced row.
    ///
    /// Where the ledger holds several rows with that key (it breaks the `duplicate` rule),
    /// the first of them in rendering order is replaced and the others stay: `freeze` asks
    /// [`crate::renewable`] first, which refuses such a key.
    pub fn upsert(&mut self, row: Row) -> Option<Row> {
        let start = self
            .rows
            .partition_point(|r| r.cmp_key(&row) == Ordering::Less);
        let same = self.rows[start..]
            .iter()
            .take_while(|r| r.cmp_key(&row) == Ordering::Equal)
            .count();
        if same == 0 {
            self.rows.insert(start, row);
            return None;
        }
        let replaced = std::mem::replace(&mut self.rows[start], row);
        // Among other rows of its key, the new row may sort elsewhere.
        self.rows[start..start + same].sort_by(Row::cmp_rows);
        Some(replaced)
    }

    /// The rows with exactly this key: none or one in a valid ledger, more where the
    /// ledger breaks the `duplicate` rule.
    pub fn rows_with_key(&self, key: &Key) -> &[Row] {
        let start = self
            .rows
            .partition_point(|r| r.key_cmp(key) == Ordering::Less);
        let len = self.rows[start..]
            .iter()
            .take_while(|r| r.key_cmp(key) == Ordering::Equal)
            .count();
        &self.rows[start..start + len]
    }

    /// Removes every row of `property` for fixture `fixture`; returns them.
    pub fn lift(&mut self, property: &PropertyId, fixture: FixtureId) -> Vec<Row> {
        let (lifted, kept) = std::mem::take(&mut self.rows)
            .into_iter()
            .partition(|r| &r.property_id == property && r.fixture_id == fixture);
        self.rows = kept;
        lifted
    }

    /// The active row, if any, that freezes `property`'s fixture `digest` under `seed` for
    /// a run of class `run` at `now`. A row of the run's own class is preferred; a `remote`
    /// row also covers a `local` run. Expired rows excuse nothing.
    pub fn active_row(
        &self,
        property: &PropertyId,
        digest: &Digest,
        seed: &Seed,
        run: EnvClass,
        now: Timestamp,
    ) -> Option<&Row> {
        let prefix = |r: &Row| {
            r.property_id
                .cmp(property)
                .then_with(|| r.fixture_digest.cmp(digest))
                .then_with(|| r.seed.cmp(seed))
        };
        let start = self.rows.partition_point(|r| prefix(r) == Ordering::Less);
        let candidates = self.rows[start..]
            .iter()
            .take_while(|r| prefix(r) == Ordering::Equal)
            .filter(|r| r.env_class.covers(run) && r.is_active(now));
        let mut best: Option<&Row> = None;
        for r in candidates {
            if best.is_none() || r.env_class == run {
                best = Some(r);
            }
        }
        best
    }

    /// The row with exactly this key, if any (active or not); where several rows have it
    /// (the `duplicate` rule), one of them: [`Ledger::rows_with_key`] gives them all.
    pub fn get(&self, key: &Key) -> Option<&Row> {
        self.rows
            .binary_search_by(|r| r.key_cmp(key))
            .ok()
            .map(|i| &self.rows[i])
    }

    /// Rows that expire within `days` days of `now`, expired ones included, in key order.
    pub fn expiring(&self, now: Timestamp, days: u32) -> impl Iterator<Item = &Row> {
        self.rows
            .iter()
            .filter(move |r| r.expires_within(now, days))
    }

    /// What changed from `self` (old) to `new`, by key.
    pub fn diff(&self, new: &Ledger) -> Diff {
        let mut diff = Diff::default();
        let (mut a, mut b) = (self.rows.iter().peekable(), new.rows.iter().peekable());
        loop {
            match (a.peek(), b.peek()) {
                (None, None) => break,
                (Some(_), None) => diff.removed.extend(a.by_ref().cloned()),
                (None, Some(_)) => diff.added.extend(b.by_ref().cloned()),
                (Some(&x), Some(&y)) => match x.cmp_key(y) {
                    Ordering::Less => {
                        diff.removed.push(x.clone());
                        a.next();
                    }
                    Ordering::Greater => {
                        diff.added.push(y.clone());
                        b.next();
                    }
                    Ordering::Equal => {
                        if x != y {
                            diff.changed.push((x.clone(), y.clone()));
                        }
                        a.next();
                        b.next();
                    }
                },
            }
        }
        diff
    }
}

impl Row {
    fn key_cmp(&self, key: &Key) -> Ordering {
        self.property_id
            .cmp(&key.property_id)
            .then_with(|| self.fixture_digest.cmp(&key.fixture_digest))
            .then_with(|| self.seed.cmp(&key.seed))
            .then_with(|| self.env_class.cmp(&key.env_class))
    }
}
