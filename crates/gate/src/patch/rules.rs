//! The gaming-move rules, as data: one [`Rule`] per move of SPEC §9 step 2, and the engine that
//! applies the table to a commit's own change to its property files.
//!
//! Matching works on the *code* of a line (a Rust `//` or Python/config `#` comment is cut off)
//! and compares lines whitespace-free, so that a moved or re-indented line is not a new one.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;

use super::PatchError;
use super::diff::{Line, squash};
use super::props::{PropertyDef, properties};

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

    /// The code part of a line: the line without its trailing comment.
    fn code(self, line: &str) -> &str {
        let cut = match self {
            FileKind::Rust => line.find("//"),
            FileKind::Python | FileKind::Other => line
                .find('#')
                .filter(|_| !line.trim_start().starts_with("#[")),
        };
        cut.map_or(line, |i| &line[..i])
    }
}

const ALL: &[FileKind] = &[FileKind::Rust, FileKind::Python, FileKind::Other];
const CODE: &[FileKind] = &[FileKind::Rust, FileKind::Python];

/// Which way a number moves when the check gets weaker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weaker {
    /// A smaller number checks less (case counts, decimal places).
    Lower,
    /// A larger number checks less (tolerances).
    Higher,
}

/// A pattern whose first capture group is a number.
#[derive(Debug, Clone, Copy)]
pub struct NumberPattern {
    /// What the number is, for the explanation (`with_cases`, `tolerance`).
    pub setting: &'static str,
    /// The regex; group 1 is the number (`_` separators allowed).
    pub pattern: &'static str,
    /// Which way is weaker.
    pub weaker: Weaker,
    /// The value that applies when the setting is removed, if known: removing an explicit
    /// setting that was stronger than this is a weakening.
    pub default: Option<f64>,
}

/// How a rule reads a commit's added and removed lines.
#[derive(Debug, Clone, Copy)]
pub enum Matcher {
    /// A property test present before the commit is missing after it (across all property files
    /// of the commit, so a test moved between files or a renamed file is not a removal).
    PropertyRemoved,
    /// An added line matches, and its text (whitespace-free) is not one the commit removed.
    Added(&'static [&'static str]),
    /// The commit removes more matching lines than it adds; the removed lines not re-added fire.
    NetRemoved(&'static [&'static str]),
    /// A number moves the weaker way (paired removed → added, in order, after equal values
    /// cancel), an explicit setting is removed, or (with `floor`) an added value is below
    /// `min_cases`.
    Number {
        /// The patterns; each pattern index is its own setting.
        patterns: &'static [NumberPattern],
        /// Whether an added value below `min_cases` fires.
        floor: bool,
    },
    /// The commit removes more `removed`-matching lines than it adds back, and adds new lines
    /// matching `added`: these fire (an equality check turned into a weaker comparison).
    Replaced {
        /// What a strong line looks like.
        removed: &'static [&'static str],
        /// What its weaker replacement looks like.
        added: &'static [&'static str],
    },
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
    /// How it matches.
    pub matcher: Matcher,
}

