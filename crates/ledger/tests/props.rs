//! Invariants of the ledger, checked on generated input.

mod common;

use common::{digest, fixtures_upto, signers};
use freezegate_canon::{
    Canonicalization, Digest, Float, Int, Position, Value, parse, to_pretty_string, value_bytes,
};
use freezegate_ledger::{
    Checks, EnvClass, Error, Ledger, Policy, Row, Rule, Seed, Timestamp, check,
};
use freezegate_replay::Label;
use proptest::prelude::*;

fn label() -> impl Strategy<Value = Label> {
    prop_oneof![
        Just(Label::AssertPass),
        Just(Label::AssertFail),
        Just(Label::Timeout),
        Just(Label::HarnessError),
    ]
}

fn row() -> impl Strategy<Value = Row> {
    (
        (
            prop::sample::select(vec![
                "a",
                "tax.total",
                "Z-9_x.y",
                "cart.discount_never_negative",
            ]),
            0u64..40,
            any::<[u8; 8]>(),
            prop::bool::ANY,
            prop_oneof![
                any::<i64>().prop_map(|n| n.to_string()),
                "-?[1-9][0-9]{19,30}",
                Just("0".to_owned()),
            ],
            prop::bool::ANY,
        ),
        (
            "\\PC{1,12}",
            prop::collection::vec(label(), 0..10),
            "[0-9a-f]{7,40}",
            "\\PC{0,16}",
            "\\PC{0,24}",
            0i64..4_000_000_000,
            -100i64..3_000_000,
        ),
    )
        .prop_map(
            |(
                (property, n, origin, ordered, seed, remote),
                (runner, replays, patch, owner, reason, created, span),
            )| {
                let d = digest(n);
                let created_at = Timestamp::from_unix_seconds(created).unwrap();
                Row {
                    property_id: property.parse().unwrap(),
                    fixture_id: d.fixture_id(),
                    fixture_digest: d,
                    origin_digest: Digest::of(&origin),
                    canonicalization: if ordered {
                        Canonicalization::V1Ordered
                    } else {
                        Canonicalization::V1
                    },
                    seed: seed.parse::<Seed>().unwrap(),
                    env_class: if remote {
                        EnvClass::Remote
                    } else {
                        EnvClass::Local
                    },
                    runner_id: runner,
                    replays,
                    patch_id: patch,
                    owner,
                    reason,
                    created_at,
                    expires_at: Timestamp::from_unix_seconds(created + span).unwrap(),
                }
            },
        )
}

/// Rows with distinct keys.
fn rows() -> impl Strategy<Value = Vec<Row>> {
    prop::collection::vec(row(), 0..12).prop_map(|rows| {
        let mut seen = std::collections::BTreeSet::new();
        rows.into_iter().filter(|r| seen.insert(r.key())).collect()
    })
}

fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| Value::Int(Int::from(n))),
        (-1e9f64..1e9).prop_map(|x| Value::Float(Float::new(x).unwrap())),
        "\\PC{0,12}".prop_map(Value::String),
        prop::sample::select(vec![
            "freezegate-ledger-v1",
            "assert_pass",
            "assert_fail",
            "remote",
            "local",
            "2026-09-17T12:00:00Z",
            "freezegate-canon-v1",
        ])
        .prop_map(|s| Value::String(s.to_owned())),
    ];
    leaf.prop_recursive(4, 48, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop::sample::select(vec![
                        "schema",
                        "rows",
                        "property_id",
                        "fixture_id",
                        "seed",
                        "replays",
                        "owner",
                        "nodeid",
                        "merge",
                        "x",
                    ]),
                    inner
                ),
                0..6
            )
            .prop_map(|members| {
                let mut seen = std::collections::BTreeSet::new();
                Value::Object(
                    members
                        .into_iter()
                        .filter(|(k, _)| seen.insert(*k))
                        .map(|(k, v)| (k.to_owned(), v))
                        .collect(),
                )
            }),
        ]
    })
}

