//! The gaming-move rules, as data: one [`Rule`] per move of SPEC §9 step 2, and the engine that
//! applies the table to a commit's own change to its property files.
//!
//! Matching works on the *code* of a line: the whole file is lexed (Rust and Python: comments,
//! string, raw-string, char and f-string literals; other files: `#` comments outside quotes), so
//! that a `//` or `#` inside a string does not hide the code after it, and a line that starts
//! inside a multi-line string is read as string. A rule reads string contents or not
//! ([`Strings`]). Lines are compared whitespace-free, so that a moved or re-indented line is not
//! a new one. Where a line sits — in which property test, by the spans the property finder
//! knows — pairs settings and assertions of one property with each other.

use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use std::sync::LazyLock;

use regex::Regex;

use super::PatchError;
use super::diff::{Entry, Line, squash};
use super::props::{
    Lines, PropertyDef, Span, Views, is_pytest_file, logical_starts, properties, property_spans,
    shadowed_properties, views,
};

/// The language of a file, by extension; rules say which kinds they read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    /// `.rs`
    Rust,
    /// `.py`, `.pyi`
    Python,
    /// Anything else (configuration such as `pytest.ini`, `pyproject.toml`, CI files).
    Other,
}

impl FileKind {
    /// The kind of a path, by its extension.
    pub fn of(path: &str) -> FileKind {
        match path.rsplit_once('.').map(|(_, ext)| ext) {
            Some("rs") => FileKind::Rust,
            Some("py" | "pyi") => FileKind::Python,
            _ => FileKind::Other,
        }
    }

    /// The code part of a line read on its own: comments blanked, string contents kept. A line
    /// of a file is read in the context of the whole file instead (see the module docs); this is
    /// for a line whose file is not at hand.
    #[cfg(test)]
    fn code(self, line: &str) -> String {
        views(self, line).code
    }
}

const ALL: &[FileKind] = &[FileKind::Rust, FileKind::Python, FileKind::Other];
const CODE: &[FileKind] = &[FileKind::Rust, FileKind::Python];
const RUST: &[FileKind] = &[FileKind::Rust];
const PYTHON: &[FileKind] = &[FileKind::Python];
const OTHER: &[FileKind] = &[FileKind::Other];

/// Whether a rule reads the contents of string literals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strings {
    /// String and char contents are blanked: a word in a message is not code.
    Blanked,
    /// String contents are read (an environment variable's name, a fixture's `scope="session"`).
    Kept,
}

/// Where in a file a pattern applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Any line.
    Anywhere,
    /// Only a line of a property test: its attributes or decorators, its signature or its body
    /// (a `proptest!` block counts as a whole).
    InProperty,
}

/// One pattern of an [`Matcher::Added`] rule.
#[derive(Debug, Clone, Copy)]
pub struct Pattern {
    /// The file kinds it reads (within the rule's kinds).
    pub kinds: &'static [FileKind],
    /// Where it applies.
    pub scope: Scope,
    /// The regex.
    pub regex: &'static str,
    /// A regex for lines the pattern does not fire on although `regex` matches them.
    pub unless: Option<&'static str>,
    /// Which lines of a property the commit adds it reads, when its rule is one of
    /// [`NEW_PROPERTY_EXEMPT`].
    pub in_new: InNew,
}

/// Which lines of a new property a pattern of a [`NEW_PROPERTY_EXEMPT`] rule still reads: a
/// move whose effect reaches beyond the new property itself is judged there too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InNew {
    /// None: the move can only weaken the new property itself.
    Exempt,
    /// Its decorators and signature (default arguments included), which Python runs when the
    /// module is imported: a call there acts on the whole module (`pytest.skip(…)`).
    Header,
    /// Every line: the move acts on the session or on other properties whenever it runs
    /// (`pytest.exit(…)`, `settings.load_profile(…)`).
    Always,
    /// Every line of a new property, and no other line: ordinary set-up elsewhere (a conftest
    /// registering a profile), but a test has no business changing the session's settings.
    OnlyNew,
}

const fn anywhere(regex: &'static str) -> Pattern {
    Pattern {
        kinds: ALL,
        scope: Scope::Anywhere,
        regex,
        unless: None,
        in_new: InNew::Exempt,
    }
}

const fn rust(regex: &'static str) -> Pattern {
    Pattern {
        kinds: RUST,
        scope: Scope::Anywhere,
        regex,
        unless: None,
        in_new: InNew::Exempt,
    }
}

const fn python(regex: &'static str) -> Pattern {
    Pattern {
        kinds: PYTHON,
        scope: Scope::Anywhere,
        regex,
        unless: None,
        in_new: InNew::Exempt,
    }
}

const fn other(regex: &'static str) -> Pattern {
    Pattern {
        kinds: OTHER,
        scope: Scope::Anywhere,
        regex,
        unless: None,
        in_new: InNew::Exempt,
    }
}

const fn in_property(kinds: &'static [FileKind], regex: &'static str) -> Pattern {
    Pattern {
        kinds,
        scope: Scope::InProperty,
        regex,
        unless: None,
        in_new: InNew::Exempt,
    }
}

/// A pattern a new property's lines are read for as well (`in_new`).
const fn reaching(kinds: &'static [FileKind], in_new: InNew, regex: &'static str) -> Pattern {
    Pattern {
        kinds,
        scope: Scope::Anywhere,
        regex,
        unless: None,
        in_new,
    }
}

/// A pattern of every kind with lines it does not fire on.
const fn anywhere_unless(regex: &'static str, unless: &'static str) -> Pattern {
    Pattern {
        kinds: ALL,
        scope: Scope::Anywhere,
        regex,
        unless: Some(unless),
        in_new: InNew::Exempt,
    }
}

/// A Rust pattern with lines it does not fire on.
const fn rust_unless(regex: &'static str, unless: &'static str) -> Pattern {
    Pattern {
        kinds: RUST,
        scope: Scope::Anywhere,
        regex,
        unless: Some(unless),
        in_new: InNew::Exempt,
    }
}

/// A line that uses `LazyLock`/`LazyCell` without sharing state between cases: a plain import
/// of it (no `as`), or a `static` whose type is built only of immutable data (numbers, text,
/// regular expressions and the standard collections of them) made by `LazyLock::new(|| …)`,
/// whose closure can capture nothing: the same value for every case.
const LAZY_IMMUTABLE: &str = concat!(
    r"^\s*(?:pub(?:\s*\([^)]*\))?\s+)?use\s+[\w:]+(?:::\s*\{\s*[\w:]+(?:\s*,\s*[\w:]+)*\s*,?\s*\})?\s*;\s*$",
    r"|^\s*(?:pub(?:\s*\([^)]*\))?\s+)?static\s+\w+\s*:\s*(?:(?:std|core)\s*::\s*(?:sync|cell)\s*::\s*)?Lazy(?:Lock|Cell)\s*<",
    r"(?:\s|[<>,&\[\];()0-9]|'static\b|\b(?:(?:std|core|alloc|regex|bytes|collections|string|vec|boxed)\s*::\s*)*(?:Regex|RegexSet|String|str|Vec|Box|Option|HashMap|BTreeMap|HashSet|BTreeSet|VecDeque|u8|u16|u32|u64|u128|usize|i8|i16|i32|i64|i128|isize|f32|f64|bool|char)\b)+",
    r">\s*=\s*(?:(?:std|core)\s*::\s*(?:sync|cell)\s*::\s*)?Lazy(?:Lock|Cell)\s*::\s*new\s*\(\s*\|\s*\|",
);

/// Which way a number moves when the check gets weaker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weaker {
    /// A smaller number checks less (case counts, decimal places).
    Lower,
    /// A larger number checks less (tolerances).
    Higher,
}

/// A setting whose value is a number.
#[derive(Debug, Clone, Copy)]
pub struct NumberPattern {
    /// What the number is, for the explanation (`with_cases`, `tolerance`).
    pub setting: &'static str,
    /// The regex; group 1 is the value. Whitespace in the regex may span lines (the value on
    /// the line after the name). A value that is not one number literal (`_` separators, a
    /// type suffix and quotes allowed) — an expression, a name — cannot be judged: see
    /// [`Matcher::Number`].
    pub pattern: &'static str,
    /// A regex naming the setting without a value [`NumberPattern::pattern`] finds there (a
    /// constant, `concat!`, a shell default): a new such line is a value that cannot be judged.
    pub mention: Option<&'static str>,
    /// Which way is weaker.
    pub weaker: Weaker,
    /// The value that applies when the setting is removed, if known: removing an explicit
    /// setting that was stronger than this is a weakening, and so is setting a weaker value
    /// on an existing property that had none.
    pub default: Option<f64>,
}

/// How a rule reads a commit's added and removed lines.
#[derive(Debug, Clone, Copy)]
pub enum Matcher {
    /// A property test present before the commit is missing after it (across all property files
    /// of the commit, so a test moved between files or a renamed file is not a removal).
    PropertyRemoved,
    /// An added line matches, and its text (whitespace-free) is not one the commit removed.
    /// The name a `fn`, `def` or `class` line defines is not read.
    Added(&'static [Pattern]),
    /// The commit removes more matching lines than it adds, in one property test (or, outside
    /// properties, one file) or in the whole commit; the removed lines not re-added fire.
    NetRemoved(&'static [&'static str]),
    /// A number moves the weaker way, an explicit setting is removed, or (with `floor`) a new
    /// value is below `min_cases`. A new value is paired with the old value of the same
    /// property test; a value in a property the commit adds is new (only `floor` applies);
    /// values outside properties pair in order, after equal values cancel. A value that is not
    /// a number literal fires when `floor` is set, or when it replaces a literal.
    Number {
        /// The patterns; each pattern index is its own setting.
        patterns: &'static [NumberPattern],
        /// Whether an added value below `min_cases` fires.
        floor: bool,
    },
    /// In one property test (or, outside properties, one file) or in the whole commit, the
    /// commit removes more strong lines than it adds back, and adds new `added` lines: these
    /// fire. A strong line matches `removed` but neither `added` nor `unless`; an `added` line
    /// that matches `unless` does not count.
    Replaced {
        /// What a strong line looks like.
        removed: &'static [&'static str],
        /// What its weaker replacement looks like.
        added: &'static [&'static str],
        /// Weaker replacements that count only against strong lines removed from the same
        /// property test (a form too common to weigh against the whole commit).
        added_in_property: &'static [&'static str],
        /// Lines that are neither.
        unless: &'static [&'static str],
    },
    /// A new assertion that always holds: it matches a pattern, it compares an expression
    /// with itself (`assert x == x`, `assert_eq!(a, a)`), or it asserts a non-empty tuple
    /// (`assert (x == y, "message")`).
    Tautology(&'static [&'static str]),
    /// A Python file the commit changes has an effective source encoding (a PEP 263
    /// declaration Python honours: line 1, or line 2 under a blank or comment line 1) other
    /// than UTF-8, ASCII or Latin-1, and the commit adds lines to it or makes the declaration
    /// take effect (deleting a code line 1 above it): in such an encoding bytes the gate reads
    /// as a comment can decode to a newline and code (`# coding: utf-7`, `+AAo-`).
    SourceEncoding,
    /// A file the commit adds or changes that Python or a native loader would run but the gate
    /// cannot read: anything under a `__pycache__/` folder, bytecode (`.pyc`, `.pyo`), a native
    /// library (`.so`, `.so.N`, `.pyd`, `.dylib`, `.dll`), a site path hook (`.pth`), and any
    /// other file git's diff treats as binary (a NUL byte in its first 8000 bytes); and any
    /// symbolic link or submodule the commit adds, retargets or turns a file into, wherever it
    /// points (a link `json` to a package folder elsewhere, a link `__pycache__` to a folder of
    /// bytecode). A deletion is not one. The finding has no line (`0`).
    OpaqueCode,
    /// A Python module file the commit adds whose import name is a standard-library module's
    /// (or `hypothesis`, `pytest`), or that another module of its folder in the commit's tree
    /// answers to as well, so that one of them is not what `import` loads: a package `X/`
    /// with an `__init__` beside `X.py`, an extension `X.….so` or `X.pyd` beside `X.py`, and
    /// the other way round. The finding has no line (`0`).
    ModuleShadowed,
}

/// One gaming-move rule.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// Stable id, used in reports.
    pub id: &'static str,
    /// One line saying what the move is.
    pub description: &'static str,
    /// The file kinds the rule reads.
    pub kinds: &'static [FileKind],
    /// Whether it reads string contents.
    pub strings: Strings,
    /// How it matches.
    pub matcher: Matcher,
}

/// A number literal as a value: group 1 the number.
const NUMBER: &str = r#"^\s*["']?\s*((?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)(?:[eE][+-]?[0-9]+)?)(?:_?(?:u8|u16|u32|u64|u128|usize|i8|i16|i32|i64|i128|isize|f32|f64))?["']?"#;

/// An equality assertion.
const EXACT: &[&str] = &[
    r"\b(?:prop_|debug_)?assert_eq\s*!",
    r"\b(?:prop_|debug_)?assert\s*!\s*\(.*==",
    r"^\s*assert\b.*==",
    r"\bassertEqual\s*\(",
];

/// A comparison with a tolerance.
const TOLERANT: &[&str] = &[
    r"\bapprox\s*\(",
    r"\bisclose\s*\(",
    r"\ballclose\s*\(",
    r"\bassert_allclose\s*\(",
    r"\bassert(?:Almost|NotAlmost)Equals?\s*\(",
    r"\bassert_(?:abs_diff|relative|ulps)_eq\s*!",
    r"\bapprox_eq\s*!",
    r"\babs\s*\(.*\)\s*<",
    r"\.\s*abs\s*\(\s*\)\s*<",
];

/// The `property-removed` rule, the table's first, for the findings of files a commit does not
/// change ([`super::reach::no_longer_compiled`]).
pub(crate) const PROPERTY_REMOVED: &Rule = &RULES[0];

