//! The fixture folder: pinning, reading back, and every integrity rule of SPEC §3.

use std::fs;
use std::path::{Path, PathBuf};

use freezegate_canon::fixture::{
    self, Meta, meta_path, origin_path, pin, read_fixture, read_meta, verify,
};
use freezegate_canon::{
    Canonical, Canonicalization, Error, MetaError, PropertyId, Value, canonicalize, parse_str,
};

fn property() -> PropertyId {
    "tax.cached_total_equals_fresh_sum".parse().unwrap()
}

fn meta_for(fixture: &Canonical, origin: &Canonical, form: Canonicalization) -> Meta {
    Meta {
        property_id: property(),
        fixture_id: fixture.fixture_id(),
        fixture_digest: fixture.digest(),
        origin_id: origin.fixture_id(),
        origin_digest: origin.digest(),
        canonicalization: form,
        seed: 20260917,
        pinned_at: "2026-09-17T08:30:00Z".to_owned(),
        patch_id: "4f2a9c1".to_owned(),
        oracle_calls: 42,
        shrink_path: vec![
            parse_str(r#"{"pass": "drop", "pointer": "/items/1", "count": 1}"#).unwrap(),
        ],
    }
}

/// A pinned fixture in a fresh root: (root, meta, fixture, origin).
fn pinned() -> (tempfile::TempDir, Meta, Canonical, Canonical) {
    let root = tempfile::tempdir().unwrap();
    let fixture = canonicalize(br#"{"items": [{"qty": 0}]}"#, Canonicalization::V1).unwrap();
    let origin = canonicalize(
        br#"{"items": [{"qty": 3, "name": "caf\u00e9"}, {"qty": -1}], "z": 1.5}"#,
        Canonicalization::V1,
    )
    .unwrap();
    let meta = meta_for(&fixture, &origin, Canonicalization::V1);
    pin(root.path(), &meta, &fixture, &origin).unwrap();
    (root, meta, fixture, origin)
}

fn fixture_file(root: &Path, c: &Canonical) -> PathBuf {
    fixture::fixture_path(root, &property(), c.fixture_id())
}

/// Asserts that `verify` finds exactly one problem, in `path`, whose message holds `needle`.
fn one_problem(root: &Path, path: &Path, needle: &str) {
    let errors = verify(root);
    assert_eq!(errors.len(), 1, "{errors:#?}");
    let (found, text) = match &errors[0] {
        Error::Integrity { path, problem } => (path.clone(), problem.clone()),
        Error::NotCanonical { path, .. } => (path.clone(), errors[0].to_string()),
        Error::File { path, source } => (path.clone(), source.to_string()),
        other => panic!("unexpected error {other:?}"),
    };
    assert_eq!(found, path, "{errors:#?}");
    assert!(
        text.contains(needle),
        "{text:?} does not contain {needle:?}"
    );
}

#[test]
fn pin_writes_three_files_that_read_back_and_verify() {
    let (root, meta, fixture, origin) = pinned();
    let root = root.path();
    let fixture_path = fixture_file(root, &fixture);
    assert_eq!(
        fs::read(&fixture_path).unwrap(),
        b"{\"items\":[{\"qty\":0}]}\n"
    );
    assert_eq!(
        fs::read(origin_path(root, &property(), origin.fixture_id())).unwrap(),
        [origin.bytes(), b"\n"].concat()
    );
    let (read, value) = read_fixture(root, &property(), fixture.fixture_id()).unwrap();
    assert_eq!(read, fixture);
    assert_eq!(value, parse_str(r#"{"items":[{"qty":0}]}"#).unwrap());
    assert_eq!(
        read_meta(root, &property(), fixture.fixture_id()).unwrap(),
        meta
    );
    let (o, _) =
        fixture::read_origin(root, &property(), origin.fixture_id(), Canonicalization::V1).unwrap();
    assert_eq!(o, origin);
    assert!(verify(root).is_empty(), "{:#?}", verify(root));
    // Only the three files, no temporary file left behind.
    let mut names: Vec<String> = walk(&root.join("fixtures"));
    names.sort();
    assert_eq!(
        names,
        vec![
            format!(
                "tax.cached_total_equals_fresh_sum/{}.json",
                fixture.fixture_id()
            ),
            format!(
                "tax.cached_total_equals_fresh_sum/{}.meta.json",
                fixture.fixture_id()
            ),
            format!(
                "tax.cached_total_equals_fresh_sum/origins/{}.json",
                origin.fixture_id()
            ),
        ]
    );
}

fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.is_dir() {
            let prefix = path.file_name().unwrap().to_string_lossy().into_owned();
            out.extend(walk(&path).into_iter().map(|n| format!("{prefix}/{n}")));
        } else {
            out.push(path.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    out
}

#[test]
fn the_meta_file_renders_in_the_fixed_key_order() {
    let (_root, meta, _, _) = pinned();
    insta::assert_snapshot!(meta.render());
    assert_eq!(Meta::parse(meta.render().as_bytes()).unwrap(), meta);
}

#[test]
fn pinning_again_is_idempotent() {
    let (root, meta, fixture, origin) = pinned();
    pin(root.path(), &meta, &fixture, &origin).unwrap();
    assert!(verify(root.path()).is_empty());
}

#[test]
fn an_ordered_fixture_is_canonical_only_under_its_meta() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let form = Canonicalization::V1Ordered;
    let fixture = canonicalize(br#"{"b": 1, "a": 2}"#, form).unwrap();
    let origin = canonicalize(br#"{"b": 1, "a": 2, "c": 3}"#, form).unwrap();
    assert_eq!(fixture.as_str(), r#"{"b":1,"a":2}"#);
    let meta = meta_for(&fixture, &origin, form);
    pin(root, &meta, &fixture, &origin).unwrap();
    assert!(verify(root).is_empty(), "{:#?}", verify(root));
    assert_eq!(
        read_fixture(root, &property(), fixture.fixture_id())
            .unwrap()
            .0,
        fixture
    );
    // Without the meta, v1 applies and the member order is not canonical.
    fs::remove_file(meta_path(root, &property(), fixture.fixture_id())).unwrap();
    let errors = verify(root);
    assert_eq!(errors.len(), 2, "{errors:#?}");
    let origin_file = origin_path(root, &property(), origin.fixture_id());
    for (error, path) in errors
        .iter()
        .zip([fixture_file(root, &fixture), origin_file])
    {
        assert!(
            matches!(error, Error::NotCanonical { path: p, form: Canonicalization::V1, difference } if *p == path && difference.position.line == 1),
            "{error:?}"
        );
    }
}

#[test]
fn pin_refuses_a_meta_that_does_not_match_its_files() {
    let root = tempfile::tempdir().unwrap();
    let fixture = canonicalize(b"[1]", Canonicalization::V1).unwrap();
    let origin = canonicalize(b"[1, 2]", Canonicalization::V1).unwrap();
    let other = canonicalize(b"[2]", Canonicalization::V1).unwrap();
    let mut meta = meta_for(&other, &origin, Canonicalization::V1);
    let err = pin(root.path(), &meta, &fixture, &origin).unwrap_err();
    assert!(matches!(err, Error::Integrity { .. }), "{err:?}");
    meta = meta_for(&fixture, &origin, Canonicalization::V1);
    meta.pinned_at = "2026-09-17 08:30".to_owned();
    let err = pin(root.path(), &meta, &fixture, &origin).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Meta(MetaError::InvalidField {
                field: "pinned_at",
                ..
            })
        ),
        "{err:?}"
    );
    // Nothing was written.
    assert!(!root.path().join("fixtures").exists());
    // Ordered bytes under a v1 meta are refused.
    let ordered = canonicalize(br#"{"b":1,"a":2}"#, Canonicalization::V1Ordered).unwrap();
    let meta = meta_for(&ordered, &origin, Canonicalization::V1);
    let err = pin(root.path(), &meta, &ordered, &origin).unwrap_err();
    assert!(err.to_string().contains("not canonical"), "{err}");
}

#[test]
fn a_missing_fixtures_folder_holds_no_problems() {
    let root = tempfile::tempdir().unwrap();
    assert!(verify(root.path()).is_empty());
    fs::create_dir(root.path().join("fixtures")).unwrap();
    fs::write(root.path().join("fixtures/.gitkeep"), b"").unwrap();
    assert!(verify(root.path()).is_empty());
}

#[test]
fn a_fixture_without_its_newline_is_an_integrity_error() {
    let (root, _, fixture, _) = pinned();
    let path = fixture_file(root.path(), &fixture);
    fs::write(&path, fixture.bytes()).unwrap();
    one_problem(root.path(), &path, "exactly one newline");
    assert!(read_fixture(root.path(), &property(), fixture.fixture_id()).is_err());
}

#[test]
fn a_fixture_with_two_newlines_is_an_integrity_error() {
    let (root, _, fixture, _) = pinned();
    let path = fixture_file(root.path(), &fixture);
    fs::write(&path, [fixture.bytes(), b"\n\n"].concat()).unwrap();
    one_problem(root.path(), &path, "exactly one newline");
}

#[test]
fn a_fixture_with_extra_bytes_is_an_integrity_error() {
    let (root, _, fixture, _) = pinned();
    let path = fixture_file(root.path(), &fixture);
    fs::write(&path, [fixture.bytes(), b"[]\n"].concat()).unwrap();
    let errors = verify(root.path());
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert!(matches!(&errors[0], Error::File { path: p, .. } if *p == path));
    let text = format!("{:#}", anyhow_like(&errors[0]));
    assert!(text.contains("line 1, column 22: trailing data"), "{text}");
}

/// The error and its causes joined by ": ", as the CLI prints them.
fn anyhow_like(e: &Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

#[test]
fn a_fixture_whose_bytes_are_not_canonical_is_an_integrity_error() {
    let (root, _, fixture, _) = pinned();
    let path = fixture_file(root.path(), &fixture);
    fs::write(&path, b"{\"items\": [{\"qty\": 0}]}\n").unwrap();
    one_problem(root.path(), &path, "not canonical");
}

#[test]
fn a_fixture_not_named_by_its_id_is_an_integrity_error() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("fixtures/p");
    fs::create_dir_all(&dir).unwrap();
    let path = dir.join("0123456789abcdef.json");
    fs::write(&path, b"[]\n").unwrap();
    one_problem(root.path(), &path, "the id of its bytes is");
}

#[test]
fn an_origin_whose_bytes_are_not_canonical_is_an_integrity_error() {
    let (root, _, _, origin) = pinned();
    let path = origin_path(root.path(), &property(), origin.fixture_id());
    let spaced = String::from_utf8(origin.bytes().to_vec())
        .unwrap()
        .replace(',', ", ");
    fs::write(&path, format!("{spaced}\n")).unwrap();
    one_problem(root.path(), &path, "not canonical");
}

#[test]
fn an_origin_not_named_by_its_id_is_an_integrity_error() {
    let (root, _, _, _) = pinned();
    let path = root
        .path()
        .join("fixtures/tax.cached_total_equals_fresh_sum/origins/0000000000000000.json");
    fs::write(&path, b"{}\n").unwrap();
    one_problem(root.path(), &path, "the id of its bytes is");
}

/// Rewrites the meta file of `fixture` with one member changed and returns its path.
fn edit_meta(root: &Path, fixture: &Canonical, key: &str, new: Value) -> PathBuf {
    let path = meta_path(root, &property(), fixture.fixture_id());
    let mut value = parse_str(&fs::read_to_string(&path).unwrap()).unwrap();
    *value.pointer_mut(&format!("/{key}")).unwrap() = new;
    fs::write(&path, freezegate_canon::to_pretty_string(&value)).unwrap();
    path
}

#[test]
fn a_meta_whose_fixture_digest_differs_is_an_integrity_error() {
    let (root, _, fixture, _) = pinned();
    let digest = fixture.digest().to_string();
    let wrong = format!("{}{}", &digest[..16], "0".repeat(48));
    let path = edit_meta(
        root.path(),
        &fixture,
        "fixture_digest",
        Value::String(wrong),
    );
    one_problem(root.path(), &path, "does not match the fixture's digest");
    assert!(read_fixture(root.path(), &property(), fixture.fixture_id()).is_err());
}

#[test]
fn a_meta_whose_origin_digest_differs_is_an_integrity_error() {
    let (root, _, fixture, origin) = pinned();
    let digest = origin.digest().to_string();
    let wrong = format!("{}{}", &digest[..16], "f".repeat(48));
    let path = edit_meta(root.path(), &fixture, "origin_digest", Value::String(wrong));
    one_problem(root.path(), &path, "does not match the origin's digest");
}

#[test]
fn a_meta_whose_id_is_not_its_digest_prefix_is_an_integrity_error() {
    let (root, _, fixture, _) = pinned();
    let path = edit_meta(
        root.path(),
        &fixture,
        "fixture_digest",
        Value::String("a".repeat(64)),
    );
    one_problem(root.path(), &path, "is not the start of fixture_digest");
}

#[test]
fn a_meta_for_another_property_is_an_integrity_error() {
    let (root, _, fixture, _) = pinned();
    let path = edit_meta(
        root.path(),
        &fixture,
        "property_id",
        Value::from("other.prop"),
    );
    one_problem(root.path(), &path, "names property other.prop");
    assert!(read_meta(root.path(), &property(), fixture.fixture_id()).is_err());
}

#[test]
fn a_meta_without_its_fixture_is_an_integrity_error() {
    let (root, _, fixture, _) = pinned();
    fs::remove_file(fixture_file(root.path(), &fixture)).unwrap();
    let path = meta_path(root.path(), &property(), fixture.fixture_id());
    one_problem(root.path(), &path, "does not exist");
}

#[test]
fn a_meta_without_its_origin_is_an_integrity_error() {
    let (root, _, fixture, origin) = pinned();
    fs::remove_file(origin_path(root.path(), &property(), origin.fixture_id())).unwrap();
    let path = meta_path(root.path(), &property(), fixture.fixture_id());
    one_problem(root.path(), &path, "origins/");
}

#[test]
fn a_meta_with_an_unknown_field_names_it() {
    let (root, _, fixture, _) = pinned();
    let path = meta_path(root.path(), &property(), fixture.fixture_id());
    let text = fs::read_to_string(&path).unwrap();
    let text = text.replace("\n}\n", ",\n  \"merge\": true\n}\n");
    fs::write(&path, text).unwrap();
    one_problem(root.path(), &path, "unknown field \"merge\"");
}

#[test]
fn a_meta_with_a_missing_field_names_it() {
    let (root, meta, fixture, _) = pinned();
    let path = meta_path(root.path(), &property(), fixture.fixture_id());
    let Value::Object(mut members) = meta.to_value() else {
        unreachable!()
    };
    members.retain(|(k, _)| k != "seed");
    fs::write(
        &path,
        freezegate_canon::to_pretty_string(&Value::Object(members)),
    )
    .unwrap();
    one_problem(root.path(), &path, "missing field \"seed\"");
}

#[test]
fn a_meta_with_a_field_of_the_wrong_type_names_it() {
    let (root, _, fixture, _) = pinned();
    let path = edit_meta(root.path(), &fixture, "oracle_calls", Value::from("42"));
    one_problem(
        root.path(),
        &path,
        "field \"oracle_calls\": expected an integer",
    );
    let path = edit_meta(root.path(), &fixture, "oracle_calls", Value::int(-1));
    one_problem(root.path(), &path, "field \"oracle_calls\"");
}

#[test]
fn a_meta_that_is_not_json_names_line_and_column() {
    let (root, _, fixture, _) = pinned();
    let path = meta_path(root.path(), &property(), fixture.fixture_id());
    fs::write(
        &path,
        "{\n  \"schema\": \"freezegate-fixture-meta-v1\",\n  \"seed\": NaN\n}\n",
    )
    .unwrap();
    one_problem(root.path(), &path, "line 3, column 11");
}

#[test]
fn a_meta_not_in_its_rendered_layout_is_an_integrity_error() {
    let (root, meta, fixture, _) = pinned();
    let path = meta_path(root.path(), &property(), fixture.fixture_id());
    let compact = freezegate_canon::to_canonical_bytes(&meta.to_value()).unwrap();
    fs::write(&path, [compact.as_slice(), b"\n"].concat()).unwrap();
    one_problem(
        root.path(),
        &path,
        "line 1, column 2: not in the rendered layout",
    );
    // CRLF line ends (a checkout with core.autocrlf): the place of the first `\r`, escaped.
    let crlf = meta.render().replace('\n', "\r\n");
    fs::write(&path, crlf).unwrap();
    one_problem(
        root.path(),
        &path,
        "line 1, column 2: not in the rendered layout (fixed key order, two-space indent, LF line ends, trailing newline): found `\\r\\n",
    );
}

#[test]
fn any_other_file_in_a_property_folder_is_an_integrity_error() {
    let (root, _, fixture, _) = pinned();
    let dir = root
        .path()
        .join("fixtures/tax.cached_total_equals_fresh_sum");
    let stray = dir.join("notes.txt");
    fs::write(&stray, b"x").unwrap();
    one_problem(root.path(), &stray, "unexpected file");
    fs::remove_file(&stray).unwrap();
    // A file named almost like a writer's temporary file is one too.
    for name in [
        format!(".{}.json.1.tmp", fixture.fixture_id()),
        format!(".{}.txt.1-0.tmp", fixture.fixture_id()),
        ".notes.json.1-0.tmp".to_owned(),
    ] {
        let tmp = dir.join(name);
        fs::write(&tmp, b"[").unwrap();
        one_problem(root.path(), &tmp, "unexpected file");
        fs::remove_file(&tmp).unwrap();
    }
    let sub = dir.join("extra");
    fs::create_dir(&sub).unwrap();
    one_problem(root.path(), &sub, "unexpected file");
    fs::remove_dir(&sub).unwrap();
    let inner = dir.join("origins/readme.md");
    fs::write(&inner, b"x").unwrap();
    one_problem(root.path(), &inner, "unexpected file");
}

#[test]
fn any_other_file_under_fixtures_is_an_integrity_error() {
    let (root, _, _, _) = pinned();
    let stray = root.path().join("fixtures/quarantine.txt");
    fs::write(&stray, b"tests/test_tax.py::test_total\n").unwrap();
    one_problem(root.path(), &stray, "only property folders");
    fs::remove_file(&stray).unwrap();
    let bad = root.path().join("fixtures/-bad name");
    fs::create_dir(&bad).unwrap();
    one_problem(root.path(), &bad, "not a property folder");
}

#[test]
fn verify_collects_every_problem() {
    let (root, _, fixture, origin) = pinned();
    let fixture_path = fixture_file(root.path(), &fixture);
    fs::write(&fixture_path, fixture.bytes()).unwrap();
    fs::remove_file(origin_path(root.path(), &property(), origin.fixture_id())).unwrap();
    fs::write(root.path().join("fixtures/stray"), b"").unwrap();
    let errors = verify(root.path());
    assert_eq!(errors.len(), 3, "{errors:#?}");
}

#[test]
fn a_fixture_without_meta_is_judged_in_the_form_its_property_declares() {
    let root = tempfile::tempdir().unwrap();
    let ordered = canonicalize(br#"{"b":1,"a":2}"#, Canonicalization::V1Ordered).unwrap();
    let dir = root.path().join("fixtures/report.header");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join(format!("{}.json", ordered.fixture_id())),
        format!("{}\n", ordered.as_str()),
    )
    .unwrap();
    // Judged as v1, its members are out of order (and that is its one finding).
    let errors = verify(root.path());
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert!(
        errors[0].to_string().contains("not canonical"),
        "{errors:#?}"
    );
    let declared = |p: &freezegate_canon::PropertyId| {
        (p.as_str() == "report.header").then_some(Canonicalization::V1Ordered)
    };
    // In its declared form it is canonical: what is left is its missing meta file.
    let errors = freezegate_canon::fixture::verify_declared(root.path(), declared);
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert!(
        matches!(&errors[0], Error::Integrity { path, problem }
            if path.ends_with(format!("{}.meta.json", ordered.fixture_id()))
                && problem.starts_with("missing: ")),
        "{errors:#?}"
    );
}

/// The names of the files in `dir` and `dir/origins` that look like temporary files.
fn temporaries(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = walk(dir)
        .into_iter()
        .filter(|n| n.rsplit('/').next().is_some_and(|f| f.starts_with('.')))
        .collect();
    out.sort();
    out
}

#[test]
fn temporary_files_of_killed_writers_are_no_findings_and_the_next_pin_removes_them() {
    let (root, meta, fixture, origin) = pinned();
    let dir = fixture::property_dir(root.path(), &property());
    // What a writer killed mid-write leaves: one of each kind of file it writes. No process
    // has a pid above 2^22 on Linux, so the writer is certainly gone.
    let left = [
        format!(".{}.json.4194305-0.tmp", fixture.fixture_id()),
        format!(".{}.meta.json.4194305-1.tmp", fixture.fixture_id()),
        format!("origins/.{}.json.4194305-2.tmp", origin.fixture_id()),
    ];
    for name in &left {
        fs::write(dir.join(name), b"{\"half\":").unwrap();
    }
    assert_eq!(temporaries(&dir).len(), 3);
    let errors = verify(root.path());
    assert!(errors.is_empty(), "{errors:#?}");
    pin(root.path(), &meta, &fixture, &origin).unwrap();
    assert_eq!(temporaries(&dir), Vec::<String>::new());
    assert!(verify(root.path()).is_empty());
}

#[test]
fn pinning_again_never_rewrites_the_first_pins_files() {
    let (root, meta, fixture, origin) = pinned();
    let first = fs::read(meta_path(root.path(), &property(), fixture.fixture_id())).unwrap();
    let mut later = meta.clone();
    later.pinned_at = "2026-10-01T00:00:00Z".to_owned();
    later.patch_id = "later".to_owned();
    later.oracle_calls = 7;
    pin(root.path(), &later, &fixture, &origin).unwrap();
    assert_eq!(
        fs::read(meta_path(root.path(), &property(), fixture.fixture_id())).unwrap(),
        first
    );
    assert_eq!(
        read_meta(root.path(), &property(), fixture.fixture_id()).unwrap(),
        meta
    );
}

#[test]
fn a_fixture_without_its_meta_is_a_finding_that_names_the_fix_and_pinning_completes_it() {
    let (root, meta, fixture, origin) = pinned();
    let root = root.path();
    let meta_file = meta_path(root, &property(), fixture.fixture_id());
    fs::remove_file(&meta_file).unwrap();
    // The state a writer that wrote origin and fixture but not the meta left.
    one_problem(
        root,
        &meta_file,
        &format!(
            "missing: fixture {id}.json has no meta file (added by hand, or pinned before metas were written first); complete the pin with `xtask classify --property {p} --input fixtures/{p}/origins/{o}.json`",
            id = fixture.fixture_id(),
            p = property(),
            o = origin.fixture_id(),
        ),
    );
    // Pinning the same fixture again writes the meta and leaves the fixture file alone.
    let fixture_file = fixture_file(root, &fixture);
    let before = fs::metadata(&fixture_file).unwrap().modified().unwrap();
    let mut again = meta.clone();
    again.pinned_at = "2026-10-01T00:00:00Z".to_owned();
    pin(root, &again, &fixture, &origin).unwrap();
    assert_eq!(
        fs::metadata(&fixture_file).unwrap().modified().unwrap(),
        before
    );
    assert_eq!(
        read_meta(root, &property(), fixture.fixture_id()).unwrap(),
        again
    );
    assert!(verify(root).is_empty(), "{:#?}", verify(root));
    // A missing origin is completed too.
    let origin_file = origin_path(root, &property(), origin.fixture_id());
    fs::remove_file(&origin_file).unwrap();
    pin(root, &meta, &fixture, &origin).unwrap();
    assert!(origin_file.exists());
    assert_eq!(
        read_meta(root, &property(), fixture.fixture_id()).unwrap(),
        again
    );
    assert!(verify(root).is_empty(), "{:#?}", verify(root));
}

#[test]
fn a_fixture_without_meta_and_no_known_origin_names_the_fix_in_general_terms() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("fixtures/p");
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("84a6b2a276edd51b.json"),
        b"{\"role\":\"\",\"user_id\":0}\n",
    )
    .unwrap();
    one_problem(
        root.path(),
        &dir.join("84a6b2a276edd51b.meta.json"),
        "--property p --input <the failing input>`",
    );
}

#[test]
fn a_large_fixture_that_is_not_canonical_gets_a_short_message_that_says_where() {
    let root = tempfile::tempdir().unwrap();
    let zeros = vec!["0"; 2_000_000].join(",");
    // Canonical up to the space after the colon of "b".
    let text = format!("{{\"a\":[{zeros}],\"b\": 1}}");
    let id = canonicalize(text.as_bytes(), Canonicalization::V1)
        .unwrap()
        .fixture_id();
    let dir = root.path().join("fixtures/p");
    fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{id}.json"));
    fs::write(&path, format!("{text}\n")).unwrap();
    let at = text.find(": 1").unwrap() + 1;
    let errors = verify(root.path());
    assert_eq!(errors.len(), 1, "{} errors", errors.len());
    let message = errors[0].to_string();
    assert!(
        message.len() < 400,
        "{} bytes: {}",
        message.len(),
        &message[..400]
    );
    let expected = format!(
        "{}: its bytes are not canonical (freezegate-canon-v1): they first differ from the canonical bytes at byte {at} (line 1, column {}): found ` 1}}` where the canonical bytes have `1}}`",
        path.display(),
        at + 1
    );
    assert_eq!(message, expected);
}

#[test]
fn a_difference_is_placed_by_character_and_cut_short() {
    use freezegate_canon::fixture::Difference;
    // é and è share their first UTF-8 byte: the difference starts at the character.
    let d = Difference::between("[\"é\"]".as_bytes(), "[\"è\"]".as_bytes()).unwrap();
    assert_eq!((d.offset, d.position.column), (2, 3));
    assert_eq!((d.found.as_str(), d.expected.as_str()), ("é\"]", "è\"]"));
    // Excerpts stop at EXCERPT characters, and an ending is said.
    let long = format!("[{}]", "1,".repeat(100));
    let d = Difference::between(long.as_bytes(), b"[").unwrap();
    assert_eq!(d.found.chars().count(), Difference::EXCERPT + 1);
    assert!(d.found.ends_with('…'));
    assert!(d.to_string().ends_with("have `` (the end)"), "{d}");
    // Quotes and backslashes show as they are; control characters escaped, on one line.
    let d = Difference::between(b"[\"a\\\"b\",\n\t1]", b"[\"a\\\"b\",1]").unwrap();
    assert_eq!(
        d.to_string(),
        "they first differ from the canonical bytes at byte 8 (line 1, column 9): found `\\n\\t1]` where the canonical bytes have `1]`"
    );
    let d = Difference::between(b"[\"a\\u0022\"]", b"[\"a\\\"\"]").unwrap();
    assert!(d.to_string().contains("found `u0022\"]`"), "{d}");
    // Separators and bidirectional controls are shown by their code points.
    let d = Difference::between("[ \"\u{2028}\u{202e}x\"]".as_bytes(), b"[\"x\"]").unwrap();
    assert!(
        d.to_string().contains("found ` \"\\u{2028}\\u{202e}x\"]`"),
        "{d}"
    );
}

#[test]
fn a_meta_problem_names_the_line_and_column_of_its_value() {
    let (root, meta, fixture, _) = pinned();
    let path = meta_path(root.path(), &property(), fixture.fixture_id());
    let rendered = meta.render();
    for (field, from, to, expected) in [
        (
            "seed",
            "\"seed\": 20260917",
            "\"seed\": -5",
            "field \"seed\": -5 is not an integer from 0 to 2^64-1",
        ),
        (
            "oracle_calls",
            "\"oracle_calls\": 42",
            "\"oracle_calls\": \"42\"",
            "field \"oracle_calls\": expected an integer, found string",
        ),
        (
            "pinned_at",
            "\"pinned_at\": \"2026-09-17T08:30:00Z\"",
            "\"pinned_at\": \"2026-02-30T08:30:00Z\"",
            "field \"pinned_at\": \"2026-02-30T08:30:00Z\" is not a valid date and time",
        ),
        (
            "canonicalization",
            "\"canonicalization\": \"freezegate-canon-v1\"",
            "\"canonicalization\": \"v2\"",
            "field \"canonicalization\":",
        ),
    ] {
        let text = rendered.replace(from, to);
        assert_ne!(text, rendered, "{from}");
        fs::write(&path, &text).unwrap();
        let key = format!("\"{field}\": ");
        let at = text.find(&key).unwrap() + key.len();
        let line = text[..at].matches('\n').count() + 1;
        let column = at - text[..at].rfind('\n').unwrap();
        let err = Meta::parse(text.as_bytes()).unwrap_err();
        let message = err.to_string();
        assert!(
            message.starts_with(&format!("line {line}, column {column}: {expected}")),
            "{field}: {message}"
        );
        assert!(matches!(err, Error::MetaAt { at, .. } if at.line == line && at.column == column));
        one_problem(
            root.path(),
            &path,
            &format!("line {line}, column {column}: {expected}"),
        );
    }
    // An unknown field: its key; a step of the shrink path that is not an object: the step;
    // a missing field: the object.
    for (text, line, column, expected) in [
        (
            rendered.replace("\n}\n", ",\n  \"merge\": true\n}\n"),
            20,
            3,
            "unknown field \"merge\"",
        ),
        (
            rendered.replace("\"shrink_path\": [", "\"shrink_path\": [\n    7,"),
            14,
            5,
            "field \"shrink_path\": step 0 is a int, not an object",
        ),
        (
            format!("\n\n  {}", rendered.replace("  \"seed\": 20260917,\n", "")),
            3,
            3,
            "missing field \"seed\"",
        ),
    ] {
        let message = Meta::parse(text.as_bytes()).unwrap_err().to_string();
        assert_eq!(
            message,
            format!("line {line}, column {column}: {expected}"),
            "{text}"
        );
    }
}

/// A link to nothing where the fixture file goes keeps the pin from writing it: that is an
/// error naming the path, not a pin that looks done.
#[test]
fn a_link_to_nothing_at_the_fixtures_name_is_an_error_not_a_pin() {
    let root = tempfile::tempdir().unwrap();
    let fixture = canonicalize(br#"{"qty": 3}"#, Canonicalization::V1).unwrap();
    let origin = canonicalize(br#"{"qty": 3, "z": 1}"#, Canonicalization::V1).unwrap();
    let meta = meta_for(&fixture, &origin, Canonicalization::V1);
    let path = fixture_file(root.path(), &fixture);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink("/nonexistent/freezegate", &path).unwrap();
    let err = pin(root.path(), &meta, &fixture, &origin).unwrap_err();
    match &err {
        Error::Integrity { path: at, problem } => {
            assert_eq!(at, &path);
            assert!(problem.contains("not a regular file"), "{problem}");
        }
        other => panic!("{other:?}"),
    }
}

/// A symbolic link in the fixtures tree (the folder itself, a property folder, a file) is an
/// integrity error: its target lies outside `fixtures/**`, which the patch checks protect,
/// so an unsigned edit there would change a pinned fixture unseen.
#[test]
fn symbolic_links_in_the_fixtures_tree_are_integrity_errors() {
    // The whole folder a link.
    let (root, _, _, _) = pinned();
    let real = root.path().join("fx");
    std::fs::rename(root.path().join("fixtures"), &real).unwrap();
    std::os::unix::fs::symlink("fx", root.path().join("fixtures")).unwrap();
    one_problem(
        root.path(),
        &root.path().join("fixtures"),
        "a symbolic link",
    );

    // A file a link to a copy of itself.
    let (root, _, fixture, _) = pinned();
    let path = fixture_file(root.path(), &fixture);
    let copy = root.path().join("copy.json");
    std::fs::rename(&path, &copy).unwrap();
    std::os::unix::fs::symlink(&copy, &path).unwrap();
    let errors = verify(root.path());
    assert!(
        errors.iter().any(|e| matches!(e, Error::Integrity { path: p, problem } if p == &path && problem.contains("a symbolic link"))),
        "{errors:#?}"
    );
}

mod docgen;

mod generated {
    //! Invariants of property ids and of the fixture folder, checked on generated input.

    use std::fs;

    use proptest::prelude::*;

    use super::docgen::{Style, doc, render};
    use freezegate_canon::fixture::{self, Meta, meta_path, origin_path, pin, verify};
    use freezegate_canon::{Canonical, Canonicalization, PropertyId, Value, canonicalize, parse};

    /// SPEC §3's grammar of property ids, anchored.
    const GRAMMAR: &str = "^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$";

    fn grammar() -> regex::Regex {
        regex::Regex::new(GRAMMAR).unwrap()
    }

    /// An id that matches the grammar, drawn from the grammar itself.
    fn valid_id() -> impl Strategy<Value = String> {
        "[A-Za-z0-9][A-Za-z0-9._-]{0,99}"
    }

    /// A character a mutation puts into an id: the grammar's own, and ones it refuses.
    fn any_char() -> impl Strategy<Value = char> {
        prop_oneof![
            prop::sample::select(vec!['a', 'Z', '7', '.', '-', '_']),
            prop::sample::select(vec![
                '/',
                '\\',
                ' ',
                '\0',
                '\n',
                ':',
                '*',
                '+',
                'é',
                'ß',
                '\u{2028}',
                '\u{ff21}',
                '\u{1f600}'
            ]),
            any::<char>(),
        ]
    }

    /// A valid id changed in one way: a character inserted, removed or replaced, a leading
    /// `.`, `-` or `_`, padded past 100 characters, or emptied.
    fn mutated_id() -> impl Strategy<Value = String> {
        (
            valid_id(),
            0usize..6,
            any::<prop::sample::Index>(),
            any_char(),
        )
            .prop_map(|(id, how, at, c)| {
                let mut chars: Vec<char> = id.chars().collect();
                match how {
                    0 => {
                        let i = at.index(chars.len() + 1);
                        chars.insert(i, c);
                    }
                    1 => {
                        let i = at.index(chars.len());
                        chars.remove(i);
                    }
                    2 => {
                        let i = at.index(chars.len());
                        chars[i] = c;
                    }
                    3 => chars[0] = ['.', '-', '_'][at.index(3)],
                    4 => chars.resize(101 + at.index(20), 'x'),
                    _ => chars.clear(),
                }
                chars.into_iter().collect()
            })
    }

    /// A canonical value in `form`, from the canon tests' document generator.
    fn canonical(d: &super::docgen::Doc, seed: u64, form: Canonicalization) -> Canonical {
        let text = render(
            d,
            Style {
                seed,
                shuffle: true,
                newlines: true,
            },
        );
        canonicalize(text.as_bytes(), form).unwrap()
    }

    fn form(ordered: bool) -> Canonicalization {
        if ordered {
            Canonicalization::V1Ordered
        } else {
            Canonicalization::V1
        }
    }

    fn meta_of(fixture: &Canonical, origin: &Canonical, form: Canonicalization) -> Meta {
        Meta {
            property_id: super::property(),
            fixture_id: fixture.fixture_id(),
            fixture_digest: fixture.digest(),
            origin_id: origin.fixture_id(),
            origin_digest: origin.digest(),
            canonicalization: form,
            seed: 20260917,
            pinned_at: "2026-09-17T08:30:00Z".to_owned(),
            patch_id: "4f2a9c1".to_owned(),
            oracle_calls: 1,
            shrink_path: Vec::new(),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

        /// Every id the grammar generates is accepted, and reads back as itself.
        #[test]
        fn ids_of_the_grammar_are_accepted(id in valid_id()) {
            prop_assert!(grammar().is_match(&id));
            let parsed = id.parse::<PropertyId>();
            prop_assert!(parsed.is_ok(), "{:?}: {:?}", id, parsed);
            let parsed = parsed.unwrap();
            prop_assert_eq!(parsed.as_str(), id.as_str());
        }

        /// A mutated id is accepted exactly when it still matches the grammar.
        #[test]
        fn an_id_is_accepted_exactly_when_it_matches_the_grammar(id in mutated_id()) {
            let parsed = id.parse::<PropertyId>();
            prop_assert_eq!(parsed.is_ok(), grammar().is_match(&id), "{:?}: {:?}", id, parsed);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

        /// For any value and origin in either form, the pinned files verify; changing any
        /// byte of the fixture or the origin, or renaming any of the three files, is an
        /// integrity error.
        #[test]
        fn pinned_files_verify_and_any_damage_is_an_integrity_error(
            fixture_doc in doc(),
            origin_doc in doc(),
            seed in any::<u64>(),
            ordered in any::<bool>(),
            which in 0usize..2,
            at in any::<prop::sample::Index>(),
            flip in 1u8..=255,
            rename in 0usize..3,
            new_name in "[0-9a-f]{16}",
        ) {
            let form = form(ordered);
            let fixture = canonical(&fixture_doc, seed, form);
            let origin = canonical(&origin_doc, seed.rotate_left(7), form);
            let meta = meta_of(&fixture, &origin, form);
            let property = super::property();

            let root = tempfile::tempdir().unwrap();
            pin(root.path(), &meta, &fixture, &origin).unwrap();
            let errors = verify(root.path());
            prop_assert!(errors.is_empty(), "{:#?}", errors);

            // One byte changed.
            let file = if which == 0 {
                fixture::fixture_path(root.path(), &property, fixture.fixture_id())
            } else {
                origin_path(root.path(), &property, origin.fixture_id())
            };
            let mut bytes = fs::read(&file).unwrap();
            let i = at.index(bytes.len());
            bytes[i] ^= flip;
            fs::write(&file, &bytes).unwrap();
            let errors = verify(root.path());
            prop_assert!(!errors.is_empty(), "byte {} of {} changed, no error", i, file.display());

            // One file renamed.
            let root = tempfile::tempdir().unwrap();
            pin(root.path(), &meta, &fixture, &origin).unwrap();
            let (from, id) = match rename {
                0 => (fixture::fixture_path(root.path(), &property, fixture.fixture_id()), fixture.fixture_id()),
                1 => (origin_path(root.path(), &property, origin.fixture_id()), origin.fixture_id()),
                _ => (meta_path(root.path(), &property, fixture.fixture_id()), fixture.fixture_id()),
            };
            prop_assume!(new_name != id.to_string());
            let name = from.file_name().unwrap().to_string_lossy().replace(&id.to_string(), &new_name);
            let to = from.with_file_name(name);
            fs::rename(&from, &to).unwrap();
            let errors = verify(root.path());
            prop_assert!(!errors.is_empty(), "{} renamed to {}, no error", from.display(), to.display());
        }

        /// Rendering a meta, parsing it and rendering it again gives the same bytes, and the
        /// parsed meta is the one rendered.
        #[test]
        fn a_rendered_meta_parses_back_and_renders_the_same(
            fixture_doc in doc(),
            origin_doc in doc(),
            steps in prop::collection::vec(doc(), 0..4),
            seed in any::<u64>(),
            oracle_calls in any::<u64>(),
            ordered in any::<bool>(),
            patch_id in "[ -~]{0,8}[!-~][ -~]{0,8}|\\PC{1,12}",
            pinned_at in 0i64..253_402_300_799,
        ) {
            prop_assume!(!patch_id.trim().is_empty());
            let form = form(ordered);
            let fixture = canonical(&fixture_doc, seed, form);
            let origin = canonical(&origin_doc, seed ^ 1, form);
            let mut meta = meta_of(&fixture, &origin, form);
            meta.seed = seed;
            meta.oracle_calls = oracle_calls;
            meta.patch_id = patch_id;
            meta.pinned_at = utc(pinned_at);
            // The steps are objects: each generated document under one member.
            meta.shrink_path = steps
                .iter()
                .enumerate()
                .map(|(i, d)| {
                    let value = parse(canonical(d, seed.wrapping_add(i as u64), form).bytes()).unwrap();
                    Value::Object(vec![("pass".to_owned(), Value::String("delete".to_owned())), ("x".to_owned(), value)])
                })
                .collect();
            let text = meta.render();
            let parsed = Meta::parse(text.as_bytes());
            prop_assert!(parsed.is_ok(), "{:?}\n{}", parsed, text);
            let parsed = parsed.unwrap();
            prop_assert_eq!(&parsed, &meta);
            prop_assert_eq!(parsed.render(), text);
        }
    }

    /// A JSON value built in code, as a caller may hand one to `pin`: keys from a few that
    /// repeat (as written, or after NFC: `é` and `e` with a combining acute), and at times a
    /// tower of arrays around it near the nesting limit.
    fn step_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<i64>().prop_map(Value::int),
            prop::sample::select(vec!["a", "e\u{301}", "\u{e9}"]).prop_map(Value::from),
        ];
        let key = prop::sample::select(vec!["a", "b", "\u{e9}", "e\u{301}"]);
        let tree = leaf.prop_recursive(4, 24, 4, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec((key.clone().prop_map(str::to_owned), inner), 0..4)
                    .prop_map(Value::Object),
            ]
        });
        (tree, prop_oneof![0usize..3, 118usize..130]).prop_map(|(mut value, tower)| {
            for _ in 0..tower {
                value = Value::Array(vec![value]);
            }
            value
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

        /// `pin` accepts a `shrink_path` exactly when the meta file it writes reads back:
        /// what it pins verifies and reads back as the meta pinned; what it refuses leaves
        /// nothing on disk, and its rendered meta would not parse.
        #[test]
        fn pin_accepts_a_shrink_path_exactly_when_its_meta_file_reads_back(
            steps in prop::collection::vec(
                prop_oneof![
                    3 => prop::collection::vec((prop::sample::select(vec!["a", "\u{e9}", "e\u{301}"]).prop_map(str::to_owned), step_value()), 0..3)
                        .prop_map(Value::Object),
                    1 => step_value(),
                ],
                0..3,
            ),
        ) {
            let fixture = canonicalize(b"[1]", Canonicalization::V1).unwrap();
            let origin = canonicalize(b"[1,2]", Canonicalization::V1).unwrap();
            let mut meta = meta_of(&fixture, &origin, Canonicalization::V1);
            meta.shrink_path = steps;
            let root = tempfile::tempdir().unwrap();
            let reads_back = Meta::parse(meta.render().as_bytes());
            match pin(root.path(), &meta, &fixture, &origin) {
                Ok(_) => {
                    let errors = verify(root.path());
                    prop_assert!(errors.is_empty(), "{:#?}", errors);
                    let read = fixture::read_meta(root.path(), &meta.property_id, meta.fixture_id);
                    prop_assert_eq!(read.ok(), Some(meta.clone()));
                    prop_assert_eq!(reads_back.ok(), Some(meta));
                }
                Err(error) => {
                    prop_assert!(!root.path().join("fixtures").exists(), "{}", error);
                    prop_assert!(reads_back.is_err(), "refused {} but it reads back", error);
                }
            }
        }
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` of a count of seconds since 1970 (civil-from-days).
    fn utc(seconds: i64) -> String {
        let (days, secs) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = yoe + era * 400 + i64::from(month <= 2);
        format!(
            "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
            secs / 3600,
            secs % 3600 / 60,
            secs % 60
        )
    }
}

/// A new meta names the candidate it is pinned under: `pin` refuses an empty or blank
/// `patch_id`. A meta file already on disk with one (older versions wrote it) is read as it
/// is and is no integrity error.
#[test]
fn an_empty_patch_id_is_refused_when_pinned_and_read_when_on_disk() {
    for blank in ["", " \t"] {
        let (root, meta, fixture, origin) = pinned();
        let path = edit_meta(root.path(), &fixture, "patch_id", Value::from(blank));
        assert!(verify(root.path()).is_empty(), "{path:?}");
        let read = read_meta(root.path(), &property(), fixture.fixture_id()).unwrap();
        assert_eq!(read.patch_id, blank);
        assert!(read.check().is_ok());
        assert!(read.check_new().is_err());
        let other = tempfile::tempdir().unwrap();
        let mut empty = meta.clone();
        empty.patch_id = blank.to_owned();
        let err = pin(other.path(), &empty, &fixture, &origin).unwrap_err();
        assert!(err.to_string().contains("patch_id"), "{err}");
        assert!(verify(other.path()).is_empty());
        assert!(!other.path().join("fixtures").exists());
    }
}

/// `steps` deep: each step an object whose member `x` holds `depth - 1` nested arrays (a
/// step of `depth` levels).
fn nested_step(depth: usize) -> Value {
    let mut value = Value::Null;
    for _ in 1..depth {
        value = Value::Array(vec![value]);
    }
    Value::Object(vec![("x".to_owned(), value)])
}

/// `pin` refuses, writing nothing, every `shrink_path` that the meta file could not be read
/// back with: a step that is not an object, a step object with a key twice (as written or
/// after NFC, at any depth), a step nested deeper than the file allows (the meta object and
/// the `shrink_path` array count). A step at the deepest level allowed pins and verifies.
#[test]
fn pin_refuses_a_shrink_path_the_meta_file_could_not_be_read_back_with() {
    let obj = |members: Vec<(&str, Value)>| {
        Value::Object(
            members
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
        )
    };
    let cases: Vec<(&str, Value, &str)> = vec![
        ("null", Value::Null, "step 1 is a null, not an object"),
        (
            "array",
            Value::Array(Vec::new()),
            "step 1 is a array, not an object",
        ),
        (
            "duplicate key",
            obj(vec![("a", Value::int(1)), ("a", Value::int(2))]),
            "step 1: duplicate key \"a\" in the object at \"/shrink_path/1\"",
        ),
        (
            "keys equal after NFC",
            obj(vec![("e\u{301}", Value::int(1)), ("\u{e9}", Value::int(2))]),
            "step 1: duplicate key \"\u{e9}\" in the object at \"/shrink_path/1\"",
        ),
        (
            "duplicate key deeper down",
            obj(vec![(
                "x",
                Value::Array(vec![obj(vec![("b", Value::Null), ("b", Value::Null)])]),
            )]),
            "step 1: duplicate key \"b\" in the object at \"/shrink_path/1/x/0\"",
        ),
        (
            "nested too deep",
            nested_step(fixture_step_limit() + 1),
            "step 1: nesting deeper than 128 arrays/objects",
        ),
        (
            "nested far too deep",
            nested_step(200),
            "step 1: nesting deeper than 128",
        ),
    ];
    let fixture = canonicalize(br#"{"items": [{"qty": 0}]}"#, Canonicalization::V1).unwrap();
    let origin = canonicalize(br#"{"items": [{"qty": 3}]}"#, Canonicalization::V1).unwrap();
    for (name, step, message) in cases {
        let mut meta = meta_for(&fixture, &origin, Canonicalization::V1);
        meta.shrink_path.push(step);
        let root = tempfile::tempdir().unwrap();
        let err = pin(root.path(), &meta, &fixture, &origin).unwrap_err();
        assert!(
            matches!(
                &err,
                Error::Meta(MetaError::InvalidField {
                    field: "shrink_path",
                    ..
                })
            ),
            "{name}: {err:?}"
        );
        assert!(err.to_string().contains(message), "{name}: {err}");
        assert!(
            !root.path().join("fixtures").exists(),
            "{name}: pin wrote files"
        );
        // The meta file it would have written does not read back either.
        assert!(Meta::parse(meta.render().as_bytes()).is_err(), "{name}");
    }
    // The deepest step allowed pins, reads back and verifies.
    let mut meta = meta_for(&fixture, &origin, Canonicalization::V1);
    meta.shrink_path.push(nested_step(fixture_step_limit()));
    let root = tempfile::tempdir().unwrap();
    pin(root.path(), &meta, &fixture, &origin).unwrap();
    assert!(verify(root.path()).is_empty(), "{:#?}", verify(root.path()));
    assert_eq!(
        read_meta(root.path(), &property(), fixture.fixture_id()).unwrap(),
        meta
    );
}

/// The most levels a step may nest: `MAX_DEPTH` less the meta object and the `shrink_path`
/// array around it.
fn fixture_step_limit() -> usize {
    freezegate_canon::MAX_DEPTH - 2
}

/// An atomic write that cannot start (its folder is missing) names the file asked for, not
/// the temporary file beside it.
#[test]
fn a_failed_atomic_write_names_the_file_not_its_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing/x.json");
    let error = freezegate_canon::fixture::write_atomic(&path, b"{}").unwrap_err();
    let said = freezegate_canon::ErrorChain(&error).to_string();
    assert!(
        said.starts_with(&format!("{}: ", path.display())) && !said.contains(".x.json."),
        "{said}"
    );
}
