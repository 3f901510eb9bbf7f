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

/// A Hypothesis property pytest no longer collects because a later binding of its name in its
/// scope (the module, or the body of the class holding it) replaces it: pytest collects what a
/// name is bound to once the module has run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shadowed {
    pub name: String,
    /// The 1-based line of the property's `def`.
    pub line: u32,
    /// The 1-based line of the binding that replaces it.
    pub by: u32,
    /// That binding's form, as a report names it: `` `test_x = …` ``, `` `del test_x` ``, …
    pub form: String,
}

/// The Hypothesis properties of a Python text that pytest no longer runs because a later
/// binding of the same name in the same module or class replaces them (see [`Shadowed`]), in
/// the order of their lines.
///
/// A binding is a `def` or `class`; an assignment (plain, annotated, augmented, to a tuple, an
/// assignment expression `:=`); `del`; an `import` or `from … import`; the target of a `for`,
/// `with … as` or `except … as`; a capture of a `case` pattern; a `type` alias — in the same
/// scope, the blocks of `if`, `for`, `try`… in it included, after the `def`; the expressions of
/// decorators, of `def` and `class` headers (default values, annotations, base classes,
/// keywords) and of compound statements' headers (`if`, `while`, `for … in …`, `with`,
/// `match`) are read as statements of the scope around them, and a body on a `def` or `class`
/// line as that function's or class's. A statement that may bind any name of the scope counts
/// as a binding of every name: `from m import *` at module level, and `exec(…)` (or an
/// `eval(…)` whose code may bind: not a literal without `:=`, calls and backslash escapes)
/// whose assignments go to the namespace of a module or class body; and a change of the
/// module's namespace (below) whose names are not spelled: `.update(mapping)` (any argument
/// but keywords and a dict of literal keys), `.clear()`, `.popitem()`, `|=`.
///
/// A module global named explicitly counts too: through the module's namespace
/// (`globals()`, `sys.modules[__name__].__dict__`, `vars(sys.modules[__name__])`, `vars()` and
/// `locals()` at module level) — an item assigned (in any target list) or deleted,
/// `.update(…)`, `.pop(…)`, `.__setitem__(…)`, `.__delitem__(…)`,
/// `operator.setitem(…)`/`delitem(…)` —, through the module (`sys.modules[__name__]`:
/// `setattr`, `delattr`, an attribute assigned or deleted), through a name bound to one of
/// these earlier in the file (`g = globals()`, `import sys as s`, `from sys import modules`;
/// a later rebinding of that name drops it only when it stands directly in the scope's body,
/// else it hides it for the block it stands in), or by a name a function declares `global`.
/// A name is a string literal read as Python reads it (prefixes, triple quotes, escapes,
/// adjacent pieces); one whose value is not read here (an f-string with a field, `\N{…}`)
/// may be any name. Code run by `exec`/`eval` counts when its assignments go to the module's
/// namespace (`exec(…, globals())`, `exec(…, ns, globals())`), or when its globals are the
/// module's while its assignments go elsewhere — in a function or class body with the default
/// namespaces, or with `locals` apart (`exec(…, globals(), ns)`) — and it names, as written in
/// the call, `global`, `globals` or `modules`; `vars()` or `locals()` in a function is a
/// snapshot of its locals, not the module's. A class attribute named through its class (`TestCls.test_x = …`,
/// `setattr(TestCls, …)`, `del TestCls.test_x`) counts too. These count after the `def` at
/// module level, anywhere in a function, since the gate does not follow calls — except the
/// methods of pytest's `monkeypatch` fixture in a function given it, which run in a test,
/// after pytest has collected the module. A property in a class is replaced too when the
/// class's own name is bound again in its scope (`TestCls = None`, a later `class TestCls:`, a
/// statement that may bind any name). An assignment that wraps the property (or its class) in
/// place (`test_x = settings(…)(test_x)`, `test_x = wrap(test_x)`) keeps it: the name still
/// holds a callable that runs it.
pub(crate) fn shadowed_properties(kind: FileKind, text: &str) -> Vec<Shadowed> {
    match kind {
        FileKind::Python => python_scan(text).shadowed,
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
/// strings) and its format spec, if any; returns the offset of its closing `}`.
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
            // Outside brackets a `:` starts the format spec (an assignment expression there
            // needs parentheses): `f"{x:'>10}"`, `f"{x:=^40}"`.
            b':' if nesting == 0 => return python_format_spec(lx, j + 1, depth),
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

/// Lexes the format spec of an f-string replacement field starting at `from`: text (quotes
/// in it are characters, not strings) with replacement fields of its own (`{width}`) until
/// the `}` that closes the field, whose offset it returns.
fn python_format_spec(lx: &mut Lexer<'_>, from: usize, depth: usize) -> usize {
    let mut literal_from = from;
    let mut j = from;
    while let Some(&b) = lx.src.get(j) {
        match b {
            b'{' => {
                lx.literal(literal_from, j);
                if depth >= MAX_FSTRING_DEPTH {
                    lx.clean = false;
                    return lx.src.len();
                }
                j = python_fstring_expression(lx, j + 1, depth + 1) + 1;
                literal_from = j;
            }
            b'}' => {
                lx.literal(literal_from, j);
                return j;
            }
            // A spec never spans lines: the string (or the file) is broken here.
            b'\n' => break,
            _ => j += 1,
        }
    }
    lx.clean = false;
    lx.literal(literal_from, j);
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
    /// pytest collects, and not replaced by a later binding of the same name.
    collected: Vec<PropertyDef>,
    /// Every `@given` function, wherever it is: from its first decorator to the end of its
    /// indented body, without the functions and classes nested in it.
    spans: Vec<Span>,
    /// Collectable `@given` functions replaced by a later binding of their name.
    shadowed: Vec<Shadowed>,
}

/// One logical line: physical lines `first..=last` (0-based).
struct LogicalLine {
    first: usize,
    last: usize,
    indent: usize,
    /// The lines joined by blanks, comments and string contents blanked, leading blanks cut.
    text: String,
    /// The same, with the string contents kept (as long as `text`, offset for offset).
    code: String,
}

/// A block open at some indentation: what pytest collects inside it, and whose names its
/// statements bind.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Block {
    /// A class pytest collects (`Test…`, or a `unittest.TestCase`), inside collected ones.
    TestClass,
    /// Another class: its names are its own, and pytest collects nothing in it.
    Class,
    /// A function: its names are its locals.
    Function,
    /// `if`, `for`, `with`, `try`…: its statements bind the names of the enclosing scope, but a
    /// property in it is not counted (`if False:` hides one).
    Compound,
}

/// An open block: its indentation, its kind, the index of the logical line opening it (which
/// tells two blocks at one indentation apart), its name (a class's or a function's) and
/// whether it lies in a function given pytest's `monkeypatch` fixture (a parameter of that
/// name).
struct Open {
    indent: usize,
    block: Block,
    opener: usize,
    name: String,
    monkeypatch: bool,
}

/// The bindings of one scope, in order of lines: (name, line, form, a collectable property).
type Bindings = Vec<(String, u32, String, bool)>;

/// Every binding by scope and name, in order of lines: (line, form).
type ByName<'a> = BTreeMap<(&'a [usize], &'a str), Vec<(u32, &'a str)>>;

/// Reads a Python text's logical lines (so a continuation line or a multi-line string never
/// ends a body) with the blocks that hold them, the way pytest collects: a `@given` function
/// counts at module level or in a collected class, and a later binding of the same name in the
/// same scope replaces it (see [`shadowed_properties`]).
fn python_scan(text: &str) -> PythonScan {
    let (lexed, starts) = lex_python_lines(text);
    let (bare, code, starts) = if lexed.clean {
        (lexed.bare, lexed.code, starts)
    } else {
        (
            text.to_string(),
            text.to_string(),
            vec![true; text.split('\n').count()],
        )
    };
    let physical: Vec<&str> = bare.split('\n').collect();
    let physical_code: Vec<&str> = code.split('\n').collect();
    let mut logical: Vec<LogicalLine> = Vec::new();
    for (i, line) in physical.iter().enumerate() {
        let code_line = physical_code.get(i).copied().unwrap_or(line);
        let indent = line.len() - line.trim_start().len();
        if starts.get(i).copied().unwrap_or(true) || logical.is_empty() {
            logical.push(LogicalLine {
                first: i,
                last: i,
                indent,
                text: line[indent..].to_string(),
                code: code_line.get(indent..).unwrap_or_default().to_string(),
            });
        } else if let Some(l) = logical.last_mut() {
            l.last = i;
            l.text.push(' ');
            l.text.push_str(line);
            l.code.push(' ');
            l.code.push_str(code_line);
        }
    }
    logical.retain(|l| !l.text.trim().is_empty());
    let logical: Vec<LogicalLine> = logical.into_iter().flat_map(split_body).collect();
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
        shadowed: Vec::new(),
    };
    // Bindings by scope (the openers of the enclosing collected classes; the module is `[]`),
    // in order of lines.
    let mut scopes: BTreeMap<Vec<usize>, Bindings> = BTreeMap::new();
    // Bindings made from inside a function, which may run at any time: (scope, name, line,
    // form).
    let mut anywhere: Vec<(Vec<usize>, String, u32, String)> = Vec::new();
    // The collected classes by their dotted names from the module, with their scopes.
    let mut classes: BTreeMap<Vec<String>, Vec<usize>> = BTreeMap::new();
    // The name and line of each collected class, by opener.
    let mut class_lines: BTreeMap<usize, (String, u32)> = BTreeMap::new();
    // The names each function (by opener) declares `global`.
    let mut globals: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    // Statements that may bind any name of a scope (`from m import *`, `exec(…)`), by scope, in
    // order of lines: (line, form).
    let mut any_in: BTreeMap<Vec<usize>, Vec<(u32, String)>> = BTreeMap::new();
    // The first such statement in a function, by the scope whose names it may bind.
    let mut any_anywhere: BTreeMap<Vec<usize>, (u32, String)> = BTreeMap::new();
    // The names bound to what reaches the module's names (`g = globals()`, `import sys as s`),
    // by name and then by the scope binding them: the opener of the innermost class or
    // function, `usize::MAX` for the module — with the last physical line (0-based) of a
    // block in which a binding that may not run elsewhere hides it (`for g in …:`).
    let mut aliases: BTreeMap<String, BTreeMap<usize, (Reach, Option<usize>)>> = BTreeMap::new();
    let mut stack: Vec<Open> = Vec::new();
    let mut given = false;
    let mut decorators: Option<usize> = None;
    for (k, l) in logical.iter().enumerate() {
        while stack.last().is_some_and(|o| o.indent >= l.indent) {
            stack.pop();
        }
        let collectable = stack.iter().all(|o| o.block == Block::TestClass);
        let scopes_of: Vec<&Open> = stack
            .iter()
            .filter(|o| o.block != Block::Compound)
            .collect();
        // The scope this line binds names in, when it is the module or a collected class.
        let here: Option<Vec<usize>> = scopes_of
            .iter()
            .all(|o| o.block == Block::TestClass)
            .then(|| scopes_of.iter().map(|o| o.opener).collect());
        let function = scopes_of
            .last()
            .filter(|o| o.block == Block::Function)
            .map(|o| o.opener);
        let in_function = scopes_of.iter().any(|o| o.block == Block::Function);
        let owner = scopes_of.last().map_or(usize::MAX, |o| o.opener);
        let inherited = stack.last().is_some_and(|o| o.monkeypatch);
        // The line stands directly in its scope's body, not in the block of an `if`, `for`,
        // `try`…: what it binds is bound once it has run. A compound statement's header (`for
        // g in …:`, `with … as g:`) may bind nothing, and neither may an assignment expression.
        let mut surely = stack.last().is_none_or(|o| o.block != Block::Compound);
        // The last physical line of the innermost compound statement's block holding the line.
        let mut block_end = stack
            .last()
            .filter(|o| o.block == Block::Compound)
            .map_or(l.last, |o| ends[o.opener]);
        let line = number(l.first);
        let alias = |name: &str| {
            let by = aliases.get(name)?;
            let (reach, hidden) = by.get(&owner).or_else(|| by.get(&usize::MAX))?;
            (!hidden.is_some_and(|h| l.first <= h)).then_some(*reach)
        };
        let context = Context {
            alias: &alias,
            module_level: scopes_of.is_empty(),
            in_function,
            in_match: stack.last().is_some_and(|o| {
                o.block == Block::Compound && is_keyword_at(&logical[o.opener].text, 0, "match")
            }),
            monkeypatch: in_function && inherited,
        };
        let decorator = l.text.starts_with('@');
        let mut bindings: Vec<Binding> = Vec::new();
        if decorator {
            given |= is_given(&l.text);
            decorators.get_or_insert(l.first);
            // A decorator is an expression run in the scope around the function or class.
            expression_bindings(&l.text, &l.code, 1..l.text.len(), &context, &mut bindings);
        } else if let Some(c) = DEF.captures(&l.text) {
            let name = c.get(1).map_or("", |m| m.as_str()).to_string();
            let end = ends[k];
            let counted = given && collectable && name.starts_with("test");
            // Default values and annotations run in the scope around the function.
            let head = c.get(0).map_or(0, |m| m.end());
            expression_bindings(
                &l.text,
                &l.code,
                head..l.text.len(),
                &context,
                &mut bindings,
            );
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
            if counted && let Some(scope) = &here {
                scopes.entry(scope.clone()).or_default().push((
                    name.clone(),
                    line,
                    "a later `def`".to_string(),
                    true,
                ));
            } else {
                bindings.push(Binding {
                    form: "a later `def`".to_string(),
                    target: Target::Local(name.clone()),
                });
            }
            stack.push(Open {
                indent: l.indent,
                block: Block::Function,
                opener: k,
                name,
                monkeypatch: inherited || monkeypatch_parameter(&l.text),
            });
        } else if let Some(c) = CLASS.captures(&l.text) {
            let name = c.get(1).map_or("", |m| m.as_str()).to_string();
            let test = name.starts_with("Test") || l.text.contains("TestCase");
            // Base classes and keywords run in the scope around the class.
            let head = c.get(0).map_or(0, |m| m.end());
            expression_bindings(
                &l.text,
                &l.code,
                head..l.text.len(),
                &context,
                &mut bindings,
            );
            bindings.push(Binding {
                form: "a later `class`".to_string(),
                target: Target::Local(name.clone()),
            });
            let block = if collectable && test {
                let mut path: Vec<String> = stack.iter().map(|o| o.name.clone()).collect();
                path.push(name.clone());
                let mut scope: Vec<usize> = stack.iter().map(|o| o.opener).collect();
                scope.push(k);
                classes.insert(path, scope);
                class_lines.insert(k, (name.clone(), line));
                Block::TestClass
            } else {
                Block::Class
            };
            stack.push(Open {
                indent: l.indent,
                block,
                opener: k,
                name,
                monkeypatch: inherited,
            });
        } else {
            bindings = python_bindings(&l.text, &l.code, &context);
            if is_block_header(&l.text) {
                surely = false;
                block_end = ends[k];
            }
            if is_block_header(&l.text) && l.text.trim_end().ends_with(':') {
                stack.push(Open {
                    indent: l.indent,
                    block: Block::Compound,
                    opener: k,
                    name: String::new(),
                    monkeypatch: inherited,
                });
            }
        }
        for b in bindings {
            let (scope, name, form) = match b.target {
                Target::Declared(names) => {
                    if let Some(f) = function {
                        globals.entry(f).or_default().extend(names);
                    }
                    continue;
                }
                Target::Alias(name, reach) => {
                    aliases
                        .entry(name)
                        .or_default()
                        .insert(owner, (reach, None));
                    continue;
                }
                Target::AnyHere | Target::AnyModule | Target::AnyAttr(_) => {
                    let scope = match (&b.target, &here) {
                        (Target::AnyModule, _) => Vec::new(),
                        (Target::AnyAttr(path), _) => match classes.get(path) {
                            Some(scope) => scope.clone(),
                            None => continue,
                        },
                        (_, Some(scope)) if !in_function => scope.clone(),
                        _ => continue,
                    };
                    if in_function {
                        any_anywhere.entry(scope).or_insert((line, b.form));
                    } else {
                        any_in.entry(scope).or_default().push((line, b.form));
                    }
                    continue;
                }
                Target::Local(name) => {
                    // The name holds something else now: from here on if the binding surely ran,
                    // else in the block it stands in (an assignment expression may not run).
                    if b.form != form_of(&Target::Local(name.clone()), WALRUS_FORM)
                        && let Some(by) = aliases.get_mut(&name)
                    {
                        if surely {
                            by.remove(&owner);
                        } else if let Some((_, hidden)) = by.get_mut(&owner) {
                            *hidden = Some(hidden.map_or(block_end, |h| h.max(block_end)));
                        }
                    }
                    let declared = function
                        .and_then(|f| globals.get(&f))
                        .is_some_and(|g| g.contains(&name));
                    if declared {
                        let form = format!("{} after `global {name}` in a function", b.form);
                        anywhere.push((Vec::new(), name, line, form));
                        continue;
                    }
                    match &here {
                        Some(scope) => (scope.clone(), name, b.form),
                        None => continue,
                    }
                }
                Target::Module(name) => (Vec::new(), name, b.form),
                Target::Attr(path, name) => match classes.get(&path) {
                    Some(scope) => (scope.clone(), name, b.form),
                    None => continue,
                },
            };
            if in_function {
                anywhere.push((scope, name, line, form));
            } else {
                scopes
                    .entry(scope)
                    .or_default()
                    .push((name, line, form, false));
            }
        }
        if !decorator {
            given = false;
            decorators = None;
        }
    }
    let mut by_name: ByName<'_> = BTreeMap::new();
    for (scope, bindings) in &scopes {
        for (name, line, form, _) in bindings {
            by_name
                .entry((scope.as_slice(), name.as_str()))
                .or_default()
                .push((*line, form.as_str()));
        }
    }
    let mut first_anywhere: BTreeMap<(&[usize], &str), (u32, &str)> = BTreeMap::new();
    for (scope, name, line, form) in &anywhere {
        first_anywhere
            .entry((scope.as_slice(), name.as_str()))
            .or_insert((*line, form.as_str()));
    }
    // The first binding of `name` in `scope` after `line`, or else one from a function: its
    // line, its form and whether it may bind any name.
    let later = |scope: &[usize], name: &str, line: u32| -> Option<(u32, &str, bool)> {
        let named = by_name
            .get(&(scope, name))
            .and_then(|b| b.get(b.partition_point(|(l, _)| *l <= line)).copied());
        let any = any_in
            .get(scope)
            .and_then(|b| b.get(b.partition_point(|(l, _)| *l <= line)))
            .map(|(l, form)| (*l, form.as_str()));
        match (named, any) {
            (Some(n), Some(a)) if a.0 < n.0 => Some((a.0, a.1, true)),
            (Some(n), _) => Some((n.0, n.1, false)),
            (None, Some(a)) => Some((a.0, a.1, true)),
            (None, None) => first_anywhere
                .get(&(scope, name))
                .map(|(l, form)| (*l, *form, false))
                .or_else(|| {
                    any_anywhere
                        .get(scope)
                        .map(|(l, form)| (*l, form.as_str(), true))
                }),
        }
    };
    for (scope, bindings) in &scopes {
        for (name, line, _, counted) in bindings {
            if !counted {
                continue;
            }
            // One of its classes bound again (the outermost first), or its own name.
            let replaced = (0..scope.len())
                .find_map(|j| {
                    let (class, class_line) = class_lines.get(&scope[j])?;
                    let (by, form, any) = later(&scope[..j], class, *class_line)?;
                    Some((
                        by,
                        if any {
                            format!("{form}, which may bind any name, `{class}` among them")
                        } else {
                            format!("{form}, which replaces its class `{class}`")
                        },
                    ))
                })
                .or_else(|| {
                    later(scope, name, *line).map(|(by, form, any)| {
                        (
                            by,
                            if any {
                                format!("{form}, which may bind any name")
                            } else {
                                form.to_string()
                            },
                        )
                    })
                });
            match replaced {
                Some((by, form)) => scan.shadowed.push(Shadowed {
                    name: name.clone(),
                    line: *line,
                    by,
                    form,
                }),
                None => scan.collected.push(PropertyDef {
                    name: name.clone(),
                    line: *line,
                }),
            }
        }
    }
    scan.collected.sort_by_key(|d| d.line);
    scan.shadowed.sort_by_key(|d| d.line);
    scan
}