/// The rule table (SPEC §9 step 2), in report order.
pub const RULES: &[Rule] = &[
    Rule {
        id: "property-removed",
        description: "a property test was removed",
        kinds: CODE,
        strings: Strings::Blanked,
        matcher: Matcher::PropertyRemoved,
    },
    Rule {
        id: "cases-lowered",
        description: "a case count was lowered or set below min_cases",
        kinds: ALL,
        strings: Strings::Kept,
        matcher: Matcher::Number {
            patterns: &[
                NumberPattern {
                    setting: "with_cases",
                    pattern: r"\bwith_cases\s*\(\s*([^=,;)\]}\n][^,;)\]}\n]*)",
                    mention: Some(r"\bwith_cases\b"),
                    weaker: Weaker::Lower,
                    default: Some(256.0),
                },
                NumberPattern {
                    setting: "PROPTEST_CASES",
                    pattern: r#"\bPROPTEST_CASES\b["']?\s*[=:,]\s*([^=,;)\]}\n][^,;)\]}\n]*)"#,
                    mention: Some(r"PROPTEST_CASES"),
                    weaker: Weaker::Lower,
                    default: Some(256.0),
                },
                NumberPattern {
                    setting: "max_examples",
                    pattern: r#"\bmax_examples\b["']?\s*[=:]\s*([^=,;)\]}\n][^,;)\]}\n]*)"#,
                    mention: Some(r"\bmax_examples\b"),
                    weaker: Weaker::Lower,
                    default: Some(100.0),
                },
                NumberPattern {
                    setting: "cases",
                    // A `ProptestConfig { cases: … }` field or a `config.cases = …` assignment;
                    // not a plain `cases = …` variable.
                    pattern: r#"(?:\bcases\b["']?\s*:|\.\s*cases\s*=)\s*([0-9.][^,;)\]}\n]*)"#,
                    mention: Some(r"\bProptestConfig\s*\{[^}]*?\bcases\s*:"),
                    weaker: Weaker::Lower,
                    default: None,
                },
            ],
            floor: true,
        },
    },
    Rule {
        id: "skip-added",
        description: "an ignore, skip or expected-failure mark was added",
        kinds: ALL,
        strings: Strings::Blanked,
        matcher: Matcher::Added(&[
            anywhere(r"#\s*\[\s*ignore\b"),
            anywhere(r"#\s*\[\s*should_panic\b"),
            anywhere(r"#\s*\[\s*cfg_attr\s*\(.*\bignore\b"),
            // A configuration that is never (or, in tests, not) set compiles the code out.
            anywhere(
                r"#\s*!?\s*\[\s*cfg\s*\(\s*(?:any\s*\(\s*\)|not\s*\(\s*(?:test|all\s*\(\s*\))\s*\)|FALSE\b|false\b)",
            ),
            // Any other condition than `test` on a property test, or on an item that holds one
            // (a `mod`, an `impl`, a `proptest!` block, the file's inner attributes).
            in_property(
                RUST,
                r"#\s*!?\s*\[\s*cfg\s*\(\s*(?:[^t\s]|t[^e]|te[^s]|tes[^t]|test\s*[^\s)])",
            ),
            in_property(RUST, r"#\s*!?\s*\[\s*cfg_attr\s*\(.*\bcfg\s*\("),
            reaching(ALL, InNew::Header, r"\bimportorskip\s*\("),
            anywhere(r"\bpytest\s*\.\s*mark\s*\.\s*skip(?:if)?\b"),
            python(r"\bmark\s*\.\s*skip(?:if)?\b"),
            python(r"^\s*from\s+pytest\s+import\b.*\b(?:skip|xfail|importorskip|exit)\b"),
            anywhere(r"\bskipif\b"),
            anywhere(r"\bxfail\b"),
            anywhere(r"\bunittest\s*\.\s*skip\w*"),
            anywhere(r"@\s*skip(?:If|Unless)?\b"),
            reaching(ALL, InNew::Header, r"\bpytest\s*\.\s*skip\s*\("),
            // Ends the whole session, green with `returncode=0`, wherever it runs.
            reaching(ALL, InNew::Always, r"\bpytest\s*\.\s*exit\s*\("),
            reaching(PYTHON, InNew::Always, r"\bos\s*\.\s*_exit\s*\("),
            // A skip that ends the module, not one test.
            reaching(ALL, InNew::Always, r"\ballow_module_level\b"),
            anywhere(r"\bskipTest\s*\("),
            reaching(ALL, InNew::Header, r"\bSkipTest\b"),
            anywhere(r"--deselect\b"),
            // pytest collects nothing of a module or class that says so.
            python(r"\b__test__\s*(?::[^=]*)?=(?:[^=]|$)"),
            // conftest.py: files left out, collected items dropped or reports rewritten, the
            // options that select tests changed.
            python(r"\bcollect_ignore(?:_glob)?\b"),
            python(
                r"\bdef\s+pytest_(?:collection_modifyitems|ignore_collect|collect_file|pycollect_makeitem|deselected|collection|make_collect_report|runtest_protocol|runtest_call|runtest_makereport|report_teststatus)\b",
            ),
            python(r"\boption\s*\.\s*(?:markexpr|keyword|deselect|ignore\w*|file_or_dir)\b"),
            // pytest options and settings (pytest.ini, setup.cfg, tox.ini, pyproject.toml, CI
            // scripts) that select, leave out or stop collecting tests.
            other(r#"(?:^|[\s"'\[,=])-k(?:\s|=|["']|$)"#),
            other(r#"(?:^|[\s"'\[,=])-m(?:\s*=|\s*["']|\s+not\b)"#),
            other(r#"\baddopts\b.*(?:^|[\s"'\[,=])-m\b"#),
            other(r"--ignore(?:-glob)?\b"),
            other(r"(?:^|[\s\x22'\[,=])-p\s*=?\s*no:"),
            other(r"--co\b|--collect-only\b"),
            other(r"\bPYTEST_ADDOPTS\b"),
            other(
                r"\b(?:python_files|python_classes|python_functions|testpaths|norecursedirs|collect_imported_tests)\b",
            ),
        ]),
    },
    Rule {
        id: "source-encoding",
        description: "a Python file declares a source encoding the gate does not read",
        kinds: PYTHON,
        strings: Strings::Blanked,
        matcher: Matcher::SourceEncoding,
    },
    Rule {
        id: "opaque-code",
        description: "a file the gate cannot read (bytecode, a native library, a path hook, another binary file, a symbolic link or a submodule) was added or changed",
        kinds: ALL,
        strings: Strings::Blanked,
        matcher: Matcher::OpaqueCode,
    },
    Rule {
        id: "module-shadowed",
        description: "a new module file takes an import name another module answers to",
        kinds: ALL,
        strings: Strings::Blanked,
        matcher: Matcher::ModuleShadowed,
    },
    Rule {
        id: "catch-broadened",
        description: "exception or panic catching was broadened",
        kinds: CODE,
        strings: Strings::Blanked,
        matcher: Matcher::Added(&[
            rust(r"\bcatch_unwind\b"),
            // A panicking thread whose join result is dropped or turned into a value.
            rust(r"\blet\s+_\w*\s*(?::[^=]*)?=.*\.\s*join\s*\(\s*\)"),
            rust(
                r"\.\s*join\s*\(\s*\)\s*\.\s*(?:ok|err|is_ok|is_err|unwrap_or|unwrap_or_default|unwrap_or_else)\s*\(",
            ),
            python(r"\bexcept\s*\*?\s*:"),
            python(r"\bexcept\s*\*?\s*\(?[^:]*\b(?:(?:Base)?Exception|AssertionError)\b"),
            python(r"\bsuppress\s*\([^)]*\b(?:(?:Base)?Exception|AssertionError)\b"),
        ]),
    },
    Rule {
        id: "assertion-removed",
        description: "an assertion was removed",
        kinds: CODE,
        strings: Strings::Blanked,
        matcher: Matcher::NetRemoved(&[
            r"\b(?:prop_|debug_)?assert(?:_eq|_ne)?\s*!",
            r"^\s*assert\b",
            r"\bself\s*\.\s*assert\w*\s*\(",
            r"\b(?:np\s*\.\s*)?testing\s*\.\s*assert_\w+\s*\(",
        ]),
    },
    Rule {
        id: "assertion-weakened",
        description: "an equality assertion was replaced by a weaker comparison",
        kinds: CODE,
        strings: Strings::Blanked,
        matcher: Matcher::Replaced {
            removed: EXACT,
            added: &[
                r"\b(?:prop_|debug_)?assert\s*!\s*\(.*(?:>=|<=|!=|\s>\s|\s<\s)",
                r"\b(?:prop_|debug_)?assert_ne\s*!",
                r"^\s*assert\b.*(?:>=|<=|!=|\s>\s|\s<\s|\bin\b|\bis\s+not\b)",
                r"\bassert(?:Greater|Less|GreaterEqual|LessEqual|NotEqual|In|IsNotNone|True)\s*\(",
            ],
            // A Python assertion that compares nothing (`assert isinstance(total, int)`).
            added_in_property: &[r"^\s*assert\b[^=<>!]*$"],
            // A tolerance is the next rule's.
            unless: TOLERANT,
        },
    },
    Rule {
        id: "assertion-vacuous",
        description: "an assertion that always holds was added",
        kinds: CODE,
        strings: Strings::Blanked,
        matcher: Matcher::Tautology(&[
            r"^\s*assert\s*\(?\s*(?:True|1|not\s+(?:False|None|0))\s*\)?\s*(?:,|$)",
            r"^\s*assert\s*\(?\s*(?:True|1|not\s+(?:False|None|0))\s*\)?\s*or\b",
            r"^\s*assert\b.*\bor\s+(?:True|1|not\s+False)\b",
            // `assert P if c else True`: the assertion holds whenever `c` does not. The
            // conditional must be the whole assertion: outside any bracket (one level of
            // brackets allowed inside `P` and `c`), so `x == (a if c else True)` or a
            // call's keyword `f(strict=False if c else True)` are not it.
            r"^\s*assert\s+(?:[^()\[\]{}]|\([^()]*\)|\[[^\[\]]*\]|\{[^{}]*\})*\belse\s+(?:True|not\s+(?:False|None|0))\s*(?:,|$)",
            r"\b(?:prop_|debug_)?assert\s*!\s*\(\s*true\s*[,)]",
            r"\b(?:prop_|debug_)?assert\s*!\s*\(.*\|\|\s*true\b",
            r"\b(?:prop_|debug_)?assert\s*!\s*\(\s*(?:true|!\s*false)\s*\|\|",
            r"\bassertTrue\s*\(\s*(?:True|1)\s*[,)]",
        ]),
    },
    Rule {
        id: "tolerance-widened",
        description: "a numeric tolerance was widened",
        kinds: ALL,
        strings: Strings::Blanked,
        matcher: Matcher::Number {
            patterns: &[
                NumberPattern {
                    setting: "tolerance",
                    pattern: r"\b(?:epsilon|eps|tol|tolerance|atol|rtol|rel|abs|delta|max_ulps|ulps)\s*[:=]\s*(?:f(?:32|64)\s*=\s*)?([^=,;)\]}\n][^,;)\]}\n]*)",
                    mention: None,
                    weaker: Weaker::Higher,
                    default: None,
                },
                // The keywords of `math.isclose`, with its defaults: adding one that is looser
                // than its default widens the comparison as much as raising it does. (numpy's
                // and torch's `atol`/`rtol` have defaults that differ from function to
                // function, `isclose` to `assert_allclose` to `assert_close`: only their
                // changes are judged, above.)
                NumberPattern {
                    setting: "absolute tolerance abs_tol",
                    pattern: r"\babs_tol\s*[:=]\s*([^=,;)\]}\n][^,;)\]}\n]*)",
                    mention: None,
                    weaker: Weaker::Higher,
                    default: Some(0.0),
                },
                NumberPattern {
                    setting: "relative tolerance rel_tol",
                    pattern: r"\brel_tol\s*[:=]\s*([^=,;)\]}\n][^,;)\]}\n]*)",
                    mention: None,
                    weaker: Weaker::Higher,
                    default: Some(1e-9),
                },
                NumberPattern {
                    setting: "tolerance",
                    pattern: r"\b(?:EPS|EPSILON|TOL|TOLERANCE)\s*:\s*f(?:32|64)\s*=\s*([^=,;)\]}\n][^,;)\]}\n]*)",
                    mention: None,
                    weaker: Weaker::Higher,
                    default: None,
                },
                NumberPattern {
                    setting: "tolerance",
                    pattern: r"\.abs\s*\(\s*\)\s*<=?\s*([^=,;)\]}\n][^,;)\]}\n]*)",
                    mention: None,
                    weaker: Weaker::Higher,
                    default: None,
                },
                NumberPattern {
                    setting: "decimal places",
                    pattern: r"\bplaces\s*=\s*([^=,;)\]}\n][^,;)\]}\n]*)",
                    mention: None,
                    weaker: Weaker::Lower,
                    default: Some(7.0),
                },
            ],
            floor: false,
        },
    },
    Rule {
        id: "tolerance-added",
        description: "an exact comparison was replaced by one with a tolerance",
        kinds: CODE,
        strings: Strings::Blanked,
        matcher: Matcher::Replaced {
            removed: EXACT,
            added: TOLERANT,
            added_in_property: &[],
            unless: &[],
        },
    },
    Rule {
        id: "assume-added",
        description: "a new assume or filter can make the property vacuous",
        kinds: CODE,
        strings: Strings::Blanked,
        matcher: Matcher::Added(&[
            anywhere(r"\bprop_assume\s*!"),
            anywhere(r"\bassume\s*\("),
            // proptest filters strategies with `prop_filter`; `.filter` is an iterator's.
            rust(r"\.\s*prop_filter(?:_map)?\s*\("),
            rust(r"\bTestCaseError\s*::\s*reject\b"),
            python(r"\.\s*filter\s*\("),
            anywhere(r"\breject\s*\(\s*\)"),
        ]),
    },
    Rule {
        id: "early-return",
        description: "a property test returns early",
        kinds: CODE,
        strings: Strings::Blanked,
        matcher: Matcher::Added(&[in_property(CODE, r"\breturn\b")]),
    },
    Rule {
        id: "strategy-narrowed",
        description: "a strategy was narrowed to a constant",
        kinds: CODE,
        strings: Strings::Blanked,
        matcher: Matcher::Added(&[
            rust(r"\bin\s+(?:[A-Za-z_]\w*\s*::\s*)*Just\s*\("),
            rust(r"\.\s*prop_map\s*\(\s*(?:move\s*)?\|\s*_\w*\s*(?::[^|]*)?\|"),
            python(r"\bgiven\s*\(\s*(?:\w+\s*=\s*)?(?:\w+\s*\.\s*)?just\s*\("),
            python(r"=\s*(?:\w+\s*\.\s*)?just\s*\("),
            python(r"\.\s*map\s*\(\s*lambda\s+_\w*\s*:"),
            python(r"\.\s*map\s*\(\s*lambda\s*:"),
        ]),
    },
    Rule {
        id: "hypothesis-settings",
        description: "a Hypothesis setting that skips work was added or changed",
        kinds: &[FileKind::Python, FileKind::Other],
        strings: Strings::Blanked,
        matcher: Matcher::Added(&[
            anywhere(r"\bphases\s*[=:]"),
            anywhere(r"\bsuppress_health_check\b"),
            anywhere(r"\bdeadline\s*[=:]"),
            // A fixed sequence of examples instead of fresh ones on every run: a flaky failure
            // the usual examples miss stays missed. A literal `False` or `0` (the default),
            // the whole value, is not; `False or True` is.
            anywhere_unless(
                r"\bderandomize\s*[=:]",
                r"\bderandomize\s*[=:]\s*(?:False|0)\s*(?:[,)\]}#]|$)",
            ),
            // A profile sets the defaults of every property decorated after it: loading one,
            // or (from a new test) registering one, perhaps under the name of the one in force.
            reaching(ALL, InNew::Always, r"\bload_profile\s*\("),
            reaching(PYTHON, InNew::OnlyNew, r"\bregister_profile\s*\("),
        ]),
    },
    Rule {
        id: "shared-fixture",
        description: "a module- or session-wide fixture or shared state now feeds properties",
        kinds: CODE,
        strings: Strings::Kept,
        matcher: Matcher::Added(&[
            anywhere(r#"\bscope\s*=\s*["'](?:module|session|package|class)["']"#),
            anywhere(r"\b(?:OnceLock|OnceCell|lazy_static\s*!|thread_local\s*!)"),
            // A lazily made `static` of immutable data (a `Regex`) carries nothing between cases.
            rust_unless(r"\b(?:LazyLock|LazyCell)\b", LAZY_IMMUTABLE),
            anywhere(r"\bstatic\s+mut\b"),
        ]),
    },
    Rule {
        id: "impure-property",
        description: "a property started reading the clock, the network or the environment",
        kinds: CODE,
        strings: Strings::Blanked,
        matcher: Matcher::Added(&[
            rust(r"\b(?:SystemTime|Instant|Utc|Local|OffsetDateTime)\s*::\s*now(?:_utc|_local)?\b"),
            rust(r"\bUNIX_EPOCH\b"),
            rust(r"\benv\s*::\s*vars?(?:_os)?\b"),
            rust(r"\b(?:set_var|remove_var)\s*\("),
            // `env!` reads the build's environment: a build on another machine checks other
            // values.
            rust(r"\b(?:option_)?env\s*!\s*\("),
            rust(r"\b(?:TcpStream|TcpListener|UdpSocket|ToSocketAddrs)\b"),
            rust(r"\b(?:reqwest|ureq|hyper)\s*::"),
            python(
                r"\btime\s*\.\s*(?:time|time_ns|monotonic|monotonic_ns|perf_counter|perf_counter_ns|process_time|process_time_ns|thread_time|thread_time_ns|localtime|gmtime|ctime|asctime|strftime)\s*\(",
            ),
            python(r"^\s*from\s+time\s+import\b"),
            python(r"\b(?:datetime|date)\s*\.\s*(?:now|utcnow|today|fromtimestamp)\s*\("),
            python(r"\bos\s*\.\s*(?:environ|getenv|getenvb|putenv|unsetenv)\b"),
            python(r"^\s*from\s+os\s+import\b.*\b(?:environ|getenv|getenvb|putenv|unsetenv)\b"),
            python(r"\bgetenv\s*\("),
            python(r"\benviron\s*(?:\[|\.\s*get\b)"),
            python(
                r"\b(?:requests|httpx)\s*\.\s*(?:get|post|put|delete|head|patch|request|Session|Client|AsyncClient)\b",
            ),
            python(r"\bsocket\s*\.\s*(?:socket|create_connection|getaddrinfo)\b"),
            python(r"\burllib\s*\.\s*request\b"),
            python(r"^\s*(?:import|from)\s+(?:socket|requests|httpx|urllib|http\.client)\b"),
            python(r"\bhttp\s*\.\s*client\b"),
        ]),
    },
    Rule {
        id: "retry-or-sleep",
        description: "a retry or a sleep was added",
        kinds: ALL,
        strings: Strings::Blanked,
        matcher: Matcher::Added(&[
            anywhere(r"(?i)retr(?:y|ies|ying)"),
            anywhere(r"\bsleep\s*\("),
            anywhere(r"\bflaky\b"),
            anywhere(r"\breruns\b"),
            anywhere(r"\btenacity\b"),
            anywhere(r"\bbackoff\b"),
        ]),
    },
];

/// The rules that do not read the lines of a property test the commit adds (one whose name no
/// property file of the commit had before). These moves weaken an existing property — "can make
/// a property vacuous" — and a property that did not exist at the base cannot have been
/// weakened: a guard `return`, an `assume`, `deadline=None` or an ignore mark on a new test is
/// an ordinary edit. A property deleted under one name and added under another is still a
/// `property-removed` finding. The other rules judge new properties too: reading the clock, the
/// network or the environment, retries and sleeps, shared fixtures, and the `min_cases` floor
/// matter as much for new code (`cases-lowered` compares a new property's count with
/// `min_cases` only).
pub const NEW_PROPERTY_EXEMPT: &[&str] = &[
    "skip-added",
    "catch-broadened",
    "assertion-weakened",
    "assertion-vacuous",
    "tolerance-added",
    "assume-added",
    "early-return",
    "strategy-narrowed",
    "hypothesis-settings",
];

impl Rule {
    /// Whether the rule reads the lines of a property test the commit adds (see
    /// [`NEW_PROPERTY_EXEMPT`]).
    pub fn judges_new_properties(&self) -> bool {
        !NEW_PROPERTY_EXEMPT.contains(&self.id)
    }
}

/// One property file's part of a commit's own change, as the rules read it.
#[derive(Debug, Clone, Default)]
pub(crate) struct PropertyFile {
    /// The path before (when it was a property file before).
    pub old_path: Option<String>,
    /// The path after (when it is a property file after).
    pub new_path: Option<String>,
    /// The whole text before, when `old_path` is set.
    pub old_text: Option<String>,
    /// The whole text after, when `new_path` is set.
    pub new_text: Option<String>,
    /// Lines added (numbered in the new file).
    pub added: Vec<Line>,
    /// Lines removed (numbered in the old file).
    pub removed: Vec<Line>,
    /// Whether the file after the commit is a regular file git's diff treats as binary
    /// ([`super::modules::is_binary`]).
    pub new_binary: bool,
    /// Whether the commit adds `new_path`: it was not there before (an addition, a copy, the
    /// new side of a rename).
    pub new_is_added: bool,
    /// What `new_path` is after the commit: a regular file, or a symbolic link or submodule,
    /// whose text (`new_text`) the gate does not have.
    pub new_entry: Entry,
}

/// What the rules may ask about the commit's tree.
pub(crate) trait TreeView {
    /// Whether a Rust file (from the project folder) is compiled: a crate root, or declared
    /// by a module that is.
    fn compiled(&self, path: &str) -> bool;

    /// The names of the files directly in `folder` (from the project folder, `""` for the
    /// project folder itself).
    fn names_in(&self, _folder: &str) -> Vec<String> {
        Vec::new()
    }
}

impl<F: Fn(&str) -> bool> TreeView for F {
    fn compiled(&self, path: &str) -> bool {
        self(path)
    }
}

/// A finding before it is attached to its commit.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct RawFinding {
    pub file: String,
    pub line: u32,
    pub rule: &'static str,
    pub explanation: String,
}

/// A rule's matcher with its patterns compiled.
enum Engine {
    PropertyRemoved,
    Added(Vec<(Pattern, Regex, Option<Regex>)>),
    NetRemoved(Vec<Regex>),
    Number {
        patterns: Vec<(NumberPattern, Regex, Option<Regex>)>,
        floor: bool,
    },
    Replaced {
        removed: Vec<Regex>,
        added: Vec<Regex>,
        added_in_property: Vec<Regex>,
        unless: Vec<Regex>,
    },
    Tautology(Vec<Regex>),
    SourceEncoding,
    OpaqueCode,
    ModuleShadowed,
}

/// A rule with its patterns compiled.
struct Compiled {
    rule: &'static Rule,
    engine: Engine,
}

/// Patterns the engine itself uses.
struct Helpers {
    /// A number literal as a setting's value.
    number: Regex,
    /// The name a definition line defines (group 1).
    definition: Regex,
    /// Where an assertion's arguments open, by language.
    rust_assert_eq: Regex,
    rust_assert: Regex,
    python_assert: Regex,
    /// A PEP 263 coding declaration (group 1 the encoding).
    coding: Regex,
}

/// The rule table, compiled once per check.
pub(crate) struct RuleSet {
    rules: Vec<Compiled>,
    helpers: Helpers,
}

fn compile_one(id: &'static str, pattern: &'static str) -> Result<Regex, PatchError> {
    Regex::new(pattern).map_err(|source| PatchError::RulePattern {
        rule: id,
        pattern,
        source: Box::new(source),
    })
}

fn compile(rule: &'static Rule, patterns: &[&'static str]) -> Result<Vec<Regex>, PatchError> {
    patterns.iter().map(|p| compile_one(rule.id, p)).collect()
}

impl RuleSet {
    /// The table compiled once per process (compiling it is the slow part of a small check).
    pub(crate) fn shared() -> Result<&'static RuleSet, PatchError> {
        static SHARED: LazyLock<Result<RuleSet, PatchError>> = LazyLock::new(RuleSet::new);
        match &*SHARED {
            Ok(set) => Ok(set),
            Err(PatchError::RulePattern {
                rule,
                pattern,
                source,
            }) => Err(PatchError::RulePattern {
                rule,
                pattern,
                source: source.clone(),
            }),
            Err(other) => Err(PatchError::GitOutput {
                args: String::new(),
                detail: other.to_string(),
            }),
        }
    }

    pub(crate) fn new() -> Result<RuleSet, PatchError> {
        let mut rules = Vec::new();
        for rule in RULES {
            let engine = match rule.matcher {
                Matcher::PropertyRemoved => Engine::PropertyRemoved,
                Matcher::Added(patterns) => Engine::Added(
                    patterns
                        .iter()
                        .map(|p| {
                            let unless = p.unless.map(|u| compile_one(rule.id, u)).transpose()?;
                            Ok((*p, compile_one(rule.id, p.regex)?, unless))
                        })
                        .collect::<Result<_, PatchError>>()?,
                ),
                Matcher::NetRemoved(p) => Engine::NetRemoved(compile(rule, p)?),
                Matcher::Number { patterns, floor } => Engine::Number {
                    patterns: patterns
                        .iter()
                        .map(|p| {
                            let mention = p.mention.map(|m| compile_one(rule.id, m)).transpose()?;
                            Ok((*p, compile_one(rule.id, p.pattern)?, mention))
                        })
                        .collect::<Result<_, PatchError>>()?,
                    floor,
                },
                Matcher::Replaced {
                    removed,
                    added,
                    added_in_property,
                    unless,
                } => Engine::Replaced {
                    removed: compile(rule, removed)?,
                    added: compile(rule, added)?,
                    added_in_property: compile(rule, added_in_property)?,
                    unless: compile(rule, unless)?,
                },
                Matcher::Tautology(p) => Engine::Tautology(compile(rule, p)?),
                Matcher::SourceEncoding => Engine::SourceEncoding,
                Matcher::OpaqueCode => Engine::OpaqueCode,
                Matcher::ModuleShadowed => Engine::ModuleShadowed,
            };
            rules.push(Compiled { rule, engine });
        }
        let helpers = Helpers {
            number: compile_one("number literal", NUMBER)?,
            definition: compile_one(
                "definition",
                r"\b(?:fn|def|class)\s+([A-Za-z_][A-Za-z0-9_]*)",
            )?,
            rust_assert_eq: compile_one(
                "assertion",
                r"\b(?:prop_|debug_)?assert_eq\s*!\s*[\(\[\{]",
            )?,
            rust_assert: compile_one("assertion", r"\b(?:prop_|debug_)?assert\s*!\s*[\(\[\{]")?,
            python_assert: compile_one("assertion", r"^\s*assert\b")?,
            // PEP 263's, as `tokenize.cookie_re` writes it (`re.ASCII`: `\w` is ASCII, as
            // the tokenizer's `Py_ISALNUM`).
            coding: compile_one(
                "coding declaration",
                r"^[ \t\x0c]*#.*?coding[:=][ \t]*([-A-Za-z0-9_.]+)",
            )?,
        };
        Ok(RuleSet { rules, helpers })
    }

    /// Every finding of every rule on one commit's property files, sorted. `tree` says
    /// whether a Rust file of the commit's tree is compiled (a crate root, or declared by a
    /// module that is): a property moved to a file nothing compiles is removed; and which
    /// files a folder holds, for the modules a new one may shadow.
    pub(crate) fn apply(
        &self,
        files: &[PropertyFile],
        min_cases: u64,
        tree: &dyn TreeView,
    ) -> Vec<RawFinding> {
        let compiled = &|path: &str| tree.compiled(path);
        let commit = CommitLines::new(files);
        let mut findings = Vec::new();
        for c in &self.rules {
            let rule = c.rule;
            let s = rule.strings;
            let of_kind = |l: &&LineRef<'_>| rule.kinds.contains(&l.kind);
            let judged = |l: &&LineRef<'_>| rule.judges_new_properties() || !commit.is_new(l);
            let added: Vec<&LineRef<'_>> = commit.added().filter(of_kind).collect();
            let added_judged: Vec<&LineRef<'_>> =
                added.iter().copied().filter(|l| judged(l)).collect();
            let removed: Vec<&LineRef<'_>> = commit.removed().filter(of_kind).collect();
            match &c.engine {
                Engine::PropertyRemoved => {
                    let shadowed = property_shadowed(rule, files, &mut findings);
                    property_removed(rule, files, compiled, &shadowed, &mut findings);
                }
                Engine::Added(patterns) => {
                    let mut pool = pool_of(removed.iter().copied(), s);
                    let mut statements = BTreeMap::new();
                    for l in &added {
                        let text = self.without_definitions(l.view(s));
                        let new = commit.is_new(l);
                        let exempt = new && !rule.judges_new_properties();
                        let header = new && l.is_header();
                        let applies = |p: &Pattern| {
                            p.kinds.contains(&l.kind)
                                && (p.scope == Scope::Anywhere || l.in_property)
                                && match p.in_new {
                                    InNew::Exempt => !exempt,
                                    InNew::Header => !exempt || header,
                                    InNew::Always => true,
                                    InNew::OnlyNew => new,
                                }
                        };
                        let hit = patterns.iter().any(|(p, r, unless)| {
                            applies(p)
                                && r.is_match(&text)
                                && !unless.as_ref().is_some_and(|u| u.is_match(&text))
                        }) || self.spans_lines_onto(
                            l,
                            s,
                            patterns,
                            &applies,
                            (exempt, header, new),
                            &mut statements,
                        );
                        if hit && !take(&mut pool, l, s) {
                            findings.push(finding(rule, l, rule.description.to_string()));
                        }
                    }
                }
                Engine::NetRemoved(patterns) => {
                    let gone: Vec<&LineRef<'_>> = removed
                        .iter()
                        .copied()
                        .filter(|l| matches_any(patterns, l.view(s)))
                        .collect();
                    let back: Vec<&LineRef<'_>> = added
                        .iter()
                        .copied()
                        .filter(|l| matches_any(patterns, l.view(s)))
                        .collect();
                    let deficit = gone.len().saturating_sub(back.len());
                    let mut group_deficit: BTreeMap<String, isize> = BTreeMap::new();
                    for l in &gone {
                        *group_deficit.entry(l.group()).or_default() += 1;
                    }
                    for l in &back {
                        *group_deficit.entry(l.group()).or_default() -= 1;
                    }
                    let mut pool = pool_of(back.iter().copied(), s);
                    let fresh: Vec<&LineRef<'_>> = gone
                        .into_iter()
                        .filter(|l| !take(&mut pool, l, s))
                        .collect();
                    let mut fired: BTreeSet<(usize, &str, u32)> = BTreeSet::new();
                    for (i, l) in fresh.iter().enumerate().take(deficit) {
                        fired.insert((i, l.path, l.number));
                    }
                    for (i, l) in fresh.iter().enumerate() {
                        if let Some(n) = group_deficit.get_mut(&l.group())
                            && *n > 0
                        {
                            *n -= 1;
                            fired.insert((i, l.path, l.number));
                        }
                    }
                    for (i, _, _) in fired {
                        findings.push(finding(rule, fresh[i], rule.description.to_string()));
                    }
                }
                Engine::Number { patterns, floor } => {
                    for (p, regex, mention) in patterns {
                        let found = Occurrences {
                            helpers: &self.helpers,
                            kinds: rule.kinds,
                            strings: s,
                            regex,
                            mention: mention.as_ref(),
                        };
                        let new = found.collect(&commit.new_sides);
                        let old = found.collect(&commit.old_sides);
                        number_rule(
                            rule,
                            p,
                            new,
                            old,
                            &commit,
                            floor.then_some(min_cases),
                            &mut findings,
                        );
                    }
                }
                Engine::Replaced {
                    removed: strong_patterns,
                    added: weak_patterns,
                    added_in_property: local_patterns,
                    unless,
                } => {
                    let strong = |l: &LineRef<'_>| {
                        let v = l.statement(s);
                        matches_any(strong_patterns, v)
                            && !matches_any(weak_patterns, v)
                            && !matches_any(local_patterns, v)
                            && !matches_any(unless, v)
                    };
                    let mut balance: BTreeMap<String, isize> = BTreeMap::new();
                    let mut total = 0isize;
                    for l in removed.iter().filter(|l| strong(l)) {
                        *balance.entry(l.group()).or_default() += 1;
                        total += 1;
                    }
                    for l in added.iter().filter(|l| strong(l)) {
                        *balance.entry(l.group()).or_default() -= 1;
                        total -= 1;
                    }
                    let mut pool = pool_of(removed.iter().copied(), s);
                    for l in &added_judged {
                        let v = l.statement(s);
                        let weak = matches_any(weak_patterns, v);
                        let local = !l.names.is_empty() && matches_any(local_patterns, v);
                        if !(weak || local) || matches_any(unless, v) {
                            continue;
                        }
                        let in_group = balance.get(&l.group()).is_some_and(|n| *n > 0);
                        let weakened = in_group || (weak && total > 0);
                        if weakened && !take(&mut pool, l, s) {
                            findings.push(finding(rule, l, rule.description.to_string()));
                        }
                    }
                }
                Engine::Tautology(patterns) => {
                    let mut pool = pool_of(removed.iter().copied(), s);
                    for l in &added_judged {
                        let (code, bare) = l.statement_views();
                        let hit = matches_any(patterns, l.statement(s))
                            || self.compares_with_itself(l.kind, code, bare)
                            || (l.kind == FileKind::Python && self.asserts_a_tuple(bare));
                        if hit && !take(&mut pool, l, s) {
                            findings.push(finding(rule, l, rule.description.to_string()));
                        }
                    }
                }
                Engine::SourceEncoding => self.source_encoding(rule, files, &mut findings),
                Engine::OpaqueCode => opaque_code(rule, files, &mut findings),
                Engine::ModuleShadowed => module_shadowed(rule, files, tree, &mut findings),
            }
        }
        // An exact comparison replaced by one with a loose tolerance is one move: the line
        // that `tolerance-added` names is not also a `tolerance-widened` against the
        // keyword's default.
        let added: std::collections::BTreeSet<(String, u32)> = findings
            .iter()
            .filter(|f| f.rule == "tolerance-added")
            .map(|f| (f.file.clone(), f.line))
            .collect();
        findings.retain(|f| {
            f.rule != "tolerance-widened" || !added.contains(&(f.file.clone(), f.line))
        });
        findings.sort();
        findings.dedup();
        findings
    }

    /// The text with the names that `fn`, `def` and `class` define blanked: a test named
    /// `prop_retry_delay` is not a retry (a pytest hook, `def pytest_…`, keeps its name).
    fn without_definitions<'t>(&self, text: &'t str) -> std::borrow::Cow<'t, str> {
        if !self.helpers.definition.is_match(text) {
            return std::borrow::Cow::Borrowed(text);
        }
        let mut out = text.to_string();
        for c in self.helpers.definition.captures_iter(text) {
            // A pytest hook's name is what it does.
            if let Some(name) = c.get(1).filter(|n| !n.as_str().starts_with("pytest_")) {
                out.replace_range(name.range(), &" ".repeat(name.len()));
            }
        }
        std::borrow::Cow::Owned(out)
    }

    /// Whether a pattern matches across lines of the Python statement `l` belongs to, and the
    /// match covers part of `l` (`except (\n    AssertionError\n):` read as one statement).
    /// The matches of a statement are found once per rule (`cache`), however many of its
    /// lines changed.
    fn spans_lines_onto(
        &self,
        l: &LineRef<'_>,
        s: Strings,
        patterns: &[(Pattern, Regex, Option<Regex>)],
        applies: &dyn Fn(&Pattern) -> bool,
        place: (bool, bool, bool),
        cache: &mut BTreeMap<StatementKey, Vec<std::ops::Range<usize>>>,
    ) -> bool {
        let Some(st) = &l.logical else {
            return false;
        };
        // `place` (the line's standing in a new property) decides `applies` with `in_property`.
        let key = (Rc::as_ptr(&st.statement) as usize, l.in_property, place);
        let matches = cache.entry(key).or_insert_with(|| {
            let view = match s {
                Strings::Blanked => &st.statement.bare,
                Strings::Kept => &st.statement.code,
            };
            let text = self.without_definitions(view);
            patterns
                .iter()
                .filter(|(p, _, _)| applies(p))
                .flat_map(|(_, r, _)| r.find_iter(&text).map(|m| m.range()).collect::<Vec<_>>())
                .collect()
        });
        let (from, to) = (st.range.start, st.range.end);
        matches.iter().any(|m| {
            let several_lines = m.start < from || m.end > to;
            several_lines && m.start < to && m.end > from
        })
    }

    /// Whether a Python assertion tests a non-empty tuple, which always holds
    /// (`assert (total == fresh, "totals differ")`).
    fn asserts_a_tuple(&self, bare: &str) -> bool {
        let Some(m) = self.helpers.python_assert.find(bare) else {
            return false;
        };
        let open = m.end() + (bare[m.end()..].len() - bare[m.end()..].trim_start().len());
        if bare.as_bytes().get(open) != Some(&b'(') {
            return false;
        }
        let Some(close) = super::props::matching_close(bare, open) else {
            return false;
        };
        let after = bare[close + 1..].trim_start();
        if !(after.is_empty() || after.starts_with(',')) {
            return false;
        }
        let parts = top_level_split(bare, open + 1, b',');
        parts.len() >= 2
            && parts
                .first()
                .is_some_and(|p| !bare[p.clone()].trim().is_empty())
    }

    /// A finding for each Python file the commit changes whose effective source encoding
    /// ([`RuleSet::effective_encoding`]) is one the gate does not read (not UTF-8, ASCII or
    /// Latin-1), when the commit adds lines to the file or makes that encoding take effect: a
    /// commit that only deletes a code line 1 above a `# coding: utf-7` on line 2 turns it on.
    /// The gate reads the bytes as UTF-8, and in another encoding a comment can hold a newline
    /// and code (`+AAo-` in UTF-7). A file that already had the encoding before is not the
    /// commit's move unless the commit adds lines to it.
    fn source_encoding(&self, rule: &Rule, files: &[PropertyFile], findings: &mut Vec<RawFinding>) {
        for f in files {
            let (Some(path), Some(text)) = (&f.new_path, &f.new_text) else {
                continue;
            };
            if FileKind::of(path) != FileKind::Python {
                continue;
            }
            let after = self.effective_encoding(text);
            let SourceEncoding::Declared { line, name } = &after else {
                continue;
            };
            if is_read_encoding(name) {
                continue;
            }
            // No text before (a new file, a link turned into one): every line is added.
            let turned_on = f
                .old_text
                .as_deref()
                .is_none_or(|old| self.effective_encoding(old).normalized() != after.normalized());
            if f.added.is_empty() && !turned_on {
                continue;
            }
            let how = if f.added.is_empty() {
                "; the commit adds no line, but makes Python honour the declaration"
            } else {
                ""
            };
            findings.push(RawFinding {
                file: path.clone(),
                line: *line,
                rule: rule.id,
                explanation: format!(
                    "{}: `{name}` (read only as UTF-8, ASCII or Latin-1){how}",
                    rule.description
                ),
            });
        }
    }

    /// CPython's effective source encoding of a Python file, from its text as
    /// [`super::props::source_text`] gives it (lossy UTF-8, line ends made `\n`, as CPython's
    /// tokenizer reads them): a UTF-8 byte order mark first; else a PEP 263 declaration
    /// (`^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)`, `\w` ASCII) on line 1, or on line 2 only when
    /// line 1 is blank or only a comment (nothing but spaces, tabs and form feeds before a `#`
    /// or the line's end: the tokenizer's `check_coding_spec`); else UTF-8.
    pub(crate) fn effective_encoding(&self, text: &str) -> SourceEncoding {
        if text.starts_with('\u{feff}') {
            return SourceEncoding::Bom;
        }
        for (line, number) in text.split('\n').take(2).zip(1u32..) {
            if let Some(name) = self.helpers.coding.captures(line).and_then(|c| c.get(1)) {
                return SourceEncoding::Declared {
                    line: number,
                    name: name.as_str().to_string(),
                };
            }
            let rest = line.trim_start_matches([' ', '\t', '\x0c']);
            if !(rest.is_empty() || rest.starts_with('#')) {
                break;
            }
        }
        SourceEncoding::Default
    }

    /// Whether the line is an assertion whose two sides are the same expression
    /// (`assert x == x`, `prop_assert_eq!(a, a)`, `assert!(n <= n)`). `code` and `bare` are the
    /// same line with and without string contents; structure is read from `bare`.
    fn compares_with_itself(&self, kind: FileKind, code: &str, bare: &str) -> bool {
        let h = &self.helpers;
        let same = |a: std::ops::Range<usize>, b: std::ops::Range<usize>| {
            let (x, y) = (squash(&code[a]), squash(&code[b]));
            !x.is_empty() && x == y
        };
        match kind {
            FileKind::Rust => {
                if let Some(m) = h.rust_assert_eq.find(bare) {
                    let args = top_level_split(bare, m.end(), b',');
                    return args.len() >= 2 && same(args[0].clone(), args[1].clone());
                }
                if let Some(m) = h.rust_assert.find(bare) {
                    let args = top_level_split(bare, m.end(), b',');
                    return args
                        .first()
                        .and_then(|a| comparison_sides(bare, a.clone()))
                        .is_some_and(|(l, r)| same(l, r));
                }
                false
            }
            FileKind::Python => {
                let Some(m) = h.python_assert.find(bare) else {
                    return false;
                };
                let args = top_level_split(bare, m.end(), b',');
                args.first()
                    .map(|a| unparenthesize(bare, a.clone()))
                    .and_then(|a| comparison_sides(bare, a))
                    .is_some_and(|(l, r)| same(l, r))
            }
            FileKind::Other => false,
        }
    }
}

