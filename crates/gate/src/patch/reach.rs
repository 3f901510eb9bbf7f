//! Whether cargo compiles a Rust file of a commit's tree: a property moved to a file that no
//! crate root, `mod` declaration or `include!` reaches no longer runs, and neither does one
//! whose file stays where it is while the commit takes away what compiled it
//! ([`no_longer_compiled`]).
//!
//! A file is compiled when it is a crate root by cargo's conventions (`src/lib.rs`,
//! `src/main.rs`, `build.rs`, `src/bin/*.rs`, `src/bin/*/main.rs`, `tests/*.rs`, `benches/*.rs`,
//! `examples/*.rs`, `tests/*/main.rs` …) of a folder that holds a `Cargo.toml`, or (a root's
//! place without a `Cargo.toml` too, such as `src/tests/checks.rs`) when a
//! compiled file of its parent module declares it (`mod NAME;`, read outside comments and
//! strings), or when a compiled `.rs` file of the project `include!`s it by one string literal
//! (`include!("common/props.rs")`, also `std::include!`, resolved as Rust does from the
//! including file's folder, `..` allowed) at the top of that file or inside inline modules
//! only — every brace around it a `mod NAME { … }`'s, not a function body's, an `impl`'s, a
//! `const` block's or a macro's, whose `#[test]`s the harness never runs; the outer
//! attributes of those modules are read as the `include!`'s own, not their inner
//! `#![cfg]` ([`closed_scopes`]). A declaration or an `include!` counts only when a
//! test build surely compiles it ([`declarations`]): not behind `#[path = …]`, a `#[cfg(…)]`
//! that is not always true with `test` set (`#[cfg(test)]` is fine, `#[cfg(feature = "x")]`,
//! `#[cfg(unix)]`, `#[cfg(any())]` and `#[cfg(not(test))]` are not), or a `#[cfg_attr(…)]`
//! that may yield either, and not in a file whose inner `#![cfg(…)]` is such a `cfg`. The
//! reading is approximate where Rust is richer: a `#[path]` attribute is not followed, nor an
//! `include!` whose argument is built (`concat!`, `env!`) or holds an escape (such a file
//! counts as not compiled); a `mod NAME;` inside an inline `mod other { … }`, a function or
//! a `macro_rules!` is read as if it were at the top of its file (the attributes of `other`
//! are not read, nor whether the function or macro is used: a non-inline module in a
//! function fails to build without `#[path]` anyway); an `include!` in item place at the top
//! of its file counts even when it stands in an expression (`static S: &str = include!(…)`);
//! and the `mod` lines of an included file are read as if it were a module file at
//! its own place (Rust resolves them from the including module's). Includes are read from
//! every `.rs` file of the tree, once, and only when a file is reached neither as a root nor
//! as a module.
//!
//! The crate's `Cargo.toml` is read for its targets ([`tested_root`], [`target_at`]): a
//! conventional root counts only if `cargo test` runs its tests — not with `autotests = false`
//! (or `autobins`, `autobenches`, `autoexamples`) unless a target names it, not when its
//! target has `test = false`, `harness = false` or `required-features` beyond the `default`
//! features, not a bench or an example (`benches/*.rs`, `examples/*.rs` …) unless its
//! `[[bench]]` or `[[example]]` target has `test = true` (their `test` defaults to `false`:
//! `cargo test` builds examples only and skips benches), not when a target of its name has
//! another `path`, not in an edition-2015 crate that declares any target of its kind, not a
//! `src/lib.rs` that `[lib]` moves elsewhere — and a file a target names by its own `path` is
//! a root, under the same flags.
//!
//! A crate below a `[workspace]` (the nearest `Cargo.toml` above it that has one) counts only
//! if the workspace holds it, as `cargo test --workspace` tests: not under `exclude` (unless
//! a `members` entry that is no glob names its folder or one above it), and
//! matched by `members`, or a path dependency of the workspace's own package
//! ([`directly_held`]), or — read only for a crate none of those hold
//! ([`Reach::workspace_members`]) — a path dependency of a member, transitively, as cargo
//! adds them: of any kind (`[dependencies]`, `[dev-dependencies]`, `[build-dependencies]`,
//! and those of every `[target.'…']` table whatever the platform), by its `path` resolved
//! from the member's folder, or inherited (`lib = { workspace = true }`) by the `path` the
//! workspace's `[workspace.dependencies]` gives it, resolved from the workspace folder
//! ([`dependency_folders`]), in a folder inside the workspace's that holds a `Cargo.toml` and
//! is not excluded. An entry of `[workspace.dependencies]` that no member inherits makes no
//! member. What is not read:
//! `default-members`, `package.workspace`, a crate whose own `Cargo.toml` has a `[workspace]`
//! (read as a crate of the workspace above), features that turn on others, and the targets of
//! a manifest in another folder than the file's crate or one above it.

use std::cell::{Cell, OnceCell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;
use std::rc::Rc;
use std::sync::LazyLock;

use regex::Regex;

use super::PatchError;
use super::diff::{FileChange, Side};
use super::git::Git;
use super::props::{PropertyDef, properties, source_text};
use super::props::{blank_rust_comments_and_strings, matching_close};
use super::rules::FileKind;

impl super::rules::TreeView for Reach<'_> {
    fn compiled(&self, path: &str) -> bool {
        Reach::compiled(self, path)
    }

    fn names_in(&self, folder: &str) -> Vec<String> {
        Reach::names_in(self, folder)
    }
}

/// How deep a chain of `mod` declarations is followed.
const MAX_DEPTH: usize = 32;

/// How many paths a [`Reach`] looks up with a `git ls-tree` of their own before it lists the
/// whole tree once and answers the rest from that listing: a few lookups are cheaper one by
/// one, thousands (every file of a wide `tests/` folder) are not.
const SINGLE_LOOKUPS: usize = 32;

/// A blob of a tree listing: its mode and id.
type Blobs = BTreeMap<String, (String, String)>;

/// Module names, each with the paths of the files that declare it.
type Declarers = BTreeMap<String, Vec<String>>;

/// Answers "is this file compiled" for one commit's tree, reading git lazily and remembering:
/// the answers, and what each file declares and each roots folder holds, so that judging
/// every file of a folder reads each file once (not once for each file it might declare).
/// The first [`SINGLE_LOOKUPS`] paths are looked up with a `git ls-tree` each; after them the
/// whole tree is listed once, so the git processes stay bounded however many files are judged
/// (blobs are read through the one `git cat-file --batch` either way).
pub(crate) struct Reach<'g> {
    git: &'g Git,
    commit: &'g str,
    memo: RefCell<BTreeMap<String, bool>>,
    /// What each path declares ([`declarations`]); `None`: not a regular file.
    declared: RefCell<BTreeMap<String, Option<Rc<Declarations>>>>,
    /// The file names of each roots folder.
    folders: RefCell<BTreeMap<String, Rc<Vec<String>>>>,
    /// For each roots folder, the `.rs` files directly in it that declare each module name.
    declarers: RefCell<BTreeMap<String, Rc<Declarers>>>,
    /// For each file an `include!` names (from the project folder), the files that include it
    /// ([`Reach::includers`]).
    includers: OnceCell<Rc<Declarers>>,
    /// Each `Cargo.toml` read, parsed once; `None`: not a regular file, `Some(None)`: not TOML.
    manifests: RefCell<BTreeMap<String, Option<Rc<Option<toml::Table>>>>>,
    /// For each workspace folder whose members were worked out, the folders of its members
    /// (from the workspace folder) ([`Reach::workspace_members`]).
    members: RefCell<BTreeMap<String, Rc<BTreeSet<String>>>>,
    /// The paths looked up one by one so far, and how many may be ([`SINGLE_LOOKUPS`]).
    lookups: Cell<usize>,
    single_lookups: usize,
    /// The whole tree's blobs, by path from the repository root, once listed.
    tree: OnceCell<Blobs>,
    error: RefCell<Option<PatchError>>,
}

impl<'g> Reach<'g> {
    pub(crate) fn new(git: &'g Git, commit: &'g str) -> Self {
        Self::with_single_lookups(git, commit, SINGLE_LOOKUPS)
    }

    /// A `Reach` that looks up `single_lookups` paths one by one before it lists the tree.
    fn with_single_lookups(git: &'g Git, commit: &'g str, single_lookups: usize) -> Self {
        Reach {
            git,
            commit,
            memo: RefCell::new(BTreeMap::new()),
            declared: RefCell::new(BTreeMap::new()),
            folders: RefCell::new(BTreeMap::new()),
            declarers: RefCell::new(BTreeMap::new()),
            includers: OnceCell::new(),
            members: RefCell::new(BTreeMap::new()),
            manifests: RefCell::new(BTreeMap::new()),
            lookups: Cell::new(0),
            single_lookups,
            tree: OnceCell::new(),
            error: RefCell::new(None),
        }
    }

    /// Whether `path` (from the project folder) is compiled. A git failure answers `true` and
    /// is kept for [`Reach::into_error`].
    pub(crate) fn compiled(&self, path: &str) -> bool {
        self.compiled_at(path, 0)
    }

    /// Whether `path` is a regular file of the tree. A git failure answers `false` and is kept
    /// for [`Reach::into_error`].
    pub(crate) fn holds(&self, path: &str) -> bool {
        self.declarations(path).is_some()
    }

    /// The names of the files directly in `folder` (from the project folder, `""` for the
    /// project folder itself). A git failure answers none and is kept for
    /// [`Reach::into_error`].
    pub(crate) fn names_in(&self, folder: &str) -> Vec<String> {
        let listed = if folder.is_empty() {
            self.top_names()
        } else {
            self.files_in(folder).map(|names| names.as_ref().clone())
        };
        listed.unwrap_or_else(|e| {
            self.fail(e);
            Vec::new()
        })
    }

