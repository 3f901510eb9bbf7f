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

fn join(problems: &[Problem]) -> String {
    let texts: Vec<String> = problems.iter().map(Problem::to_string).collect();
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

    /// The JSON syntax error behind this error, if it is one (stage one: exit 3).
    pub fn syntax(&self) -> Option<&ParseError> {
        match self {
            Error::Syntax(e) => Some(e),
            Error::File { source, .. } => source.syntax(),
            _ => None,
        }
    }
}