/// The ranges of the comma-separated parts of `text` from `from` up to the bracket closing an
/// enclosing one (or the end), split at `sep` outside brackets.
fn top_level_split(text: &str, from: usize, sep: u8) -> Vec<std::ops::Range<usize>> {
    let bytes = text.as_bytes();
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = from;
    let mut i = from;
    while i < bytes.len() {
        match bytes[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                if depth == 0 {
                    break;
                }
                depth -= 1;
            }
            b if b == sep && depth == 0 => {
                parts.push(start..i);
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    parts.push(start..i);
    parts
}

/// `range` without one pair of brackets around all of it.
fn unparenthesize(text: &str, range: std::ops::Range<usize>) -> std::ops::Range<usize> {
    let part = &text[range.clone()];
    let lead = part.len() - part.trim_start().len();
    let trimmed = part.trim();
    if trimmed.starts_with('(') && trimmed.ends_with(')') {
        let open = range.start + lead;
        if super::props::matching_close(text, open) == Some(open + trimmed.len() - 1) {
            return open + 1..open + trimmed.len() - 1;
        }
    }
    range
}

/// The two sides of the first comparison (`==`, `<=`, `>=`, Python `is`) outside brackets.
fn comparison_sides(
    text: &str,
    range: std::ops::Range<usize>,
) -> Option<(std::ops::Range<usize>, std::ops::Range<usize>)> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    for i in range.clone() {
        match bytes[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'=' | b'<' | b'>' if depth == 0 => {
                let next = bytes.get(i + 1).copied();
                let prev = i.checked_sub(1).map(|p| bytes[p]);
                let two = next == Some(b'=') && bytes.get(i + 2) != Some(&b'=');
                let clean_prev = !matches!(prev, Some(b'=' | b'!' | b'<' | b'>'));
                if two && clean_prev && i + 2 <= range.end {
                    return Some((range.start..i, i + 2..range.end));
                }
            }
            b'i' if depth == 0 => {
                let word = |at: usize| {
                    bytes
                        .get(at)
                        .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
                };
                let standalone = text[i..range.end].starts_with("is")
                    && !word(i + 2)
                    && (i == 0 || !word(i - 1));
                if standalone && !text[i + 2..range.end].trim_start().starts_with("not") {
                    return Some((range.start..i, i + 2..range.end));
                }
            }
            _ => {}
        }
    }
    None
}

/// One added or removed line with its file, its views and where it sits.
#[derive(Debug)]
struct LineRef<'a> {
    path: &'a str,
    kind: FileKind,
    number: u32,
    text: &'a str,
    /// Comments blanked.
    code: String,
    /// Comments and string contents blanked.
    bare: String,
    /// The property tests of the innermost span holding the line (none outside properties).
    names: Vec<String>,
    /// The property tests of each span holding the line.
    covering: Vec<Vec<String>>,
    /// Whether the line is in a property span.
    in_property: bool,
    /// Python: the statement (logical line) the line belongs to, when its file is at hand.
    logical: Option<StatementRef>,
}

