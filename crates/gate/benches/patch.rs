//! The patch-integrity check against the git calls it cannot avoid:
//! `cargo bench -p freezegate-gate --bench patch`.
//!
//! Setup, in a temporary repository made with the real `git` and an `ssh-keygen` key: a base
//! commit REV with a policy (`protected`, `property_paths`, `min_cases`), `freeze/` (a ledger and
//! `allowed_signers` naming the key), one pinned fixture, source files, and six property files
//! (four Rust `proptest!` files, two Hypothesis files); then 50 commits on top, in cycles of ten:
//! harmless edits of property files (doc comments, new properties, extra assertions), new fixture
//! files, a property edited together with the code it checks, one gaming move per cycle (a lowered
//! case count, an added ignore or skip mark, a new `prop_assume!`), one SSH-signed commit touching
//! protected paths (the ledger or `src/oracle/`), and once an unsigned edit of a pinned fixture.
//!
//! Measured: `check_patch(REV..HEAD)` through the library. Baseline, in the same run:
//! `git rev-list REV..HEAD` and then one `git diff-tree -r -p --no-commit-id <commit>` per commit,
//! its output read whole. A second reference adds to that baseline one `git log --format=%G?`
//! over the range with `gpg.ssh.allowedSignersFile` set, which verifies every signature. Rounds
//! are interleaved, their order alternating; the table gives median wall times and the median of
//! the per-round ratios with their range. Every run checks the report: the number of commits,
//! the findings (rule and whether it blocks), the violations, the allowed signatures and the
//! warnings, so a broken run cannot pass for a fast one.
//!
//! A second table: one commit that adds an assertion to every property of one large file
//! (`LARGE_PROPS` properties in `proptest!` blocks of ten, inside `mod` items: about 24 000
//! lines), against one `git diff-tree -r -p` of that commit. The property scan reads the file
//! at both sides of the commit; a scan that walked the file once per property would show
//! here, not in the 50 commits of small files above.
//!
//! A third table: one commit that deletes the `Cargo.toml` of a crate with `WIDE_FILES`
//! integration-test files, each a property, which then no longer compile: the check looks up
//! what could still compile each file in the trees before and after the commit. Against one
//! `git ls-tree -r` of that commit, with the git processes the check starts.
//!
//! Without `--bench` (as under `cargo test --benches`) it makes one round over ten commits as a
//! smoke test, the large file with `SMOKE_LARGE_PROPS` properties and the wide crate with
//! `SMOKE_WIDE_FILES` files; `--list` returns at once.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use freezegate_gate::patch::{
    PatchOptions, PatchReport, SignatureStatus, WarningKind, check_patch,
};

type BenchResult<T = ()> = Result<T, Box<dyn std::error::Error>>;

const COMMITS: usize = 50;
const ROUNDS: usize = 7;
const SMOKE_COMMITS: usize = 10;
const SMOKE_ROUNDS: usize = 1;
const LARGE_PROPS: usize = 2800;
const SMOKE_LARGE_PROPS: usize = 200;
const WIDE_FILES: usize = 2000;
const SMOKE_WIDE_FILES: usize = 100;
/// The wide-crate table's rounds at most: each check reads thousands of paths.
const WIDE_ROUNDS: usize = 3;

/// Isolates every git process from the machine's configuration.
const GIT_ENV: &[(&str, &str)] = &[
    ("GIT_CONFIG_GLOBAL", "/dev/null"),
    ("GIT_CONFIG_NOSYSTEM", "1"),
];

const IGNORE: &str = concat!("#[", "ignore]");
const PY_SKIP: &str = "@pytest.mark.skip(reason=\"slow\")";

/// A temporary repository and the signing key.
struct Repo {
    dir: tempfile::TempDir,
    /// The private key (for `user.signingkey`).
    key: PathBuf,
    /// Its allowed-signers line.
    signer_line: String,
    /// Commits made so far (their dates are one minute apart).
    made: usize,
}

