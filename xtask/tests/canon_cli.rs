//! `xtask canon` end to end: the real binary, stdin and files, `--digest`, `--id`,
//! `--ordered`, `-C DIR`, and exit code 3 with line and column for every SPEC §3 error.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// Runs `xtask args...` in `dir` with `stdin` and returns its output.
fn xtask(dir: &Path, args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The child may exit before reading everything (usage errors): ignore a broken pipe.
    let _ = child.stdin.take().unwrap().write_all(stdin);
    child.wait_with_output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

const VECTORS: [(&str, &str, &str); 4] = [
    (
        r#"{"user_id": 0, "role": ""}"#,
        r#"{"role":"","user_id":0}"#,
        "84a6b2a276edd51b",
    ),
    (
        r#"{"b":1,"a":[1.0,1e16,1e-5,0.0001,-0.0,12345678901234567890123]}"#,
        r#"{"a":[1.0,1e+16,1e-05,0.0001,-0.0,12345678901234567890123],"b":1}"#,
        "01751cc09a4bb8e9",
    ),
    (r#""e\u0301""#, "\"\u{e9}\"", "f2886017e9c7abac"),
    (
        "[1E2, 0.1e1, 1.000, -0]",
        "[100.0,1.0,1.0,0]",
        "a5db5f2ee7687dbb",
    ),
];

#[test]
fn stdin_gives_canonical_bytes_without_a_newline() {
    let dir = tempfile::tempdir().unwrap();
    for (input, bytes, _) in VECTORS {
        let o = xtask(dir.path(), &["canon"], input.as_bytes());
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(stdout(&o), bytes);
        assert_eq!(stderr(&o), "");
        let o = xtask(dir.path(), &["canon", "-"], input.as_bytes());
        assert_eq!(stdout(&o), bytes);
    }
}

#[test]
fn digest_and_id_print_hex_and_a_newline() {
    let dir = tempfile::tempdir().unwrap();
    for (input, _, id) in VECTORS {
        let o = xtask(dir.path(), &["canon", "--id"], input.as_bytes());
        assert_eq!(o.status.code(), Some(0));
        assert_eq!(stdout(&o), format!("{id}\n"));
        let o = xtask(dir.path(), &["canon", "--digest"], input.as_bytes());
        assert_eq!(o.status.code(), Some(0));
        let digest = stdout(&o);
        assert_eq!(digest.len(), 65, "{digest:?}");
        assert!(digest.starts_with(id) && digest.ends_with('\n'));
        assert!(
            digest
                .trim_end()
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
    }
    let o = xtask(
        dir.path(),
        &["canon", "--digest"],
        b"{\"user_id\": 0, \"role\": \"\"}",
    );
    // sha256 of {"role":"","user_id":0}, as Python's hashlib gives it.
    assert_eq!(
        stdout(&o),
        "84a6b2a276edd51bdf5b880b71a82bf9d961ffaa35612e63498a7671871cf4f8\n"
    );
}

#[test]
fn a_file_argument_and_dash_c_resolve_relative_paths() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("data");
    std::fs::create_dir(&sub).unwrap();
    std::fs::write(sub.join("doc.json"), VECTORS[1].0).unwrap();
    let o = xtask(dir.path(), &["canon", "data/doc.json"], b"");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), VECTORS[1].1);
    let sub = sub.to_str().unwrap();
    for args in [
        ["-C", sub, "canon", "doc.json"],
        ["canon", "-C", sub, "doc.json"],
        ["canon", "doc.json", "-C", sub],
    ] {
        let o = xtask(dir.path(), &args, b"");
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert_eq!(stdout(&o), VECTORS[1].1, "{args:?}");
    }
    let o = xtask(dir.path(), &["-C", sub, "canon", "--id", "doc.json"], b"");
    assert_eq!(stdout(&o), "01751cc09a4bb8e9\n");
}

#[test]
fn ordered_keeps_member_order() {
    let dir = tempfile::tempdir().unwrap();
    let o = xtask(dir.path(), &["canon", "--ordered"], VECTORS[0].0.as_bytes());
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o), r#"{"user_id":0,"role":""}"#);
}

/// Asserts exit 3, nothing on stdout, and a one-line error naming `name` and `place`.
fn refused(dir: &Path, args: &[&str], input: &[u8], name: &str, place: &str, what: &str) {
    let o = xtask(dir, args, input);
    let err = stderr(&o);
    assert_eq!(
        o.status.code(),
        Some(3),
        "{args:?} {:?}: {err}",
        String::from_utf8_lossy(input)
    );
    assert_eq!(stdout(&o), "", "{err}");
    assert!(err.starts_with("error: ") && err.ends_with('\n'), "{err:?}");
    assert_eq!(err.lines().count(), 1, "{err:?}");
    for needle in [name, place, what] {
        assert!(err.contains(needle), "{err:?} does not name {needle:?}");
    }
}

