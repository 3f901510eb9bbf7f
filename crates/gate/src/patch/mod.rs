//! Patch integrity (SPEC §9 step 2): signed edits of protected paths and gaming-move detection.
//!
//! [`check_patch`] judges every commit of `REV..HEAD` on its own change (a merge: what differs
//! from git's own automatic merge of its parents, and what that merge could not resolve),
//! with the rules as they stand at REV:
//!
//! - a commit touching a protected path — `freezegate.toml`, `freeze/**`, an *existing* file under
//!   `fixtures/`, the default globs [`DEFAULT_PROTECTED`], the policy's `protected` globs, and
//!   the files the `oracle` and `generate` commands of REV's properties name (the executable
//!   form of a property: the command split as a shell splits it, following `cd`, `env`,
//!   `VAR=value` prefixes and `python -m`, each word resolved from the project folder and kept
//!   when REV's tree holds a file or a symbolic link there), and the Python modules those
//!   scripts import from their own folder, transitively — needs a good SSH signature by a key
//!   of REV's `freeze/allowed_signers`, checked by git itself;
//! - a commit's change to files matching `property_paths` is read for the gaming moves of the
//!   [`RULES`] table; a finding blocks unless the commit carries such a signature;
//! - a commit that stops compiling a Rust file under `property_paths` it leaves unchanged (it
//!   deletes the file's `mod` line or puts it behind a `#[cfg]` or `#[path]`, deletes or
//!   renames the declaring file, the crate root or its `Cargo.toml`, or edits that manifest so
//!   that `cargo test` no longer runs the target or its workspace no longer holds the crate)
//!   removes that file's properties (`property-removed`), wherever the declaring file lies.
//!
//! Only `git` is run (no git library, no cryptography of our own). Globs match the whole path
//! from the repository root; `*` stays within one directory, `**` crosses directories.
//!
//! # Example
//!
//! ```
//! use freezegate_gate::patch::{BasePolicy, FileKind, RULES};
//!
//! let policy = BasePolicy::parse("[policy]\nproperty_paths = [\"tests/**\"]\nmin_cases = 80\n", "main")?;
//! assert_eq!(policy.min_cases, 80);
//! assert_eq!(FileKind::of("tests/prop_tax.rs"), FileKind::Rust);
//! assert!(RULES.iter().any(|rule| rule.id == "cases-lowered"));
//! # Ok::<(), freezegate_gate::patch::PatchError>(())
//! ```
//!
//! Judging a repository:
//!
//! ```no_run
//! use freezegate_gate::patch::{PatchOptions, check_patch};
//!
//! let report = check_patch(std::path::Path::new("."), "origin/main", &PatchOptions::default())?;
//! if report.blocking() {
//!     for v in &report.violations {
//!         eprintln!("{}: {} changed without an allowed signature", v.commit, v.path);
//!     }
//! }
//! # Ok::<(), freezegate_gate::patch::PatchError>(())
//! ```

mod diff;
mod error;
mod git;
mod imports;
mod modules;
mod policy;
mod props;
mod reach;
mod report;
mod rules;
mod scripts;

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::io::Write;
use std::path::Path;

pub use diff::ChangeKind;
pub use error::PatchError;
pub use policy::{
    ALLOWED_SIGNERS, BasePolicy, BaseProperty, CONFIG_FILE, DEFAULT_MIN_CASES, DEFAULT_PROTECTED,
    EXISTING_FIXTURES,
};
pub use report::{
    CommitReport, Finding, PatchReport, Signature, SignatureStatus, Violation, Warning, WarningKind,
};
pub use rules::{FileKind, Matcher, NEW_PROPERTY_EXEMPT, NumberPattern, RULES, Rule, Weaker};

use diff::{Entry, FileChange, all_lines, bringing_parents, line_changes, own_change};
use git::Git;
use policy::{PathRules, Protection, read_at};
use rules::{PropertyFile, RuleSet};

