//! Ledger text from anywhere (a patch, a hand edit, a broken merge) is read without a panic;
//! the two readers agree on whether it is valid JSON; a ledger that reads renders to text
//! that reads back to the same ledger, and rendering that again changes nothing. Every
//! problem found in a text has a line and column inside it. The same text read as an
//! `allowed_signers` file gives literal principals or an error at a line.

#![no_main]

use freezegate_ledger::{
    AllowedSigners, Checks, Error, FixtureFile, Ledger, Policy, Timestamp, check,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let policy = Policy::default();
    let signers = AllowedSigners::parse(
        "alice@example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFakeKeyForFuzzingOnly",
    )
    .expect("the signers line parses");
    let now = Timestamp::parse_rfc3339("2026-09-20T00:00:00Z").expect("the time parses");
    let fixtures = |_: &_, _| FixtureFile::Missing;
    let checks = Checks::new(&policy, now, &signers, &fixtures);
    let checked = check(data, &checks);
    if let Ok(report) = &checked {
        // Every problem of a text has a place in it.
        let lines = 1 + data.iter().filter(|&&b| b == b'\n').count();
        for p in &report.problems {
            let at = p.at.unwrap_or_else(|| panic!("no place: {p}"));
            assert!(at.line >= 1 && at.line <= lines && at.column >= 1, "{p}");
        }
    }
    let read = Ledger::from_slice(data);
    match &read {
        Ok(ledger) => {
            assert!(checked.is_ok(), "read but not checked: {checked:?}");
            let text = ledger.render();
            let again = Ledger::from_slice(text.as_bytes()).expect("a rendered ledger reads back");
            assert_eq!(&again, ledger, "the rendered ledger reads back different");
            assert_eq!(again.render(), text, "rendering is not a fixpoint");
        }
        Err(e) => {
            // A syntax error stops both readers at the same place.
            if let (Some(syntax), Err(c)) = (e.syntax(), &checked) {
                assert_eq!(syntax, c);
            }
            assert_eq!(
                e.syntax().is_some(),
                checked.is_err(),
                "{e:?} vs {checked:?}"
            );
        }
    }
    // Any text may come in as an allowed_signers file: literal principals, each once and
    // allowed, or an error that names a line of the text.
    if let Ok(text) = std::str::from_utf8(data) {
        match AllowedSigners::parse(text) {
            Ok(signers) => {
                let principals = signers.principals();
                for (i, p) in principals.iter().enumerate() {
                    assert!(!p.is_empty() && !p.contains(['*', '?', ',']), "{p:?}");
                    assert!(!p.starts_with('!'), "{p:?}");
                    assert!(signers.allows(p), "{p:?}");
                    assert!(!principals[..i].contains(p), "{p:?} twice");
                }
            }
            Err(Error::Signers { line, column, .. }) => {
                assert!((1..=text.lines().count()).contains(&line), "line {line}");
                let width = text.lines().nth(line - 1).map_or(0, |l| l.chars().count());
                assert!((1..=width).contains(&column), "column {column} of {width}");
            }
            Err(e) => panic!("not a signers error: {e}"),
        }
    }
});
