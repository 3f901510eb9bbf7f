//! `xtask replay --oracle CMD --fixture FILE [--replays N] [--seed S] [--timeout-ms T]
//! [--jobs J] [--property ID] [--ordered] [--format text|json]`.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, anyhow};
use freezegate_canon::fixture::Difference;
use freezegate_canon::{Canonicalization, PropertyId, canonicalize};
use freezegate_replay::{ProcessOracle, ReplayOptions, ReplayPlan, Verdict, replay};

use crate::Format;
use crate::exit::{BLOCKED, Failure, INFRA, OK, Outcome, USAGE};

/// The seed when neither `--seed` nor `PROP_SEED` gives one (SPEC §8).
const DEFAULT_SEED: u64 = 20260917;
/// The replay count when neither `--replays` nor `REPLAYS` gives one (SPEC §6).
const DEFAULT_REPLAYS: usize = 7;

/// Arguments of `xtask replay`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The oracle: a shell command run with `sh -c` in the repository root, once per replay.
    #[arg(long, value_name = "CMD")]
    oracle: String,
    /// The fixture file: canonical bytes and one newline.
    #[arg(long, value_name = "FILE")]
    fixture: PathBuf,
    /// The replay count N [default: REPLAYS, else 7].
    #[arg(long, value_name = "N")]
    replays: Option<usize>,
    /// The seed every replay gets as PROP_SEED [default: PROP_SEED, else 20260917].
    #[arg(long, value_name = "S")]
    seed: Option<u64>,
    /// The deadline of each run, in milliseconds (at least 1).
    #[arg(long, value_name = "T", default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    timeout_ms: u64,
    /// How many runs at once, at least 1 [default: the number of cores].
    #[arg(long, value_name = "J",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    jobs: Option<usize>,
    /// The property id the oracle sees as PROPERTY_ID (empty when absent).
    #[arg(long, value_name = "ID")]
    property: Option<String>,
    /// The fixture is in `freezegate-canon-v1-ordered` (object members in their own order).
    #[arg(long)]
    ordered: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
    /// Where the oracle runs: the repository root (set by `main`, not a flag).
    #[arg(skip)]
    pub oracle_dir: PathBuf,
}

/// Runs `xtask replay`.
pub fn run(args: Args) -> Outcome {
    let seed = match args.seed {
        Some(seed) => seed,
        None => env_number("PROP_SEED")?.unwrap_or(DEFAULT_SEED),
    };
    let replays = match args.replays {
        Some(n) => n,
        None => env_number("REPLAYS")?.unwrap_or(DEFAULT_REPLAYS),
    };
    let plan = ReplayPlan::new(replays, seed).map_err(Failure::usage)?;
    let property_id = match &args.property {
        Some(id) => id
            .parse::<PropertyId>()
            .map_err(|e| Failure::usage(anyhow!("invalid --property {id:?}: {e}")))?
            .to_string(),
        None => String::new(),
    };
    let candidate = read_fixture(&args)?;
    let oracle = ProcessOracle::new(args.oracle.as_str(), args.oracle_dir.clone())
        .map_err(Failure::usage)?;
    let mut options = ReplayOptions::default()
        .with_timeout(Duration::from_millis(args.timeout_ms))
        .with_property_id(property_id);
    if let Some(jobs) = args.jobs {
        options = options.with_jobs(jobs);
    }
    eprintln!(
        "replaying {} {} times with `{}`",
        args.fixture.display(),
        plan.n(),
        oracle.command()
    );
    let report = replay(&oracle, &candidate, &plan, &options);
    let out = match args.format {
        Format::Text => report.to_text(),
        Format::Json => report
            .to_json()
            .context("cannot render the report")
            .map_err(Failure::usage)?,
    };
    crate::exit::write_stdout(&out)?;
    Ok(match report.verdict {
        Verdict::NotReproduced | Verdict::FreezeEligible => OK,
        Verdict::BlockPatch => BLOCKED,
        Verdict::InfraQueue => INFRA,
        Verdict::RejectMalformed => USAGE,
    })
}

/// The fixture's canonical bytes; the file must hold exactly them and one newline.
fn read_fixture(args: &Args) -> Result<Vec<u8>, Failure> {
    let path = &args.fixture;
    let text = std::fs::read(path)
        .with_context(|| format!("cannot read fixture {}", path.display()))
        .map_err(Failure::usage)?;
    let Some(body) = text.strip_suffix(b"\n") else {
        return Err(Failure::usage(anyhow!(
            "fixture {} does not end with a newline",
            path.display()
        )));
    };
    let form = if args.ordered {
        Canonicalization::V1Ordered
    } else {
        Canonicalization::V1
    };
    let canonical = canonicalize(body, form)
        .with_context(|| format!("fixture {} is not valid JSON", path.display()))
        .map_err(Failure::usage)?;
    if let Some(difference) = Difference::between(body, canonical.bytes()) {
        return Err(Failure::usage(anyhow!(
            "fixture {} is not canonical ({}): {difference}",
            path.display(),
            form.as_str(),
        )));
    }
    Ok(canonical.into_bytes())
}

/// A number from environment variable `name`, if set; an unparsable value is bad input.
fn env_number<T: std::str::FromStr>(name: &str) -> Result<Option<T>, Failure>
where
    T::Err: std::fmt::Display,
{
    match std::env::var(name) {
        Ok(text) if !text.trim().is_empty() => text
            .trim()
            .parse()
            .map(Some)
            .map_err(|e| Failure::usage(anyhow!("invalid {name}={text:?}: {e}"))),
        Ok(_) | Err(std::env::VarError::NotPresent) => Ok(None),
        Err(e) => Err(Failure::usage(anyhow!("invalid {name}: {e}"))),
    }
}