    /// The names of the files directly in the project folder, from the tree's listing.
    fn top_names(&self) -> Result<Vec<String>, PatchError> {
        let prefix = self.git.prefix()?.to_string();
        Ok(self
            .listing()?
            .range::<str, _>((Bound::Included(prefix.as_str()), Bound::Unbounded))
            .map(|(path, _)| path)
            .take_while(|path| path.starts_with(&prefix))
            .map(|path| &path[prefix.len()..])
            .filter(|name| !name.contains('/'))
            .map(str::to_string)
            .collect())
    }

    /// The first git failure met, if any: the commit could not be judged.
    pub(crate) fn into_error(self) -> Option<PatchError> {
        self.error.into_inner()
    }

    fn fail(&self, e: PatchError) {
        self.error.borrow_mut().get_or_insert(e);
    }

    /// The whole tree's blobs, listed once (by path from the repository root).
    fn listing(&self) -> Result<&Blobs, PatchError> {
        if let Some(tree) = self.tree.get() {
            return Ok(tree);
        }
        let tree = self.git.blobs(self.commit)?;
        Ok(self.tree.get_or_init(|| tree))
    }

    /// The listing once it is the cheaper way to answer: listed already, or
    /// [`SINGLE_LOOKUPS`] paths looked up one by one; `None` while it is not (and this call
    /// counts as one more single lookup).
    fn listing_if_due(&self) -> Result<Option<&Blobs>, PatchError> {
        if self.tree.get().is_none() && self.lookups.get() < self.single_lookups {
            self.lookups.set(self.lookups.get() + 1);
            return Ok(None);
        }
        self.listing().map(Some)
    }

    /// The bytes of `path` (from the project folder) when it is a regular file of the tree
    /// (not a symbolic link, a submodule or a folder).
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, PatchError> {
        let full = format!("{}{path}", self.git.prefix()?);
        let entry = match self.listing_if_due()? {
            Some(tree) => tree.get(&full).cloned(),
            None => self.git.tree_entry(self.commit, &full)?,
        };
        match entry {
            Some((mode, oid)) if mode == "100644" || mode == "100755" => {
                Ok(Some(self.git.blob(&oid)?))
            }
            _ => Ok(None),
        }
    }

    /// What `path` declares, read once; `None` when it is not a regular file.
    fn declarations(&self, path: &str) -> Option<Rc<Declarations>> {
        if let Some(known) = self.declared.borrow().get(path) {
            return known.clone();
        }
        let modules = match self.read(path) {
            Ok(bytes) => bytes.map(|b| Rc::new(declarations(&String::from_utf8_lossy(&b)))),
            Err(e) => {
                self.fail(e);
                None
            }
        };
        self.declared
            .borrow_mut()
            .insert(path.to_string(), modules.clone());
        modules
    }

    /// The `Cargo.toml` of folder `dir`, read and parsed once (`None` inside when it is not
    /// TOML); `None` when there is no such regular file.
    fn manifest(&self, dir: &str) -> Option<Rc<Option<toml::Table>>> {
        let path = join(dir, "Cargo.toml");
        if let Some(known) = self.manifests.borrow().get(&path) {
            return known.clone();
        }
        let parsed = match self.read(&path) {
            Ok(bytes) => bytes.map(|b| Rc::new(String::from_utf8_lossy(&b).parse().ok())),
            Err(e) => {
                self.fail(e);
                None
            }
        };
        self.manifests.borrow_mut().insert(path, parsed.clone());
        parsed
    }

    /// The file names of `parent` (from the project folder), listed once.
    fn files_in(&self, parent: &str) -> Result<Rc<Vec<String>>, PatchError> {
        if let Some(known) = self.folders.borrow().get(parent) {
            return Ok(Rc::clone(known));
        }
        let folder = format!("{}{parent}", self.git.prefix()?);
        let names = Rc::new(match self.listing_if_due()? {
            Some(tree) => {
                let inside = format!("{folder}/");
                tree.range::<str, _>((Bound::Included(inside.as_str()), Bound::Unbounded))
                    .map(|(path, _)| path)
                    .take_while(|path| path.starts_with(&inside))
                    .map(|path| &path[inside.len()..])
                    .filter(|name| !name.contains('/'))
                    .map(str::to_string)
                    .collect()
            }
            None => self.git.files_in(self.commit, &folder)?,
        });
        self.folders
            .borrow_mut()
            .insert(parent.to_string(), Rc::clone(&names));
        Ok(names)
    }

    /// The `.rs` files directly in roots folder `parent` by the modules they declare, read
    /// once: a file of a wide `tests/` folder is looked for among those that declare it, not
    /// among all its neighbours.
    fn declarers(&self, parent: &str) -> Result<Rc<Declarers>, PatchError> {
        if let Some(known) = self.declarers.borrow().get(parent) {
            return Ok(Rc::clone(known));
        }
        let mut index = Declarers::new();
        for name in self.files_in(parent)?.iter().filter(|n| n.ends_with(".rs")) {
            let path = join(parent, name);
            for module in self.declarations(&path).iter().flat_map(|d| &d.modules) {
                index.entry(module.clone()).or_default().push(path.clone());
            }
        }
        let index = Rc::new(index);
        self.declarers
            .borrow_mut()
            .insert(parent.to_string(), Rc::clone(&index));
        Ok(index)
    }

    fn compiled_at(&self, path: &str, depth: usize) -> bool {
        if let Some(known) = self.memo.borrow().get(path) {
            return *known;
        }
        let answer = self.decide(path, depth);
        self.memo.borrow_mut().insert(path.to_string(), answer);
        answer
    }

    /// Whether the crate in folder `krate` belongs to the workspace of the nearest folder above
    /// it whose `Cargo.toml` has a `[workspace]`; `true` when there is none in the project. Not
    /// when `exclude` names it ([`excluded`]); then when the workspace's own manifest holds it
    /// ([`directly_held`]), and only otherwise is the tree read for the members that hold
    /// it through their path dependencies ([`Reach::workspace_members`]).
    fn in_workspace(&self, krate: &str) -> bool {
        for dir in ancestors(krate) {
            if let Some(manifest) = self.manifest(dir)
                && let Some(doc) = manifest.as_ref()
                && doc.contains_key("workspace")
            {
                let rel = krate[dir.len()..].trim_start_matches('/');
                return !excluded(doc, rel)
                    && (directly_held(doc, rel) || self.workspace_members(dir, doc).contains(rel));
            }
        }
        true
    }

    /// The members of the workspace whose manifest `doc` lies in folder `root`, as cargo finds
    /// them, worked out once: the crates its manifest holds ([`directly_held`]: `members`,
    /// path dependencies of its package) and its package, then, transitively, every path
    /// dependency of a member ([`dependency_folders`]: of any kind, target-specific ones too,
    /// by `path` from the member's folder or inherited from `[workspace.dependencies]` by
    /// its `path` from `root`) whose folder lies inside `root`, is not excluded and holds a
    /// `Cargo.toml`. Folders from `root`. A git failure is kept for
    /// [`Reach::into_error`] (the answer is then empty).
    fn workspace_members(&self, root: &str, doc: &toml::Table) -> Rc<BTreeSet<String>> {
        if let Some(known) = self.members.borrow().get(root) {
            return Rc::clone(known);
        }
        let members = match self.find_members(root, doc) {
            Ok(members) => members,
            Err(e) => {
                self.fail(e);
                BTreeSet::new()
            }
        };
        let members = Rc::new(members);
        self.members
            .borrow_mut()
            .insert(root.to_string(), Rc::clone(&members));
        members
    }

    fn find_members(&self, root: &str, doc: &toml::Table) -> Result<BTreeSet<String>, PatchError> {
        // The folders below `root` that hold a `Cargo.toml`, from `root`, out of one listing.
        let top = format!("{}{}", self.git.prefix()?, join(root, ""));
        let crates: BTreeSet<String> = self
            .listing()?
            .range::<str, _>((Bound::Included(top.as_str()), Bound::Unbounded))
            .take_while(|(path, _)| path.starts_with(&top))
            .filter_map(|(path, _)| {
                let rel = &path[top.len()..];
                (rel == "Cargo.toml")
                    .then_some("")
                    .or_else(|| rel.strip_suffix("/Cargo.toml"))
            })
            .map(str::to_string)
            .collect();
        let mut members: BTreeSet<String> = crates
            .iter()
            .filter(|rel| !excluded(doc, rel) && directly_held(doc, rel))
            .cloned()
            .collect();
        if doc.contains_key("package") {
            members.insert(String::new());
        }
        let mut queue: Vec<String> = members.iter().cloned().collect();
        while let Some(member) = queue.pop() {
            let Some(manifest) = self.manifest(&join(root, &member)) else {
                continue;
            };
            let Some(member_doc) = manifest.as_ref() else {
                continue;
            };
            // From the project folder, so that `../../ws/lib` may leave `root` and come back.
            for folder in dependency_folders(root, doc, &join(root, &member), member_doc) {
                let rel = match folder.strip_prefix(root) {
                    _ if root.is_empty() => folder.as_str(),
                    Some("") => "",
                    Some(rest) if rest.starts_with('/') => &rest[1..],
                    _ => continue,
                };
                let rel = rel.to_string();
                if crates.contains(&rel) && !excluded(doc, &rel) && members.insert(rel.clone()) {
                    queue.push(rel);
                }
            }
        }
        Ok(members)
    }