impl Repo {
    fn new(keys: &Path) -> BenchResult<Repo> {
        let key = keys.join("reviewer");
        let status = Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-C", "reviewer", "-f"])
            .arg(&key)
            .status()?;
        if !status.success() {
            return Err("ssh-keygen failed".into());
        }
        let public = std::fs::read_to_string(keys.join("reviewer.pub"))?;
        let repo = Repo {
            dir: tempfile::tempdir()?,
            key,
            signer_line: format!(
                "reviewer@example.org namespaces=\"git\" {}\n",
                public.trim()
            ),
            made: 0,
        };
        repo.git(&["init", "-q", "-b", "main"])?;
        repo.git(&["config", "user.name", "Bench Author"])?;
        repo.git(&["config", "user.email", "author@example.invalid"])?;
        repo.git(&["config", "commit.gpgsign", "false"])?;
        Ok(repo)
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Runs git in the repository; fails unless it exits 0; returns trimmed stdout.
    fn git(&self, args: &[&str]) -> BenchResult<String> {
        let out = Command::new("git")
            .arg("-C")
            .arg(self.path())
            .args(args)
            .envs(GIT_ENV.iter().copied())
            .output()?;
        if !out.status.success() {
            return Err(format!(
                "git {args:?} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            )
            .into());
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    fn write(&self, path: &str, content: &str) -> BenchResult {
        let full = self.path().join(path);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(full, content)?;
        Ok(())
    }

    /// Commits everything, SSH-signed when `signed`; returns the commit id.
    fn commit(&mut self, message: &str, signed: bool) -> BenchResult<String> {
        self.git(&["add", "-A"])?;
        let date = format!(
            "2026-12-01T{:02}:{:02}:00Z",
            8 + self.made / 60,
            self.made % 60
        );
        self.made += 1;
        let signing = format!("user.signingkey={}", self.key.display());
        let mut args = vec!["-c", "gpg.format=ssh", "-c", &signing, "commit", "-q"];
        if signed {
            args.push("-S");
        }
        args.extend(["-m", message]);
        let out = Command::new("git")
            .arg("-C")
            .arg(self.path())
            .args(&args)
            .envs(GIT_ENV.iter().copied())
            .env("GIT_AUTHOR_DATE", &date)
            .env("GIT_COMMITTER_DATE", &date)
            .output()?;
        if !out.status.success() {
            return Err(format!(
                "git commit failed: {}",
                String::from_utf8_lossy(&out.stderr)
            )
            .into());
        }
        self.git(&["rev-parse", "HEAD"])
    }
}

/// One property of a property file.
struct Prop {
    name: String,
    cases: u32,
    docs: Vec<String>,
    skipped: bool,
    body: Vec<String>,
}

/// A property file, kept as a model and rendered whole for every commit.
struct PropFile {
    path: String,
    python: bool,
    props: Vec<Prop>,
}

impl PropFile {
    fn new(path: &str, python: bool, stem: &str, count: usize) -> PropFile {
        let mut file = PropFile {
            path: path.to_string(),
            python,
            props: Vec::new(),
        };
        for k in 0..count {
            let cases = if python { 500 } else { 1000 };
            file.push(&format!("{stem}_{k}"), cases, k);
        }
        file
    }

    /// Appends a property; `variant` picks its body.
    fn push(&mut self, name: &str, cases: u32, variant: usize) {
        let body: &[&str] = match (self.python, variant % 3) {
            (false, 0) => &[
                "let total = tax::total(x, y);",
                "prop_assert_eq!(total, y + x);",
            ],
            (false, 1) => &[
                "let cents = tax::round_cents(x);",
                "prop_assert!(cents <= x + 50);",
                "prop_assert_eq!(cents % 100, 0);",
            ],
            (false, _) => &[
                "let a = tax::total(tax::total(x, y), 1);",
                "let b = tax::total(x, tax::total(y, 1));",
                "prop_assert_eq!(a, b);",
            ],
            (true, 0) => &["total = tax.total(x, y)", "assert total == tax.total(y, x)"],
            (true, 1) => &[
                "cents = tax.round_cents(x)",
                "assert cents % 100 == 0",
                "assert abs(cents - x) <= 50",
            ],
            (true, _) => &[
                "a = tax.total(tax.total(x, y), 1)",
                "b = tax.total(x, tax.total(y, 1))",
                "assert a == b",
            ],
        };
        self.props.push(Prop {
            name: name.to_string(),
            cases,
            docs: Vec::new(),
            skipped: false,
            body: body.iter().map(|s| (*s).to_string()).collect(),
        });
    }

    fn render(&self) -> String {
        let mut out = String::new();
        if self.python {
            out.push_str("from hypothesis import given, settings, strategies as st\nimport pytest\n\nfrom shop import tax\n");
            for p in &self.props {
                out.push_str("\n\n");
                if p.skipped {
                    out.push_str(PY_SKIP);
                    out.push('\n');
                }
                out.push_str(&format!(
                    "@settings(max_examples={})\n@given(st.integers(min_value=0), st.integers(min_value=0))\ndef test_{}(x, y):\n",
                    p.cases, p.name
                ));
                for d in &p.docs {
                    out.push_str(&format!("    # {d}\n"));
                }
                for line in &p.body {
                    out.push_str(&format!("    {line}\n"));
                }
            }
        } else {
            out.push_str("use proptest::prelude::*;\n\nuse shop::tax;\n");
            for p in &self.props {
                out.push_str(&format!(
                    "\nproptest! {{\n    #![proptest_config(ProptestConfig::with_cases({}))]\n",
                    p.cases
                ));
                for d in &p.docs {
                    out.push_str(&format!("    /// {d}\n"));
                }
                out.push_str("    #[test]\n");
                if p.skipped {
                    out.push_str(&format!("    {IGNORE}\n"));
                }
                out.push_str(&format!(
                    "    fn {}(x in 0u64..1_000_000, y in 0u64..1_000_000) {{\n",
                    p.name
                ));
                for line in &p.body {
                    out.push_str(&format!("        {line}\n"));
                }
                out.push_str("    }\n}\n");
            }
        }
        out
    }
}

/// What the check must report for the commits made.
#[derive(Default)]
struct Expected {
    commits: usize,
    /// (rule, blocking), sorted.
    findings: Vec<(String, bool)>,
    violations: usize,
    allowed: usize,
    property_and_code: usize,
}

/// The repository, REV, and what the check must find in `REV..HEAD`.
struct Setup {
    repo: Repo,
    base: String,
    signers_file: PathBuf,
    expected: Expected,
}

const BASE_FIXTURE: &str = "fixtures/tax.total/84a6b2a276edd51b.json";

fn ledger(rows: usize) -> String {
    let rows: Vec<String> = (0..rows)
        .map(|r| {
            format!(
                "    {{\"property_id\": \"tax.total\", \"fixture_digest\": \"{:064x}\", \"seed\": 20260917, \"env_class\": \"remote\", \"expires_at\": \"2026-12-{:02}T00:00:00Z\"}}",
                r + 1,
                10 + r % 15
            )
        })
        .collect();
    format!(
        "{{\n  \"schema\": \"freezegate-ledger-v1\",\n  \"rows\": [\n{}\n  ]\n}}\n",
        rows.join(",\n")
    )
}

fn oracle_source(version: usize) -> String {
    let mut out = String::from(
        "//! The reference oracle for tax totals.\n\npub fn total(x: u64, y: u64) -> u64 {\n    x + y\n}\n",
    );
    for v in 0..version {
        out.push_str(&format!(
            "\n/// Rate table {v}.\npub fn rate_{v}(x: u64) -> u64 {{\n    x * {} / 100\n}}\n",
            5 + v
        ));
    }
    out
}

fn tax_source(helpers: usize) -> String {
    let mut out = String::from(
        "//! Tax arithmetic.\n\npub fn total(x: u64, y: u64) -> u64 {\n    x + y\n}\n\npub fn round_cents(x: u64) -> u64 {\n    (x + 50) / 100 * 100\n}\n",
    );
    for h in 0..helpers {
        out.push_str(&format!(
            "\n/// Discount {h}.\npub fn discount_{h}(x: u64) -> u64 {{\n    x - x / {}\n}}\n",
            10 + h
        ));
    }
    out
}

fn setup(commits: usize, keys: &Path) -> BenchResult<Setup> {
    let mut repo = Repo::new(keys)?;
    repo.write(
        "freezegate.toml",
        "[policy]\nseed = 20260917\nreplays = 7\nmin_cases = 50\nprotected = [\"src/oracle/**\"]\nproperty_paths = [\"tests/**\", \"py/**\"]\n\n[[property]]\nid = \"tax.total\"\noracle = \"python3 py/oracle.py\"\ncases = 200\n",
    )?;
    repo.write("freeze/allowed_signers", &repo.signer_line)?;
    repo.write("freeze/ledger.json", &ledger(2))?;
    repo.write(BASE_FIXTURE, "{\"role\":\"\",\"user_id\":0}\n")?;
    repo.write(
        "fixtures/tax.total/84a6b2a276edd51b.meta.json",
        "{\"property_id\":\"tax.total\",\"seed\":20260917}\n",
    )?;
    repo.write(
        "fixtures/tax.total/origins/84a6b2a276edd51b.json",
        "{\"role\":\"guest\",\"user_id\":4096}\n",
    )?;
    // The script the property's oracle command names (protected, with what it imports).
    repo.write(
        "py/oracle.py",
        "import json, sys\nfrom tax_check import check\n\nsys.exit(check(json.load(sys.stdin)))\n",
    )?;
    repo.write("py/tax_check.py", "def check(doc):\n    return 0\n")?;
    repo.write("src/lib.rs", "pub mod oracle;\npub mod tax;\n")?;
    repo.write("src/oracle/mod.rs", "pub mod tax;\n")?;
    let mut oracle_version = 0;
    repo.write("src/oracle/tax.rs", &oracle_source(oracle_version))?;
    let mut helpers = 0;
    repo.write("src/tax.rs", &tax_source(helpers))?;
    repo.write(
        "README.md",
        "# shop\n\nTax arithmetic and its properties.\n",
    )?;
    let mut files = vec![
        PropFile::new("tests/prop_tax.rs", false, "tax", 8),
        PropFile::new("tests/prop_rounding.rs", false, "rounding", 8),
        PropFile::new("tests/prop_discount.rs", false, "discount", 6),
        PropFile::new("tests/prop_invoice.rs", false, "invoice", 6),
        PropFile::new("py/test_tax.py", true, "tax", 8),
        PropFile::new("py/test_invoice.py", true, "invoice", 6),
    ];
    for f in &files {
        repo.write(&f.path, &f.render())?;
    }
    let base = repo.commit("base", false)?;
    let signers_file = keys.join("allowed_signers");
    std::fs::write(&signers_file, &repo.signer_line)?;

    let mut e = Expected {
        commits,
        ..Expected::default()
    };
    let mut ledger_rows = 2;
    let mut added = 0;
    for i in 0..commits {
        let (cycle, slot) = (i / 10, i % 10);
        // The Rust files are 0..4, the Python files 4..6.
        let rust = i % 4;
        let py = 4 + i % 2;
        let (message, signed) = match slot {
            0 => {
                let f = &mut files[rust];
                let k = (cycle * 3) % f.props.len();
                let name = f.props[k].name.clone();
                f.props[k]
                    .docs
                    .push(format!("`{name}` holds for every pair of amounts."));
                (format!("document {name}"), false)
            }
            1 | 6 => {
                let id = format!(
                    "{:016x}",
                    (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)
                );
                let case = format!(
                    "{{\"lines\":[{{\"cents\":{},\"qty\":{}}}]}}\n",
                    100 + i,
                    i % 7
                );
                repo.write(&format!("fixtures/tax.total/{id}.json"), &case)?;
                repo.write(&format!("fixtures/tax.total/origins/{id}.json"), &case)?;
                repo.write(
                    &format!("fixtures/tax.total/{id}.meta.json"),
                    &format!(
                        "{{\"property_id\":\"tax.total\",\"fixture_id\":\"{id}\",\"seed\":20260917,\"oracle_calls\":{}}}\n",
                        20 + i
                    ),
                )?;
                (format!("pin fixture {id}"), false)
            }
            2 => {
                let f = &mut files[rust];
                added += 1;
                let name = format!("added_{added}");
                f.push(&name, 500, i);
                (format!("add property {name}"), false)
            }
            3 => {
                let (f, rule) = match cycle % 5 {
                    0 => (rust, "cases-lowered"),
                    1 => (rust, "skip-added"),
                    2 => (py, "skip-added"),
                    3 => (py, "cases-lowered"),
                    _ => (rust, "assume-added"),
                };
                let file = &mut files[f];
                let k = (1 + cycle * 2) % 6;
                let p = &mut file.props[k];
                match cycle % 5 {
                    0 => p.cases = 100,
                    1 | 2 => p.skipped = true,
                    3 => p.cases = 20,
                    _ => p.body.insert(0, "prop_assume!(x > y);".to_string()),
                }
                e.findings.push((rule.to_string(), true));
                (format!("speed up {}", p.name), false)
            }
            4 => {
                let f = &mut files[py];
                let k = cycle % f.props.len();
                f.props[k].cases = 1000;
                let name = f.props[k].name.clone();
                f.props[k]
                    .docs
                    .push("More examples: the rounding rule has many edges.".to_string());
                (format!("more examples for {name}"), false)
            }
            5 => {
                helpers += 1;
                repo.write("src/tax.rs", &tax_source(helpers))?;
                let f = &mut files[rust];
                let k = (cycle + 2) % f.props.len();
                f.props[k].body.push(format!(
                    "prop_assert!(tax::discount_{}(x) <= x);",
                    helpers - 1
                ));
                e.property_and_code += 1;
                (format!("discount {} and its property", helpers - 1), false)
            }
            7 => {
                if cycle % 2 == 0 {
                    ledger_rows += 1;
                    repo.write("freeze/ledger.json", &ledger(ledger_rows))?;
                } else {
                    oracle_version += 1;
                    repo.write("src/oracle/tax.rs", &oracle_source(oracle_version))?;
                }
                if cycle == 4 {
                    // A reviewer lowers a case count on purpose: a finding that does not block.
                    let file = &mut files[rust];
                    let k = 5 % file.props.len();
                    file.props[k].cases = 200;
                    e.findings.push(("cases-lowered".to_string(), false));
                }
                e.allowed += 1;
                ("reviewed: freeze and oracle update".to_string(), true)
            }
            8 => {
                let f = &mut files[py];
                added += 1;
                let name = format!("added_{added}");
                f.push(&name, 500, i);
                (format!("add property {name}"), false)
            }
            _ => {
                if cycle == 0 {
                    repo.write(BASE_FIXTURE, "{\"role\":\"admin\",\"user_id\":0}\n")?;
                    e.violations += 1;
                    ("adjust a fixture".to_string(), false)
                } else {
                    let f = &mut files[rust];
                    let k = (cycle * 5) % f.props.len();
                    let extra = match f.props[k].body.len() % 2 {
                        0 => "prop_assert_eq!(tax::total(x, 0), x);",
                        _ => "prop_assert_eq!(tax::total(0, y), y);",
                    };
                    f.props[k].body.push(extra.to_string());
                    (format!("strengthen {}", f.props[k].name), false)
                }
            }
        };
        for f in &files {
            repo.write(&f.path, &f.render())?;
        }
        repo.commit(&message, signed)?;
    }
    e.findings.sort();
    Ok(Setup {
        repo,
        base,
        signers_file,
        expected: e,
    })
}

fn options(git: &str) -> PatchOptions {
    let mut options = PatchOptions::default();
    options.git = OsString::from(git);
    options.git_env = GIT_ENV
        .iter()
        .map(|(k, v)| ((*k).into(), (*v).into()))
        .collect();
    options
}

/// Fails unless the report is the one the setup planned.
fn verify(report: &PatchReport, e: &Expected) -> BenchResult {
    let mut findings: Vec<(String, bool)> = report
        .findings
        .iter()
        .map(|f| (f.rule.clone(), f.blocking))
        .collect();
    findings.sort();
    let allowed = report
        .commits
        .iter()
        .filter(|c| c.signature.status == SignatureStatus::Allowed)
        .count();
    let property_and_code = report
        .warnings
        .iter()
        .filter(|w| w.kind == WarningKind::PropertyAndCode)
        .count();
    let got = (
        report.commits.len(),
        &findings,
        report.violations.len(),
        allowed,
        property_and_code,
        report.warnings.len(),
    );
    let want = (
        e.commits,
        &e.findings,
        e.violations,
        e.allowed,
        e.property_and_code,
        e.property_and_code,
    );
    if got != want || !report.blocking() {
        return Err(format!(
            "unexpected report: (commits, findings, violations, allowed, property-and-code warnings, warnings) = {got:?}, expected {want:?}"
        )
        .into());
    }
    Ok(())
}

/// Runs git and returns its whole stdout; fails unless it exits 0.
fn git_out(dir: &Path, args: &[&str]) -> BenchResult<Vec<u8>> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .envs(GIT_ENV.iter().copied())
        .output()?;
    if !out.status.success() {
        return Err(format!("git {args:?} failed").into());
    }
    Ok(out.stdout)
}

/// The baseline: list the commits, then one `git diff-tree -r -p` per commit. Returns the
/// bytes of diff read, so that nothing is optimised away.
fn baseline(dir: &Path, base: &str, commits: usize) -> BenchResult<usize> {
    let list = git_out(dir, &["rev-list", &format!("{base}..HEAD")])?;
    let list = String::from_utf8(list)?;
    let shas: Vec<&str> = list.lines().collect();
    if shas.len() != commits {
        return Err(format!("rev-list listed {} commits", shas.len()).into());
    }
    let mut bytes = 0;
    for sha in shas {
        bytes += git_out(dir, &["diff-tree", "-r", "-p", "--no-commit-id", sha])?.len();
    }
    Ok(bytes)
}

/// The baseline plus one `git log --format=%G?` over the range that verifies every signature.
fn baseline_signed(dir: &Path, base: &str, signers: &Path, e: &Expected) -> BenchResult<usize> {
    let bytes = baseline(dir, base, e.commits)?;
    let allowed = format!("gpg.ssh.allowedSignersFile={}", signers.display());
    let codes = git_out(
        dir,
        &[
            "-c",
            "gpg.format=ssh",
            "-c",
            &allowed,
            "log",
            "--format=%G?",
            &format!("{base}..HEAD"),
        ],
    )?;
    let good = codes.iter().filter(|b| **b == b'G').count();
    if good != e.allowed {
        return Err(format!("{good} good signatures, expected {}", e.allowed).into());
    }
    Ok(bytes)
}

/// A `git` in folder `dir` that logs its arguments to the file returned beside it.
fn counting_git(dir: &Path) -> BenchResult<(PathBuf, PathBuf)> {
    use std::os::unix::fs::PermissionsExt;
    let log = dir.join("git-calls");
    let wrapper = dir.join("git-counting");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\nexec git \"$@\"\n",
            log.display()
        ),
    )?;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755))?;
    Ok((wrapper, log))
}

