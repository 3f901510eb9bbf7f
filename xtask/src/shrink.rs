//! `xtask shrink --oracle CMD [--input FILE] [--max-calls N] [--worker] [--path]
//! [--timeout-ms T] [--property ID] [--seed S] [--ordered] [--any-signature]
//! [--format text|json]`.
//!
//! Checks that the input fails (the check is the first oracle call), then shrinks it with
//! `freezegate-shrink`, asking the oracle through the process runner or, with `--worker`, the
//! worker runner of `freezegate-replay`. Only an `assert_fail` with the original failure
//! signature (when the original run had one) counts as "still fails": a candidate labelled
//! `assert_pass`, `timeout` or `harness_error`, or failing with another signature, does not.
//!
//! A worker-mode result is confirmed once by a fresh process (the same command, process
//! mode, the same signature rule) before it is printed: a worker that answers a line late is
//! out of step, and its answers can make a passing value look failing. The confirmation is an
//! oracle call like any other: it counts in `oracle_calls` and is kept inside `--max-calls`.
//! A shrink that accepted no step needs none (its result is the input, judged by a fresh
//! worker's first answer, which cannot be out of step). When the fresh process does not fail
//! the same way the command prints no value and exits 2. It does not re-shrink in process
//! mode: that would silently cost one process start per candidate, the very cost `--worker`
//! was asked to avoid, for an oracle that has just shown it cannot be trusted.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, anyhow};
use freezegate_canon::{Canonicalization, PropertyId, Value, parse, to_pretty_string, value_bytes};
use freezegate_replay::{
    Label, Oracle, ProcessOracle, RunContext, RunOutcome, WorkerOracle, mode_difference_causes,
};
use freezegate_shrink::{Options, path_to_value, shrink};

use crate::Format;
use crate::exit::{Failure, INFRA, OK, Outcome, USAGE};

/// The schema name of `--format json`.
const RESULT_SCHEMA: &str = "freezegate-shrink-result-v1";

/// The seed when neither `--seed` nor `PROP_SEED` gives one (SPEC §8).
const DEFAULT_SEED: u64 = 20260917;

/// Arguments of `xtask shrink`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The oracle: a shell command run with `sh -c` in the repository root.
    #[arg(long, value_name = "CMD")]
    oracle: String,
    /// The failing input (JSON); standard input when absent or `-`.
    #[arg(long, value_name = "FILE")]
    input: Option<PathBuf>,
    /// The most oracle calls, the initial check (and with --worker the confirmation of the
    /// result by a fresh process) included.
    #[arg(long, value_name = "N", default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    max_calls: u64,
    /// Run the oracle as one long-lived worker (FREEZEGATE_WORKER=1, one candidate per line).
    #[arg(long)]
    worker: bool,
    /// Also print the shrink path, as JSON, on standard error.
    #[arg(long)]
    path: bool,
    /// The deadline of each run, in milliseconds (at least 1).
    #[arg(long, value_name = "T", default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    timeout_ms: u64,
    /// The property id the oracle sees as PROPERTY_ID (empty when absent).
    #[arg(long, value_name = "ID")]
    property: Option<String>,
    /// The seed every run gets as PROP_SEED [default: PROP_SEED, else 20260917].
    #[arg(long, value_name = "S")]
    seed: Option<u64>,
    /// Use `freezegate-canon-v1-ordered`: object members keep their order.
    #[arg(long)]
    ordered: bool,
    /// Accept any `assert_fail` as the same failure, even with another failure signature.
    #[arg(long)]
    any_signature: bool,
    /// Output format: the canonical bytes and a newline, or one JSON document
    /// (`freezegate-shrink-result-v1`: schema, value, oracle_calls, budget_exhausted,
    /// shrink_path).
    #[arg(long, value_enum, default_value_t)]
    format: Format,
    /// Where the oracle runs: the repository root (set by `main`, not a flag).
    #[arg(skip)]
    pub oracle_dir: PathBuf,
}