    fn decide(&self, path: &str, depth: usize) -> bool {
        if depth > MAX_DEPTH {
            return false;
        }
        // A root only where its crate folder holds a `Cargo.toml`: `src/tests/checks.rs` is a
        // module declared from `src/tests/mod.rs`, not the root of a crate `src`.
        if let Some(krate) = crate_root_of(path)
            && let Some(manifest) = self.manifest(krate)
        {
            let rel = path[krate.len()..].trim_start_matches('/');
            if tested_root(manifest.as_ref().as_ref(), rel) && self.in_workspace(krate) {
                return true;
            }
            // Not a target whose tests run: it may still be a module of one that is
            // (`tests/x.rs` declared by `mod x;` in `tests/main.rs`).
        }
        // A target's own `path` in the `Cargo.toml` of a folder above.
        for dir in ancestors(path) {
            if let Some(manifest) = self.manifest(dir)
                && let Some(doc) = manifest.as_ref()
                && target_at(doc, path[dir.len()..].trim_start_matches('/')) == Some(true)
                && self.in_workspace(dir)
            {
                return true;
            }
        }
        if let Some((name, parent)) = module_of(path)
            && self.declared_by_parent(path, name, parent, depth)
        {
            return true;
        }
        // Included by a compiled file.
        match self.includers() {
            Ok(index) => index
                .get(path)
                .into_iter()
                .flatten()
                .filter(|c| *c != path)
                .any(|c| self.compiled_at(c, depth + 1)),
            Err(e) => {
                self.fail(e);
                true
            }
        }
    }

    /// Whether a compiled file of the parent module declares `path` as module `name`.
    fn declared_by_parent(&self, path: &str, name: &str, parent: &str, depth: usize) -> bool {
        let mut candidates: Vec<String> = ["mod.rs", "lib.rs", "main.rs", "build.rs"]
            .iter()
            .map(|f| join(parent, f))
            .collect();
        if !parent.is_empty() {
            candidates.push(format!("{parent}.rs"));
        }
        if is_roots_folder(parent) {
            match self.declarers(parent) {
                Ok(index) => candidates.extend(index.get(name).into_iter().flatten().cloned()),
                Err(e) => {
                    self.fail(e);
                    return true;
                }
            }
        }
        candidates.sort();
        candidates.dedup();
        candidates.into_iter().filter(|c| c != path).any(|c| {
            self.declarations(&c)
                .is_some_and(|d| d.modules.contains(name))
                && self.compiled_at(&c, depth + 1)
        })
    }

    /// For each file an `include!` of a `.rs` file of the project names, resolved from the
    /// including file's folder, the files that include it: read once, from every `.rs` file
    /// of the tree — only when a file is compiled neither as a root nor as a module.
    fn includers(&self) -> Result<Rc<Declarers>, PatchError> {
        if let Some(known) = self.includers.get() {
            return Ok(Rc::clone(known));
        }
        let prefix = self.git.prefix()?;
        let files: Vec<String> = self
            .listing()?
            .iter()
            .filter(|(path, (mode, _))| {
                path.ends_with(".rs") && (mode == "100644" || mode == "100755")
            })
            .filter_map(|(path, _)| path.strip_prefix(prefix))
            .map(str::to_string)
            .collect();
        let mut index = Declarers::new();
        for path in files {
            let Some(declared) = self.declarations(&path) else {
                continue;
            };
            let dir = path.rsplit_once('/').map_or("", |(dir, _)| dir);
            for target in declared.includes.iter().filter_map(|i| normalize(dir, i)) {
                index.entry(target).or_default().push(path.clone());
            }
        }
        Ok(Rc::clone(self.includers.get_or_init(|| Rc::new(index))))
    }
}

/// A property of a file a commit leaves unchanged but no longer compiles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Uncompiled {
    /// The property file (from the project folder).
    pub file: String,
    /// The property.
    pub property: PropertyDef,
    /// Why: the file is no longer compiled, after a change to these paths.
    pub why: String,
}

/// The properties of the Rust files under `property_paths` that `commit` leaves as they were
/// but no longer compiles, while one of the trees `before` (the parents that bring in
/// commits) compiled them: their `mod` line (or `include!`) deleted or put behind a `#[cfg]`
/// or `#[path]`, the file declaring them or their crate's `Cargo.toml` deleted or renamed.
/// `own` is the commit's own change, paths from the project folder (`prefix` in the work
/// tree).
///
/// Only a change that can make a file stop compiling is followed: a deleted, renamed or
/// retyped `Cargo.toml`, one whose targets change ([`target_selection`]: `autotests`,
/// `[[test]]` tables, `test`/`harness` flags …), or a `.rs` file that declared a module or
/// included a file ([`declarations`]) which its new text no longer declares or includes. A
/// commit with none runs no git at all; one that has some lists the property files below the
/// folders of those paths (for a lost `include!`, the folder of the file it named), and below
/// the folder of each file that an `include!` chain from a file below them leads to in a tree
/// before ([`chained_includes`]: `tests/it/common.rs` including `../shared/props.rs`), and
/// asks [`Reach`] on both sides — below the project folder when a `Cargo.toml` loses a path
/// dependency or one it inherits with `workspace = true` (or goes with one), since the crate
/// it named may have been a workspace member only through it, and so may the crates that one
/// held in turn, wherever they lie. Files the commit changes itself are left to the rules. A
/// git failure is an error.
pub(crate) fn no_longer_compiled(
    git: &Git,
    commit: &str,
    before: &[String],
    own: &[FileChange],
    prefix: &str,
    is_property_path: &dyn Fn(&str) -> bool,
) -> Result<Vec<Uncompiled>, PatchError> {
    let is_manifest = |p: &str| p == "Cargo.toml" || p.ends_with("/Cargo.toml");
    let mut causes: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for change in own {
        for old in &change.old {
            let path = old.path.as_str();
            if path.starts_with("../") || !(path.ends_with(".rs") || is_manifest(path)) {
                continue;
            }
            let kept = change
                .new
                .as_ref()
                .filter(|n| n.path == old.path && n.is_text_file());
            let lost = if is_manifest(path) {
                // Each side parsed once; `None` inside: not TOML.
                let parsed = |side: &Side| -> Result<Option<toml::Table>, PatchError> {
                    Ok(String::from_utf8_lossy(&git.blob(&side.oid)?).parse().ok())
                };
                let before = parsed(old)?;
                let after = kept.map(parsed).transpose()?;
                // A path dependency (or an inherited one) gone: the crate it named (and those it held in turn) may
                // have been a workspace member only through it, wherever it lies.
                let paths =
                    |doc: Option<&toml::Table>| doc.map(dependency_paths).unwrap_or_default();
                if !paths(before.as_ref())
                    .is_subset(&paths(after.as_ref().and_then(Option::as_ref)))
                {
                    causes
                        .entry(String::new())
                        .or_default()
                        .insert(path.to_string());
                }
                after.is_none_or(|after| {
                    before.as_ref().map(target_selection) != after.as_ref().map(target_selection)
                })
            } else {
                let declared = |side: &Side| -> Result<Declarations, PatchError> {
                    Ok(if side.is_text_file() {
                        declarations(&String::from_utf8_lossy(&git.blob(&side.oid)?))
                    } else {
                        Declarations::default()
                    })
                };
                let had = declared(old)?;
                let has = match kept {
                    Some(new) if had != Declarations::default() => declared(new)?,
                    _ => Declarations::default(),
                };
                // An `include!` gone: what it named lies in the folder it names.
                let dir = path.rsplit_once('/').map_or("", |(dir, _)| dir);
                for target in had.includes.difference(&has.includes) {
                    if let Some(file) = normalize(dir, target) {
                        let folder = file.rsplit_once('/').map_or("", |(folder, _)| folder);
                        causes
                            .entry(folder.to_string())
                            .or_default()
                            .insert(path.to_string());
                    }
                }
                !had.modules.is_subset(&has.modules)
            };
            if lost {
                let dir = path.rsplit_once('/').map_or("", |(dir, _)| dir);
                causes
                    .entry(dir.to_string())
                    .or_default()
                    .insert(path.to_string());
            }
        }
    }
    if causes.is_empty() || before.is_empty() {
        return Ok(Vec::new());
    }
    let touched: BTreeSet<&str> = own.iter().flat_map(FileChange::paths).collect();
    let now = Reach::new(git, commit);
    let then: Vec<Reach<'_>> = before.iter().map(|b| Reach::new(git, b)).collect();
    // The files an `include!` chain from below a cause's folder reaches outside them all.
    let mut chained: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    if !causes.contains_key("") {
        for reach in &then {
            chained_includes(reach, &causes, &mut chained)?;
        }
    }
    let dirs: BTreeSet<&str> = causes
        .keys()
        .map(String::as_str)
        .chain(
            chained
                .keys()
                .map(|file| file.rsplit_once('/').map_or("", |(dir, _)| dir)),
        )
        .collect();
    let folders: Vec<String> = dirs
        .into_iter()
        .map(|dir| match (prefix, dir) {
            (p, "") => p.trim_end_matches('/').to_string(),
            (p, d) => format!("{p}{d}"),
        })
        .collect();
    let mut found = Vec::new();
    for (top, oid) in git.files_under(commit, &folders)? {
        let Some(path) = top.strip_prefix(prefix) else {
            continue;
        };
        if FileKind::of(path) != FileKind::Rust || !is_property_path(path) || touched.contains(path)
        {
            continue;
        }
        let text = source_text(path, &git.blob(&oid)?);
        let defs = properties(FileKind::Rust, &text);
        if defs.is_empty()
            || now.compiled(path)
            || !then.iter().any(|t| t.holds(path) && t.compiled(path))
        {
            continue;
        }
        let mut changed: BTreeSet<&str> = causes_of(&causes, path)
            .chain(chained.get(path).into_iter().flatten().map(String::as_str))
            .collect();
        if changed.is_empty() {
            changed = causes.values().flatten().map(String::as_str).collect();
        }
        let changed: Vec<&str> = changed.into_iter().collect();
        let module = module_of(path).map_or("", |(name, _)| name);
        let why = format!(
            "{path} is no longer compiled (neither a crate root `cargo test` runs nor a `mod {module};` or an `include!` reaches it after the change to {})",
            changed.join(", ")
        );
        found.extend(defs.into_iter().map(|property| Uncompiled {
            file: path.to_string(),
            property,
            why: why.clone(),
        }));
    }
    for reach in std::iter::once(now).chain(then) {
        if let Some(e) = reach.into_error() {
            return Err(e);
        }
    }
    Ok(found)
}