/// How to run the check.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PatchOptions {
    /// The revision judged (default `HEAD`).
    pub head: String,
    /// The `git` program (default `git` from `PATH`).
    pub git: OsString,
    /// Extra environment for every git process, e.g. `GIT_CONFIG_GLOBAL` to isolate the check
    /// from a machine's git configuration.
    pub git_env: Vec<(OsString, OsString)>,
    /// The policy at the base revision, when the caller has already read `freezegate.toml` at
    /// REV; `None` reads it here. Never pass the working tree's policy.
    pub policy: Option<BasePolicy>,
}

impl Default for PatchOptions {
    fn default() -> Self {
        PatchOptions {
            head: "HEAD".to_string(),
            git: OsString::from("git"),
            git_env: Vec::new(),
            policy: None,
        }
    }
}

/// Judges every commit of `base_rev..HEAD` in the repository at `repo_dir` (see the module docs).
///
/// An `Err` means the patch could not be judged (git missing, REV unknown, REV's policy
/// unreadable): the gate must not treat it as a pass.
pub fn check_patch(
    repo_dir: &Path,
    base_rev: &str,
    options: &PatchOptions,
) -> Result<PatchReport, PatchError> {
    let git = Git::new(repo_dir, options.git.clone(), options.git_env.clone());
    let base = git.resolve_commit(base_rev)?;
    let head = git.resolve_commit(&options.head)?;
    let policy = match &options.policy {
        Some(p) => p.clone(),
        None => BasePolicy::at(&git, &base, base_rev)?,
    };
    let prefix = git.prefix()?.to_string();
    let scripts = scripts::protected_scripts(&git, &base, base_rev, &prefix, &policy.properties)?;
    let paths = PathRules::in_folder(&policy, base_rev, &prefix)?;
    // What the named scripts import is protected where it is property code, and where a
    // top-level module's place holds nothing (a file added there replaces a module of the
    // standard library or of an installed package); not where it is the code under test,
    // which a fix must be able to change or add to and which the scripts import too.
    let mut commands = scripts.protected;
    for (path, place) in scripts.imported {
        if (!place.in_tree && place.top_level) || paths.is_property_path(&path) {
            commands.entry(path).or_insert(place.why);
        }
    }
    let search_folders = scripts.search_folders;
    let unfollowed: Vec<(String, String)> = scripts
        .unfollowed
        .into_iter()
        // Covered when a glob covers its folder, not the script alone: a glob naming just the
        // script (which is protected anyway, being named) leaves what it loads unprotected.
        .filter(|(path, _)| {
            !(paths.is_listed_protected(path) && paths.is_listed_protected(&beside(path)))
        })
        .collect();
    let paths = paths.with_commands(commands);
    let rules = RuleSet::shared()?;

    let allowed = read_at(&git, &base, ALLOWED_SIGNERS)?;
    let mut signers_file =
        tempfile::NamedTempFile::new().map_err(|source| PatchError::TempFile { source })?;
    signers_file
        .write_all(allowed.as_deref().unwrap_or_default())
        .and_then(|()| signers_file.flush())
        .map_err(|source| PatchError::TempFile { source })?;

    let commits = git.commits(&base, &head)?;
    let boundary = git.shallow_boundary()?;
    if let Some((sha, _)) = commits.iter().find(|(sha, _)| boundary.contains(sha)) {
        return Err(PatchError::ShallowClone {
            commit: sha.clone(),
            range: format!("{base_rev}..{}", options.head),
        });
    }
    let shas: Vec<String> = commits.iter().map(|(sha, _)| sha.clone()).collect();
    let raw_signatures = git.signatures(&shas, signers_file.path())?;
    let subjects = git.subjects(&shas)?;

    let mut report = PatchReport {
        base,
        head,
        allowed_signers_at_base: allowed.is_some(),
        commits: Vec::new(),
        violations: Vec::new(),
        findings: Vec::new(),
        warnings: Vec::new(),
    };
    if allowed.is_none() {
        report.warnings.push(Warning {
            commit: None,
            kind: WarningKind::NoAllowedSigners,
            message: format!("no {ALLOWED_SIGNERS} at {base_rev}: no protected change can pass"),
        });
    }
    if !paths.has_property_paths {
        report.warnings.push(Warning {
            commit: None,
            kind: WarningKind::NoPropertyPaths,
            message: format!("no policy.property_paths in {CONFIG_FILE} at {base_rev}: gaming moves are not looked for"),
        });
    }
    for what in &scripts.unresolved {
        report.warnings.push(Warning {
            commit: None,
            kind: WarningKind::UnprotectedCommand,
            message: format!(
                "{what} at {base_rev} names no file of the tree that the gate can find (a command inside a variable, `python -c`, an absolute path, …): edits of what it runs are not protected; list those files under policy.protected"
            ),
        });
    }

    for (path, why) in &unfollowed {
        report.warnings.push(Warning {
            commit: None,
            kind: WarningKind::UnfollowedScript,
            message: format!(
                "{why} runs {path}, which the gate protects but does not read (it follows Python's imports only): the files it loads (require, import, source, …) can change without a signature; list them under policy.protected"
            ),
        });
    }

    let mut empty_tree: Option<String> = None;
    let mut listed: Option<BTreeSet<String>> = None;
    for (((sha, parents), raw), subject) in commits.iter().zip(&raw_signatures).zip(subjects) {
        let mut status = SignatureStatus::from_git(raw.code);
        if allowed.is_none() && status == SignatureStatus::Allowed {
            status = SignatureStatus::UnknownKey;
        }
        // Git says `U` ("no principal matched") both for a key the file does not list and
        // for a listed key outside its `valid-after`/`valid-before` window at commit time.
        if status == SignatureStatus::UnknownKey
            && !raw.key.is_empty()
            && let Some(text) = &allowed
            && listed
                .get_or_insert_with(|| listed_fingerprints(text))
                .contains(&raw.key)
        {
            status = SignatureStatus::Expired;
        }
        if status == SignatureStatus::Allowed && !is_ssh_signed(&git.commit_object(sha)?) {
            status = SignatureStatus::NotSsh;
        }
        let nonempty = |s: &str| (!s.is_empty()).then(|| s.to_string());
        let signature = Signature {
            status,
            signer: nonempty(&raw.signer),
            key: nonempty(&raw.key),
        };

        let tree = match &empty_tree {
            Some(t) => t.clone(),
            None => {
                let t = git.empty_tree()?;
                empty_tree = Some(t.clone());
                t
            }
        };
        let bringing = bringing_parents(&git, parents)?;
        let own: Vec<FileChange> = own_change(&git, sha, &bringing, &tree)?
            .into_iter()
            .map(|change| change.relocated(&prefix))
            .collect();

        let mut protected_paths = BTreeSet::new();
        let mut property_names = BTreeSet::new();
        let mut property_files = Vec::new();
        // Module files new to a folder the oracles' Python searches before the standard
        // library, each with whether it lies under property_paths.
        let mut searched_modules: Vec<(String, bool)> = Vec::new();
        // Compiled bytecode outside property_paths, wherever it lies.
        let mut bytecode: Vec<(String, &'static str)> = Vec::new();
        // Links and submodules there, which Python would follow and the gate does not.
        let mut searched_links: Vec<(String, Entry)> = Vec::new();
        let mut touches_other_code = false;
        // Code outside property_paths that starts naming the oracle protocol's variables.
        let mut harness: Vec<(String, u32, String)> = Vec::new();
        // Distribution metadata (`X.dist-info`, `X.egg-info`) added or changed in a folder
        // the oracles' Python searches: its entry points load code of the patch's choosing.
        let mut distributions: BTreeSet<String> = BTreeSet::new();
        for change in &own {
            for (path, protection) in protections(&paths, change) {
                protected_paths.insert(path.clone());
                if !status.is_allowed() {
                    let protected_by = match protection {
                        Protection::Always(g)
                        | Protection::Existing(g)
                        | Protection::Command(g) => g,
                    };
                    report.violations.push(Violation {
                        commit: sha.clone(),
                        path,
                        change: change.kind,
                        protected_by,
                        signature: status,
                    });
                }
            }
            if let Some(folder) = distribution_metadata(change, &search_folders) {
                distributions.insert(folder);
            }
            if let Some((path, entry)) = searched_change(change, &search_folders) {
                let property = paths.is_property_path(path);
                match entry {
                    Entry::File => searched_modules.push((path.to_string(), property)),
                    // Under property_paths the rules' opaque-code reports links already.
                    Entry::Link | Entry::Submodule if !property => {
                        searched_links.push((path.to_string(), entry))
                    }
                    Entry::Link | Entry::Submodule => {}
                }
            }
            // Bytecode anywhere (under property_paths the rules' opaque-code reports it).
            if let Some(new) = change
                .new
                .as_ref()
                .filter(|n| !paths.is_property_path(&n.path))
                && change.kind != ChangeKind::Deleted
                && let Some(why) = modules::bytecode_by_name(&new.path)
            {
                bytecode.push((new.path.clone(), why));
            }
            match property_file(&git, &paths, change)? {
                Some(file) => {
                    property_names.extend(file.old_path.iter().chain(&file.new_path).cloned());
                    property_files.push(file);
                }
                None => {
                    let checked = change.paths().iter().any(|p| is_checked_code(p));
                    touches_other_code |= checked;
                    if checked && let Some((file, line, word)) = harness_aware(&git, change)? {
                        harness.push((file, line, word));
                    }
                }
            }
        }
        let reach = reach::Reach::new(&git, sha);
        let mut found = rules.apply(&property_files, paths.min_cases, &reach);
        found.extend(rules::module_shadowed_at(&searched_modules, &reach));
        found.extend(rules::opaque_links_at(&searched_links));
        found.extend(rules::bytecode_anywhere(&bytecode));
        found.extend(distributions.into_iter().map(|folder| rules::RawFinding {
            file: folder.clone(),
            line: 0,
            rule: "module-shadowed",
            explanation: format!(
                "`{folder}` is distribution metadata in a folder an oracle or generator runs Python with on `sys.path`: `importlib.metadata` finds it there, and its entry points (`hypothesis`, `pytest11`) run code of the patch's choosing when Hypothesis or pytest is imported, in the oracle's and the generator's process"
            ),
        }));
        if let Some(e) = reach.into_error() {
            return Err(e);
        }
        let uncompiled = reach::no_longer_compiled(&git, sha, &bringing, &own, &prefix, &|path| {
            paths.is_property_path(path)
        })?;
        found.extend(uncompiled.into_iter().map(|u| rules::RawFinding {
            file: u.file,
            line: u.property.line,
            rule: rules::PROPERTY_REMOVED.id,
            explanation: format!(
                "{}: `{}` no longer runs: {}",
                rules::PROPERTY_REMOVED.description,
                u.property.name,
                u.why
            ),
        }));
        found.extend(harness.into_iter().map(|(file, line, word)| rules::RawFinding {
            file,
            line,
            rule: HARNESS_AWARE,
            explanation: format!(
                "code outside property_paths starts reading `{word}`, a variable of the oracle protocol: the code under test has no reason to know it runs under an oracle, and code in the oracle's process can answer for it"
            ),
        }));
        found.sort();
        for f in found {
            report.findings.push(Finding {
                commit: sha.clone(),
                file: f.file,
                line: f.line,
                rule: f.rule.to_string(),
                explanation: f.explanation,
                blocking: !status.is_allowed(),
            });
        }
        if !property_files.is_empty() && touches_other_code {
            report.warnings.push(Warning {
                commit: Some(sha.clone()),
                kind: WarningKind::PropertyAndCode,
                message: "changes property code and other code together: review the predicate diff on its own"
                    .to_string(),
            });
        }
        report.commits.push(CommitReport {
            commit: sha.clone(),
            parents: parents.clone(),
            subject,
            signature,
            protected_paths: protected_paths.into_iter().collect(),
            property_files: property_names.into_iter().collect(),
        });
    }
    Ok(report)
}

/// The SHA-256 fingerprints (`SHA256:…`, as git's `%GF` prints them) of the keys an
/// allowed-signers text lists, by `ssh-keygen -l`; empty when it cannot say (the set only
/// names why a signature is refused, never lets one pass).
fn listed_fingerprints(allowed: &[u8]) -> BTreeSet<String> {
    let text = String::from_utf8_lossy(allowed);
    let keys: String = text
        .lines()
        .filter_map(|line| {
            let tokens: Vec<&str> = line.split_whitespace().collect();
            let at = tokens.iter().position(|t| {
                ["ssh-", "ecdsa-sha2-", "sk-ssh-", "sk-ecdsa-"]
                    .iter()
                    .any(|p| t.starts_with(p))
            })?;
            Some(format!("{} {}\n", tokens[at], tokens.get(at + 1)?))
        })
        .collect();
    let Ok(mut file) = tempfile::NamedTempFile::new() else {
        return BTreeSet::new();
    };
    if file
        .write_all(keys.as_bytes())
        .and_then(|()| file.flush())
        .is_err()
    {
        return BTreeSet::new();
    }
    let Ok(out) = std::process::Command::new("ssh-keygen")
        .args(["-l", "-E", "sha256", "-f"])
        .arg(file.path())
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
    else {
        return BTreeSet::new();
    };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .filter(|f| f.starts_with("SHA256:"))
        .map(str::to_string)
        .collect()
}

/// The bytes of the files `paths` at revision `rev` of the repository at `repo_dir`, read
/// with the same pinned git invocations as [`check_patch`] (replacement refs ignored, the
/// caller's `git` and environment); `None` for a path that is absent there or not a regular
/// file.
pub fn files_at(
    repo_dir: &Path,
    rev: &str,
    paths: &[&str],
    options: &PatchOptions,
) -> Result<Vec<Option<Vec<u8>>>, PatchError> {
    let git = Git::new(repo_dir, options.git.clone(), options.git_env.clone());
    let commit = git.resolve_commit(rev)?;
    paths
        .iter()
        .map(|path| read_at(&git, &commit, path))
        .collect()
}

/// The protected paths a change touches, each with why.
///
/// A path counts once, however many parents' versions of it a merge replaces. A symbolic
/// link or submodule counts as the directory it stands for ([`PathRules::link_protection`]).
fn protections(paths: &PathRules, change: &FileChange) -> Vec<(String, Protection)> {
    let mut found: Vec<(String, Protection)> = Vec::new();
    let existed = matches!(change.kind, ChangeKind::Modified | ChangeKind::TypeChanged);
    let sides = change
        .old
        .iter()
        .map(|side| (side, true))
        .chain(change.new.iter().map(|side| (side, existed)));
    for (side, existed) in sides {
        if found.iter().any(|(path, _)| *path == side.path) {
            continue;
        }
        let protection = paths.protection(&side.path, existed).or_else(|| {
            side.is_link_or_submodule()
                .then(|| paths.link_protection(&side.path))
                .flatten()
        });
        if let Some(p) = protection {
            found.push((side.path.clone(), p));
        }
    }
    found
}

/// The rule id of a commit that makes code outside `property_paths` name a variable of the
/// oracle protocol ([`HARNESS_WORDS`]).
pub const HARNESS_AWARE: &str = "harness-aware";

/// The environment variables freezegate gives oracles and generators (SPEC §4), the mark the
/// runner puts on every run (`FREEZEGATE_RUN_MARK`) and the hidden subcommand's generation
/// switch: code under test that reads them can tell it runs under an oracle.
pub const HARNESS_WORDS: &[&str] = &[
    "FREEZEGATE_WORKER",
    "FREEZEGATE_REPLAY",
    "FREEZEGATE_GENERATE",
    "FREEZEGATE_RUN_MARK",
    "PROPERTY_ID",
    "PROP_SEED",
    "PROP_CASES",
];

/// The start of every variable freezegate sets, today's and tomorrow's: a word that starts
/// with it (`FREEZEGATE_`, in `k.startswith("FREEZEGATE_")` or `"FREEZEGATE_" "WORKER"`)
/// names the protocol as much as a whole variable does.
const HARNESS_PREFIX: &str = "FREEZEGATE";

/// The largest file [`harness_aware`] reads.
const HARNESS_READ_LIMIT: usize = 1 << 20;

/// The languages whose code runs inside an oracle's process (a Python oracle imports the
/// code under test, a Rust runner links it), by file suffix, with the start of their line
/// comments.
/// JavaScript and TypeScript too: a Node oracle `require`s the code under test into its own
/// process (docs/gate.md, "A Node.js property").
const IN_PROCESS_CODE: &[(&str, &str)] = &[
    (".py", "#"),
    (".pyi", "#"),
    (".rs", "//"),
    (".js", "//"),
    (".cjs", "//"),
    (".mjs", "//"),
    (".ts", "//"),
    (".cts", "//"),
    (".mts", "//"),
    (".jsx", "//"),
    (".tsx", "//"),
];

/// Whether a change outside `property_paths` makes a Python or Rust file
/// ([`IN_PROCESS_CODE`]) name a word of [`HARNESS_WORDS`] — as a whole word, on a line that is
/// not a comment — on a line none of its old sides had: the file, the first such line (from
/// 1) and the word. Files over 1 MiB and binary files are not read.
fn harness_aware(
    git: &Git,
    change: &FileChange,
) -> Result<Option<(String, u32, String)>, PatchError> {
    let Some(new) = change.new.as_ref().filter(|n| n.is_text_file()) else {
        return Ok(None);
    };
    let Some(comment) = IN_PROCESS_CODE
        .iter()
        .find(|(suffix, _)| new.path.ends_with(suffix))
        .map(|(_, comment)| *comment)
    else {
        return Ok(None);
    };
    let text_of = |bytes: &[u8]| -> Option<String> {
        (bytes.len() <= HARNESS_READ_LIMIT && !bytes.contains(&0))
            .then(|| String::from_utf8_lossy(bytes).into_owned())
    };
    let Some(text) = text_of(&git.blob(&new.oid)?) else {
        return Ok(None);
    };
    let named = |line: &str| {
        if line.trim_start().starts_with(comment) {
            return None;
        }
        HARNESS_WORDS
            .iter()
            .find(|w| contains_word(line, w))
            .map(|w| w.to_string())
            .or_else(|| word_starting_with(line, HARNESS_PREFIX))
    };
    if !text.lines().any(|l| named(l).is_some()) {
        return Ok(None);
    }
    let mut before: BTreeSet<String> = BTreeSet::new();
    for old in change.old.iter().filter(|o| o.is_text_file()) {
        if let Some(old_text) = text_of(&git.blob(&old.oid)?) {
            before.extend(
                old_text
                    .lines()
                    .filter(|l| named(l).is_some())
                    .map(|l| l.split_whitespace().collect::<String>()),
            );
        }
    }
    Ok(text.lines().enumerate().find_map(|(i, line)| {
        let word = named(line)?;
        let key: String = line.split_whitespace().collect();
        (!before.contains(&key)).then(|| {
            (
                new.path.clone(),
                u32::try_from(i + 1).unwrap_or(u32::MAX),
                word,
            )
        })
    }))
}

/// The first word of `line` (letters, digits and `_`) that starts with `prefix`, with no
/// letter, digit or `_` before it.
fn word_starting_with(line: &str, prefix: &str) -> Option<String> {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    line.match_indices(prefix).find_map(|(at, _)| {
        if line[..at].chars().next_back().is_some_and(ident) {
            return None;
        }
        let rest = &line[at..];
        let end = rest.find(|c: char| !ident(c)).unwrap_or(rest.len());
        Some(rest[..end].to_string())
    })
}

/// Whether `word` stands in `line` as a whole identifier (no letter, digit or `_` next to it).
fn contains_word(line: &str, word: &str) -> bool {
    let ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    line.match_indices(word).any(|(at, _)| {
        !ident(line[..at].chars().next_back()) && !ident(line[at + word.len()..].chars().next())
    })
}

/// Code the properties may check: anything but fixtures, the freeze folder and prose.
fn is_checked_code(path: &str) -> bool {
    !(path.starts_with("fixtures/")
        || path.starts_with("freeze/")
        || path.ends_with(".md")
        || path.ends_with(".txt"))
}

/// What a change brings to a folder of `search_folders` that Python would import from
/// there, directly in the folder: a module file new to the commit (added, or a rename's new
/// side), or the `__init__` of a package directly in it, for `module-shadowed`; and a
/// symbolic link or submodule added, retargeted or made from a file under a name Python
/// could import (a package folder or a module file), which the gate does not follow, for
/// `opaque-code`.
fn searched_change<'c>(
    change: &'c FileChange,
    search_folders: &BTreeSet<String>,
) -> Option<(&'c str, Entry)> {
    let new = change.new.as_ref()?;
    let path = new.path.as_str();
    let (folder, name) = path.rsplit_once('/').unwrap_or(("", path));
    let in_folder = |f: &str| search_folders.contains(f);
    let entry = new.entry();
    if entry != Entry::File {
        let unchanged = change
            .old
            .iter()
            .any(|o| o.path == new.path && o.mode == new.mode && o.oid == new.oid);
        let importable = modules::module_file(name).is_some() || modules::is_identifier(name);
        return (in_folder(folder) && importable && !unchanged).then_some((path, entry));
    }
    if !is_new_path(change, new) {
        return None;
    }
    let package_init = || {
        modules::module_file(name).is_some_and(|(stem, _)| stem == "__init__")
            && in_folder(folder.rsplit_once('/').map_or("", |(parent, _)| parent))
    };
    (in_folder(folder) || package_init()).then_some((path, entry))
}

