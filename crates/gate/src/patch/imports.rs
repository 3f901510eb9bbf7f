//! The modules a Python file imports, read statically ([`imports`]), and the files of a tree
//! each import may load ([`Import::candidates`]): what a protected oracle or generator script
//! runs in turn ([`super::scripts`]).
//!
//! The file is lexed as the gaming rules lex it ([`super::props::views`]: comments cut, string
//! contents blanked, a text that does not lex read raw, so a lexer mistake can only find more
//! imports), then every `import` keyword is read wherever it stands — at any indentation, in a
//! function, a `try:` block or after `if x:` on the same line — as Python's grammar has it:
//! `import a.b as c, d`, and `from .m import (x as y, z)` with the names parenthesised or the
//! statement continued by backslashes; `import` is a keyword, so it is never a name. A call of
//! `importlib.import_module` or `__import__` whose first argument is a string literal counts
//! as `import` of that module.
//!
//! Python's rules as read here, for a module found in the folder `root` (the `sys.path[0]` of
//! the script that runs, the folder of the script or the folder `python -m` runs in):
//! `import a.b.c` loads `a`, `a.b` and `a.b.c`, each a module file `X.py` or a package
//! `X/__init__.py` (a folder without one is a namespace package and still leads on); `from a
//! import x` loads `a`, and `a.x` when `x` is a submodule; a relative import with `L` dots
//! starts from the folder of the importing file, `L - 1` folders up, never above `root`.

use super::props;
use super::rules::FileKind;

/// One import statement's module, or a `from` statement's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Import {
    /// How many leading dots (`0` for an absolute import).
    pub level: usize,
    /// The dotted module name, by part (empty for `from . import x`).
    pub module: Vec<String>,
    /// The names a `from` statement imports, which may be submodules (never `*`).
    pub names: Vec<String>,
}

/// A token of a lexed Python text, as the import reader sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token<'a> {
    /// A name (or a number: the reader checks what it needs), with the byte offset after it.
    Name(&'a str, usize),
    Dot,
    Comma,
    Open,
    Close,
    Star,
    /// The end of a statement: a `;`, or a line end outside brackets and not escaped.
    End,
    /// Anything else (an operator, a quote).
    Other,
}

/// The tokens of `bare` (a text with comments and string contents blanked).
fn tokens(bare: &str) -> Vec<Token<'_>> {
    let bytes = bare.as_bytes();
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\\' if bytes.get(i + 1) == Some(&b'\n') => i += 2,
            b'\n' => {
                if depth == 0 {
                    out.push(Token::End);
                }
                i += 1;
            }
            b';' => {
                out.push(Token::End);
                i += 1;
            }
            b' ' | b'\t' | b'\x0c' | b'\r' => i += 1,
            b'.' => {
                out.push(Token::Dot);
                i += 1;
            }
            b',' => {
                out.push(Token::Comma);
                i += 1;
            }
            b'*' => {
                out.push(Token::Star);
                i += 1;
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                out.push(if b == b'(' { Token::Open } else { Token::Other });
                i += 1;
            }
            b')' | b']' | b'}' => {
                depth = depth.saturating_sub(1);
                out.push(if b == b')' {
                    Token::Close
                } else {
                    Token::Other
                });
                i += 1;
            }
            _ => {
                let rest = bare.get(i..).unwrap_or_default();
                let len: usize = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .map(char::len_utf8)
                    .sum();
                if len == 0 {
                    // One character that is neither a name nor punctuation read here.
                    let width = rest.chars().next().map_or(1, char::len_utf8);
                    out.push(Token::Other);
                    i += width;
                } else {
                    out.push(Token::Name(&rest[..len], i + len));
                    i += len;
                }
            }
        }
    }
    out
}

/// Whether `name` is a Python identifier (approximately: letters, digits and `_`, not
/// starting with a digit).
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c == '_' || c.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
}

/// A dotted name written as text (`a.b`, `..a.b`, `.`): its level and parts; `None` for one
/// that is not.
fn dotted_text(text: &str) -> Option<(usize, Vec<String>)> {
    let level = text.bytes().take_while(|b| *b == b'.').count();
    let rest = &text[level..];
    if rest.is_empty() {
        return (level > 0).then(|| (level, Vec::new()));
    }
    let parts: Vec<String> = rest.split('.').map(str::to_string).collect();
    parts
        .iter()
        .all(|p| is_identifier(p))
        .then_some((level, parts))
}

