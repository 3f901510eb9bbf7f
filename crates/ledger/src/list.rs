//! The `ledger list` views: a text table for people and a JSON document for tools.

use freezegate_canon::{Int, Value, to_pretty_string};

use crate::row::Row;
use crate::stamp::Timestamp;

/// The `schema` value of the JSON list document.
pub const LIST_SCHEMA: &str = "freezegate-ledger-list-v1";

/// How far off a row's expiry is at `now`: `expired`, `in 3 days`, `in 5 hours`,
/// `in under an hour`.
pub fn expiry_text(row: &Row, now: Timestamp) -> String {
    let secs = row.expires_at.unix_seconds() - now.unix_seconds();
    let plural = |n: i64, unit: &str| {
        if n == 1 {
            format!("in 1 {unit}")
        } else {
            format!("in {n} {unit}s")
        }
    };
    if secs <= 0 {
        "expired".to_owned()
    } else if secs >= 86_400 {
        plural(secs / 86_400, "day")
    } else if secs >= 3_600 {
        plural(secs / 3_600, "hour")
    } else {
        "in under an hour".to_owned()
    }
}

/// The rows as a table: property, fixture id, owner, env class, expiry. Ends with a newline;
/// no rows gives `no freeze rows`.
pub fn list_text<'a>(rows: impl IntoIterator<Item = &'a Row>, now: Timestamp) -> String {
    let header = ["PROPERTY", "FIXTURE", "OWNER", "ENV", "EXPIRES"].map(str::to_owned);
    let mut table = vec![header];
    for row in rows {
        table.push([
            row.property_id.to_string(),
            row.fixture_id.to_string(),
            row.owner.clone(),
            row.env_class.to_string(),
            format!("{} ({})", row.expires_at, expiry_text(row, now)),
        ]);
    }
    if table.len() == 1 {
        return "no freeze rows\n".to_owned();
    }
    let mut widths = [0usize; 5];
    for line in &table {
        for (w, cell) in widths.iter_mut().zip(line) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for line in &table {
        let mut text = String::new();
        for (i, cell) in line.iter().enumerate() {
            if i + 1 == line.len() {
                text.push_str(cell);
            } else {
                let pad = widths[i] - cell.chars().count();
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
/// "expires_in_seconds"}]}`, rendered like the ledger.
pub fn list_json<'a>(rows: impl IntoIterator<Item = &'a Row>, now: Timestamp) -> String {
    let items = rows
        .into_iter()
        .map(|row| {
            let mut value = row.to_value();
            if let Value::Object(members) = &mut value {
                members.push(("active".to_owned(), Value::Bool(row.is_active(now))));
                members.push((
                    "expires_in_seconds".to_owned(),
                    Value::Int(Int::from(
                        row.expires_at.unix_seconds() - now.unix_seconds(),
                    )),
                ));
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