/// The distribution metadata folder (`X.dist-info`, `X.egg-info`, or such a file) directly
/// in a folder of `search_folders` that a change adds, modifies or renames into place, by
/// its path: `importlib.metadata` reads every folder of `sys.path` for them, and Hypothesis
/// (the `hypothesis` group) and pytest (`pytest11`) load the entry points they declare when
/// imported — in the generator's process too, which imports no code under test itself.
fn distribution_metadata(change: &FileChange, search_folders: &BTreeSet<String>) -> Option<String> {
    if change.kind == ChangeKind::Deleted {
        return None;
    }
    let new = change.new.as_ref()?;
    let mut folder = String::new();
    for part in new.path.split('/') {
        let lower = part.to_ascii_lowercase();
        if (lower.ends_with(".dist-info") || lower.ends_with(".egg-info"))
            && search_folders.contains(&folder)
        {
            return Some(if folder.is_empty() {
                part.to_string()
            } else {
                format!("{folder}/{part}")
            });
        }
        if !folder.is_empty() {
            folder.push('/');
        }
        folder.push_str(part);
    }
    None
}

/// Whether `new`, the post-image of `change`, is a path new to the commit: added, copied, or
/// a rename's new side.
fn is_new_path(change: &FileChange, new: &diff::Side) -> bool {
    match change.kind {
        ChangeKind::Added => true,
        ChangeKind::Renamed => change.old.iter().all(|o| o.path != new.path),
        ChangeKind::Modified | ChangeKind::Deleted | ChangeKind::TypeChanged => false,
    }
}

