//! The rules of the only ledger writer, `freeze`: which replays, env classes, owners and
//! expiries may produce a row (SPEC §7, §8). The caller replays; this module decides.

use std::fmt;

use freezegate_canon::Value;
use freezegate_canon::fixture::Meta;
use freezegate_replay::{Label, Verdict, verdict};

use crate::ledger::Ledger;
use crate::policy::Policy;
use crate::row::{EnvClass, Key, Row, Seed};
use crate::signers::AllowedSigners;
use crate::stamp::Timestamp;

/// Everything a freeze row is made of, apart from the replays.
#[derive(Debug, Clone)]
pub struct FreezeRequest {
    /// The pinned fixture's meta file: property, fixture and origin digests, canonical form.
    pub meta: Meta,
    /// The seed the replays run with.
    pub seed: u64,
    /// The env class of this runner (`ENV_CLASS`).
    pub env_class: EnvClass,
    /// This runner's id (`RUNNER_ID`).
    pub runner_id: String,
    /// The human who vouches for the row.
    pub owner: String,
    /// The named cause of non-determinism.
    pub reason: String,
    /// The candidate under test.
    pub patch_id: String,
    /// How long the row lives, in days.
    pub expires_in_days: u32,
    /// The time of the freeze.
    pub now: Timestamp,
}

/// The `schema` of a freeze's JSON outcome ([`FreezeOutcome::to_value`]).
pub const FREEZE_SCHEMA: &str = "freezegate-freeze-result-v1";

/// The `schema` of `ledger lift --format json`'s document.
pub const LIFT_SCHEMA: &str = "freezegate-ledger-lift-v1";

/// Why `freeze` writes nothing. Each names the rule that refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// Every replay failed: a regression.
    Regression {
        /// The replay count.
        n: usize,
    },
    /// Every replay passed: nothing to freeze.
    NotReproduced {
        /// The replay count.
        n: usize,
    },
    /// A replay timed out or broke: the infra queue's business.
    Infra {
        /// Replays that timed out.
        timeouts: usize,
        /// Replays that broke the harness.
        harness_errors: usize,
    },
    /// The label list does not have the policy's length.
    Malformed {
        /// Labels received.
        got: usize,
        /// The replay count.
        n: usize,
    },
    /// The env class may not freeze.
    EnvClass {
        /// This runner's class.
        class: EnvClass,
        /// The classes the policy allows, as text.
        allowed: String,
    },
    /// The owner is not an allowed signer.
    Owner {
        /// The owner given.
        owner: String,
    },
    /// The expiry is zero days or over the policy limit.
    Expiry {
        /// Days asked for.
        days: u32,
        /// The policy limit.
        max: u32,
    },
    /// The expiry falls past [`Timestamp::MAX`], the last time a ledger can hold (`now` far
    /// in the future).
    ExpiryOutOfRange {
        /// Days asked for.
        days: u32,
        /// The time the expiry counts from.
        now: Timestamp,
    },
    /// An empty reason, runner id or patch id.
    Empty {
        /// Which field.
        field: &'static str,
    },
    /// There is no `freeze/allowed_signers`, so no owner can be one of its principals.
    NoSigners,
    /// The ledger already has several rows with the key of the row to write (it breaks the
    /// `duplicate` rule): renewing one of them would leave the ledger as invalid as it is.
    Duplicate {
        /// The key.
        key: Key,
        /// How many rows have it.
        rows: usize,
    },
}

fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("freeze write refused: ")?;
        match self {
            Refusal::Regression { n } => {
                write!(f, "all {n} replays failed — this is a regression, fix it")
            }
            Refusal::NotReproduced { n } => write!(
                f,
                "all {n} replays passed — the failure did not reproduce, there is nothing to freeze"
            ),
            Refusal::Infra {
                timeouts,
                harness_errors,
            } => {
                let mut parts = Vec::new();
                if *timeouts > 0 {
                    parts.push(format!(
                        "{} timed out",
                        plural(*timeouts, "replay", "replays")
                    ));
                }
                if *harness_errors > 0 {
                    parts.push(format!(
                        "{} broke the harness",
                        plural(*harness_errors, "replay", "replays")
                    ));
                }
                write!(f, "{} — infra queue, not the ledger", parts.join(" and "))
            }
            Refusal::Malformed { got, n } => {
                write!(f, "{got} labels for a replay count of {n}")
            }
            Refusal::EnvClass { class, allowed } => write!(
                f,
                "env class {class} may not freeze (policy allows: {allowed}; set ENV_CLASS and RUNNER_ID on a runner that may)"
            ),
            Refusal::Owner { owner } => write!(
                f,
                "owner {owner:?} is not exactly one principal of freeze/allowed_signers"
            ),
            Refusal::Expiry { days: 0, .. } => {
                f.write_str("an expiry of 0 days ends before it starts")
            }
            Refusal::Expiry { days, max } => write!(
                f,
                "an expiry of {days} days is over the policy limit of {max} days"
            ),
            Refusal::ExpiryOutOfRange { days, now } => write!(
                f,
                "an expiry of {days} days from {now} is past {}, the last time a ledger can hold",
                Timestamp::MAX
            ),
            Refusal::Empty { field: "reason" } => {
                f.write_str("the reason is empty: name the cause of non-determinism")
            }
            Refusal::Empty { field } => write!(f, "{field} is empty"),
            Refusal::NoSigners => f.write_str(
                "freeze/allowed_signers does not exist, so no owner can vouch for a row; add the owners' public keys to it in a signed commit",
            ),
            Refusal::Duplicate { key, rows } => write!(
                f,
                "freeze/ledger.json has {rows} rows with key {key}, which freezes nothing; remove them with `ledger lift` and freeze again"
            ),
        }
    }
}

impl Refusal {
    /// The rule that refused, as a stable snake_case name for machine output: `regression`,
    /// `not_reproduced`, `infra`, `malformed`, `env_class`, `owner` (also for a missing
    /// signers file), `expiry`, `empty` or `duplicate`.
    pub fn rule(&self) -> &'static str {
        match self {
            Refusal::Regression { .. } => "regression",
            Refusal::NotReproduced { .. } => "not_reproduced",
            Refusal::Infra { .. } => "infra",
            Refusal::Malformed { .. } => "malformed",
            Refusal::EnvClass { .. } => "env_class",
            Refusal::Owner { .. } => "owner",
            Refusal::Expiry { .. } | Refusal::ExpiryOutOfRange { .. } => "expiry",
            Refusal::Empty { .. } => "empty",
            Refusal::NoSigners => "owner",
            Refusal::Duplicate { .. } => "duplicate",
        }
    }
}

/// What a freeze came to: a row written (or renewed), or a refusal. `freeze` prints it as
/// one line ([`FreezeOutcome::line`]) or one JSON document ([`FreezeOutcome::to_value`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FreezeOutcome {
    /// The row was written; `renewed` when it replaced one with the same key.
    Written {
        /// The row as written.
        row: Box<Row>,
        /// Whether it replaced a row with the same key.
        renewed: bool,
    },
    /// A rule refused; nothing was written.
    Refused(Refusal),
}

impl FreezeOutcome {
    /// `froze …`/`renewed …` naming the row and the file to commit, or the refusal's sentence.
    pub fn line(&self) -> String {
        match self {
            FreezeOutcome::Written { row, renewed } => format!(
                "{} {} {} seed {} {} until {} in freeze/ledger.json; commit it signed",
                if *renewed { "renewed" } else { "froze" },
                row.property_id,
                row.fixture_id,
                row.seed,
                row.env_class,
                row.expires_at
            ),
            FreezeOutcome::Refused(refusal) => refusal.to_string(),
        }
    }

    /// The outcome as one JSON object: `schema` ([`FREEZE_SCHEMA`]), `result` (`froze`,
    /// `renewed` or `refused`),
    /// `property_id`, `fixture_id`, `env_class`, `runner_id`, `labels` (the replays', in
    /// run-index order; empty when refused before any replay), `rule` and `message` (`null`
    /// unless refused; `rule` as [`Refusal::rule`]) and `row` (`null` when refused).
    pub fn to_value(&self, request: &FreezeRequest, labels: &[Label]) -> Value {
        let text = |s: &str| Value::String(s.to_owned());
        let (result, rule, message, row) = match self {
            FreezeOutcome::Written { row, renewed } => (
                if *renewed { "renewed" } else { "froze" },
                Value::Null,
                Value::Null,
                row.to_value(),
            ),
            FreezeOutcome::Refused(refusal) => (
                "refused",
                text(refusal.rule()),
                text(&refusal.to_string()),
                Value::Null,
            ),
        };
        Value::Object(vec![
            ("schema".into(), text(FREEZE_SCHEMA)),
            ("result".into(), text(result)),
            (
                "property_id".into(),
                text(request.meta.property_id.as_str()),
            ),
            (
                "fixture_id".into(),
                text(&request.meta.fixture_id.to_string()),
            ),
            ("env_class".into(), text(request.env_class.as_str())),
            ("runner_id".into(), text(&request.runner_id)),
            (
                "labels".into(),
                Value::Array(labels.iter().map(|l| text(l.as_str())).collect()),
            ),
            ("rule".into(), rule),
            ("message".into(), message),
            ("row".into(), row),
        ])
    }
}

