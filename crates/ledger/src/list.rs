//! The `ledger list` views: a text table for people and a JSON document for tools.

use std::fmt::Write as _;

use freezegate_canon::{Int, Value, to_pretty_string};
use unicode_width::UnicodeWidthStr as _;

use crate::check::Rule;
use crate::row::Row;
use crate::stamp::Timestamp;

/// A row as the listings show it: the row, and the rules it breaks (errors of
/// [`crate::Ledger::check`]), for which it freezes nothing while it stands.
///
/// Build one with [`Listed::new`] from what [`crate::Ledger::broken_rules`] found, as
/// `ledger list` does. A `&Row` converts into an unchecked one ([`Listed::unchecked`]), so
/// `list_text(ledger.rows(), now)` lists rows as read; the JSON listing says which rows
/// were checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Listed<'a> {
    /// The row.
    pub row: &'a Row,
    /// The rules it breaks, each once, in `Rule`'s order; empty for a valid row, and for a
    /// row that was not checked.
    pub broken: &'a [Rule],
    /// Whether the row was checked against the rules. When it was not, `broken` is empty
    /// because nothing was looked at, not because the row is valid.
    pub checked: bool,
}

impl<'a> Listed<'a> {
    /// A row checked against the rules, with the rules it breaks (`&[]` for a valid row).
    pub fn new(row: &'a Row, broken: &'a [Rule]) -> Self {
        Listed {
            row,
            broken,
            checked: true,
        }
    }

    /// A row listed as read, without checks.
    pub fn unchecked(row: &'a Row) -> Self {
        Listed {
            row,
            broken: &[],
            checked: false,
        }
    }
}

impl<'a> From<&'a Row> for Listed<'a> {
    fn from(row: &'a Row) -> Self {
        Listed::unchecked(row)
    }
}

impl Listed<'_> {
    /// Whether the row freezes its fixture at `now`: created, not expired, and breaking no
    /// rule (of those checked: an unchecked row breaks none that is known).
    pub fn is_active(&self, now: Timestamp) -> bool {
        self.broken.is_empty() && self.row.is_active(now)
    }

    fn expiry(&self, now: Timestamp) -> String {
        let mut text = format!("{} ({}", self.row.expires_at, expiry_text(self.row, now));
        if now < self.row.created_at && self.broken.is_empty() {
            // Listed without checks: say what the JSON's `active` says.
            let _ = write!(text, "; freezes nothing before {}", self.row.created_at);
        }
        if !self.broken.is_empty() {
            let rules: Vec<&str> = self.broken.iter().map(|r| r.as_str()).collect();
            text.push_str("; freezes nothing, breaks ");
            text.push_str(&rules.join(", "));
        }
        text.push(')');
        text
    }
}

/// The `schema` value of the JSON list document.
pub const LIST_SCHEMA: &str = "freezegate-ledger-list-v1";

/// How far off a row's expiry is at `now`, to the nearest hour: `expired`, `in 7 days`,
/// `in 2 days, 5 hours`, `in 5 hours`, `in under an hour`. (A row frozen for 7 days a
/// second ago expires in 7 days, not in 6.)
pub fn expiry_text(row: &Row, now: Timestamp) -> String {
    let secs = row.expires_at.unix_seconds() - now.unix_seconds();
    let count = |n: i64, unit: &str| {
        if n == 1 {
            format!("1 {unit}")
        } else {
            format!("{n} {unit}s")
        }
    };
    if secs <= 0 {
        return "expired".to_owned();
    }
    if secs < 3_600 {
        return "in under an hour".to_owned();
    }
    let hours = (secs + 1_800) / 3_600;
    match (hours / 24, hours % 24) {
        (0, h) => format!("in {}", count(h, "hour")),
        (d, 0) => format!("in {}", count(d, "day")),
        (d, h) => format!("in {}, {}", count(d, "day"), count(h, "hour")),
    }
}

/// The rows as a table: property, fixture id, owner, env class, expiry (a row that breaks
/// rules says so there: `2026-09-25T09:30:00Z (in 7 days; freezes nothing, breaks owner)`).
/// An owner with a character that `{:?}` would escape (a line break, a terminal escape) is
/// shown quoted and escaped, so that a row stays one line and sends nothing to a terminal.
/// Columns are padded by display width, so that an owner in wide characters (CJK, emoji)
/// keeps the columns after it aligned in a terminal. Ends with a newline; no rows gives
/// `no freeze rows`.
pub fn list_text<'a, L: Into<Listed<'a>>>(
    rows: impl IntoIterator<Item = L>,
    now: Timestamp,
) -> String {
    let header = ["PROPERTY", "FIXTURE", "OWNER", "ENV", "EXPIRES"].map(str::to_owned);
    let mut table = vec![header];
    for listed in rows {
        let listed = listed.into();
        let row = listed.row;
        table.push([
            row.property_id.to_string(),
            row.fixture_id.to_string(),
            crate::check::shown(&row.owner).into_owned(),
            row.env_class.to_string(),
            listed.expiry(now),
        ]);
    }
    if table.len() == 1 {
        return "no freeze rows\n".to_owned();
    }
    let mut widths = [0usize; 5];
    for line in &table {
        for (w, cell) in widths.iter_mut().zip(line) {
            *w = (*w).max(cell.width());
        }
    }
    let mut out = String::new();
    for line in &table {
        let mut text = String::new();
        for (i, cell) in line.iter().enumerate() {
            if i + 1 == line.len() {
                text.push_str(cell);
            } else {
                let pad = widths[i] - cell.width();
                text.push_str(cell);
                text.extend(std::iter::repeat_n(' ', pad + 2));
            }
        }
        out.push_str(text.trim_end());
        out.push('\n');
    }
    out
}

/// The rows as one JSON document: `{"schema", "now", "rows": [{row fields..., "active",
/// "expires_in_seconds", "broken", "checked"}]}`, rendered like the ledger: `active` is
/// whether the row freezes its fixture at `now` ([`Listed::is_active`]), `broken` the names
/// of the rules it breaks (`["owner"]`; `[]` for a valid row), `checked` whether the rules
/// were looked at (the row's [`Listed::checked`]). For an unchecked row, `broken` is `[]` and
/// `active` says only that the row is created and not expired.
pub fn list_json<'a, L: Into<Listed<'a>>>(
    rows: impl IntoIterator<Item = L>,
    now: Timestamp,
) -> String {
    let items = rows
        .into_iter()
        .map(|listed| {
            let listed = listed.into();
            let row = listed.row;
            let mut value = row.to_value();
            if let Value::Object(members) = &mut value {
                members.push(("active".to_owned(), Value::Bool(listed.is_active(now))));
                members.push((
                    "expires_in_seconds".to_owned(),
                    Value::Int(Int::from(
                        row.expires_at.unix_seconds() - now.unix_seconds(),
                    )),
                ));
                members.push((
                    "broken".to_owned(),
                    Value::Array(
                        listed
                            .broken
                            .iter()
                            .map(|r| Value::String(r.as_str().to_owned()))
                            .collect(),
                    ),
                ));
                members.push(("checked".to_owned(), Value::Bool(listed.checked)));
            }
            value
        })
        .collect();
    to_pretty_string(&Value::Object(vec![
        ("schema".to_owned(), Value::String(LIST_SCHEMA.to_owned())),
        ("now".to_owned(), Value::String(now.to_string())),
        ("rows".to_owned(), Value::Array(items)),
    ]))
}
