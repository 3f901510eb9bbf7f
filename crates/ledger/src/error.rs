//! Errors of the ledger crate.

use std::path::PathBuf;

use freezegate_canon::ParseError;

use crate::check::Problem;

/// Why a ledger could not be read, checked or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The ledger is not JSON (or is empty or truncated): stage one of validation.
    #[error(transparent)]
    Syntax(#[from] ParseError),
    /// The ledger is JSON but breaks the schema; every problem is listed.
    #[error("the ledger breaks schema {schema}: {}", join(.problems))]
    Schema {
        /// The schema name (`freezegate-ledger-v1`).
        schema: &'static str,
        /// Every schema problem, in row order.
        problems: Vec<Problem>,
    },
    /// A malformed timestamp.
    #[error("{0}")]
    Timestamp(String),
    /// A malformed name (env class, seed).
    #[error("{0}")]
    Name(String),
    /// A broken line of an `allowed_signers` file.
    #[error("line {line}, column {column}: {message}")]
    Signers {
        /// 1-based line.
        line: usize,
        /// 1-based column (characters) where the broken part starts: the entry, its
        /// principals, or an unterminated quote.
        column: usize,
        /// What is wrong with it.
        message: String,
    },
    /// An error about one file.
    #[error("{}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        source: Box<Error>,
    },
    /// Writing the ledger file failed.
    #[error(transparent)]
    Write(#[from] freezegate_canon::Error),
    /// The ledger is a symbolic link whose target does not exist.
    #[error(
        "{} is a symbolic link to {}, which does not exist",
        path.display(),
        target.display()
    )]
    BrokenLink {
        /// The link.
        path: PathBuf,
        /// Where it points, as the link says.
        target: PathBuf,
    },
    /// The writers' lock file (`freeze/.ledger.lock`) is a symbolic link, which a writer does
    /// not follow.
    #[error(
        "{} is a symbolic link; the writers' lock must be a plain file (remove the link)",
        path.display()
    )]
    LockLink {
        /// The lock file.
        path: PathBuf,
    },
    /// Reading, writing, locking or renaming a file failed.
    #[error("{}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
}

/// The problems as `line L, column C: row …: what` (no severity: every one is an error).
fn join(problems: &[Problem]) -> String {
    let texts: Vec<String> = problems
        .iter()
        .map(|p| match &p.at {
            Some(at) => format!("{at}: {}", p.describe()),
            None => p.describe(),
        })
        .collect();
    texts.join("; ")
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn in_file(path: impl Into<PathBuf>, source: Error) -> Error {
        Error::File {
            path: path.into(),
            source: Box::new(source),
        }
    }

    /// The schema problems behind this error, if it is a schema error (stage two: the
    /// ledger is JSON but breaks the schema), each to be shown on its own.
    pub fn schema_problems(&self) -> Option<&[Problem]> {
        match self {
            Error::Schema { problems, .. } => Some(problems),
            Error::File { source, .. } => source.schema_problems(),
            _ => None,
        }
    }

    /// The JSON syntax error behind this error, if it is one (stage one: exit 3).
    pub fn syntax(&self) -> Option<&ParseError> {
        match self {
            Error::Syntax(e) => Some(e),
            Error::File { source, .. } => source.syntax(),
            _ => None,
        }
    }
}