/// The git processes one check starts, by subcommand, counted through a wrapper script that
/// logs its arguments (an extra run, not timed).
fn git_processes(s: &Setup, keys: &Path) -> BenchResult<BTreeMap<String, usize>> {
    let (wrapper, log) = counting_git(keys)?;
    let report = check_patch(s.repo.path(), &s.base, &options(&wrapper.to_string_lossy()))?;
    verify(&report, &s.expected)?;
    const SUBCOMMANDS: &[&str] = &[
        "cat-file",
        "diff",
        "diff-tree",
        "hash-object",
        "log",
        "ls-tree",
        "rev-list",
        "rev-parse",
    ];
    let mut counts = BTreeMap::new();
    for line in std::fs::read_to_string(&log)?.lines() {
        let sub = line
            .split(' ')
            .find(|w| SUBCOMMANDS.contains(w))
            .unwrap_or("other");
        *counts.entry(sub.to_string()).or_insert(0) += 1;
    }
    Ok(counts)
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn range(xs: &[f64]) -> (f64, f64) {
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().copied().fold(0.0, f64::max);
    (lo, hi)
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split(' ')
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

fn main() -> BenchResult {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") {
        return Ok(());
    }
    // `cargo bench` passes `--bench`; without it (`cargo test --benches`) a quick smoke run.
    let full = args.iter().any(|a| a == "--bench");
    let (commits, rounds) = if full {
        (COMMITS, ROUNDS)
    } else {
        (SMOKE_COMMITS, SMOKE_ROUNDS)
    };
    let load_before = load();
    let keys = tempfile::tempdir()?;
    let started = Instant::now();
    let s = setup(commits, keys.path())?;
    let setup_time = started.elapsed().as_secs_f64();
    let dir = s.repo.path();
    let options = options("git");
    let check = || -> BenchResult<f64> {
        let start = Instant::now();
        let report = check_patch(dir, &s.base, &options)?;
        let t = start.elapsed().as_secs_f64();
        verify(&report, &s.expected)?;
        Ok(t)
    };
    let plain = || -> BenchResult<f64> {
        let start = Instant::now();
        baseline(dir, &s.base, commits)?;
        Ok(start.elapsed().as_secs_f64())
    };
    let signed = || -> BenchResult<f64> {
        let start = Instant::now();
        baseline_signed(dir, &s.base, &s.signers_file, &s.expected)?;
        Ok(start.elapsed().as_secs_f64())
    };

    let spawned = git_processes(&s, keys.path())?;
    // Warm up every side once.
    check()?;
    plain()?;
    signed()?;
    let (mut c, mut p, mut g) = (Vec::new(), Vec::new(), Vec::new());
    let (mut to_plain, mut to_signed) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        // Alternate the order, so that drift in the machine's load cancels out.
        let (ci, pi, gi) = if round % 2 == 0 {
            let pi = plain()?;
            let gi = signed()?;
            (check()?, pi, gi)
        } else {
            let ci = check()?;
            let gi = signed()?;
            (ci, plain()?, gi)
        };
        c.push(ci);
        p.push(pi);
        g.push(gi);
        to_plain.push(ci / pi);
        to_signed.push(ci / gi);
    }
    let e = &s.expected;
    let blocking = e.findings.iter().filter(|(_, b)| *b).count();
    println!(
        "## patch check: {commits} commits (REV..HEAD), {rounds} interleaved round(s), medians"
    );
    println!();
    println!(
        "setup {setup_time:.2} s; the check found {} findings ({blocking} blocking), {} violation(s), {} allowed signatures, {} property-and-code warnings",
        e.findings.len(),
        e.violations,
        e.allowed,
        e.property_and_code
    );
    let by_subcommand: Vec<String> = spawned.iter().map(|(k, v)| format!("{v} {k}")).collect();
    println!(
        "git processes per check: {} ({}); baseline: {}",
        spawned.values().sum::<usize>(),
        by_subcommand.join(", "),
        commits + 1
    );
    println!();
    println!("| side | wall (median) | per commit | check / side (median) | range |");
    println!("|---|---|---|---|---|");
    let per = |t: f64| t * 1e3 / commits as f64;
    let (c, p, g) = (median(c), median(p), median(g));
    println!(
        "| `check_patch(REV..HEAD)` | {:.0} ms | {:.2} ms | — | — |",
        c * 1e3,
        per(c)
    );
    let (lo, hi) = range(&to_plain);
    println!(
        "| baseline: `rev-list` + one `diff-tree -r -p` per commit | {:.0} ms | {:.2} ms | {:.2}x | {lo:.2}-{hi:.2} |",
        p * 1e3,
        per(p),
        median(to_plain.clone())
    );
    let (lo, hi) = range(&to_signed);
    println!(
        "| baseline + one `log --format=%G?` (signatures verified) | {:.0} ms | {:.2} ms | {:.2}x | {lo:.2}-{hi:.2} |",
        g * 1e3,
        per(g),
        median(to_signed.clone())
    );
    println!();
    large_file(if full { LARGE_PROPS } else { SMOKE_LARGE_PROPS }, rounds)?;
    println!();
    wide_crate(
        if full { WIDE_FILES } else { SMOKE_WIDE_FILES },
        rounds.min(WIDE_ROUNDS),
    )?;
    println!();
    println!("load average: {load_before} before, {} after", load());
    Ok(())
}

