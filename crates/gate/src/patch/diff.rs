//! A commit's own change: the paths it changes and, for text files, the lines it adds and
//! removes — for a merge, only what differs from git's own merge of its parents.

use std::collections::{BTreeMap, BTreeSet};

use super::PatchError;
use super::git::{Git, RawChange};

/// How a path changed in a commit's own change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// The path did not exist before (in any parent, for a merge).
    Added,
    /// The path's content or mode changed.
    Modified,
    /// The path is gone.
    Deleted,
    /// The path moved, with or without a content change (git's rename detection).
    Renamed,
    /// The path changed type (file, symlink, submodule).
    TypeChanged,
}

/// One side of a change: a path with its mode and blob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Side {
    pub path: String,
    pub mode: String,
    pub oid: String,
}

impl Side {
    /// A regular file (not a symlink or submodule), whose text can be diffed.
    pub(crate) fn is_text_file(&self) -> bool {
        self.mode == "100644" || self.mode == "100755"
    }

    /// A symbolic link (`120000`) or submodule (`160000`): an entry that stands for a whole
    /// directory of content the tree does not hold at this path.
    pub(crate) fn is_link_or_submodule(&self) -> bool {
        self.mode == "120000" || self.mode == "160000"
    }

    /// What kind of entry this side is, by its mode.
    pub(crate) fn entry(&self) -> Entry {
        match self.mode.as_str() {
            "100644" | "100755" => Entry::File,
            "120000" => Entry::Link,
            // A gitlink (`160000`), or a mode git does not write: nothing the gate reads.
            _ => Entry::Submodule,
        }
    }
}

/// What a path of a tree holds, as its git mode says.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Entry {
    /// A regular file (`100644`, `100755`), whose bytes the tree holds.
    #[default]
    File,
    /// A symbolic link (`120000`): the tree holds only the path it points at.
    Link,
    /// A submodule (a gitlink, `160000`): the tree holds only a commit of another repository.
    Submodule,
}

impl Entry {
    /// What the entry is, for a finding, when the gate cannot read what it stands for (a
    /// link or a submodule); `None` for a regular file.
    pub(crate) fn unread(self) -> Option<&'static str> {
        match self {
            Entry::File => None,
            Entry::Link => Some("a symbolic link"),
            Entry::Submodule => Some("a submodule (a gitlink)"),
        }
    }
}

/// One path change of a commit's own change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileChange {
    pub kind: ChangeKind,
    /// The pre-images: one per parent in which the path existed (deduplicated by blob).
    pub old: Vec<Side>,
    /// The post-image, absent when deleted.
    pub new: Option<Side>,
    /// For a merge: the number of parents lacking the path (their pre-image is empty).
    pub parents_without: usize,
}

impl FileChange {
    /// The paths this change touches: every pre-image path and the post-image path.
    pub(crate) fn paths(&self) -> BTreeSet<&str> {
        self.old
            .iter()
            .chain(self.new.as_ref())
            .map(|s| s.path.as_str())
            .collect()
    }
}

impl FileChange {
    /// The same change with its paths relative to the project folder `prefix` of the work
    /// tree (`git rev-parse --show-prefix`: `""` or `svc/`) instead of the top: a path
    /// outside the folder climbs out of it with `../`.
    pub(crate) fn relocated(mut self, prefix: &str) -> FileChange {
        if prefix.is_empty() {
            return self;
        }
        for side in self.old.iter_mut().chain(self.new.as_mut()) {
            side.path = project_path(prefix, &side.path);
        }
        self
    }
}

/// `top` (relative to the top of the work tree) relative to the folder `prefix` (`svc/`).
pub(crate) fn project_path(prefix: &str, top: &str) -> String {
    if let Some(inside) = top.strip_prefix(prefix) {
        return inside.to_string();
    }
    let depth = prefix.split('/').filter(|c| !c.is_empty()).count();
    format!("{}{top}", "../".repeat(depth))
}

