//! Running the real `git` binary: every question this module asks the repository.
//!
//! Output is always requested in a machine format (`-z`, `--raw`, `--no-abbrev`, explicit
//! `--format`), and every setting that could change what is printed or how signatures are checked
//! is pinned with `-c` or a flag, so that the repository's or the machine's configuration cannot
//! bend the answer.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Mutex, OnceLock};

use super::PatchError;

/// A handle on one repository and the `git` program used to question it.
#[derive(Debug)]
pub(crate) struct Git {
    dir: PathBuf,
    program: OsString,
    env: Vec<(OsString, OsString)>,
    /// One `git cat-file --batch` for every blob read, started on first use.
    batch: Mutex<Option<Batch>>,
    /// Where `dir` lies in the work tree (`git rev-parse --show-prefix`), asked once.
    prefix: OnceLock<String>,
}

/// A running `git cat-file --batch`: one object id in, one object out.
#[derive(Debug)]
struct Batch {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Drop for Batch {
    fn drop(&mut self) {
        // Closing stdin ends git; reap it so no zombie is left behind.
        let _ = self.stdin.flush();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The ref name of git's warning that a name is ambiguous: `warning: refname 'X' is
/// ambiguous.`
fn ambiguous_name(line: &str) -> Option<&str> {
    line.strip_prefix("warning: refname '")?
        .strip_suffix("' is ambiguous.")
}

/// One path change between two trees, as `git diff-tree --raw` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RawChange {
    /// Mode before (`000000` when added).
    pub old_mode: String,
    /// Mode after (`000000` when deleted).
    pub new_mode: String,
    /// Blob before (all zeros when added).
    pub old_oid: String,
    /// Blob after (all zeros when deleted).
    pub new_oid: String,
    /// Status letter: `A`, `M`, `D`, `T`, `R` (renames only when asked for).
    pub status: char,
    /// Path before (equal to `new_path` unless renamed).
    pub old_path: String,
    /// Path after.
    pub new_path: String,
}

/// What `git log --format=%G?…` said about one commit's signature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RawSignature {
    /// `%G?`: `G`, `B`, `U`, `X`, `Y`, `R`, `E` or `N`.
    pub code: char,
    /// `%GS`: the principal the allowed-signers file names for the key.
    pub signer: String,
    /// `%GF`: the key fingerprint.
    pub key: String,
}

/// The option that makes git read a path given after `--` as the path itself: a folder named
/// `:(glob)x` or `:!x` is not pathspec magic (which `ls-tree` refuses, failing the gate).
const LITERAL: &str = "--literal-pathspecs";

impl Git {
    pub(crate) fn new(dir: &Path, program: OsString, env: Vec<(OsString, OsString)>) -> Self {
        Git {
            dir: dir.to_path_buf(),
            program,
            env,
            batch: Mutex::new(None),
            prefix: OnceLock::new(),
        }
    }

    fn command(&self, config: &[(&str, &str)], args: &[&str]) -> Command {
        let mut cmd = Command::new(&self.program);
        // Replacement refs (`refs/replace/*`) could make git show other objects than the ones
        // the commits name: never honour them.
        cmd.arg("--no-replace-objects").arg("-C").arg(&self.dir);
        // Pin what could change the shape of the output.
        for (key, value) in [
            ("core.quotePath", "false"),
            ("color.ui", "false"),
            ("log.showSignature", "false"),
            ("diff.external", ""),
        ]
        .iter()
        .chain(config)
        {
            cmd.arg("-c").arg(format!("{key}={value}"));
        }
        cmd.args(args);
        // Untranslated messages: a warning read here (an ambiguous name) must not depend on
        // the runner's language.
        cmd.env("LC_ALL", "C");
        cmd.env("GIT_OPTIONAL_LOCKS", "0");
        cmd.env("GIT_NO_REPLACE_OBJECTS", "1");
        cmd.env("GIT_TERMINAL_PROMPT", "0");
        for (key, value) in &self.env {
            cmd.env(key, value);
        }
        cmd
    }

