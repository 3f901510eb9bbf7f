//! `Serialize` for the ledger's types, so that serde serialisers (insta's
//! `assert_json_snapshot!` and `assert_yaml_snapshot!` with their redactions, `serde_json`)
//! see exactly what the file holds.
//!
//! Each type serialises as its JSON value: a [`Ledger`] and a [`Row`] as in
//! `freeze/ledger.json` (keys in the fixed order of [`crate::ROW_FIELDS`], rows sorted by
//! key), a [`Problem`] as in the report of `ledger check --format json`, a check
//! [`Report`] as that whole report without `--strict` (call [`Report::strict`] first for the
//! strict one: expired rows then count as errors in `ok` and in each problem), a [`Diff`] as
//! `{"added": [rows], "removed": [rows], "changed": [{"old": row, "new": row}]}`. There is no
//! `Deserialize`: reading goes through [`Ledger::from_slice`], which checks the schema.

use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

use crate::check::{Problem, Report};
use crate::ledger::{Diff, Ledger};
use crate::row::Row;

impl Serialize for Ledger {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(s)
    }
}

impl Serialize for Row {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(s)
    }
}

impl Serialize for Problem {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(s)
    }
}

impl Serialize for Report {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_value(false).serialize(s)
    }
}

impl Serialize for Diff {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Change<'a> {
            old: &'a Row,
            new: &'a Row,
        }
        let changed: Vec<Change<'_>> = self
            .changed
            .iter()
            .map(|(old, new)| Change { old, new })
            .collect();
        let mut out = s.serialize_struct("Diff", 3)?;
        out.serialize_field("added", &self.added)?;
        out.serialize_field("removed", &self.removed)?;
        out.serialize_field("changed", &changed)?;
        out.end()
    }
}
