//! `xtask canon [FILE] [--digest | --id] [--ordered]`.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use freezegate_canon::{Canonicalization, canonicalize};

use crate::exit::{Failure, OK, Outcome};

/// Arguments of `xtask canon`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The JSON document; standard input when absent or `-`.
    file: Option<PathBuf>,
    /// Print the SHA-256 of the canonical bytes (64 hex) and a newline.
    #[arg(long, conflicts_with = "id")]
    digest: bool,
    /// Print the fixture id (first 16 hex of the digest) and a newline.
    #[arg(long)]
    id: bool,
    /// Use `freezegate-canon-v1-ordered`: object members keep their input order.
    #[arg(long)]
    ordered: bool,
}

/// Runs `xtask canon`.
pub fn run(args: Args) -> Outcome {
    let (name, text) = crate::exit::read_input(args.file.as_deref())?;
    let form = if args.ordered {
        Canonicalization::V1Ordered
    } else {
        Canonicalization::V1
    };
    let canonical = canonicalize(&text, form)
        .with_context(|| format!("{name} has no canonical form"))
        .map_err(Failure::usage)?;
    let mut stdout = std::io::stdout().lock();
    let written = if args.digest {
        writeln!(stdout, "{}", canonical.digest())
    } else if args.id {
        writeln!(stdout, "{}", canonical.fixture_id())
    } else {
        stdout.write_all(canonical.bytes())
    };
    written
        .and_then(|()| stdout.flush())
        .context("cannot write standard output")
        .map_err(Failure::usage)?;
    Ok(OK)
}