/// What a statement binds.
enum Target {
    /// A name of the scope the statement runs in.
    Local(String),
    /// A module global named explicitly: `globals()[…]`, `setattr(sys.modules[__name__], …)`.
    Module(String),
    /// An attribute of a class named by its dotted path: `TestCls.test_x = …`.
    Attr(Vec<String>, String),
    /// The names a `global` statement declares.
    Declared(Vec<String>),
    /// Any name of the module or class body the statement runs in (`from m import *`,
    /// `exec(…)`); nothing in a function.
    AnyHere,
    /// Any module global (`exec(…, globals())`).
    AnyModule,
    /// Any attribute of a class named by its dotted path (`setattr(TestCls, "\N{…}", …)`).
    AnyAttr(Vec<String>),
    /// A name bound to what reaches the module's names (`g = globals()`), besides its
    /// [`Target::Local`] binding.
    Alias(String, Reach),
}

/// What an expression reaches of the module's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reach {
    /// The `sys` module.
    Sys,
    /// `sys.modules`.
    Modules,
    /// The module itself: `sys.modules[__name__]`.
    Module,
    /// Its namespace: `globals()`, `sys.modules[__name__].__dict__`, `vars()` at module level.
    Namespace,
}

/// What reading one logical line needs from where it stands and from the lines before it.
struct Context<'a> {
    /// What a name bound earlier reaches, as seen here (`g` after `g = globals()`).
    alias: &'a dyn Fn(&str) -> Option<Reach>,
    /// No class or function body is open: `vars()` and `locals()` are the module's namespace,
    /// and `from m import *` is allowed.
    module_level: bool,
    /// In a function body: its names are its locals.
    in_function: bool,
    /// Directly in a `match` statement's block: a line starting with `case` is a pattern.
    in_match: bool,
    /// In a function given pytest's `monkeypatch` fixture (a parameter of it, or of a
    /// function around it): `monkeypatch.setattr(…)` there runs in a test, after collection.
    monkeypatch: bool,
}

/// One binding of a statement, with its form as a report names it.
struct Binding {
    target: Target,
    form: String,
}

/// `match` and `case` are keywords only on a line opening a block: `match = 1` is an assignment.
static SOFT_KEYWORD: LazyLock<Regex> = LazyLock::new(|| re(r"^(?:match|case)\b"));
static FOR_TARGET: LazyLock<Regex> = LazyLock::new(|| re(r"^(?:async\s+)?for\b(.*?)\bin\b"));
static WITH: LazyLock<Regex> = LazyLock::new(|| re(r"^(?:async\s+)?with\b"));
static AS: LazyLock<Regex> = LazyLock::new(|| re(r"\bas\b"));
static EXCEPT_AS: LazyLock<Regex> =
    LazyLock::new(|| re(r"^except\b.*\bas\s+([A-Za-z_][A-Za-z0-9_]*)"));
static FROM_IMPORT: LazyLock<Regex> = LazyLock::new(|| re(r"^from\b(.*?)\bimport\b(.*)$"));
static AS_NAME: LazyLock<Regex> = LazyLock::new(|| re(r"\bas\s+([A-Za-z_][A-Za-z0-9_]*)\s*$"));
static TYPE_ALIAS: LazyLock<Regex> =
    LazyLock::new(|| re(r"^type\s+([A-Za-z_][A-Za-z0-9_]*)\s*(?:\[.*\])?\s*="));
/// Statements whose `=` signs (a `lambda`'s defaults) assign nothing.
static NO_ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^(?:return|raise|assert|yield|await|nonlocal|pass|break|continue|lambda)\b")
});
static WALRUS: LazyLock<Regex> = LazyLock::new(|| re(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*:="));
static SETATTR: LazyLock<Regex> = LazyLock::new(|| re(r"\b(setattr|delattr)\s*\("));
/// `operator.setitem(…)`, `dict.__setitem__(…)` and the like: a namespace as first argument.
static SETITEM: LazyLock<Regex> =
    LazyLock::new(|| re(r"\b(setitem|delitem|__setitem__|__delitem__)\s*\("));
static RUN_CODE: LazyLock<Regex> = LazyLock::new(|| re(r"\b(exec|eval)\s*\("));
/// The words by which code run in a function reaches the module's names.
static REACHES_MODULE: LazyLock<Regex> = LazyLock::new(|| re(r"\b(global|globals|modules)\b"));
/// What follows a subscript it assigns to: `=` or an augmented operator, not `==`.
static ASSIGNED: LazyLock<Regex> =
    LazyLock::new(|| re(r"^\s*(?:\*\*|//|>>|<<|[-+*/%&|^@])?=(?:[^=]|$)"));
static KEYWORD_ARGUMENT: LazyLock<Regex> =
    LazyLock::new(|| re(r"^([A-Za-z_][A-Za-z0-9_]*)\s*=(?:[^=]|$)"));

/// Whether a logical line opens a compound statement's block.
fn is_block_header(text: &str) -> bool {
    COMPOUND.is_match(text) && (!SOFT_KEYWORD.is_match(text) || text.trim_end().ends_with(':'))
}

/// The bindings of a logical line that is neither a `def`, a `class` nor a decorator: `bare`
/// with string contents blanked, `code` with them kept (offset for offset).
fn python_bindings(bare: &str, code: &str, context: &Context<'_>) -> Vec<Binding> {
    let mut out = Vec::new();
    let case = context.in_match && is_keyword_at(bare, 0, "case");
    let statements = if case || is_block_header(bare) {
        let colon = header_colon(bare);
        let header = bare.get(..colon.unwrap_or(bare.len())).unwrap_or(bare);
        if case {
            case_captures(header.get(4..).unwrap_or_default(), &mut out);
            walrus(header, &mut out);
        } else {
            header_bindings(header, &mut out);
            expression_bindings(bare, code, 0..header.len(), context, &mut out);
        }
        colon.map_or_else(Vec::new, |c| split_top(bare, c + 1, b';'))
    } else {
        split_top(bare, 0, b';')
    };
    for r in statements {
        if let (Some(b), Some(c)) = (bare.get(r.clone()), code.get(r)) {
            statement_bindings(b, c, context, &mut out);
        }
    }
    out
}

/// The names a `case` pattern (the text after `case`, up to its colon) captures: every name
/// not dotted (`P.a` is a value), not called (`P(…)` names a class), not a keyword of a class
/// pattern (`y=` in `P(y=v)`), not `_`; the guard (`if …` outside brackets) is an expression.
fn case_captures(pattern: &str, out: &mut Vec<Binding>) {
    let mut depth = 0usize;
    let mut end = pattern.len();
    for (i, b) in pattern.bytes().enumerate() {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'i' if depth == 0 && is_keyword_at(pattern, i, "if") => {
                end = i;
                break;
            }
            _ => {}
        }
    }
    let pattern = pattern.get(..end).unwrap_or(pattern);
    let word = |c: char| c.is_alphanumeric() || c == '_';
    // The last character before the current one that is not a blank.
    let mut before: Option<char> = None;
    let mut chars = pattern.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if !word(c) {
            if !c.is_whitespace() {
                before = Some(c);
            }
            continue;
        }
        let mut j = i + c.len_utf8();
        while let Some(&(k, d)) = chars.peek().filter(|(_, d)| word(*d)) {
            j = k + d.len_utf8();
            chars.next();
        }
        let name = pattern.get(i..j).unwrap_or_default();
        let next = pattern
            .get(j..)
            .unwrap_or_default()
            .trim_start()
            .chars()
            .next();
        let captured = is_identifier(name)
            && before != Some('.')
            && !matches!(next, Some('.' | '(' | '=' | '\'' | '"'))
            && !matches!(name, "_" | "None" | "True" | "False" | "as");
        if captured {
            let target = Target::Local(name.to_string());
            out.push(Binding {
                form: form_of(&target, "a capture `{}` of a `case` pattern"),
                target,
            });
        }
        before = Some(c);
    }
}

/// The pieces of `text` from `from` on between the `sep` bytes outside brackets.
fn split_top(text: &str, from: usize, sep: u8) -> Vec<std::ops::Range<usize>> {
    let mut pieces = Vec::new();
    let mut depth = 0usize;
    let mut start = from;
    for (i, b) in text.bytes().enumerate().skip(from) {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ if b == sep && depth == 0 => {
                pieces.push(start..i);
                start = i + 1;
            }
            _ => {}
        }
    }
    pieces.push(start..text.len());
    pieces
}

/// The offset of the colon ending a compound statement's header: the first outside brackets
/// that is not `:=`.
fn header_colon(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    for (i, b) in bytes.iter().enumerate() {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b':' if depth == 0 && bytes.get(i + 1) != Some(&b'=') => return Some(i),
            _ => {}
        }
    }
    None
}

/// Whether `s` is a Python identifier.
fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}

/// The names and class attributes a target list binds (`a, (b, *c)`, `TestCls.test_x`); a
/// subscript or a call binds none.
fn targets(text: &str) -> Vec<Target> {
    let flat: String = text
        .chars()
        .map(|c| if "()[]".contains(c) { ' ' } else { c })
        .collect();
    flat.split(',')
        .filter_map(|t| {
            let parts: Vec<&str> = t.trim().trim_start_matches('*').split('.').collect();
            if !parts.iter().all(|p| is_identifier(p.trim())) {
                return None;
            }
            let mut parts: Vec<String> = parts.iter().map(|p| p.trim().to_string()).collect();
            let name = parts.pop()?;
            Some(if parts.is_empty() {
                Target::Local(name)
            } else {
                Target::Attr(parts, name)
            })
        })
        .collect()
}

/// The form of a binding of `target`: `template` with `{}` standing for the target.
fn form_of(target: &Target, template: &str) -> String {
    let what = match target {
        Target::Local(name) | Target::Module(name) => name.clone(),
        Target::Attr(path, name) => format!("{}.{name}", path.join(".")),
        Target::Declared(names) => names.join(", "),
        Target::AnyHere | Target::AnyModule | Target::AnyAttr(_) => "*".to_string(),
        Target::Alias(name, _) => name.clone(),
    };
    template.replace("{}", &what)
}