/// The property-file view of a change, when either side matches `property_paths`.
fn property_file(
    git: &Git,
    paths: &PathRules,
    change: &FileChange,
) -> Result<Option<PropertyFile>, PatchError> {
    let old_side = change.old.iter().find(|s| paths.is_property_path(&s.path));
    let new_side = change
        .new
        .as_ref()
        .filter(|s| paths.is_property_path(&s.path));
    if old_side.is_none() && new_side.is_none() {
        return Ok(None);
    }
    let text = |s: &diff::Side| -> Result<String, PatchError> {
        Ok(props::source_text(&s.path, &git.blob(&s.oid)?))
    };
    let old_text = match old_side {
        Some(s) if s.is_text_file() => Some(text(s)?),
        _ => None,
    };
    let new_bytes = match new_side {
        Some(s) if s.is_text_file() => Some(git.blob(&s.oid)?),
        _ => None,
    };
    let new_binary = new_bytes.as_deref().is_some_and(modules::is_binary);
    let new_text = match (new_side, new_bytes) {
        (Some(s), Some(bytes)) => Some(props::source_text(&s.path, &bytes)),
        _ => None,
    };
    let new_is_added = new_side.is_some_and(|n| is_new_path(change, n));
    let (added, removed) = match (old_side, new_side) {
        // Both sides are property code: the real line diff.
        (Some(_), Some(_)) => {
            let lines = line_changes(
                git,
                &change.old,
                change.new.as_ref(),
                change.parents_without,
            )?;
            (lines.added, lines.removed)
        }
        // Leaving property_paths (or deleted): every line of the old file is gone.
        (Some(_), None) => (
            Vec::new(),
            old_text.as_deref().map(all_lines).unwrap_or_default(),
        ),
        // Entering property_paths (or added): every line is new.
        (None, _) => (
            new_text.as_deref().map(all_lines).unwrap_or_default(),
            Vec::new(),
        ),
    };
    Ok(Some(PropertyFile {
        old_path: old_side.map(|s| s.path.clone()),
        new_path: new_side.map(|s| s.path.clone()),
        old_text: old_text.filter(|_| old_side.is_some()),
        new_text,
        added,
        removed,
        new_binary,
        new_is_added,
        new_entry: new_side.map(diff::Side::entry).unwrap_or_default(),
    }))
}

