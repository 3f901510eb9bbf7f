//! Rendering, validation reports, lookup, expiry, lift and diff of the freeze ledger.

mod common;

use common::{NOW, digest, fixtures_upto, now, row, signers, ts};
use freezegate_canon::{
    Canonicalization, FixtureId, Int, Position, PropertyId, Value, parse, to_pretty_string,
};
use freezegate_ledger::{
    Checks, EnvClass, FixtureFile, Ledger, Listed, Policy, Rule, Seed, Severity, Timestamp, check,
    expiry_text, list_json, list_text, read, update,
};

fn set(row: &mut Value, field: &str, v: Value) {
    let Value::Object(members) = row else {
        panic!("not an object")
    };
    match members.iter_mut().find(|(k, _)| k == field) {
        Some(slot) => slot.1 = v,
        None => members.push((field.to_owned(), v)),
    }
}

fn remove(row: &mut Value, field: &str) {
    if let Value::Object(members) = row {
        members.retain(|(k, _)| k != field);
    }
}

fn s(text: &str) -> Value {
    Value::String(text.to_owned())
}

fn labels(names: &[&str]) -> Value {
    Value::Array(names.iter().map(|n| s(n)).collect())
}

fn envelope(rows: Vec<Value>) -> Value {
    Value::Object(vec![
        ("schema".to_owned(), s("freezegate-ledger-v1")),
        ("rows".to_owned(), Value::Array(rows)),
    ])
}

fn representative() -> Ledger {
    let mut shared_a = row("tax.cached_total_equals_fresh_sum", 0);
    shared_a.reason = "hash map iteration order feeds the cache key".to_owned();
    let mut shared_b = row("cart.discount_never_negative", 0);
    shared_b.owner = "carol@example.com".to_owned();
    let mut local = row("cart.discount_never_negative", 1);
    local.env_class = EnvClass::Local;
    local.runner_id = "laptop-alice".to_owned();
    let mut ordered = row("json.member_order_is_kept", 2);
    ordered.canonicalization = Canonicalization::V1Ordered;
    ordered.seed = "123456789012345678901234567890".parse().unwrap();
    let mut remote_twin = row("cart.discount_never_negative", 1);
    remote_twin.seed = Seed::from(7_u64);
    Ledger::from_rows(vec![ordered, shared_a, local, remote_twin, shared_b])
}

#[test]
fn rendered_ledger_snapshot() {
    let ledger = representative();
    let text = ledger.render();
    insta::assert_snapshot!("rendered_ledger", text);
    // Parsing and rendering the rendered text changes nothing.
    assert_eq!(Ledger::from_slice(text.as_bytes()).unwrap().render(), text);
    // Serialised with serde (as insta's `assert_json_snapshot!` does), the ledger is the
    // file: same keys in the same order, the 30-digit seed a number with every digit.
    assert_eq!(serde_json::to_string_pretty(&ledger).unwrap() + "\n", text);
    // Escapes too: both write non-ASCII text as it is and control characters alike.
    let mut odd = row("tax.cached_total_equals_fresh_sum", 0);
    odd.reason = "tab\there \u{1f} \"quoted\" back\\slash é \u{7f} \u{2028}".to_owned();
    let odd = Ledger::from_rows(vec![odd]);
    assert_eq!(
        serde_json::to_string_pretty(&odd).unwrap() + "\n",
        odd.render()
    );
    assert_eq!(
        serde_json::to_string(&ledger.rows()[0]).unwrap(),
        String::from_utf8(
            freezegate_canon::value_bytes(
                &ledger.rows()[0].to_value(),
                Canonicalization::V1Ordered
            )
            .unwrap()
        )
        .unwrap()
    );
}

#[test]
fn list_table_snapshot() {
    let mut soon = row("tax.cached_total_equals_fresh_sum", 0);
    soon.expires_at = ts("2026-09-17T15:00:00Z");
    let mut gone = row("cart.discount_never_negative", 1);
    gone.created_at = ts("2026-09-01T00:00:00Z");
    gone.expires_at = ts("2026-09-10T00:00:00Z");
    let mut minutes = row("cart.discount_never_negative", 2);
    minutes.expires_at = ts("2026-09-17T12:30:00Z");
    let ledger = Ledger::from_rows(vec![
        soon,
        gone,
        minutes,
        row("json.member_order_is_kept", 3),
    ]);
    insta::assert_snapshot!("list_table", list_text(ledger.rows(), now()));
    let expiring: Vec<_> = ledger.expiring(now(), 1).collect();
    assert_eq!(
        expiring.len(),
        3,
        "the row expiring in 8 days is not listed"
    );
    assert_eq!(list_text(Ledger::new().rows(), now()), "no freeze rows\n");
    let json = list_json(ledger.rows(), now());
    let value = parse(json.as_bytes()).unwrap();
    assert_eq!(
        value.pointer("/rows/0/active"),
        Some(&Value::Bool(false)),
        "{json}"
    );
    assert_eq!(
        value.pointer("/rows/0/expires_in_seconds"),
        Some(&Value::Int(Int::from(-648_000)))
    );
}