/// The changed paths of `causes` (by the folder below which they may stop files compiling)
/// whose folder holds `path`.
fn causes_of<'c>(
    causes: &'c BTreeMap<String, BTreeSet<String>>,
    path: &str,
) -> impl Iterator<Item = &'c str> {
    causes
        .iter()
        .filter(move |(dir, _)| dir.is_empty() || path.starts_with(&format!("{dir}/")))
        .flat_map(|(_, paths)| paths.iter().map(String::as_str))
}

/// Adds to `into` each file that an `include!` chain in the tree of `reach` leads to from a
/// file below the folder of one of `causes` (transitively: an included file's own
/// `include!`s too), when it lies below none of them, with the changed paths that may have
/// cut the chain: such a file stops compiling with its includer although the search below
/// the causes' folders does not list it (`tests/it/common.rs` includes
/// `../shared/props.rs`, and the commit deletes `mod common;` from `tests/it/main.rs`).
fn chained_includes(
    reach: &Reach<'_>,
    causes: &BTreeMap<String, BTreeSet<String>>,
    into: &mut BTreeMap<String, BTreeSet<String>>,
) -> Result<(), PatchError> {
    let index = reach.includers()?;
    let mut included: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (target, includers) in index.iter() {
        for includer in includers.iter().filter(|i| *i != target) {
            included.entry(includer).or_default().push(target);
        }
    }
    // Each file reached so far, with the changes that may cut the chain to it.
    let mut reached: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut queue: Vec<&str> = Vec::new();
    for includer in included.keys() {
        let why: BTreeSet<&str> = causes_of(causes, includer).collect();
        if !why.is_empty() {
            reached.insert(includer, why);
            queue.push(includer);
        }
    }
    while let Some(file) = queue.pop() {
        let why = reached.get(file).cloned().unwrap_or_default();
        for target in included.get(file).into_iter().flatten() {
            let known = reached.entry(target).or_default();
            let before = known.len();
            known.extend(why.iter().copied());
            if known.len() > before {
                queue.push(target);
            }
        }
    }
    for (file, why) in reached {
        if causes_of(causes, file).next().is_none() {
            into.entry(file.to_string())
                .or_default()
                .extend(why.into_iter().map(str::to_string));
        }
    }
    Ok(())
}

/// The kinds of cargo targets, with the manifest key of their table (or array of tables),
/// the `package` key that turns their discovery off, and whether `cargo test` runs their tests
/// when their table does not say (`test` defaults to `true` for bins and tests; benches and
/// examples default to `test = false`: `cargo test` runs a bench's or an example's `#[test]`s
/// only when its target sets `test = true`, and otherwise builds an example only).
const TARGETS: [(&str, &str, bool); 4] = [
    ("bin", "autobins", true),
    ("test", "autotests", true),
    ("bench", "autobenches", false),
    ("example", "autoexamples", false),
];

/// Whether a target table of `doc` keeps `cargo test` from running its tests: `test = false`,
/// `harness = false` (its `#[test]` functions are never called) or `required-features` that
/// the manifest's `default` features do not all turn on (built only when they are on).
fn untested(doc: &toml::Table, target: &toml::Table) -> bool {
    let defaults: Vec<&str> = doc
        .get("features")
        .and_then(|f| f.get("default"))
        .and_then(toml::Value::as_array)
        .map(|a| a.iter().filter_map(toml::Value::as_str).collect())
        .unwrap_or_default();
    ["test", "harness"]
        .iter()
        .any(|k| target.get(*k).and_then(toml::Value::as_bool) == Some(false))
        || target
            .get("required-features")
            .and_then(toml::Value::as_array)
            .is_some_and(|a| {
                a.iter()
                    .any(|f| f.as_str().is_none_or(|f| !defaults.contains(&f)))
            })
}

/// Whether `cargo test` runs the tests of a target of `doc` whose table is `target`, for a
/// kind whose `test` defaults to `by_default` ([`TARGETS`]): its `test` flag (or that
/// default) is on, and [`untested`] does not hold.
fn runs_tests(doc: &toml::Table, by_default: bool, target: &toml::Table) -> bool {
    target
        .get("test")
        .and_then(toml::Value::as_bool)
        .unwrap_or(by_default)
        && !untested(doc, target)
}

/// The target tables of `kind` in a manifest.
fn target_tables<'t>(doc: &'t toml::Table, kind: &str) -> Vec<&'t toml::Table> {
    match doc.get(kind) {
        Some(toml::Value::Array(a)) => a.iter().filter_map(toml::Value::as_table).collect(),
        Some(toml::Value::Table(t)) => vec![t],
        _ => Vec::new(),
    }
}

/// Whether the file `rel` (a path in the crate folder) that cargo's conventions make a crate
/// root is one whose tests `cargo test` runs, by what the crate's `Cargo.toml` says: not with
/// `autotests = false` (or `autobins`, `autobenches`, `autoexamples`) unless a target names
/// it, not when its target has `test = false`, `harness = false` or `required-features`, not
/// a bench or an example unless its target has `test = true` ([`TARGETS`]), not
/// `build.rs` with `build = false`, not `src/lib.rs` with a `[lib]` of `test = false`,
/// `harness = false` or another `path`. A manifest that does not parse (`None`) is read as
/// cargo's conventions alone (cargo would stop at it, and the build fails anyway).
fn tested_root(manifest: Option<&toml::Table>, rel: &str) -> bool {
    let Some(doc) = manifest else {
        return true;
    };
    let package = doc.get("package").and_then(toml::Value::as_table);
    let flag = |key: &str| {
        package
            .and_then(|p| p.get(key))
            .and_then(toml::Value::as_bool)
    };
    if rel == "build.rs" {
        return flag("build") != Some(false);
    }
    if rel == "src/lib.rs" {
        return target_tables(doc, "lib").first().is_none_or(|lib| {
            !untested(doc, lib)
                && lib
                    .get("path")
                    .and_then(toml::Value::as_str)
                    .is_none_or(|p| p.trim_start_matches("./") == rel)
        });
    }
    let parts: Vec<&str> = rel.split('/').collect();
    let (kind, name) = match parts.as_slice() {
        ["src", "main.rs"] => (
            "bin",
            package
                .and_then(|p| p.get("name"))
                .and_then(toml::Value::as_str)
                .unwrap_or_default()
                .to_string(),
        ),
        ["src", "bin", file] => ("bin", file.trim_end_matches(".rs").to_string()),
        ["src", "bin", folder, "main.rs"] => ("bin", (*folder).to_string()),
        [folder, file] => (
            plural_kind(folder),
            file.trim_end_matches(".rs").to_string(),
        ),
        [folder, sub, "main.rs"] => (plural_kind(folder), (*sub).to_string()),
        _ => return true,
    };
    let Some((_, auto, by_default)) = TARGETS.iter().find(|(k, _, _)| *k == kind) else {
        return true;
    };
    let tables = target_tables(doc, kind);
    let path_of = |t: &toml::Table| {
        t.get("path")
            .and_then(toml::Value::as_str)
            .map(|p| p.trim_start_matches("./").to_string())
    };
    if let Some(target) = tables.iter().find(|t| path_of(t).as_deref() == Some(rel)) {
        return runs_tests(doc, *by_default, target);
    }
    if let Some(target) = tables
        .iter()
        .find(|t| t.get("name").and_then(toml::Value::as_str) == Some(name.as_str()))
    {
        // A target of this name at another path: cargo drops the one it would have inferred
        // here.
        return path_of(target).is_none() && runs_tests(doc, *by_default, target);
    }
    // Edition 2015 (no `edition` key): one declared target of a kind turns that kind's
    // discovery off.
    let edition_2015 = package
        .and_then(|p| p.get("edition"))
        .is_none_or(|e| e.as_str() == Some("2015"));
    *by_default && flag(auto) != Some(false) && (tables.is_empty() || !edition_2015)
}

/// What of a manifest decides which targets `cargo test` runs: the package's name, `build`,
/// `edition` and `auto*` keys, the target tables, the `[lib]`, `[features]` and `[workspace]`
/// tables, the paths of its path dependencies ([`path_dependencies`]) and the names of the
/// dependencies it inherits from its workspace ([`inherited_dependencies`]) (both make
/// workspace members, target-specific ones too). Two manifests that agree on it compile the
/// same files in a test build, so an edit elsewhere (a registry dependency) is not followed.
fn target_selection(doc: &toml::Table) -> Vec<Option<toml::Value>> {
    let package = doc.get("package").and_then(toml::Value::as_table);
    let mut keys = vec!["name", "build", "edition"];
    keys.extend(TARGETS.iter().map(|(_, auto, _)| *auto));
    let mut out: Vec<Option<toml::Value>> = keys
        .iter()
        .map(|k| package.and_then(|p| p.get(*k)).cloned())
        .collect();
    for key in ["lib", "workspace", "features"] {
        out.push(doc.get(key).cloned());
    }
    out.extend(TARGETS.iter().map(|(kind, _, _)| doc.get(*kind).cloned()));
    // The path dependencies, and those inherited from the workspace: in a workspace they
    // are members.
    for mut names in [path_dependencies(doc), inherited_names(doc)] {
        names.sort();
        out.push(Some(toml::Value::Array(
            names.into_iter().map(toml::Value::String).collect(),
        )));
    }
    out
}

