//! Finding property tests in a source file: Rust `proptest!` blocks, `#[proptest]` functions and
//! `#[test]` functions that drive proptest; Python functions decorated with Hypothesis' `@given`.
//! Also the lexing the rules read lines through: comments cut and string contents blanked,
//! string- and comment-aware, over the whole file (so a line that starts inside a multi-line
//! literal is read as such).

use std::collections::BTreeMap;
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

/// The text of a blob as the rules read it: lossy UTF-8, and for Python source (`.py`, `.pyi`)
/// every `\r\n` and lone `\r` turned into `\n`, since Python ends a line at each of them and a
/// line must not hide behind a `\r` in a comment.
pub(crate) fn source_text(path: &str, bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    if FileKind::of(path) == FileKind::Python && text.contains('\r') {
        text.replace("\r\n", "\n").replace('\r', "\n")
    } else {
        text.into_owned()
    }
}

/// Whether pytest collects test functions from a file of this path with its default
/// `python_files` (`test_*.py` and `*_test.py`).
pub(crate) fn is_pytest_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.strip_suffix(".py")
        .is_some_and(|stem| stem.starts_with("test_") || stem.ends_with("_test"))
}

/// The Hypothesis properties of a Python text that pytest no longer runs because a later
/// definition of the same name in the same module or class replaces them: each with the name
/// and the line of the definition that replaces it.
pub(crate) fn redefined_properties(kind: FileKind, text: &str) -> Vec<PropertyDef> {
    match kind {
        FileKind::Python => python_scan(text).redefined,
        FileKind::Rust | FileKind::Other => Vec::new(),
    }
}

/// For each line of `text` (split at `\n`), whether a logical line starts there. Python: a line
/// that continues an open bracket, a backslash continuation or a multi-line string does not
/// (a text that does not lex to its end, or leaves a bracket open, is read line by line); other
/// kinds: every line.
pub(crate) fn logical_starts(kind: FileKind, text: &str) -> Vec<bool> {
    let lines = text.split('\n').count();
    match kind {
        FileKind::Python => {
            let (lexed, starts) = lex_python_lines(text);
            if lexed.clean {
                starts
            } else {
                vec![true; lines]
            }
        }
        FileKind::Rust | FileKind::Other => vec![true; lines],
    }
}

#[allow(clippy::expect_used)] // constant patterns, checked by the unit tests below
fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("constant pattern compiles")
}

static PROPTEST_MACRO: LazyLock<Regex> = LazyLock::new(|| re(r"\bproptest\s*!\s*[\{\(\[]"));
static FN_NAME: LazyLock<Regex> = LazyLock::new(|| re(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)"));
static TEST_ATTR: LazyLock<Regex> = LazyLock::new(|| re(r"#\s*\[\s*test\s*\]"));
/// An attribute that makes a function a test: `#[test]`, or a path ending in `test`
/// (`#[core::prelude::v1::test]`, `#[tokio::test(…)]`).
static TEST_LIKE_ATTR: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^#\s*\[\s*(?:::\s*)?(?:[A-Za-z_][A-Za-z0-9_]*\s*::\s*)*test\s*(?:\(|\]$)")
});
static PROPTEST_ATTR: LazyLock<Regex> = LazyLock::new(|| {
    re(r"#\s*\[\s*(?:[A-Za-z_][A-Za-z0-9_]*\s*::\s*)*(?:proptest|property_test)\s*[\]\(]")
});
static USES_PROPTEST: LazyLock<Regex> = LazyLock::new(|| {
    re(r"\bproptest\b|\bprop_assert|\bprop_assume|\bTestRunner\b|\bprop::|\bany\s*::\s*<")
});
/// `@given`, `@hypothesis.given`, `@hp.given` (after `import hypothesis as hp`).
static GIVEN: LazyLock<Regex> =
    LazyLock::new(|| re(r"^@\s*(?:[A-Za-z_][A-Za-z0-9_]*\s*\.\s*)*given\b"));
static DEF: LazyLock<Regex> = LazyLock::new(|| re(r"^(?:async\s+)?def\s+([A-Za-z_][A-Za-z0-9_]*)"));
static CLASS: LazyLock<Regex> = LazyLock::new(|| re(r"^class\s+([A-Za-z_][A-Za-z0-9_]*)"));
/// A statement that opens a block (the block of a `class` or `def` is read apart).
static COMPOUND: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(?:if|elif|else|for|while|with|try|except|finally|async|match|case)\b"));
static FROM_HYPOTHESIS: LazyLock<Regex> = LazyLock::new(|| re(r"^from\s+hypothesis\s+import\b"));
static GIVEN_AS: LazyLock<Regex> = LazyLock::new(|| re(r"\bgiven\s+as\s+([A-Za-z_][A-Za-z0-9_]*)"));