/// A Python statement over several lines, joined by blanks.
#[derive(Debug)]
struct Statement {
    /// Comments blanked.
    code: String,
    /// Comments and string contents blanked.
    bare: String,
}

/// A line's place in its statement.
#[derive(Debug)]
struct StatementRef {
    statement: Rc<Statement>,
    /// The line's bytes in the joined text.
    range: std::ops::Range<usize>,
    /// The first changed line of its statement (on its side of the change).
    first: bool,
}

impl LineRef<'_> {
    fn view(&self, strings: Strings) -> &str {
        match strings {
            Strings::Blanked => &self.bare,
            Strings::Kept => &self.code,
        }
    }

    /// The line as a statement: for Python, the first changed line of a statement stands for
    /// the whole of it and the other changed lines of the statement for nothing; otherwise
    /// the line itself.
    fn statement(&self, strings: Strings) -> &str {
        let (code, bare) = self.statement_views();
        match strings {
            Strings::Blanked => bare,
            Strings::Kept => code,
        }
    }

    /// [`LineRef::statement`], with and without string contents.
    fn statement_views(&self) -> (&str, &str) {
        match &self.logical {
            Some(st) if st.first => (&st.statement.code, &st.statement.bare),
            Some(_) => ("", ""),
            None => (&self.code, &self.bare),
        }
    }

    /// Whether a Python line is part of a decorator or a `def` line (its signature, default
    /// arguments included): code Python runs when it imports the module.
    fn is_header(&self) -> bool {
        if self.kind != FileKind::Python {
            return false;
        }
        let head = match &self.logical {
            Some(st) => st.statement.code.trim_start(),
            None => self.code.trim_start(),
        };
        head.starts_with('@')
            || head.starts_with("def ")
            || head
                .strip_prefix("async")
                .is_some_and(|r| r.trim_start().starts_with("def "))
    }

    /// What a line's assertions are weighed against: its property, else its file.
    fn group(&self) -> String {
        if self.names.is_empty() {
            format!("file {}", self.path)
        } else {
            format!("property {}", self.names.join(","))
        }
    }
}