/// The keys of a manifest's dependency tables, at its top and under each `[target.'…']`
/// (the `_` spellings are older cargo's).
const DEPENDENCY_KEYS: [&str; 5] = [
    "dependencies",
    "dev-dependencies",
    "dev_dependencies",
    "build-dependencies",
    "build_dependencies",
];

/// Every dependency of the manifest's package, by name with its value: normal, dev and build
/// dependencies, also those of `[target.'cfg(…)'.dependencies]` tables (cargo makes the path
/// ones all workspace members, whatever the platform).
fn package_dependencies(doc: &toml::Table) -> impl Iterator<Item = (&str, &toml::Value)> {
    let targets = doc
        .get("target")
        .and_then(toml::Value::as_table)
        .into_iter()
        .flat_map(|t| t.values())
        .filter_map(toml::Value::as_table);
    std::iter::once(doc)
        .chain(targets)
        .flat_map(|table| DEPENDENCY_KEYS.iter().filter_map(|k| table.get(*k)))
        .filter_map(toml::Value::as_table)
        .flat_map(|deps| deps.iter().map(|(name, dep)| (name.as_str(), dep)))
}

/// The `path` of every dependency of the manifest's package ([`package_dependencies`]), as
/// written.
fn package_path_dependencies(doc: &toml::Table) -> Vec<&str> {
    package_dependencies(doc)
        .filter_map(|(_, d)| d.get("path").and_then(toml::Value::as_str))
        .collect()
}

/// The names of the dependencies of the manifest's package ([`package_dependencies`]) that
/// it inherits from its workspace (`lib = { workspace = true }`, `lib.workspace = true`).
fn inherited_dependencies(doc: &toml::Table) -> Vec<&str> {
    package_dependencies(doc)
        .filter(|(_, d)| d.get("workspace").and_then(toml::Value::as_bool) == Some(true))
        .map(|(name, _)| name)
        .collect()
}

/// The folders (from the project folder) of the path dependencies of the package of manifest
/// `doc` in folder `dir`, as cargo resolves them for workspace membership: a `path` from
/// `dir`, and an inherited dependency ([`inherited_dependencies`]) by the `path` the workspace
/// manifest `root_doc` in folder `root` gives it in `[workspace.dependencies]`, from `root`.
/// A path that climbs above the project folder, or absolute, is left out ([`normalize`]).
fn dependency_folders(
    root: &str,
    root_doc: &toml::Table,
    dir: &str,
    doc: &toml::Table,
) -> Vec<String> {
    let workspace = root_doc
        .get("workspace")
        .and_then(|w| w.get("dependencies"))
        .and_then(toml::Value::as_table);
    let inherited = inherited_dependencies(doc).into_iter().filter_map(|name| {
        let path = workspace?.get(name)?.get("path")?.as_str()?;
        normalize(root, path)
    });
    package_path_dependencies(doc)
        .into_iter()
        .filter_map(|p| normalize(dir, p))
        .chain(inherited)
        .collect()
}

/// The `path` of every dependency of the manifest's package ([`package_path_dependencies`])
/// and of its `[workspace.dependencies]`, as written.
fn path_dependencies(doc: &toml::Table) -> Vec<String> {
    let workspace = doc
        .get("workspace")
        .and_then(|w| w.get("dependencies"))
        .and_then(toml::Value::as_table)
        .into_iter()
        .flat_map(|deps| deps.values())
        .filter_map(|d| d.get("path").and_then(toml::Value::as_str));
    package_path_dependencies(doc)
        .into_iter()
        .chain(workspace)
        .map(str::to_string)
        .collect()
}

/// The path `rel` names from folder `base` (a dependency's folder, an included file), from
/// the folder `base` is given from, with `.` and `..` resolved and no trailing `/`; `None`
/// for an absolute path or one that climbs above that folder.
fn normalize(base: &str, rel: &str) -> Option<String> {
    if rel.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = base.split('/').filter(|p| !p.is_empty()).collect();
    for part in rel.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            _ => parts.push(part),
        }
    }
    Some(parts.join("/"))
}

/// The entries of the workspace table's array `key`, with a leading `./` and trailing `/`
/// dropped.
fn workspace_strings(doc: &toml::Table, key: &str) -> Vec<String> {
    doc.get("workspace")
        .and_then(|w| w.get(key))
        .and_then(toml::Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(toml::Value::as_str)
                .map(|p| p.trim_start_matches("./").trim_end_matches('/').to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Whether the workspace manifest `doc` excludes the folder `rel` (from the manifest's
/// folder): an `exclude` entry is it or a folder above it, and no `members` entry, read as a
/// literal path, is (cargo lets an explicit member override `exclude`: with
/// `members = ["crates/top"]`, `exclude = ["crates/top", "crates/top/sub"]` both crates are
/// members; a glob entry such as `crates/*` overrides nothing).
fn excluded(doc: &toml::Table, rel: &str) -> bool {
    let at_or_below =
        |e: &str| e.is_empty() || e == "." || rel == e || rel.starts_with(&format!("{e}/"));
    workspace_strings(doc, "exclude")
        .iter()
        .any(|e| at_or_below(e))
        && !workspace_strings(doc, "members")
            .iter()
            .any(|m| at_or_below(m))
}

/// Whether the workspace manifest `doc` names the crate in folder `rel` (from the manifest's
/// folder) itself: matched by a `members` glob, or a path dependency of the manifest's own
/// package ([`dependency_folders`]: by `path`, or inherited from its
/// `[workspace.dependencies]`; an entry there that no member inherits makes no member).
/// `exclude` is not read here ([`excluded`]).
fn directly_held(doc: &toml::Table, rel: &str) -> bool {
    let member = workspace_strings(doc, "members").iter().any(|m| {
        globset::GlobBuilder::new(m)
            .literal_separator(true)
            .build()
            .is_ok_and(|g| g.compile_matcher().is_match(rel))
    });
    member
        || dependency_folders("", doc, "", doc)
            .iter()
            .any(|f| f == rel)
}

/// Whether the workspace manifest `doc` holds the crate in folder `rel` (a path below the
/// manifest's folder) by itself: not [`excluded`] and [`directly_held`]. (Cargo also counts
/// the path dependencies of the members; [`Reach::workspace_members`] reads those.)
#[cfg(test)]
fn workspace_holds(doc: &toml::Table, rel: &str) -> bool {
    !excluded(doc, rel) && directly_held(doc, rel)
}

/// The names of the dependencies a manifest inherits from its workspace
/// ([`inherited_dependencies`]), owned.
fn inherited_names(doc: &toml::Table) -> Vec<String> {
    inherited_dependencies(doc)
        .into_iter()
        .map(str::to_string)
        .collect()
}

/// What of a manifest may make workspace members: the paths of its path dependencies
/// ([`path_dependencies`]) and, marked `workspace = true:` + name, the dependencies it
/// inherits from its workspace.
fn dependency_paths(doc: &toml::Table) -> BTreeSet<String> {
    let inherited = inherited_names(doc)
        .into_iter()
        .map(|name| format!("workspace = true:{name}"));
    path_dependencies(doc)
        .into_iter()
        .chain(inherited)
        .collect()
}

/// The target kind of a conventional roots folder.
fn plural_kind(folder: &str) -> &'static str {
    match folder {
        "tests" => "test",
        "benches" => "bench",
        "examples" => "example",
        _ => "",
    }
}

/// Whether a target of `manifest` has `rel` as its own `path` (and then whether `cargo test`
/// runs its tests); `None` when none has.
fn target_at(doc: &toml::Table, rel: &str) -> Option<bool> {
    let mut kinds = vec![("lib", true)];
    kinds.extend(TARGETS.iter().map(|(k, _, by_default)| (*k, *by_default)));
    kinds.into_iter().find_map(|(kind, by_default)| {
        target_tables(doc, kind)
            .into_iter()
            .find(|t| {
                t.get("path")
                    .and_then(toml::Value::as_str)
                    .is_some_and(|p| p.trim_start_matches("./") == rel)
            })
            .map(|t| runs_tests(doc, by_default, t))
    })
}

/// The folders above `path`, nearest first, the project folder (`""`) last; none for `""`.
fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(path).filter(|p| !p.is_empty());
    std::iter::from_fn(move || {
        let up = rest?.rsplit_once('/').map_or("", |(up, _)| up);
        rest = Some(up).filter(|u| !u.is_empty());
        Some(up)
    })
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

/// Whether Rust `text` declares module `name` from a file so that a test build compiles it
/// ([`declarations`]).
#[cfg(test)]
fn declares(text: &str, name: &str) -> bool {
    declared_modules(text).contains(name)
}

/// `mod NAME;` outside comments and strings (group 1 the name).
static MOD_LINE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"\bmod\s+(?:r#)?([A-Za-z_][A-Za-z0-9_]*)\s*;").ok());

/// `include!("…")` (also `std::include!`, `core::include!`, with any brackets) of one plain
/// or raw string literal, in blanked code: group 1 the literal's content (blanked).
static INCLUDE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r##"\binclude\s*!\s*[(\[{]\s*(?:r#*)?"([^"]*)"#*\s*,?\s*[)\]}]"##).ok()
});