/// The table shows the ledger's own text so that each row stays one line and sends nothing
/// to a terminal, and a row listed without checks whose `created_at` is still to come says
/// that it freezes nothing yet, as the JSON's `active` does.
#[test]
fn the_table_escapes_owners_and_says_when_a_row_is_not_yet_in_force() {
    let mut hostile = row("tax.cached_total_equals_fresh_sum", 0);
    hostile.owner = "\u{1b}[31mEVIL\u{1b}[0m\nconfig.fake  0000  root".to_owned();
    let mut early = row("cart.discount_never_negative", 1);
    early.created_at = ts("2026-09-20T00:00:00Z");
    early.expires_at = ts("2026-09-25T00:00:00Z");
    let ledger = Ledger::from_rows(vec![hostile, early]);
    let table = list_text(ledger.rows(), now());
    assert_eq!(table.lines().count(), 3, "{table}");
    assert!(
        !table.chars().any(|c| c.is_control() && c != '\n'),
        "{table:?}"
    );
    assert!(
        table.contains(r#""\u{1b}[31mEVIL\u{1b}[0m\nconfig.fake  0000  root""#),
        "{table}"
    );
    assert!(
        table.contains("(in 7 days, 12 hours; freezes nothing before 2026-09-20T00:00:00Z)"),
        "{table}"
    );
    let value = parse(list_json(ledger.rows(), now()).as_bytes()).unwrap();
    let early_at = ledger
        .rows()
        .iter()
        .position(|r| r.created_at == ts("2026-09-20T00:00:00Z"))
        .unwrap();
    assert_eq!(
        value.pointer(&format!("/rows/{early_at}/active")),
        Some(&Value::Bool(false))
    );
}

/// Owners in wide characters (CJK, emoji) keep the table's later columns aligned on a
/// terminal: padding counts display columns, not characters.
#[test]
fn the_table_pads_owners_by_display_width() {
    // Display width by hand for these owners: an ideograph or an emoji takes two columns.
    let columns = |s: &str| -> usize {
        s.chars()
            .map(|c| match c {
                '\u{4e00}'..='\u{9fff}' | '\u{1f300}'..='\u{1faff}' => 2,
                _ => 1,
            })
            .sum()
    };
    let owners = [
        "\u{5c71}\u{7530}\u{592a}\u{90ce}@example.com",
        "jos\u{e9}@example.com",
        "\u{1f980}@example.com",
        "alice@example.com",
    ];
    let rows = owners
        .iter()
        .zip(0..)
        .map(|(owner, i)| {
            let mut r = row("cart.discount_never_negative", i);
            r.owner = (*owner).to_owned();
            r
        })
        .collect();
    let ledger = Ledger::from_rows(rows);
    let table = list_text(ledger.rows(), now());
    let env_columns: Vec<usize> = table
        .lines()
        .map(|line| {
            let at = line
                .find("ENV")
                .or_else(|| line.find("remote"))
                .unwrap_or_else(|| panic!("no env cell in {line:?}"));
            columns(&line[..at])
        })
        .collect();
    assert_eq!(env_columns.len(), 5, "{table}");
    assert!(
        env_columns.iter().all(|&c| c == env_columns[0]),
        "{env_columns:?}\n{table}"
    );
    // The widest owner sets the column: 4 ideographs and 12 ASCII, two spaces after.
    let owner_at = table.lines().next().and_then(|l| l.find("OWNER")).unwrap();
    assert_eq!(env_columns[0], owner_at + 8 + 12 + 2, "{table}");
}

/// A row that breaks a rule freezes nothing: the listings say so, and do not call it active.
#[test]
fn listings_show_the_rules_a_row_breaks() {
    let good = row("tax.cached_total_equals_fresh_sum", 0);
    let mut stranger = row("cart.discount_never_negative", 1);
    stranger.owner = "mallory@example.com".to_owned();
    let twin = stranger.clone();
    let ledger = Ledger::from_rows(vec![good, stranger, twin]);
    let signers = signers();
    let lookup = fixtures_upto(2);
    let policy = Policy::default();
    let checks = Checks::new(&policy, now(), &signers, &lookup);
    let broken = ledger.broken_rules(&checks);
    assert_eq!(broken.len(), 3);
    let good_at = ledger
        .rows()
        .iter()
        .position(|r| r.owner == "alice@example.com")
        .unwrap();
    for (i, rules) in broken.iter().enumerate() {
        if i == good_at {
            assert!(rules.is_empty(), "{rules:?}");
        } else {
            assert!(rules.contains(&Rule::Owner), "row {i}: {rules:?}");
            let mut sorted = rules.clone();
            sorted.sort();
            sorted.dedup();
            assert_eq!(&sorted, rules);
        }
    }
    let listed: Vec<Listed> = ledger
        .rows()
        .iter()
        .zip(&broken)
        .map(|(row, broken)| Listed::new(row, broken))
        .collect();
    let value = parse(list_json(listed.clone(), now()).as_bytes()).unwrap();
    for (i, rules) in broken.iter().enumerate() {
        assert_eq!(
            value.pointer(&format!("/rows/{i}/active")),
            Some(&Value::Bool(rules.is_empty()))
        );
        let names = rules.iter().map(|r| s(r.as_str())).collect();
        assert_eq!(
            value.pointer(&format!("/rows/{i}/broken")),
            Some(&Value::Array(names))
        );
        assert_eq!(
            value.pointer(&format!("/rows/{i}/checked")),
            Some(&Value::Bool(true))
        );
    }
    insta::assert_snapshot!("list_table_broken", list_text(listed, now()));
    // Rows listed as read break nothing that the listing knows of.
    let plain = parse(list_json(ledger.rows(), now()).as_bytes()).unwrap();
    assert_eq!(
        plain.pointer("/rows/0/broken"),
        Some(&Value::Array(Vec::new()))
    ); // ...and say that they were not checked.
    assert_eq!(plain.pointer("/rows/0/checked"), Some(&Value::Bool(false)));
}

/// A ledger that breaks every rule once (and an envelope with an unknown field).
fn broken_ledger_text() -> String {
    let p = "tax.cached_total_equals_fresh_sum";
    let good = |n| row(p, n).to_value();
    let mut rows = vec![good(0)];
    // 1: keyed by a test name.
    rows.push(Value::Object(vec![
        ("nodeid".to_owned(), s("tests/test_tax.py::test_total")),
        ("reason".to_owned(), s("flaky on CI")),
    ]));
    // 2: unknown fields, one of them a merge approval.
    let mut r = good(2);
    set(&mut r, "merge", Value::Bool(true));
    set(&mut r, "note", s("temporary"));
    rows.push(r);
    // 3: a missing field is never defaulted.
    let mut r = good(3);
    remove(&mut r, "origin_digest");
    rows.push(r);
    // 4: wrong shapes.
    let mut r = good(4);
    set(&mut r, "property_id", s(""));
    set(
        &mut r,
        "fixture_digest",
        s(&digest(4).to_string().to_uppercase()),
    );
    set(&mut r, "canonicalization", s("freezegate-canon-v2"));
    set(&mut r, "seed", s("20260917"));
    set(&mut r, "env_class", s("staging"));
    set(&mut r, "replays", labels(&["assert_pass", "flaky"]));
    set(&mut r, "created_at", s("2026-09-15 09:30"));
    rows.push(r);
    // 5: the id is not the digest's prefix.
    let mut r = good(5);
    set(&mut r, "fixture_id", s(&digest(6).fixture_id().to_string()));
    rows.push(r);
    // 6: every replay failed: a regression.
    let mut r = good(6);
    set(&mut r, "replays", labels(&["assert_fail"; 7]));
    rows.push(r);
    // 7: a timeout (and only 5 replays: a warning).
    let mut r = good(7);
    set(
        &mut r,
        "replays",
        labels(&[
            "assert_pass",
            "timeout",
            "assert_fail",
            "assert_pass",
            "assert_fail",
        ]),
    );
    rows.push(r);
    // 8: a laptop may not freeze.
    let mut r = good(8);
    set(&mut r, "env_class", s("local"));
    rows.push(r);
    // 9: not an allowed signer; a list of principals is not one principal.
    let mut r = good(9);
    set(&mut r, "owner", s("bob@example.com,carol@example.com"));
    rows.push(r);
    // 10: empty reason.
    let mut r = good(10);
    set(&mut r, "reason", s("  "));
    rows.push(r);
    // 11: written in the future.
    let mut r = good(11);
    set(&mut r, "created_at", s("2026-09-18T00:00:00Z"));
    set(&mut r, "expires_at", s("2026-09-20T00:00:00Z"));
    rows.push(r);
    // 12: longer than the policy allows.
    let mut r = good(12);
    set(&mut r, "expires_at", s("2026-10-15T09:30:00Z"));
    rows.push(r);
    // 13: expired (a warning).
    let mut r = good(13);
    set(&mut r, "created_at", s("2026-09-01T00:00:00Z"));
    set(&mut r, "expires_at", s("2026-09-10T00:00:00Z"));
    rows.push(r);
    // 14: same key as row 0.
    let mut r = good(0);
    set(&mut r, "owner", s("carol@example.com"));
    rows.push(r);
    // 15: no fixture file.
    rows.push(good(99));
    // 16: the fixture file hashes to something else.
    rows.push(good(98));
    // 17: expires before it was created.
    let mut r = good(17);
    set(&mut r, "expires_at", s("2026-09-15T09:00:00Z"));
    rows.push(r);
    let mut ledger = envelope(rows);
    set(&mut ledger, "comment", s("not part of the schema"));
    to_pretty_string(&ledger)
}

/// The JSON report of `ledger check`: every problem with its place in the file.
#[test]
fn check_report_as_json_names_each_problems_line_and_column() {
    let text = Ledger::from_rows(vec![row("tax.cached_total_equals_fresh_sum", 0)])
        .render()
        .replacen(
            "{",
            "{\n  \"comment\": \"ünicode counts as one column\", \"x\": 1,",
            1,
        )
        .replacen("\"assert_fail\"", "\"flaky\"", 1)
        .replace("\"alice@example.com\"", "\"mallory@example.com\"");
    let (signers, lookup) = (signers(), fixtures_upto(1));
    let policy = Policy::default();
    let checks = Checks::new(&policy, now(), &signers, &lookup);
    let report = check(text.as_bytes(), &checks).unwrap();
    insta::assert_snapshot!("check_report_json", report.to_json(false));
    // Serialised with serde, the problems are the report's `problems`, key for key.
    let report_json: serde_json::Value = serde_json::from_str(&report.to_json(false)).unwrap();
    assert_eq!(
        serde_json::to_value(&report.problems).unwrap(),
        report_json["problems"]
    );
    // And the whole report is the document, for `assert_json_snapshot!` with redactions.
    assert_eq!(
        serde_json::to_string_pretty(&report).unwrap() + "\n",
        report.to_json(false)
    );
}

#[test]
fn validation_report_of_a_ledger_breaking_every_rule() {
    let known = fixtures_upto(20);
    let lookup = move |p: &PropertyId, id: FixtureId| {
        if id == digest(98).fixture_id() {
            FixtureFile::Found(b"{\"n\":\"tampered\"}\n".to_vec())
        } else {
            known(p, id)
        }
    };
    let signers = signers();
    let policy = Policy::default();
    let checks = Checks::new(&policy, now(), &signers, &lookup);
    let report = check(broken_ledger_text().as_bytes(), &checks).unwrap();
    let text: Vec<String> = report.problems.iter().map(|p| p.to_string()).collect();
    insta::assert_snapshot!("broken_ledger_report", text.join("\n"));
    // Every rule is broken at least once.
    for rule in [
        Rule::Envelope,
        Rule::UnknownField,
        Rule::MissingField,
        Rule::Shape,
        Rule::NameKeyed,
        Rule::IdPrefix,
        Rule::Replays,
        Rule::ReplayCount,
        Rule::EnvClass,
        Rule::Owner,
        Rule::Empty,
        Rule::CreatedAt,
        Rule::ExpiresAt,
        Rule::Expired,
        Rule::Duplicate,
        Rule::Fixture,
    ] {
        assert!(report.problems.iter().any(|p| p.rule == rule), "{rule:?}");
    }
    // Row 0 breaks only `duplicate`: row 14 has its key, and a duplicate makes neither row
    // trustworthy, whichever comes first in the file.
    let row_0: Vec<Rule> = report
        .problems
        .iter()
        .filter(|p| p.row == Some(0))
        .map(|p| p.rule)
        .collect();
    assert_eq!(row_0, [Rule::Duplicate]);
    assert!(report.fails(false));
    // Each problem names its row's fixture id where the row has one.
    assert!(
        report
            .problems
            .iter()
            .filter(|p| p.row.is_some_and(|r| r != 1))
            .all(|p| p.fixture_id.is_some())
    );
}

#[test]
fn expired_rows_warn_and_fail_only_when_strict() {
    let mut r = row("tax.cached_total_equals_fresh_sum", 0);
    r.created_at = ts("2026-09-01T00:00:00Z");
    r.expires_at = ts("2026-09-10T00:00:00Z");
    let ledger = Ledger::from_rows(vec![r]);
    let (signers, lookup) = (signers(), fixtures_upto(1));
    let policy = Policy::default();
    let checks = Checks::new(&policy, now(), &signers, &lookup);
    let report = ledger.check(&checks);
    assert_eq!(report.problems.len(), 1, "{report:?}");
    assert_eq!(report.problems[0].severity, Severity::Warning);
    assert!(!report.fails(false));
    assert!(report.fails(true));
    // The strict document agrees with itself, and with `strict()`: not ok, and the expired
    // row an error.
    let strict = parse(report.to_json(true).as_bytes()).unwrap();
    assert_eq!(strict.pointer("/ok"), Some(&Value::Bool(false)));
    assert_eq!(
        strict.pointer("/problems/0/severity"),
        Some(&s("error")),
        "{strict:?}"
    );
    assert_eq!(report.to_json(true), report.clone().strict().to_json(true));
    // Serialised with serde, a report is its lenient document; its strict form is that of
    // `strict()`.
    let serialized =
        |r: &freezegate_ledger::Report| serde_json::to_string_pretty(r).unwrap() + "\n";
    assert_eq!(serialized(&report), report.to_json(false));
    assert_eq!(serialized(&report.clone().strict()), report.to_json(true));
    let lenient = parse(report.to_json(false).as_bytes()).unwrap();
    assert_eq!(lenient.pointer("/ok"), Some(&Value::Bool(true)));
    assert_eq!(lenient.pointer("/problems/0/severity"), Some(&s("warning")));
    // The same through the text path, which also knows the place: the key `expires_at`.
    let text = ledger.render();
    let mut from_text = check(text.as_bytes(), &checks).unwrap();
    let key = text.find("\"expires_at\"").unwrap();
    assert_eq!(
        from_text.problems[0].at,
        Some(Position::at(text.as_bytes(), key))
    );
    from_text.problems[0].at = None;
    assert_eq!(from_text, report);
}

/// The ledger's own text in a problem, a fixture id or an unknown field's name, is written as
/// values are: quoted and escaped when it holds a line break, a terminal escape or a quote,
/// so that a problem stays one line; and an unknown key that holds brackets is found where it
/// is, not at the row or at the key before its bracket.
#[test]
fn problems_escape_the_ledgers_text_and_find_keys_with_brackets() {
    let ledger = Ledger::from_rows(vec![row("tax.cached_total_equals_fresh_sum", 0)]);
    let id = digest(0).fixture_id().to_string();
    let text = ledger
        .render()
        .replace(&format!("\"fixture_id\": \"{id}\""), r#""fixture_id": "x\n\u001b]0;t\u0007""#)
        .replacen(
            "\"owner\": ",
            "\"a\\r\\u001b[2Kb\": 1,\n      \"note[x\": 2,\n      \"owner[0]\": 3,\n      \"owner\": ",
            1,
        );
    let (signers, lookup) = (signers(), fixtures_upto(1));
    let policy = Policy::default();
    let checks = Checks::new(&policy, now(), &signers, &lookup);
    let report = check(text.as_bytes(), &checks).unwrap();
    for problem in &report.problems {
        let shown = problem.to_string();
        assert!(!shown.chars().any(char::is_control), "{shown:?}");
        assert!(
            shown.contains(r#"row 0 (fixture "x\n\u{1b}]0;t\u{7}")"#),
            "{shown}"
        );
    }
    for (field, shown, key) in [
        (
            "a\r\u{1b}[2Kb",
            r#", "a\r\u{1b}[2Kb": unknown field"#,
            r#""a\r\u001b[2Kb""#,
        ),
        ("note[x", ", note[x: unknown field", r#""note[x""#),
        ("owner[0]", ", owner[0]: unknown field", r#""owner[0]""#),
    ] {
        let problem = report
            .problems
            .iter()
            .find(|p| p.field.as_deref() == Some(field))
            .unwrap_or_else(|| panic!("{field:?} in {report:?}"));
        assert!(
            problem.describe().ends_with(shown),
            "{}",
            problem.describe()
        );
        let at = text.find(key).unwrap();
        assert_eq!(
            problem.at,
            Some(Position::at(text.as_bytes(), at)),
            "{field:?}"
        );
    }
}

#[test]
fn a_clean_ledger_has_no_problems() {
    let (signers, lookup) = (signers(), fixtures_upto(3));
    let policy = Policy::default();
    let checks = Checks::new(&policy, now(), &signers, &lookup);
    let mut ledger = representative();
    ledger.lift(
        &"cart.discount_never_negative".parse().unwrap(),
        digest(1).fixture_id(),
    );
    // Its ordered row's 30-digit seed is one no run can have (a meta file's seed is a u64).
    let report = ledger.check(&checks);
    let rules: Vec<(Rule, Option<&str>)> = report
        .problems
        .iter()
        .map(|p| (p.rule, p.field.as_deref()))
        .collect();
    assert_eq!(rules, [(Rule::Seed, Some("seed"))], "{report:?}");
    let ledger = Ledger::from_rows(
        ledger
            .rows()
            .iter()
            .cloned()
            .map(|mut r| {
                if r.seed.int().to_u64().is_none() {
                    r.seed = Seed::from(u64::MAX);
                }
                r
            })
            .collect(),
    );
    let report = ledger.check(&checks);
    assert_eq!(report.problems, [], "{report:?}");
    assert!(!report.fails(true));
}

#[test]
fn syntax_errors_name_line_and_column_and_empty_is_not_empty() {
    let err = Ledger::from_slice(b"").unwrap_err();
    assert_eq!(err.syntax().map(|e| (e.line, e.column)), Some((1, 1)));
    let text = representative().render();
    let cut = &text.as_bytes()[..text.len() / 2];
    let err = Ledger::from_slice(cut).unwrap_err();
    let e = err.syntax().expect("a truncated ledger is a syntax error");
    assert_eq!(e.line, text[..text.len() / 2].lines().count());
    let (signers, lookup) = (signers(), fixtures_upto(0));
    let policy = Policy::default();
    let checks = Checks::new(&policy, now(), &signers, &lookup);
    assert!(
        check(
            b"{\"schema\": \"freezegate-ledger-v1\",\n \"rows\": [}",
            &checks
        )
        .is_err()
    );
}

#[test]
fn a_missing_file_is_an_empty_ledger() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.json");
    assert!(read(&path).unwrap().is_empty());
    std::fs::write(&path, b"").unwrap();
    let err = read(&path).unwrap_err();
    assert!(err.syntax().is_some());
    assert!(format!("{err}").ends_with("ledger.json"), "{err}");
}

#[test]
fn lookup_finds_the_active_row_and_remote_covers_local() {
    let p: PropertyId = "tax.cached_total_equals_fresh_sum".parse().unwrap();
    let seed = Seed::from(20_260_917_u64);
    let mut local_only = row(p.as_str(), 1);
    local_only.env_class = EnvClass::Local;
    let mut expired = row(p.as_str(), 2);
    expired.expires_at = ts("2026-09-16T00:00:00Z");
    let ledger = Ledger::from_rows(vec![row(p.as_str(), 0), local_only, expired]);
    let at = |n: u64, run| ledger.active_row(&p, &digest(n), &seed, run, now());
    assert_eq!(
        at(0, EnvClass::Remote).map(|r| r.env_class),
        Some(EnvClass::Remote)
    );
    assert_eq!(
        at(0, EnvClass::Local).map(|r| r.env_class),
        Some(EnvClass::Remote)
    );
    assert_eq!(
        at(1, EnvClass::Local).map(|r| r.env_class),
        Some(EnvClass::Local)
    );
    assert!(
        at(1, EnvClass::Remote).is_none(),
        "a local row never covers a remote run"
    );
    assert!(
        at(2, EnvClass::Remote).is_none(),
        "an expired row excuses nothing"
    );
    assert!(at(3, EnvClass::Remote).is_none());
    // Another seed or property is not covered.
    let other_seed = Seed::from(1_u64);
    assert!(
        ledger
            .active_row(&p, &digest(0), &other_seed, EnvClass::Remote, now())
            .is_none()
    );
    let q: PropertyId = "cart.discount_never_negative".parse().unwrap();
    assert!(
        ledger
            .active_row(&q, &digest(0), &seed, EnvClass::Remote, now())
            .is_none()
    );
    // Before its creation a row excuses nothing either.
    assert!(
        ledger
            .active_row(
                &p,
                &digest(0),
                &seed,
                EnvClass::Remote,
                ts("2026-09-01T00:00:00Z")
            )
            .is_none()
    );
}

#[test]
fn upsert_renews_lift_removes_and_diff_reports_by_key() {
    let p = "tax.cached_total_equals_fresh_sum";
    let old = Ledger::from_rows(vec![row(p, 0), row(p, 1), row(p, 2)]);
    let mut new = old.clone();
    let mut renewed = row(p, 1);
    renewed.expires_at = ts("2026-09-28T09:30:00Z");
    assert_eq!(new.upsert(renewed.clone()), Some(row(p, 1)));
    assert_eq!(new.upsert(row(p, 3)), None);
    let lifted = new.lift(&p.parse().unwrap(), digest(2).fixture_id());
    assert_eq!(lifted, [row(p, 2)]);
    assert_eq!(new.rows().len(), 3);
    let diff = old.diff(&new);
    assert_eq!(diff.added, [row(p, 3)]);
    assert_eq!(diff.removed, [row(p, 2)]);
    assert_eq!(diff.changed, [(row(p, 1), renewed)]);
    assert!(new.diff(&new).is_empty());
    insta::assert_json_snapshot!("diff_serialized", diff);
    assert!(new.get(&row(p, 3).key()).is_some());
    assert!(new.get(&row(p, 2).key()).is_none());
}

#[test]
fn an_update_that_changes_no_row_leaves_the_file_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("freeze/ledger.json");
    let p = "tax.cached_total_equals_fresh_sum";
    // A missing ledger stays missing when nothing is lifted from it.
    let lifted = update(&path, |ledger| {
        ledger.lift(&p.parse().unwrap(), digest(0).fixture_id())
    });
    assert!(lifted.unwrap().is_empty());
    assert!(!path.exists(), "a lift of nothing created the ledger");
    // A valid ledger written by hand on one line is not re-rendered by a lift of nothing.
    let one_line = to_pretty_string(&Ledger::from_rows(vec![row(p, 0)]).to_value())
        .replace('\n', "")
        .replace("  ", "");
    std::fs::write(&path, &one_line).unwrap();
    let lifted = update(&path, |ledger| {
        ledger.lift(&p.parse().unwrap(), digest(1).fixture_id())
    });
    assert!(lifted.unwrap().is_empty());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), one_line);
    // A change of a row writes the file, rendered.
    update(&path, |ledger| ledger.upsert(row(p, 1))).unwrap();
    let written = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        written,
        Ledger::from_rows(vec![row(p, 0), row(p, 1)]).render()
    );
}