/// One side (before or after) of one property file.
struct Side<'a> {
    path: &'a str,
    kind: FileKind,
    /// The whole file's views, when the text is at hand and every changed line is where its
    /// number says.
    views: Option<Views>,
    spans: Vec<Span>,
    /// The changed lines.
    lines: Vec<LineRef<'a>>,
}

impl<'a> Side<'a> {
    fn new(path: &'a str, text: Option<&'a str>, changed: &'a [Line]) -> Side<'a> {
        let kind = FileKind::of(path);
        let whole = text.map(|t| views(kind, t));
        let spans = text.map(|t| property_spans(kind, t)).unwrap_or_default();
        let raw: Vec<&str> = text.map(|t| t.split('\n').collect()).unwrap_or_default();
        let code: Vec<&str> = whole
            .as_ref()
            .map(|v| v.code.split('\n').collect())
            .unwrap_or_default();
        let bare: Vec<&str> = whole
            .as_ref()
            .map(|v| v.bare.split('\n').collect())
            .unwrap_or_default();
        let trim_cr = |s: &str| s.strip_suffix('\r').unwrap_or(s).to_string();
        let mut aligned = whole.is_some();
        let starts = match (kind, text) {
            (FileKind::Python, Some(t)) => logical_starts(kind, t),
            _ => Vec::new(),
        };
        // Per line: the first line of its statement and its offset in the joined statement;
        // per statement start: its last line.
        let usable = !starts.is_empty() && starts.len() == code.len() && code.len() == bare.len();
        let mut place: Vec<(usize, usize)> = Vec::new();
        let mut last_of: BTreeMap<usize, usize> = BTreeMap::new();
        if usable {
            let mut first_line = 0;
            let mut offset = 0;
            for (i, start) in starts.iter().enumerate() {
                if *start {
                    first_line = i;
                    offset = 0;
                }
                place.push((first_line, offset));
                last_of.insert(first_line, i);
                offset += code[i].len() + 1;
            }
        }
        let mut statements: BTreeMap<usize, Rc<Statement>> = BTreeMap::new();
        let mut statement_of = |i: usize| -> Option<StatementRef> {
            let (first_line, offset) = *place.get(i)?;
            let last_line = last_of.get(&first_line).copied().unwrap_or(i);
            let first = !statements.contains_key(&first_line);
            let statement = statements
                .entry(first_line)
                .or_insert_with(|| {
                    Rc::new(Statement {
                        code: code[first_line..=last_line].join(" "),
                        bare: bare[first_line..=last_line].join(" "),
                    })
                })
                .clone();
            Some(StatementRef {
                statement,
                range: offset..offset + code[i].len(),
                first,
            })
        };
        let lines = changed
            .iter()
            .map(|l| {
                let at = (l.number as usize).checked_sub(1);
                let here = at.filter(|i| {
                    raw.get(*i).is_some_and(|r| trim_cr(r) == trim_cr(&l.text))
                        && code.get(*i).is_some()
                        && bare.get(*i).is_some()
                });
                aligned &= here.is_some();
                let (code, bare, span, logical) = match here {
                    Some(i) => (
                        code[i].to_string(),
                        bare[i].to_string(),
                        innermost(&spans, l.number),
                        statement_of(i),
                    ),
                    None => {
                        let v = views(kind, &l.text);
                        (v.code, v.bare, None, None)
                    }
                };
                let covering = match span {
                    Some(_) => spans
                        .iter()
                        .filter(|s| s.start <= l.number && l.number <= s.end)
                        .map(|s| s.names.clone())
                        .collect(),
                    None => Vec::new(),
                };
                LineRef {
                    path,
                    kind,
                    number: l.number,
                    text: &l.text,
                    code,
                    bare,
                    names: span.map(|s| s.names.clone()).unwrap_or_default(),
                    covering,
                    in_property: span.is_some(),
                    logical,
                }
            })
            .collect();
        Side {
            path,
            kind,
            views: whole.filter(|_| aligned),
            spans,
            lines,
        }
    }

    fn names(&self) -> impl Iterator<Item = &String> {
        self.spans.iter().flat_map(|s| &s.names)
    }
}

/// A Python statement (its address), whether its line is in a property, and its standing in
/// a new property (exempt, header, new): what decides which patterns apply to it.
type StatementKey = (usize, bool, (bool, bool, bool));

/// The start of a Rust attribute, outer or inner.
static RUST_ATTRIBUTE: LazyLock<Regex> = LazyLock::new(|| {
    #[allow(clippy::expect_used)] // a constant pattern, checked by every test that judges Rust
    Regex::new(r"#\s*!?\s*\[").expect("constant pattern compiles")
});

/// The innermost span holding a line: the one that starts last.
fn innermost(spans: &[Span], line: u32) -> Option<&Span> {
    spans
        .iter()
        .filter(|s| s.start <= line && line <= s.end)
        .max_by_key(|s| (s.start, std::cmp::Reverse(s.end)))
}

struct CommitLines<'a> {
    new_sides: Vec<Side<'a>>,
    old_sides: Vec<Side<'a>>,
    /// The property tests before and after the commit, by name.
    before: BTreeSet<String>,
    after: BTreeSet<String>,
}

impl<'a> CommitLines<'a> {
    fn new(files: &'a [PropertyFile]) -> Self {
        let mut new_sides = Vec::new();
        let mut old_sides = Vec::new();
        for f in files {
            if let Some(path) = f.new_path.as_deref() {
                new_sides.push(Side::new(path, f.new_text.as_deref(), &f.added));
            }
            if let Some(path) = f.old_path.as_deref() {
                old_sides.push(Side::new(path, f.old_text.as_deref(), &f.removed));
            }
        }
        let before = old_sides.iter().flat_map(Side::names).cloned().collect();
        let after = new_sides.iter().flat_map(Side::names).cloned().collect();
        CommitLines {
            new_sides,
            old_sides,
            before,
            after,
        }
    }

    /// Whether the line belongs only to property tests the commit adds: its innermost span is
    /// new properties', and so is every other span holding it but those that hold these
    /// properties (a `proptest!` block, a `mod`): a line can close a new property and start an
    /// old one. Rust attribute text never is: an attribute at the end of a new property's last
    /// line applies to the item after it.
    fn is_new(&self, l: &LineRef<'_>) -> bool {
        let fresh = |names: &[String]| names.iter().all(|n| !self.before.contains(n));
        !l.names.is_empty()
            && fresh(&l.names)
            && l.covering
                .iter()
                .all(|c| fresh(c) || l.names.iter().all(|n| c.contains(n)))
            && !(l.kind == FileKind::Rust && RUST_ATTRIBUTE.is_match(&l.bare))
    }

    fn added(&self) -> impl Iterator<Item = &LineRef<'a>> {
        self.new_sides.iter().flat_map(|s| &s.lines)
    }

    fn removed(&self) -> impl Iterator<Item = &LineRef<'a>> {
        self.old_sides.iter().flat_map(|s| &s.lines)
    }
}

fn matches_any(patterns: &[Regex], code: &str) -> bool {
    patterns.iter().any(|r| r.is_match(code))
}

fn pool_of<'a>(
    lines: impl Iterator<Item = &'a LineRef<'a>>,
    strings: Strings,
) -> BTreeMap<String, usize> {
    let mut pool = BTreeMap::new();
    for l in lines {
        *pool.entry(squash(l.view(strings))).or_insert(0) += 1;
    }
    pool
}

/// Takes the line's text out of the pool; `true` when it was there (a moved or unchanged line).
fn take(pool: &mut BTreeMap<String, usize>, l: &LineRef<'_>, strings: Strings) -> bool {
    match pool.get_mut(&squash(l.view(strings))) {
        Some(n) if *n > 0 => {
            *n -= 1;
            true
        }
        _ => false,
    }
}

fn excerpt(text: &str) -> String {
    let t = text.trim();
    let mut out: String = t.chars().take(80).collect();
    if t.chars().count() > 80 {
        out.push('…');
    }
    out
}

fn finding(rule: &Rule, l: &LineRef<'_>, what: String) -> RawFinding {
    RawFinding {
        file: l.path.to_string(),
        line: l.number,
        rule: rule.id,
        explanation: format!("{what}: `{}`", excerpt(l.text)),
    }
}

/// One value of a number setting that a commit touches.
#[derive(Debug, Clone)]
struct Occurrence<'a> {
    path: &'a str,
    /// The changed line it is reported at.
    line: u32,
    text: String,
    /// The value, when it is one number literal.
    value: Option<f64>,
    /// How the value is written.
    shown: String,
    /// The property tests it belongs to.
    names: Vec<String>,
}

/// Finds the occurrences of one number setting on the changed lines of some sides.
struct Occurrences<'h> {
    helpers: &'h Helpers,
    kinds: &'static [FileKind],
    strings: Strings,
    regex: &'h Regex,
    mention: Option<&'h Regex>,
}

impl Occurrences<'_> {
    fn collect<'a>(&self, sides: &'a [Side<'a>]) -> Vec<Occurrence<'a>> {
        let mut out = Vec::new();
        for side in sides.iter().filter(|s| self.kinds.contains(&s.kind)) {
            match &side.views {
                Some(v) => {
                    let view = match self.strings {
                        Strings::Blanked => &v.bare,
                        Strings::Kept => &v.code,
                    };
                    let changed: BTreeMap<u32, &LineRef<'_>> =
                        side.lines.iter().map(|l| (l.number, l)).collect();
                    self.scan(view, 1, &changed, &side.spans, side.path, &mut out);
                }
                None => {
                    for l in &side.lines {
                        let changed = BTreeMap::from([(l.number, l)]);
                        self.scan(
                            l.view(self.strings),
                            l.number,
                            &changed,
                            &[],
                            side.path,
                            &mut out,
                        );
                    }
                }
            }
        }
        out
    }

    /// Scans `view` (whose first line is line `first`) for values touching a changed line.
    fn scan<'a>(
        &self,
        view: &str,
        first: u32,
        changed: &BTreeMap<u32, &LineRef<'_>>,
        spans: &[Span],
        path: &'a str,
        out: &mut Vec<Occurrence<'a>>,
    ) {
        let lines = Lines::of(view);
        let line_at = |offset: usize| -> u32 { first.saturating_add(lines.line(offset) - 1) };
        let touched = |from: usize, to: usize| -> Option<&LineRef<'_>> {
            (line_at(from)..=line_at(to)).find_map(|n| changed.get(&n).copied())
        };
        let names = |offset: usize| -> Vec<String> {
            innermost(spans, line_at(offset))
                .map(|s| s.names.clone())
                .unwrap_or_default()
        };
        let mut value_starts = Vec::new();
        for caps in self.regex.captures_iter(view) {
            let (Some(whole), Some(value)) = (caps.get(0), caps.get(1)) else {
                continue;
            };
            value_starts.push(whole.start());
            let Some(l) = touched(whole.start(), value.end()) else {
                continue;
            };
            let literal = literal_value(&self.helpers.number, value.as_str());
            out.push(Occurrence {
                path,
                line: l.number,
                text: l.text.to_string(),
                value: literal.as_ref().map(|(v, _)| *v),
                shown: literal.map_or_else(|| value.as_str().trim().to_string(), |(_, t)| t),
                names: names(whole.start()),
            });
        }
        for m in self.mention.iter().flat_map(|r| r.find_iter(view)) {
            if value_starts
                .iter()
                .any(|s| (m.start()..=m.end()).contains(s))
            {
                continue;
            }
            let Some(l) = touched(m.start(), m.end()) else {
                continue;
            };
            out.push(Occurrence {
                path,
                line: l.number,
                text: l.text.to_string(),
                value: None,
                shown: squash(&l.code),
                names: names(m.start()),
            });
        }
    }
}

/// Words after a number that make it part of an expression rather than the value.
const EXPRESSION_WORDS: &[&str] = &[
    "if", "else", "or", "and", "not", "in", "is", "for", "match", "when",
];

/// The value of a setting when it is one number literal (quotes, `_` and a type suffix
/// allowed; followed by nothing, a quote, or a word that is not an operator such as a shell
/// command); with the literal's text.
fn literal_value(number: &Regex, value: &str) -> Option<(f64, String)> {
    let c = number.captures(value)?;
    let (whole, digits) = (c.get(0)?, c.get(1)?);
    let rest = &value[whole.end()..];
    if rest
        .chars()
        .next()
        .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
    {
        return None;
    }
    let t = rest.trim_start();
    let word: String = t
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    let plain = t.is_empty()
        || t.starts_with(['"', '\''])
        || (rest.starts_with(char::is_whitespace)
            && t.starts_with(char::is_alphabetic)
            && !EXPRESSION_WORDS.contains(&word.as_str()));
    if !plain {
        return None;
    }
    let v: f64 = digits.as_str().replace('_', "").parse().ok()?;
    v.is_finite().then(|| (v, digits.as_str().to_string()))
}

/// Takes the first occurrence left that `pred` accepts.
fn find<'a>(
    old: &mut [Option<Occurrence<'a>>],
    pred: &dyn Fn(&Occurrence<'a>) -> bool,
) -> Option<Occurrence<'a>> {
    let at = old.iter().position(|o| o.as_ref().is_some_and(pred))?;
    old[at].take()
}