/// Pushes a binding of each target of `text`, its form from `template`.
fn bind_targets(text: &str, template: &str, out: &mut Vec<Binding>) {
    for target in targets(text) {
        out.push(Binding {
            form: form_of(&target, template),
            target,
        });
    }
}

/// The bindings of a compound statement's header: a `for` target, `with … as` targets, an
/// `except … as` name.
fn header_bindings(header: &str, out: &mut Vec<Binding>) {
    if let Some(t) = FOR_TARGET.captures(header).and_then(|c| c.get(1)) {
        bind_targets(t.as_str(), "`for {} in …`", out);
    } else if WITH.is_match(header) {
        for m in AS.find_iter(header) {
            let rest = header.get(m.end()..).unwrap_or_default();
            let from = m.end() + (rest.len() - rest.trim_start().len());
            let target = match header.as_bytes().get(from) {
                Some(b'(' | b'[') => matching_close(header, from)
                    .and_then(|close| header.get(from..=close))
                    .unwrap_or_default(),
                _ => {
                    let rest = header.get(from..).unwrap_or_default();
                    let len = rest
                        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
                        .unwrap_or(rest.len());
                    rest.get(..len).unwrap_or_default()
                }
            };
            bind_targets(target, "`with … as {}`", out);
        }
    } else if let Some(name) = EXCEPT_AS.captures(header).and_then(|c| c.get(1)) {
        let target = Target::Local(name.as_str().to_string());
        out.push(Binding {
            form: form_of(&target, "`except … as {}` (deleted when the handler ends)"),
            target,
        });
    }
}

/// The form of an assignment expression's binding.
const WALRUS_FORM: &str = "`({} := …)`";

/// The bindings of the expressions in `bare[range]` up to the colon of a header, when there is
/// one (a decorator, a `def` or `class` header after the name, a compound statement's header):
/// assignment expressions, and the explicit forms of [`explicit_globals`].
fn expression_bindings(
    bare: &str,
    code: &str,
    range: std::ops::Range<usize>,
    context: &Context<'_>,
    out: &mut Vec<Binding>,
) {
    let rest = bare.get(range.clone()).unwrap_or_default();
    let end = range.start + header_colon(rest).unwrap_or(rest.len());
    let (Some(t), Some(c)) = (bare.get(range.start..end), code.get(range.start..end)) else {
        return;
    };
    walrus(t, out);
    explicit_globals(t, c, context, out);
}

/// The names an assignment expression (`(test_x := …)`, `{test_x := None}`) binds. (An
/// f-string's format spec with a `=` fill, `f"{test_x:=^40}"`, is string text, blanked.)
fn walrus(text: &str, out: &mut Vec<Binding>) {
    for c in WALRUS.captures_iter(text) {
        if let Some(name) = c.get(1) {
            let target = Target::Local(name.as_str().to_string());
            out.push(Binding {
                form: form_of(&target, WALRUS_FORM),
                target,
            });
        }
    }
}

/// The bindings of one simple statement: `bare` with string contents blanked, `code` with them
/// kept.
fn statement_bindings(bare: &str, code: &str, context: &Context<'_>, out: &mut Vec<Binding>) {
    let lead = bare.len() - bare.trim_start().len();
    let t = bare.trim();
    let c = code.get(lead..lead + t.len()).unwrap_or(t);
    let after = |keyword: &str| {
        t.strip_prefix(keyword)
            .filter(|rest| !rest.starts_with(|c: char| c.is_alphanumeric() || c == '_'))
    };
    if let Some(rest) = after("del") {
        bind_targets(rest, "`del {}`", out);
    } else if let Some(rest) = after("import") {
        for item in rest.split(',') {
            let (name, template) = match AS_NAME.captures(item).and_then(|c| c.get(1)) {
                Some(alias) => (alias.as_str(), "`import … as {}`"),
                None => (
                    item.split('.').next().unwrap_or_default().trim(),
                    "`import {}`",
                ),
            };
            if is_identifier(name) {
                let target = Target::Local(name.to_string());
                out.push(Binding {
                    form: form_of(&target, template),
                    target,
                });
                // `import sys as s`
                if item.split_whitespace().next() == Some("sys") {
                    out.push(Binding {
                        target: Target::Alias(name.to_string(), Reach::Sys),
                        form: String::new(),
                    });
                }
            }
        }
    } else if let Some(from) = FROM_IMPORT.captures(t) {
        let module: String = from
            .get(1)
            .map_or("", |m| m.as_str())
            .split_whitespace()
            .collect();
        let rest = from.get(2).map_or("", |m| m.as_str());
        if rest.trim() == "*" {
            // Python allows it at module level only.
            if context.module_level {
                out.push(Binding {
                    target: Target::AnyHere,
                    form: format!("`from {module} import *`"),
                });
            }
        }
        let items = rest.replace(['(', ')'], " ");
        for item in items.split(',') {
            let (name, template) = match AS_NAME.captures(item).and_then(|c| c.get(1)) {
                Some(alias) => (alias.as_str(), "`from … import … as {}`"),
                None => (item.trim(), "`from … import {}`"),
            };
            if is_identifier(name) {
                let target = Target::Local(name.to_string());
                out.push(Binding {
                    form: form_of(&target, template),
                    target,
                });
                // `from sys import modules`
                if module == "sys" && item.split_whitespace().next() == Some("modules") {
                    out.push(Binding {
                        target: Target::Alias(name.to_string(), Reach::Modules),
                        form: String::new(),
                    });
                }
            }
        }
    } else if let Some(rest) = after("global") {
        let names = rest
            .split(',')
            .map(str::trim)
            .filter(|n| is_identifier(n))
            .map(str::to_string)
            .collect();
        out.push(Binding {
            target: Target::Declared(names),
            form: String::new(),
        });
    } else if let Some(name) = TYPE_ALIAS.captures(t).and_then(|c| c.get(1)) {
        let target = Target::Local(name.as_str().to_string());
        out.push(Binding {
            form: form_of(&target, "`type {} = …`"),
            target,
        });
    } else if !NO_ASSIGNMENT.is_match(t) {
        assignment(t, context, out);
    }
    walrus(t, out);
    explicit_globals(t, c, context, out);
}

/// The targets of an assignment statement: every target list of `a = b = value`, the target of
/// an annotated (`a: T = value`) or augmented (`a += value`) one; not a name the value wraps in
/// place (`test_x = settings(…)(test_x)`).
fn assignment(t: &str, context: &Context<'_>, out: &mut Vec<Binding>) {
    let bytes = t.as_bytes();
    let mut parts: Vec<std::ops::Range<usize>> = Vec::new();
    let mut from = 0;
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            // The rest is a `lambda`, whose `=` signs are its parameters' defaults
            // (`key = lambda a, test_x=1: a`): the value.
            b'l' if depth == 0 && is_keyword_at(t, i, "lambda") => break,
            b'=' if depth == 0 => {
                if bytes.get(i + 1) == Some(&b'=') {
                    i += 2;
                    continue;
                }
                let prev = i.checked_sub(1).and_then(|p| bytes.get(p)).copied();
                let before = i.checked_sub(2).and_then(|p| bytes.get(p)).copied();
                let operator = match prev {
                    Some(b'<' | b'>') if before == prev => Some(i - 2),
                    Some(b'*' | b'/') if before == prev => Some(i - 2),
                    Some(b'+' | b'-' | b'*' | b'/' | b'%' | b'&' | b'|' | b'^' | b'@') => {
                        Some(i - 1)
                    }
                    Some(b'<' | b'>' | b'!' | b':' | b'=') => {
                        i += 1;
                        continue;
                    }
                    _ => None,
                };
                match operator {
                    Some(start) => {
                        if parts.is_empty() {
                            let op = t.get(start..=i).unwrap_or("=");
                            let template = format!("`{{}} {op} …`");
                            bind_targets(t.get(..start).unwrap_or_default(), &template, out);
                        }
                        return;
                    }
                    None => {
                        parts.push(from..i);
                        from = i + 1;
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    let value = t.get(from..).unwrap_or_default().trim();
    // `g = globals()`: `g` reaches the module's names from here on.
    let reach = reach_whole(t, from..t.len(), context);
    for (j, part) in parts.into_iter().enumerate() {
        let text = t.get(part).unwrap_or_default();
        let (text, template) = match header_colon(text).filter(|_| j == 0) {
            Some(colon) => (text.get(..colon).unwrap_or_default(), "`{}: … = …`"),
            None if text.contains(',') => (text, "`…, {} = …`"),
            None => (text, "`{} = …`"),
        };
        for target in targets(text) {
            if wraps(value, &form_of(&target, "{}")) {
                continue;
            }
            let alias = match (&target, reach) {
                (Target::Local(name), Some(reach)) => Some(Target::Alias(name.clone(), reach)),
                _ => None,
            };
            out.push(Binding {
                form: form_of(&target, template),
                target,
            });
            if let Some(target) = alias {
                out.push(Binding {
                    target,
                    form: String::new(),
                });
            }
        }
    }
}

/// Whether the word `keyword` starts at byte `at` of `text`, not as part of a longer name.
fn is_keyword_at(text: &str, at: usize, keyword: &str) -> bool {
    let word = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_' || !b.is_ascii();
    let bytes = text.as_bytes();
    bytes
        .get(at..)
        .is_some_and(|rest| rest.starts_with(keyword.as_bytes()))
        && !at
            .checked_sub(1)
            .and_then(|p| bytes.get(p))
            .is_some_and(|b| word(b) || *b == b'.')
        && !bytes.get(at + keyword.len()).is_some_and(word)
}

/// Whether `value` is `name` itself or a call whose only argument is `name` or such a call, as
/// when decorators are applied by hand (`settings(…)(test_x)`, `a(b(test_x))`): the name stays
/// bound to a callable that runs the property. One pass over `value` pairs its brackets, then
/// the calls are peeled from the outside in, so deep nesting costs neither time nor stack.
fn wraps(value: &str, name: &str) -> bool {
    let bytes = value.as_bytes();
    // The opening bracket of each closing one.
    let mut opens: Vec<Option<usize>> = vec![None; bytes.len()];
    let mut stack: Vec<usize> = Vec::new();
    for (i, b) in bytes.iter().enumerate() {
        match b {
            b'(' | b'[' | b'{' => stack.push(i),
            b')' | b']' | b'}' => opens[i] = stack.pop(),
            _ => {}
        }
    }
    let (mut lo, mut hi) = (0, bytes.len());
    loop {
        let Some(v) = value.get(lo..hi) else {
            return false;
        };
        let trimmed = v.trim();
        lo += v.len() - v.trim_start().len();
        hi = lo + trimmed.len();
        if trimmed == name {
            return true;
        }
        if !trimmed.ends_with(')') {
            return false;
        }
        let Some(open) = opens.get(hi - 1).copied().flatten().filter(|o| *o >= lo) else {
            return false;
        };
        let callee = value.get(lo..open).unwrap_or_default().trim_end();
        if !callee.ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ')' || c == ']') {
            return false;
        }
        lo = open + 1;
        hi -= 1;
    }
}

/// The string literal starting at or after `from` (blanks skipped) in `bare`, as Python reads
/// it from its source in `code`: its value and the offset after its closing quote. Adjacent
/// literals are one (`"test_" "x"`); a byte string is none. The value is `None` when it cannot
/// be read here — an f-string with a replacement field, a `\N{…}` escape, a template string, a
/// backslash before a line break — and must then count as any name.
pub(crate) fn literal_at(bare: &str, code: &str, from: usize) -> Option<(Option<String>, usize)> {
    let (mut value, mut end) = one_literal(bare, code, from)?;
    while let Some((next, after)) = one_literal(bare, code, end) {
        value = value.zip(next).map(|(a, b)| a + &b);
        end = after;
    }
    Some((value, end))
}

/// One string literal (with its prefix) starting at or after `from`: see [`literal_at`].
fn one_literal(bare: &str, code: &str, from: usize) -> Option<(Option<String>, usize)> {
    let bytes = bare.as_bytes();
    let start = skip_blanks(bare, from);
    let mut q = start;
    while bytes.get(q).is_some_and(u8::is_ascii_alphabetic) && q - start < 3 {
        q += 1;
    }
    let prefix = bare.get(start..q)?.to_ascii_lowercase();
    if !matches!(
        prefix.as_str(),
        "" | "r" | "u" | "b" | "f" | "t" | "br" | "rb" | "fr" | "rf" | "tr" | "rt"
    ) {
        return None;
    }
    let quote = *bytes.get(q)?;
    if quote != b'"' && quote != b'\'' {
        return None;
    }
    let triple = bytes.get(q + 1) == Some(&quote) && bytes.get(q + 2) == Some(&quote);
    let width = if triple { 3 } else { 1 };
    let f = prefix.contains('f');
    // The contents are blank in `bare` but for an f-string's replacement fields, whose nested
    // strings' quotes are skipped by depth; a backslash (in a text that did not lex) escapes.
    let mut depth = 0usize;
    let mut field = false;
    let mut j = q + width;
    let close = loop {
        match *bytes.get(j)? {
            b'\\' => j += 1,
            b'{' if f => {
                depth += 1;
                field = true;
            }
            b'}' if f => depth = depth.saturating_sub(1),
            b if b == quote
                && depth == 0
                && (!triple
                    || (bytes.get(j + 1) == Some(&quote) && bytes.get(j + 2) == Some(&quote))) =>
            {
                break j;
            }
            _ => {}
        }
        j += 1;
    };
    let end = close + width;
    // A byte string names nothing: a namespace's keys and attributes are `str`.
    if prefix.contains('b') {
        return None;
    }
    if field || prefix.contains('t') {
        return Some((None, end));
    }
    let source = code.get(q + width..close)?;
    Some((decode_literal(source, prefix.contains('r'), f), end))
}

/// The value of a string literal's source between its quotes: escapes decoded unless `raw`,
/// `{{` and `}}` halved in an f-string; `None` for what is not read here (`\N{…}`, a
/// backslash before a blank, which may be a line break joined away, a malformed escape).
fn decode_literal(source: &str, raw: bool, f: bool) -> Option<String> {
    let mut out = String::with_capacity(source.len());
    let mut chars = source.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            '{' | '}' if f => {
                // A lone brace opens or closes a field: an f-string read here has none.
                chars.next_if_eq(&ch)?;
                out.push(ch);
            }
            '\\' => {
                let next = chars.next()?;
                if raw {
                    if next.is_whitespace() {
                        return None;
                    }
                    out.push('\\');
                    out.push(next);
                    continue;
                }
                match next {
                    '\\' | '\'' | '"' => out.push(next),
                    'a' => out.push('\u{7}'),
                    'b' => out.push('\u{8}'),
                    'f' => out.push('\u{c}'),
                    'n' => out.push('\n'),
                    'r' => out.push('\r'),
                    't' => out.push('\t'),
                    'v' => out.push('\u{b}'),
                    '0'..='7' => {
                        let mut code = next.to_digit(8)?;
                        for _ in 0..2 {
                            match chars.peek().and_then(|d| d.to_digit(8)) {
                                Some(d) => {
                                    code = code * 8 + d;
                                    chars.next();
                                }
                                None => break,
                            }
                        }
                        out.push(char::from_u32(code)?);
                    }
                    'x' | 'u' | 'U' => {
                        let len = match next {
                            'x' => 2,
                            'u' => 4,
                            _ => 8,
                        };
                        let mut code = 0u32;
                        for _ in 0..len {
                            code = code.checked_mul(16)? + chars.next()?.to_digit(16)?;
                        }
                        out.push(char::from_u32(code)?);
                    }
                    // `\N{name}`, and a backslash before a blank (perhaps a line break the
                    // logical line joined into a blank): not read.
                    _ if next == 'N' || next.is_whitespace() => return None,
                    // An unknown escape keeps its backslash.
                    _ => {
                        out.push('\\');
                        out.push(next);
                    }
                }
            }
            _ => out.push(ch),
        }
    }
    Some(out)
}