/// A Rust file of `props` properties, in `proptest!` blocks of ten inside `mod` items of
/// twenty blocks; `checked` adds one assertion to each.
fn large_source(props: usize, checked: bool) -> String {
    let mut out = String::from("//! Generated properties.\n\nuse proptest::prelude::*;\n\n");
    for block in 0..props.div_ceil(10) {
        if block % 20 == 0 {
            if block > 0 {
                out.push_str("}\n\n");
            }
            out.push_str(&format!(
                "#[cfg(test)]\nmod group_{} {{\n    use super::*;\n\n",
                block / 20
            ));
        }
        out.push_str("    proptest! {\n");
        out.push_str("        #![proptest_config(ProptestConfig::with_cases(64))]\n\n");
        for n in block * 10..(block * 10 + 10).min(props) {
            out.push_str(&format!(
                "        /// Adding then subtracting {n} is the identity.\n        #[test]\n        fn prop_{n}(x in any::<i32>(), v in prop::collection::vec(0u8..10, 0..8)) {{\n            let y = x.wrapping_add({n}).wrapping_sub({n});\n            prop_assert_eq!(y, x, \"{{}} and {{:?}}\", x, v);\n"
            ));
            if checked {
                out.push_str("            prop_assert!(v.len() < 8);\n");
            }
            out.push_str("        }\n\n");
        }
        out.push_str("    }\n\n");
    }
    out.push_str("}\n");
    out
}