/// The inverse of [`project_path`]: a project path relative to the top of the work tree.
pub(crate) fn top_path(prefix: &str, path: &str) -> String {
    let mut dir: Vec<&str> = prefix.split('/').filter(|c| !c.is_empty()).collect();
    let mut rest = path;
    while let Some(up) = rest.strip_prefix("../") {
        dir.pop();
        rest = up;
    }
    dir.push(rest);
    dir.join("/")
}

const ZERO_MODE: &str = "000000";

fn side(path: &str, mode: &str, oid: &str) -> Option<Side> {
    (mode != ZERO_MODE).then(|| Side {
        path: path.to_string(),
        mode: mode.to_string(),
        oid: oid.to_string(),
    })
}

fn from_raw(raw: &RawChange) -> FileChange {
    let kind = match raw.status {
        'A' => ChangeKind::Added,
        'D' => ChangeKind::Deleted,
        'R' => ChangeKind::Renamed,
        'T' => ChangeKind::TypeChanged,
        'C' => ChangeKind::Added,
        _ => ChangeKind::Modified,
    };
    let old = if raw.status == 'C' {
        None
    } else {
        side(&raw.old_path, &raw.old_mode, &raw.old_oid)
    };
    FileChange {
        kind,
        old: old.into_iter().collect(),
        new: side(&raw.new_path, &raw.new_mode, &raw.new_oid),
        parents_without: 0,
    }
}

/// The parents a merge brings commits in from: a parent that is an ancestor of another
/// parent brings in none (all its history is already there), so a version of a path taken
/// from it is the merge's own doing. Without this, a merge of the base with one of its own
/// ancestors could restore that ancestor's `freezegate.toml` (or ledger, or weaker property)
/// without a signature, since the restored text equals one parent's. The order is kept; one
/// parent left means an ordinary diff against it.
pub(crate) fn bringing_parents(git: &Git, parents: &[String]) -> Result<Vec<String>, PatchError> {
    if parents.len() < 2 {
        return Ok(parents.to_vec());
    }
    let mut kept: Vec<String> = Vec::new();
    for (i, parent) in parents.iter().enumerate() {
        if kept.contains(parent) {
            continue;
        }
        let mut contained = false;
        for (j, other) in parents.iter().enumerate() {
            if i != j && other != parent && git.is_ancestor(parent, other)? {
                contained = true;
                break;
            }
        }
        if !contained {
            kept.push(parent.clone());
        }
    }
    Ok(kept)
}