/// The offsets of a text's newlines, read once: the line of any offset by binary search,
/// so a file with thousands of properties is not read again for each of them.
pub(crate) struct Lines(Vec<usize>);

impl Lines {
    /// The newlines of `text`.
    pub(crate) fn of(text: &str) -> Lines {
        Lines(
            text.bytes()
                .enumerate()
                .filter_map(|(i, b)| (b == b'\n').then_some(i))
                .collect(),
        )
    }

    /// The 1-based line of `offset` (one past the last line's end for an offset past the
    /// text: the count of newlines before it, plus one).
    pub(crate) fn line(&self, offset: usize) -> u32 {
        let n = self.0.partition_point(|&newline| newline < offset);
        u32::try_from(n + 1).unwrap_or(u32::MAX)
    }
}

/// The brackets `()[]{}` of a code text (comments and strings blanked), read once and counted
/// alike, as a stack: a closing bracket closes the innermost one open, whatever its kind.
struct Brackets {
    /// The offsets of the opening brackets, ascending.
    opens: Vec<usize>,
    /// For each, the offset of the bracket closing it (`None`: never closed).
    closes: Vec<Option<usize>>,
    /// For each, the index of the innermost bracket open where it opens.
    parents: Vec<Option<usize>>,
}

impl Brackets {
    fn of(code: &str) -> Brackets {
        let mut b = Brackets {
            opens: Vec::new(),
            closes: Vec::new(),
            parents: Vec::new(),
        };
        let mut stack: Vec<usize> = Vec::new();
        for (i, byte) in code.bytes().enumerate() {
            match byte {
                b'(' | b'[' | b'{' => {
                    b.parents.push(stack.last().copied());
                    stack.push(b.opens.len());
                    b.opens.push(i);
                    b.closes.push(None);
                }
                b')' | b']' | b'}' => {
                    if let Some(open) = stack.pop() {
                        b.closes[open] = Some(i);
                    }
                }
                _ => {}
            }
        }
        b
    }

    /// The offsets of the brackets enclosing `offset` (opened before it, not closed before
    /// it), outermost first.
    fn enclosing(&self, offset: usize) -> Vec<usize> {
        let mut at = self.opens.partition_point(|&o| o < offset).checked_sub(1);
        // The last bracket opened before `offset`, or the innermost of its enclosing ones
        // still open there.
        while let Some(i) = at {
            if self.closes[i].is_some_and(|close| close < offset) {
                at = self.parents[i];
            } else {
                break;
            }
        }
        let mut chain = Vec::new();
        while let Some(i) = at {
            chain.push(self.opens[i]);
            at = self.parents[i];
        }
        chain.reverse();
        chain
    }