/// The large-file table (see the module docs).
fn large_file(props: usize, rounds: usize) -> BenchResult {
    let keys = tempfile::tempdir()?;
    let mut repo = Repo::new(keys.path())?;
    repo.write(
        "freezegate.toml",
        "[policy]\nseed = 1\nmin_cases = 50\nproperty_paths = [\"tests/**\"]\n\n[[property]]\nid = \"arith\"\noracle = \"true\"\n",
    )?;
    repo.write("src/lib.rs", "//! Arithmetic.\n")?;
    repo.write(
        "Cargo.toml",
        "[package]\nname = \"arith\"\nversion = \"0.1.0\"\n",
    )?;
    repo.write("tests/props.rs", &large_source(props, false))?;
    let base = repo.commit("base", false)?;
    let text = large_source(props, true);
    let lines = text.lines().count();
    repo.write("tests/props.rs", &text)?;
    let head = repo.commit("every property checks its vector's length", false)?;
    let dir = repo.path();
    let options = options("git");
    let check = || -> BenchResult<f64> {
        let start = Instant::now();
        let report = check_patch(dir, &base, &options)?;
        let t = start.elapsed().as_secs_f64();
        let files: Vec<&String> = report
            .commits
            .iter()
            .flat_map(|c| &c.property_files)
            .collect();
        if report.commits.len() != 1 || !report.findings.is_empty() || files.len() != 1 {
            return Err(format!(
                "unexpected large-file report: {} commits, findings {:?}, property files {files:?}",
                report.commits.len(),
                report.findings
            )
            .into());
        }
        Ok(t)
    };
    let plain = || -> BenchResult<f64> {
        let start = Instant::now();
        git_out(dir, &["diff-tree", "-r", "-p", "--no-commit-id", &head])?;
        Ok(start.elapsed().as_secs_f64())
    };
    check()?;
    plain()?;
    let times = interleaved(rounds, check, plain)?;
    println!(
        "## patch check: one commit editing {props} properties of one {lines}-line file, {rounds} interleaved round(s), medians"
    );
    println!();
    print_against(&times, "one `diff-tree -r -p`");
    Ok(())
}