#[test]
fn a_schema_broken_file_is_refused_with_every_problem() {
    let mut bad = row("tax.cached_total_equals_fresh_sum", 0).to_value();
    remove(&mut bad, "owner");
    set(&mut bad, "test", s("x"));
    let text = to_pretty_string(&envelope(vec![bad]));
    let err = Ledger::from_slice(text.as_bytes()).unwrap_err();
    let message = err.to_string();
    assert!(message.contains("row 0 (fixture "), "{message}");
    assert!(message.contains("test: unknown field"), "{message}");
    assert!(message.contains("owner: missing field"), "{message}");
    assert_eq!(NOW, now().to_string());
}

#[test]
fn a_fixture_file_that_is_not_canonical_is_named_so_not_by_its_raw_hash() {
    let signers = signers();
    let p = "tax.cached_total_equals_fresh_sum";
    // Fixture 0 is `{"n":0}`: written with a space it keeps its canonical digest but is not
    // canonical bytes; written as `{"n":9}` it is canonical bytes of another fixture.
    for (bytes, message) in [
        (
            &b"{ \"n\":0}\n"[..],
            "is not canonical bytes plus one newline",
        ),
        (&b"{\"n\":9}\n"[..], "hashes to"),
    ] {
        let lookup = move |_: &PropertyId, _: FixtureId| FixtureFile::Found(bytes.to_vec());
        let policy = Policy::default();
        let checks = Checks::new(&policy, now(), &signers, &lookup);
        let report = Ledger::from_rows(vec![row(p, 0)]).check(&checks);
        assert_eq!(report.problems.len(), 1, "{report:?}");
        assert!(report.problems[0].message.contains(message), "{report:?}");
    }
}

