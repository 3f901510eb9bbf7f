//! The typed freeze row of ledger schema v1 and its key.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use freezegate_canon::{
    Canonicalization, Digest, FixtureId, Int, PropertyId, Value, to_pretty_string,
};
use freezegate_replay::Label;

use crate::error::Error;
use crate::stamp::Timestamp;

/// The `schema` value of `freeze/ledger.json`.
pub const SCHEMA: &str = "freezegate-ledger-v1";

/// The fields of a row, in the order they are rendered (SPEC §7).
pub const ROW_FIELDS: [&str; 14] = [
    "property_id",
    "fixture_id",
    "fixture_digest",
    "origin_digest",
    "canonicalization",
    "seed",
    "env_class",
    "runner_id",
    "replays",
    "patch_id",
    "owner",
    "reason",
    "created_at",
    "expires_at",
];

/// Where a set of replays ran: a developer's machine or a CI runner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EnvClass {
    /// `local`: a laptop or workstation.
    Local,
    /// `remote`: a CI runner.
    Remote,
}

impl EnvClass {
    /// `local` or `remote`.
    pub fn as_str(self) -> &'static str {
        match self {
            EnvClass::Local => "local",
            EnvClass::Remote => "remote",
        }
    }

    /// Whether a row of this class excuses a run of class `run`: its own class, and a
    /// `remote` row also covers a `local` run, never the other way round (SPEC §9).
    pub fn covers(self, run: EnvClass) -> bool {
        self == run || (self == EnvClass::Remote && run == EnvClass::Local)
    }
}

impl fmt::Display for EnvClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for EnvClass {
    type Err = Error;
    fn from_str(s: &str) -> Result<EnvClass, Error> {
        match s {
            "local" => Ok(EnvClass::Local),
            "remote" => Ok(EnvClass::Remote),
            _ => Err(Error::Name(format!(
                "unknown env class {s:?}: expected \"local\" or \"remote\""
            ))),
        }
    }
}

/// A generator seed: an integer of any length, ordered by numeric value.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Seed(Int);

impl Seed {
    /// The seed's exact integer.
    pub fn int(&self) -> &Int {
        &self.0
    }
}

impl From<Int> for Seed {
    fn from(n: Int) -> Seed {
        Seed(n)
    }
}

impl From<u64> for Seed {
    fn from(n: u64) -> Seed {
        Seed(Int::from(n))
    }
}

impl From<i64> for Seed {
    fn from(n: i64) -> Seed {
        Seed(Int::from(n))
    }
}

impl FromStr for Seed {
    type Err = Error;
    fn from_str(s: &str) -> Result<Seed, Error> {
        Int::parse(s)
            .map(Seed)
            .map_err(|_| Error::Name(format!("{s:?} is not an integer seed")))
    }
}

impl fmt::Display for Seed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.as_str())
    }
}

impl fmt::Debug for Seed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Seed({})", self.0.as_str())
    }
}

/// One freeze row (SPEC §7): a flickering, pinned fixture of one property that a human
/// excused for a bounded time. Every field is required.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Row {
    /// The property whose fixture flickers.
    pub property_id: PropertyId,
    /// The fixture's file name: the first 16 hex of `fixture_digest`.
    pub fixture_id: FixtureId,
    /// SHA-256 of the fixture's canonical bytes.
    pub fixture_digest: Digest,
    /// SHA-256 of the un-shrunk input the fixture came from.
    pub origin_digest: Digest,
    /// The canonical form the fixture was written in.
    pub canonicalization: Canonicalization,
    /// The seed every replay ran with.
    pub seed: Seed,
    /// Where the justifying replays ran.
    pub env_class: EnvClass,
    /// The machine that ran them.
    pub runner_id: String,
    /// The labels of the justifying replays, in run-index order.
    pub replays: Vec<Label>,
    /// The candidate under test (commit or pull request id).
    pub patch_id: String,
    /// The human who vouches for the row: a principal of `freeze/allowed_signers`.
    pub owner: String,
    /// The named cause of non-determinism.
    pub reason: String,
    /// When the row was written.
    pub created_at: Timestamp,
    /// When the row stops excusing anything.
    pub expires_at: Timestamp,
}