impl std::error::Error for Refusal {}

impl FreezeRequest {
    /// The key of the row this request writes.
    pub fn key(&self) -> Key {
        Key {
            property_id: self.meta.property_id.clone(),
            fixture_digest: self.meta.fixture_digest,
            seed: Seed::from(self.seed),
            env_class: self.env_class,
        }
    }
}

/// Whether `freeze` may write a row with `key` into `ledger`: refused when the ledger already
/// has several rows with that key (the `duplicate` rule). `freeze` asks before its replays,
/// and again under the writers' lock, before [`Ledger::upsert`].
pub fn renewable(ledger: &Ledger, key: &Key) -> Result<(), Refusal> {
    match ledger.rows_with_key(key).len() {
        0 | 1 => Ok(()),
        rows => Err(Refusal::Duplicate {
            key: key.clone(),
            rows,
        }),
    }
}

/// The checks that need no replay: env class, owner, expiry, non-empty fields. `freeze`
/// runs them first so that a refused request costs no oracle runs.
pub fn precheck(
    request: &FreezeRequest,
    policy: &Policy,
    signers: &AllowedSigners,
) -> Result<(), Refusal> {
    if !policy.freeze_env_classes.contains(&request.env_class) {
        return Err(Refusal::EnvClass {
            class: request.env_class,
            allowed: policy.classes_text(),
        });
    }
    if !signers.allows(&request.owner) {
        return Err(Refusal::Owner {
            owner: request.owner.clone(),
        });
    }
    if request.expires_in_days == 0 || request.expires_in_days > policy.max_freeze_days {
        return Err(Refusal::Expiry {
            days: request.expires_in_days,
            max: policy.max_freeze_days,
        });
    }
    if request
        .now
        .plus_days(i64::from(request.expires_in_days))
        .is_none()
    {
        return Err(Refusal::ExpiryOutOfRange {
            days: request.expires_in_days,
            now: request.now,
        });
    }
    for (field, value) in [
        ("reason", &request.reason),
        ("runner_id", &request.runner_id),
        ("patch_id", &request.patch_id),
    ] {
        if value.trim().is_empty() {
            return Err(Refusal::Empty { field });
        }
    }
    Ok(())
}

/// The row `freeze` writes for `labels` (the replays just run, in run-index order), or the
/// rule that refuses it. The verdict must be `freeze_eligible` under the property's N
/// ([`Policy::replays_for`]: its own raised count where it has one, else the policy's), the N
/// `check` judges the row's replays by.
pub fn freeze_row(
    request: &FreezeRequest,
    labels: &[Label],
    policy: &Policy,
    signers: &AllowedSigners,
) -> Result<Row, Refusal> {
    precheck(request, policy, signers)?;
    let n = policy.replays_for(&request.meta.property_id);
    let count = |l: Label| labels.iter().filter(|&&x| x == l).count();
    match verdict(labels, n) {
        Verdict::FreezeEligible => {}
        Verdict::BlockPatch => return Err(Refusal::Regression { n }),
        Verdict::NotReproduced => return Err(Refusal::NotReproduced { n }),
        Verdict::InfraQueue => {
            return Err(Refusal::Infra {
                timeouts: count(Label::Timeout),
                harness_errors: count(Label::HarnessError),
            });
        }
        Verdict::RejectMalformed => {
            return Err(Refusal::Malformed {
                got: labels.len(),
                n,
            });
        }
    }
    let expires_at = request
        .now
        .plus_days(i64::from(request.expires_in_days))
        .ok_or(Refusal::ExpiryOutOfRange {
            days: request.expires_in_days,
            now: request.now,
        })?;
    let meta = &request.meta;
    Ok(Row {
        property_id: meta.property_id.clone(),
        fixture_id: meta.fixture_id,
        fixture_digest: meta.fixture_digest,
        origin_digest: meta.origin_digest,
        canonicalization: meta.canonicalization,
        seed: Seed::from(request.seed),
        env_class: request.env_class,
        runner_id: request.runner_id.clone(),
        replays: labels.to_vec(),
        patch_id: request.patch_id.clone(),
        owner: request.owner.clone(),
        reason: request.reason.clone(),
        created_at: request.now,
        expires_at,
    })
}