/// The own change of `commit` against `parents` (none: against the empty tree), the parents
/// being those [`bringing_parents`] keeps.
///
/// One parent: git's diff with rename detection (`-M`). Two parents or more: the diff (`-M`)
/// against the tree git's own merge of them gives ([`automatic_merge`]), plus every path
/// that merge could not resolve: what the merge commit holds that an automatic merge would
/// not. So a merge that drops one side's changes (`git merge -s ours`, with two parents or
/// as an octopus, or a hand-made revert) owns the paths it dropped, and a clean automatic
/// merge of two changes to one file owns nothing. A git without `merge-tree --write-tree`:
/// a path belongs to the merge's own change when its content or mode at the merge differs
/// from its content at *every* parent (absent counts as a content); a path deleted against
/// every parent and one added against every parent with the same blob are paired as a
/// rename.
pub(crate) fn own_change(
    git: &Git,
    commit: &str,
    parents: &[String],
    empty_tree: &str,
) -> Result<Vec<FileChange>, PatchError> {
    match parents {
        [] => Ok(git
            .diff_trees(empty_tree, commit, true)?
            .iter()
            .map(from_raw)
            .collect()),
        [parent] => Ok(git
            .diff_trees(parent, commit, true)?
            .iter()
            .map(from_raw)
            .collect()),
        [_, _, ..]
            if let Some((merged, conflicted)) = automatic_merge(git, parents, empty_tree)? =>
        {
            let mut changes: Vec<FileChange> = git
                .diff_trees(&merged, commit, true)?
                .iter()
                .map(from_raw)
                .collect();
            // A conflict resolved with the content the automatic merge left (a binary
            // file's first side) is still the merge's resolution.
            for path in conflicted {
                if changes.iter().any(|c| c.paths().contains(path.as_str())) {
                    continue;
                }
                let at = |tree: &str| -> Result<Option<Side>, PatchError> {
                    Ok(git.tree_entry(tree, &path)?.map(|(mode, oid)| Side {
                        path: path.clone(),
                        mode,
                        oid,
                    }))
                };
                let (old, new) = (at(&merged)?, at(commit)?);
                let kind = match (&old, &new) {
                    (_, None) => ChangeKind::Deleted,
                    (None, Some(_)) => ChangeKind::Added,
                    (Some(_), Some(_)) => ChangeKind::Modified,
                };
                if old.is_some() || new.is_some() {
                    changes.push(FileChange {
                        kind,
                        old: old.into_iter().collect(),
                        new,
                        parents_without: 0,
                    });
                }
            }
            changes.sort_by(|x, y| x.paths().cmp(&y.paths()));
            Ok(changes)
        }
        _ => {
            let mut per_parent: Vec<BTreeMap<String, RawChange>> = Vec::new();
            for parent in parents {
                let changes = git.diff_trees(parent, commit, false)?;
                per_parent.push(
                    changes
                        .into_iter()
                        .map(|c| (c.new_path.clone(), c))
                        .collect(),
                );
            }
            Ok(merge_own_change(&per_parent))
        }
    }
}

/// The tree git's own merge of `parents` (two or more) gives, with the paths it could not
/// merge; `None` where this git cannot say. More than two parents are merged from the first
/// on, each step's result standing as a commit ([`Git::commit_tree`]) for the next, as git's
/// octopus strategy does; a path left conflicted by any step counts as conflicted.
fn automatic_merge(
    git: &Git,
    parents: &[String],
    empty_tree: &str,
) -> Result<Option<(String, Vec<String>)>, PatchError> {
    let Some((first, rest)) = parents.split_first() else {
        return Ok(None);
    };
    let mut acc = first.clone();
    let mut merged = None;
    let mut conflicted: Vec<String> = Vec::new();
    for (i, parent) in rest.iter().enumerate() {
        let Some((tree, paths)) = git.merge_tree(&acc, parent, empty_tree)? else {
            return Ok(None);
        };
        conflicted.extend(paths);
        if i + 1 < rest.len() {
            acc = git.commit_tree(&tree, &[&acc, parent])?;
        }
        merged = Some(tree);
    }
    conflicted.sort();
    conflicted.dedup();
    Ok(merged.map(|tree| (tree, conflicted)))
}

/// The intersection of per-parent changes (keyed by path), as described on [`own_change`].
pub(crate) fn merge_own_change(per_parent: &[BTreeMap<String, RawChange>]) -> Vec<FileChange> {
    let Some((first, rest)) = per_parent.split_first() else {
        return Vec::new();
    };
    let mut changes = Vec::new();
    for (path, raw) in first {
        let all: Option<Vec<&RawChange>> = std::iter::once(Some(raw))
            .chain(rest.iter().map(|m| m.get(path)))
            .collect();
        let Some(all) = all else { continue };
        let new = side(path, &raw.new_mode, &raw.new_oid);
        let mut old: Vec<Side> = Vec::new();
        let mut parents_without = 0;
        for change in &all {
            match side(path, &change.old_mode, &change.old_oid) {
                Some(s) if !old.contains(&s) => old.push(s),
                Some(_) => {}
                None => parents_without += 1,
            }
        }
        let kind = match (&new, old.is_empty()) {
            (None, _) => ChangeKind::Deleted,
            (Some(_), true) => ChangeKind::Added,
            (Some(n), false)
                if old
                    .iter()
                    .any(|o| mode_class(&o.mode) != mode_class(&n.mode)) =>
            {
                ChangeKind::TypeChanged
            }
            (Some(_), false) => ChangeKind::Modified,
        };
        changes.push(FileChange {
            kind,
            old,
            new,
            parents_without,
        });
    }
    pair_exact_renames(changes)
}