/// Reads `name (. name)*` from `at`: its parts and where it ends.
fn dotted(tokens: &[Token<'_>], at: usize) -> Option<(Vec<String>, usize)> {
    let mut parts = Vec::new();
    let mut i = at;
    loop {
        match tokens.get(i) {
            Some(Token::Name(n, _)) if is_identifier(n) => parts.push((*n).to_string()),
            _ => return None,
        }
        i += 1;
        if tokens.get(i) != Some(&Token::Dot) {
            return Some((parts, i));
        }
        i += 1;
    }
}

/// Skips an `as NAME` at `at`.
fn skip_alias(tokens: &[Token<'_>], at: usize) -> usize {
    match (tokens.get(at), tokens.get(at + 1)) {
        (Some(Token::Name("as", _)), Some(Token::Name(..))) => at + 2,
        _ => at,
    }
}

/// The imports of a Python source text, in the order written (see the module docs).
pub(crate) fn imports(text: &str) -> Vec<Import> {
    let views = props::views(FileKind::Python, text);
    let tokens = tokens(&views.bare);
    let mut found = Vec::new();
    for (k, token) in tokens.iter().enumerate() {
        match token {
            Token::Name("import", _) => found.extend(import_at(&tokens, k)),
            Token::Name("import_module" | "__import__", end)
                if tokens.get(k + 1) == Some(&Token::Open) =>
            {
                // The string literal that opens the arguments.
                let open = views
                    .bare
                    .get(*end..)
                    .and_then(|rest| rest.find('('))
                    .map(|p| end + p + 1);
                let literal = open.and_then(|o| props::literal_at(&views.bare, &views.code, o));
                if let Some((Some(name), _)) = literal
                    && let Some((level, module)) = dotted_text(&name)
                {
                    found.push(Import {
                        level,
                        module,
                        names: Vec::new(),
                    });
                }
            }
            _ => {}
        }
    }
    found
}

/// The imports of the statement whose `import` keyword is token `k`.
fn import_at(tokens: &[Token<'_>], k: usize) -> Vec<Import> {
    // Back from `import`: the dots and names of a `from` clause, then `from`.
    let mut j = k;
    while let Some(before) = j.checked_sub(1).and_then(|b| tokens.get(b)) {
        match before {
            Token::Name("from", _) => break,
            Token::Dot | Token::Name(..) => j -= 1,
            _ => break,
        }
    }
    let is_from = j
        .checked_sub(1)
        .and_then(|b| tokens.get(b))
        .is_some_and(|t| matches!(t, Token::Name("from", _)));
    if !is_from {
        // `import a.b as c, d`
        let mut found = Vec::new();
        let mut i = k + 1;
        while let Some((module, end)) = dotted(tokens, i) {
            found.push(Import {
                level: 0,
                module,
                names: Vec::new(),
            });
            i = skip_alias(tokens, end);
            if tokens.get(i) != Some(&Token::Comma) {
                break;
            }
            i += 1;
        }
        return found;
    }
    // `from <dots><name> import …`
    let level = tokens[j..k]
        .iter()
        .take_while(|t| **t == Token::Dot)
        .count();
    let module = if j + level == k {
        Vec::new()
    } else {
        match dotted(tokens, j + level) {
            Some((parts, end)) if end == k => parts,
            _ => return Vec::new(),
        }
    };
    if level == 0 && module.is_empty() {
        return Vec::new();
    }
    let mut names = Vec::new();
    let mut i = k + 1;
    let parenthesised = tokens.get(i) == Some(&Token::Open);
    if parenthesised {
        i += 1;
    }
    while let Some(Token::Name(name, _)) = tokens.get(i) {
        if !is_identifier(name) {
            break;
        }
        names.push((*name).to_string());
        i = skip_alias(tokens, i + 1);
        if tokens.get(i) != Some(&Token::Comma) {
            break;
        }
        i += 1;
        // A parenthesised list may end the line and go on below.
        while parenthesised && tokens.get(i) == Some(&Token::End) {
            i += 1;
        }
    }
    vec![Import {
        level,
        module,
        names,
    }]
}

impl Import {
    /// The files this import may load, as paths of components, when written in the file
    /// whose folder is `folder` and run with `root` as `sys.path[0]` (both as components of
    /// one tree): for each module it loads, `X.py` and `X/__init__.py` (see the module docs).
    /// None for a relative import that climbs above `root`.
    pub(crate) fn candidates(&self, folder: &[String], root: &[String]) -> Vec<Vec<String>> {
        let base: Vec<String> = if self.level == 0 {
            root.to_vec()
        } else {
            let up = self.level - 1;
            if up > folder.len() {
                return Vec::new();
            }
            folder[..folder.len() - up].to_vec()
        };
        if !base.starts_with(root) {
            return Vec::new();
        }
        let mut found = Vec::new();
        let module_files = |path: &[String], found: &mut Vec<Vec<String>>| {
            if let Some((last, dir)) = path.split_last() {
                let mut file = dir.to_vec();
                file.push(format!("{last}.py"));
                found.push(file);
                let mut package = path.to_vec();
                package.push("__init__.py".to_string());
                found.push(package);
            }
        };
        if self.level > 0 {
            let mut package = base.clone();
            package.push("__init__.py".to_string());
            found.push(package);
        }
        let mut path = base;
        for part in &self.module {
            path.push(part.clone());
            module_files(&path, &mut found);
        }
        for name in &self.names {
            let mut sub = path.clone();
            sub.push(name.clone());
            module_files(&sub, &mut found);
        }
        found
    }
}

/// Whether a file's bytes start with a `#!` line that runs Python (`#!/usr/bin/env python3`,
/// `#!/usr/bin/python3.12 -u`, `#!/usr/bin/env pypy3`).
pub(crate) fn has_python_shebang(bytes: &[u8]) -> bool {
    let first = bytes.split(|b| *b == b'\n').next().unwrap_or_default();
    first.starts_with(b"#!")
        && (first.windows(6).any(|w| w == b"python") || first.windows(4).any(|w| w == b"pypy"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The imports of `text` as `(level, "a.b", "x,y")`.
    fn read(text: &str) -> Vec<(usize, String, String)> {
        imports(text)
            .into_iter()
            .map(|i| (i.level, i.module.join("."), i.names.join(",")))
            .collect()
    }

    fn one(level: usize, module: &str, names: &str) -> (usize, String, String) {
        (level, module.to_string(), names.to_string())
    }

    #[test]
    fn plain_imports_with_aliases_and_lists() {
        assert_eq!(read("import a"), [one(0, "a", "")]);
        assert_eq!(
            read("import a.b.c as d, e\n"),
            [one(0, "a.b.c", ""), one(0, "e", "")]
        );
        assert_eq!(
            read("import a as x, b . c as y , d"),
            [one(0, "a", ""), one(0, "b.c", ""), one(0, "d", "")]
        );
        assert_eq!(
            read("import a, \\\n    b\nc = 1"),
            [one(0, "a", ""), one(0, "b", "")]
        );
        // A name on the next line is another statement.
        assert_eq!(read("import a,\nb"), [one(0, "a", "")]);
    }

    #[test]
    fn from_imports_parenthesised_continued_and_starred() {
        assert_eq!(
            read("from oracle import serve"),
            [one(0, "oracle", "serve")]
        );
        assert_eq!(
            read("from a.b import (x as y,\n    z,\n)\nw = 1"),
            [one(0, "a.b", "x,z")]
        );
        assert_eq!(read("from a import x, \\\n  y as q"), [one(0, "a", "x,y")]);
        assert_eq!(read("from a import *"), [one(0, "a", "")]);
        assert_eq!(
            read("from __future__ import annotations"),
            [one(0, "__future__", "annotations")]
        );
    }

    #[test]
    fn relative_imports_keep_their_level() {
        assert_eq!(read("from . import x"), [one(1, "", "x")]);
        assert_eq!(read("from .m import y"), [one(1, "m", "y")]);
        assert_eq!(read("from .. import z"), [one(2, "", "z")]);
        assert_eq!(read("from ...a.b import c"), [one(3, "a.b", "c")]);
        assert_eq!(read("from . m import y"), [one(1, "m", "y")]);
    }

    #[test]
    fn imports_count_at_any_indentation_and_after_a_header_on_their_line() {
        let text = "def f():\n    import a\n    if x: import b\ntry:\n    from c import d\nexcept ImportError:\n    e = None\nelse: import g; import h\nclass K: from i import j\n";
        assert_eq!(
            read(text),
            [
                one(0, "a", ""),
                one(0, "b", ""),
                one(0, "c", "d"),
                one(0, "g", ""),
                one(0, "h", ""),
                one(0, "i", "j"),
            ]
        );
    }

    #[test]
    fn strings_and_comments_hold_no_imports() {
        let text = "# import a\nx = 'import b'\ny = \"from c import d\"\nz = '''\nimport e\nfrom f import g\n'''\nw = rb\"import h\"\nv = f\"import {k}\"  # from l import m\n";
        assert_eq!(read(text), Vec::<(usize, String, String)>::new());
        // `from` in other statements is not an import.
        assert_eq!(
            read("raise E from err\ndef g():\n    yield from it\n"),
            Vec::<(usize, String, String)>::new()
        );
    }

    #[test]
    fn dynamic_imports_of_a_string_literal() {
        assert_eq!(
            read(
                "import importlib\nm = importlib.import_module('pkg.helpers')\nn = __import__(\"x\")\n"
            ),
            [
                one(0, "importlib", ""),
                one(0, "pkg.helpers", ""),
                one(0, "x", "")
            ]
        );
        assert_eq!(read("import_module('.h', __package__)"), [one(1, "h", "")]);
        // Not a literal, or not a module name: nothing.
        assert_eq!(
            read("import_module(name)\n__import__(f'x{y}')\n__import__('a b')\n"),
            Vec::<(usize, String, String)>::new()
        );
    }

    fn paths(import: &str, folder: &str, root: &str) -> Vec<String> {
        let parts = |s: &str| -> Vec<String> {
            s.split('/')
                .filter(|c| !c.is_empty())
                .map(str::to_string)
                .collect()
        };
        let mut all = Vec::new();
        for i in imports(import) {
            all.extend(
                i.candidates(&parts(folder), &parts(root))
                    .into_iter()
                    .map(|p| p.join("/")),
            );
        }
        all
    }

    #[test]
    fn absolute_imports_resolve_from_the_root_relative_from_the_file() {
        assert_eq!(
            paths("import a.b.c", "t/p", "t"),
            [
                "t/a.py",
                "t/a/__init__.py",
                "t/a/b.py",
                "t/a/b/__init__.py",
                "t/a/b/c.py",
                "t/a/b/c/__init__.py"
            ]
        );
        assert_eq!(
            paths("from a import x", "", ""),
            ["a.py", "a/__init__.py", "a/x.py", "a/x/__init__.py"]
        );
        assert_eq!(
            paths("from . import x", "t/pkg", "t"),
            ["t/pkg/__init__.py", "t/pkg/x.py", "t/pkg/x/__init__.py"]
        );
        assert_eq!(
            paths("from .m import y", "t/pkg", "t"),
            [
                "t/pkg/__init__.py",
                "t/pkg/m.py",
                "t/pkg/m/__init__.py",
                "t/pkg/m/y.py",
                "t/pkg/m/y/__init__.py"
            ]
        );
        assert_eq!(
            paths("from .. import z", "t/pkg/sub", "t"),
            ["t/pkg/__init__.py", "t/pkg/z.py", "t/pkg/z/__init__.py"]
        );
        // Never above the root.
        assert_eq!(paths("from .. import z", "t", "t"), Vec::<String>::new());
        assert_eq!(paths("from .... import z", "t/a", ""), Vec::<String>::new());
    }

    #[test]
    fn shebangs_that_run_python() {
        assert!(has_python_shebang(b"#!/usr/bin/env python3\nimport x\n"));
        assert!(has_python_shebang(b"#!/usr/bin/python3.12 -u"));
        assert!(has_python_shebang(b"#!/usr/bin/env pypy3\n"));
        assert!(!has_python_shebang(b"#!/bin/sh\npython3 x.py\n"));
        assert!(!has_python_shebang(b"import python\n"));
        assert!(!has_python_shebang(b""));
    }
}

#[cfg(test)]
mod invariants {
    use super::*;
    use proptest::prelude::*;

    /// Text that reads like Python imports.
    fn texty() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![
                Just("import ".to_string()),
                Just("from ".to_string()),
                Just(" as ".to_string()),
                "[a-z]{1,4}",
                "[ .,()*;:\\\\\n\t#'\"]",
            ],
            0..24,
        )
        .prop_map(|parts| parts.concat())
    }

    proptest! {
        /// Any text is read without a panic, and every import it reports is well formed.
        #[test]
        fn reading_never_panics(text in texty()) {
            for import in imports(&text) {
                prop_assert!(import.level > 0 || !import.module.is_empty());
                for part in import.module.iter().chain(&import.names) {
                    prop_assert!(is_identifier(part), "{:?} in {:?}", part, text);
                }
                let _ = import.candidates(&["t".to_string()], &[]);
            }
        }

        /// An import statement written inside a string literal or a comment is none.
        #[test]
        fn literals_and_comments_hold_no_imports(
            body in "[a-z .,()*;]{0,12}",
            module in "[a-z]{1,6}",
            prefix in prop_oneof![Just(""), Just("r"), Just("b"), Just("u"), Just("rb"), Just("f")],
            quote in prop_oneof![Just("'"), Just("\""), Just("'''"), Just("\"\"\"")],
            form in 0usize..4,
        ) {
            let statement = match form {
                0 => format!("import {module}"),
                1 => format!("from {module} import x"),
                2 => format!("from . import {module}"),
                _ => format!("__import__('{module}')"),
            };
            // A triple-quoted string may hold line ends.
            let inner = if quote.len() == 3 {
                format!("{body}\n{statement}\n{body}")
            } else {
                format!("{body} {statement} {body}")
            };
            let inner = if quote.len() == 1 || form == 3 {
                inner.replace(quote, "")
            } else {
                inner
            };
            let text = format!("x = {prefix}{quote}{inner}{quote}\n# {statement}\ny = 1\n");
            prop_assert_eq!(imports(&text), Vec::new(), "{}", text);
        }
    }
}