/// A valid ledger value with one field of one row replaced by arbitrary JSON.
fn mutated_ledger() -> impl Strategy<Value = Value> {
    (rows(), any::<prop::sample::Index>(), 0usize..15, json()).prop_map(
        |(rows, which, field, replacement)| {
            let mut value = Ledger::from_rows(rows).to_value();
            if let Some(Value::Array(items)) = value.pointer_mut("/rows")
                && !items.is_empty()
            {
                let i = which.index(items.len());
                if let Value::Object(members) = &mut items[i] {
                    if field < members.len() {
                        members[field].1 = replacement;
                    } else {
                        members.clear();
                    }
                }
            }
            value
        },
    )
}

/// The outcome as text, with the places of schema problems dropped.
fn without_positions(result: Result<Ledger, Error>) -> Result<Ledger, String> {
    result.map_err(|e| match e {
        Error::Schema { problems, .. } => problems
            .into_iter()
            .map(|mut p| {
                p.at = None;
                p.to_string()
            })
            .collect::<Vec<_>>()
            .join("; "),
        other => other.to_string(),
    })
}

/// The byte offset of a line and column (in characters) of `text`.
fn offset_of(text: &[u8], at: Position) -> usize {
    let s = std::str::from_utf8(text).unwrap();
    let line_start: usize = s.split('\n').take(at.line - 1).map(|l| l.len() + 1).sum();
    let line = &s[line_start..];
    line_start
        + line
            .char_indices()
            .nth(at.column - 1)
            .map_or(line.len(), |(i, _)| i)
}

fn run_check(text: &[u8]) {
    let signers = signers();
    let lookup = fixtures_upto(5);
    let policy = Policy::default();
    let checks = Checks::new(
        &policy,
        "2026-09-17T12:00:00Z".parse().unwrap(),
        &signers,
        &lookup,
    );
    if let Ok(report) = check(text, &checks) {
        for p in &report.problems {
            assert!(!p.to_string().is_empty());
        }
    }
    let _ = Ledger::from_slice(text);
}

/// Rows some of which share a key (the `duplicate` rule): copies, and rows that differ
/// elsewhere; with an order to shuffle them into.
fn rows_with_duplicates() -> impl Strategy<Value = (Vec<Row>, Vec<usize>)> {
    (
        prop::collection::vec(row(), 1..8),
        prop::collection::vec((any::<prop::sample::Index>(), row(), any::<bool>()), 0..6),
    )
        .prop_map(|(mut rows, twins)| {
            for (of, other, copy) in twins {
                let base = rows[of.index(rows.len())].clone();
                let twin = if copy {
                    base
                } else {
                    Row {
                        property_id: base.property_id,
                        fixture_id: base.fixture_id,
                        fixture_digest: base.fixture_digest,
                        seed: base.seed,
                        env_class: base.env_class,
                        ..other
                    }
                };
                rows.push(twin);
            }
            rows
        })
        .prop_flat_map(|rows| {
            let n = rows.len();
            (Just(rows), Just((0..n).collect::<Vec<_>>()).prop_shuffle())
        })
}