fn mode_class(mode: &str) -> &str {
    match mode {
        "100644" | "100755" => "file",
        other => other,
    }
}

/// Pairs a deletion whose only pre-image has blob X with an addition of blob X.
fn pair_exact_renames(changes: Vec<FileChange>) -> Vec<FileChange> {
    let mut added_by_oid: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, c) in changes.iter().enumerate() {
        if let (ChangeKind::Added, Some(n)) = (c.kind, &c.new) {
            added_by_oid.entry(n.oid.clone()).or_default().push(i);
        }
    }
    let mut taken = BTreeSet::new();
    let mut paired: Vec<(usize, usize)> = Vec::new();
    for (i, c) in changes.iter().enumerate() {
        if c.kind == ChangeKind::Deleted
            && c.old.len() == 1
            && c.parents_without == 0
            && let Some(candidates) = added_by_oid.get_mut(&c.old[0].oid)
            && let Some(pos) = candidates.iter().position(|j| !taken.contains(j))
        {
            let j = candidates[pos];
            taken.insert(j);
            paired.push((i, j));
        }
    }
    let mut result = Vec::new();
    let mut consumed = BTreeSet::new();
    for (i, j) in &paired {
        consumed.insert(*i);
        consumed.insert(*j);
        result.push(FileChange {
            kind: ChangeKind::Renamed,
            old: changes[*i].old.clone(),
            new: changes[*j].new.clone(),
            parents_without: 0,
        });
    }
    for (i, c) in changes.into_iter().enumerate() {
        if !consumed.contains(&i) {
            result.push(c);
        }
    }
    result.sort_by(|a, b| a.paths().cmp(&b.paths()));
    result
}

/// One line of a file, with its 1-based number in its own version of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Line {
    pub number: u32,
    pub text: String,
}

/// The lines a change adds (numbered in the new file) and removes (numbered in the old one).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct LineChanges {
    pub added: Vec<Line>,
    pub removed: Vec<Line>,
}

/// Every line of a text, numbered from 1.
pub(crate) fn all_lines(text: &str) -> Vec<Line> {
    text.lines()
        .zip(1u32..)
        .map(|(t, number)| Line {
            number,
            text: t.to_string(),
        })
        .collect()
}

/// The lines added to and removed from `old` to make `new`, each with its 1-based number in
/// its own text: a Myers diff of the lines (`similar`), in-process rather than one `git diff`
/// per file. Lines end at `\n` only, as for git (a `\r` stays part of its line), and a last
/// line without its newline differs from the same line with one. A test holds it to
/// `git diff -U0 --diff-algorithm=myers`: an edit that makes the same text, with no more
/// lines added and removed (a shortest edit; git's is one too, except where it sets aside
/// lines that occur many times); where several shortest edits exist (a blank line added
/// beside another), the two may number different ones of the identical lines.
pub(crate) fn text_changes(old: &str, new: &str) -> LineChanges {
    let (old_lines, new_lines): (Vec<&str>, Vec<&str>) = (
        old.split_inclusive('\n').collect(),
        new.split_inclusive('\n').collect(),
    );
    let lines = |all: &[&str], range: std::ops::Range<usize>| -> Vec<Line> {
        range
            .filter_map(|i| {
                let text = all.get(i)?;
                Some(Line {
                    number: u32::try_from(i + 1).unwrap_or(u32::MAX),
                    text: text.strip_suffix('\n').unwrap_or(text).to_string(),
                })
            })
            .collect()
    };
    let mut changes = LineChanges::default();
    for op in similar::capture_diff_slices(similar::Algorithm::Myers, &old_lines, &new_lines) {
        let (tag, removed, added) = op.as_tag_tuple();
        if tag != similar::DiffTag::Equal {
            changes.removed.extend(lines(&old_lines, removed));
            changes.added.extend(lines(&new_lines, added));
        }
    }
    changes
}