/// What a Rust file declares that makes other files compiled ([`declarations`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Declarations {
    /// The modules it declares from files (`mod NAME;`).
    pub modules: BTreeSet<String>,
    /// The paths it `include!`s, as written (from its own folder).
    pub includes: BTreeSet<String>,
}

/// The modules Rust `text` declares from files ([`declarations`]).
#[cfg(test)]
pub(crate) fn declared_modules(text: &str) -> BTreeSet<String> {
    declarations(text).modules
}

/// The modules Rust `text` declares from files (`mod NAME;`, any visibility) and the files it
/// `include!`s by a string literal, that a test build surely compiles: a declaration or an
/// `include!` whose outer attributes include `#[path = …]`, a `#[cfg(…)]` that is not true in
/// every test build ([`cfg_in_tests`]), or a `#[cfg_attr(…)]` that may yield a `path` or a
/// `cfg`, does not count; nor does any when the file's inner attributes hold such a
/// `#![cfg(…)]`. An `include!` counts only outside [`closed_scopes`] (at the top of the file
/// or in inline modules that keep compiled). Read outside comments and strings; an
/// `include!` whose argument is not one string literal (`concat!(env!("OUT_DIR"), …)`) or
/// holds an escape is not followed.
pub(crate) fn declarations(text: &str) -> Declarations {
    let code = blank_rust_comments_and_strings(text);
    let (Some(mod_line), Some(include)) = (MOD_LINE.as_ref(), INCLUDE.as_ref()) else {
        return Declarations::default();
    };
    if !inner_attributes(&code).iter().all(|a| keeps_compiled(a)) {
        return Declarations::default();
    }
    let pairs = square_pairs(&code);
    let counts = |start: usize| {
        outer_attributes(&code, &pairs, start)
            .iter()
            .all(|a| keeps_compiled(a))
    };
    let modules = mod_line
        .captures_iter(&code)
        .filter_map(|c| {
            let (whole, name) = (c.get(0)?, c.get(1)?);
            counts(whole.start()).then(|| name.as_str().to_string())
        })
        .collect();
    let closed = closed_scopes(&code, &pairs);
    let includes = include
        .captures_iter(&code)
        .filter_map(|c| {
            let (whole, literal) = (c.get(0)?, c.get(1)?);
            if within(&closed, whole.start()) {
                return None;
            }
            // The literal's text is blanked in `code`: read it from `text`, at the same place.
            let path = text.get(literal.range())?;
            let raw = code[..literal.start()].ends_with(['r', '#']);
            let plain = !path.is_empty() && (raw || !path.contains('\\')) && !path.contains('\n');
            (plain && counts(whole.start())).then(|| path.to_string())
        })
        .collect();
    Declarations { modules, includes }
}

/// The spans (from `{` to its `}`, the end of `code` when unclosed) of blanked `code` whose
/// items the test harness never reaches: the body of any brace that is not an inline
/// module's (`mod NAME { … }`) — a function, an `impl`, a `const` block, a macro — and of an
/// inline module whose outer attributes do not keep it compiled ([`keeps_compiled`]).
/// Outermost only, in order, in one pass. `pairs` are the square brackets of `code`
/// ([`square_pairs`]).
fn closed_scopes(code: &str, pairs: &BTreeMap<usize, usize>) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    // The depth of the braces open, and where the outermost closed scope opened (and at
    // which depth).
    let mut depth = 0usize;
    let mut closed: Option<(usize, usize)> = None;
    for (i, b) in code.bytes().enumerate() {
        match b {
            b'{' => {
                depth += 1;
                if closed.is_none()
                    && !mod_keyword_before(code, i).is_some_and(|start| {
                        outer_attributes(code, pairs, start)
                            .iter()
                            .all(|a| keeps_compiled(a))
                    })
                {
                    closed = Some((i, depth));
                }
            }
            b'}' if depth > 0 => {
                if let Some((open, at)) = closed
                    && at == depth
                {
                    spans.push((open, i));
                    closed = None;
                }
                depth -= 1;
            }
            _ => {}
        }
    }
    if let Some((open, _)) = closed {
        spans.push((open, code.len()));
    }
    spans
}

/// Where the `mod` keyword starts when the `{` at `open` in blanked `code` opens an inline
/// module (`mod NAME {`, `mod r#NAME {`).
fn mod_keyword_before(code: &str, open: usize) -> Option<usize> {
    let head = code[..open].trim_end();
    let before_name = head.trim_end_matches(|c: char| c.is_alphanumeric() || c == '_');
    if before_name.len() == head.len() {
        return None;
    }
    let before_name = before_name.strip_suffix("r#").unwrap_or(before_name);
    let keyword = before_name.trim_end();
    (keyword.len() < before_name.len() && is_word_end(keyword, "mod"))
        .then(|| keyword.len() - "mod".len())
}

/// Whether offset `at` lies inside one of `spans` (sorted, not overlapping).
fn within(spans: &[(usize, usize)], at: usize) -> bool {
    let after = spans.partition_point(|(open, _)| *open < at);
    after > 0 && spans[after - 1].1 > at
}

/// The inner attributes (`#![…]`) that open blanked `code`, each as the text between the
/// brackets.
fn inner_attributes(code: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = code.trim_start();
    while let Some(after) = rest.strip_prefix("#!") {
        let after = after.trim_start();
        let open = code.len() - after.len();
        if !after.starts_with('[') {
            break;
        }
        let Some(close) = matching_close(code, open) else {
            break;
        };
        found.push(&code[open + 1..close]);
        rest = code[close + 1..].trim_start();
    }
    found
}

/// The outer attributes (`#[…]`) of the item that starts at `start` in blanked `code`, each as
/// the text between the brackets; a visibility (`pub`, `pub(crate)`, …) between them and the
/// item is skipped. `pairs` are the square brackets of `code` ([`square_pairs`]); a `(` is
/// looked for back to the end of the item before only, so that reading every `mod` line of a
/// text costs one pass.
fn outer_attributes<'c>(
    code: &'c str,
    pairs: &BTreeMap<usize, usize>,
    start: usize,
) -> Vec<&'c str> {
    let mut head = code[..start].trim_end();
    if let Some(before) = head.strip_suffix(')')
        && let Some(open) = before.rfind(['(', ';', '{', '}', ']'])
        && before[open..].starts_with('(')
        && is_word_end(code[..open].trim_end(), "pub")
    {
        head = code[..open].trim_end();
    }
    if is_word_end(head, "pub") {
        head = head[..head.len() - 3].trim_end();
    }
    let mut found = Vec::new();
    while head.ends_with(']') {
        let close = head.len() - 1;
        let Some(&open) = pairs.get(&close) else {
            break;
        };
        let Some(hash) = code[..open].trim_end().strip_suffix('#') else {
            break;
        };
        found.push(&code[open + 1..close]);
        head = hash.trim_end();
    }
    found
}