/// A lookup that knows fixtures 0..3 and, for each, what its meta file records.
struct WithMetas {
    recorded: freezegate_ledger::Recorded,
}

impl freezegate_ledger::FixtureLookup for WithMetas {
    fn fixture(&self, property: &PropertyId, id: FixtureId) -> FixtureFile {
        fixtures_upto(3)(property, id)
    }

    fn recorded(&self, _: &PropertyId, _: FixtureId) -> Option<freezegate_ledger::Recorded> {
        Some(self.recorded)
    }
}

/// SPEC §3: the choice of canonicalization is recorded in the meta file and the ledger row;
/// a row that says otherwise than its fixture's meta file (form or origin) breaks rule `meta`.
#[test]
fn a_row_that_disagrees_with_its_fixtures_meta_file_breaks_the_meta_rule() {
    let signers = signers();
    let good = row("tax.cached_total_equals_fresh_sum", 0);
    let check_with = |recorded: freezegate_ledger::Recorded| {
        let lookup = WithMetas { recorded };
        let policy = Policy::default();
        let checks = Checks::new(&policy, now(), &signers, &lookup);
        Ledger::from_rows(vec![good.clone()])
            .check(&checks)
            .problems
            .iter()
            .map(|p| (p.rule, p.field.clone().unwrap_or_default()))
            .collect::<Vec<_>>()
    };
    let same = freezegate_ledger::Recorded {
        canonicalization: good.canonicalization,
        origin_digest: good.origin_digest,
    };
    assert_eq!(check_with(same), []);
    let other_form = freezegate_ledger::Recorded {
        canonicalization: Canonicalization::V1Ordered,
        ..same
    };
    assert_eq!(
        check_with(other_form),
        [(Rule::Meta, "canonicalization".to_owned())]
    );
    let other_origin = freezegate_ledger::Recorded {
        origin_digest: digest(99),
        ..same
    };
    assert_eq!(
        check_with(other_origin),
        [(Rule::Meta, "origin_digest".to_owned())]
    );
}