    /// The offset of the bracket closing the one opening at `open` (as [`matching_close`]).
    fn close(&self, code: &str, open: usize) -> Option<usize> {
        match self.opens.binary_search(&open) {
            Ok(i) => self.closes[i],
            Err(_) => matching_close(code, open),
        }
    }
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
///
/// A function counts as a property only where the compiler sees it as a test: in a `proptest!`
/// block, a function of the block itself with a test attribute (`#[test]`, or a path ending in
/// `test` such as `#[tokio::test]`) — without one, `proptest!` makes a plain function that never
/// runs; outside one, a `#[proptest]`-style function or a `#[test]` function that drives proptest.
/// Nothing inside the invocation of another macro counts (`off! { proptest! { … } }` may drop its
/// tokens). Besides each property's span and each block's, the spans include the outer and inner
/// attributes (and the header line) of every item that encloses a property — a `mod`, an `impl`,
/// the file itself — since a `cfg` there compiles the property out as surely as one on the test.
fn rust_properties(text: &str) -> (Vec<PropertyDef>, Vec<Span>) {
    let code = blank_rust_comments_and_strings(text);
    let lines: Vec<&str> = code.split('\n').collect();
    let line_of = Lines::of(&code);
    let brackets = Brackets::of(&code);
    let mut found: Vec<PropertyDef> = Vec::new();
    let mut spans: Vec<Span> = Vec::new();
    // Where each property's `fn` (or block's `proptest!`) keyword is, for the enclosing items.
    let mut anchors: Vec<(usize, String)> = Vec::new();
    // The last line of a function whose name ends at `after`: its body's closing brace.
    let fn_end = |after: usize| -> u32 {
        let body = code[after..].find('(').and_then(|p| {
            let close = brackets.close(&code, after + p)?;
            let open = close + code[close..].find('{')?;
            brackets.close(&code, open)
        });
        line_of.line(body.unwrap_or(code.len()))
    };
    let mut push =
        |name: &str, keyword: usize, offset: usize, end: u32, found: &mut Vec<PropertyDef>| {
            let def = PropertyDef {
                name: name.to_string(),
                line: line_of.line(offset),
            };
            if !found.contains(&def) {
                spans.push(Span {
                    start: attribute_start(&lines, def.line),
                    end,
                    names: vec![def.name.clone()],
                });
                anchors.push((keyword, def.name.clone()));
                found.push(def);
            }
        };
    let mut blocks = Vec::new();
    let mut block_anchors = Vec::new();
    for m in PROPTEST_MACRO.find_iter(&code) {
        let open = m.end() - 1;
        if !compiled_as_test(&code, &brackets.enclosing(m.start())) {
            continue;
        }
        let close = brackets.close(&code, open).unwrap_or(code.len());
        let block = &code[open..close];
        let mut names = Vec::new();
        for c in FN_NAME.captures_iter(block) {
            let (Some(whole), Some(name)) = (c.get(0), c.get(1)) else {
                continue;
            };
            let keyword = open + whole.start();
            // A function of the block itself (not one nested in a body) with a test attribute.
            let of_block = brackets.enclosing(keyword).last() == Some(&open);
            let tested = outer_attributes(&code, keyword)
                .iter()
                .any(|a| TEST_LIKE_ATTR.is_match(a));
            if of_block && tested {
                push(
                    name.as_str(),
                    keyword,
                    open + name.start(),
                    fn_end(open + name.end()),
                    &mut found,
                );
                names.push(name.as_str().to_string());
            }
        }
        let start_line = line_of.line(m.start());
        block_anchors.extend(names.iter().map(|n| (m.start(), n.clone())));
        blocks.push(Span {
            start: attribute_start(&lines, start_line),
            end: line_of.line(close),
            names,
        });
    }
    for m in PROPTEST_ATTR.find_iter(&code) {
        if let Some(c) = FN_NAME.captures(&code[m.end()..])
            && let (Some(whole), Some(name)) = (c.get(0), c.get(1))
            && compiled_as_test(&code, &brackets.enclosing(m.start()))
        {
            let end = fn_end(m.end() + name.end());
            push(
                name.as_str(),
                m.end() + whole.start(),
                m.end() + name.start(),
                end,
                &mut found,
            );
        }
    }
    for m in TEST_ATTR.find_iter(&code) {
        let rest = &code[m.end()..];
        let Some(c) = FN_NAME.captures(rest) else {
            continue;
        };
        let (Some(whole), Some(name)) = (c.get(0), c.get(1)) else {
            continue;
        };
        if !compiled_as_test(&code, &brackets.enclosing(m.start())) {
            continue;
        }
        let after = m.end() + name.end();
        let Some(open_rel) = code[after..].find('{') else {
            continue;
        };
        let open = after + open_rel;
        let close = brackets.close(&code, open).unwrap_or(code.len());
        if USES_PROPTEST.is_match(&code[open..close]) {
            let end = line_of.line(close);
            push(
                name.as_str(),
                m.end() + whole.start(),
                m.end() + name.start(),
                end,
                &mut found,
            );
        }
    }
    found.sort_by_key(|d| d.line);
    spans.extend(blocks);
    anchors.extend(block_anchors);
    spans.extend(enclosing_item_spans(&code, &brackets, &line_of, &anchors));
    (found, spans)
}

/// The offsets of the brackets enclosing `offset`, outermost first, by a scan from the start
/// (what [`Brackets::enclosing`] answers from its table; kept as the tests' reference).
#[cfg(test)]
fn enclosing(code: &str, offset: usize) -> Vec<usize> {
    let mut stack = Vec::new();
    for (i, b) in code.bytes().enumerate().take(offset.min(code.len())) {
        match b {
            b'(' | b'[' | b'{' => stack.push(i),
            b')' | b']' | b'}' => {
                stack.pop();
            }
            _ => {}
        }
    }
    stack
}

/// The name of the macro whose invocation (`name! {`) or definition (`macro_rules! name {`) the
/// bracket at `open` opens, if any.
fn macro_before(code: &str, open: usize) -> Option<&str> {
    let ident_end = |s: &str| -> usize {
        s.len()
            - s.bytes()
                .rev()
                .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
                .count()
    };
    let before = code[..open].trim_end();
    if let Some(bang) = before.strip_suffix('!') {
        let bang = bang.trim_end();
        let name = &bang[ident_end(bang)..];
        return (!name.is_empty()).then_some(name);
    }
    let at = ident_end(before);
    if at == before.len() {
        return None;
    }
    let rest = before[..at].trim_end().strip_suffix('!')?.trim_end();
    rest.ends_with("macro_rules").then_some("macro_rules")
}

/// Whether a test function whose enclosing brackets are `chain` is compiled as a test the
/// harness runs: each brace must be a `proptest!` invocation's or a `mod` item's body. In
/// another macro's invocation it may never be compiled as written; in a function body, a
/// `const` block or an `impl`, a `#[test]` function is no test the harness can name (rustc's
/// `unnameable_test_items`) or no test at all. A `(` or `[` outside a macro invocation holds
/// no items: one enclosing a function is a bracket left open in a file that does not parse
/// (a comment swallowing an attribute's end, say), and says nothing of where the function is.
fn compiled_as_test(code: &str, chain: &[usize]) -> bool {
    chain.iter().all(|&open| match macro_before(code, open) {
        Some(name) => name == "proptest",
        None => code.as_bytes().get(open) != Some(&b'{') || is_mod_body(code, open),
    })
}

/// Whether the `{` at `open` opens a `mod NAME { … }` item's body.
fn is_mod_body(code: &str, open: usize) -> bool {
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let before = code[..open].trim_end();
    let name_len = before.bytes().rev().take_while(|&b| ident(b)).count();
    if name_len == 0 {
        return false;
    }
    let before = before[..before.len() - name_len].trim_end_matches("r#");
    let Some(rest) = before.trim_end().strip_suffix("mod") else {
        return false;
    };
    before.len() > before.trim_end().len() && !rest.bytes().next_back().is_some_and(ident)
}

/// The offset of the bracket opening the one closing at `close`.
fn matching_open(code: &str, close: usize) -> Option<usize> {
    let mut depth = 0usize;
    for i in (0..=close.min(code.len().checked_sub(1)?)).rev() {
        match code.as_bytes()[i] {
            b')' | b']' | b'}' => depth += 1,
            b'(' | b'[' | b'{' => {
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

/// The outer attributes (`#[…]`) directly before the item keyword at `at`, nearest first;
/// qualifiers between them and the keyword (`pub`, `async`, `unsafe`, `const`) are skipped.
fn outer_attributes(code: &str, at: usize) -> Vec<&str> {
    let mut end = at;
    let mut found = Vec::new();
    loop {
        let mut t = code[..end].trim_end();
        for word in ["pub", "async", "unsafe", "const", "extern"] {
            if let Some(rest) = t.strip_suffix(word)
                && !rest.ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
            {
                t = rest.trim_end();
            }
        }
        if !t.ends_with(']') {
            break;
        }
        let Some(open) = matching_open(code, t.len() - 1) else {
            break;
        };
        let Some(hash) = code[..open].trim_end().strip_suffix('#').map(str::len) else {
            break;
        };
        found.push(&code[hash..t.len()]);
        end = hash;
    }
    found
}

/// For each `{` item (a `mod`, an `impl`, a block) enclosing a property, and for the file
/// itself: the lines of its outer attributes, its header and its inner attributes (`#![…]`),
/// with the properties it holds.
fn enclosing_item_spans(
    code: &str,
    brackets: &Brackets,
    line_of: &Lines,
    anchors: &[(usize, String)],
) -> Vec<Span> {
    let mut items: std::collections::BTreeMap<Option<usize>, Vec<String>> =
        std::collections::BTreeMap::new();
    for (at, name) in anchors {
        items.entry(None).or_default().push(name.clone());
        for open in brackets.enclosing(*at) {
            if code.as_bytes().get(open) == Some(&b'{') {
                items.entry(Some(open)).or_default().push(name.clone());
            }
        }
    }
    let bytes = code.as_bytes();
    // Inner attributes right after `from`: the offset after the last one.
    let inner_end = |from: usize| -> usize {
        let mut end = from;
        loop {
            let rest = &code[end..];
            let skip = rest.len() - rest.trim_start().len();
            let at = end + skip;
            if !code[at..].starts_with("#!") {
                return end;
            }
            let Some(open) = code[at + 2..].find('[').map(|p| at + 2 + p) else {
                return end;
            };
            if !code[at + 2..open].trim().is_empty() {
                return end;
            }
            match brackets.close(code, open) {
                Some(close) => end = close + 1,
                None => return end,
            }
        }
    };
    let mut spans = Vec::new();
    for (open, mut names) in items {
        names.sort();
        names.dedup();
        let (start, end) = match open {
            None => (0, inner_end(0)),
            Some(open) => {
                // The item starts after the previous `;`, `{` or `}` outside brackets.
                let mut depth = 0usize;
                let mut start = 0;
                for i in (0..open).rev() {
                    match bytes[i] {
                        b')' | b']' => depth += 1,
                        b'(' | b'[' if depth > 0 => depth -= 1,
                        b'(' | b'[' => {
                            start = i + 1;
                            break;
                        }
                        b';' | b'{' | b'}' if depth == 0 => {
                            start = i + 1;
                            break;
                        }
                        _ => {}
                    }
                }
                let lead = code[start..open].len() - code[start..open].trim_start().len();
                (start + lead, inner_end(open + 1).max(open))
            }
        };
        if open.is_none() && end == 0 {
            continue;
        }
        spans.push(Span {
            start: line_of.line(start),
            end: line_of.line(end.saturating_sub(1).max(start)),
            names,
        });
    }
    spans
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
    lex_python_lines(text).0
}

/// Lexes Python source, and says for each line (split at `\n`) whether a logical line starts
/// there: not inside brackets, a string, or after a backslash continuation.
fn lex_python_lines(text: &str) -> (Lexed, Vec<bool>) {
    let mut lx = Lexer::new(text);
    let mut starts = vec![true];
    let mut depth = 0usize;
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
                let end = python_string(&mut lx, i, f, 0);
                // The lines inside a multi-line string continue the logical line.
                let inside = lx.src[i..end.min(lx.src.len())]
                    .iter()
                    .filter(|b| **b == b'\n')
                    .count();
                starts.extend(std::iter::repeat_n(false, inside));
                i = end;
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                i += 1;
            }
            b')' | b']' | b'}' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            b'\\' if lx.src.get(i + 1) == Some(&b'\n') => {
                starts.push(false);
                i += 2;
            }
            b'\n' => {
                starts.push(depth == 0);
                i += 1;
            }
            _ => i += 1,
        }
    }
    // Brackets left open (not valid source, which Python would not run): line by line.
    if depth > 0 {
        starts = vec![true; starts.len()];
    }
    (lx.finish(), starts)
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

/// The property definitions of a Python text that pytest collects, and the spans of every
/// Hypothesis function.
fn python_properties(text: &str) -> (Vec<PropertyDef>, Vec<Span>) {
    let scan = python_scan(text);
    (scan.collected, scan.spans)
}

/// What [`python_scan`] finds.
struct PythonScan {
    /// The `@given` functions pytest collects: named `test…`, at module level or in classes
    /// pytest collects, and not replaced by a later definition of the same name.
    collected: Vec<PropertyDef>,
    /// Every `@given` function, wherever it is: from its first decorator to the end of its
    /// indented body, without the functions and classes nested in it.
    spans: Vec<Span>,
    /// Collectable `@given` functions replaced by a later definition: the name and the line of
    /// that later definition.
    redefined: Vec<PropertyDef>,
}

/// One logical line: physical lines `first..=last` (0-based).
struct LogicalLine {
    first: usize,
    last: usize,
    indent: usize,
    /// The lines joined by blanks, comments and string contents blanked, leading blanks cut.
    text: String,
}

/// A block open at some indentation: what pytest collects inside it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Block {
    /// A class pytest collects (`Test…`, or a `unittest.TestCase`), inside collected ones.
    TestClass,
    /// Any other block: a function, another class, `if`, `for`, `with`, `try`…
    Other,
}

/// Reads a Python text's logical lines (so a continuation line or a multi-line string never
/// ends a body) with the blocks that hold them, the way pytest collects: a `@given` function
/// counts at module level or in a collected class, and a later `def` or `class` of the same
/// name in the same scope replaces it.
fn python_scan(text: &str) -> PythonScan {
    let (lexed, starts) = lex_python_lines(text);
    let (bare, starts) = if lexed.clean {
        (lexed.bare, starts)
    } else {
        (text.to_string(), vec![true; text.split('\n').count()])
    };
    let physical: Vec<&str> = bare.split('\n').collect();
    let mut logical: Vec<LogicalLine> = Vec::new();
    for (i, line) in physical.iter().enumerate() {
        if starts.get(i).copied().unwrap_or(true) || logical.is_empty() {
            logical.push(LogicalLine {
                first: i,
                last: i,
                indent: line.len() - line.trim_start().len(),
                text: line.trim_start().to_string(),
            });
        } else if let Some(l) = logical.last_mut() {
            l.last = i;
            l.text.push(' ');
            l.text.push_str(line);
        }
    }
    logical.retain(|l| !l.text.trim().is_empty());
    let ends = block_ends(&logical);
    let aliases: Vec<String> = logical
        .iter()
        .filter(|l| FROM_HYPOTHESIS.is_match(&l.text))
        .flat_map(|l| GIVEN_AS.captures_iter(&l.text))
        .filter_map(|c| c.get(1).map(|m| m.as_str().to_string()))
        .collect();
    let is_given = |decorator: &str| {
        GIVEN.is_match(decorator)
            || aliases.iter().any(|a| {
                decorator[1..]
                    .trim_start()
                    .strip_prefix(a.as_str())
                    .is_some_and(|rest| {
                        !rest.starts_with(|c: char| c.is_alphanumeric() || c == '_')
                    })
            })
    };
    let number = |i: usize| u32::try_from(i + 1).unwrap_or(u32::MAX);
    let mut scan = PythonScan {
        collected: Vec::new(),
        spans: Vec::new(),
        redefined: Vec::new(),
    };
    // Definitions by scope (the indentation of the enclosing collected blocks): (name, line,
    // collectable property).
    let mut scopes: BTreeMap<Vec<usize>, Vec<(String, u32, bool)>> = BTreeMap::new();
    let mut stack: Vec<(usize, Block)> = Vec::new();
    let mut given = false;
    let mut decorators: Option<usize> = None;
    for (k, l) in logical.iter().enumerate() {
        while stack.last().is_some_and(|(indent, _)| *indent >= l.indent) {
            stack.pop();
        }
        let collectable = stack.iter().all(|(_, b)| *b == Block::TestClass);
        let scope: Vec<usize> = stack.iter().map(|(indent, _)| *indent).collect();
        if l.text.starts_with('@') {
            given |= is_given(&l.text);
            decorators.get_or_insert(l.first);
            continue;
        }
        if let Some(c) = DEF.captures(&l.text) {
            let name = c.get(1).map_or("", |m| m.as_str()).to_string();
            let end = ends[k];
            let counted = given && collectable && name.starts_with("test");
            if given {
                push_spans(
                    &mut scan.spans,
                    &logical[k + 1..],
                    decorators.unwrap_or(l.first),
                    end,
                    &name,
                    &ends[k + 1..],
                );
            }
            if collectable {
                scopes
                    .entry(scope)
                    .or_default()
                    .push((name, number(l.first), counted));
            }
            stack.push((l.indent, Block::Other));
        } else if let Some(c) = CLASS.captures(&l.text) {
            let name = c.get(1).map_or("", |m| m.as_str()).to_string();
            let test = name.starts_with("Test") || l.text.contains("TestCase");
            if collectable {
                scopes
                    .entry(scope)
                    .or_default()
                    .push((name, number(l.first), false));
            }
            let block = if collectable && test {
                Block::TestClass
            } else {
                Block::Other
            };
            stack.push((l.indent, block));
        } else if COMPOUND.is_match(&l.text) && l.text.trim_end().ends_with(':') {
            stack.push((l.indent, Block::Other));
        }
        given = false;
        decorators = None;
    }
    for defs in scopes.values() {
        // The next definition of the same name, walking backwards.
        let mut next: BTreeMap<&str, u32> = BTreeMap::new();
        let mut later_of = vec![None; defs.len()];
        for (i, (name, line, _)) in defs.iter().enumerate().rev() {
            later_of[i] = next.insert(name.as_str(), *line);
        }
        for ((name, line, counted), later) in defs.iter().zip(later_of) {
            if !counted {
                continue;
            }
            match later {
                Some(later) => scan.redefined.push(PropertyDef {
                    name: name.clone(),
                    line: later,
                }),
                None => scan.collected.push(PropertyDef {
                    name: name.clone(),
                    line: *line,
                }),
            }
        }
    }
    scan.collected.sort_by_key(|d| d.line);
    scan.redefined.sort_by_key(|d| d.line);
    scan
}

/// For each logical line, the last physical line of the block it opens (its own last line
/// when nothing more indented follows): one pass, keeping the lines whose block is open.
fn block_ends(logical: &[LogicalLine]) -> Vec<usize> {
    let mut ends: Vec<usize> = logical.iter().map(|l| l.last).collect();
    let mut open: Vec<usize> = Vec::new();
    for (k, l) in logical.iter().enumerate() {
        while open.last().is_some_and(|&o| logical[o].indent >= l.indent) {
            open.pop();
        }
        for &o in &open {
            ends[o] = l.last;
        }
        open.push(k);
    }
    ends
}

/// The spans of a property from physical line `start` to `end` (0-based, inclusive), without
/// the functions and classes nested in its body (`body`, whose blocks end at `ends`): a
/// `return` in a helper defined inside a property is the helper's.
fn push_spans(
    spans: &mut Vec<Span>,
    body: &[LogicalLine],
    start: usize,
    end: usize,
    name: &str,
    ends: &[usize],
) {
    let number = |i: usize| u32::try_from(i + 1).unwrap_or(u32::MAX);
    let mut from = start;
    let mut skip_to = None;
    for (j, l) in body.iter().enumerate() {
        if l.first > end {
            break;
        }
        if skip_to.is_some_and(|to| l.first <= to) {
            continue;
        }
        if DEF.is_match(&l.text) || CLASS.is_match(&l.text) {
            let nested_end = ends.get(j).copied().unwrap_or(l.last);
            if l.first > from {
                spans.push(Span {
                    start: number(from),
                    end: number(l.first - 1),
                    names: vec![name.to_string()],
                });
            }
            from = nested_end + 1;
            skip_to = Some(nested_end);
        }
    }
    if from <= end {
        spans.push(Span {
            start: number(from),
            end: number(end),
            names: vec![name.to_string()],
        });
    }
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
    fn untested(v in prop::collection::vec(0u8..3, 0..4)) { let _ = '}'; }
    #[tokio::test]
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
macro_rules! off { ($($t:tt)*) => {} }
off! {
    proptest! {
        #[test]
        fn dropped(x in 0u8..3) { prop_assert!(x < 3); }
    }
    #[test]
    fn dropped_too() { proptest::test_runner::TestRunner::default(); }
}
"#;
        // `untested` has no test attribute: `proptest!` makes it a plain function, never run.
        assert_eq!(
            names(FileKind::Rust, text),
            vec![
                ("total_is_sum".into(), 7),
                ("second".into(), 13),
                ("runner_test".into(), 18),
                ("attributed".into(), 22),
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
    fn items_enclosing_a_property_span_their_attributes_and_header() {
        let rust = "#![cfg(unix)]\nuse proptest::prelude::*;\n\n#[cfg(test)]\n#[cfg(miri)]\nmod tests {\n    #![allow(unused)]\n    use super::*;\n    proptest! {\n        #[test]\n        fn a(x in 0u8..3) { prop_assert!(x < 3); }\n    }\n}\nmod plain {\n    fn helper() {}\n}\n";
        let spans = property_spans(FileKind::Rust, rust);
        let names = vec!["a".to_string()];
        for (start, end) in [(1, 1), (4, 7)] {
            assert!(
                spans.contains(&Span {
                    start,
                    end,
                    names: names.clone()
                }),
                "{start}-{end}: {spans:?}"
            );
        }
        // An item that holds no property has no span.
        assert!(spans.iter().all(|s| s.start != 14), "{spans:?}");
    }

    #[test]
    fn only_tests_in_modules_are_properties() {
        let block = |name: &str| {
            format!(
                "proptest! {{\n    #[test]\n    fn {name}(x in 0u8..3) {{ prop_assert!(x < 3); }}\n}}\n"
            )
        };
        let text = format!(
            "use proptest::prelude::*;\n{}\n#[cfg(test)]\npub(crate) mod r#tests {{\n    mod inner {{\n{}    }}\n}}\n\
             fn never_called() {{\n{}}}\n\
             struct S;\nimpl S {{\n{}}}\n\
             const _: () = {{\n{}}};\n\
             mod m {{\n    fn helper() {{\n        #[test]\n        fn nested() {{ proptest::test_runner::TestRunner::default(); }}\n    }}\n}}\n\
             fn outer() {{\n    #[proptest]\n    fn attributed(x: u8) {{}}\n}}\n",
            block("top"),
            block("in_modules"),
            block("in_fn_body"),
            block("in_impl"),
            block("in_const_block"),
        );
        let found: Vec<String> = names(FileKind::Rust, &text)
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(found, ["top", "in_modules"]);
        // A comment swallowing an attribute's `)]` leaves brackets open around the block's
        // functions: they are still where they were.
        let unclosed = block("still_there").replace(
            "proptest! {\n",
            "proptest! {\n    #![proptest_config(ProptestConfig::with_cases(9) // x)]\n",
        );
        let found: Vec<String> = names(FileKind::Rust, &unclosed)
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(found, ["still_there"]);
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

    #[test]
    fn python_lines_end_at_carriage_returns_too() {
        assert_eq!(
            source_text("tests/test_a.py", b"a\r\n# x\rreturn\n"),
            "a\n# x\nreturn\n"
        );
        assert_eq!(source_text("tests/a.rs", b"a\r\n"), "a\r\n");
    }

    #[test]
    fn python_properties_are_those_pytest_collects() {
        let text = "import hypothesis as hp\nfrom hypothesis import given as G\n\n@hp.given(st.text())\ndef test_alias(s):\n    pass\n\nif False:\n    @G(st.text())\n    def test_dead(s):\n        pass\n\nclass Helpers:\n    @G(st.text())\n    def test_hidden(self, s):\n        pass\n\nclass TestTax:\n    @G(st.text())\n    def test_method(self, s):\n        pass\n\n@G(st.text())\ndef helper_prop(s):\n    pass\n\n@G(st.text())\ndef test_twice(s):\n    pass\n\ndef test_twice():\n    pass\n";
        assert_eq!(
            names(FileKind::Python, text),
            vec![("test_alias".into(), 5), ("test_method".into(), 20)]
        );
        assert_eq!(
            redefined_properties(FileKind::Python, text),
            vec![PropertyDef {
                name: "test_twice".into(),
                line: 31
            }]
        );
        assert!(is_pytest_file("tests/test_tax.py") && is_pytest_file("tax_test.py"));
        assert!(!is_pytest_file("tests/tax_checks.py") && !is_pytest_file("tests/test_tax.pyi"));
    }

    #[test]
    fn python_bodies_run_over_continuations_and_leave_nested_helpers_out() {
        let py = "@given(st.integers())\ndef test_a(x):\n    def double(v):\n        return 2 * v\n    if (x > 3\n): return\n    s = '''\ntext\n'''\n    assert x\n";
        assert_eq!(
            property_spans(FileKind::Python, py),
            vec![
                Span {
                    start: 1,
                    end: 2,
                    names: vec!["test_a".into()]
                },
                Span {
                    start: 5,
                    end: 10,
                    names: vec!["test_a".into()]
                }
            ]
        );
        assert_eq!(
            logical_starts(FileKind::Python, py),
            vec![
                true, true, true, true, true, false, true, false, false, true, true
            ]
        );
    }

    proptest! {
        #[test]
        fn python_logical_starts_have_one_entry_per_line(text in "[a-z()\\[\\]{}\"'#\\\\\n ]{0,60}") {
            let starts = logical_starts(FileKind::Python, &text);
            prop_assert_eq!(starts.len(), text.split('\n').count());
            prop_assert!(starts[0]);
        }

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
        fn the_bracket_table_answers_as_a_scan_from_the_start(text in "[a(){}\\[\\]\n]{0,80}") {
            let brackets = Brackets::of(&text);
            let lines = Lines::of(&text);
            for offset in 0..=text.len() + 1 {
                prop_assert_eq!(brackets.enclosing(offset), enclosing(&text, offset), "at {}", offset);
                let newlines = text.as_bytes()[..offset.min(text.len())]
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count();
                prop_assert_eq!(lines.line(offset) as usize, newlines + 1, "at {}", offset);
            }
            for offset in 0..text.len() {
                prop_assert_eq!(
                    brackets.close(&text, offset),
                    matching_close(&text, offset),
                    "at {}",
                    offset
                );
            }
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
