//! Finding property tests in a source file: Rust `proptest!` blocks, `#[proptest]` functions and
//! `#[test]` functions that drive proptest; Python functions decorated with Hypothesis' `@given`.
//! Also the lexing the rules read lines through: comments cut and string contents blanked,
//! string- and comment-aware, over the whole file (so a line that starts inside a multi-line
//! literal is read as such).

use std::sync::LazyLock;

use regex::Regex;

use super::rules::FileKind;

/// One property test definition: its function name and the 1-based line of `fn`/`def`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct PropertyDef {
    pub name: String,
    pub line: u32,
}

/// The lines a property (or a `proptest!` block) spans, attributes and decorators included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Span {
    /// First line (1-based), its first attribute or decorator.
    pub start: u32,
    /// Last line (1-based, inclusive).
    pub end: u32,
    /// The properties it defines: one for a function, all of a block's for a `proptest!` block.
    pub names: Vec<String>,
}

/// The property tests defined in `text`, in order of appearance.
pub(crate) fn properties(kind: FileKind, text: &str) -> Vec<PropertyDef> {
    match kind {
        FileKind::Rust => rust_properties(text).0,
        FileKind::Python => python_properties(text).0,
        FileKind::Other => Vec::new(),
    }
}

/// The spans of the property tests (and `proptest!` blocks) of `text`.
pub(crate) fn property_spans(kind: FileKind, text: &str) -> Vec<Span> {
    match kind {
        FileKind::Rust => rust_properties(text).1,
        FileKind::Python => python_properties(text).1,
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

/// The first line of an item whose keyword is on `line`: attribute lines (`#[…]`) and blank
/// lines directly above it belong to it (blank ones only between attributes).
fn attribute_start(lines: &[&str], line: u32) -> u32 {
    let mut start = line;
    let mut probe = line;
    while probe > 1 {
        let Some(above) = lines.get(probe as usize - 2) else {
            break;
        };
        let t = above.trim();
        if t.starts_with("#[") {
            start = probe - 1;
        } else if !t.is_empty() {
            break;
        }
        probe -= 1;
    }
    start
}

/// The property definitions of a Rust text and their spans.
fn rust_properties(text: &str) -> (Vec<PropertyDef>, Vec<Span>) {
    let code = blank_rust_comments_and_strings(text);
    let lines: Vec<&str> = code.split('\n').collect();
    let mut found: Vec<PropertyDef> = Vec::new();
    let mut spans: Vec<Span> = Vec::new();
    // The last line of a function whose name ends at `after`: its body's closing brace.
    let fn_end = |after: usize| -> u32 {
        let body = code[after..].find('(').and_then(|p| {
            let close = matching_close(&code, after + p)?;
            let open = close + code[close..].find('{')?;
            matching_close(&code, open)
        });
        line_of(&code, body.unwrap_or(code.len()))
    };
    let mut push = |name: &str, offset: usize, end: u32, found: &mut Vec<PropertyDef>| {
        let def = PropertyDef {
            name: name.to_string(),
            line: line_of(&code, offset),
        };
        if !found.contains(&def) {
            spans.push(Span {
                start: attribute_start(&lines, def.line),
                end,
                names: vec![def.name.clone()],
            });
            found.push(def);
        }
    };
    let mut blocks = Vec::new();
    for m in PROPTEST_MACRO.find_iter(&code) {
        let open = m.end() - 1;
        let close = matching_close(&code, open).unwrap_or(code.len());
        let block = &code[open..close];
        let mut names = Vec::new();
        for c in FN_NAME.captures_iter(block) {
            if let Some(name) = c.get(1) {
                push(
                    name.as_str(),
                    open + name.start(),
                    fn_end(open + name.end()),
                    &mut found,
                );
                names.push(name.as_str().to_string());
            }
        }
        let start_line = line_of(&code, m.start());
        blocks.push(Span {
            start: attribute_start(&lines, start_line),
            end: line_of(&code, close),
            names,
        });
    }
    for m in PROPTEST_ATTR.find_iter(&code) {
        if let Some(c) = FN_NAME.captures(&code[m.end()..])
            && let Some(name) = c.get(1)
        {
            let end = fn_end(m.end() + name.end());
            push(name.as_str(), m.end() + name.start(), end, &mut found);
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
            let end = line_of(&code, close);
            push(name.as_str(), m.end() + name.start(), end, &mut found);
        }
    }
    found.sort_by_key(|d| d.line);
    spans.extend(blocks);
    (found, spans)
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

/// Two views of a source text, each as long as the text, with every newline where it was:
/// `code` has the comments blanked, `bare` also the contents of string and char literals
/// (their prefixes, quotes and raw-string hashes stay, and so does the code in an f-string's
/// `{…}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Views {
    pub code: String,
    pub bare: String,
}

/// The views of a whole file. A Rust or Python text that does not lex to its end outside every
/// literal and comment (not valid source, or a construct the lexer does not know) is read raw:
/// nothing is cut or blanked, so that a lexer mistake can only show more code, never hide it.
pub(crate) fn views(kind: FileKind, text: &str) -> Views {
    let lexed = match kind {
        FileKind::Rust => lex_rust(text),
        FileKind::Python => lex_python(text),
        FileKind::Other => {
            let mut code = String::with_capacity(text.len());
            for (i, line) in text.split('\n').enumerate() {
                if i > 0 {
                    code.push('\n');
                }
                let kept = other_code(line);
                code.push_str(kept);
                code.extend(std::iter::repeat_n(' ', line.len() - kept.len()));
            }
            return Views {
                bare: code.clone(),
                code,
            };
        }
    };
    if lexed.clean {
        Views {
            code: lexed.code,
            bare: lexed.bare,
        }
    } else {
        Views {
            code: text.to_string(),
            bare: text.to_string(),
        }
    }
}

/// The code part of a line of a file that is neither Rust nor Python (shell, TOML, YAML, INI):
/// the line without a `#` comment that starts the line or follows a blank, outside quotes.
fn other_code(line: &str) -> &str {
    if line.trim_start().starts_with("#[") {
        return line;
    }
    let b = line.as_bytes();
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < b.len() {
        match (quote, b[i]) {
            (Some(b'"'), b'\\') => i += 1,
            (Some(q), c) if c == q => quote = None,
            (None, b'"' | b'\'') => quote = Some(b[i]),
            (None, b'#') if i == 0 || b[i - 1].is_ascii_whitespace() => return &line[..i],
            _ => {}
        }
        i += 1;
    }
    line
}

/// `text` with the contents of comments, string and char literals replaced by spaces (newlines
/// kept), so that offsets and line numbers stay those of the original.
pub(crate) fn blank_rust_comments_and_strings(text: &str) -> String {
    lex_rust(text).bare
}

struct Lexed {
    code: String,
    bare: String,
    /// The text ended outside every literal and comment.
    clean: bool,
}

struct Lexer<'a> {
    src: &'a [u8],
    code: Vec<u8>,
    bare: Vec<u8>,
    clean: bool,
}

fn blank(buf: &mut [u8], from: usize, to: usize) {
    // An unterminated literal or comment at the end can give `from > to`: nothing to blank.
    let to = to.min(buf.len());
    for b in buf.get_mut(from..to).unwrap_or_default() {
        if *b != b'\n' {
            *b = b' ';
        }
    }
}

impl<'a> Lexer<'a> {
    fn new(text: &'a str) -> Self {
        Lexer {
            src: text.as_bytes(),
            code: text.as_bytes().to_vec(),
            bare: text.as_bytes().to_vec(),
            clean: true,
        }
    }

    fn comment(&mut self, from: usize, to: usize) {
        blank(&mut self.code, from, to);
        blank(&mut self.bare, from, to);
    }

    fn literal(&mut self, from: usize, to: usize) {
        blank(&mut self.bare, from, to);
    }

    fn line_end(&self, i: usize) -> usize {
        self.src[i..]
            .iter()
            .position(|b| *b == b'\n')
            .map_or(self.src.len(), |p| i + p)
    }

    fn finish(self) -> Lexed {
        // Only whole runs of bytes between ASCII delimiters are blanked: still UTF-8.
        Lexed {
            code: String::from_utf8_lossy(&self.code).into_owned(),
            bare: String::from_utf8_lossy(&self.bare).into_owned(),
            clean: self.clean,
        }
    }
}

fn lex_rust(text: &str) -> Lexed {
    let mut lx = Lexer::new(text);
    let bytes = lx.src;
    let mut i = 0;
    while i < bytes.len() {
        let rest = &bytes[i..];
        if rest.starts_with(b"//") {
            let end = lx.line_end(i);
            lx.comment(i, end);
            i = end;
        } else if rest.starts_with(b"/*") {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                if j >= bytes.len() {
                    lx.clean = false;
                    break;
                }
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
            lx.comment(i, j);
            i = j;
        } else if let Some((hashes, start)) = raw_string_start(bytes, i) {
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat_n(b'#', hashes));
            let end = match bytes[start..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
            {
                Some(p) => start + p + close.len(),
                None => {
                    lx.clean = false;
                    bytes.len() + close.len()
                }
            };
            lx.literal(start, end - close.len());
            i = end;
        } else if bytes[i] == b'"' {
            let mut j = i + 1;
            while j < bytes.len() && bytes[j] != b'"' {
                j += if bytes[j] == b'\\' { 2 } else { 1 };
            }
            if j >= bytes.len() {
                lx.clean = false;
            }
            lx.literal(i + 1, j);
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
                    lx.literal(i + 1, e);
                    i = e + 1;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    lx.finish()
}

/// At a raw string opening (`r"`, `r#"`, `br#"`, `cr#"` …): the number of `#` and the content
/// start.
fn raw_string_start(bytes: &[u8], i: usize) -> Option<(usize, usize)> {
    let prev_ident = i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
    if prev_ident {
        return None;
    }
    let mut j = i;
    if matches!(bytes.get(j), Some(b'b' | b'c')) {
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

/// Nesting of f-strings in f-string expressions the lexer follows; deeper is read raw.
const MAX_FSTRING_DEPTH: usize = 32;

fn lex_python(text: &str) -> Lexed {
    let mut lx = Lexer::new(text);
    let mut i = 0;
    while i < lx.src.len() {
        match lx.src[i] {
            b'#' => {
                let end = lx.line_end(i);
                lx.comment(i, end);
                i = end;
            }
            b'\'' | b'"' => {
                let f = python_prefix_is_f(lx.src, i);
                i = python_string(&mut lx, i, f, 0);
            }
            _ => i += 1,
        }
    }
    lx.finish()
}

/// Whether the string whose quote is at `quote` has an f (or t) prefix (`f"`, `rf'`, `Fr"` …).
fn python_prefix_is_f(bytes: &[u8], quote: usize) -> bool {
    let mut s = quote;
    while s > 0 && (bytes[s - 1].is_ascii_alphanumeric() || bytes[s - 1] == b'_') {
        s -= 1;
    }
    let prefix = &bytes[s..quote];
    prefix.len() <= 2
        && prefix.iter().all(|b| b"rRbBfFuUtT".contains(b))
        && prefix.iter().any(|b| b"fFtT".contains(b))
}

/// Lexes the string whose opening quote is at `q`; returns the offset after its closing quote.
fn python_string(lx: &mut Lexer<'_>, q: usize, f: bool, depth: usize) -> usize {
    let bytes = lx.src;
    let quote = bytes[q];
    let triple = bytes.get(q + 1) == Some(&quote) && bytes.get(q + 2) == Some(&quote);
    let width = if triple { 3 } else { 1 };
    let mut j = q + width;
    let mut literal_from = j;
    loop {
        let Some(&b) = bytes.get(j) else {
            lx.clean = false;
            lx.literal(literal_from, bytes.len());
            return bytes.len();
        };
        if b == b'\\' {
            j += 2;
        } else if !triple && b == b'\n' {
            lx.clean = false;
            lx.literal(literal_from, j);
            return j;
        } else if b == quote
            && (!triple || (bytes.get(j + 1) == Some(&quote) && bytes.get(j + 2) == Some(&quote)))
        {
            lx.literal(literal_from, j);
            return j + width;
        } else if f && b == b'{' {
            if bytes.get(j + 1) == Some(&b'{') {
                j += 2;
                continue;
            }
            lx.literal(literal_from, j);
            if depth >= MAX_FSTRING_DEPTH {
                lx.clean = false;
                return bytes.len();
            }
            let close = python_fstring_expression(lx, j + 1, depth + 1);
            j = close + 1;
            literal_from = j;
        } else {
            j += 1;
        }
    }
}

/// Lexes the expression of an f-string replacement field starting at `from` (code, with nested
/// strings); returns the offset of its closing `}`.
fn python_fstring_expression(lx: &mut Lexer<'_>, from: usize, depth: usize) -> usize {
    let mut nesting = 0usize;
    let mut j = from;
    while let Some(&b) = lx.src.get(j) {
        match b {
            b'\'' | b'"' => {
                let f = python_prefix_is_f(lx.src, j);
                j = python_string(lx, j, f, depth);
                continue;
            }
            b'(' | b'[' | b'{' => nesting += 1,
            b')' | b']' => nesting = nesting.saturating_sub(1),
            b'}' => {
                if nesting == 0 {
                    return j;
                }
                nesting -= 1;
            }
            _ => {}
        }
        j += 1;
    }
    lx.clean = false;
    lx.src.len()
}

/// The property definitions of a Python text and their spans: from the first decorator to the
/// end of the indented body.
fn python_properties(text: &str) -> (Vec<PropertyDef>, Vec<Span>) {
    let bare = views(FileKind::Python, text).bare;
    let lines: Vec<&str> = bare.split('\n').collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut found = Vec::new();
    let mut spans = Vec::new();
    let mut given = false;
    let mut decorators: Option<u32> = None;
    for (line, number) in text.lines().zip(1u32..) {
        let t = line.trim_start();
        if t.starts_with('@') {
            given |= GIVEN.is_match(t);
            decorators.get_or_insert(number);
        } else if let Some(c) = DEF.captures(t) {
            if given && let Some(name) = c.get(1) {
                let at = number as usize - 1;
                let def_indent = lines.get(at).map_or(0, |l| indent(l));
                // The signature may span lines: the body starts after the line ending in `:`.
                let signature_end = (at..lines.len().min(at + 64))
                    .find(|i| lines[*i].trim_end().ends_with(':'))
                    .unwrap_or(at);
                let mut end = signature_end;
                for (i, l) in lines.iter().enumerate().skip(signature_end + 1) {
                    if l.trim().is_empty() {
                        continue;
                    }
                    if indent(l) <= def_indent {
                        break;
                    }
                    end = i;
                }
                found.push(PropertyDef {
                    name: name.as_str().to_string(),
                    line: number,
                });
                spans.push(Span {
                    start: decorators.unwrap_or(number),
                    end: u32::try_from(end + 1).unwrap_or(u32::MAX),
                    names: vec![name.as_str().to_string()],
                });
            }
            given = false;
            decorators = None;
        } else if t.starts_with("class ") {
            given = false;
            decorators = None;
        }
    }
    (found, spans)
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
    fn spans_cover_attributes_decorators_and_bodies() {
        let rust = "use proptest::prelude::*;\nproptest! {\n    #[test]\n    fn a(x in 0u8..3) {\n        prop_assert!(x < 3);\n    }\n}\n";
        let spans = property_spans(FileKind::Rust, rust);
        assert!(
            spans.contains(&Span {
                start: 3,
                end: 6,
                names: vec!["a".into()]
            }),
            "{spans:?}"
        );
        assert!(
            spans.contains(&Span {
                start: 2,
                end: 7,
                names: vec!["a".into()]
            }),
            "{spans:?}"
        );
        let py = "@settings(\n    max_examples=5,\n)\n@given(st.integers())\ndef test_a(\n    x,\n):\n    y = x\n\n    assert y == x\n\ndef helper():\n    return 1\n";
        assert_eq!(
            property_spans(FileKind::Python, py),
            vec![Span {
                start: 1,
                end: 10,
                names: vec!["test_a".into()]
            }]
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
        fn views_never_change_length_or_lines(text in "[a-z{}()\"'/*#rfb\\n \\\\]{0,60}") {
            for kind in [FileKind::Rust, FileKind::Python, FileKind::Other] {
                let v = views(kind, &text);
                prop_assert_eq!(v.code.len(), text.len());
                prop_assert_eq!(v.bare.len(), text.len());
                prop_assert_eq!(v.code.matches('\n').count(), text.matches('\n').count());
                prop_assert_eq!(v.bare.matches('\n').count(), text.matches('\n').count());
            }
        }

        #[test]
        fn blanking_never_changes_length_or_lines(text in "[a-z{}\"'/*#r\\n \\\\]{0,60}") {
            let code = blank_rust_comments_and_strings(&text);
            prop_assert_eq!(code.len(), text.len());
            prop_assert_eq!(code.matches('\n').count(), text.matches('\n').count());
        }
    }
}