/// Parses `git diff -U0` output into added and removed lines.
#[cfg(test)]
pub(crate) fn parse_hunks(out: &[u8]) -> Result<LineChanges, String> {
    let text = String::from_utf8_lossy(out);
    let mut lines = text.split('\n').peekable();
    let mut changes = LineChanges::default();
    // Skip the file header: everything before the first hunk.
    while let Some(line) = lines.peek() {
        if line.starts_with("@@ ") {
            break;
        }
        lines.next();
    }
    while let Some(header) = lines.next() {
        if header.is_empty() && lines.peek().is_none() {
            break;
        }
        let (old_start, old_count, new_start, new_count) = parse_hunk_header(header)?;
        let (mut old_left, mut new_left) = (old_count, new_count);
        let (mut old_no, mut new_no) = (old_start, new_start);
        while old_left > 0 || new_left > 0 {
            let line = lines.next().ok_or("hunk ends early")?;
            if let Some(rest) = line.strip_prefix('-').filter(|_| old_left > 0) {
                changes.removed.push(Line {
                    number: old_no,
                    text: rest.to_string(),
                });
                old_no += 1;
                old_left -= 1;
            } else if let Some(rest) = line.strip_prefix('+').filter(|_| new_left > 0) {
                changes.added.push(Line {
                    number: new_no,
                    text: rest.to_string(),
                });
                new_no += 1;
                new_left -= 1;
            } else if line.starts_with('\\') {
                continue;
            } else {
                return Err(format!("unexpected line {line:?} in a hunk"));
            }
        }
        while lines.peek().is_some_and(|l| l.starts_with('\\')) {
            lines.next();
        }
    }
    Ok(changes)
}

#[cfg(test)]
fn parse_hunk_header(header: &str) -> Result<(u32, u32, u32, u32), String> {
    let bad = || format!("bad hunk header {header:?}");
    let rest = header.strip_prefix("@@ -").ok_or_else(bad)?;
    let (ranges, _) = rest.split_once(" @@").ok_or_else(bad)?;
    let (old, new) = ranges.split_once(" +").ok_or_else(bad)?;
    let range = |r: &str| -> Result<(u32, u32), String> {
        let (start, count) = r.split_once(',').unwrap_or((r, "1"));
        Ok((
            start.parse().map_err(|_| bad())?,
            count.parse().map_err(|_| bad())?,
        ))
    };
    let (a, b) = range(old)?;
    let (c, d) = range(new)?;
    Ok((a, b, c, d))
}

