//! `xtask classify --property ID --input FILE`: the classify loop on one failing input.

use std::path::PathBuf;

use anyhow::Context;
use freezegate_canon::to_pretty_string;
use freezegate_gate::classify::{self, Action, Plan};
use freezegate_gate::oracles::PropertyOracles;
use freezegate_gate::run;

use crate::Format;
use crate::exit::{Failure, Outcome, write_stdout};
use crate::gate::{RunFlags, now, pin_patch_id, settings};
use crate::properties;

/// Arguments of `xtask classify`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The property (listed in freezegate.toml).
    #[arg(long)]
    property: String,
    /// The failing input (JSON); standard input when absent or `-`.
    #[arg(long)]
    input: Option<PathBuf>,
    /// The most oracle calls, the first run on the input (and, for a `worker = true`
    /// property, the worker's answer on it) included; the replays of the verdict are not
    /// counted.
    #[arg(long, value_name = "N", default_value_t = run::DEFAULT_MAX_SHRINK_CALLS,
          value_parser = clap::value_parser!(u64).range(1..))]
    max_calls: u64,
    /// Output format: the JSON record (the default) or lines for people.
    #[arg(long, value_enum, default_value_t = Format::Json)]
    format: Format,
    /// Run a Rust property (one without an `oracle`) through BINARY, a build of the tree
    /// under test that serves it, instead of this binary (as `gate --rust-runner`).
    #[arg(long, value_name = "BINARY")]
    rust_runner: Option<PathBuf>,
    #[command(flatten)]
    run: RunFlags,
}

impl Args {
    /// Makes the input and runner paths absolute against `start`, where the command was typed.
    pub fn anchor(&mut self, start: &std::path::Path) {
        crate::root::anchor(start, &mut self.input);
        crate::root::anchor(start, &mut self.rust_runner);
    }
}

/// Runs `xtask classify`.
pub fn run(args: Args) -> Outcome {
    let settings = settings(&args.run)?;
    let now = now(args.run.now.as_deref())?;
    let root = std::env::current_dir()
        .context("cannot read the current directory")
        .map_err(Failure::usage)?;
    // Before any oracle runs: a fixture pinned now must name the candidate it failed on.
    let patch_id = pin_patch_id(args.run.patch_id.clone(), &root)?;
    let property = settings.config.property(&args.property).ok_or_else(|| {
        Failure::usage(anyhow::anyhow!(
            "property {:?} is not listed in freezegate.toml",
            args.property
        ))
    })?;
    let (_, text) = crate::exit::read_input(args.input.as_deref())?;
    let input = freezegate_canon::parse(&text)
        .with_context(|| {
            format!(
                "{} is not a JSON document with a canonical form",
                args.input
                    .as_deref()
                    .map_or("<stdin>".into(), |p| p.display().to_string())
            )
        })
        .map_err(Failure::usage)?;
    let registry = properties::registry();
    // The property with nothing to run is a configuration error, as in `gate` (another
    // property that only another binary registers is not this command's business).
    settings
        .config
        .check_oracle_of(&args.property, |id| {
            args.rust_runner.is_some() || registry.contains(id)
        })
        .map_err(Failure::usage)?;
    let runner = crate::gate::runner_file(args.rust_runner.as_deref())?;
    let exe = std::env::current_exe().ok();
    let source = run::oracle_source(property, &registry, exe.as_deref(), runner.as_deref())
        .map_err(Failure::usage)?;
    let oracles = PropertyOracles::new(property, &source, &root).map_err(Failure::usage)?;
    let plan = Plan {
        root: &root,
        property: &property.id,
        oracles: &oracles,
        canonicalization: property.canonicalization,
        seed: settings.seed,
        replays: settings.replays_for(property),
        timeout_ms: settings.timeout_ms_for(property),
        jobs: settings.jobs,
        max_calls: args.max_calls,
        pinned_at: now.to_string(),
        patch_id,
        pin: true,
        stop_if_pinned: false,
        unsteady: None,
    };
    let record = classify::classify(&plan, &input).map_err(|e| {
        if let classify::ClassifyError::Pin { record, .. } = &e
            && let Some(meta) = &record.meta
        {
            // The failure was found; only its files could not be written: say what it was,
            // so that the minimal input is not lost with the write.
            let fixture = format!("fixtures/{}/{}.json", meta.property_id, meta.fixture_id);
            let minimal = record.minimal.as_ref().map_or("", |c| c.as_str());
            let letters = freezegate_replay::letters(&record.labels);
            if record.already_pinned {
                eprintln!(
                    "{fixture} is pinned, but its meta or origin file could not be written; minimal input: {minimal}"
                );
            } else if record.action == Action::PinOrigin {
                eprintln!(
                    "pin_origin not done: {fixture}, the input as given, could not be written; labels: {letters}"
                );
            } else {
                eprintln!(
                    "{} not done: {fixture} could not be written; labels: {letters}; minimal input: {minimal}",
                    record.action.as_str()
                );
            }
        }
        Failure::usage(e)
    })?;
    match args.format {
        Format::Json => write_stdout(&to_pretty_string(&record.to_value()))?,
        Format::Text => write_stdout(&record.to_text())?,
    }
    // The flag is about the fixture pinned from the minimal input; a pinned origin or a
    // dropped input is not it.
    if record.trivial && matches!(record.action, Action::PinFixture | Action::FreezeAfterPin) {
        eprintln!(
            "warning: the minimal failing input is trivial ({}): the oracle may be too weak",
            record.minimal.as_ref().map_or("", |c| c.as_str())
        );
    }
    if let Some(message) = &record.message {
        eprintln!("{}: {message}", record.action.as_str());
    }
    if let Some(meta) = record.meta.as_ref().filter(|_| record.action.pins()) {
        eprintln!(
            "{} fixtures/{}/{}.json",
            if record.already_pinned {
                "already pinned (its files are kept as they are):"
            } else {
                "pinned"
            },
            meta.property_id,
            meta.fixture_id
        );
    }
    Ok(record.action.exit_code())
}