/// The identity of a row: no two rows of a valid ledger share it, and rows render sorted by it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    /// The property.
    pub property_id: PropertyId,
    /// The fixture's digest.
    pub fixture_digest: Digest,
    /// The seed.
    pub seed: Seed,
    /// The env class.
    pub env_class: EnvClass,
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "({}, {}, seed {}, {})",
            self.property_id, self.fixture_digest, self.seed, self.env_class
        )
    }
}

impl Row {
    /// The row's key.
    pub fn key(&self) -> Key {
        Key {
            property_id: self.property_id.clone(),
            fixture_digest: self.fixture_digest,
            seed: self.seed.clone(),
            env_class: self.env_class,
        }
    }

    /// Compares two rows by key without building keys.
    pub fn cmp_key(&self, other: &Row) -> Ordering {
        self.property_id
            .cmp(&other.property_id)
            .then_with(|| self.fixture_digest.cmp(&other.fixture_digest))
            .then_with(|| self.seed.cmp(&other.seed))
            .then_with(|| self.env_class.cmp(&other.env_class))
    }

    /// The order rows render in: by key, and rows with equal keys (a `duplicate`, which
    /// validation reports) by their rendered text, so that the order rows come in never shows
    /// in a ledger built from them. `Equal` only for rows that render the same.
    pub(crate) fn cmp_rows(&self, other: &Row) -> Ordering {
        self.cmp_key(other).then_with(|| {
            to_pretty_string(&self.to_value()).cmp(&to_pretty_string(&other.to_value()))
        })
    }

    /// Whether the row excuses anything at `now`: written at or before `now` and not yet
    /// expired. An expired row excuses nothing.
    pub fn is_active(&self, now: Timestamp) -> bool {
        self.created_at <= now && now < self.expires_at
    }

    /// Whether the row has expired by `now`.
    pub fn is_expired(&self, now: Timestamp) -> bool {
        self.expires_at <= now
    }

    /// Whether the row expires at or before `now` plus `days` days (expired rows included).
    pub fn expires_within(&self, now: Timestamp, days: u32) -> bool {
        match now.plus_days(i64::from(days)) {
            Some(limit) => self.expires_at <= limit,
            None => true,
        }
    }

    /// The row as a JSON object, keys in the fixed order of [`ROW_FIELDS`].
    pub fn to_value(&self) -> Value {
        let s = |text: &str| Value::String(text.to_owned());
        Value::Object(vec![
            ("property_id".into(), s(self.property_id.as_str())),
            ("fixture_id".into(), s(&self.fixture_id.to_string())),
            ("fixture_digest".into(), s(&self.fixture_digest.to_string())),
            ("origin_digest".into(), s(&self.origin_digest.to_string())),
            ("canonicalization".into(), s(self.canonicalization.as_str())),
            ("seed".into(), Value::Int(self.seed.int().clone())),
            ("env_class".into(), s(self.env_class.as_str())),
            ("runner_id".into(), s(&self.runner_id)),
            (
                "replays".into(),
                Value::Array(self.replays.iter().map(|l| s(l.as_str())).collect()),
            ),
            ("patch_id".into(), s(&self.patch_id)),
            ("owner".into(), s(&self.owner)),
            ("reason".into(), s(&self.reason)),
            ("created_at".into(), s(&self.created_at.to_string())),
            ("expires_at".into(), s(&self.expires_at.to_string())),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_order_numerically() {
        let mut seeds: Vec<Seed> = [
            "10",
            "-3",
            "9",
            "-20",
            "0",
            "123456789012345678901234567890",
        ]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
        seeds.sort();
        let text: Vec<String> = seeds.iter().map(Seed::to_string).collect();
        assert_eq!(
            text,
            [
                "-20",
                "-3",
                "0",
                "9",
                "10",
                "123456789012345678901234567890"
            ]
        );
    }

    #[test]
    fn remote_covers_local_never_the_reverse() {
        assert!(EnvClass::Remote.covers(EnvClass::Local));
        assert!(EnvClass::Remote.covers(EnvClass::Remote));
        assert!(EnvClass::Local.covers(EnvClass::Local));
        assert!(!EnvClass::Local.covers(EnvClass::Remote));
    }
}