/// The whitespace-free form of a line, to tell a moved or re-indented line from a new one.
pub(crate) fn squash(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// Added and removed lines of the content change between `old` (pre-images) and `new`; a Python
/// file's lines end at `\r\n`, `\r` and `\n` alike, as Python reads them.
///
/// With several pre-images (a merge), a line counts as added when it is added against every
/// pre-image (and a parent without the file counts as an empty pre-image), and as removed when its
/// text is removed against every pre-image.
pub(crate) fn line_changes(
    git: &Git,
    old: &[Side],
    new: Option<&Side>,
    parents_without: usize,
) -> Result<LineChanges, PatchError> {
    // Python source has its line ends made `\n` first (see `source_text`).
    let text_of = |s: &Side| -> Result<String, PatchError> {
        Ok(super::props::source_text(&s.path, &git.blob(&s.oid)?))
    };
    let old: Vec<&Side> = old.iter().filter(|s| s.is_text_file()).collect();
    let new = new.filter(|s| s.is_text_file());
    let mut per_old: Vec<LineChanges> = Vec::new();
    match new {
        None => {
            for o in &old {
                per_old.push(LineChanges {
                    added: Vec::new(),
                    removed: all_lines(&text_of(o)?),
                });
            }
        }
        Some(n) => {
            let new_text = text_of(n)?;
            for o in &old {
                per_old.push(text_changes(&text_of(o)?, &new_text));
            }
            if old.is_empty() || parents_without > 0 {
                per_old.push(LineChanges {
                    added: all_lines(&new_text),
                    removed: Vec::new(),
                });
            }
        }
    }
    Ok(intersect(per_old))
}

/// Combines per-pre-image line changes as described on [`line_changes`].
pub(crate) fn intersect(mut per_old: Vec<LineChanges>) -> LineChanges {
    if per_old.len() <= 1 {
        return per_old.pop().unwrap_or_default();
    }
    let mut result = per_old[0].clone();
    for other in &per_old[1..] {
        let numbers: BTreeSet<u32> = other.added.iter().map(|l| l.number).collect();
        result.added.retain(|l| numbers.contains(&l.number));
        let mut texts: BTreeMap<String, usize> = BTreeMap::new();
        for l in &other.removed {
            *texts.entry(squash(&l.text)).or_default() += 1;
        }
        result
            .removed
            .retain(|l| match texts.get_mut(&squash(&l.text)) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    true
                }
                _ => false,
            });
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(status: char, path: &str, old_oid: &str, new_oid: &str) -> RawChange {
        let mode = |oid: &str| if oid == "0" { ZERO_MODE } else { "100644" }.to_string();
        RawChange {
            old_mode: mode(old_oid),
            new_mode: mode(new_oid),
            old_oid: old_oid.to_string(),
            new_oid: new_oid.to_string(),
            status,
            old_path: path.to_string(),
            new_path: path.to_string(),
        }
    }

    fn map(changes: &[RawChange]) -> BTreeMap<String, RawChange> {
        changes
            .iter()
            .map(|c| (c.new_path.clone(), c.clone()))
            .collect()
    }

    #[test]
    fn project_paths_climb_out_of_the_project_folder_and_back() {
        assert_eq!(project_path("", "freeze/ledger.json"), "freeze/ledger.json");
        assert_eq!(
            project_path("svc/", "svc/freeze/ledger.json"),
            "freeze/ledger.json"
        );
        assert_eq!(project_path("svc/", "svc2/x"), "../svc2/x");
        assert_eq!(
            project_path("a/b/", ".github/workflows/ci.yml"),
            "../../.github/workflows/ci.yml"
        );
        for (prefix, top) in [
            ("", "x/y"),
            ("svc/", "svc/x"),
            ("svc/", ".ci/run"),
            ("a/b/", "a/c/d"),
            ("a/b/", "a/b/c"),
        ] {
            assert_eq!(
                top_path(prefix, &project_path(prefix, top)),
                top,
                "{prefix} {top}"
            );
        }
    }

    #[test]
    fn a_merge_owns_only_paths_that_differ_from_every_parent() {
        let p1 = map(&[
            raw('M', "from_second_parent.rs", "a", "b"),
            raw('M', "freeze/ledger.json", "l1", "evil"),
        ]);
        let p2 = map(&[
            raw('M', "from_first_parent.rs", "c", "d"),
            raw('M', "freeze/ledger.json", "l1", "evil"),
        ]);
        let own = merge_own_change(&[p1, p2]);
        assert_eq!(own.len(), 1);
        assert_eq!(own[0].kind, ChangeKind::Modified);
        assert_eq!(own[0].new.as_ref().unwrap().path, "freeze/ledger.json");
        assert_eq!(own[0].old.len(), 1);
    }

    #[test]
    fn a_merge_pairs_exact_renames_and_keeps_evil_deletions() {
        let both = [
            raw('D', "fixtures/p/old.json", "x", "0"),
            raw('A', "fixtures/p/new.json", "0", "x"),
            raw('D', "fixtures/p/gone.json", "y", "0"),
        ];
        let own = merge_own_change(&[map(&both), map(&both)]);
        let kinds: Vec<ChangeKind> = own.iter().map(|c| c.kind).collect();
        assert_eq!(kinds, vec![ChangeKind::Deleted, ChangeKind::Renamed]);
        assert_eq!(own[1].old[0].path, "fixtures/p/old.json");
        assert_eq!(own[1].new.as_ref().unwrap().path, "fixtures/p/new.json");
    }

    #[test]
    fn a_path_new_to_one_parent_only_is_modified_not_added() {
        let p1 = map(&[raw('M', "fixtures/p/a.json", "a", "evil")]);
        let p2 = map(&[raw('A', "fixtures/p/a.json", "0", "evil")]);
        let own = merge_own_change(&[p1, p2]);
        assert_eq!(own[0].kind, ChangeKind::Modified);
        assert_eq!(own[0].parents_without, 1);
    }

    #[test]
    fn hunks_parse_with_counts_and_no_newline_markers() {
        let out = b"diff --git a/x b/x\nindex 1..2\n--- a/x\n+++ b/x\n@@ -2 +2,2 @@\n--- removed dashes\n+++ added pluses\n+second\n@@ -10,0 +12 @@\n+tail\n\\ No newline at end of file\n";
        let c = parse_hunks(out).unwrap();
        assert_eq!(
            c.removed,
            vec![Line {
                number: 2,
                text: "-- removed dashes".into()
            }]
        );
        assert_eq!(c.added.len(), 3);
        assert_eq!(c.added[0].text, "++ added pluses");
        assert_eq!(
            c.added[2],
            Line {
                number: 12,
                text: "tail".into()
            }
        );
    }

    #[test]
    fn truncated_hunks_are_errors() {
        assert!(parse_hunks(b"@@ -1,2 +1 @@\n-a\n").is_err());
        assert!(parse_hunks(b"@@ nonsense @@\n").is_err());
    }

    #[test]
    fn merge_lines_count_only_when_new_against_every_parent() {
        let l = |n: u32, t: &str| Line {
            number: n,
            text: t.into(),
        };
        let p1 = LineChanges {
            added: vec![l(3, "from p2"), l(7, "evil")],
            removed: vec![l(4, "assert!(x)"), l(9, "old p1 line")],
        };
        let p2 = LineChanges {
            added: vec![l(5, "from p1"), l(7, "evil")],
            removed: vec![l(4, "assert!( x )")],
        };
        let c = intersect(vec![p1, p2]);
        assert_eq!(c.added, vec![l(7, "evil")]);
        assert_eq!(c.removed, vec![l(4, "assert!(x)")]);
    }
}

