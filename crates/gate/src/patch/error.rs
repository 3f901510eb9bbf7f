//! The one error type of the patch checks.

use std::path::PathBuf;

/// Why the patch could not be judged (as opposed to a judgement that blocks).
///
/// Every variant is an infrastructure or configuration problem: the gate maps them to its
/// bad-input or infra exit codes, never to "passed".
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PatchError {
    /// `git` could not be started.
    #[error("cannot run git in {}", dir.display())]
    GitSpawn {
        /// The repository directory.
        dir: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A `git` command exited non-zero.
    #[error("git {args} failed ({status}): {stderr}")]
    GitFailed {
        /// The arguments, space-separated.
        args: String,
        /// The exit status as printed by the OS.
        status: String,
        /// The first line of git's standard error.
        stderr: String,
    },
    /// Git printed something this module cannot read.
    #[error("unexpected output from git {args}: {detail}")]
    GitOutput {
        /// The arguments, space-separated.
        args: String,
        /// What was wrong.
        detail: String,
    },
    /// The base revision does not name a commit (in CI: fetch enough history).
    #[error(
        "base revision {rev:?} is not a commit of this repository ({})",
        if *shallow {
            "the clone is shallow: fetch the whole history"
        } else {
            "no ref or commit of that name: check the spelling, and that the base branch was fetched"
        }
    )]
    BadRevision {
        /// The revision as given.
        rev: String,
        /// Whether the clone is shallow (which may be why).
        shallow: bool,
    },
    /// The base revision is a name more than one ref answers to.
    #[error("base revision {rev:?} is ambiguous: it names {}; pass the full ref name", refs.join(" and "))]
    AmbiguousRevision {
        /// The revision as given.
        rev: String,
        /// The refs the name stands for, git's preferred first.
        refs: Vec<String>,
    },
    /// The range holds a commit whose parents this shallow clone lacks, so what it changed
    /// cannot be known.
    #[error(
        "the clone is shallow: the parents of commit {commit} in {range} were not fetched, so its change cannot be judged; fetch the whole history (actions/checkout with fetch-depth: 0)"
    )]
    ShallowClone {
        /// The commit at the shallow boundary.
        commit: String,
        /// The range judged, `REV..HEAD`.
        range: String,
    },
    /// `freezegate.toml` at the base revision is not valid TOML, has a wrong type or holds a
    /// glob that does not compile; the source names the line and column.
    #[error("the base revision {rev}'s freezegate.toml is broken")]
    Config {
        /// The base revision.
        rev: String,
        /// What is wrong, and where in the base revision's file.
        #[source]
        source: crate::config::ConfigError,
    },
    /// A glob of the policy at the base revision does not compile.
    #[error("the base revision {rev}'s freezegate.toml: policy.{key}: bad glob {glob:?}")]
    Glob {
        /// The base revision.
        rev: String,
        /// `protected` or `property_paths`.
        key: &'static str,
        /// The glob.
        glob: String,
        /// The parser's error.
        #[source]
        source: globset::Error,
    },
    /// A pattern of the built-in gaming-rule table does not compile (a bug in this crate).
    #[error("gaming rule {rule}: pattern {pattern:?} does not compile")]
    RulePattern {
        /// The rule id.
        rule: &'static str,
        /// The pattern.
        pattern: &'static str,
        /// The regex error.
        #[source]
        source: Box<regex::Error>,
    },
    /// The temporary copy of the base revision's `freeze/allowed_signers` could not be written.
    #[error("cannot write a temporary copy of freeze/allowed_signers")]
    TempFile {
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
}