/// The rule table (SPEC §9 step 2), in report order.
pub const RULES: &[Rule] = &[
    Rule {
        id: "property-removed",
        description: "a property test was removed",
        kinds: CODE,
        matcher: Matcher::PropertyRemoved,
    },
    Rule {
        id: "cases-lowered",
        description: "a case count was lowered or set below min_cases",
        kinds: ALL,
        matcher: Matcher::Number {
            patterns: &[
                NumberPattern {
                    setting: "with_cases",
                    pattern: r"\bwith_cases\s*\(\s*([0-9][0-9_]*)",
                    weaker: Weaker::Lower,
                    default: Some(256.0),
                },
                NumberPattern {
                    setting: "PROPTEST_CASES",
                    pattern: r#"\bPROPTEST_CASES\b["']?\s*[=:,]\s*["']?([0-9][0-9_]*)"#,
                    weaker: Weaker::Lower,
                    default: Some(256.0),
                },
                NumberPattern {
                    setting: "max_examples",
                    pattern: r"\bmax_examples\s*[=:]\s*([0-9][0-9_]*)",
                    weaker: Weaker::Lower,
                    default: Some(100.0),
                },
                NumberPattern {
                    setting: "cases",
                    pattern: r"\bcases\s*[:=]\s*([0-9][0-9_]*)",
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
        matcher: Matcher::Added(&[
            r"#\s*\[\s*ignore\b",
            r"#\s*\[\s*should_panic\b",
            r"#\s*\[\s*cfg_attr\s*\(.*\bignore\b",
            r"#\s*\[\s*cfg\s*\(\s*(?:any\s*\(\s*\)|not\s*\(\s*test\s*\)|FALSE\b|false\b)",
            r"\bimportorskip\s*\(",
            r"\bpytest\s*\.\s*mark\s*\.\s*skip(?:if)?\b",
            r"\bskipif\b",
            r"\bxfail\b",
            r"\bunittest\s*\.\s*skip\w*",
            r"@\s*skip(?:If|Unless)?\b",
            r"\bpytest\s*\.\s*skip\s*\(",
            r"\bskipTest\s*\(",
            r"--deselect\b",
        ]),
    },
    Rule {
        id: "catch-broadened",
        description: "exception or panic catching was broadened",
        kinds: CODE,
        matcher: Matcher::Added(&[
            r"\bcatch_unwind\b",
            r"\bexcept\s*:",
            r"\bexcept\s*\(?\s*(?:Base)?Exception\b",
            r"\bsuppress\s*\(\s*(?:Base)?Exception\b",
        ]),
    },
    Rule {
        id: "assertion-removed",
        description: "an assertion was removed",
        kinds: CODE,
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
        matcher: Matcher::Replaced {
            removed: &[
                r"\b(?:prop_|debug_)?assert_eq\s*!",
                r"\b(?:prop_|debug_)?assert\s*!\s*\(.*==",
                r"^\s*assert\b.*==",
                r"\bassertEqual\s*\(",
            ],
            added: &[
                r"\b(?:prop_|debug_)?assert\s*!\s*\(.*(?:>=|<=|!=|\s>\s|\s<\s)",
                r"\b(?:prop_|debug_)?assert_ne\s*!",
                r"^\s*assert\b.*(?:>=|<=|!=|\s>\s|\s<\s|\bin\b|\bis\s+not\b)",
                r"\bassert(?:Greater|Less|GreaterEqual|LessEqual|NotEqual|In|IsNotNone|True|AlmostEqual)\s*\(",
            ],
        },
    },
    Rule {
        id: "tolerance-widened",
        description: "a numeric tolerance was widened",
        kinds: ALL,
        matcher: Matcher::Number {
            patterns: &[
                NumberPattern {
                    setting: "tolerance",
                    pattern: r"\b(?:epsilon|eps|tol|tolerance|abs_tol|rel_tol|atol|rtol|rel|abs|delta|max_ulps|ulps)\s*[:=]\s*([0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][+-]?[0-9]+)?)",
                    weaker: Weaker::Higher,
                    default: None,
                },
                NumberPattern {
                    setting: "tolerance",
                    pattern: r"\b(?:EPS|EPSILON|TOL|TOLERANCE)\s*:\s*f(?:32|64)\s*=\s*([0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][+-]?[0-9]+)?)",
                    weaker: Weaker::Higher,
                    default: None,
                },
                NumberPattern {
                    setting: "tolerance",
                    pattern: r"\.abs\s*\(\s*\)\s*<=?\s*([0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][+-]?[0-9]+)?)",
                    weaker: Weaker::Higher,
                    default: None,
                },
                NumberPattern {
                    setting: "decimal places",
                    pattern: r"\bplaces\s*=\s*([0-9]+)",
                    weaker: Weaker::Lower,
                    default: Some(7.0),
                },
            ],
            floor: false,
        },
    },
    Rule {
        id: "assume-added",
        description: "a new assume or filter can make the property vacuous",
        kinds: CODE,
        matcher: Matcher::Added(&[
            r"\bprop_assume\s*!",
            r"\bassume\s*\(",
            r"\.\s*(?:prop_)?filter(?:_map)?\s*\(",
            r"\breject\s*\(\s*\)",
        ]),
    },
    Rule {
        id: "hypothesis-settings",
        description: "a Hypothesis setting that skips work was added or changed",
        kinds: &[FileKind::Python, FileKind::Other],
        matcher: Matcher::Added(&[
            r"\bphases\s*[=:]",
            r"\bsuppress_health_check\b",
            r"\bdeadline\s*[=:]",
        ]),
    },
    Rule {
        id: "shared-fixture",
        description: "a module- or session-wide fixture or shared state now feeds properties",
        kinds: CODE,
        matcher: Matcher::Added(&[
            r#"\bscope\s*=\s*["'](?:module|session|package|class)["']"#,
            r"\b(?:LazyLock|LazyCell|OnceLock|OnceCell|lazy_static\s*!|thread_local\s*!)",
            r"\bstatic\s+mut\b",
        ]),
    },
    Rule {
        id: "impure-property",
        description: "a property started reading the clock, the network or the environment",
        kinds: CODE,
        matcher: Matcher::Added(&[
            r"\b(?:SystemTime|Instant|Utc|Local|OffsetDateTime)\s*::\s*now(?:_utc|_local)?\b",
            r"\benv\s*::\s*vars?(?:_os)?\b",
            r"\benv\s*!\s*\(",
            r"\b(?:TcpStream|TcpListener|UdpSocket|ToSocketAddrs)\b",
            r"\b(?:reqwest|ureq|hyper)\s*::",
            r"\btime\s*\.\s*(?:time|time_ns|monotonic|monotonic_ns|perf_counter|perf_counter_ns)\s*\(",
            r"\b(?:datetime|date)\s*\.\s*(?:now|utcnow|today)\s*\(",
            r"\bos\s*\.\s*(?:environ|getenv)\b",
            r"\b(?:requests|httpx)\s*\.\s*(?:get|post|put|delete|head|patch|request|Session|Client|AsyncClient)\b",
            r"\bsocket\s*\.\s*(?:socket|create_connection|getaddrinfo)\b",
            r"\burllib\s*\.\s*request\b",
            r"^\s*(?:import|from)\s+(?:socket|requests|httpx|urllib|http\.client)\b",
            r"\bhttp\s*\.\s*client\b",
        ]),
    },
    Rule {
        id: "retry-or-sleep",
        description: "a retry or a sleep was added",
        kinds: ALL,
        matcher: Matcher::Added(&[
            r"(?i)retr(?:y|ies|ying)",
            r"\bsleep\s*\(",
            r"\bflaky\b",
            r"\breruns\b",
            r"\btenacity\b",
            r"\bbackoff\b",
        ]),
    },
];

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
}

/// A finding before it is attached to its commit.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct RawFinding {
    pub file: String,
    pub line: u32,
    pub rule: &'static str,
    pub explanation: String,
}

/// A rule with its patterns compiled.
struct Compiled {
    rule: &'static Rule,
    first: Vec<Regex>,
    second: Vec<Regex>,
}

/// The rule table, compiled once per check.
pub(crate) struct RuleSet {
    rules: Vec<Compiled>,
}

fn compile(rule: &'static Rule, patterns: &[&'static str]) -> Result<Vec<Regex>, PatchError> {
    patterns
        .iter()
        .map(|p| {
            Regex::new(p).map_err(|source| PatchError::RulePattern {
                rule: rule.id,
                pattern: p,
                source: Box::new(source),
            })
        })
        .collect()
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
            let (first, second) = match rule.matcher {
                Matcher::PropertyRemoved => (Vec::new(), Vec::new()),
                Matcher::Added(p) | Matcher::NetRemoved(p) => (compile(rule, p)?, Vec::new()),
                Matcher::Number { patterns, .. } => {
                    let p: Vec<&'static str> = patterns.iter().map(|n| n.pattern).collect();
                    (compile(rule, &p)?, Vec::new())
                }
                Matcher::Replaced { removed, added } => {
                    (compile(rule, removed)?, compile(rule, added)?)
                }
            };
            rules.push(Compiled {
                rule,
                first,
                second,
            });
        }
        Ok(RuleSet { rules })
    }

    /// Every finding of every rule on one commit's property files, sorted.
    pub(crate) fn apply(&self, files: &[PropertyFile], min_cases: u64) -> Vec<RawFinding> {
        let lines = CommitLines::new(files);
        let mut findings = Vec::new();
        for c in &self.rules {
            let rule = c.rule;
            let added: Vec<&LineRef<'_>> = lines
                .added
                .iter()
                .filter(|l| rule.kinds.contains(&l.kind))
                .collect();
            let removed: Vec<&LineRef<'_>> = lines
                .removed
                .iter()
                .filter(|l| rule.kinds.contains(&l.kind))
                .collect();
            match rule.matcher {
                Matcher::PropertyRemoved => property_removed(rule, files, &mut findings),
                Matcher::Added(_) => {
                    let mut pool = pool_of(removed.iter().copied());
                    for l in added.iter().filter(|l| matches_any(&c.first, l.code)) {
                        if !take(&mut pool, l) {
                            findings.push(finding(rule, l, rule.description.to_string()));
                        }
                    }
                }
                Matcher::NetRemoved(_) => {
                    let gone: Vec<&&LineRef<'_>> = removed
                        .iter()
                        .filter(|l| matches_any(&c.first, l.code))
                        .collect();
                    let back: Vec<&&LineRef<'_>> = added
                        .iter()
                        .filter(|l| matches_any(&c.first, l.code))
                        .collect();
                    let deficit = gone.len().saturating_sub(back.len());
                    let mut pool = pool_of(back.iter().map(|l| **l));
                    let fresh = gone.into_iter().filter(|l| !take(&mut pool, l));
                    for l in fresh.take(deficit) {
                        findings.push(finding(rule, l, rule.description.to_string()));
                    }
                }
                Matcher::Number { patterns, floor } => {
                    for (p, regex) in patterns.iter().zip(&c.first) {
                        number_rule(
                            rule,
                            p,
                            regex,
                            &added,
                            &removed,
                            floor.then_some(min_cases),
                            &mut findings,
                        );
                    }
                }
                Matcher::Replaced { .. } => {
                    let strong_gone = removed
                        .iter()
                        .filter(|l| matches_any(&c.first, l.code))
                        .count();
                    let strong_back = added
                        .iter()
                        .filter(|l| matches_any(&c.first, l.code))
                        .count();
                    if strong_gone > strong_back {
                        let mut pool = pool_of(removed.iter().copied());
                        for l in added.iter().filter(|l| matches_any(&c.second, l.code)) {
                            if !take(&mut pool, l) {
                                findings.push(finding(rule, l, rule.description.to_string()));
                            }
                        }
                    }
                }
            }
        }
        findings.sort();
        findings.dedup();
        findings
    }
}