/// Runs `xtask shrink`.
pub fn run(args: Args) -> Outcome {
    let seed = match args.seed {
        Some(seed) => seed,
        None => env_seed()?,
    };
    let property_id = match &args.property {
        Some(id) => id
            .parse::<PropertyId>()
            .map_err(|e| Failure::usage(anyhow!("invalid --property {id:?}: {e}")))?
            .to_string(),
        None => String::new(),
    };
    let form = if args.ordered {
        Canonicalization::V1Ordered
    } else {
        Canonicalization::V1
    };
    let input = read_input(&args)?;
    let dir = &args.oracle_dir;
    let ctx = RunContext::new(seed)
        .with_property(property_id)
        .with_timeout(Duration::from_millis(args.timeout_ms));
    let process = ProcessOracle::new(args.oracle.as_str(), dir).map_err(Failure::usage)?;
    let worker = if args.worker {
        Some(WorkerOracle::new(args.oracle.as_str(), dir).map_err(Failure::usage)?)
    } else {
        None
    };
    let oracle: &dyn Oracle = match &worker {
        Some(worker) => worker,
        None => &process,
    };

    let bytes = value_bytes(&input, form)
        .context("the input has no canonical form")
        .map_err(Failure::usage)?;
    let first = oracle.run(&bytes, &ctx);
    match first.label {
        Label::AssertFail => {}
        Label::AssertPass => {
            eprintln!("oracle_calls=1");
            return Err(Failure::usage(anyhow!(
                "nothing to shrink: the input passes the oracle"
            )));
        }
        Label::Timeout | Label::HarnessError => {
            eprintln!("oracle_calls=1");
            let why = first.message.unwrap_or_else(|| first.exit.to_string());
            return Err(Failure {
                code: INFRA,
                error: anyhow!(
                    "refusing to shrink: the first run on the input is a {} ({why}); only a completed failure can be shrunk",
                    first.label
                ),
            });
        }
    }
    let signature = if args.any_signature {
        None
    } else {
        first.signature.clone()
    };
    if let Some(signature) = &signature {
        eprintln!("keeping the failure signature {signature:?}");
    }
    let still_fails = |candidate: &Value| match value_bytes(candidate, form) {
        Ok(bytes) => oracle.run(&bytes, &ctx).fails_like(signature.as_deref()),
        Err(_) => false,
    };
    // The initial check, and in worker mode one call kept for the confirmation.
    let options = Options::default()
        .with_max_calls(
            args.max_calls
                .saturating_sub(if args.worker { 2 } else { 1 }),
        )
        .with_canonicalization(form);
    let shrunk = shrink(&input, still_fails, &options)
        .context("cannot shrink the input")
        .map_err(Failure::usage)?;
    drop(worker);

    let minimal = value_bytes(&shrunk.value, form)
        .context("the result has no canonical form")
        .map_err(|e| Failure {
            code: USAGE,
            error: e,
        })?;
    let mut calls = shrunk.oracle_calls + 1;
    if args.worker && !shrunk.path.is_empty() {
        calls += 1;
        let fresh = process.run(&minimal, &ctx);
        if !fresh.fails_like(signature.as_deref()) {
            eprintln!("oracle_calls={calls}");
            return Err(Failure {
                code: INFRA,
                error: anyhow!(disagreement(signature.as_deref(), &fresh)),
            });
        }
        eprintln!("confirmed in a fresh process");
    }
    let document = match args.format {
        Format::Text => {
            let mut text = minimal.clone();
            text.push(b'\n');
            text
        }
        Format::Json => {
            // The value as its canonical bytes read back: members in canonical order.
            let value = parse(&minimal)
                .context("the result's canonical bytes do not parse")
                .map_err(|e| Failure {
                    code: USAGE,
                    error: e,
                })?;
            let members = vec![
                ("schema".to_owned(), Value::from(RESULT_SCHEMA)),
                ("value".to_owned(), value),
                ("oracle_calls".to_owned(), Value::Int(calls.into())),
                (
                    "budget_exhausted".to_owned(),
                    Value::Bool(shrunk.budget_exhausted),
                ),
                ("shrink_path".to_owned(), path_to_value(&shrunk.path)),
            ];
            to_pretty_string(&Value::Object(members)).into_bytes()
        }
    };
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(&document)
        .and_then(|()| stdout.flush())
        .context("cannot write standard output")
        .map_err(Failure::usage)?;
    eprintln!("oracle_calls={calls}");
    if shrunk.budget_exhausted {
        eprintln!("budget_exhausted=true");
    }
    if args.path {
        eprintln!("shrink_path={}", path_to_value(&shrunk.path));
    }
    Ok(OK)
}

/// The sentence for a worker-mode result that a fresh process does not fail the same way:
/// what the worker answered for the minimal value (`assert_fail`, with `signature` when the
/// shrink kept one) against what the fresh process gave, so that a difference of signature
/// alone reads as one.
fn disagreement(signature: Option<&str>, fresh: &RunOutcome) -> String {
    let worker = match signature {
        Some(sig) => format!("assert_fail with the signature {sig:?}"),
        None => Label::AssertFail.to_string(),
    };
    format!(
        "the worker's answers and a fresh process disagree: on the worker's minimal value the worker gives {worker} and a fresh process {} ({}), so it is not printed",
        fresh.describe(),
        mode_difference_causes(Label::AssertFail, fresh.label)
    )
}

/// The input document, parsed.
fn read_input(args: &Args) -> Result<Value, Failure> {
    let (name, text) = crate::exit::read_input(args.input.as_deref())?;
    parse(&text)
        .with_context(|| format!("{name} is not valid JSON"))
        .map_err(Failure::usage)
}

/// `PROP_SEED` if set, else the default seed; an unparsable value is bad input.
fn env_seed() -> Result<u64, Failure> {
    match std::env::var("PROP_SEED") {
        Ok(text) if !text.trim().is_empty() => text
            .trim()
            .parse()
            .map_err(|e| Failure::usage(anyhow!("invalid PROP_SEED={text:?}: {e}"))),
        Ok(_) | Err(std::env::VarError::NotPresent) => Ok(DEFAULT_SEED),
        Err(e) => Err(Failure::usage(anyhow!("invalid PROP_SEED: {e}"))),
    }
}