/// The ledger text of `rows` in their order.
fn text_of(rows: &[Row]) -> String {
    to_pretty_string(&Value::Object(vec![
        (
            "schema".to_owned(),
            Value::String("freezegate-ledger-v1".to_owned()),
        ),
        (
            "rows".to_owned(),
            Value::Array(rows.iter().map(Row::to_value).collect()),
        ),
    ]))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    /// Even where rows share a key, the order they come in never shows: not in the
    /// rendering, the ledger's equality, a diff, or a write after a lift; and every row of a
    /// shared key breaks the `duplicate` rule, wherever it is.
    #[test]
    fn input_order_never_shows_even_with_duplicate_keys((rows, order) in rows_with_duplicates()) {
        let shuffled: Vec<Row> = order.iter().map(|&i| rows[i].clone()).collect();
        let a = Ledger::from_rows(rows.clone());
        let b = Ledger::from_rows(shuffled.clone());
        prop_assert_eq!(a.render(), b.render());
        prop_assert_eq!(&a, &b);
        prop_assert!(a.diff(&b).is_empty());
        let read = Ledger::from_slice(text_of(&shuffled).as_bytes()).unwrap();
        prop_assert_eq!(&read, &a);
        // Lifting one property's fixture from each leaves the same rows behind.
        let (mut a_lifted, mut b_lifted) = (a.clone(), b.clone());
        let first = &rows[0];
        a_lifted.lift(&first.property_id, first.fixture_id);
        b_lifted.lift(&first.property_id, first.fixture_id);
        prop_assert_eq!(a_lifted.render(), b_lifted.render());

        let policy = Policy::default();
        let signers = signers();
        let fixtures = fixtures_upto(40);
        let checks = Checks::new(&policy, Timestamp::from_unix_seconds(0).unwrap(), &signers, &fixtures);
        let shared = |r: &Row| a.rows_with_key(&r.key()).len() > 1;
        for (r, rules) in a.rows().iter().zip(a.broken_rules(&checks)) {
            prop_assert_eq!(rules.contains(&Rule::Duplicate), shared(r), "{:?}", r);
        }
        let report = check(text_of(&shuffled).as_bytes(), &checks).unwrap();
        for (at, r) in shuffled.iter().enumerate() {
            let blamed = report
                .problems
                .iter()
                .any(|p| p.row == Some(at) && p.rule == Rule::Duplicate);
            prop_assert_eq!(blamed, shared(r), "row {} {:?}", at, r);
        }
    }

    #[test]
    fn render_then_parse_is_the_identity(rows in rows()) {
        let text = Ledger::from_rows(rows).render();
        let again = Ledger::from_slice(text.as_bytes()).unwrap().render();
        prop_assert_eq!(again, text);
    }

    #[test]
    fn input_row_order_never_changes_the_output(
        rows in rows().prop_flat_map(|rows| {
            let n = rows.len();
            (Just(rows), Just((0..n).collect::<Vec<_>>()).prop_shuffle())
        })
    ) {
        let (rows, order) = rows;
        let sorted = Ledger::from_rows(rows.clone()).render();
        let shuffled: Vec<Value> = order.iter().map(|&i| rows[i].to_value()).collect();
        let text = to_pretty_string(&Value::Object(vec![
            ("schema".to_owned(), Value::String("freezegate-ledger-v1".to_owned())),
            ("rows".to_owned(), Value::Array(shuffled)),
        ]));
        prop_assert_eq!(Ledger::from_slice(text.as_bytes()).unwrap().render(), sorted);
    }

    #[test]
    fn validation_never_panics_on_arbitrary_json(value in json()) {
        run_check(to_pretty_string(&value).as_bytes());
    }

    #[test]
    fn validation_never_panics_on_damaged_ledgers(value in mutated_ledger()) {
        run_check(to_pretty_string(&value).as_bytes());
    }

    #[test]
    fn validation_never_panics_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        run_check(&bytes);
    }

    /// The row-at-a-time reader and canon's whole-document parser accept, reject and
    /// report the same documents.
    #[test]
    fn streaming_and_whole_document_reading_agree(value in mutated_ledger(), compact in any::<bool>()) {
        let text = if compact {
            value_bytes(&value, Canonicalization::V1Ordered).unwrap()
        } else {
            to_pretty_string(&value).into_bytes()
        };
        // Text knows where problems are; a value does not. All else is the same.
        let streamed = without_positions(Ledger::from_slice(&text));
        let whole = without_positions(parse(&text).map_err(Error::from).and_then(Ledger::from_value));
        prop_assert_eq!(streamed, whole);
    }

    /// Every problem of a ledger read from text has a place, and the place is the key of
    /// the field to blame, or the element for `replays[i]`, or else the row's `{`.
    #[test]
    fn every_problem_points_at_its_field_or_row(value in mutated_ledger(), compact in any::<bool>()) {
        let text = if compact {
            value_bytes(&value, Canonicalization::V1Ordered).unwrap()
        } else {
            to_pretty_string(&value).into_bytes()
        };
        let (signers, lookup) = (signers(), fixtures_upto(5));
        let policy = Policy::default();
        let checks = Checks::new(&policy, "2026-09-17T12:00:00Z".parse().unwrap(), &signers, &lookup);
        let report = check(&text, &checks).unwrap();
        for p in &report.problems {
            let at = p.at.ok_or_else(|| TestCaseError::fail(format!("no place: {p}")))?;
            let here = &text[offset_of(&text, at)..];
            let row = p.row.and_then(|r| value.pointer(&format!("/rows/{r}")));
            let field = p.field.as_deref().map(|f| f.split('[').next().unwrap_or(f));
            let present = match (row, field) {
                (Some(Value::Object(members)), Some(f)) => members.iter().any(|(k, _)| k == f),
                _ => false,
            };
            match (row, field, present) {
                (Some(_), Some(f), true) if p.field.as_deref() != Some(f) => {
                    // An element of the field's array: not its key, not a separator.
                    prop_assert!(!here.starts_with(format!("\"{f}\"").as_bytes()), "{p}");
                    prop_assert!(!matches!(here[0], b',' | b']' | b' ' | b'\n'), "{p}");
                }
                (Some(_), Some(f), true) => {
                    prop_assert!(here.starts_with(format!("\"{f}\"").as_bytes()), "{p}");
                }
                (Some(_), _, _) => prop_assert_eq!(here[0], b'{', "{}", p),
                (None, _, _) => prop_assert!(false, "a valid envelope has no problem: {p}"),
            }
        }
    }

    #[test]
    fn a_damaged_byte_gives_the_same_syntax_error_as_the_whole_parser(
        rows in rows(),
        at in any::<prop::sample::Index>(),
        byte in prop::sample::select(b"{}[],:\"\\ xa0\x00\xff".to_vec()),
        cut in any::<bool>(),
    ) {
        let mut text = Ledger::from_rows(rows).render().into_bytes();
        let i = at.index(text.len());
        if cut {
            text.truncate(i);
        } else {
            text[i] = byte;
        }
        let streamed = without_positions(Ledger::from_slice(&text));
        let whole = without_positions(parse(&text).map_err(Error::from).and_then(Ledger::from_value));
        prop_assert_eq!(streamed, whole);
    }

    /// The binary-search lookup agrees with a plain scan of the rows.
    #[test]
    fn lookup_agrees_with_a_linear_scan(
        rows in rows(),
        pick in any::<prop::sample::Index>(),
        remote in any::<bool>(),
        now in 0i64..4_100_000_000,
    ) {
        let ledger = Ledger::from_rows(rows.clone());
        let now = Timestamp::from_unix_seconds(now).unwrap();
        let run = if remote { EnvClass::Remote } else { EnvClass::Local };
        // Query the key of some row (or of fixture 0 when there are none).
        let probe = if rows.is_empty() { row_for_probe() } else { rows[pick.index(rows.len())].clone() };
        let got = ledger.active_row(&probe.property_id, &probe.fixture_digest, &probe.seed, run, now);
        let candidates: Vec<&Row> = ledger
            .rows()
            .iter()
            .filter(|r| r.property_id == probe.property_id
                && r.fixture_digest == probe.fixture_digest
                && r.seed == probe.seed
                && r.env_class.covers(run)
                && r.is_active(now))
            .collect();
        match got {
            None => prop_assert!(candidates.is_empty()),
            Some(r) => {
                prop_assert!(candidates.contains(&r));
                // The run's own class wins when it has an active row.
                if candidates.iter().any(|c| c.env_class == run) {
                    prop_assert_eq!(r.env_class, run);
                }
            }
        }
    }

    /// Applying a diff to the old ledger gives the new one.
    #[test]
    fn a_diff_takes_the_old_ledger_to_the_new(old in rows(), new in rows()) {
        let (old, new) = (Ledger::from_rows(old), Ledger::from_rows(new));
        let diff = old.diff(&new);
        let mut rebuilt = old.clone();
        for r in &diff.removed {
            prop_assert!(new.get(&r.key()).is_none());
            let kept: Vec<Row> = rebuilt.rows().iter().filter(|x| x.key() != r.key()).cloned().collect();
            rebuilt = Ledger::from_rows(kept);
        }
        for (before, after) in &diff.changed {
            prop_assert_eq!(before.key(), after.key());
            prop_assert_ne!(before, after);
            rebuilt.upsert(after.clone());
        }
        for r in &diff.added {
            prop_assert!(old.get(&r.key()).is_none());
            rebuilt.upsert(r.clone());
        }
        prop_assert_eq!(rebuilt, new);
    }

    /// What serde serialisers see (insta's JSON snapshots, `serde_json`) is the ledger: it
    /// reads back as the same rows, and its pretty form is the rendered file byte for byte.
    #[test]
    fn serialising_a_ledger_gives_the_file(rows in rows(), old in rows()) {
        let ledger = Ledger::from_rows(rows);
        let json = serde_json::to_string_pretty(&ledger).unwrap();
        prop_assert_eq!(&Ledger::from_slice(json.as_bytes()).unwrap(), &ledger);
        let rendered = ledger.render();
        prop_assert_eq!(json + "\n", rendered);
        // A diff serialises as its three lists, each row as in the file. (Read back with
        // canon's parser: serde_json's own Value cannot hold the seeds past 64 bits.)
        let diff = Ledger::from_rows(old).diff(&ledger);
        let value = freezegate_canon::parse(&serde_json::to_vec(&diff).unwrap()).unwrap();
        let rows = |key: &str| match value.get(key) {
            Some(Value::Array(items)) => items.clone(),
            other => panic!("{key}: {other:?}"),
        };
        let as_values = |rows: &[Row]| rows.iter().map(Row::to_value).collect::<Vec<_>>();
        prop_assert_eq!(rows("added"), as_values(&diff.added));
        prop_assert_eq!(rows("removed"), as_values(&diff.removed));
        let changed: Vec<Value> = diff
            .changed
            .iter()
            .map(|(old, new)| Value::Object(vec![
                ("old".to_owned(), old.to_value()),
                ("new".to_owned(), new.to_value()),
            ]))
            .collect();
        prop_assert_eq!(rows("changed"), changed);
    }
}