/// The check's and the baseline's wall times over `rounds` rounds, their order alternating
/// from round to round, and the ratio of each round: `(check, baseline, ratios)`.
fn interleaved(
    rounds: usize,
    mut check: impl FnMut() -> BenchResult<f64>,
    mut plain: impl FnMut() -> BenchResult<f64>,
) -> BenchResult<(Vec<f64>, Vec<f64>, Vec<f64>)> {
    let (mut c, mut p, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let (ci, pi) = if round % 2 == 0 {
            let pi = plain()?;
            (check()?, pi)
        } else {
            let ci = check()?;
            (ci, plain()?)
        };
        c.push(ci);
        p.push(pi);
        ratios.push(ci / pi);
    }
    Ok((c, p, ratios))
}

/// The table of a check against one baseline command (`baseline` names it).
fn print_against((c, p, ratios): &(Vec<f64>, Vec<f64>, Vec<f64>), baseline: &str) {
    println!("| side | wall (median) | check / side (median) | range |");
    println!("|---|---|---|---|");
    println!(
        "| `check_patch(REV..HEAD)` | {:.0} ms | — | — |",
        median(c.clone()) * 1e3
    );
    let (lo, hi) = range(ratios);
    println!(
        "| baseline: {baseline} | {:.1} ms | {:.1}x | {lo:.1}-{hi:.1} |",
        median(p.clone()) * 1e3,
        median(ratios.clone())
    );
}