#[test]
fn every_spec_error_exits_3_naming_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases: [(&[u8], &str, &str); 14] = [
        (b"{\"a\" 1}", "line 1, column 6", "unexpected character"),
        (b"[\"a\xff\"]", "line 1, column 4", "invalid UTF-8"),
        (b"[1]\n[2]", "line 2, column 1", "trailing data"),
        (
            b"{\"a\": 1,\n \"a\": 2}",
            "line 2, column 2",
            "duplicate key \"a\"",
        ),
        (
            b"{\"\\u00e9\": 1, \"e\\u0301\": 2}",
            "line 1, column 15",
            "after NFC",
        ),
        (b"[NaN]", "line 1, column 2", "NaN is not allowed"),
        (
            b"[-Infinity]",
            "line 1, column 2",
            "-Infinity is not allowed",
        ),
        (b"[1e400]", "line 1, column 2", "overflows"),
        (b"[\"\\ud800\"]", "line 1, column 3", "lone surrogate"),
        (b"\xef\xbb\xbf[]", "line 1, column 1", "byte-order mark"),
        (b"\xff\xfe[\x00]\x00", "line 1, column 1", "UTF-16"),
        (b"[\x00]\x00", "line 1, column 1", "UTF-16"),
        (b"", "line 1, column 1", "unexpected end"),
        (b"[\"tab\there\"]", "line 1, column 6", "control character"),
    ];
    for (input, place, what) in cases {
        refused(d, &["canon"], input, "<stdin>", place, what);
        std::fs::write(d.join("bad.json"), input).unwrap();
        refused(
            d,
            &["canon", "--digest", "bad.json"],
            input,
            "bad.json",
            place,
            what,
        );
    }
    let deep = "[".repeat(129) + &"]".repeat(129);
    refused(
        d,
        &["canon"],
        deep.as_bytes(),
        "<stdin>",
        "line 1, column 129",
        "deeper than 128",
    );
    let ok = "[".repeat(128) + &"]".repeat(128);
    let o = xtask(d, &["canon"], ok.as_bytes());
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o), ok);
}

#[test]
fn usage_errors_exit_3() {
    let dir = tempfile::tempdir().unwrap();
    let o = xtask(dir.path(), &["canon", "missing.json"], b"");
    assert_eq!(o.status.code(), Some(3));
    assert!(stderr(&o).contains("missing.json"), "{}", stderr(&o));
    let o = xtask(dir.path(), &["canon", "--digest", "--id"], b"[]");
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(stdout(&o), "");
    let o = xtask(dir.path(), &["-C", "no/such/dir", "canon"], b"[]");
    assert_eq!(o.status.code(), Some(3));
    assert!(stderr(&o).contains("no/such/dir"), "{}", stderr(&o));
}

#[test]
fn json_format_gives_form_text_digest_and_id_in_one_document() {
    let dir = tempfile::tempdir().unwrap();
    let out = xtask(
        dir.path(),
        &["canon", "--format", "json"],
        br#"{"user_id": 0, "role": ""}"#,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Keys in their documented order, the schema first.
    let text = stdout(&out);
    let at = |key: &str| text.find(&format!("\"{key}\":")).unwrap_or(usize::MAX);
    let order = [
        "schema",
        "canonicalization",
        "canonical",
        "fixture_digest",
        "fixture_id",
    ];
    assert!(
        order.windows(2).all(|w| at(w[0]) < at(w[1])) && at("fixture_id") < text.len(),
        "{text}"
    );
    assert_eq!(doc["schema"], "freezegate-canon-result-v1");
    assert_eq!(doc["canonicalization"], "freezegate-canon-v1");
    assert_eq!(doc["canonical"], r#"{"role":"","user_id":0}"#);
    assert_eq!(doc["fixture_id"], "84a6b2a276edd51b");
    assert!(
        doc["fixture_digest"]
            .as_str()
            .unwrap()
            .starts_with("84a6b2a276edd51b")
    );
    let out = xtask(
        dir.path(),
        &["canon", "--format", "json", "--ordered"],
        br#"{"b": 1, "a": 2}"#,
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["canonicalization"], "freezegate-canon-v1-ordered");
    assert_eq!(doc["canonical"], r#"{"b":1,"a":2}"#);
    // --digest and --id print one hex line; they do not mix with a document.
    let out = xtask(dir.path(), &["canon", "--format", "json", "--id"], b"{}");
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stderr(&out).contains("drop --digest and --id"),
        "{}",
        stderr(&out)
    );
    let out = xtask(dir.path(), &["canon", "--format", "text", "--id"], b"{}");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "44136fa355b3678a\n");
}