    /// Runs git; returns `(success, stdout)`, or the spawn error.
    fn output(
        &self,
        config: &[(&str, &str)],
        args: &[&str],
    ) -> Result<(bool, Vec<u8>, Vec<u8>), PatchError> {
        let out = self
            .command(config, args)
            .output()
            .map_err(|source| PatchError::GitSpawn {
                dir: self.dir.clone(),
                source,
            })?;
        Ok((out.status.success(), out.stdout, out.stderr))
    }

    /// Runs git and fails unless it exits 0.
    fn run(&self, config: &[(&str, &str)], args: &[&str]) -> Result<Vec<u8>, PatchError> {
        let out = self
            .command(config, args)
            .output()
            .map_err(|source| PatchError::GitSpawn {
                dir: self.dir.clone(),
                source,
            })?;
        Self::stdout_if_ok(args, out)
    }

    /// Runs git with `input` on its standard input and fails unless it exits 0.
    fn run_with_input(
        &self,
        config: &[(&str, &str)],
        args: &[&str],
        input: Vec<u8>,
    ) -> Result<Vec<u8>, PatchError> {
        let spawn_error = |source| PatchError::GitSpawn {
            dir: self.dir.clone(),
            source,
        };
        let mut child = self
            .command(config, args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(spawn_error)?;
        let writer = child.stdin.take().map(|mut stdin| {
            std::thread::spawn(move || {
                // A git that exits early closes the pipe; its exit status tells why.
                let _ = stdin.write_all(&input);
            })
        });
        let out = child.wait_with_output().map_err(spawn_error)?;
        if let Some(writer) = writer {
            let _ = writer.join();
        }
        Self::stdout_if_ok(args, out)
    }

    /// The output of a git that exited 0; otherwise the failure with the first line of its
    /// standard error.
    fn stdout_if_ok(args: &[&str], out: std::process::Output) -> Result<Vec<u8>, PatchError> {
        if out.status.success() {
            return Ok(out.stdout);
        }
        Err(PatchError::GitFailed {
            args: args.join(" "),
            status: out.status.to_string(),
            stderr: String::from_utf8_lossy(&out.stderr)
                .lines()
                .next()
                .unwrap_or("")
                .to_string(),
        })
    }

    fn output_error(args: &[&str], detail: impl Into<String>) -> PatchError {
        PatchError::GitOutput {
            args: args.join(" "),
            detail: detail.into(),
        }
    }

    /// The full object id of the commit `rev` names.
    ///
    /// A name that more than one ref answers to (a tag `origin/main` beside the remote branch
    /// `origin/main`, which a patch can push) is refused: git would pick the tag, and the
    /// patch would choose its own base.
    pub(crate) fn resolve_commit(&self, rev: &str) -> Result<String, PatchError> {
        let spec = format!("{rev}^{{commit}}");
        let (ok, stdout, stderr) = self.output(
            &[("core.warnAmbiguousRefs", "true")],
            &["rev-parse", "--verify", "--end-of-options", &spec],
        )?;
        let sha = String::from_utf8_lossy(&stdout).trim().to_string();
        if !ok || sha.is_empty() || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(PatchError::BadRevision {
                rev: rev.to_string(),
                shallow: !self.shallow_boundary().unwrap_or_default().is_empty(),
            });
        }
        let stderr = String::from_utf8_lossy(&stderr);
        if let Some(name) = stderr.lines().find_map(ambiguous_name) {
            return Err(PatchError::AmbiguousRevision {
                rev: rev.to_string(),
                refs: self.refs_named(name)?,
            });
        }
        Ok(sha)
    }