/// Whether `text` ends with the word `word`.
fn is_word_end(text: &str, word: &str) -> bool {
    text.strip_suffix(word).is_some_and(|before| {
        !before
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

/// For each `]` of blanked `code`, the `[` it closes, in one pass.
fn square_pairs(code: &str) -> BTreeMap<usize, usize> {
    let mut pairs = BTreeMap::new();
    let mut open = Vec::new();
    for (i, b) in code.bytes().enumerate() {
        match b {
            b'[' => open.push(i),
            b']' => {
                if let Some(o) = open.pop() {
                    pairs.insert(i, o);
                }
            }
            _ => {}
        }
    }
    pairs
}

/// Whether an attribute (the text between its brackets) leaves a test build compiling the
/// item it stands on: `#[path = …]` does not (the file is not the one by convention), a
/// `cfg` does only when [`cfg_in_tests`] says it is always true there, a `cfg_attr` only
/// when it yields neither a `path` nor a `cfg` or its condition is never true; any other
/// attribute does.
fn keeps_compiled(attribute: &str) -> bool {
    let a: String = attribute.split_whitespace().collect();
    let (name, args) = match a.split_once('(') {
        Some((name, args)) => (name, args.strip_suffix(')')),
        None => (a.split('=').next().unwrap_or_default(), None),
    };
    match name {
        "path" => false,
        "cfg" => args.is_some_and(|p| cfg_in_tests(p) == Some(true)),
        "cfg_attr" => {
            let Some(args) = args else {
                return false;
            };
            let mut parts = split_top(args).into_iter();
            let condition = parts.next().unwrap_or_default();
            let yields_cfg_or_path = parts.any(|p| {
                let p = p.split(['(', '=']).next().unwrap_or_default();
                matches!(p, "cfg" | "path" | "cfg_attr")
            });
            !yields_cfg_or_path || cfg_in_tests(condition) == Some(false)
        }
        _ => true,
    }
}

/// What a `cfg` predicate (whitespace removed) is in a test build: `Some(true)` when it holds
/// in every one (`test`, `all()`, `any(test, feature = "x")`), `Some(false)` when in none
/// (`any()`, `not(test)`), `None` when it depends on the configuration (`feature = "x"`,
/// `unix`, `FALSE`) or is not read — as is one nested deeper than [`MAX_CFG_DEPTH`].
pub(crate) fn cfg_in_tests(predicate: &str) -> Option<bool> {
    cfg_at_depth(predicate, 0)
}

/// How deep `all`/`any`/`not` are followed in a `cfg` predicate: deeper is not read, so that a
/// hand-made `not(not(…))` a hundred thousand deep costs neither stack nor quadratic time.
const MAX_CFG_DEPTH: usize = 32;

fn cfg_at_depth(predicate: &str, depth: usize) -> Option<bool> {
    if depth > MAX_CFG_DEPTH {
        return None;
    }
    let (name, args) = match predicate.split_once('(') {
        Some((name, args)) => (name, Some(args.strip_suffix(')')?)),
        None => (predicate, None),
    };
    let values = || {
        args.map(|a| {
            split_top(a)
                .into_iter()
                .map(|p| cfg_at_depth(p, depth + 1))
                .collect::<Vec<_>>()
        })
    };
    match (name, args) {
        ("test", None) => Some(true),
        ("all", Some(_)) => {
            let v = values()?;
            if v.contains(&Some(false)) {
                Some(false)
            } else if v.iter().all(|x| *x == Some(true)) {
                Some(true)
            } else {
                None
            }
        }
        ("any", Some(_)) => {
            let v = values()?;
            if v.contains(&Some(true)) {
                Some(true)
            } else if v.iter().all(|x| *x == Some(false)) {
                Some(false)
            } else {
                None
            }
        }
        ("not", Some(_)) => match values()?.as_slice() {
            [one] => one.map(|b| !b),
            _ => None,
        },
        _ => None,
    }
}

/// The comma-separated parts of `list` at bracket depth 0 (an empty last part dropped).
fn split_top(list: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut from = 0;
    for (i, c) in list.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&list[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    if from < list.len() {
        parts.push(&list[from..]);
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`target_selection`] of a manifest's text; `None` when it is not TOML.
    fn selection(manifest: &str) -> Option<Vec<Option<toml::Value>>> {
        manifest.parse().ok().as_ref().map(target_selection)
    }

    #[test]
    fn a_manifest_says_which_roots_run_their_tests() {
        let pkg = "[package]\nname = \"inv\"\n";
        let m = |extra: &str| format!("{pkg}{extra}");
        for (manifest, rel, runs) in [
            (m(""), "src/lib.rs", true),
            (m(""), "tests/a.rs", true),
            (m(""), "tests/a/main.rs", true),
            (m(""), "src/main.rs", true),
            (m("autotests = false\n"), "tests/a.rs", false),
            (m("autotests = false\n"), "src/lib.rs", true),
            (
                m("autotests = false\n[[test]]\nname = \"a\"\n"),
                "tests/a.rs",
                true,
            ),
            (
                m("autotests = false\n[[test]]\nname = \"b\"\n"),
                "tests/a.rs",
                false,
            ),
            (
                m("[[test]]\nname = \"a\"\nharness = false\n"),
                "tests/a.rs",
                false,
            ),
            (
                m("[[test]]\nname = \"a\"\ntest = false\n"),
                "tests/a/main.rs",
                false,
            ),
            (
                m("[[test]]\nname = \"a\"\nrequired-features = []\n"),
                "tests/a.rs",
                true,
            ),
            // A target of that name elsewhere: cargo infers none here.
            (
                m("[[test]]\nname = \"a\"\npath = \"x/a.rs\"\n"),
                "tests/a.rs",
                false,
            ),
            // Edition 2015 (no `edition`): one declared test turns discovery off.
            (m("[[test]]\nname = \"b\"\n"), "tests/a.rs", false),
            (
                m("edition = \"2021\"\n[[test]]\nname = \"b\"\n"),
                "tests/a.rs",
                true,
            ),
            (m("[lib]\ntest = false\n"), "src/lib.rs", false),
            (m("[lib]\npath = \"./src/lib.rs\"\n"), "src/lib.rs", true),
            (
                m("[[bin]]\nname = \"inv\"\ntest = false\n"),
                "src/main.rs",
                false,
            ),
            (m("autobins = false\n"), "src/bin/tool.rs", false),
            // Benches and examples run their tests only with `test = true`.
            (m(""), "benches/b.rs", false),
            (m(""), "examples/e.rs", false),
            (m(""), "examples/e/main.rs", false),
            (m("[[bench]]\nname = \"b\"\n"), "benches/b.rs", false),
            (
                m("[[bench]]\nname = \"b\"\ntest = true\n"),
                "benches/b.rs",
                true,
            ),
            (
                m("[[bench]]\nname = \"b\"\ntest = true\nharness = false\n"),
                "benches/b.rs",
                false,
            ),
            (
                m("[[example]]\nname = \"e\"\ntest = true\n"),
                "examples/e/main.rs",
                true,
            ),
            (
                m("autobenches = false\n[[bench]]\nname = \"b\"\ntest = true\n"),
                "benches/b.rs",
                true,
            ),
            (m("build = false\n"), "build.rs", false),
            ("not [ toml".to_string(), "tests/a.rs", true),
        ] {
            let doc = manifest.parse::<toml::Table>().ok();
            assert_eq!(
                tested_root(doc.as_ref(), rel),
                runs,
                "{rel} under {manifest}"
            );
        }
        let m = m(
            "[[test]]\nname = \"x\"\npath = \"suites/x.rs\"\n[[bin]]\nname = \"t\"\npath = \"tools/t.rs\"\ntest = false\n",
        );
        let m = m.parse::<toml::Table>().expect("toml");
        assert_eq!(target_at(&m, "suites/x.rs"), Some(true));
        assert_eq!(target_at(&m, "tools/t.rs"), Some(false));
        assert_eq!(target_at(&m, "suites/y.rs"), None);
        let m = format!(
            "{pkg}[[example]]\nname = \"x\"\npath = \"demo/x.rs\"\n[[bench]]\nname = \"b\"\npath = \"perf/b.rs\"\ntest = true\n",
        );
        let m = m.parse::<toml::Table>().expect("toml");
        assert_eq!(target_at(&m, "demo/x.rs"), Some(false));
        assert_eq!(target_at(&m, "perf/b.rs"), Some(true));
        let ws = |text: &str| text.parse::<toml::Table>().expect("toml");
        let root = ws(
            "[workspace]\nmembers = [\"crates/*\", \"tools/gen/\"]\nexclude = [\"crates/old\"]\n\
                      [workspace.dependencies]\nshared = { path = \"libs/shared\" }\n\
                      inh = { path = \"./libs/inh/\" }\n\
                      [package]\nname = \"r\"\n[dev-dependencies]\nh = { path = \"./helpers\" }\n\
                      [build-dependencies]\ninh.workspace = true\n\
                      [target.'cfg(unix)'.dependencies]\nu = { path = \"libs/x/../unix/\" }\n",
        );
        for (rel, held) in [
            ("crates/a", true),
            ("crates/a/nested", false),
            ("crates/old", false),
            ("tools/gen", true),
            ("tools/other", false),
            ("helpers", true),
            // Named in `[workspace.dependencies]` only: a member only once one inherits it.
            ("libs/shared", false),
            ("libs/inh", true),
            ("libs/unix", true),
            ("libs/x", false),
        ] {
            assert_eq!(workspace_holds(&root, rel), held, "{rel}");
        }
        // A literal `members` entry at or above a crate overrides `exclude`; a glob does not.
        let root = ws(
            "[workspace]\nmembers = [\"crates/*\", \"tools/gen\", \"./libs/\"]\n\
             exclude = [\"crates/old\", \"tools\", \"libs/a\"]\n",
        );
        for (rel, held) in [
            ("crates/old", false),
            ("tools/gen", true),
            ("tools/other", false),
            ("libs/a", false),
        ] {
            assert_eq!(workspace_holds(&root, rel), held, "{rel}");
        }
        for rel in [
            "libs",
            "libs/a",
            "tools/gen",
            "tools/gen/sub",
            "crates/old/x",
        ] {
            let explicit = !rel.starts_with("crates");
            assert_eq!(excluded(&root, rel), !explicit, "{rel}");
        }
        // Only what selects targets is compared.
        assert_eq!(
            selection(&format!(
                "{pkg}version = \"1\"\n[dependencies]\nx = \"1\"\n"
            )),
            selection(pkg)
        );
        assert_ne!(
            selection(&format!("{pkg}autotests = false\n")),
            selection(pkg)
        );
        for changed in [
            "[features]\ndefault = [\"slow\"]\n",
            "edition = \"2021\"\n",
            "[dependencies]\ninv = { path = \"crates/inv\" }\n",
            "[workspace.dependencies]\ninv = { path = \"crates/inv\" }\n",
            "[target.'cfg(unix)'.dev-dependencies]\ninv = { path = \"crates/inv\" }\n",
            "[target.x86_64-pc-windows-gnu.build_dependencies.inv]\npath = \"crates/inv\"\n",
            "[dependencies]\ninv = { workspace = true }\n",
            "[target.'cfg(windows)'.dev-dependencies]\ninv.workspace = true\n",
        ] {
            assert_ne!(
                selection(&format!("{pkg}{changed}")),
                selection(pkg),
                "{changed}"
            );
        }
        assert_ne!(
            selection(&format!("{pkg}[[test]]\nname = \"a\"\n")),
            selection(pkg)
        );
    }

    /// Runs git in `dir` with the machine's configuration shut out; returns trimmed stdout.
    fn git_in(dir: &std::path::Path, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    /// A repository whose project lies in `svc/`, with a symbolic link and a submodule among
    /// its files; the project's folder and the commit.
    fn odd_tree() -> (tempfile::TempDir, String) {
        let tmp = tempfile::tempdir().unwrap();
        let top = tmp.path();
        git_in(top, &["init", "-q"]);
        let write = |path: &str, text: &str| {
            let full = top.join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, text).unwrap();
        };
        write("svc/Cargo.toml", "[package]\nname = \"svc\"\n");
        write("svc/src/lib.rs", "mod a;\nmod linked;\n");
        write("svc/src/a.rs", "mod b;\n");
        write("svc/src/a/b.rs", "");
        write("svc/tests/t.rs", "mod helper;\n");
        write("svc/tests/t/helper.rs", "");
        write("svc/tests/helper.rs", "");
        write("svc/tests-x/y.rs", "");
        write("svc/crates/k/tests/p.rs", "");
        write("svc/crates/k/src/lib.rs", "");
        write("other/tests/x.rs", "");
        write("svc/Cargo.toml.d/real.toml", "[package]\nname = \"k\"\n");
        std::os::unix::fs::symlink("../a.rs", top.join("svc/src/a/linked.rs")).unwrap();
        std::os::unix::fs::symlink("a.rs", top.join("svc/src/linked.rs")).unwrap();
        std::os::unix::fs::symlink("t.rs", top.join("svc/tests/link.rs")).unwrap();
        std::os::unix::fs::symlink(
            "../../Cargo.toml.d/real.toml",
            top.join("svc/crates/k/Cargo.toml"),
        )
        .unwrap();
        git_in(top, &["add", "-A"]);
        git_in(top, &["commit", "-q", "-m", "base"]);
        let base = git_in(top, &["rev-parse", "HEAD"]);
        let gitlink = format!("160000,{base},svc/tests/sub.rs");
        git_in(top, &["update-index", "--add", "--cacheinfo", &gitlink]);
        git_in(top, &["commit", "-q", "-m", "submodule"]);
        let head = git_in(top, &["rev-parse", "HEAD"]);
        (tmp, head)
    }

    #[test]
    fn the_tree_listing_answers_as_the_single_lookups_do() {
        let (tmp, head) = odd_tree();
        let env = vec![
            ("GIT_CONFIG_GLOBAL".into(), "/dev/null".into()),
            ("GIT_CONFIG_NOSYSTEM".into(), "1".into()),
        ];
        let git = Git::new(&tmp.path().join("svc"), "git".into(), env);
        let single = Reach::with_single_lookups(&git, &head, usize::MAX);
        let listed = Reach::with_single_lookups(&git, &head, 0);
        let paths = [
            "Cargo.toml",
            "src/lib.rs",
            "src/a.rs",
            "src/a/b.rs",
            "src/linked.rs",
            "src/a/linked.rs",
            "src",
            "tests/t.rs",
            "tests/t/helper.rs",
            "tests/helper.rs",
            "tests/link.rs",
            "tests/sub.rs",
            "tests-x/y.rs",
            "crates/k/Cargo.toml",
            "crates/k/tests/p.rs",
            "crates/k/src/lib.rs",
            "Cargo.toml.d/real.toml",
            "../other/tests/x.rs",
            "missing.rs",
        ];
        for path in paths {
            assert_eq!(
                single.read(path).unwrap(),
                listed.read(path).unwrap(),
                "{path}"
            );
            assert_eq!(single.holds(path), listed.holds(path), "{path}");
        }
        for folder in ["tests", "src", "src/a", "crates/k/tests", "tests-x", "none"] {
            assert_eq!(
                single.files_in(folder).unwrap(),
                listed.files_in(folder).unwrap(),
                "{folder}"
            );
        }
        assert!(single.tree.get().is_none() && listed.tree.get().is_some());
        // (A file compiled neither as a root nor as a module lists the tree for its
        // `include!`s, single lookups or not.)
        for path in paths {
            assert_eq!(single.compiled(path), listed.compiled(path), "{path}");
        }
        // What the answers are: a symbolic link and a submodule are no regular files.
        assert!(listed.read("tests/link.rs").unwrap().is_none());
        assert!(listed.read("tests/sub.rs").unwrap().is_none());
        assert!(listed.read("crates/k/Cargo.toml").unwrap().is_none());
        assert_eq!(
            listed.read("src/a.rs").unwrap().as_deref(),
            Some(&b"mod b;\n"[..])
        );
        assert!(listed.compiled("src/a/b.rs") && listed.compiled("tests/t/helper.rs"));
        assert!(!listed.compiled("crates/k/tests/p.rs"));
        assert_eq!(
            *listed.files_in("tests").unwrap(),
            ["helper.rs", "link.rs", "t.rs"].map(String::from)
        );
        assert!(single.into_error().is_none() && listed.into_error().is_none());
    }

    #[test]
    fn dependency_paths_resolve_from_their_manifest_folder() {
        for (base, rel, folder) in [
            ("crates/app", "../lib", Some("crates/lib")),
            ("crates/app", "./../lib/", Some("crates/lib")),
            ("crates/app", "../../crates//lib", Some("crates/lib")),
            ("crates/app", "../..", Some("")),
            ("crates/app", "../../..", None),
            ("", "lib/../../x", None),
            ("", "/abs/lib", None),
            ("", "libs/a", Some("libs/a")),
        ] {
            assert_eq!(normalize(base, rel).as_deref(), folder, "{base} {rel}");
        }
    }

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
        assert!(declares(
            "#[cfg(any(test, feature = \"x\"))]\n#[allow(dead_code)]\npub(in crate::a) mod props;\n",
            "props"
        ));
        assert!(!declares(
            "// mod props;\nconst S: &str = \"mod props;\";\nmod props_old;\nmod props {}\n",
            "props"
        ));
    }

    #[test]
    fn a_declaration_behind_a_cfg_or_path_does_not_reach() {
        for text in [
            "#[cfg(any())]\nmod props;\n",
            "#[cfg(test)]\n#[cfg(FALSE)]\nmod props;\n",
            "#[cfg(not(test))] pub mod props;\n",
            "#[path = \"other.rs\"]\nmod props;\n",
            "#[cfg_attr(test, path = \"other.rs\")]\nmod props;\n",
            "#![cfg(any())]\n//! Docs.\nmod props;\n",
            "//! Docs.\n#![allow(unused)]\n#![cfg(feature = \"slow\")]\nmod props;\n",
        ] {
            assert!(!declares(text, "props"), "{text}");
        }
        assert_eq!(
            declared_modules(
                "#![allow(unused)]\nmod a;\n#[cfg(any())]\nmod b;\n#[cfg_attr(any(), path = \"x.rs\")]\nmod c;\n"
            ),
            ["a", "c"].map(String::from).into_iter().collect()
        );
    }

    #[test]
    fn include_macros_of_one_literal_are_read_with_their_attributes() {
        let text = r##"
include!("a.rs");
#[cfg(test)]
include!("sub/b.rs");
std::include!{"../c.rs"}
::core::include![r#"d e.rs"#];
mod inline {
    include!("in_mod.rs");
    #[cfg(test)]
    pub(crate) mod r#deeper { include!("in_mods.rs"); }
}
fn f() -> u8 { include!("not_expr.rs",) }
fn never() { mod inner { include!("not_in_fn.rs"); } }
impl S { include!("not_impl.rs"); }
const _: () = { include!("not_const.rs"); };
macro_rules! m { () => { include!("not_macro.rs"); } }
#[cfg(any())]
mod off { include!("not_cfg_mod.rs"); }
mod{ include!("not_nameless.rs"); }
#[cfg(feature = "x")]
include!("not_cfg.rs");
#[cfg_attr(test, cfg(any()))]
include!("not_cfg_attr.rs");
// include!("not_comment.rs");
const S: &str = "include!("not_string.rs")";
include!(concat!(env!("OUT_DIR"), "/not_generated.rs"));
include_str!("not_text.rs");
my_include!("not_other_macro.rs");
include!("not\u{61}escaped.rs");
"##;
        assert_eq!(
            declarations(text).includes,
            [
                "a.rs",
                "sub/b.rs",
                "../c.rs",
                "d e.rs",
                "in_mod.rs",
                "in_mods.rs"
            ]
            .map(String::from)
            .into_iter()
            .collect()
        );
        assert!(
            declarations(&format!("#![cfg(unix)]\n{text}"))
                .includes
                .is_empty()
        );
        assert!(
            declarations("mod a;\ninclude!(\"x.rs\");\n")
                .modules
                .contains("a")
        );
    }

    #[test]
    fn mod_lines_after_stray_brackets_are_all_read() {
        // Each `mod` line after a `]` or `)` that opens nothing (looking back for the `[` or
        // `(` from each one read the whole text before it again: 50 000 lines took 15.7 s;
        // speed is the benches' to measure, this holds the answers).
        for stray in ["]", ")", "pub)"] {
            let text: String = (0..2_000)
                .map(|i| format!("{stray}\nmod a{i};\n"))
                .collect();
            assert_eq!(declared_modules(&text).len(), 2_000, "{stray}");
        }
    }

    #[test]
    fn cfg_predicates_in_a_test_build() {
        for (predicate, value) in [
            ("test", Some(true)),
            ("all()", Some(true)),
            ("any()", Some(false)),
            ("not(test)", Some(false)),
            ("any(test,feature=\"x\")", Some(true)),
            ("all(test,unix)", None),
            ("all(test,not(all()))", Some(false)),
            ("feature=\"x\"", None),
            ("FALSE", None),
            ("not(any(test,", None),
            ("not(test,test)", None),
        ] {
            assert_eq!(cfg_in_tests(predicate), value, "{predicate}");
        }
        // Nested past reading: not read, so the declaration does not count; no stack overflow.
        let n = 100_000;
        let deep = format!("{}test{}", "not(not(".repeat(n), "))".repeat(n));
        assert_eq!(cfg_in_tests(&deep), None);
        assert!(!declares(&format!("#[cfg({deep})]\nmod props;\n"), "props"));
        let shallow = format!("{}test{}", "not(not(".repeat(8), "))".repeat(8));
        assert_eq!(cfg_in_tests(&shallow), Some(true));
    }
}