fn row_for_probe() -> Row {
    common::row("a", 0)
}

const DAY: i64 = 86_400;

fn at(secs: i64) -> Timestamp {
    Timestamp::from_unix_seconds(secs).unwrap()
}

/// A `max_freeze_days` that reaches past the last instant a timestamp can hold (the end of
/// year 9999) limits nothing: the configuration accepts it, so a week-long row is valid under
/// it, not "more than N days after created_at".
#[test]
fn a_limit_past_the_last_timestamp_limits_nothing() {
    // 2026-09-21.
    let created = 1_790_000_000;
    for max_days in [14, 3_000_000, u32::MAX] {
        let mut row = common::row("a", 0);
        row.created_at = at(created);
        row.expires_at = at(created + 7 * DAY);
        let policy = Policy {
            max_freeze_days: max_days,
            ..Policy::default()
        };
        let (signers, lookup) = (signers(), fixtures_upto(1));
        let checks = Checks::new(&policy, at(created + DAY), &signers, &lookup);
        let report = Ledger::from_rows(vec![row]).check(&checks);
        assert_eq!(report.errors().count(), 0, "{max_days}: {report:?}");
    }
}

/// A step in seconds from a boundary: on it, one second either side, or anywhere within
/// `span` of it.
fn step(span: i64) -> impl Strategy<Value = i64> {
    prop_oneof![-1i64..=1, -span..=span]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// SPEC §7: `created_at` is not in the future; `expires_at` is after `created_at` and at
    /// most `max_freeze_days` later. Each rule holds exactly: on its boundary and one second
    /// either side, the row is judged as the SPEC says, and no other error appears.
    #[test]
    fn created_and_expires_rules_hold_exactly_at_their_boundaries(
        created in 0i64..4_000_000_000,
        now_step in step(30 * DAY),
        max_days in 1u32..=30,
        from_created in any::<bool>(),
        expires_step in step(40 * DAY),
    ) {
        let limit = i64::from(max_days) * DAY;
        // Around `created_at` itself, or around the last instant the policy allows.
        let expires = if from_created { expires_step } else { limit + expires_step };
        let mut row = common::row("a", 0);
        row.created_at = at(created);
        row.expires_at = at(created + expires);
        let policy = Policy { max_freeze_days: max_days, ..Policy::default() };
        let (signers, lookup) = (signers(), fixtures_upto(1));
        let checks = Checks::new(&policy, at(created + now_step), &signers, &lookup);
        let mut expected = std::collections::BTreeSet::new();
        if now_step < 0 {
            expected.insert(Rule::CreatedAt);
        }
        if expires <= 0 || expires > limit {
            expected.insert(Rule::ExpiresAt);
        }
        let ledger = Ledger::from_rows(vec![row]);
        let report = ledger.check(&checks);
        let errors: std::collections::BTreeSet<Rule> = report.errors().map(|p| p.rule).collect();
        prop_assert_eq!(&errors, &expected, "{:?}", report);
        // The text path judges the same.
        let from_text = check(ledger.render().as_bytes(), &checks).unwrap();
        let errors: std::collections::BTreeSet<Rule> = from_text.errors().map(|p| p.rule).collect();
        prop_assert_eq!(&errors, &expected, "{:?}", from_text);
    }

    /// A row excuses from its `created_at` up to, not at, its `expires_at` (SPEC §7: an
    /// expired row excuses nothing), and the lookup finds it exactly then.
    #[test]
    fn a_row_is_active_from_created_at_up_to_but_not_at_expires_at(
        created in 0i64..4_000_000_000,
        span in 1i64..=14 * DAY,
        from_created in any::<bool>(),
        now_step in step(20 * DAY),
    ) {
        let mut row = common::row("a", 0);
        row.created_at = at(created);
        row.expires_at = at(created + span);
        let now = if from_created { created + now_step } else { created + span + now_step };
        let active = created <= now && now < created + span;
        prop_assert_eq!(row.is_active(at(now)), active);
        prop_assert_eq!(row.is_expired(at(now)), now >= created + span);
        let ledger = Ledger::from_rows(vec![row.clone()]);
        let found = ledger.active_row(
            &row.property_id,
            &row.fixture_digest,
            &row.seed,
            EnvClass::Remote,
            at(now),
        );
        prop_assert_eq!(found.is_some(), active);
    }

    /// `ledger list --expiring DAYS` lists exactly the rows that expire at or before `now`
    /// plus DAYS days: the row that expires at that very second is listed, one a second
    /// later is not.
    #[test]
    fn expiring_lists_the_rows_up_to_and_including_the_limit(
        now in 0i64..4_000_000_000,
        days in 0u32..60,
        steps in prop::collection::vec(step(70 * DAY), 1..8),
    ) {
        let limit = now + i64::from(days) * DAY;
        let rows: Vec<Row> = steps
            .iter()
            .zip(0u64..)
            .map(|(&step, n)| {
                let mut row = common::row("a", n);
                row.expires_at = at(limit + step);
                row.created_at = at(limit + step - DAY);
                row
            })
            .collect();
        let expected: std::collections::BTreeSet<Digest> = rows
            .iter()
            .zip(&steps)
            .filter(|&(_, &step)| step <= 0)
            .map(|(row, _)| row.fixture_digest)
            .collect();
        let ledger = Ledger::from_rows(rows);
        let listed: std::collections::BTreeSet<Digest> =
            ledger.expiring(at(now), days).map(|r| r.fixture_digest).collect();
        prop_assert_eq!(listed, expected);
    }
}