/// Whether the raw commit object carries an SSH signature header (not OpenPGP or X.509).
fn is_ssh_signed(object: &[u8]) -> bool {
    let text = String::from_utf8_lossy(object);
    let headers = text.split("\n\n").next().unwrap_or("");
    headers.lines().any(|line| {
        (line.starts_with("gpgsig ") || line.starts_with("gpgsig-sha256 "))
            && line
                .split_once(' ')
                .is_some_and(|(_, v)| v.trim() == "-----BEGIN SSH SIGNATURE-----")
    })
}

/// A name beside the script at `path`, with its ending (`tests/oracles/split.js` gives
/// `tests/oracles/freezegate-beside.js`): a `protected` glob that matches it covers the
/// script's folder (`tests/oracles/**`, `tests/oracles/*.js`), where what the script loads
/// lives, and not the script's own name only.
fn beside(path: &str) -> String {
    let (folder, name) = match path.rsplit_once('/') {
        Some((folder, name)) => (format!("{folder}/"), name),
        None => (String::new(), path),
    };
    let ending = name
        .rfind('.')
        .filter(|&i| i > 0)
        .map_or("", |i| &name[i..]);
    format!("{folder}freezegate-beside{ending}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_ssh_signature_headers_count() {
        let ssh = b"tree 1\nparent 2\nauthor a\ncommitter c\ngpgsig -----BEGIN SSH SIGNATURE-----\n U1NIU0lH\n -----END SSH SIGNATURE-----\n\nmessage\n";
        let pgp = b"tree 1\nauthor a\ngpgsig -----BEGIN PGP SIGNATURE-----\n x\n\nmessage gpgsig -----BEGIN SSH SIGNATURE-----\n";
        assert!(is_ssh_signed(ssh));
        assert!(!is_ssh_signed(pgp));
        assert!(!is_ssh_signed(
            b"tree 1\n\ngpgsig -----BEGIN SSH SIGNATURE-----\n"
        ));
    }

    #[test]
    fn checked_code_excludes_fixtures_ledger_and_prose() {
        assert!(is_checked_code("src/tax.rs"));
        assert!(!is_checked_code("fixtures/p/0123456789abcdef.json"));
        assert!(!is_checked_code("freeze/ledger.json"));
        assert!(!is_checked_code("docs/notes.md"));
    }
}