#[cfg(test)]
mod reconstruction {
    //! The hunk parser against real `git diff` output, and the in-process diff against git:
    //! the added and removed lines each reports turn the old text into the new one.

    use super::*;
    use proptest::prelude::*;
    use std::process::Command;

    /// A git repository to hash blobs in and diff them.
    struct Scratch {
        dir: tempfile::TempDir,
        git: Git,
    }

    thread_local! {
        /// One repository per test thread: libtest runs each test on a thread of its own,
        /// so the directory is removed when the test ends (a `static` never drops it and
        /// would leave it in the temporary directory).
        static SCRATCH: Scratch = Scratch::new();
    }

    impl Scratch {
        fn new() -> Scratch {
            let dir = tempfile::tempdir().unwrap();
            let env: Vec<(std::ffi::OsString, std::ffi::OsString)> = vec![
                ("GIT_CONFIG_GLOBAL".into(), "/dev/null".into()),
                ("GIT_CONFIG_NOSYSTEM".into(), "1".into()),
            ];
            let status = Command::new("git")
                .args(["init", "-q"])
                .arg(dir.path())
                .envs(env.iter().map(|(k, v)| (k, v)))
                .status()
                .unwrap();
            assert!(status.success());
            let git = Git::new(dir.path(), "git".into(), env);
            Scratch { dir, git }
        }