fn number_rule(
    rule: &Rule,
    p: &NumberPattern,
    new: Vec<Occurrence<'_>>,
    old: Vec<Occurrence<'_>>,
    commit: &CommitLines<'_>,
    floor: Option<u64>,
    findings: &mut Vec<RawFinding>,
) {
    let same_property = |a: &[String], b: &[String]| a.iter().any(|n| b.contains(n));
    let same_place = |a: &Occurrence<'_>, b: &Occurrence<'_>| {
        same_property(&a.names, &b.names) || (a.names.is_empty() && b.names.is_empty())
    };
    let same_value = |a: &Occurrence<'_>, b: &Occurrence<'_>| match (a.value, b.value) {
        (Some(x), Some(y)) => x == y,
        (None, None) => squash(&a.shown) == squash(&b.shown),
        _ => false,
    };
    let mut old: Vec<Option<Occurrence<'_>>> = old.into_iter().map(Some).collect();
    // 1. An equal value in the same place: a setting reformatted or unchanged.
    let mut left = Vec::new();
    for n in new {
        if find(&mut old, &|o| same_place(&n, o) && same_value(&n, o)).is_none() {
            left.push(n);
        }
    }
    // 2. The value of the same property test before.
    let mut pairs: Vec<(Occurrence<'_>, Option<Occurrence<'_>>)> = Vec::new();
    let mut unpaired = Vec::new();
    for n in left {
        match find(&mut old, &|o| same_property(&n.names, &o.names)) {
            Some(o) => pairs.push((n, Some(o))),
            None => unpaired.push(n),
        }
    }
    // 3. An equal value anywhere: a moved setting. 4. A property the commit adds is new;
    // other values pair in order with what is left outside properties.
    for n in unpaired {
        if find(&mut old, &|o| same_value(&n, o)).is_some() {
            continue;
        }
        let fresh = !n.names.is_empty() && n.names.iter().all(|x| !commit.before.contains(x));
        let o = if fresh {
            None
        } else {
            find(&mut old, &|o| n.names.is_empty() || o.names.is_empty())
        };
        pairs.push((n, o));
    }
    let (weaker, verb) = match p.weaker {
        Weaker::Lower => (f64::lt as fn(&f64, &f64) -> bool, "lowered"),
        Weaker::Higher => (f64::gt as fn(&f64, &f64) -> bool, "widened"),
    };
    let setting = p.setting;
    let report = |findings: &mut Vec<RawFinding>, o: &Occurrence<'_>, what: String| {
        findings.push(RawFinding {
            file: o.path.to_string(),
            line: o.line,
            rule: rule.id,
            explanation: format!("{what}: `{}`", excerpt(&o.text)),
        });
    };
    for (n, o) in &pairs {
        let Some(v) = n.value else {
            if floor.is_some() || o.as_ref().is_some_and(|o| o.value.is_some()) {
                let what = format!(
                    "{setting} set to `{}`, which the gate cannot judge",
                    n.shown
                );
                report(findings, n, what);
            }
            continue;
        };
        let before = match o {
            Some(o) => o.value.map(|b| (b, o.shown.clone())),
            None => {
                let existing =
                    !n.names.is_empty() && n.names.iter().any(|x| commit.before.contains(x));
                p.default
                    .filter(|_| existing)
                    .map(|d| (d, format!("the default {d}")))
            }
        };
        if let Some((b, shown)) = before
            && weaker(&v, &b)
        {
            report(
                findings,
                n,
                format!("{setting} {verb} from {shown} to {}", n.shown),
            );
            continue;
        }
        if let Some(min) = floor
            && v < min as f64
        {
            let what = format!("{setting} {} is below min_cases {min}", n.shown);
            report(findings, n, what);
        }
    }
    if let Some(default) = p.default {
        for o in old.iter().flatten() {
            let kept = o.names.is_empty() || o.names.iter().any(|x| commit.after.contains(x));
            if let Some(v) = o.value
                && kept
                && weaker(&default, &v)
            {
                let what = format!(
                    "explicit {setting} {} removed: the default {default} applies",
                    o.shown
                );
                report(findings, o, what);
            }
        }
    }
}

/// Whether the test runner collects properties from a file of this path: a Python file only
/// under pytest's default `python_files` (`test_*.py`, `*_test.py`).
fn collects(kind: FileKind, path: &str) -> bool {
    kind != FileKind::Python || is_pytest_file(path)
}

/// A Python file's source encoding as CPython decides it ([`RuleSet::effective_encoding`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SourceEncoding {
    /// No byte order mark and no declaration Python honours: UTF-8.
    Default,
    /// A UTF-8 byte order mark: UTF-8 (with a declaration of another encoding, Python refuses
    /// the file).
    Bom,
    /// The declaration Python honours: its 1-based line and the encoding it names.
    Declared {
        /// The line, 1 or 2.
        line: u32,
        /// The name as written.
        name: String,
    },
}

impl SourceEncoding {
    /// The encoding's name, lowercase with `-` for `_` (`utf-8` for the default and a byte
    /// order mark), to tell whether two files are decoded alike: two spellings of one codec
    /// (`utf7`, `utf-7`) count as two.
    fn normalized(&self) -> String {
        match self {
            SourceEncoding::Default | SourceEncoding::Bom => "utf-8".to_string(),
            SourceEncoding::Declared { name, .. } => name.to_ascii_lowercase().replace('_', "-"),
        }
    }
}

/// Whether an encoding named in a coding declaration is one the gate reads the bytes of
/// correctly: the UTF-8 and Latin-1 names Python itself normalises, and ASCII.
fn is_read_encoding(name: &str) -> bool {
    let n = name.to_ascii_lowercase().replace('_', "-");
    let family = |base: &str| n == base || n.starts_with(&format!("{base}-"));
    ["utf-8", "latin-1", "iso-8859-1", "iso-latin-1"]
        .iter()
        .any(|b| family(b))
        || [
            "utf8",
            "latin1",
            "l1",
            "ascii",
            "us-ascii",
            "iso8859-1",
            "646",
        ]
        .contains(&n.as_str())
}

/// A finding for each file the commit adds or changes (its new side under `property_paths`)
/// that Python or a native loader would run but the gate cannot read ([`Matcher::OpaqueCode`]),
/// and for each symbolic link or submodule it adds, retargets or turns a file into there.
///
/// A link is a finding wherever it points, even at a regular file under `property_paths`:
/// what it stands for is another path of the tree (or of the machine), a folder Python takes
/// for a package or a `__pycache__`, which the rules would have to resolve as the file system
/// does; a link in property code is rare enough that a signature is the cheaper answer.
fn opaque_code(rule: &Rule, files: &[PropertyFile], findings: &mut Vec<RawFinding>) {
    for f in files {
        let Some(path) = &f.new_path else {
            continue;
        };
        let explanation = if let Some(entry) = f.new_entry.unread() {
            format!(
                "{}: `{path}` is {entry}: the gate does not read what it stands for (a module, a package or a `__pycache__` folder Python would follow it to), so have a human sign the commit",
                rule.description
            )
        } else if let Some(why) = super::modules::opaque_by_name(path).or(f.new_binary.then_some(
            "a binary file (a NUL byte in its first 8000 bytes, as git's diff tells one)",
        )) {
            unread_file(rule.description, path, why)
        } else {
            continue;
        };
        findings.push(RawFinding {
            file: path.clone(),
            line: 0,
            rule: rule.id,
            explanation,
        });
    }
}

/// An `opaque-code` explanation for a file the gate cannot read: `description`, the path and
/// `why` it is opaque.
fn unread_file(description: &str, path: &str, why: &str) -> String {
    format!(
        "{description}: `{path}` is {why}; nothing in it is read, so have a human sign the commit"
    )
}

/// The description of the rule `id` of [`RULES`], for findings made outside [`RuleSet::apply`].
fn description_of(id: &str) -> &'static str {
    RULES
        .iter()
        .find(|r| r.id == id)
        .map_or("", |r| r.description)
}

/// The `module-shadowed` findings of module files a commit adds to the folders its oracles'
/// Python searches before the standard library (`paths`, each with whether it lies under
/// `property_paths`): every new import name there, since any import of it in the oracle's
/// process loads the new file, the standard library's own imports included (`copy` tries
/// `org.python.core`); a test file pytest collects by its name (`test_*.py`, `*_test.py`,
/// `conftest.py`) excepted. Under `property_paths` the rules' own `module-shadowed` gives the
/// standard-library and sibling reasons; outside it they are given here.
pub(crate) fn module_shadowed_at(paths: &[(String, bool)], tree: &dyn TreeView) -> Vec<RawFinding> {
    let names_in = |folder: &str| tree.names_in(folder);
    let description = description_of("module-shadowed");
    let mut findings = Vec::new();
    for (path, property) in paths {
        let reasons = super::modules::shadowed_by(path, &names_in);
        let finding = |why: String| RawFinding {
            file: path.clone(),
            line: 0,
            rule: "module-shadowed",
            explanation: format!(
                "{description}: {why} (an oracle runs Python with this folder ahead of the standard library)"
            ),
        };
        if !reasons.is_empty() {
            if !property {
                findings.extend(reasons.into_iter().map(finding));
            }
            continue;
        }
        let Some(name) = super::modules::provisions(path)
            .into_iter()
            .map(|p| p.name)
            .find(|n| n != "__init__")
        else {
            continue;
        };
        let collected = name.starts_with("test_") || name.ends_with("_test") || name == "conftest";
        if !collected {
            findings.push(finding(format!(
                "`{path}` is a new module `{name}`, and any import of `{name}` in the oracle's process loads it, the standard library's own too (`copy` tries `org.python.core`)"
            )));
        }
    }
    findings
}

