//! `xtask canon [FILE] [--digest | --id] [--ordered] [--format text|json]`.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use freezegate_canon::{Canonicalization, Value, canonicalize, to_pretty_string};

use crate::Format;

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
    /// Output format: `text` prints what the flags ask for; `json` prints one document
    /// (`freezegate-canon-result-v1`: schema, canonicalization, canonical, fixture_digest,
    /// fixture_id), not with --digest/--id.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

/// The `schema` of `canon --format json`'s document.
const RESULT_SCHEMA: &str = "freezegate-canon-result-v1";

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
    if args.format == Format::Json && (args.digest || args.id) {
        return Err(Failure::usage(anyhow::anyhow!(
            "--format json prints the digest and the id in its document: drop --digest and --id"
        )));
    }
    if args.format == Format::Json {
        let text = |s: String| Value::String(s);
        let document = Value::Object(vec![
            ("schema".into(), text(RESULT_SCHEMA.to_owned())),
            ("canonicalization".into(), text(form.as_str().to_owned())),
            ("canonical".into(), text(canonical.as_str().to_owned())),
            (
                "fixture_digest".into(),
                text(canonical.digest().to_string()),
            ),
            (
                "fixture_id".into(),
                text(canonical.fixture_id().to_string()),
            ),
        ]);
        crate::exit::write_stdout(&to_pretty_string(&document))?;
        return Ok(OK);
    }
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