/// A row is built, field by field, from this crate's own exports: a user needs no other
/// dependency to name the type of any public field.
#[test]
fn every_row_field_type_is_exported_by_the_crate() {
    use freezegate_ledger as l;
    let digest = l::Digest::of(b"{}");
    let row = l::Row {
        property_id: "p".parse::<l::PropertyId>().unwrap(),
        fixture_id: digest.fixture_id(),
        fixture_digest: digest,
        origin_digest: digest,
        canonicalization: l::Canonicalization::V1Ordered,
        seed: l::Seed::from(1_u64),
        env_class: l::EnvClass::Remote,
        runner_id: "r".to_owned(),
        replays: vec![l::Label::AssertPass, l::Label::AssertFail],
        patch_id: "p".to_owned(),
        owner: "alice@example.com".to_owned(),
        reason: "r".to_owned(),
        created_at: ts("2026-09-15T09:30:00Z"),
        expires_at: ts("2026-09-16T09:30:00Z"),
    };
    assert!(
        l::Ledger::from_rows(vec![row])
            .render()
            .contains("\"canonicalization\": \"freezegate-canon-v1-ordered\"")
    );
}

/// `Problem::row` is the row's place in the file for a check of text, and its index in
/// `Ledger::rows` (sorted by key) for a check of a `Ledger`: on a file whose rows are not in
/// key order the two differ, and each points at the row with the problem.
#[test]
fn a_problems_row_is_its_place_in_what_was_checked() {
    let p = "tax.cached_total_equals_fresh_sum";
    let mut stranger = row(p, 0);
    stranger.owner = "eve@example.com".to_owned();
    // In the file, the rows in the reverse of key order.
    let sorted = Ledger::from_rows(vec![row(p, 1), stranger.clone()]).into_rows();
    let sorted_at = usize::from(sorted[1] == stranger);
    let text = to_pretty_string(&envelope(vec![sorted[1].to_value(), sorted[0].to_value()]));
    let fixtures = fixtures_upto(2);
    let signers = signers();
    let policy = Policy::default();
    let checks = Checks::new(&policy, now(), &signers, &fixtures);
    let owner = |report: freezegate_ledger::Report| {
        let problems: Vec<_> = report.problems.into_iter().collect();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].rule, Rule::Owner);
        problems[0].clone()
    };
    let in_text = owner(check(text.as_bytes(), &checks).unwrap());
    assert_eq!(in_text.row, Some(1 - sorted_at));
    assert!(in_text.at.is_some());
    let ledger = Ledger::from_slice(text.as_bytes()).unwrap();
    let in_ledger = owner(ledger.check(&checks));
    assert_eq!(in_ledger.row, Some(sorted_at));
    assert_eq!(in_ledger.at, None);
    assert_eq!(ledger.rows()[sorted_at], stranger);
    assert_eq!(in_ledger.fixture_id, Some(stranger.fixture_id.to_string()));
    assert_eq!(in_text.fixture_id, in_ledger.fixture_id);
    let mut broken = vec![vec![], vec![]];
    broken[sorted_at] = vec![Rule::Owner];
    assert_eq!(ledger.broken_rules(&checks), broken);
    // On the rendered ledger, whose rows are in key order, the two agree.
    let rendered = ledger.render();
    assert_eq!(
        owner(check(rendered.as_bytes(), &checks).unwrap()).row,
        Some(sorted_at)
    );
}