/// One added or removed line with its file and its code part.
#[derive(Debug)]
struct LineRef<'a> {
    path: &'a str,
    kind: FileKind,
    number: u32,
    text: &'a str,
    code: &'a str,
}

struct CommitLines<'a> {
    added: Vec<LineRef<'a>>,
    removed: Vec<LineRef<'a>>,
}

impl<'a> CommitLines<'a> {
    fn new(files: &'a [PropertyFile]) -> Self {
        let mut added = Vec::new();
        let mut removed = Vec::new();
        for f in files {
            if let Some(path) = f.new_path.as_deref() {
                let kind = FileKind::of(path);
                added.extend(f.added.iter().map(|l| line_ref(path, kind, l)));
            }
            if let Some(path) = f.old_path.as_deref() {
                let kind = FileKind::of(path);
                removed.extend(f.removed.iter().map(|l| line_ref(path, kind, l)));
            }
        }
        CommitLines { added, removed }
    }
}

fn line_ref<'a>(path: &'a str, kind: FileKind, l: &'a Line) -> LineRef<'a> {
    LineRef {
        path,
        kind,
        number: l.number,
        text: &l.text,
        code: kind.code(&l.text),
    }
}

fn matches_any(patterns: &[Regex], code: &str) -> bool {
    patterns.iter().any(|r| r.is_match(code))
}

