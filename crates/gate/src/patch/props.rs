//! Finding property tests in a source file: Rust `proptest!` blocks, `#[proptest]` functions and
//! `#[test]` functions that drive proptest; Python functions decorated with Hypothesis' `@given`.

use std::sync::LazyLock;

use regex::Regex;

use super::rules::FileKind;

/// One property test definition: its function name and the 1-based line of `fn`/`def`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct PropertyDef {
    pub name: String,
    pub line: u32,
}

/// The property tests defined in `text`, in order of appearance.
pub(crate) fn properties(kind: FileKind, text: &str) -> Vec<PropertyDef> {
    match kind {
        FileKind::Rust => rust_properties(text),
        FileKind::Python => python_properties(text),
        FileKind::Other => Vec::new(),
    }
}

#[allow(clippy::expect_used)] // constant patterns, checked by the unit tests below
fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("constant pattern compiles")
}

static PROPTEST_MACRO: LazyLock<Regex> = LazyLock::new(|| re(r"\bproptest\s*!\s*[\{\(\[]"));
static FN_NAME: LazyLock<Regex> = LazyLock::new(|| re(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)"));
static TEST_ATTR: LazyLock<Regex> = LazyLock::new(|| re(r"#\s*\[\s*test\s*\]"));
static PROPTEST_ATTR: LazyLock<Regex> = LazyLock::new(|| {
    re(r"#\s*\[\s*(?:[A-Za-z_][A-Za-z0-9_]*\s*::\s*)*(?:proptest|property_test)\s*[\]\(]")
});
static USES_PROPTEST: LazyLock<Regex> = LazyLock::new(|| {
    re(r"\bproptest\b|\bprop_assert|\bprop_assume|\bTestRunner\b|\bprop::|\bany\s*::\s*<")
});
static GIVEN: LazyLock<Regex> = LazyLock::new(|| re(r"^@\s*(?:hypothesis\s*\.\s*)?given\b"));
static DEF: LazyLock<Regex> = LazyLock::new(|| re(r"^(?:async\s+)?def\s+([A-Za-z_][A-Za-z0-9_]*)"));

fn line_of(text: &str, offset: usize) -> u32 {
    let n = text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count();
    u32::try_from(n + 1).unwrap_or(u32::MAX)
}

fn rust_properties(text: &str) -> Vec<PropertyDef> {
    let code = blank_rust_comments_and_strings(text);
    let mut found: Vec<PropertyDef> = Vec::new();
    let mut push = |name: &str, offset: usize| {
        let def = PropertyDef {
            name: name.to_string(),
            line: line_of(&code, offset),
        };
        if !found.contains(&def) {
            found.push(def);
        }
    };
    for m in PROPTEST_MACRO.find_iter(&code) {
        let open = m.end() - 1;
        let close = matching_close(&code, open).unwrap_or(code.len());
        let block = &code[open..close];
        for c in FN_NAME.captures_iter(block) {
            if let Some(name) = c.get(1) {
                push(name.as_str(), open + name.start());
            }
        }
    }
    for m in PROPTEST_ATTR.find_iter(&code) {
        if let Some(c) = FN_NAME.captures(&code[m.end()..])
            && let Some(name) = c.get(1)
        {
            push(name.as_str(), m.end() + name.start());
        }
    }
    for m in TEST_ATTR.find_iter(&code) {
        let rest = &code[m.end()..];
        let Some(c) = FN_NAME.captures(rest) else {
            continue;
        };
        let Some(name) = c.get(1) else { continue };
        let after = m.end() + name.end();
        let Some(open_rel) = code[after..].find('{') else {
            continue;
        };
        let open = after + open_rel;
        let close = matching_close(&code, open).unwrap_or(code.len());
        if USES_PROPTEST.is_match(&code[open..close]) {
            push(name.as_str(), m.end() + name.start());
        }
    }
    found.sort_by_key(|d| d.line);
    found
}

/// The offset of the bracket closing the one at `open`, counting `()[]{}` alike.
pub(crate) fn matching_close(code: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, b) in code.bytes().enumerate().skip(open) {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// `text` with the contents of comments, string and char literals replaced by spaces (newlines
/// kept), so that offsets and line numbers stay those of the original.
pub(crate) fn blank_rust_comments_and_strings(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out: Vec<u8> = bytes.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        // An unterminated literal or comment at the end can give `from > to`: nothing to blank.
        for b in out.get_mut(from..to.min(bytes.len())).unwrap_or_default() {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    };
    let mut i = 0;
    while i < bytes.len() {
        let rest = &bytes[i..];
        if rest.starts_with(b"//") {
            let end = rest
                .iter()
                .position(|b| *b == b'\n')
                .map_or(bytes.len(), |p| i + p);
            blank(&mut out, i, end);
            i = end;
        } else if rest.starts_with(b"/*") {
            let mut depth = 0usize;
            let mut j = i;
            while j < bytes.len() {
                if bytes[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if bytes[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if let Some((hashes, start)) = raw_string_start(bytes, i) {
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat_n(b'#', hashes));
            let end = bytes[start..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(bytes.len(), |p| start + p + close.len());
            blank(&mut out, start, end.saturating_sub(close.len()));
            i = end;
        } else if bytes[i] == b'"' {
            let mut j = i + 1;
            while j < bytes.len() && bytes[j] != b'"' {
                j += if bytes[j] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, i + 1, j);
            i = j + 1;
        } else if bytes[i] == b'\'' {
            // A char literal ('x', '\n', '\u{..}', 'é'); otherwise a lifetime or label.
            let end = if rest.get(1) == Some(&b'\\') {
                rest.iter()
                    .skip(2)
                    .position(|b| *b == b'\'')
                    .map(|p| i + 2 + p)
            } else {
                text[i + 1..]
                    .chars()
                    .next()
                    .map(|c| i + 1 + c.len_utf8())
                    .filter(|e| bytes.get(*e) == Some(&b'\''))
            };
            match end {
                Some(e) => {
                    blank(&mut out, i + 1, e);
                    i = e + 1;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// At a raw string opening (`r"`, `r#"`, `br#"` …): the number of `#` and the content start.
fn raw_string_start(bytes: &[u8], i: usize) -> Option<(usize, usize)> {
    let prev_ident = i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
    if prev_ident {
        return None;
    }
    let mut j = i;
    if bytes.get(j) == Some(&b'b') {
        j += 1;
    }
    if bytes.get(j) != Some(&b'r') {
        return None;
    }
    j += 1;
    let hashes = bytes[j..].iter().take_while(|b| **b == b'#').count();
    j += hashes;
    (bytes.get(j) == Some(&b'"')).then_some((hashes, j + 1))
}

fn python_properties(text: &str) -> Vec<PropertyDef> {
    let mut found = Vec::new();
    let mut given = false;
    for (line, number) in text.lines().zip(1u32..) {
        let t = line.trim_start();
        if t.starts_with('@') {
            given |= GIVEN.is_match(t);
        } else if let Some(c) = DEF.captures(t) {
            if given && let Some(name) = c.get(1) {
                found.push(PropertyDef {
                    name: name.as_str().to_string(),
                    line: number,
                });
            }
            given = false;
        } else if t.starts_with("class ") {
            given = false;
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn names(kind: FileKind, text: &str) -> Vec<(String, u32)> {
        properties(kind, text)
            .into_iter()
            .map(|d| (d.name, d.line))
            .collect()
    }

    #[test]
    fn rust_properties_are_found_in_macros_attributes_and_runner_tests() {
        let text = r#"
use proptest::prelude::*;
// proptest! { fn commented_out(x in 0..1) {} }
proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]
    #[test]
    fn total_is_sum(x in any::<u32>()) {
        let s = "}";
        prop_assert!(x >= 0);
    }
    fn second(v in prop::collection::vec(0u8..3, 0..4)) { let _ = '}'; }
}
#[test]
fn plain_unit_test() { assert_eq!(1, 1); }
#[test]
fn runner_test() {
    let mut runner = proptest::test_runner::TestRunner::default();
}
#[test_strategy::proptest]
fn attributed(x: u8) {}
"#;
        assert_eq!(
            names(FileKind::Rust, text),
            vec![
                ("total_is_sum".into(), 7),
                ("second".into(), 11),
                ("runner_test".into(), 16),
                ("attributed".into(), 20),
            ]
        );
    }

    #[test]
    fn python_properties_need_given() {
        let text = "from hypothesis import given, strategies as st\n\n@settings(max_examples=500)\n@given(\n    st.integers(),\n)\ndef test_total(x):\n    assert x == x\n\ndef test_plain():\n    pass\n\n@hypothesis.given(st.text())\nasync def test_async(s):\n    pass\n";
        assert_eq!(
            names(FileKind::Python, text),
            vec![("test_total".into(), 7), ("test_async".into(), 14)]
        );
    }

    #[test]
    fn blanking_keeps_offsets_and_hides_strings_and_comments() {
        let text = "let a = r#\"{ \"x\" }\"#; /* { /* } */ */ let c = 'a'; let l: &'static str = \"}\"; // }\nfn f<'a>() {}";
        let code = blank_rust_comments_and_strings(text);
        assert_eq!(code.len(), text.len());
        assert_eq!(code.matches('{').count(), 1);
        assert_eq!(code.matches('}').count(), 1);
        assert!(code.contains("fn f<'a>() {}"));
    }

    proptest! {
        #[test]
        fn matching_close_finds_the_partner_of_any_balanced_nesting(depth in 1usize..20, filler in "[a-z ;]{0,5}") {
            let mut s = String::new();
            for i in 0..depth {
                s.push(['(', '[', '{'][i % 3]);
                s.push_str(&filler);
            }
            for i in (0..depth).rev() {
                s.push_str(&filler);
                s.push([')', ']', '}'][i % 3]);
            }
            s.push_str("}}");
            let close = matching_close(&s, 0).unwrap();
            prop_assert_eq!(close, s.len() - 3);
        }

        #[test]
        fn blanking_never_changes_length_or_lines(text in "[a-z{}\"'/*#r\\n \\\\]{0,60}") {
            let code = blank_rust_comments_and_strings(&text);
            prop_assert_eq!(code.len(), text.len());
            prop_assert_eq!(code.matches('\n').count(), text.matches('\n').count());
        }
    }
}