/// A key that hundreds of rows share: every row breaks `duplicate`, and each message names a
/// few of the others and counts the rest, so the report grows with the rows, not with their
/// square.
#[test]
fn a_key_shared_by_many_rows_is_reported_in_linear_size() {
    let (signers, lookup) = (signers(), fixtures_upto(3));
    let policy = Policy::default();
    let checks = Checks::new(&policy, now(), &signers, &lookup);
    let one = representative().rows()[0].clone();
    let ledger = Ledger::from_rows(vec![one; 500]);
    let report = ledger.check(&checks);
    let duplicates: Vec<&str> = report
        .problems
        .iter()
        .filter(|p| p.rule == Rule::Duplicate)
        .map(|p| p.message.as_str())
        .collect();
    assert_eq!(duplicates.len(), 500);
    assert!(
        duplicates
            .iter()
            .all(|m| m.contains(", and 496 more: ") && m.len() < 400),
        "{}",
        duplicates[0]
    );
}

/// The time left shows to the nearest hour, days and hours: a row frozen for 7 days a second
/// ago expires "in 7 days", never "in 6".
#[test]
fn expiry_text_rounds_to_the_nearest_hour() {
    let mut r = row("p.q", 1);
    r.expires_at = ts("2026-09-25T10:00:00Z");
    let at = |secs_before: i64| {
        let now = Timestamp::from_unix_seconds(r.expires_at.unix_seconds() - secs_before)
            .expect("in range");
        expiry_text(&r, now)
    };
    let day = 86_400;
    assert_eq!(at(7 * day - 1), "in 7 days");
    assert_eq!(at(7 * day + 1), "in 7 days");
    assert_eq!(at(day + 5 * 3_600 + 1_799), "in 1 day, 5 hours");
    assert_eq!(at(day + 5 * 3_600 + 1_800), "in 1 day, 6 hours");
    assert_eq!(at(2 * day - 1), "in 2 days");
    assert_eq!(at(3_600), "in 1 hour");
    assert_eq!(at(23 * 3_600 + 1_799), "in 23 hours");
    assert_eq!(at(23 * 3_600 + 1_800), "in 1 day");
    assert_eq!(at(3_599), "in under an hour");
    assert_eq!(at(1), "in under an hour");
    assert_eq!(at(0), "expired");
    assert_eq!(at(-5), "expired");
}

/// Rules and severities print as their names in the JSON report (`unknown_field`, `error`).
#[test]
fn rules_and_severities_display_as_their_report_names() {
    use freezegate_ledger::{Rule, Severity};
    assert_eq!(Rule::UnknownField.to_string(), "unknown_field");
    assert_eq!(Rule::Envelope.to_string(), Rule::Envelope.as_str());
    assert_eq!(Severity::Warning.to_string(), "warning");
}