/// The wide-crate table (see the module docs).
fn wide_crate(files: usize, rounds: usize) -> BenchResult {
    let keys = tempfile::tempdir()?;
    let mut repo = Repo::new(keys.path())?;
    repo.write(
        "freezegate.toml",
        "[policy]\nseed = 1\nmin_cases = 50\nproperty_paths = [\"tests/**\"]\n",
    )?;
    repo.write("src/lib.rs", "//! Arithmetic.\n")?;
    repo.write(
        "Cargo.toml",
        "[package]\nname = \"wide\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )?;
    for i in 0..files {
        repo.write(
            &format!("tests/t{i}.rs"),
            &format!(
                "use proptest::prelude::*;\n\nproptest! {{\n    #[test]\n    fn doubles_{i}(x in 0u32..100) {{\n        prop_assert_eq!(x * 2, x + x);\n    }}\n}}\n"
            ),
        )?;
    }
    let base = repo.commit("base", false)?;
    std::fs::remove_file(repo.path().join("Cargo.toml"))?;
    let head = repo.commit("drop the manifest", false)?;
    let dir = repo.path();
    let run = |git: &str| -> BenchResult<f64> {
        let start = Instant::now();
        let report = check_patch(dir, &base, &options(git))?;
        let t = start.elapsed().as_secs_f64();
        let removed = report
            .findings
            .iter()
            .filter(|f| f.rule == "property-removed" && f.blocking)
            .count();
        if report.commits.len() != 1 || report.findings.len() != files || removed != files {
            return Err(format!(
                "unexpected wide-crate report: {} commits, {} findings ({removed} property-removed), expected {files}",
                report.commits.len(),
                report.findings.len()
            )
            .into());
        }
        Ok(t)
    };
    let plain = || -> BenchResult<f64> {
        let start = Instant::now();
        git_out(dir, &["ls-tree", "-r", "-z", "--full-tree", &head])?;
        Ok(start.elapsed().as_secs_f64())
    };
    let (wrapper, log) = counting_git(keys.path())?;
    run(&wrapper.to_string_lossy())?;
    let spawned = std::fs::read_to_string(&log)?.lines().count();
    let times = interleaved(rounds, || run("git"), plain)?;
    println!(
        "## patch check: one commit deleting the `Cargo.toml` of a crate with {files} property files, {rounds} interleaved round(s), medians"
    );
    println!();
    println!("git processes per check: {spawned}");
    println!();
    print_against(&times, "one `ls-tree -r`");
    Ok(())
}