    /// The refs a short name can stand for, in git's order of preference (`git help
    /// revisions`), those that exist.
    fn refs_named(&self, name: &str) -> Result<Vec<String>, PatchError> {
        let candidates = [
            name.to_string(),
            format!("refs/{name}"),
            format!("refs/tags/{name}"),
            format!("refs/heads/{name}"),
            format!("refs/remotes/{name}"),
            format!("refs/remotes/{name}/HEAD"),
        ];
        let mut found = Vec::new();
        for full in candidates {
            if !full.starts_with("refs/") {
                continue;
            }
            let (ok, _, _) = self.output(
                &[],
                &["show-ref", "--verify", "--quiet", "--end-of-options", &full],
            )?;
            if ok {
                found.push(full);
            }
        }
        Ok(found)
    }

    /// Where the directory this handle was opened on lies in the work tree, as a path prefix
    /// relative to its top (`""` at the top, `svc/` for a project in `svc`).
    pub(crate) fn prefix(&self) -> Result<&str, PatchError> {
        if let Some(prefix) = self.prefix.get() {
            return Ok(prefix);
        }
        let args = ["rev-parse", "--show-prefix"];
        let out = self.run(&[], &args)?;
        let prefix = String::from_utf8(out)
            .map_err(|_| Self::output_error(&args, "not UTF-8"))?
            .trim_end_matches('\n')
            .to_string();
        Ok(self.prefix.get_or_init(|| prefix))
    }

    /// The commits whose parents this clone does not have (a shallow clone's boundary):
    /// empty for a full clone.
    pub(crate) fn shallow_boundary(&self) -> Result<Vec<String>, PatchError> {
        let args = [
            "rev-parse",
            "--is-shallow-repository",
            "--git-path",
            "shallow",
        ];
        let out = self.run(&[], &args)?;
        let text = String::from_utf8_lossy(&out).into_owned();
        let mut lines = text.lines();
        if lines.next() != Some("true") {
            return Ok(Vec::new());
        }
        let Some(path) = lines.next() else {
            return Err(Self::output_error(&args, "no path of the shallow file"));
        };
        let path = self.dir.join(path);
        let list = std::fs::read_to_string(&path).map_err(|e| {
            Self::output_error(&args, format!("cannot read {}: {e}", path.display()))
        })?;
        Ok(list
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect())
    }

    /// Whether commit `a` is an ancestor of commit `b` (or the same commit).
    pub(crate) fn is_ancestor(&self, a: &str, b: &str) -> Result<bool, PatchError> {
        let args = ["merge-base", "--is-ancestor", a, b];
        let out = self
            .command(&[], &args)
            .output()
            .map_err(|source| PatchError::GitSpawn {
                dir: self.dir.clone(),
                source,
            })?;
        match out.status.code() {
            Some(0) => Ok(true),
            Some(1) => Ok(false),
            _ => Self::stdout_if_ok(&args, out).map(|_| false),
        }
    }

    /// The tree git's own merge of commits `a` and `b` gives (`git merge-tree --write-tree`,
    /// the `ort` strategy), with the paths it could not merge; `None` where this git cannot
    /// say (older than 2.38). Attributes are read from the empty tree, not from the working
    /// tree or the commits, so a `.gitattributes` of the patch cannot pick a merge driver
    /// (`merge=ours`) that makes a reverting merge look automatic.
    pub(crate) fn merge_tree(
        &self,
        a: &str,
        b: &str,
        empty_tree: &str,
    ) -> Result<Option<(String, Vec<String>)>, PatchError> {
        let attr_source = format!("--attr-source={empty_tree}");
        let args = [
            attr_source.as_str(),
            "merge-tree",
            "--write-tree",
            // An unrelated parent (an orphan commit) must not make git refuse and the check
            // fall back to the older rule, which a merge keeping one parent's tree passes.
            "--allow-unrelated-histories",
            "-z",
            "--name-only",
            "--no-messages",
            a,
            b,
        ];
        let config = [
            ("core.attributesFile", "/dev/null"),
            ("merge.renames", "true"),
            ("merge.directoryRenames", "false"),
        ];
        let out = self
            .command(&config, &args)
            .output()
            .map_err(|source| PatchError::GitSpawn {
                dir: self.dir.clone(),
                source,
            })?;
        if !matches!(out.status.code(), Some(0 | 1)) {
            return Ok(None);
        }
        // `<tree> NUL`, then on a conflict each conflicted path NUL-terminated and a NUL.
        let mut fields = out.stdout.split(|b| *b == 0);
        let tree = String::from_utf8_lossy(fields.next().unwrap_or_default()).into_owned();
        if tree.is_empty() || !tree.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(Self::output_error(&args, "no tree id"));
        }
        let conflicted = fields
            .take_while(|f| !f.is_empty())
            .map(|f| String::from_utf8_lossy(f).into_owned())
            .collect();
        Ok(Some((tree, conflicted)))
    }

