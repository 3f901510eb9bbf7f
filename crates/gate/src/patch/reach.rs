//! Whether cargo compiles a Rust file of a commit's tree: a property moved to a file that no
//! crate root or `mod` declaration reaches no longer runs.
//!
//! A file is compiled when it is a crate root by cargo's conventions (`src/lib.rs`,
//! `src/main.rs`, `build.rs`, `src/bin/*.rs`, `src/bin/*/main.rs`, `tests/*.rs`, `benches/*.rs`,
//! `examples/*.rs`, `tests/*/main.rs` …) of a folder that holds a `Cargo.toml`, or (a root's
//! place without a `Cargo.toml` too, such as `src/tests/checks.rs`) when a
//! compiled file of its parent module declares it (`mod NAME;`, read outside comments and
//! strings). The reading is approximate where Rust is richer: a `#[path]` attribute, a target
//! with its own `path` in `Cargo.toml`, or an `include!` is not followed (such a file counts as
//! not compiled), and a `mod NAME;` inside an inline `mod other { … }` is read as if it were at
//! the top of its file.

use std::cell::RefCell;
use std::collections::BTreeMap;

use regex::Regex;

use super::PatchError;
use super::git::Git;
use super::policy::read_at;
use super::props::blank_rust_comments_and_strings;

/// How deep a chain of `mod` declarations is followed.
const MAX_DEPTH: usize = 32;

/// Answers "is this file compiled" for one commit's tree, reading git lazily and remembering.
pub(crate) struct Reach<'g> {
    git: &'g Git,
    commit: &'g str,
    memo: RefCell<BTreeMap<String, bool>>,
    error: RefCell<Option<PatchError>>,
}

impl<'g> Reach<'g> {
    pub(crate) fn new(git: &'g Git, commit: &'g str) -> Self {
        Reach {
            git,
            commit,
            memo: RefCell::new(BTreeMap::new()),
            error: RefCell::new(None),
        }
    }

    /// Whether `path` (from the project folder) is compiled. A git failure answers `true` and
    /// is kept for [`Reach::into_error`].
    pub(crate) fn compiled(&self, path: &str) -> bool {
        self.compiled_at(path, 0)
    }

    /// The first git failure met, if any: the commit could not be judged.
    pub(crate) fn into_error(self) -> Option<PatchError> {
        self.error.into_inner()
    }

    fn fail(&self, e: PatchError) {
        self.error.borrow_mut().get_or_insert(e);
    }

    fn read(&self, path: &str) -> Option<String> {
        match read_at(self.git, self.commit, path) {
            Ok(bytes) => bytes.map(|b| String::from_utf8_lossy(&b).into_owned()),
            Err(e) => {
                self.fail(e);
                None
            }
        }
    }

    fn compiled_at(&self, path: &str, depth: usize) -> bool {
        if let Some(known) = self.memo.borrow().get(path) {
            return *known;
        }
        let answer = self.decide(path, depth);
        self.memo.borrow_mut().insert(path.to_string(), answer);
        answer
    }

    fn decide(&self, path: &str, depth: usize) -> bool {
        if depth > MAX_DEPTH {
            return false;
        }
        // A root only where its crate folder holds a `Cargo.toml`: `src/tests/checks.rs` is a
        // module declared from `src/tests/mod.rs`, not the root of a crate `src`.
        if let Some(krate) = crate_root_of(path)
            && self.read(&join(krate, "Cargo.toml")).is_some()
        {
            return true;
        }
        let Some((name, parent)) = module_of(path) else {
            return false;
        };
        let mut candidates: Vec<String> = ["mod.rs", "lib.rs", "main.rs", "build.rs"]
            .iter()
            .map(|f| join(parent, f))
            .collect();
        if !parent.is_empty() {
            candidates.push(format!("{parent}.rs"));
        }
        if is_roots_folder(parent) {
            let folder = format!("{}{parent}", self.git.prefix().unwrap_or_default());
            match self.git.files_in(self.commit, &folder) {
                Ok(names) => candidates.extend(
                    names
                        .into_iter()
                        .filter(|n| n.ends_with(".rs"))
                        .map(|n| join(parent, &n)),
                ),
                Err(e) => {
                    self.fail(e);
                    return true;
                }
            }
        }
        candidates.sort();
        candidates.dedup();
        candidates.into_iter().filter(|c| c != path).any(|c| {
            self.read(&c).is_some_and(|text| declares(&text, name))
                && self.compiled_at(&c, depth + 1)
        })
    }
}