/// The arguments of the call whose `(` is at `open`, as ranges: split at its commas, the
/// brackets nested in it jumped over with `brackets` (of `bare`), so that reading every call
/// of a statement costs one pass however deep they nest.
fn arguments(bare: &str, brackets: &Brackets, open: usize) -> Vec<std::ops::Range<usize>> {
    let bytes = bare.as_bytes();
    let close = brackets.close(bare, open).unwrap_or(bare.len());
    let mut pieces = Vec::new();
    let mut start = open + 1;
    let mut i = open + 1;
    while i < close {
        match bytes.get(i) {
            Some(b'(' | b'[' | b'{') => {
                i = brackets.close(bare, i).map_or(close, |c| c + 1);
                continue;
            }
            Some(b',') => {
                pieces.push(start..i);
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    pieces.push(start..close.max(start));
    pieces
}

/// The longest object of a `setattr`/`delattr` read as a class path: a longer one (nested
/// calls, hand-made to be long) is not one, and reading it at every nesting would be
/// quadratic.
const MAX_OBJECT: usize = 256;

/// Bindings that name their scope: a module global through its namespace (`globals()[…]`,
/// `g.update(…)` after `g = globals()`, `operator.setitem(globals(), …)`), through the module
/// itself (`setattr(sys.modules[__name__], …)`, `m.test_x = …`), or by code run in it
/// (`exec(…)`); a class attribute through `setattr`/`delattr`.
fn explicit_globals(t: &str, c: &str, context: &Context<'_>, out: &mut Vec<Binding>) {
    let deleting = is_keyword_at(t, 0, "del");
    let mut brackets: Option<Brackets> = None;
    let regions = target_regions(t);
    for start in expression_starts(t) {
        let Some((reach, end)) = reach_at(t, start, context, false) else {
            continue;
        };
        let spelled = spelled(t, start..end);
        let role = if deleting {
            Role::Deleted
        } else if regions
            .get(regions.partition_point(|r| r.end <= start))
            .is_some_and(|r| r.contains(&start))
        {
            Role::Target
        } else {
            Role::Read
        };
        match reach {
            Reach::Namespace => {
                namespace_use(t, c, end, &spelled, role, &mut brackets, out);
            }
            Reach::Module => module_attribute(t, end, &spelled, role, out),
            Reach::Sys | Reach::Modules => {}
        }
    }
    for m in SETATTR.captures_iter(t) {
        let (Some(whole), Some(function)) = (m.get(0), m.get(1)) else {
            continue;
        };
        if fixture_call(t, whole.start(), context) {
            continue;
        }
        let brackets = brackets.get_or_insert_with(|| Brackets::of(t));
        let args = arguments(t, brackets, whole.end() - 1);
        let (Some(object), Some(attribute)) = (args.first(), args.get(1)) else {
            continue;
        };
        let text = t.get(object.clone()).unwrap_or_default().trim();
        if text.len() > MAX_OBJECT {
            continue;
        }
        let Some((name, _)) = literal_at(t, c, attribute.start) else {
            continue;
        };
        let function = function.as_str();
        // A name not read (`"\N{…}"`) may be any.
        let (target, form) = if reach_whole(t, object.clone(), context) == Some(Reach::Module) {
            match name {
                Some(name) => (Target::Module(name), String::new()),
                None => (Target::AnyModule, format!("`{function}({text}, …)`")),
            }
        } else {
            let path = match targets(text).pop() {
                Some(Target::Local(class)) if !text.contains(',') => vec![class],
                Some(Target::Attr(mut path, last)) if !text.contains(',') => {
                    path.push(last);
                    path
                }
                _ => continue,
            };
            match name {
                Some(name) => (Target::Attr(path, name), String::new()),
                None => (Target::AnyAttr(path), format!("`{function}({text}, …)`")),
            }
        };
        let form = match &target {
            Target::Module(name) | Target::Attr(_, name) => {
                format!("`{function}({text}, \"{name}\", …)`")
            }
            _ => form,
        };
        out.push(Binding { form, target });
    }
    for m in SETITEM.captures_iter(t) {
        let (Some(whole), Some(function)) = (m.get(0), m.get(1)) else {
            continue;
        };
        if fixture_call(t, whole.start(), context) {
            continue;
        }
        let brackets = brackets.get_or_insert_with(|| Brackets::of(t));
        let args = arguments(t, brackets, whole.end() - 1);
        let (Some(object), Some(key)) = (args.first(), args.get(1)) else {
            continue;
        };
        if reach_whole(t, object.clone(), context) != Some(Reach::Namespace) {
            continue;
        }
        let Some((name, _)) = literal_at(t, c, key.start) else {
            continue;
        };
        let callee = match receiver(t, whole.start()) {
            Some(r) if !r.is_empty() => format!("{r}.{}", function.as_str()),
            _ => function.as_str().to_string(),
        };
        let Some(name) = name else {
            out.push(Binding {
                target: Target::AnyModule,
                form: format!("`{callee}({}, …)`", spelled(t, object.clone())),
            });
            continue;
        };
        let target = Target::Module(name);
        let template = format!("`{callee}({}, \"{{}}\", …)`", spelled(t, object.clone()));
        out.push(Binding {
            form: form_of(&target, &template),
            target,
        });
    }
    let mut reaching: Option<Vec<(usize, &str)>> = None;
    for m in RUN_CODE.captures_iter(t) {
        let (Some(whole), Some(function)) = (m.get(0), m.get(1)) else {
            continue;
        };
        if receiver(t, whole.start()).is_some_and(|r| r != "builtins" && r != "__builtins__") {
            continue;
        }
        let function = function.as_str();
        let brackets = brackets.get_or_insert_with(|| Brackets::of(t));
        let args = arguments(t, brackets, whole.end() - 1);
        let Some(code) = args
            .first()
            .filter(|r| !t.get((*r).clone()).unwrap_or_default().trim().is_empty())
        else {
            continue;
        };
        // `eval` binds only by `:=` or through a call: a literal without either binds nothing.
        if function == "eval" && inert_literal(t, c, code.clone()) {
            continue;
        }
        // Code whose `globals` are the module's binds there by the words it spells (`global
        // test_x`, `globals()`, `sys.modules`); with `locals` apart, its assignments go there.
        let mut words = || {
            let reaching = reaching.get_or_insert_with(|| {
                REACHES_MODULE
                    .find_iter(c)
                    .map(|w| (w.start(), w.as_str()))
                    .collect()
            });
            let first = reaching.partition_point(|(at, _)| *at < code.start);
            reaching
                .get(first)
                .filter(|(at, _)| *at < code.end)
                .map(|(_, word)| Binding {
                    target: Target::AnyModule,
                    form: format!("`{function}(…)` whose code names `{word}`"),
                })
        };
        match run_namespace(t, &args, context) {
            RunIn::Module(spelled) => out.push(Binding {
                target: Target::AnyModule,
                form: format!("`{function}(…, {spelled})`"),
            }),
            RunIn::Here { module_globals } if !context.in_function => {
                out.push(Binding {
                    target: Target::AnyHere,
                    form: format!("`{function}(…)`"),
                });
                // In a class body, `global test_x` in the code binds the module's name.
                if module_globals && !context.module_level {
                    out.extend(words());
                }
            }
            RunIn::Here { module_globals } | RunIn::Other { module_globals } => {
                if module_globals {
                    out.extend(words());
                }
            }
        }
    }
}

/// A namespace given to `exec` or `eval` (its `globals` or its `locals`).
enum Given {
    /// Not given, or `None`: the caller's (for `locals`, what `globals` is when that is given).
    Default,
    /// `vars()` or `locals()`: the namespace of the statement (a function's is a snapshot).
    Current,
    /// The module's namespace, as spelled.
    Module(String),
    /// Another mapping (`{}`, a copy): nothing of the module's.
    Other,
}

/// Where the code of an `exec`/`eval` call runs: where its assignments go, and whether its
/// `globals` are the module's (there a `global` statement of the code binds, and `globals()`
/// in it is the module's namespace).
enum RunIn {
    /// Assignments go to the namespace of the statement: the module's at module level, the
    /// class's in a class body, a function's locals in a function.
    Here { module_globals: bool },
    /// Assignments go to the module's namespace, as spelled.
    Module(String),
    /// Assignments go to another mapping.
    Other { module_globals: bool },
}

/// Where the `exec`/`eval` call whose arguments are `args` runs its code, from its `globals`
/// (the second argument, or `globals=`) and `locals` (the third, or `locals=`): assignments go
/// to `locals` when it is given, else to `globals`; with neither, to the caller's namespaces.
fn run_namespace(t: &str, args: &[std::ops::Range<usize>], context: &Context<'_>) -> RunIn {
    let mut given: [Given; 2] = [Given::Default, Given::Default];
    for (k, arg) in args.iter().enumerate().skip(1) {
        let text = t.get(arg.clone()).unwrap_or_default();
        let lead = text.len() - text.trim_start().len();
        let (slot, value) = match KEYWORD_ARGUMENT.captures(text.trim_start()) {
            Some(keyword) => {
                let slot = match keyword.get(1).map(|m| m.as_str()) {
                    Some("globals") => 0,
                    Some("locals") => 1,
                    _ => continue,
                };
                let eq = text.trim_start().find('=').unwrap_or_default();
                (slot, arg.start + lead + eq + 1..arg.end)
            }
            None if k <= 2 => (k - 1, arg.clone()),
            None => continue,
        };
        let start = skip_blanks(t, value.start);
        if start >= value.end {
            continue;
        }
        let whole = |end: Option<usize>| end.is_some_and(|end| skip_blanks(t, end) >= value.end);
        // Read without copying: a namespace argument may hold the rest of a nested line.
        let namespace = match word_at(t, start) {
            Some("None") if whole(expect(t, start, "None")) => Given::Default,
            Some(word @ ("vars" | "locals"))
                if whole(expect(t, start + word.len(), "(").and_then(|q| expect(t, q, ")"))) =>
            {
                Given::Current
            }
            _ if reach_whole(t, value.clone(), context) == Some(Reach::Namespace) => {
                Given::Module(spelled(t, value))
            }
            _ => Given::Other,
        };
        if let Some(slot) = given.get_mut(slot) {
            *slot = namespace;
        }
    }
    let [globals, locals] = given;
    // At module level the statement's namespace is the module's; elsewhere `vars()` is a
    // class's namespace or a snapshot of a function's locals.
    let module_globals = match &globals {
        Given::Default | Given::Module(_) => true,
        Given::Current => context.module_level,
        Given::Other => false,
    };
    match (locals, globals) {
        (Given::Module(s), _) | (Given::Default, Given::Module(s)) => RunIn::Module(s),
        (Given::Current, _) | (Given::Default, Given::Default | Given::Current) => {
            RunIn::Here { module_globals }
        }
        (Given::Other, _) | (Given::Default, Given::Other) => RunIn::Other { module_globals },
    }
}

/// Whether the argument `arg` is one plain string literal whose code has neither `:=` nor a
/// call (a `(` after a name or a closing bracket; `(2)` groups): evaluated, it binds nothing.
fn inert_literal(t: &str, c: &str, arg: std::ops::Range<usize>) -> bool {
    literal_at(t, c, arg.start).is_some_and(|(text, end)| {
        // Escapes may spell anything (`"globals\x28\x29"`): only a literal as written is read.
        let Some(text) = text.filter(|_| !c.get(arg.clone()).unwrap_or_default().contains('\\'))
        else {
            return false;
        };
        let call = text.match_indices('(').any(|(i, _)| {
            text.get(..i)
                .and_then(|before| before.trim_end().chars().next_back())
                .is_some_and(|b| b.is_alphanumeric() || b == '_' || b == ')' || b == ']')
        });
        skip_blanks(t, end) >= arg.end && !text.contains(":=") && !call
    })
}

/// Whether the call whose name starts at `at` is a method of pytest's `monkeypatch` fixture
/// in a function given it: it runs in a test, after pytest has collected the module, and the
/// fixture undoes it when the test ends.
fn fixture_call(t: &str, at: usize, context: &Context<'_>) -> bool {
    context.monkeypatch && receiver(t, at) == Some("monkeypatch")
}

/// The receiver of a call whose name starts at `at`: `Some("monkeypatch")` for
/// `monkeypatch.setattr(`, `Some("")` when it is not a plain name (`f().setattr(`), `None` for
/// a call of a plain name.
fn receiver(t: &str, at: usize) -> Option<&str> {
    let before = t.get(..at)?.trim_end().strip_suffix('.')?.trim_end();
    let head = before.trim_end_matches(|c: char| c.is_alphanumeric() || c == '_');
    before.get(head.len()..)
}

/// Whether a `def` line has a parameter named `monkeypatch`: pytest's fixture.
fn monkeypatch_parameter(def: &str) -> bool {
    let Some(open) = def.find('(').filter(|_| def.contains("monkeypatch")) else {
        return false;
    };
    let brackets = Brackets::of(def);
    arguments(def, &brackets, open).into_iter().any(|p| {
        let parameter = def.get(p).unwrap_or_default().trim_start();
        word_at(parameter.trim_start_matches('*'), 0) == Some("monkeypatch")
    })
}

/// The offsets in `t` where a name starts that is not an attribute (not after a `.`).
fn expression_starts(t: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut before: Option<char> = None;
    let mut in_word = false;
    for (i, c) in t.char_indices() {
        let word = c.is_alphanumeric() || c == '_';
        if word && !in_word && (c.is_alphabetic() || c == '_') && before != Some('.') {
            starts.push(i);
        }
        in_word = word;
        if !c.is_whitespace() {
            before = Some(c);
        }
    }
    starts
}

/// The offset of the first byte at or after `at` that is not a blank.
fn skip_blanks(t: &str, at: usize) -> usize {
    let bytes = t.as_bytes();
    let mut p = at;
    while bytes.get(p).is_some_and(u8::is_ascii_whitespace) {
        p += 1;
    }
    p
}

/// The identifier starting at byte `at` of `t`.
fn word_at(t: &str, at: usize) -> Option<&str> {
    let rest = t.get(at..)?;
    let len = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    rest.get(..len).filter(|w| is_identifier(w))
}

/// After the blanks from `at`, `what` (a whole word when it is one): the offset after it.
fn expect(t: &str, at: usize, what: &str) -> Option<usize> {
    let p = skip_blanks(t, at);
    let found = if is_identifier(what) {
        word_at(t, p) == Some(what)
    } else {
        t.get(p..).is_some_and(|rest| rest.starts_with(what))
    };
    found.then_some(p + what.len())
}

/// `t[range]` without its blanks, as a report names an expression.
fn spelled(t: &str, range: std::ops::Range<usize>) -> String {
    t.get(range)
        .unwrap_or_default()
        .split_whitespace()
        .collect()
}

/// What the expression spelled from byte `at` of `t` reaches, and the offset after its
/// spelling: `sys` or an alias, `globals()`, `vars()` or `locals()` at module level, or
/// `vars(M)` of the module `M`, then as many of `.modules`, `[__name__]` and `.__dict__` as
/// apply. The spelling inside `vars(…)` is read with `inner` set, which allows no other
/// `vars(…)`: the reading never nests deeper than one call.
fn reach_at(t: &str, at: usize, context: &Context<'_>, inner: bool) -> Option<(Reach, usize)> {
    let word = word_at(t, at)?;
    let after = at + word.len();
    let empty_call = |p: usize| expect(t, p, "(").and_then(|q| expect(t, q, ")"));
    let (mut reach, mut p) = match (context.alias)(word) {
        Some(reach) => (reach, after),
        None => match word {
            "sys" => (Reach::Sys, after),
            "globals" => (Reach::Namespace, empty_call(after)?),
            "vars" | "locals" if !inner => match empty_call(after) {
                Some(end) if context.module_level => (Reach::Namespace, end),
                Some(_) => return None,
                None if word == "vars" => {
                    let open = expect(t, after, "(")?;
                    let (module, end) = reach_at(t, skip_blanks(t, open), context, true)?;
                    if module != Reach::Module {
                        return None;
                    }
                    (Reach::Namespace, expect(t, end, ")")?)
                }
                None => return None,
            },
            _ => return None,
        },
    };
    loop {
        let next = match reach {
            Reach::Sys => expect(t, p, ".")
                .and_then(|q| expect(t, q, "modules"))
                .map(|q| (Reach::Modules, q)),
            Reach::Modules => expect(t, p, "[")
                .and_then(|q| expect(t, q, "__name__"))
                .and_then(|q| expect(t, q, "]"))
                .map(|q| (Reach::Module, q)),
            Reach::Module => expect(t, p, ".")
                .and_then(|q| expect(t, q, "__dict__"))
                .map(|q| (Reach::Namespace, q)),
            Reach::Namespace => None,
        };
        match next {
            Some((r, q)) => (reach, p) = (r, q),
            None => return Some((reach, p)),
        }
    }
}

/// What the expression `t[range]` reaches, when its spelling is the whole of it.
fn reach_whole(t: &str, range: std::ops::Range<usize>, context: &Context<'_>) -> Option<Reach> {
    let (reach, end) = reach_at(t, skip_blanks(t, range.start), context, false)?;
    (skip_blanks(t, end) >= range.end).then_some(reach)
}

/// Where an item or attribute stands in its statement.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// In a `del` statement.
    Deleted,
    /// In a target list: of an assignment (`a, g["k"] = …`, `g["k"]: T = …`), of a `for`, or
    /// after a `with`'s `as`.
    Target,
    /// Elsewhere: bound only when `=` or an augmented operator follows.
    Read,
}

impl Role {
    /// Whether the item or attribute followed by `rest` is bound: assigned to (`= …`, `+= …`),
    /// or in a target list and not the object of something further (`g["k"].a`, `g["k"][0]`).
    fn binds(self, rest: &str) -> bool {
        ASSIGNED.is_match(rest)
            || (self == Role::Target && !rest.trim_start().starts_with(['.', '(', '[']))
    }
}

/// The ranges of `t` that are target lists: the targets of an assignment statement (before its
/// last top-level `=`; with an annotation, up to the `=`), a `for` statement's target, and what
/// follows each `as` of a `with` statement up to a top-level `,` or `:`. One pass; the ranges
/// are in order and apart.
fn target_regions(t: &str) -> Vec<std::ops::Range<usize>> {
    if let Some(m) = FOR_TARGET.captures(t).and_then(|c| c.get(1)) {
        return vec![m.range()];
    }
    let bytes = t.as_bytes();
    let mut regions = Vec::new();
    if WITH.is_match(t) {
        let mut after = 0;
        for m in AS.find_iter(t) {
            if m.end() < after {
                continue;
            }
            let mut depth = 0usize;
            let mut end = t.len();
            for (i, b) in bytes.iter().enumerate().skip(m.end()) {
                match b {
                    b'(' | b'[' | b'{' => depth += 1,
                    b')' | b']' | b'}' if depth == 0 => {
                        end = i;
                        break;
                    }
                    b')' | b']' | b'}' => depth -= 1,
                    b',' | b':' if depth == 0 => {
                        end = i;
                        break;
                    }
                    _ => {}
                }
            }
            regions.push(m.end()..end);
            after = end;
        }
        return regions;
    }
    let mut depth = 0usize;
    let mut from = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            // A `lambda`'s `=` signs are its parameters' defaults.
            b'l' if depth == 0 && is_keyword_at(t, i, "lambda") => break,
            b'=' if depth == 0 => {
                if bytes.get(i + 1) == Some(&b'=') {
                    i += 2;
                    continue;
                }
                let prev = i.checked_sub(1).and_then(|p| bytes.get(p)).copied();
                // Not `<=`, `>=`, `!=`, `:=` (an augmented `<<=` is read by its `=` directly).
                if !matches!(prev, Some(b'<' | b'>' | b'!' | b':')) {
                    regions.push(from..i);
                    from = i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    regions
}

/// A binding through the module's namespace spelled `spelled`, which ends at `end`: an item
/// assigned or deleted (`g["test_x"] = …`), or one set or removed by a method
/// (`g.update(test_x=…)`, `.pop`, `.__setitem__`, `.__delitem__`).
fn namespace_use(
    t: &str,
    c: &str,
    end: usize,
    spelled: &str,
    role: Role,
    brackets: &mut Option<Brackets>,
    out: &mut Vec<Binding>,
) {
    let deleting = role == Role::Deleted;
    if let Some(open) = expect(t, end, "[") {
        let Some((name, close)) = literal_at(t, c, open) else {
            return;
        };
        let assigned =
            expect(t, close, "]").is_some_and(|q| role.binds(t.get(q..).unwrap_or_default()));
        if assigned || deleting {
            // A key not read (`"\N{…}"`, `f"{k}"`) may be any name.
            let Some(name) = name else {
                let form = if deleting {
                    format!("`del {spelled}[…]`")
                } else {
                    format!("`{spelled}[…] = …`")
                };
                out.push(Binding {
                    target: Target::AnyModule,
                    form,
                });
                return;
            };
            let target = Target::Module(name);
            let template = if deleting {
                format!("`del {spelled}[\"{{}}\"]`")
            } else {
                format!("`{spelled}[\"{{}}\"] = …`")
            };
            out.push(Binding {
                form: form_of(&target, &template),
                target,
            });
        }
        return;
    }
    // `g |= mapping` merges a mapping whose keys are not read: any global.
    if expect(t, end, "|=").is_some() {
        out.push(Binding {
            target: Target::AnyModule,
            form: format!("`{spelled} |= …`"),
        });
        return;
    }
    let Some(dot) = expect(t, end, ".") else {
        return;
    };
    let at = skip_blanks(t, dot);
    let Some(method) = word_at(t, at).filter(|m| {
        matches!(
            *m,
            "update" | "pop" | "__setitem__" | "__delitem__" | "clear" | "popitem" | "__ior__"
        )
    }) else {
        return;
    };
    let Some(open) = expect(t, at + method.len(), "(") else {
        return;
    };
    let brackets = brackets.get_or_insert_with(|| Brackets::of(t));
    let (names, bulk) = namespace_call(t, c, method, open - 1, brackets);
    if bulk {
        let arguments = if matches!(method, "clear" | "popitem") {
            ""
        } else {
            "…"
        };
        out.push(Binding {
            target: Target::AnyModule,
            form: format!("`{spelled}.{method}({arguments})`"),
        });
    }
    let template = format!("`{spelled}.{method}(…{{}}…)`");
    for name in names {
        let target = Target::Module(name);
        out.push(Binding {
            form: form_of(&target, &template),
            target,
        });
    }
}

/// The names a call of `method` on a namespace, whose `(` is at `open`, sets or removes: the
/// keyword arguments and literal keys of a dict of `update` (or `__ior__`), the first argument
/// of the others; and whether it may set or remove names it does not spell (`bulk`): `clear`,
/// `popitem`, and an `update` given a mapping whose keys are not all literals
/// (`update(mapping)`, `update(**kw)`, `update({k: v for …})`, `update({**d})`).
fn namespace_call(
    t: &str,
    c: &str,
    method: &str,
    open: usize,
    brackets: &Brackets,
) -> (Vec<String>, bool) {
    let mut names = Vec::new();
    let mut bulk = matches!(method, "clear" | "popitem");
    for (k, arg) in arguments(t, brackets, open).into_iter().enumerate() {
        let whole = t.get(arg.clone()).unwrap_or_default();
        let text = whole.trim_start();
        if matches!(method, "update" | "__ior__") {
            if text.trim_end().is_empty() {
                continue;
            }
            if let Some(name) = KEYWORD_ARGUMENT.captures(text).and_then(|c| c.get(1)) {
                names.push(name.as_str().to_string());
            } else if text.starts_with('{') {
                let open = arg.start + (whole.len() - text.len());
                for item in arguments(t, brackets, open) {
                    if t.get(item.clone()).unwrap_or_default().trim().is_empty() {
                        continue;
                    }
                    match literal_at(t, c, skip_blanks(t, item.start)) {
                        Some((Some(name), end)) if expect(t, end, ":").is_some() => {
                            names.push(name);
                        }
                        // `{k: v for …}`, `{name: v}`, `{**d}`: keys not spelled.
                        _ => bulk = true,
                    }
                }
            } else {
                bulk = true;
            }
        } else if k == 0
            && let Some((name, _)) = literal_at(t, c, arg.start)
        {
            match name {
                Some(name) => names.push(name),
                None => bulk = true,
            }
        }
    }
    (names, bulk)
}

/// A binding of an attribute of the module spelled `spelled`, which ends at `end`:
/// `m.test_x = …` or `del m.test_x`.
fn module_attribute(t: &str, end: usize, spelled: &str, role: Role, out: &mut Vec<Binding>) {
    let deleting = role == Role::Deleted;
    let Some(dot) = expect(t, end, ".") else {
        return;
    };
    let at = skip_blanks(t, dot);
    let Some(name) = word_at(t, at) else {
        return;
    };
    let rest = t.get(at + name.len()..).unwrap_or_default();
    let template = if role.binds(rest) {
        format!("`{spelled}.{{}} = …`")
    } else if deleting && matches!(rest.trim_start().chars().next(), None | Some(',')) {
        format!("`del {spelled}.{{}}`")
    } else {
        return;
    };
    let target = Target::Module(name.to_string());
    out.push(Binding {
        form: form_of(&target, &template),
        target,
    });
}

/// A `def` or `class` line with its body on it (`def f(): globals()["test_x"] = None`) as two
/// lines, the body more indented, so that it is read in the scope it runs in; any other line
/// as it is.
fn split_body(l: LogicalLine) -> Vec<LogicalLine> {
    if !(DEF.is_match(&l.text) || CLASS.is_match(&l.text)) {
        return vec![l];
    }
    let Some(colon) = header_colon(&l.text) else {
        return vec![l];
    };
    let rest = l.text.get(colon + 1..).unwrap_or_default();
    let from = colon + 1 + (rest.len() - rest.trim_start().len());
    if rest.trim().is_empty() || l.code.len() != l.text.len() {
        return vec![l];
    }
    let (Some(text), Some(code), Some(head), Some(head_code)) = (
        l.text.get(from..),
        l.code.get(from..),
        l.text.get(..=colon),
        l.code.get(..=colon),
    ) else {
        return vec![l];
    };
    let body = LogicalLine {
        first: l.first,
        last: l.last,
        indent: l.indent + 1,
        text: text.to_string(),
        code: code.to_string(),
    };
    vec![
        LogicalLine {
            first: l.first,
            last: l.last,
            indent: l.indent,
            text: head.to_string(),
            code: head_code.to_string(),
        },
        body,
    ]
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
            shadowed_properties(FileKind::Python, text),
            vec![Shadowed {
                name: "test_twice".into(),
                line: 28,
                by: 31,
                form: "a later `def`".into(),
            }]
        );
        assert!(is_pytest_file("tests/test_tax.py") && is_pytest_file("tax_test.py"));
        assert!(!is_pytest_file("tests/tax_checks.py") && !is_pytest_file("tests/test_tax.pyi"));
    }

    /// The shadowed properties of `text`: (name, property line, binding line, form).
    fn shadows(text: &str) -> Vec<(String, u32, u32, String)> {
        shadowed_properties(FileKind::Python, text)
            .into_iter()
            .map(|s| (s.name, s.line, s.by, s.form))
            .collect()
    }

    #[test]
    fn every_binding_form_after_a_property_shadows_it() {
        let prop = "@given(st.integers())\ndef test_x(x):\n    pass\n";
        for (after, by, form) in [
            ("test_x = None", 4, "`test_x = …`"),
            ("a = test_x = None", 4, "`test_x = …`"),
            ("test_x: object = None", 4, "`test_x: … = …`"),
            ("test_x += 1", 4, "`test_x += …`"),
            ("test_x //= 1", 4, "`test_x //= …`"),
            ("a, (b, *test_x) = 1, (2, 3)", 4, "`…, test_x = …`"),
            ("[test_x] = [1]", 4, "`test_x = …`"),
            ("print((test_x := None))", 4, "`(test_x := …)`"),
            ("{test_x := None}", 4, "`(test_x := …)`"),
            ("if (test_x := 0):\n    pass", 4, "`(test_x := …)`"),
            ("x = 1; del test_x", 4, "`del test_x`"),
            ("del a, test_x", 4, "`del test_x`"),
            ("import os.path as test_x", 4, "`import … as test_x`"),
            ("import test_x", 4, "`import test_x`"),
            ("from m import a, test_x", 4, "`from … import test_x`"),
            (
                "from m import (\n    y as test_x,\n)",
                4,
                "`from … import … as test_x`",
            ),
            ("for i, test_x in []:\n    pass", 4, "`for test_x in …`"),
            ("async for test_x in x:\n    pass", 4, "`for test_x in …`"),
            (
                "with a as b, c as test_x:\n    pass",
                4,
                "`with … as test_x`",
            ),
            (
                "with (a as (b, test_x)):\n    pass",
                4,
                "`with … as test_x`",
            ),
            (
                "try:\n    pass\nexcept* E as test_x:\n    pass",
                6,
                "`except … as test_x` (deleted when the handler ends)",
            ),
            ("if True:\n    if 1: test_x = 2", 5, "`test_x = …`"),
            ("while x:\n    test_x = 2", 5, "`test_x = …`"),
            (
                "else_ = 1\ntry:\n    pass\nfinally:\n    test_x = 1",
                8,
                "`test_x = …`",
            ),
            ("type test_x = int", 4, "`type test_x = …`"),
            ("match = 1\ntest_x = match", 5, "`test_x = …`"),
            (
                "globals()['test_x'] = None",
                4,
                "`globals()[\"test_x\"] = …`",
            ),
            (
                "globals()[\"test_x\"] += 1",
                4,
                "`globals()[\"test_x\"] = …`",
            ),
            ("del globals()['test_x']", 4, "`del globals()[\"test_x\"]`"),
            (
                "globals().update({'test_x': None})",
                4,
                "`globals().update(…test_x…)`",
            ),
            (
                "globals().update(a=1, test_x=None)",
                4,
                "`globals().update(…test_x…)`",
            ),
            ("globals().pop('test_x')", 4, "`globals().pop(…test_x…)`"),
            (
                "globals().__setitem__('test_x', 1)",
                4,
                "`globals().__setitem__(…test_x…)`",
            ),
            (
                "globals().__delitem__(\"test_x\")",
                4,
                "`globals().__delitem__(…test_x…)`",
            ),
            (
                "delattr(sys.modules[__name__], 'test_x')",
                4,
                "`delattr(sys.modules[__name__], \"test_x\", …)`",
            ),
            (
                "def f():\n    global a, test_x\n    test_x = 1",
                6,
                "`test_x = …` after `global test_x` in a function",
            ),
            (
                "def f():\n    if x:\n        globals()['test_x'] = 1",
                6,
                "`globals()[\"test_x\"] = …`",
            ),
        ] {
            let text = format!("{prop}{after}\n");
            assert_eq!(
                shadows(&text),
                vec![("test_x".to_string(), 2, by, form.to_string())],
                "{after}"
            );
            assert_eq!(names(FileKind::Python, &text), vec![], "{after}");
        }
        // A function rebinding a global may run after the property is defined whatever its
        // place in the file.
        let text = format!("def f():\n    global test_x\n    del test_x\n{prop}");
        assert_eq!(
            shadows(&text),
            vec![(
                "test_x".to_string(),
                5,
                3,
                "`del test_x` after `global test_x` in a function".to_string()
            )]
        );
    }

    #[test]
    fn class_attributes_are_bound_in_the_class_body_or_through_the_class() {
        let class = "class TestOuter:\n    class TestInner:\n        @given(st.integers())\n        def test_m(self, x):\n            pass\n";
        for (after, by, form) in [
            ("        test_m = None", 6, "`test_m = …`"),
            (
                "        if True:\n            del test_m",
                7,
                "`del test_m`",
            ),
            (
                "        def test_m(self):\n            pass",
                6,
                "a later `def`",
            ),
            (
                "TestOuter.TestInner.test_m = None",
                6,
                "`TestOuter.TestInner.test_m = …`",
            ),
            (
                "del TestOuter.TestInner.test_m",
                6,
                "`del TestOuter.TestInner.test_m`",
            ),
            (
                "setattr(TestOuter.TestInner, 'test_m', 1)",
                6,
                "`setattr(TestOuter.TestInner, \"test_m\", …)`",
            ),
            (
                "def f():\n    TestOuter.TestInner.test_m = 1",
                7,
                "`TestOuter.TestInner.test_m = …`",
            ),
            // The class itself replaced.
            (
                "TestOuter = None",
                6,
                "`TestOuter = …`, which replaces its class `TestOuter`",
            ),
            (
                "del TestOuter",
                6,
                "`del TestOuter`, which replaces its class `TestOuter`",
            ),
            (
                "class TestOuter:\n    pass",
                6,
                "a later `class`, which replaces its class `TestOuter`",
            ),
            (
                "    TestInner = 1",
                6,
                "`TestInner = …`, which replaces its class `TestInner`",
            ),
            (
                "TestOuter.TestInner = None",
                6,
                "`TestOuter.TestInner = …`, which replaces its class `TestInner`",
            ),
        ] {
            let text = format!("{class}{after}\n");
            assert_eq!(
                shadows(&text),
                vec![("test_m".to_string(), 4, by, form.to_string())],
                "{after}"
            );
        }
        for after in [
            "    test_m = None",
            "TestInner.test_m = None",
            "TestOuter.test_m = None",
            "setattr(TestOuter, 'test_m', 1)",
            "test_m = None",
            "class TestOther:\n    class TestInner:\n        test_m = None",
            "        def helper(self):\n            test_m = 1",
            "        x = [test_m for test_m in ()]",
            "TestOuter = wrap(TestOuter)",
            "TestOuter.TestInner = wrap(TestOuter.TestInner)",
            "TestOuter.TestInner.test_m = settings(max_examples=9)(TestOuter.TestInner.test_m)",
            "TestOuter_ = None",
            "def f():\n    TestOuter = None",
        ] {
            let text = format!("{class}{after}\n");
            assert_eq!(shadows(&text), vec![], "{after}");
            assert_eq!(names(FileKind::Python, &text).len(), 1, "{after}");
        }
    }

    #[test]
    fn bindings_elsewhere_before_or_wrapping_leave_a_property_collected() {
        let prop = "@given(st.integers())\ndef test_x(x):\n    pass\n";
        for after in [
            "def helper():\n    test_x = 1\n    del test_x",
            "def helper():\n    global other\n    test_x = 1",
            "class Helpers:\n    test_x = 1",
            "class TestOther:\n    test_x = 1",
            "test_x = settings(max_examples=5)(test_x)",
            "test_x = example(1)(example(2)(test_x))",
            "test_x = test_x",
            "test_x2 = 1; test_xy += 1; del test_x_",
            "test_x: int",
            "test_x == 1",
            "f(test_x=1)",
            "lambda test_x=1: test_x",
            "return_ = lambda test_x=1: test_x",
            "key = lambda a, test_x=1: a",
            "key: object = lambda a, *, test_x=None: a",
            "key = None if x else lambda a, test_x=1: a",
            "s = 'test_x = 1'",
            "# test_x = 1",
            "t = \"\"\"\ntest_x = 1\n\"\"\"",
            "obj.test_x = 1",
            "d[test_x] = 1",
            "setattr(obj, 'test_x', 1)",
            "globals()['test_x2'] = 1",
            "globals()['test_x']",
            "globals().setdefault('test_x', None)",
            "delta = globals()['test_x']",
            "delattr(globals()['test_x'], 'hypothesis')",
            "print(f\"{test_x:=^40}\")",
            "print(f'{ test_x :=>9}')",
            // A quote as the fill: the file still lexes, so a keyword argument on a line of
            // its own is read as one.
            "print(f\"{x:'>10}\")\nf(\n    test_x=1,\n)",
            "print(f\"{x:{w}.{p}f}\")\nf(\n    test_x=1,\n)",
            "globals().get('test_x')",
            "print(globals()['test_x'] == 1)",
        ] {
            let text = format!("{prop}{after}\n");
            assert_eq!(shadows(&text), vec![], "{after}");
            assert_eq!(
                names(FileKind::Python, &text),
                vec![("test_x".into(), 2)],
                "{after}"
            );
        }
        let text = format!("test_x = 1\nimport os as test_x\nfor test_x in x: pass\n{prop}");
        assert_eq!(shadows(&text), vec![]);
        assert_eq!(names(FileKind::Python, &text), vec![("test_x".into(), 5)]);
    }

    /// Asserts that each `after`, put after the property `test_x` (line 2) of `prop`, replaces
    /// it by its first line after the property's, with `form`; and that each `harmless` one
    /// leaves it collected.
    fn check_rebindings(prop: &str, replacing: &[(&str, &str)], harmless: &[&str]) {
        let at = u32::try_from(prop.lines().count()).unwrap() + 1;
        let name = if prop.contains("def test_m") {
            "test_m"
        } else {
            "test_x"
        };
        let line = u32::try_from(
            prop.lines()
                .position(|l| l.contains(&format!("def {name}")))
                .unwrap(),
        )
        .unwrap()
            + 1;
        for (after, form) in replacing {
            let text = format!("{prop}{after}\n");
            let found = shadows(&text);
            assert_eq!(found.len(), 1, "{after}: {found:?}");
            assert_eq!(
                (found[0].0.as_str(), found[0].1, found[0].3.as_str()),
                (name, line, *form),
                "{after}"
            );
            assert!(found[0].2 >= at, "{after}: {found:?}");
            assert_eq!(names(FileKind::Python, &text), vec![], "{after}");
        }
        for after in harmless {
            let text = format!("{prop}{after}\n");
            assert_eq!(shadows(&text), vec![], "{after}");
            assert_eq!(names(FileKind::Python, &text).len(), 1, "{after}");
        }
    }

    #[test]
    fn a_bulk_change_of_the_module_namespace_may_replace_any_property() {
        let prop = "@given(st.integers())\ndef test_x(x):\n    pass\n";
        let any = |form: &str| format!("{form}, which may bind any name");
        let cases = [
            ("globals().update(overrides)", any("`globals().update(…)`")),
            (
                "globals().update(**overrides)",
                any("`globals().update(…)`"),
            ),
            (
                "globals().update({k: None for k in names})",
                any("`globals().update(…)`"),
            ),
            ("globals().update({**base})", any("`globals().update(…)`")),
            (
                "globals().update({'a': 1, name: None})",
                any("`globals().update(…)`"),
            ),
            ("globals().clear()", any("`globals().clear()`")),
            ("vars().popitem()", any("`vars().popitem()`")),
            ("g = globals()\ng |= overrides", any("`g |= …`")),
            ("g = globals()\ng.__ior__(overrides)", any("`g.__ior__(…)`")),
            (
                "def setup():\n    globals().update(overrides)",
                any("`globals().update(…)`"),
            ),
            (
                "sys.modules[__name__].__dict__.update(overrides)",
                any("`sys.modules[__name__].__dict__.update(…)`"),
            ),
        ];
        let replacing: Vec<(&str, &str)> = cases.iter().map(|(a, f)| (*a, f.as_str())).collect();
        check_rebindings(
            prop,
            &replacing,
            &[
                "globals().update({'other': 1, 'more': 2,})",
                "globals().update(other=1)",
                "globals().update()",
                "d = {}\nd.update(overrides)",
                "globals().copy().update(overrides)",
                "def f():\n    vars().update(overrides)",
                "def f():\n    locals().clear()",
            ],
        );
        // Before the property, the `def` wins.
        let before = format!("globals().update(overrides)\n{prop}");
        assert_eq!(shadows(&before), vec![]);
    }

    #[test]
    fn a_star_import_after_a_property_may_replace_it() {
        let prop = "@given(st.integers())\ndef test_x(x):\n    pass\n";
        check_rebindings(
            prop,
            &[
                (
                    "from helpers import *",
                    "`from helpers import *`, which may bind any name",
                ),
                (
                    "if True:\n    from .shared.cases import  *",
                    "`from .shared.cases import *`, which may bind any name",
                ),
                (
                    "from . import *",
                    "`from . import *`, which may bind any name",
                ),
            ],
            &[
                "from helpers import a, b",
                "from helpers import a as star",
                "def f():\n    from helpers import *",
                "s = 'from m import *'",
            ],
        );
        // Before the `def`, the `def` wins.
        let text = format!("from helpers import *\n{prop}");
        assert_eq!(shadows(&text), vec![]);
        // A method: the import at module level may rebind its class; in the class body
        // Python refuses it (`import *` only at module level), so the file fails to collect.
        let class =
            "class TestA:\n    @given(st.integers())\n    def test_m(self, x):\n        pass\n";
        check_rebindings(
            class,
            &[(
                "from helpers import *",
                "`from helpers import *`, which may bind any name, `TestA` among them",
            )],
            &["    from helpers import *"],
        );
    }

    #[test]
    fn exec_and_eval_bind_in_the_namespaces_they_run_in() {
        let prop = "@given(st.integers())\ndef test_x(x):\n    pass\n";
        check_rebindings(
            prop,
            &[
                (
                    "exec('test_x = None')",
                    "`exec(…)`, which may bind any name",
                ),
                ("exec(SOURCE)", "`exec(…)`, which may bind any name"),
                (
                    "if True:\n    exec(SOURCE, None)",
                    "`exec(…)`, which may bind any name",
                ),
                (
                    "builtins.exec(SOURCE)",
                    "`exec(…)`, which may bind any name",
                ),
                (
                    "exec(SOURCE, {}, vars())",
                    "`exec(…)`, which may bind any name",
                ),
                (
                    "exec(SOURCE, globals())",
                    "`exec(…, globals())`, which may bind any name",
                ),
                (
                    "def f():\n    exec(SOURCE, globals())",
                    "`exec(…, globals())`, which may bind any name",
                ),
                (
                    "def f():\n    exec(SOURCE, globals=globals())",
                    "`exec(…, globals())`, which may bind any name",
                ),
                (
                    "def f():\n    exec(SOURCE, {}, sys.modules[__name__].__dict__)",
                    "`exec(…, sys.modules[__name__].__dict__)`, which may bind any name",
                ),
                (
                    "def f():\n    exec(SOURCE, vars(sys.modules[__name__]))",
                    "`exec(…, vars(sys.modules[__name__]))`, which may bind any name",
                ),
                (
                    "g = globals()\ndef f():\n    exec(SOURCE, g)",
                    "`exec(…, g)`, which may bind any name",
                ),
                (
                    "def f():\n    exec('global test_x; test_x = None')",
                    "`exec(…)` whose code names `global`, which may bind any name",
                ),
                (
                    "def f():\n    eval(\"globals().update(test_x=None)\")",
                    "`eval(…)` whose code names `globals`, which may bind any name",
                ),
                (
                    "eval('(test_x := None)')",
                    "`eval(…)`, which may bind any name",
                ),
                ("eval(SOURCE)", "`eval(…)`, which may bind any name"),
                (
                    "eval('f()', globals())",
                    "`eval(…, globals())`, which may bind any name",
                ),
            ],
            &[
                "def f():\n    exec(SOURCE)",
                "def f():\n    exec(SOURCE, vars())",
                "def f():\n    exec(SOURCE, {})",
                "exec(SOURCE, {})",
                "exec(SOURCE, namespace)",
                "exec(SOURCE, globals().copy())",
                "exec(SOURCE, dict(globals()))",
                "exec(SOURCE, None, {})",
                "cursor.exec(SOURCE)",
                "cursor.execute(SOURCE)",
                "executor(SOURCE)",
                "LIMIT = eval('1 + 2')",
                "CASES = eval(\"[1, 'a', (2)]\")",
                "def f(x):\n    assert eval(repr(x)) == x",
                "s = 'exec(SOURCE)'",
            ],
        );
        // Before the property, only a function's binding counts.
        let text = format!("exec(SOURCE)\neval(SOURCE)\n{prop}");
        assert_eq!(shadows(&text), vec![]);
        let text = format!("def f():\n    exec(SOURCE, globals())\n{prop}");
        assert_eq!(shadows(&text).len(), 1);
        // In a class body: its names.
        let class =
            "class TestA:\n    @given(st.integers())\n    def test_m(self, x):\n        pass\n";
        check_rebindings(
            class,
            &[
                (
                    "    exec('test_m = None')",
                    "`exec(…)`, which may bind any name",
                ),
                (
                    "exec(SOURCE)",
                    "`exec(…)`, which may bind any name, `TestA` among them",
                ),
            ],
            &[
                "    def helper(self):\n        exec(SOURCE)",
                "class TestB:\n    exec(SOURCE)",
            ],
        );
    }

    #[test]
    fn exec_with_locals_apart_binds_in_the_module_only_by_the_words_of_its_code() {
        let prop = "@given(st.integers())\ndef test_x(x):\n    pass\n";
        let words = |function: &str, word: &str| {
            format!("`{function}(…)` whose code names `{word}`, which may bind any name")
        };
        let cases = [
            (
                "def f():\n    ns = {}\n    exec('global test_x; test_x = None', globals(), ns)",
                words("exec", "global"),
            ),
            (
                "exec('global test_x\\ntest_x = None', globals(), {})",
                words("exec", "global"),
            ),
            (
                "exec('global test_x\\ntest_x = None', None, ns)",
                words("exec", "global"),
            ),
            (
                "def f():\n    eval(\"globals().update(test_x=None)\", globals(), locals())",
                words("eval", "globals"),
            ),
            (
                "exec(SOURCE, ns, globals())",
                "`exec(…, globals())`, which may bind any name".to_string(),
            ),
            (
                "exec(SOURCE, locals=globals(), globals=ns)",
                "`exec(…, globals())`, which may bind any name".to_string(),
            ),
            (
                "class Helpers:\n    exec('global test_x\\ntest_x = None')",
                words("exec", "global"),
            ),
            (
                "class Helpers:\n    exec('import sys; sys.modules[__name__].test_x = None')",
                words("exec", "modules"),
            ),
        ];
        let replacing: Vec<(&str, &str)> = cases.iter().map(|(a, f)| (*a, f.as_str())).collect();
        check_rebindings(
            prop,
            &replacing,
            &[
                "def test_generated():\n    ns = {}\n    exec(\"def f(x):\\n    return x + 1\", globals(), ns)",
                "exec(SOURCE, globals(), ns)",
                "exec(SOURCE, globals(), {})",
                "exec(SOURCE, None, ns)",
                "def f():\n    exec(SOURCE, globals(), locals())",
                "def f():\n    eval('cached_total([], bogus=1)', globals(), locals())",
                "def f():\n    exec(SOURCE, vars())",
                "def f():\n    exec('global test_x; test_x = None', vars())",
                "def f():\n    exec('global test_x; test_x = None', {}, ns)",
                "class Helpers:\n    exec('test_x = None')",
                "class Helpers:\n    exec(SOURCE, vars())",
            ],
        );
        // A class pytest collects: its own names, and the module's by the code's words.
        let class =
            "class TestA:\n    @given(st.integers())\n    def test_m(self, x):\n        pass\n";
        check_rebindings(
            class,
            &[(
                "class TestB:\n    exec('global TestA; TestA = None')",
                "`exec(…)` whose code names `global`, which may bind any name, `TestA` among them",
            )],
            &["class TestB:\n    exec('test_m = None')"],
        );
    }

    #[test]
    fn the_module_namespace_reached_through_an_alias_or_another_spelling_binds() {
        let prop = "@given(st.integers())\ndef test_x(x):\n    pass\n";
        check_rebindings(
            prop,
            &[
                ("g = globals()\ng['test_x'] = None", "`g[\"test_x\"] = …`"),
                ("g = globals()\ndel g['test_x']", "`del g[\"test_x\"]`"),
                ("g = vars()\ng.update(test_x=None)", "`g.update(…test_x…)`"),
                ("g = h = globals()\nh.pop('test_x')", "`h.pop(…test_x…)`"),
                (
                    "m = sys.modules[__name__]\nsetattr(m, 'test_x', None)",
                    "`setattr(m, \"test_x\", …)`",
                ),
                (
                    "m = sys.modules[__name__]\nm.test_x = None",
                    "`m.test_x = …`",
                ),
                ("m = sys.modules[__name__]\ndel m.test_x", "`del m.test_x`"),
                (
                    "sys.modules[__name__].test_x = None",
                    "`sys.modules[__name__].test_x = …`",
                ),
                (
                    "d = sys.modules[__name__].__dict__\nd.__delitem__('test_x')",
                    "`d.__delitem__(…test_x…)`",
                ),
                (
                    "import sys as s\ns.modules[__name__].test_x = None",
                    "`s.modules[__name__].test_x = …`",
                ),
                (
                    "import os, sys as s\nsetattr(s.modules[__name__], 'test_x', None)",
                    "`setattr(s.modules[__name__], \"test_x\", …)`",
                ),
                (
                    "from sys import modules\nmodules[__name__].__dict__.pop('test_x')",
                    "`modules[__name__].__dict__.pop(…test_x…)`",
                ),
                (
                    "from sys import modules as mods\ndelattr(mods[__name__], 'test_x')",
                    "`delattr(mods[__name__], \"test_x\", …)`",
                ),
                (
                    "sys.modules[__name__].__dict__['test_x'] = None",
                    "`sys.modules[__name__].__dict__[\"test_x\"] = …`",
                ),
                (
                    "sys . modules [ __name__ ] . __dict__ [ 'test_x' ] = None",
                    "`sys.modules[__name__].__dict__[\"test_x\"] = …`",
                ),
                ("vars()['test_x'] = None", "`vars()[\"test_x\"] = …`"),
                ("locals()['test_x'] = None", "`locals()[\"test_x\"] = …`"),
                (
                    "vars(sys.modules[__name__])['test_x'] = None",
                    "`vars(sys.modules[__name__])[\"test_x\"] = …`",
                ),
                (
                    "operator.setitem(globals(), 'test_x', None)",
                    "`operator.setitem(globals(), \"test_x\", …)`",
                ),
                (
                    "from operator import delitem\ng = globals()\ndelitem(g, 'test_x')",
                    "`delitem(g, \"test_x\", …)`",
                ),
                (
                    "dict.__setitem__(globals(), 'test_x', None)",
                    "`dict.__setitem__(globals(), \"test_x\", …)`",
                ),
                // In a function, wherever it stands.
                (
                    "def f():\n    g = globals()\n    g['test_x'] = None",
                    "`g[\"test_x\"] = …`",
                ),
                (
                    "g = globals()\ndef f():\n    g['test_x'] = None",
                    "`g[\"test_x\"] = …`",
                ),
            ],
            &[
                "g = {}\ng['test_x'] = None",
                "g = globals().copy()\ng['test_x'] = None",
                "g = globals()\ng = {}\ng['test_x'] = None",
                "g = globals()\nfor g in [{}]:\n    g['test_x'] = None",
                "g['test_x'] = None\ng = globals()",
                "def f():\n    g = globals()\ng['test_x'] = None",
                "def f():\n    vars()['test_x'] = None",
                "def f():\n    locals()['test_x'] = None",
                "g = globals()\nprint(g['test_x'])",
                "g = globals()\ng.setdefault('test_x', None)",
                "g = globals()\nsetattr(g, 'test_x', None)",
                "m = sys.modules[__name__]\nm.test_x.hypothesis = None",
                "m = sys.modules[__name__]\nprint(m.test_x == None)",
                "m = sys.modules[__name__]\nm['test_x'] = None",
                "sys.modules[__name__] = None",
                "sys.modules['other'].test_x = None",
                "operator.setitem(cases, 'test_x', None)",
                "operator.setitem(globals(), 'test_y', None)",
            ],
        );
        // Before the property, at module level: the `def` wins.
        let text = format!("g = globals()\ng['test_x'] = None\n{prop}");
        assert_eq!(shadows(&text), vec![]);
    }

    #[test]
    fn an_alias_stays_unless_a_rebinding_of_it_surely_ran() {
        let prop = "@given(st.integers())\ndef test_x(x):\n    pass\n";
        let item = "`g[\"test_x\"] = …`";
        check_rebindings(
            prop,
            &[
                (
                    "g = globals()\nif False:\n    g = {}\ng['test_x'] = None",
                    item,
                ),
                (
                    "g = globals()\nfor g in []:\n    pass\ng['test_x'] = None",
                    item,
                ),
                ("g = globals()\nfor g in []: pass\ng['test_x'] = None", item),
                (
                    "g = globals()\nwith open(p) as g:\n    pass\ng['test_x'] = None",
                    item,
                ),
                (
                    "g = globals()\ntry:\n    import g\nexcept ImportError:\n    pass\ng['test_x'] = None",
                    item,
                ),
                ("g = globals()\nif c: g = {}\ng['test_x'] = None", item),
                (
                    "g = globals()\nif c:\n    g = {}\nelse:\n    g['test_x'] = None",
                    item,
                ),
                ("g = globals()\nc and (g := {})\ng['test_x'] = None", item),
                (
                    "def f():\n    g = globals()\n    while c:\n        g = {}\n    g['test_x'] = None",
                    item,
                ),
            ],
            &[
                "g = globals()\ng = {}\ng['test_x'] = None",
                "g = globals()\nif c:\n    g = {}\n    g['test_x'] = None",
                "g = globals()\nfor g in [{}]:\n    g['test_x'] = None",
                "g = globals()\nwith open(p) as g:\n    g['test_x'] = None",
                "g = globals()\ndel g\ng = {}\ng['test_x'] = None",
                "def f():\n    g = globals()\n    g = {}\n    g['test_x'] = None",
            ],
        );
    }

    #[test]
    fn string_literals_are_read_as_python_reads_them() {
        let prop = "@given(st.integers())\ndef test_x(x):\n    pass\n";
        let item = "`globals()[\"test_x\"] = …`";
        let any = |form: &str| format!("{form}, which may bind any name");
        let cases = [
            ("globals()['''test_x'''] = None", item.to_string()),
            ("globals()[\"\"\"test_x\"\"\"] = None", item.to_string()),
            (
                "setattr(sys.modules[__name__], \"\"\"test_x\"\"\", None)",
                "`setattr(sys.modules[__name__], \"test_x\", …)`".to_string(),
            ),
            ("globals()['test\\x5fx'] = None", item.to_string()),
            ("globals()['test\\u005fx'] = None", item.to_string()),
            ("globals()['test\\U0000005fx'] = None", item.to_string()),
            ("globals()['test\\137x'] = None", item.to_string()),
            ("globals()[f'test_x'] = None", item.to_string()),
            ("globals()[rf'test_x'] = None", item.to_string()),
            ("globals()['test_' \"x\"] = None", item.to_string()),
            (
                "globals().pop('test' '_x')",
                "`globals().pop(…test_x…)`".to_string(),
            ),
            (
                "globals().update({'test\\x5fx': None})",
                "`globals().update(…test_x…)`".to_string(),
            ),
            (
                "globals()['test\\N{LOW LINE}x'] = None",
                any("`globals()[…] = …`"),
            ),
            ("globals()[f'{name}'] = None", any("`globals()[…] = …`")),
            ("del globals()[f'{name}']", any("`del globals()[…]`")),
            ("globals().pop(f'{name}')", any("`globals().pop(…)`")),
            (
                "globals().update({f'{name}': None})",
                any("`globals().update(…)`"),
            ),
            (
                "setattr(sys.modules[__name__], 'test\\N{LOW LINE}x', None)",
                any("`setattr(sys.modules[__name__], …)`"),
            ),
            (
                "operator.setitem(globals(), f'{p}x', None)",
                any("`operator.setitem(globals(), …)`"),
            ),
            (
                "eval(\"globals\\x28\\x29.pop\\x28'test_x'\\x29\")",
                any("`eval(…)`"),
            ),
            ("eval(\"[test_x :\\x3d 0]\")", any("`eval(…)`")),
            ("eval(f\"{e}\")", any("`eval(…)`")),
            ("eval('glob' 'als().pop(1)')", any("`eval(…)`")),
        ];
        let replacing: Vec<(&str, &str)> = cases.iter().map(|(a, f)| (*a, f.as_str())).collect();
        check_rebindings(
            prop,
            &replacing,
            &[
                "globals()['test_y'] = None",
                "globals()[b'test_x'] = None",
                "globals()['test\\\\x5fx'] = None",
                "globals()[r'test\\x5fx'] = None",
                "globals()[f'{{test_x}}'] = None",
                "x = globals()[f'{name}']",
                "eval('[1, 2]')",
                "eval(\"'a' + 'b'\")",
            ],
        );
        // A class attribute whose name is not read: any of the class's.
        let class =
            "class TestA:\n    @given(st.integers())\n    def test_m(self, x):\n        pass\n";
        check_rebindings(
            class,
            &[(
                "setattr(TestA, f'{n}', None)",
                "`setattr(TestA, …)`, which may bind any name",
            )],
            &["setattr(TestA, 'test_n', None)"],
        );
    }

    #[test]
    fn headers_and_decorators_run_their_expressions_in_the_scope_around() {
        let prop = "@given(st.integers())\ndef test_x(x):\n    pass\n";
        let any = |form: &str| format!("{form}, which may bind any name");
        let pop = "`globals().pop(…test_x…)`";
        let setattr = "`setattr(sys.modules[__name__], \"test_x\", …)`";
        let cases = [
            (
                "@(globals().pop('test_x') and (lambda f: f))\ndef helper():\n    pass",
                pop.to_string(),
            ),
            (
                "@(test_x := (lambda f: f))\ndef helper():\n    pass",
                "`(test_x := …)`".to_string(),
            ),
            (
                "@(exec('test_x = None') or (lambda f: f))\nclass Helper:\n    pass",
                any("`exec(…)`"),
            ),
            (
                "def helper(a=exec('test_x = None')):\n    pass",
                any("`exec(…)`"),
            ),
            (
                "def helper(a=setattr(sys.modules[__name__], 'test_x', None)):\n    pass",
                setattr.to_string(),
            ),
            (
                "def helper(a=(test_x := None)) -> None: pass",
                "`(test_x := …)`".to_string(),
            ),
            (
                "class Helper(globals().update(test_x=None) or object):\n    pass",
                "`globals().update(…test_x…)`".to_string(),
            ),
            (
                "class Helper(metaclass=(test_x := type)):\n    pass",
                "`(test_x := …)`".to_string(),
            ),
            (
                "if setattr(sys.modules[__name__], 'test_x', None) is None:\n    pass",
                setattr.to_string(),
            ),
            (
                "for _ in [globals().pop('test_x')]:\n    pass",
                pop.to_string(),
            ),
            (
                "with exec('test_x = None') or nullcontext():\n    pass",
                any("`exec(…)`"),
            ),
            (
                "while globals().update(test_x=None):\n    pass",
                "`globals().update(…test_x…)`".to_string(),
            ),
            (
                "match globals().pop('test_x'):\n    case _:\n        pass",
                pop.to_string(),
            ),
            (
                "def f():\n    if globals().pop('test_x'): pass",
                pop.to_string(),
            ),
        ];
        let replacing: Vec<(&str, &str)> = cases.iter().map(|(a, f)| (*a, f.as_str())).collect();
        check_rebindings(
            prop,
            &replacing,
            &[
                "@pytest.mark.parametrize('test_x', [1])\ndef test_y(test_x):\n    pass",
                "def helper(test_x=None, *, g: dict = {}) -> dict[str, int]:\n    pass",
                "def helper(a=lambda: (yield)): exec('test_x = None')",
                "class Helper(Base, metaclass=Meta):\n    pass",
                "if globals().get('test_x'):\n    pass",
                "for k in globals():\n    pass",
                "def f():\n    with exec('test_x = None', {}):\n        pass",
            ],
        );
        // Before the property, the header's binding runs first.
        let text = format!("def helper(a=exec('test_x = None')):\n    pass\n{prop}");
        assert_eq!(shadows(&text), vec![]);
    }

    #[test]
    fn namespace_items_in_any_target_list_bind() {
        let prop = "@given(st.integers())\ndef test_x(x):\n    pass\n";
        let item = "`globals()[\"test_x\"] = …`";
        let attribute = "`sys.modules[__name__].test_x = …`";
        check_rebindings(
            prop,
            &[
                ("globals()['test_x'], y = None, 1", item),
                ("y, *globals()['test_x'] = 1, None", item),
                ("[globals()['test_x'], y] = None, 1", item),
                ("a = globals()['test_x'] = None", item),
                ("globals()['test_x']: int = None", item),
                ("for globals()['test_x'] in [None]:\n    pass", item),
                ("for y, globals()['test_x'] in [(1, None)]: pass", item),
                ("with open(p) as globals()['test_x']:\n    pass", item),
                (
                    "with (open(p) as y, open(q) as globals()['test_x']):\n    pass",
                    item,
                ),
                ("sys.modules[__name__].test_x, y = None, 1", attribute),
                (
                    "for sys.modules[__name__].test_x in [None]:\n    pass",
                    attribute,
                ),
            ],
            &[
                "globals()['test_x']: int",
                "y = globals()['test_x'], 1",
                "globals()['test_x'].a, y = None, 1",
                "globals()['test_x'][0], y = None, 1",
                "for y in globals()['test_x']:\n    pass",
                "with globals()['test_x'] as y:\n    pass",
                "assert globals()['test_x'] == 1",
                "f = lambda a=globals()['test_x']: a",
                "y = sys.modules[__name__].test_x, 1",
            ],
        );
    }

    #[test]
    fn a_body_on_the_def_or_class_line_is_read_in_its_scope() {
        let prop = "@given(st.integers())\ndef test_x(x):\n    pass\n";
        check_rebindings(
            prop,
            &[
                (
                    "def f(): globals()['test_x'] = None",
                    "`globals()[\"test_x\"] = …`",
                ),
                (
                    "def f(): global test_x; test_x = None",
                    "`test_x = …` after `global test_x` in a function",
                ),
                (
                    "class Helpers: exec('global test_x\\ntest_x = None')",
                    "`exec(…)` whose code names `global`, which may bind any name",
                ),
                (
                    "async def f() -> dict[str, int]: del sys.modules[__name__].test_x",
                    "`del sys.modules[__name__].test_x`",
                ),
            ],
            &[
                "def f(): test_x = None",
                "def f(a={1: 2}): return a",
                "class Helpers: test_x = None",
                "def f(): exec('test_x = None')",
                "def f(a=lambda: 1): pass  # test_x = None",
            ],
        );
        // A one-line property is still a property, and its own body binds nothing outside.
        let one = "@given(st.integers())\ndef test_y(x): test_y = x\n";
        assert_eq!(
            names(FileKind::Python, one),
            vec![("test_y".to_string(), 2)]
        );
        let class = "class TestA:\n    @given(st.integers())\n    def test_m(self, x): pass\n";
        assert_eq!(
            names(FileKind::Python, class),
            vec![("test_m".to_string(), 3)]
        );
    }

    #[test]
    fn match_captures_bind_in_the_scope_of_the_match() {
        let prop = "@given(st.integers())\ndef test_x(x):\n    pass\n";
        let form = "a capture `test_x` of a `case` pattern";
        let replacing: Vec<(String, &str)> = [
            "case test_x:",
            "case [a, test_x]:",
            "case (a, *test_x):",
            "case {\"k\": test_x}:",
            "case {\"k\": 1, **test_x}:",
            "case P(y=test_x):",
            "case P(1, test_x):",
            "case _ as test_x:",
            "case int() | str() as test_x:",
            "case 1 | 2 as test_x if test_x > 1:",
            "case [P.a, {b\"k\": test_x}]:",
        ]
        .iter()
        .map(|case| (format!("match x:\n    {case}\n        pass"), form))
        .collect();
        let replacing: Vec<(&str, &str)> =
            replacing.iter().map(|(a, f)| (a.as_str(), *f)).collect();
        check_rebindings(
            prop,
            &replacing,
            &[
                "match x:\n    case P.test_x:\n        pass",
                "match x:\n    case test_x():\n        pass",
                "match x:\n    case P(test_x=1):\n        pass",
                "match x:\n    case {'test_x': 1}:\n        pass",
                "match x:\n    case 'test_x' | None:\n        pass",
                "match x:\n    case y if test_x:\n        pass",
                "match x:\n    case _:\n        pass",
                "def f(x):\n    match x:\n        case test_x:\n            pass",
                "case = 1\ncase[test_x] = 2",
                "match = x\nmatch [test_x]:\n    case _:\n        pass",
            ],
        );
        // A one-line `case`, and the walrus of a guard.
        check_rebindings(
            prop,
            &[
                ("match x:\n    case test_x: pass", form),
                (
                    "match x:\n    case y if (test_x := y):\n        pass",
                    "`(test_x := …)`",
                ),
            ],
            &[],
        );
        // Before the `def`: nothing.
        let text = format!("match x:\n    case test_x:\n        pass\n{prop}");
        assert_eq!(shadows(&text), vec![]);
        // In a class body: its names.
        let class =
            "class TestA:\n    @given(st.integers())\n    def test_m(self, x):\n        pass\n";
        check_rebindings(
            class,
            &[(
                "    match x:\n        case test_m:\n            pass",
                "a capture `test_m` of a `case` pattern",
            )],
            &["match x:\n    case test_m:\n        pass"],
        );
    }

    #[test]
    fn the_monkeypatch_fixture_runs_after_collection() {
        let prop = "@given(st.integers())\ndef test_x(x):\n    pass\n";
        check_rebindings(
            prop,
            &[
                (
                    "def f():\n    setattr(sys.modules[__name__], 'test_x', None)",
                    "`setattr(sys.modules[__name__], \"test_x\", …)`",
                ),
                (
                    "mp = pytest.MonkeyPatch()\nmp.setattr(sys.modules[__name__], 'test_x', None)",
                    "`setattr(sys.modules[__name__], \"test_x\", …)`",
                ),
                (
                    "def f():\n    monkeypatch = pytest.MonkeyPatch()\n    monkeypatch.setattr(sys.modules[__name__], 'test_x', None)",
                    "`setattr(sys.modules[__name__], \"test_x\", …)`",
                ),
                (
                    "def f(mp):\n    mp.delattr(sys.modules[__name__], 'test_x')",
                    "`delattr(sys.modules[__name__], \"test_x\", …)`",
                ),
            ],
            &[
                "def test_y(monkeypatch):\n    monkeypatch.setattr(sys.modules[__name__], 'test_x', None)",
                "def test_y(self, monkeypatch: pytest.MonkeyPatch):\n    monkeypatch.delattr(sys.modules[__name__], 'test_x')",
                "@pytest.fixture\ndef patched(monkeypatch):\n    def inner():\n        monkeypatch.setitem(globals(), 'test_x', None)\n    inner()",
            ],
        );
        let class =
            "class TestA:\n    @given(st.integers())\n    def test_m(self, x):\n        pass\n";
        check_rebindings(
            class,
            &[(
                "def f():\n    setattr(TestA, 'test_m', None)",
                "`setattr(TestA, \"test_m\", …)`",
            )],
            &[
                "    def test_y(self, monkeypatch):\n        monkeypatch.setattr(TestA, 'test_m', None)",
            ],
        );
    }

    #[test]
    fn deeply_nested_calls_cost_neither_stack_nor_quadratic_time() {
        // A value nested 100 000 calls deep: read recursively it overflows the stack of a
        // test thread, and rescanned at each level it takes minutes.
        let n = 100_000;
        let prop = "@given(st.integers())\ndef test_x(x):\n    pass\n";
        let wrapped = format!("{prop}test_x = {}test_x{}\n", "f(".repeat(n), ")".repeat(n));
        assert_eq!(shadows(&wrapped), vec![]);
        let other = format!("{prop}test_x = {}y{}\n", "f(".repeat(n), ")".repeat(n));
        assert_eq!(shadows(&other).len(), 1);
        let parens = format!("{prop}test_x = {}test_x{}\n", "(".repeat(n), ")".repeat(n));
        assert_eq!(shadows(&parens).len(), 1);
        // Long target lists, adjacent literals and headers: each read in one pass.
        let chain = format!(
            "{prop}{}None\n",
            "g[0] = globals()['test_x'] = ".repeat(n / 10)
        );
        assert_eq!(shadows(&chain).len(), 1);
        let pieces = format!("{prop}globals()[{}'test_x'] = None\n", "'' ".repeat(n));
        assert_eq!(shadows(&pieces).len(), 1);
        let with = format!(
            "{prop}with {}n() as g:\n    pass\n",
            "n() as a, ".repeat(n / 10)
        );
        assert_eq!(shadows(&with), vec![]);
        let decorated = format!(
            "{prop}@{}f{}\ndef g(): pass\n",
            "f(".repeat(n),
            ")".repeat(n)
        );
        assert_eq!(shadows(&decorated), vec![]);
    }

    #[test]
    fn nested_explicit_global_calls_are_read_whole() {
        // Thousands of nested calls on one line (re-reading each call's arguments to its end
        // was quadratic: 20 000 took 20 s in a debug build; speed is the benches' to measure,
        // this holds the answers).
        let n = 3_000;
        let prop = "@given(st.integers())\ndef test_x(x):\n    pass\n";
        // An `update` given anything but keywords and literal keys may bind any name: one
        // finding, whatever the depth.
        for call in ["globals().update(", "g.update("] {
            let text = format!(
                "g = globals()\n{prop}def f(monkeypatch):\n    {}'a'{}\n",
                call.repeat(n),
                ")".repeat(n)
            );
            let found = shadows(&text);
            assert_eq!(found.len(), 1, "{call}");
            assert!(found[0].3.ends_with("which may bind any name"), "{found:?}");
        }
        for call in [
            "globals().pop(",
            "setattr(",
            "delattr(",
            "operator.setitem(",
            "vars(",
            "g.pop(",
            "exec(x, ",
            "eval(x, {}, ",
            "monkeypatch.setattr(",
        ] {
            let text = format!(
                "g = globals()\n{prop}def f(monkeypatch):\n    {}'a'{}\n",
                call.repeat(n),
                ")".repeat(n)
            );
            assert_eq!(shadows(&text), vec![], "{call}");
        }
        let text = format!(
            "{prop}f({}globals().update(test_x=1){})\n",
            "f(".repeat(n),
            ")".repeat(n)
        );
        assert_eq!(shadows(&text).len(), 1);
        // Every level's code reaches out through the innermost one's `global`.
        let text = format!(
            "{prop}def f():\n    {}'global test_x'{}\n",
            "exec(".repeat(n),
            ")".repeat(n)
        );
        assert_eq!(shadows(&text).len(), 1);
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

    /// Python text built from binding fragments, brackets, quotes and a property, in any order.
    fn binding_soup() -> impl Strategy<Value = String> {
        let piece = prop::sample::select(vec![
            "@given(st.integers())\ndef test_x(x):\n    pass\n",
            "class TestA:\n",
            "def f():\n",
            "    ",
            "\n",
            "test_x",
            "TestA.",
            " = ",
            " += ",
            ":=",
            ": int",
            ", ",
            ";",
            "del ",
            "global ",
            "import ",
            "from m import ",
            " as ",
            "for ",
            " in ",
            "with ",
            "except E",
            "if x:",
            "globals()[",
            "globals().update(",
            "setattr(",
            "sys.modules[__name__]",
            "\"test_x\"",
            "'",
            "\"",
            "(",
            ")",
            "[",
            "]",
            "{",
            "}",
            "#",
            "\\",
            "é",
            "wrap(",
            "from m import *",
            "exec(",
            "eval(",
            "None",
            "g = globals()\n",
            "g",
            "vars()",
            "locals()",
            ".__dict__",
            "import sys as s\n",
            "from sys import modules\n",
            "s.modules[__name__]",
            ".test_x",
            "operator.setitem(",
            "monkeypatch.",
            "def t(monkeypatch):\n",
            "match x:\n",
            "case ",
            " if ",
            " | ",
            "_",
            "P(",
            "=",
        ]);
        proptest::collection::vec(piece, 0..40).prop_map(|pieces| pieces.concat())
    }

    /// Text of any Unicode characters (multi-byte ones, `\r`, tabs, lone `\`) mixed with the
    /// words and brackets the Python and Rust scans look for.
    fn unicode_soup() -> impl Strategy<Value = String> {
        let words = prop::sample::select(vec![
            "@given(st.integers())\n",
            "def test_x(x):\n",
            "class TestA:\n",
            "    ",
            "test_x",
            " = ",
            ":=",
            "lambda ",
            "global ",
            "del ",
            "import ",
            "from m import ",
            " as ",
            "for ",
            " in ",
            "with ",
            "except E",
            "if x:",
            "globals()[",
            "globals().update(",
            "setattr(",
            "sys.modules[__name__]",
            "wrap(",
            "f\"{",
            "'''",
            "\"",
            "'",
            "(",
            ")",
            "[",
            "]",
            "{",
            "}",
            "#",
            ",",
            ";",
            "mod props;",
            "#[cfg(test)]",
            "#![cfg(",
            "#[path = \"x.rs\"]",
            "pub(crate) ",
            "proptest! {",
            "#[test]",
            "fn p(x in 0u8..3) {",
            "/*",
            "*/",
            "//",
            "r#\"",
            "\"#",
            "not(",
            "any(",
            "'a'",
            "from m import *",
            "exec(",
            "eval(",
            "vars(",
            "g = globals()\n",
            "sys.modules[__name__].__dict__",
            "operator.setitem(",
            "monkeypatch.setattr(",
            "def t(monkeypatch):\n",
            "match x:\n",
            "case ",
        ])
        .prop_map(str::to_string);
        let piece = prop_oneof!["\\PC{0,3}", "[é😀\u{a0}\u{3000}\t\r\n\\\\ ]{1,3}", words];
        proptest::collection::vec(piece, 0..40).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        /// No text of any characters makes a scan panic.
        #[test]
        fn scans_never_panic_on_unicode_text(text in unicode_soup()) {
            for kind in [FileKind::Python, FileKind::Rust, FileKind::Other] {
                let _ = properties(kind, &text);
                let _ = property_spans(kind, &text);
                let _ = shadowed_properties(kind, &text);
                let _ = logical_starts(kind, &text);
                let _ = views(kind, &text);
            }
            let _ = source_text("tests/test_a.py", text.as_bytes());
            let _ = crate::patch::reach::declared_modules(&text);
        }

        /// Whatever the bindings, the scan answers without a panic, and a property it reports
        /// replaced is one it does not count, replaced at a line of the text.
        #[test]
        fn shadowed_properties_are_never_also_collected(text in binding_soup()) {
            let lines = u32::try_from(text.split('\n').count()).unwrap();
            let collected = properties(FileKind::Python, &text);
            for s in shadowed_properties(FileKind::Python, &text) {
                prop_assert!(s.line <= lines && s.by <= lines, "{:?}", s);
                prop_assert!(!s.form.is_empty(), "{:?}", s);
                prop_assert!(
                    !collected.iter().any(|d| d.line == s.line),
                    "{:?} in {:?}",
                    s,
                    collected
                );
            }
        }

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