        fn blob(&self, text: &str) -> String {
            use std::io::Write;
            // Through stdin: no scratch file.
            let mut child = Command::new("git")
                .arg("-C")
                .arg(self.dir.path())
                .args(["hash-object", "-w", "--stdin"])
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            child
                .stdin
                .take()
                .unwrap()
                .write_all(text.as_bytes())
                .unwrap();
            let out = child.wait_with_output().unwrap();
            assert!(out.status.success());
            String::from_utf8(out.stdout).unwrap().trim().to_string()
        }
    }

    /// `git diff` of two texts, as the patch check runs it on blobs.
    fn git_diff(old: &str, new: &str) -> Vec<u8> {
        SCRATCH.with(|s| s.git.blob_diff(&s.blob(old), &s.blob(new)).unwrap())
    }

    /// Lines as git splits them: at `\n` only, a `\r` kept.
    fn git_lines(text: &str) -> Vec<String> {
        text.split_inclusive('\n')
            .map(|l| l.strip_suffix('\n').unwrap_or(l).to_string())
            .collect()
    }

    fn apply(old: &str, changes: &LineChanges) -> Vec<String> {
        let removed: BTreeSet<u32> = changes.removed.iter().map(|l| l.number).collect();
        let mut kept = git_lines(old)
            .into_iter()
            .zip(1u32..)
            .filter(|(_, n)| !removed.contains(n))
            .map(|(t, _)| t);
        let added: BTreeMap<u32, &str> = changes
            .added
            .iter()
            .map(|l| (l.number, l.text.as_str()))
            .collect();
        let total = u32::try_from(git_lines(old).len() - removed.len() + added.len()).unwrap();
        (1..=total)
            .map(|n| match added.get(&n) {
                Some(t) => (*t).to_string(),
                None => kept.next().unwrap_or_default(),
            })
            .collect()
    }

    fn text() -> impl Strategy<Value = String> {
        let line = prop_oneof![
            Just("a".to_string()),
            Just("b".to_string()),
            Just("-- dashes".to_string()),
            Just("++ pluses".to_string()),
            Just("\\ backslash".to_string()),
            Just("@@ -1 +1 @@".to_string()),
            Just("a\r".to_string()),
            Just("\rb".to_string()),
            Just(String::new()),
            "[a-c ]{0,4}",
        ];
        (proptest::collection::vec(line, 0..12), any::<bool>()).prop_map(|(lines, newline)| {
            let mut t = lines.join("\n");
            if newline && !t.is_empty() {
                t.push('\n');
            }
            t
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        #[test]
        fn parsed_hunks_turn_the_old_text_into_the_new(old in text(), new in text()) {
            let out = git_diff(&old, &new);
            let changes = parse_hunks(&out).unwrap();
            let rebuilt = apply(&old, &changes);
            prop_assert_eq!(rebuilt, git_lines(&new));
        }

        /// The in-process diff the patch check uses turns the old text into the new, and
        /// lists no more than git's own Myers diff lists. Ours is a shortest edit; git's
        /// usually is too, but not always (it sets aside lines that occur many times:
        /// `"-- dashes"` once in the old text and four times in the new is four lines added
        /// for git, three for us, `--minimal` or not), so git's counts bound ours.
        #[test]
        fn the_in_process_diff_agrees_with_git(old in text(), new in text()) {
            let ours = text_changes(&old, &new);
            prop_assert_eq!(apply(&old, &ours), git_lines(&new));
            let out = git_diff(&old, &new);
            let git = parse_hunks(&out).unwrap();
            prop_assert!(ours.added.len() <= git.added.len());
            prop_assert!(ours.removed.len() <= git.removed.len());
        }
    }
}