fn join(dir: &str, file: &str) -> String {
    if dir.is_empty() {
        file.to_string()
    } else {
        format!("{dir}/{file}")
    }
}

/// The folders whose every `.rs` file is a crate root (so may declare modules beside it).
fn is_roots_folder(dir: &str) -> bool {
    let last = dir.rsplit('/').next().unwrap_or(dir);
    matches!(last, "tests" | "benches" | "examples")
        || dir == "src/bin"
        || dir.ends_with("/src/bin")
}

/// The crate folder of `path` when cargo's conventions make it a crate root ("" for the
/// project folder).
pub(crate) fn crate_root_of(path: &str) -> Option<&str> {
    let parts: Vec<&str> = path.split('/').collect();
    let n = parts.len();
    let krate = |k: usize| -> &str {
        let len: usize = parts[..k].iter().map(|p| p.len() + 1).sum();
        &path[..len.saturating_sub(1)]
    };
    let last = parts[n - 1];
    if last == "build.rs" {
        return Some(krate(n - 1));
    }
    if n >= 2 && parts[n - 2] == "src" && matches!(last, "lib.rs" | "main.rs") {
        return Some(krate(n - 2));
    }
    let rs = last.ends_with(".rs");
    if n >= 2 && rs && matches!(parts[n - 2], "tests" | "benches" | "examples") {
        return Some(krate(n - 2));
    }
    if n >= 3 && last == "main.rs" && matches!(parts[n - 3], "tests" | "benches" | "examples") {
        return Some(krate(n - 3));
    }
    if n >= 3 && rs && parts[n - 3] == "src" && parts[n - 2] == "bin" {
        return Some(krate(n - 3));
    }
    if n >= 4 && last == "main.rs" && parts[n - 4] == "src" && parts[n - 3] == "bin" {
        return Some(krate(n - 4));
    }
    None
}

/// The module name a file stands for and the folder of the files that may declare it:
/// `a/b.rs` is `b`, declared from `a`; `a/b/mod.rs` is `b`, declared from `a`.
pub(crate) fn module_of(path: &str) -> Option<(&str, &str)> {
    let (dir, file) = path.rsplit_once('/').unwrap_or(("", path));
    let stem = file.strip_suffix(".rs")?;
    if stem == "mod" {
        let (parent, name) = dir.rsplit_once('/').unwrap_or(("", dir));
        return (!name.is_empty()).then_some((name, parent));
    }
    Some((stem, dir))
}

/// Whether Rust `text` declares module `name` from a file (`mod name;`, any visibility and
/// attributes), outside comments and strings.
pub(crate) fn declares(text: &str, name: &str) -> bool {
    let code = blank_rust_comments_and_strings(text);
    Regex::new(&format!(r"\bmod\s+(?:r#)?{}\s*;", regex::escape(name)))
        .is_ok_and(|re| re.is_match(&code))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crate_roots_follow_cargo_conventions() {
        for (path, krate) in [
            ("src/lib.rs", Some("")),
            ("src/main.rs", Some("")),
            ("crates/gate/src/lib.rs", Some("crates/gate")),
            ("tests/props.rs", Some("")),
            ("crates/gate/tests/patch.rs", Some("crates/gate")),
            ("tests/suite/main.rs", Some("")),
            ("src/bin/tool.rs", Some("")),
            ("src/bin/tool/main.rs", Some("")),
            ("benches/b.rs", Some("")),
            ("build.rs", Some("")),
            ("src/props/props.rs", None),
            ("tests/common/mod.rs", None),
            ("tests/suite/util.rs", None),
        ] {
            assert_eq!(crate_root_of(path), krate, "{path}");
        }
    }

    #[test]
    fn modules_and_their_declarations() {
        assert_eq!(
            module_of("src/props/old/props.rs"),
            Some(("props", "src/props/old"))
        );
        assert_eq!(module_of("src/props/mod.rs"), Some(("props", "src")));
        assert_eq!(module_of("x.py"), None);
        assert!(declares("#[cfg(test)]\npub(crate) mod props;\n", "props"));
        assert!(!declares(
            "// mod props;\nconst S: &str = \"mod props;\";\nmod props_old;\nmod props {}\n",
            "props"
        ));
    }
}