/// The `opaque-code` findings of compiled bytecode a commit adds or changes outside
/// `property_paths` (`paths`, each with why): Python runs a `__pycache__` file, or a
/// sourceless `.pyc`, in place of a source file, wherever it lies, and nobody commits one on
/// purpose.
pub(crate) fn bytecode_anywhere(paths: &[(String, &'static str)]) -> Vec<RawFinding> {
    let description = description_of("opaque-code");
    paths
        .iter()
        .map(|(path, why)| RawFinding {
            file: path.clone(),
            line: 0,
            rule: "opaque-code",
            explanation: unread_file(description, path, why),
        })
        .collect()
}

/// The `opaque-code` findings of symbolic links and submodules a commit brings, under an
/// importable name, to the folders its oracles' Python searches before the standard library
/// (outside `property_paths`): a link `json -> vendor/fastjson` at the root is what
/// `import json` loads there, and the gate does not follow it.
pub(crate) fn opaque_links_at(links: &[(String, Entry)]) -> Vec<RawFinding> {
    let description = description_of("opaque-code");
    links
        .iter()
        .map(|(path, entry)| {
            let what = entry.unread().unwrap_or("a symbolic link");
            RawFinding {
                file: path.clone(),
                line: 0,
                rule: "opaque-code",
                explanation: format!(
                    "{description}: `{path}` is {what} under a name Python could import, in a folder an oracle runs Python with ahead of the standard library: the gate does not read what it stands for, so have a human sign the commit"
                ),
            }
        })
        .collect()
}

/// A finding for each reason a module file the commit adds takes an import name another
/// module answers to ([`Matcher::ModuleShadowed`]).
fn module_shadowed(
    rule: &Rule,
    files: &[PropertyFile],
    tree: &dyn TreeView,
    findings: &mut Vec<RawFinding>,
) {
    let names_in = |folder: &str| tree.names_in(folder);
    for f in files {
        let Some(path) = f.new_path.as_ref().filter(|_| f.new_is_added) else {
            continue;
        };
        for why in super::modules::shadowed_by(path, &names_in) {
            findings.push(RawFinding {
                file: path.clone(),
                line: 0,
                rule: rule.id,
                explanation: format!("{}: {why}", rule.description),
            });
        }
    }
}

/// A property test that a later binding of its name in its module or class now replaces
/// (pytest collects only what the name is bound to last), where the commit's old files had no
/// such replacement of that name: reported at the property's line, naming the binding. Returns
/// the (file, name) pairs reported, whose `property-removed` finding this one is.
fn property_shadowed(
    rule: &Rule,
    files: &[PropertyFile],
    findings: &mut Vec<RawFinding>,
) -> BTreeSet<(String, String)> {
    let mut reported = BTreeSet::new();
    let mut before: BTreeMap<String, usize> = BTreeMap::new();
    for f in files {
        if let (Some(path), Some(text)) = (&f.old_path, &f.old_text) {
            let kind = FileKind::of(path);
            if rule.kinds.contains(&kind) && collects(kind, path) {
                for d in shadowed_properties(kind, text) {
                    *before.entry(d.name).or_insert(0) += 1;
                }
            }
        }
    }
    for f in files {
        if let (Some(path), Some(text)) = (&f.new_path, &f.new_text) {
            let kind = FileKind::of(path);
            if !(rule.kinds.contains(&kind) && collects(kind, path)) {
                continue;
            }
            for d in shadowed_properties(kind, text) {
                match before.get_mut(&d.name) {
                    Some(n) if *n > 0 => *n -= 1,
                    _ => {
                        findings.push(RawFinding {
                            file: path.clone(),
                            line: d.line,
                            rule: rule.id,
                            explanation: format!(
                                "{}: `{}` is bound again at line {} by {}, and pytest collects \
                                 only the last binding of a name",
                                rule.description, d.name, d.by, d.form
                            ),
                        });
                        reported.insert((path.clone(), d.name));
                    }
                }
            }
        }
    }
    reported
}

fn property_removed(
    rule: &Rule,
    files: &[PropertyFile],
    compiled: &dyn Fn(&str) -> bool,
    shadowed: &BTreeSet<(String, String)>,
    findings: &mut Vec<RawFinding>,
) {
    // Each property before, with its file's path before and after the commit.
    let mut before: Vec<(&str, Option<&str>, PropertyDef)> = Vec::new();
    // Where each name is defined after the commit (a path per definition).
    let mut after: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for f in files {
        if let (Some(path), Some(text)) = (&f.old_path, &f.old_text) {
            let kind = FileKind::of(path);
            if rule.kinds.contains(&kind) && collects(kind, path) {
                before.extend(
                    properties(kind, text)
                        .into_iter()
                        .map(|d| (path.as_str(), f.new_path.as_deref(), d)),
                );
            }
        }
        if let (Some(path), Some(text)) = (&f.new_path, &f.new_text) {
            let kind = FileKind::of(path);
            if rule.kinds.contains(&kind) && collects(kind, path) {
                for d in properties(kind, text) {
                    after.entry(d.name).or_default().push(path.as_str());
                }
            }
        }
    }
    // First the properties that stay in their file (renamed or not), then the moved ones.
    let mut moved = Vec::new();
    for (path, new_path, def) in before {
        let places = after.entry(def.name.clone()).or_default();
        match places.iter().position(|p| Some(*p) == new_path) {
            Some(at) => {
                places.remove(at);
                if new_path != Some(path) {
                    moved.push((path, new_path.unwrap_or(path), def, true));
                }
            }
            None => moved.push((path, new_path.unwrap_or(path), def, false)),
        }
    }
    // `same_file`: the property file's path after the commit.
    for (path, same_file, def, renamed) in moved {
        let to = if renamed {
            Some(same_file)
        } else {
            let places = after.entry(def.name.clone()).or_default();
            (!places.is_empty()).then(|| places.remove(0))
        };
        let explanation = match to {
            // Still defined in its file, but bound again after: `property_shadowed` says so.
            None if shadowed.contains(&(same_file.to_string(), def.name.clone())) => continue,
            None => format!("{}: `{}` is gone", rule.description, def.name),
            Some(to) if FileKind::of(to) == FileKind::Rust && !compiled(to) => format!(
                "{}: `{}` moved to {to}, which neither a crate root `cargo test` runs nor a `mod` declaration or an `include!` compiles",
                rule.description, def.name
            ),
            Some(_) => continue,
        };
        findings.push(RawFinding {
            file: path.to_string(),
            line: def.line,
            rule: rule.id,
            explanation,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patch::diff::all_lines;
    use proptest::prelude::*;

    #[test]
    fn property_removed_is_the_first_rule() {
        assert_eq!(PROPERTY_REMOVED.id, "property-removed");
        assert!(matches!(PROPERTY_REMOVED.matcher, Matcher::PropertyRemoved));
    }

    /// Compiled once: compiling the table is the slow part in a debug build.
    static RULE_SET: LazyLock<RuleSet> = LazyLock::new(|| RuleSet::new().unwrap());

    /// Lines that some rule fires on when they are new.
    const RISKY_RUST: &[&str] = &[
        "proptest! {",
        "#![proptest_config(ProptestConfig::with_cases(10))]",
        "fn prop_total(x in 0u32..10) {",
        "prop_assume!(x == 0);",
        "prop_assert_eq!(x, x);",
        "prop_assert!(x >= 0);",
        "let t = std::time::Instant::now();",
        "std::thread::sleep(std::time::Duration::from_millis(1));",
        "let r = std::panic::catch_unwind(|| 1);",
        "static CACHE: OnceLock<u32> = OnceLock::new();",
        "assert!((a - b).abs() < 1e-3);",
        "}",
    ];
    const RISKY_PY: &[&str] = &[
        "@given(st.integers())",
        "@settings(max_examples=10, deadline=None)",
        "def test_total(x):",
        "assume(x > 0)",
        "assert x == x",
        "assert x >= 0",
        "except Exception:",
        "time.sleep(1)",
        "@pytest.mark.skip",
        "@pytest.fixture(scope=\"session\")",
        "now = time.time()",
    ];

    fn file(old_path: &str, new_path: &str, old: &str, new: &str) -> PropertyFile {
        PropertyFile {
            old_path: Some(old_path.to_string()),
            new_path: Some(new_path.to_string()),
            old_text: Some(old.to_string()),
            new_text: Some(new.to_string()),
            added: all_lines(new),
            removed: all_lines(old),
            ..PropertyFile::default()
        }
    }

    fn text(vocabulary: &[&str], picks: &[usize], indents: &[usize]) -> (String, String) {
        let mut old = String::new();
        let mut new = String::new();
        for (i, pick) in picks.iter().enumerate() {
            let line = vocabulary[pick % vocabulary.len()];
            old.push_str(&format!("    {line}\n"));
            new.push_str(&format!(
                "{}{line}\n",
                " ".repeat(indents[i % indents.len()])
            ));
        }
        (old, new)
    }

    /// Text a patch could hold: the lexers' hard cases (quotes of every kind, raw-string
    /// hashes, comment openers, braces, backslashes, line ends) among any characters.
    fn hostile_text() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("\"".to_owned()),
            Just("'".to_owned()),
            Just("\"\"\"".to_owned()),
            Just("r#\"".to_owned()),
            Just("\"#".to_owned()),
            Just("b'".to_owned()),
            Just("f\"{".to_owned()),
            Just("//".to_owned()),
            Just("/*".to_owned()),
            Just("*/".to_owned()),
            Just("#".to_owned()),
            Just("\\".to_owned()),
            Just("\n".to_owned()),
            Just("\r\n".to_owned()),
            Just("{".to_owned()),
            Just("}".to_owned()),
            Just("(".to_owned()),
            Just(")".to_owned()),
            Just("proptest! {".to_owned()),
            Just("fn p(x in 0..9) {".to_owned()),
            Just("@given(st.integers())\ndef test_p(x):".to_owned()),
            Just("max_examples=".to_owned()),
            Just("assert x == y".to_owned()),
            Just("prop_assume!(".to_owned()),
            any::<String>(),
        ];
        proptest::collection::vec(piece, 0..40).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// A patch's property files are the attacker's text: whatever it holds, the engine
        /// answers (findings or none) and never panics.
        #[test]
        fn any_text_is_judged_without_a_panic(
            old in hostile_text(),
            new in hostile_text(),
            kind in 0usize..3,
        ) {
            let path = ["tests/a.rs", "py/test_a.py", "ci/cases.sh"][kind];
            let found = RULE_SET.apply(&[file(path, path, &old, &new)], 50, &|_: &str| true);
            let mut sorted = found.clone();
            sorted.sort();
            prop_assert_eq!(found, sorted);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn reindenting_or_moving_risky_code_is_never_a_finding(
            picks in proptest::collection::vec(0usize..100, 1..30),
            indents in proptest::collection::vec(0usize..9, 1..5),
            python in any::<bool>(),
        ) {
            let (vocabulary, old_path, new_path) = if python {
                (RISKY_PY, "py/test_a.py", "py/test_b.py")
            } else {
                (RISKY_RUST, "tests/a.rs", "tests/b.rs")
            };
            // Python's indentation is its structure (a `def` indented under an `except:` is
            // in that block, and pytest may never see it): only a shift of every line alike
            // is a mere reindentation there.
            let indents = if python { &indents[..1] } else { &indents[..] };
            let (old, new) = text(vocabulary, &picks, indents);
            let rules = &*RULE_SET;
            // Every line removed and re-added with other indentation, in the same file…
            let same = rules.apply(&[file(old_path, old_path, &old, &new)], 50, &|_: &str| true);
            prop_assert_eq!(same, Vec::new());
            // …or moved to another file of the commit.
            let moved = rules.apply(&[file(old_path, new_path, &old, &new)], 50, &|_: &str| true);
            prop_assert_eq!(moved, Vec::new());
        }

        #[test]
        fn a_new_risky_line_always_fires_and_findings_are_sorted(
            picks in proptest::collection::vec(0usize..100, 1..20),
            insert in 0usize..20,
        ) {
            let (old, _) = text(RISKY_RUST, &picks, &[4]);
            let mut lines: Vec<&str> = old.lines().collect();
            let at = insert.min(lines.len());
            lines.insert(at, "    prop_assume!(novel_condition(x));");
            let new = lines.join("\n") + "\n";
            let mut f = file("tests/a.rs", "tests/a.rs", &old, &new);
            f.removed.clear();
            f.added = vec![Line { number: u32::try_from(at + 1).unwrap(), text: lines[at].to_string() }];
            let found = RULE_SET.apply(&[f], 50, &|_: &str| true);
            prop_assert!(found.iter().any(|x| x.rule == "assume-added" && x.line == u32::try_from(at + 1).unwrap()));
            let mut sorted = found.clone();
            sorted.sort();
            prop_assert_eq!(found, sorted);
        }
    }

    #[test]
    fn every_rule_pattern_compiles_and_ids_are_unique() {
        RuleSet::new().unwrap();
        let mut ids: Vec<&str> = RULES.iter().map(|r| r.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), RULES.len());
    }

    #[test]
    fn comments_are_not_code_and_strings_do_not_start_comments() {
        let code = |kind: FileKind, line: &str| kind.code(line).trim_end().to_string();
        assert_eq!(
            code(FileKind::Rust, "let x = 1; // prop_assume!(x)"),
            "let x = 1;"
        );
        assert_eq!(code(FileKind::Python, "x = 1  # time.sleep(1)"), "x = 1");
        assert_eq!(code(FileKind::Rust, "#[test]"), "#[test]");
        // A `//` or `#` inside a literal is not a comment.
        for (kind, line) in [
            (FileKind::Rust, r#"let _u = "a//b"; prop_assume!(x == 7);"#),
            (
                FileKind::Rust,
                r##"let _u = r#"//"#; prop_assume!(x == 7);"##,
            ),
            (
                FileKind::Rust,
                r##"let _u = cr#"\"#; prop_assume!(x == 7);"##,
            ),
            (
                FileKind::Rust,
                r#"let _c = '"'; prop_assume!(x == 7); // "x"#,
            ),
            (FileKind::Python, "label = '#'; assume(x == 12345)"),
            (FileKind::Python, r##"label = "#"; assume(x == 12345)"##),
            (
                FileKind::Python,
                r##"label = f"{'#'}"; assume(x == 12345)"##,
            ),
            (
                FileKind::Python,
                r##"label = f"{ "#" }"; assume(x == 12345)"##,
            ),
            (FileKind::Python, "label = '''#'''; assume(x == 12345)"),
            (FileKind::Other, "X='#'; export PROPTEST_CASES=1"),
        ] {
            let c = kind.code(line);
            assert!(
                c.contains("(x ==") || c.contains("PROPTEST_CASES=1"),
                "{line} -> {c}"
            );
        }
    }

    /// One commit changing a file from `old` to `new`, judged by the table.
    fn judge(path: &str, old: &str, new: &str) -> Vec<(&'static str, u32)> {
        let changes = crate::patch::diff::text_changes(old, new);
        let f = PropertyFile {
            old_path: Some(path.to_string()),
            new_path: Some(path.to_string()),
            old_text: Some(old.to_string()),
            new_text: Some(new.to_string()),
            added: changes.added,
            removed: changes.removed,
            ..PropertyFile::default()
        };
        RULE_SET
            .apply(&[f], 50, &|_: &str| true)
            .into_iter()
            .map(|f| (f.rule, f.line))
            .collect()
    }

    #[test]
    fn the_effective_source_encoding_follows_cpythons_tokenizer() {
        let declared = |line: u32, name: &str| SourceEncoding::Declared {
            line,
            name: name.to_string(),
        };
        for (text, expect) in [
            ("x = 1\n", SourceEncoding::Default),
            ("", SourceEncoding::Default),
            // A byte order mark wins (another declaration is a syntax error for Python).
            ("\u{feff}# coding: utf-7\nx = 1\n", SourceEncoding::Bom),
            ("\u{feff}x = 1\n", SourceEncoding::Bom),
            // Line 1.
            ("# coding: utf-7\nx = 1\n", declared(1, "utf-7")),
            ("# -*- coding: utf-7 -*-\n", declared(1, "utf-7")),
            ("  \t\x0c#coding=utf_7", declared(1, "utf_7")),
            (
                "# vim: set fileencoding=latin-1 :\n",
                declared(1, "latin-1"),
            ),
            // The first `coding[:=]` followed by a name, as the tokenizer searches.
            ("# coding: , coding=utf-7\n", declared(1, "utf-7")),
            // The name's characters are ASCII (`Py_ISALNUM`, `re.ASCII`).
            ("# coding: utf-7\u{e9}x\n", declared(1, "utf-7")),
            // Line 2 after a comment line 1, a shebang, a blank one or one of spaces.
            (
                "#!/usr/bin/env python3\n# coding: utf-7\n",
                declared(2, "utf-7"),
            ),
            (
                "# notes\n# -*- coding: utf-7 -*-\nx = 1\n",
                declared(2, "utf-7"),
            ),
            ("\n# coding: utf-7\n", declared(2, "utf-7")),
            (" \t\x0c\n# coding: utf-7\n", declared(2, "utf-7")),
            // Not after a code line 1, not even a comment after code.
            ("import os\n# coding: utf-7\n", SourceEncoding::Default),
            ("x = 1  # coding: utf-7\n", SourceEncoding::Default),
            // A vertical tab is not one of the tokenizer's blanks.
            ("\x0b\n# coding: utf-7\n", SourceEncoding::Default),
            // Line 3 never counts, nor a declaration outside a comment.
            ("#\n#\n# coding: utf-7\n", SourceEncoding::Default),
            ("coding = 'utf-7'\n", SourceEncoding::Default),
            ("s = '# coding: utf-7'\n", SourceEncoding::Default),
            // Line 1's declaration stands, whatever line 2 says.
            ("# coding: utf-8\n# coding: utf-7\n", declared(1, "utf-8")),
        ] {
            assert_eq!(RULE_SET.effective_encoding(text), expect, "{text:?}");
        }
    }

    #[test]
    fn source_encoding_fires_when_a_commit_makes_an_unread_encoding_take_effect() {
        let path = "tests/properties/test_calc.py";
        let body = "def test_p():\n    # sum +AAo-    return\n    assert 1 + 1 == 2\n";
        let inert = format!("from __future__ import annotations\n# -*- coding: utf-7 -*-\n{body}");
        let honoured = format!("# -*- coding: utf-7 -*-\n{body}");
        // Adding the declaration under a code line: Python ignores it, nothing to say.
        assert_eq!(judge(path, body, &inert), vec![]);
        // Deleting line 1 only turns it on.
        assert_eq!(judge(path, &inert, &honoured), vec![("source-encoding", 1)]);
        // So does deleting a code line 1 above a comment line and the declaration.
        let under_shebang = format!("#!/usr/bin/env python3\nimport os\n# coding: utf-7\n{body}");
        let shebang = format!("#!/usr/bin/env python3\n# coding: utf-7\n{body}");
        assert_eq!(
            judge(path, &under_shebang, &shebang),
            vec![("source-encoding", 2)]
        );
        // A file that already had it: a deletion is not the commit's move ...
        let longer = format!("{honoured}\nLIMIT = 10\n");
        assert_eq!(judge(path, &longer, &honoured), vec![]);
        // ... nor a rename with no change ...
        let renamed = PropertyFile {
            old_path: Some(path.to_string()),
            new_path: Some("tests/properties/test_sum.py".to_string()),
            old_text: Some(honoured.clone()),
            new_text: Some(honoured.clone()),
            ..PropertyFile::default()
        };
        assert!(
            RULE_SET
                .apply(std::slice::from_ref(&renamed), 50, &|_: &str| true)
                .is_empty()
        );
        // ... but it enters property_paths with every line added.
        let entered = PropertyFile {
            old_path: None,
            old_text: None,
            added: all_lines(&honoured),
            ..renamed
        };
        let found = RULE_SET.apply(&[entered], 50, &|_: &str| true);
        assert_eq!(found.len(), 1, "{found:?}");
        // And adding lines to it still is, as before.
        assert_eq!(
            judge(path, &honoured, &longer),
            vec![("source-encoding", 1)]
        );
        // Encodings the gate reads, turned on or not, are nothing.
        let latin = format!("import os\n# coding: latin-1\n{body}");
        assert_eq!(
            judge(path, &latin, &latin.replacen("import os\n", "", 1)),
            vec![]
        );
    }

    #[test]
    fn a_line_that_starts_inside_a_multi_line_literal_is_read_as_one() {
        let old = "proptest! {\n    #[test]\n    fn p(x in 0u32..9) {\n        prop_assert!(x < 9);\n    }\n}\n";
        let new = "proptest! {\n    #[test]\n    fn p(x in 0u32..9) {\n        let _s = \"\n\"; prop_assume!(x == 7);\n        prop_assert!(x < 9);\n    }\n}\n";
        assert_eq!(judge("tests/a.rs", old, new), vec![("assume-added", 5)]);
        let old = "@given(st.integers())\ndef test_p(x):\n    assert x < 9\n";
        let new = "@given(st.integers())\ndef test_p(x):\n    s = '''\n'''; assume(x == 7)\n    assert x < 9\n";
        assert_eq!(judge("py/test_a.py", old, new), vec![("assume-added", 4)]);
        // A message or a doc string saying "sleep(" or "flaky" is not code.
        let new = "@given(st.integers())\ndef test_p(x):\n    \"\"\"No sleep(1), not flaky.\"\"\"\n    assert x < 9, \"flaky retry\"\n";
        assert_eq!(judge("py/test_a.py", old, new), vec![]);
    }

    #[test]
    fn case_counts_are_read_across_lines_and_as_literals_only() {
        let old = "@settings(max_examples=500)\n@given(st.integers())\ndef test_p(x):\n    assert x < 9\n";
        for (new, expect) in [
            ("@settings(max_examples=\n    60)\n", true),
            ("@settings(max_examples=\n    600)\n", false),
            ("@settings(max_examples=500 // 500)\n", true),
            ("@settings(max_examples=N_EXAMPLES)\n", true),
            ("@settings(max_examples=5_000)  # 500 // 10\n", false),
        ] {
            let text = old.replacen("@settings(max_examples=500)\n", new, 1);
            let found = judge("py/test_a.py", old, &text);
            assert_eq!(
                found.iter().any(|f| f.0 == "cases-lowered"),
                expect,
                "{new}: {found:?}"
            );
        }
        for (value, expect) in [
            ("1000", Some(1000.0)),
            ("\"64\"", Some(64.0)),
            ("64 cargo test", Some(64.0)),
            ("1_000u32", Some(1000.0)),
            (".5", Some(0.5)),
            ("200 / 100", None),
            ("1000.min(n)", None),
            ("${N:-1}", None),
            ("200 if ci else 1", None),
            ("inf", None),
        ] {
            let found = literal_value(&RULE_SET.helpers.number, value).map(|v| v.0);
            assert_eq!(found, expect, "{value}");
        }
    }

    #[test]
    fn assertions_comparing_an_expression_with_itself_are_vacuous() {
        let rs = &*RULE_SET;
        let vacuous = |kind: FileKind, line: &str| {
            let v = views(kind, line);
            rs.compares_with_itself(kind, &v.code, &v.bare)
        };
        assert!(vacuous(FileKind::Python, "assert x == x"));
        assert!(vacuous(FileKind::Python, "assert (f(a) >= f( a )), 'msg'"));
        assert!(vacuous(
            FileKind::Rust,
            "prop_assert_eq!(total, total, \"same\");"
        ));
        assert!(vacuous(FileKind::Rust, "assert!(v.len() <= v.len());"));
        assert!(!vacuous(FileKind::Python, "assert x == y"));
        assert!(!vacuous(FileKind::Python, "assert x is not x"));
        assert!(!vacuous(FileKind::Rust, "assert_eq!(f(\"a\"), f(\"b\"));"));
        assert!(!vacuous(FileKind::Rust, "assert_eq!(a, a + 1);"));
    }

    /// A module property `test_x` (line 6) and a method `test_m` of `TestCls` (line 12).
    const SHADOW_BASE: &str = "from hypothesis import given, strategies as st
import sys


@given(st.integers())
def test_x(x):
    assert x == x


class TestCls:
    @given(st.integers())
    def test_m(self, x):
        assert x == x
";

    /// The `property-removed` findings on `py/test_a.py` after `new` replaces `old`: line and
    /// explanation.
    fn removals(old: &str, new: &str) -> Vec<(u32, String)> {
        let path = "py/test_a.py";
        RULE_SET
            .apply(&[file(path, path, old, new)], 50, &|_: &str| true)
            .into_iter()
            .filter(|f| f.rule == "property-removed")
            .map(|f| (f.line, f.explanation))
            .collect()
    }

    #[test]
    fn a_later_binding_of_a_property_name_in_its_scope_removes_it() {
        // (what the commit appends at module level, the property line, the binding's line in
        // the appended text, a word of the form).
        let module: &[(&str, u32, u32, &str)] = &[
            ("test_x = None", 6, 1, "test_x = …"),
            ("test_x: object = None", 6, 1, "test_x: … = …"),
            ("test_x += 1", 6, 1, "test_x += …"),
            ("a, test_x = 1, 2", 6, 1, "test_x = …"),
            ("(test_x := None)", 6, 1, ":="),
            ("x = 1; test_x = None", 6, 1, "test_x = …"),
            ("if True:\n    test_x = None", 6, 2, "test_x = …"),
            ("del test_x", 6, 1, "del test_x"),
            ("import os as test_x", 6, 1, "import"),
            ("from os import test_x", 6, 1, "from … import test_x"),
            ("from os import (path as test_x,)", 6, 1, "from … import"),
            ("for test_x in range(1):\n    pass", 6, 1, "for test_x in"),
            (
                "with open(__file__) as test_x:\n    pass",
                6,
                1,
                "as test_x",
            ),
            (
                "try:\n    pass\nexcept Exception as test_x:\n    pass",
                6,
                3,
                "except … as test_x",
            ),
            (
                "def _hide():\n    global test_x\n    test_x = None\n\n\n_hide()",
                6,
                3,
                "global test_x",
            ),
            ("globals()[\"test_x\"] = None", 6, 1, "globals()"),
            ("globals().update(test_x=None)", 6, 1, "globals().update"),
            (
                "setattr(sys.modules[__name__], \"test_x\", None)",
                6,
                1,
                "setattr(sys.modules[__name__]",
            ),
            ("def test_x():\n    pass", 6, 1, "def"),
            ("class test_x:\n    pass", 6, 1, "class"),
            (
                "setattr(TestCls, \"test_m\", None)",
                12,
                1,
                "setattr(TestCls",
            ),
            ("TestCls.test_m = None", 12, 1, "TestCls.test_m = …"),
            ("del TestCls.test_m", 12, 1, "del TestCls.test_m"),
        ];
        for (added, line, at, form) in module {
            let new = format!("{SHADOW_BASE}\n{added}\n");
            let by = 15 + at - 1;
            let found = removals(SHADOW_BASE, &new);
            assert_eq!(found.len(), 1, "{added}: {found:?}");
            assert_eq!(found[0].0, *line, "{added}: {found:?}");
            assert!(
                found[0].1.contains(&format!("line {by}")) && found[0].1.contains(form),
                "{added}: {found:?}"
            );
        }
        // In the class's own body, after the method.
        for (added, form) in [
            ("test_m = None", "test_m = …"),
            ("del test_m", "del test_m"),
            ("test_m = property(lambda self: 1)", "test_m = …"),
        ] {
            let new = format!("{SHADOW_BASE}    {added}\n");
            let found = removals(SHADOW_BASE, &new);
            assert_eq!(found.len(), 1, "{added}: {found:?}");
            assert_eq!(found[0].0, 12, "{added}: {found:?}");
            assert!(
                found[0].1.contains("line 14") && found[0].1.contains(form),
                "{added}: {found:?}"
            );
        }
    }

    #[test]
    fn a_binding_elsewhere_or_before_or_wrapping_a_property_leaves_it() {
        let appended = [
            "def helper():\n    test_x = 1\n    test_m = 2",
            "class Other:\n    test_x = 1\n    test_m = 2",
            "class TestOther:\n    test_m = None\n\n    def test_m(self):\n        pass",
            "def outer():\n    def inner():\n        global test_x2\n    test_x = inner",
            "test_x = settings(max_examples=500)(test_x)",
            "test_x = wrap(test_x)",
            "# test_x = None",
            "s = \"test_x = None\"",
            "test_x2 = 1",
            "test_x: int",
            "assert test_x == test_x",
            "print(test_x)",
            "Other.test_m = None",
            "setattr(Other, \"test_m\", None)",
            "setattr(sys.modules[__name__], \"test_x2\", None)",
            "globals()[\"test_x2\"] = None",
            "globals().update(test_xy=None)",
            "f = lambda test_x=1: test_x",
            "call(test_x=None)",
            "x = [test_x for test_x in range(3)]",
        ];
        for added in appended {
            let new = format!("{SHADOW_BASE}\n{added}\n");
            assert_eq!(removals(SHADOW_BASE, &new), vec![], "{added}");
        }
        // Bound before the `def`: the `def` wins.
        let before = SHADOW_BASE.replace(
            "\n\n@given",
            "\ntest_x = None\nimport os as test_x\n\n@given",
        );
        assert_eq!(removals(SHADOW_BASE, &before), vec![]);
        // Already shadowed before the commit: it was never a property, and an edit elsewhere
        // does not make it one.
        let shadowed = format!("{SHADOW_BASE}\ntest_x = None\n");
        let edited = shadowed.replace("import sys", "import sys\nimport os");
        assert_eq!(removals(&shadowed, &edited), vec![]);
    }

    #[test]
    fn removing_an_explicit_case_count_falls_back_to_a_lower_default() {
        let old = "#![proptest_config(ProptestConfig::with_cases(1000))]\n";
        let mut f = file("tests/a.rs", "tests/a.rs", old, "");
        f.added.clear();
        let found = RULE_SET.apply(&[f], 50, &|_: &str| true);
        assert_eq!(found.len(), 1);
        assert!(
            found[0].explanation.contains("default 256"),
            "{}",
            found[0].explanation
        );
    }

    /// A tree whose folders hold the given files (paths from the project folder).
    struct Folders(BTreeMap<String, Vec<String>>);

    impl Folders {
        fn of(files: &[&str]) -> Folders {
            Folders(crate::patch::modules::folder_names(files))
        }
    }

    impl TreeView for Folders {
        fn compiled(&self, _: &str) -> bool {
            true
        }

        fn names_in(&self, folder: &str) -> Vec<String> {
            self.0.get(folder).cloned().unwrap_or_default()
        }
    }

    /// A file the commit adds at `path`, with `text` (binary when it holds a NUL).
    fn added_file(path: &str, text: &str) -> PropertyFile {
        PropertyFile {
            new_path: Some(path.to_string()),
            new_text: Some(text.to_string()),
            added: all_lines(text),
            new_binary: crate::patch::modules::is_binary(text.as_bytes()),
            new_is_added: true,
            ..PropertyFile::default()
        }
    }

    /// The (rule, file) pairs of the opaque-code and module-shadowed findings.
    fn module_findings(files: &[PropertyFile], tree: &Folders) -> Vec<(&'static str, String)> {
        RULE_SET
            .apply(files, 50, tree)
            .into_iter()
            .filter(|f| matches!(f.rule, "opaque-code" | "module-shadowed"))
            .map(|f| {
                assert_eq!(f.line, 0, "{f:?}");
                (f.rule, f.file)
            })
            .collect()
    }

    #[test]
    fn files_python_would_run_but_the_gate_cannot_read_are_opaque_code() {
        let tree = Folders::of(&[]);
        for path in [
            "tests/properties/__pycache__/oracle.cpython-311.pyc",
            "tests/properties/__pycache__/oracle.cpython-311.opt-1.pyc",
            "tests/properties/helpers.pyc",
            "tests/properties/helpers.pyo",
            "tests/properties/fast.cpython-311-x86_64-linux-gnu.so",
            "tests/properties/libfast.so.1.2",
            "tests/properties/fast.pyd",
            "tests/properties/libfast.dylib",
            "tests/properties/fast.dll",
            "tests/properties/evil.pth",
        ] {
            // By its name, whatever its bytes (even text).
            let found = module_findings(&[added_file(path, "import os\n")], &tree);
            assert_eq!(found, vec![("opaque-code", path.to_string())], "{path}");
        }
        // Any other binary file, by its bytes; a modified one as much as an added one.
        let mut data = added_file("tests/properties/table.bin", "\0\x01\x02");
        assert_eq!(
            module_findings(&[data.clone()], &tree),
            vec![("opaque-code", "tests/properties/table.bin".to_string())]
        );
        data.old_path = data.new_path.clone();
        data.new_is_added = false;
        assert_eq!(module_findings(&[data], &tree).len(), 1);
        // Text files with ordinary names are read, not opaque.
        let text = added_file("tests/properties/table.csv", "a,b\n1,2\n");
        assert_eq!(module_findings(&[text], &tree), vec![]);
        // A deletion is not a finding.
        let deleted = PropertyFile {
            old_path: Some("tests/properties/__pycache__/oracle.cpython-311.pyc".into()),
            old_text: Some("\0".into()),
            ..PropertyFile::default()
        };
        assert_eq!(module_findings(&[deleted], &tree), vec![]);
    }

    #[test]
    fn a_symbolic_link_or_submodule_is_opaque_code_wherever_it_points() {
        let tree = Folders::of(&[]);
        for (path, entry, what) in [
            // A link to a package folder elsewhere, named like the standard library's.
            ("tests/properties/json", Entry::Link, "a symbolic link"),
            // A link to a folder of bytecode.
            (
                "tests/properties/__pycache__",
                Entry::Link,
                "a symbolic link",
            ),
            // Even a link to a regular file under `property_paths`.
            ("tests/properties/helper.py", Entry::Link, "a symbolic link"),
            ("tests/properties/vendor", Entry::Submodule, "a submodule"),
        ] {
            let added = PropertyFile {
                new_path: Some(path.to_string()),
                new_is_added: true,
                new_entry: entry,
                ..PropertyFile::default()
            };
            let found = RULE_SET.apply(std::slice::from_ref(&added), 50, &tree);
            assert_eq!(found.len(), 1, "{path}: {found:?}");
            assert_eq!((found[0].rule, found[0].line), ("opaque-code", 0));
            assert!(
                found[0]
                    .explanation
                    .contains(&format!("`{path}` is {what}"))
                    && found[0]
                        .explanation
                        .contains(": the gate does not read what it stands for"),
                "{}",
                found[0].explanation
            );
            // Retargeted, or a file turned into one: the same.
            let changed = PropertyFile {
                old_path: Some(path.to_string()),
                old_text: Some("x = 1\n".to_string()),
                new_is_added: false,
                ..added
            };
            assert_eq!(
                module_findings(&[changed], &tree),
                vec![("opaque-code", path.to_string())]
            );
            // Deleted: nothing.
            let deleted = PropertyFile {
                old_path: Some(path.to_string()),
                ..PropertyFile::default()
            };
            assert_eq!(module_findings(&[deleted], &tree), vec![]);
        }
        // A link turned back into a readable file is judged as a file.
        let file = added_file("tests/properties/helper.py", "x = 1\n");
        assert_eq!(module_findings(&[file], &tree), vec![]);
    }

    #[test]
    fn a_new_module_that_shadows_another_is_module_shadowed() {
        let shadowed = |path: &str, tree: &[&str]| {
            module_findings(&[added_file(path, "x = 1\n")], &Folders::of(tree))
                .into_iter()
                .filter(|(rule, _)| *rule == "module-shadowed")
                .count()
        };
        // The standard library's names, as a module file, a package or an extension.
        assert_eq!(
            shadowed("tests/properties/json.py", &["tests/properties/oracle.py"]),
            1
        );
        assert_eq!(shadowed("tests/properties/json/__init__.py", &[]), 1);
        assert_eq!(shadowed("tests/properties/random.abi3.so", &[]), 1);
        assert_eq!(shadowed("tests/properties/json.pyc", &[]), 1);
        // A package beside the module file of its name, and the other way round.
        let oracle = [
            "tests/properties/oracle.py",
            "tests/properties/oracle/__init__.py",
        ];
        assert_eq!(shadowed("tests/properties/oracle/__init__.py", &oracle), 1);
        assert_eq!(shadowed("tests/properties/oracle.py", &oracle), 1);
        // An extension module beside the source of its name.
        let ext = [
            "tests/properties/oracle.py",
            "tests/properties/oracle.cpython-311-x86_64-linux-gnu.so",
        ];
        assert_eq!(
            shadowed(
                "tests/properties/oracle.cpython-311-x86_64-linux-gnu.so",
                &ext
            ),
            1
        );
        // Not: a module alone, a sourceless `.pyc` beside its source, a namespace folder.
        assert_eq!(
            shadowed(
                "tests/properties/helpers.py",
                &["tests/properties/helpers.py"]
            ),
            0
        );
        assert_eq!(
            shadowed(
                "tests/properties/oracle.pyc",
                &["tests/properties/oracle.py", "tests/properties/oracle.pyc"]
            ),
            0
        );
        assert_eq!(
            shadowed(
                "tests/properties/oracle/data.py",
                &[
                    "tests/properties/oracle.py",
                    "tests/properties/oracle/data.py"
                ]
            ),
            0
        );
        // A module the commit only modifies shadows nothing new.
        let mut modified = added_file("tests/properties/json.py", "x = 2\n");
        modified.old_path = modified.new_path.clone();
        modified.new_is_added = false;
        assert_eq!(
            module_findings(&[modified], &Folders::of(&["tests/properties/json.py"])),
            vec![]
        );
    }
}