fn pool_of<'a>(lines: impl Iterator<Item = &'a LineRef<'a>>) -> BTreeMap<String, usize> {
    let mut pool = BTreeMap::new();
    for l in lines {
        *pool.entry(squash(l.code)).or_insert(0) += 1;
    }
    pool
}

/// Takes the line's text out of the pool; `true` when it was there (a moved or unchanged line).
fn take(pool: &mut BTreeMap<String, usize>, l: &LineRef<'_>) -> bool {
    match pool.get_mut(&squash(l.code)) {
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

fn number_of(regex: &Regex, code: &str) -> Option<(f64, String)> {
    let text = regex.captures(code)?.get(1)?.as_str();
    let value = text.replace('_', "").parse().ok()?;
    Some((value, text.to_string()))
}

fn number_rule(
    rule: &Rule,
    p: &NumberPattern,
    regex: &Regex,
    added: &[&LineRef<'_>],
    removed: &[&LineRef<'_>],
    floor: Option<u64>,
    findings: &mut Vec<RawFinding>,
) {
    let values = |lines: &[&LineRef<'_>]| -> Vec<(usize, f64, String)> {
        lines
            .iter()
            .enumerate()
            .filter_map(|(i, l)| number_of(regex, l.code).map(|(v, t)| (i, v, t)))
            .collect()
    };
    let mut new = values(added);
    let mut old = values(removed);
    // Equal values cancel: a setting moved or reformatted is not a change.
    new.retain(|(_, v, _)| match old.iter().position(|(_, o, _)| o == v) {
        Some(pos) => {
            old.remove(pos);
            false
        }
        None => true,
    });
    let (weaker, verb) = match p.weaker {
        Weaker::Lower => (f64::lt as fn(&f64, &f64) -> bool, "lowered"),
        Weaker::Higher => (f64::gt as fn(&f64, &f64) -> bool, "widened"),
    };
    let setting = p.setting;
    for (n, (i, v, text)) in new.iter().enumerate() {
        let l = added[*i];
        if let Some((_, before, before_text)) = old.get(n)
            && weaker(v, before)
        {
            let what = format!("{setting} {verb} from {before_text} to {text}");
            findings.push(finding(rule, l, what));
            continue;
        }
        if let Some(min) = floor
            && *v < min as f64
        {
            let what = format!("{setting} {text} is below min_cases {min}");
            findings.push(finding(rule, l, what));
        }
    }
    if let Some(default) = p.default {
        for (i, v, text) in old.iter().skip(new.len()) {
            if weaker(&default, v) {
                let what =
                    format!("explicit {setting} {text} removed: the default {default} applies");
                findings.push(finding(rule, removed[*i], what));
            }
        }
    }
}

fn property_removed(rule: &Rule, files: &[PropertyFile], findings: &mut Vec<RawFinding>) {
    let mut before: Vec<(String, PropertyDef)> = Vec::new();
    let mut after: BTreeMap<String, usize> = BTreeMap::new();
    for f in files {
        if let (Some(path), Some(text)) = (&f.old_path, &f.old_text) {
            let kind = FileKind::of(path);
            if rule.kinds.contains(&kind) {
                before.extend(
                    properties(kind, text)
                        .into_iter()
                        .map(|d| (path.clone(), d)),
                );
            }
        }
        if let (Some(path), Some(text)) = (&f.new_path, &f.new_text) {
            let kind = FileKind::of(path);
            if rule.kinds.contains(&kind) {
                for d in properties(kind, text) {
                    *after.entry(d.name).or_insert(0) += 1;
                }
            }
        }
    }
    for (path, def) in before {
        match after.get_mut(&def.name) {
            Some(n) if *n > 0 => *n -= 1,
            _ => findings.push(RawFinding {
                file: path,
                line: def.line,
                rule: rule.id,
                explanation: format!("{}: `{}` is gone", rule.description, def.name),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patch::diff::all_lines;
    use proptest::prelude::*;

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
            let (old, new) = text(vocabulary, &picks, &indents);
            let rules = &*RULE_SET;
            // Every line removed and re-added with other indentation, in the same file…
            let same = rules.apply(&[file(old_path, old_path, &old, &new)], 50);
            prop_assert_eq!(same, Vec::new());
            // …or moved to another file of the commit.
            let moved = rules.apply(&[file(old_path, new_path, &old, &new)], 50);
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
            let found = RULE_SET.apply(&[f], 50);
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
    fn comments_are_not_code() {
        assert_eq!(
            FileKind::Rust.code("let x = 1; // prop_assume!(x)"),
            "let x = 1; "
        );
        assert_eq!(FileKind::Python.code("x = 1  # time.sleep(1)"), "x = 1  ");
        assert_eq!(FileKind::Rust.code("#[test]"), "#[test]");
    }

    #[test]
    fn removing_an_explicit_case_count_falls_back_to_a_lower_default() {
        let old = "#![proptest_config(ProptestConfig::with_cases(1000))]\n";
        let mut f = file("tests/a.rs", "tests/a.rs", old, "");
        f.added.clear();
        let found = RULE_SET.apply(&[f], 50);
        assert_eq!(found.len(), 1);
        assert!(
            found[0].explanation.contains("default 256"),
            "{}",
            found[0].explanation
        );
    }
}