    /// A commit object of `tree` with `parents`, written to the object store and named by
    /// no ref (as `merge-tree --write-tree` writes its trees): the stand-in for one step of
    /// an octopus merge, so that the next step has a commit to merge with. Its identity and
    /// date are fixed, so the same step gives the same object.
    pub(crate) fn commit_tree(&self, tree: &str, parents: &[&str]) -> Result<String, PatchError> {
        let mut args = vec![
            "commit-tree",
            "--no-gpg-sign",
            "-m",
            "freezegate: merge step",
        ];
        for parent in parents {
            args.extend(["-p", parent]);
        }
        args.push(tree);
        let out = self
            .command(&[], &args)
            .env("GIT_AUTHOR_NAME", "freezegate")
            .env("GIT_AUTHOR_EMAIL", "freezegate@invalid")
            .env("GIT_AUTHOR_DATE", "1970-01-01T00:00:00Z")
            .env("GIT_COMMITTER_NAME", "freezegate")
            .env("GIT_COMMITTER_EMAIL", "freezegate@invalid")
            .env("GIT_COMMITTER_DATE", "1970-01-01T00:00:00Z")
            .output()
            .map_err(|source| PatchError::GitSpawn {
                dir: self.dir.clone(),
                source,
            })?;
        let out = Self::stdout_if_ok(&args, out)?;
        let oid = String::from_utf8_lossy(&out).trim().to_string();
        if oid.is_empty() || !oid.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(Self::output_error(&args, "no commit id"));
        }
        Ok(oid)
    }

    /// The object id of the empty tree in this repository's hash function.
    pub(crate) fn empty_tree(&self) -> Result<String, PatchError> {
        let args = ["hash-object", "-t", "tree", "/dev/null"];
        let out = self.run(&[], &args)?;
        let oid = String::from_utf8_lossy(&out).trim().to_string();
        if oid.is_empty() {
            return Err(Self::output_error(&args, "no object id"));
        }
        Ok(oid)
    }

    /// Every commit in `base..head`, parents before children, each with its parents.
    pub(crate) fn commits(
        &self,
        base: &str,
        head: &str,
    ) -> Result<Vec<(String, Vec<String>)>, PatchError> {
        let range = format!("{base}..{head}");
        let args = [
            "rev-list",
            "--topo-order",
            "--reverse",
            "--parents",
            &range,
            "--",
        ];
        let out = self.run(&[], &args)?;
        let text = String::from_utf8(out).map_err(|_| Self::output_error(&args, "not UTF-8"))?;
        Ok(text
            .lines()
            .filter(|l| !l.is_empty())
            .map(|line| {
                let mut ids = line.split(' ').map(str::to_string);
                let sha = ids.next().unwrap_or_default();
                (sha, ids.collect())
            })
            .collect())
    }

    /// The mode and blob id of `path` in `commit`, or `None` when there is no such path.
    pub(crate) fn tree_entry(
        &self,
        commit: &str,
        path: &str,
    ) -> Result<Option<(String, String)>, PatchError> {
        let args = [LITERAL, "ls-tree", "-z", "--full-tree", commit, "--", path];
        let out = self.run(&[], &args)?;
        for record in out.split(|b| *b == 0).filter(|r| !r.is_empty()) {
            let record = String::from_utf8_lossy(record);
            let Some((meta, name)) = record.split_once('\t') else {
                return Err(Self::output_error(&args, "no tab in an entry"));
            };
            if name != path {
                continue;
            }
            let fields: Vec<&str> = meta.split(' ').collect();
            if let [mode, kind, oid] = fields.as_slice() {
                if *kind == "blob" {
                    return Ok(Some(((*mode).to_string(), (*oid).to_string())));
                }
                return Ok(None);
            }
            return Err(Self::output_error(&args, "malformed entry"));
        }
        Ok(None)
    }

    /// The blob entries (mode and id; a symbolic link is a blob of mode `120000`) of `commit`
    /// at the paths `paths` (from the repository root), by path, from one `git ls-tree`; a
    /// path that is absent, a folder or a submodule is not listed.
    pub(crate) fn entries(
        &self,
        commit: &str,
        paths: &[String],
    ) -> Result<BTreeMap<String, (String, String)>, PatchError> {
        let mut found = BTreeMap::new();
        if paths.is_empty() {
            return Ok(found);
        }
        let mut args = vec![LITERAL, "ls-tree", "-z", "--full-tree", commit, "--"];
        args.extend(paths.iter().map(String::as_str));
        self.each_blob(&args, |path, mode, oid| {
            found.insert(path.to_string(), (mode.to_string(), oid.to_string()));
        })?;
        Ok(found)
    }

    /// The names of the regular files directly in folder `dir` (from the repository root,
    /// without a trailing `/`) of `commit`.
    pub(crate) fn files_in(&self, commit: &str, dir: &str) -> Result<Vec<String>, PatchError> {
        let folder = format!("{dir}/");
        let args = [
            LITERAL,
            "ls-tree",
            "-z",
            "--full-tree",
            commit,
            "--",
            &folder,
        ];
        let out = self.run(&[], &args)?;
        let mut names = Vec::new();
        for record in out.split(|b| *b == 0).filter(|r| !r.is_empty()) {
            let record = String::from_utf8_lossy(record);
            let Some((meta, path)) = record.split_once('\t') else {
                return Err(Self::output_error(&args, "no tab in an entry"));
            };
            if meta.split(' ').nth(1) == Some("blob")
                && let Some(name) = path.strip_prefix(&folder)
            {
                names.push(name.to_string());
            }
        }
        Ok(names)
    }

    /// Every regular file of `commit` under the folders `dirs` (from the repository root,
    /// without a trailing `/`; `""` for the whole tree), recursively: its path from the
    /// repository root and its blob id.
    pub(crate) fn files_under(
        &self,
        commit: &str,
        dirs: &[String],
    ) -> Result<Vec<(String, String)>, PatchError> {
        let folders: Vec<String> = if dirs.iter().any(String::is_empty) {
            Vec::new()
        } else {
            dirs.iter().map(|d| format!("{d}/")).collect()
        };
        let mut args = vec![LITERAL, "ls-tree", "-r", "-z", "--full-tree", commit, "--"];
        args.extend(folders.iter().map(String::as_str));
        let mut files = Vec::new();
        self.each_blob(&args, |path, mode, oid| {
            // Keep only what lies under a folder asked for.
            let under = folders.is_empty() || folders.iter().any(|f| path.starts_with(f));
            if matches!(mode, "100644" | "100755") && under {
                files.push((path.to_string(), oid.to_string()));
            }
        })?;
        Ok(files)
    }

    /// Every blob of `commit`'s whole tree by its path from the repository root: its mode
    /// (`100644`, `100755`, or `120000` for a symbolic link) and its id, from one
    /// `git ls-tree -r`. A submodule (a commit entry) is not a blob and not listed.
    pub(crate) fn blobs(
        &self,
        commit: &str,
    ) -> Result<BTreeMap<String, (String, String)>, PatchError> {
        let args = ["ls-tree", "-r", "-z", "--full-tree", commit];
        let mut blobs = BTreeMap::new();
        self.each_blob(&args, |path, mode, oid| {
            blobs.insert(path.to_string(), (mode.to_string(), oid.to_string()));
        })?;
        Ok(blobs)
    }

    /// Runs the `ls-tree -z` of `args` and calls `each` with the path, mode and id of every
    /// blob entry it prints.
    fn each_blob(
        &self,
        args: &[&str],
        mut each: impl FnMut(&str, &str, &str),
    ) -> Result<(), PatchError> {
        let out = self.run(&[], args)?;
        for record in out.split(|b| *b == 0).filter(|r| !r.is_empty()) {
            let record = String::from_utf8_lossy(record);
            let Some((meta, path)) = record.split_once('\t') else {
                return Err(Self::output_error(args, "no tab in an entry"));
            };
            let fields: Vec<&str> = meta.split(' ').collect();
            let [mode, kind, oid] = fields.as_slice() else {
                return Err(Self::output_error(args, "malformed entry"));
            };
            if *kind == "blob" {
                each(path, mode, oid);
            }
        }
        Ok(())
    }

    /// The bytes of a blob.
    pub(crate) fn blob(&self, oid: &str) -> Result<Vec<u8>, PatchError> {
        let args = ["cat-file", "--batch"];
        let broken = |detail: String| Self::output_error(&args, detail);
        if oid.is_empty() || !oid.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(broken(format!("not an object id: {oid:?}")));
        }
        let mut guard = self
            .batch
            .lock()
            .map_err(|_| broken("poisoned lock".into()))?;
        if guard.is_none() {
            let mut child = self
                .command(&[], &args)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .map_err(|source| PatchError::GitSpawn {
                    dir: self.dir.clone(),
                    source,
                })?;
            let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
                let _ = child.kill();
                let _ = child.wait();
                return Err(broken("no pipes".into()));
            };
            *guard = Some(Batch {
                child,
                stdin,
                stdout: BufReader::new(stdout),
            });
        }
        let Some(batch) = guard.as_mut() else {
            return Err(broken("not started".into()));
        };
        let result = read_object(batch, oid).map_err(|e| broken(e.to_string()));
        if result.is_err() {
            // A batch process in an unknown state is not reused.
            *guard = None;
        }
        result
    }

    /// The raw object text of a commit (headers, blank line, message).
    pub(crate) fn commit_object(&self, sha: &str) -> Result<Vec<u8>, PatchError> {
        self.run(&[], &["cat-file", "commit", sha])
    }

    /// The path changes from tree-ish `from` to tree-ish `to`.
    pub(crate) fn diff_trees(
        &self,
        from: &str,
        to: &str,
        renames: bool,
    ) -> Result<Vec<RawChange>, PatchError> {
        let rename_flag = if renames { "-M" } else { "--no-renames" };
        let args = [
            "diff-tree",
            "-r",
            "-z",
            "--raw",
            "--no-abbrev",
            "--no-ext-diff",
            "--no-textconv",
            rename_flag,
            from,
            to,
            "--",
        ];
        let out = self.run(&[], &args)?;
        parse_raw(&out).map_err(|detail| Self::output_error(&args, detail))
    }

    /// The zero-context text diff between two blobs, by git itself (the tests hold
    /// [`super::diff::text_changes`] to it) (either may be absent: pass the empty-blob
    /// side as `None`). Attributes that would hide the text (`-diff`, `binary`, textconv
    /// drivers) are overridden: everything is diffed as text.
    #[cfg(test)]
    pub(crate) fn blob_diff(&self, old: &str, new: &str) -> Result<Vec<u8>, PatchError> {
        self.run(
            &[
                ("diff.noprefix", "false"),
                ("diff.suppressBlankEmpty", "false"),
            ],
            &[
                "diff",
                "-U0",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                "--text",
                "--diff-algorithm=myers",
                "--no-indent-heuristic",
                old,
                new,
            ],
        )
    }

    /// The signature status of each commit (aligned with `shas`), checked by git against
    /// `allowed_signers` (a file path).
    ///
    /// Only SSH signatures can pass: OpenPGP and X.509 verification are pointed at `false`. Each
    /// record must name the commit expected at its position, so text a commit controls cannot
    /// pose as another commit's record.
    pub(crate) fn signatures(
        &self,
        shas: &[String],
        allowed_signers: &Path,
    ) -> Result<Vec<RawSignature>, PatchError> {
        if shas.is_empty() {
            return Ok(Vec::new());
        }
        let allowed = allowed_signers.to_string_lossy().into_owned();
        let config = [
            ("gpg.format", "ssh"),
            ("gpg.ssh.allowedSignersFile", allowed.as_str()),
            ("gpg.ssh.program", "ssh-keygen"),
            ("gpg.ssh.revocationFile", ""),
            ("gpg.program", "false"),
            ("gpg.openpgp.program", "false"),
            ("gpg.x509.program", "false"),
        ];
        let format = "--format=%H%x1f%G?%x1f%GF%x1f%GS";
        let records = self.log_records(&config, format, shas)?;
        let mut result = Vec::new();
        for (record, sha) in records.iter().zip(shas) {
            let fields: Vec<&str> = record.splitn(4, '\x1f').collect();
            let [got, code, key, signer] = fields.as_slice() else {
                return Err(Self::output_error(
                    &["log", format],
                    "malformed signature record",
                ));
            };
            if got != sha {
                return Err(Self::output_error(&["log", format], "records out of order"));
            }
            result.push(RawSignature {
                code: code.chars().next().unwrap_or('E'),
                signer: (*signer).to_string(),
                key: (*key).to_string(),
            });
        }
        Ok(result)
    }

    /// The subject line of each commit (aligned with `shas`).
    pub(crate) fn subjects(&self, shas: &[String]) -> Result<Vec<String>, PatchError> {
        let format = "--format=%H%x1f%s";
        let records = self.log_records(&[], format, shas)?;
        let mut result = Vec::new();
        for (record, sha) in records.iter().zip(shas) {
            match record.split_once('\x1f') {
                Some((got, subject)) if got == sha => result.push(subject.to_string()),
                _ => return Err(Self::output_error(&["log", format], "records out of order")),
            }
        }
        Ok(result)
    }

    /// One NUL-terminated `git log` record per commit, in the order given; their number is checked.
    fn log_records(
        &self,
        config: &[(&str, &str)],
        format: &str,
        shas: &[String],
    ) -> Result<Vec<String>, PatchError> {
        if shas.is_empty() {
            return Ok(Vec::new());
        }
        // The commits go on stdin: a long range must not overflow the command line.
        let args = ["log", "-z", "--no-walk=unsorted", format, "--stdin"];
        let mut input = shas.join("\n");
        input.push('\n');
        let out = self.run_with_input(config, &args, input.into_bytes())?;
        let text = String::from_utf8_lossy(&out);
        let records: Vec<String> = text.split('\0').map(str::to_string).collect();
        // `-z` terminates every record but the last; allow a trailing terminator.
        let records: Vec<String> = match records.last() {
            Some(last) if last.is_empty() && records.len() == shas.len() + 1 => {
                records[..shas.len()].to_vec()
            }
            _ => records,
        };
        if records.len() != shas.len() {
            return Err(Self::output_error(
                &args[..4],
                format!("{} records for {} commits", records.len(), shas.len()),
            ));
        }
        Ok(records)
    }
}

/// Asks a running `cat-file --batch` for one blob.
fn read_object(batch: &mut Batch, oid: &str) -> std::io::Result<Vec<u8>> {
    use std::io::{BufRead, Error, Read};
    writeln!(batch.stdin, "{oid}")?;
    batch.stdin.flush()?;
    let mut header = String::new();
    batch.stdout.read_line(&mut header)?;
    let fields: Vec<&str> = header.trim_end().split(' ').collect();
    let [got, kind, size] = fields.as_slice() else {
        return Err(Error::other(format!("{oid}: {}", header.trim_end())));
    };
    if *got != oid || *kind != "blob" {
        return Err(Error::other(format!("{oid}: {}", header.trim_end())));
    }
    let size: usize = size.parse().map_err(Error::other)?;
    let mut bytes = vec![0; size + 1];
    batch.stdout.read_exact(&mut bytes)?;
    if bytes.pop() != Some(b'\n') {
        return Err(Error::other(format!("{oid}: object not terminated")));
    }
    Ok(bytes)
}

/// Parses `git diff-tree -r -z --raw --no-abbrev` output.
pub(crate) fn parse_raw(out: &[u8]) -> Result<Vec<RawChange>, String> {
    let mut fields = out.split(|b| *b == 0);
    let mut changes = Vec::new();
    while let Some(meta) = fields.next() {
        if meta.is_empty() {
            continue;
        }
        let meta = String::from_utf8_lossy(meta);
        let meta = meta
            .strip_prefix(':')
            .ok_or_else(|| format!("record {meta:?} lacks ':'"))?;
        let parts: Vec<&str> = meta.split(' ').collect();
        let [old_mode, new_mode, old_oid, new_oid, status] = parts.as_slice() else {
            return Err(format!("record {meta:?} has not five fields"));
        };
        let letter = status.chars().next().ok_or("empty status")?;
        let first = fields
            .next()
            .filter(|p| !p.is_empty())
            .ok_or("path missing")?;
        let first = String::from_utf8_lossy(first).into_owned();
        let (old_path, new_path) = if matches!(letter, 'R' | 'C') {
            let second = fields
                .next()
                .filter(|p| !p.is_empty())
                .ok_or("second path missing")?;
            (first, String::from_utf8_lossy(second).into_owned())
        } else {
            (first.clone(), first)
        };
        changes.push(RawChange {
            old_mode: (*old_mode).to_string(),
            new_mode: (*new_mode).to_string(),
            old_oid: (*old_oid).to_string(),
            new_oid: (*new_oid).to_string(),
            status: letter,
            old_path,
            new_path,
        });
    }
    Ok(changes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_records_with_renames_parse() {
        let zero = "0".repeat(40);
        let a = "a".repeat(40);
        let b = "b".repeat(40);
        let out = format!(
            ":100644 100644 {a} {b} M\0src/x.rs\0:000000 100644 {zero} {b} A\0new file\0:100644 100644 {a} {a} R100\0old/p.rs\0new/p.rs\0"
        );
        let changes = parse_raw(out.as_bytes()).unwrap();
        assert_eq!(changes.len(), 3);
        assert_eq!(changes[0].status, 'M');
        assert_eq!(changes[1].new_path, "new file");
        assert_eq!(changes[1].old_oid, zero);
        assert_eq!(changes[2].status, 'R');
        assert_eq!(changes[2].old_path, "old/p.rs");
        assert_eq!(changes[2].new_path, "new/p.rs");
    }

    #[test]
    fn malformed_raw_records_are_errors() {
        assert!(parse_raw(b"100644 100644 a b M\0x\0").is_err());
        assert!(parse_raw(b":100644 100644 a M\0x\0").is_err());
        assert!(parse_raw(b":100644 100644 a b R100\0x\0").is_err());
    }
}
