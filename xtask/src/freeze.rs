//! `xtask freeze --property ID --fixture ID --owner WHO --reason TEXT --expires-in DAYS
//! [--patch-id P] [--now RFC3339] [--format text|json]`: replays the pinned fixture now, with
//! the oracle, seed, replay count and deadline of `freezegate.toml`, and writes (or renews) its
//! ledger row, or refuses.

use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow};
use freezegate_canon::{FixtureId, PropertyId, to_pretty_string};
use freezegate_gate::config::{CONFIG_FILE, RunOverrides};
use freezegate_gate::freeze::{Ask, FreezeError, freeze};
use freezegate_ledger::{FreezeOutcome, FreezeRequest, LEDGER_PATH, write_target};
use freezegate_replay::Label;

use crate::Format;
use crate::exit::{BLOCKED, Failure, OK, Outcome, write_stdout};
use crate::gate::now as now_or_clock;
use crate::ledger::{WaitNote, ledger_failure};

/// Arguments of `xtask freeze`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The property id (listed in freezegate.toml).
    #[arg(long, value_name = "ID")]
    property: String,
    /// The pinned fixture's id (16 hex); its meta file must exist.
    #[arg(long, value_name = "ID")]
    fixture: String,
    /// The human who vouches for the row: a principal of freeze/allowed_signers.
    #[arg(long, value_name = "WHO")]
    owner: String,
    /// The named cause of non-determinism.
    #[arg(long, value_name = "TEXT")]
    reason: String,
    /// Days until the row expires (at most the policy's max_freeze_days).
    #[arg(long, value_name = "DAYS")]
    expires_in: u32,
    /// The candidate under test [default: the full SHA of HEAD].
    #[arg(long, value_name = "P")]
    patch_id: Option<String>,
    /// The time of the freeze (RFC 3339) [default: the clock].
    #[arg(long, value_name = "RFC3339")]
    now: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
    /// This runner's env class, `local` or `remote` (else `ENV_CLASS`, else `local`).
    #[arg(long, value_name = "CLASS")]
    env_class: Option<String>,
    /// This runner's id (else `RUNNER_ID`, else `local` for the local class; required for
    /// `remote`).
    #[arg(long, value_name = "ID")]
    runner_id: Option<String>,
    /// Replay a Rust property (one without an `oracle`) through BINARY, a build of the tree
    /// under test that serves it, instead of this binary (as `gate --rust-runner`).
    #[arg(long, value_name = "BINARY")]
    rust_runner: Option<PathBuf>,
    /// Refused: a freeze replays with freezegate.toml's oracle only.
    #[arg(long, value_name = "CMD", hide = true)]
    oracle: Option<String>,
    /// Refused: a freeze replays as often as freezegate.toml says.
    #[arg(long, value_name = "N", hide = true)]
    replays: Option<String>,
    /// Refused: a freeze replays with freezegate.toml's seed.
    #[arg(long, value_name = "S", hide = true)]
    seed: Option<String>,
    /// Refused: a freeze replays with freezegate.toml's deadline.
    #[arg(long, value_name = "T", hide = true)]
    timeout_ms: Option<String>,
}

impl Args {
    /// Makes the runner's path absolute against `start`, where the command was typed.
    pub fn anchor(&mut self, start: &Path) {
        crate::root::anchor(start, &mut self.rust_runner);
    }
}

fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// Refuses the flags a freeze does not take (SPEC §7: no flag or variable overrides the
/// file's settings for a freeze), and says which variables it ignores.
fn refuse_overrides(args: &Args) -> Result<(), Failure> {
    for (flag, given) in [
        ("--oracle", args.oracle.is_some()),
        ("--replays", args.replays.is_some()),
        ("--seed", args.seed.is_some()),
        ("--timeout-ms", args.timeout_ms.is_some()),
    ] {
        if given {
            return Err(Failure::usage(anyhow!(
                "{flag} is not accepted: a freeze replays with the oracle, seed, replay count and deadline of {CONFIG_FILE} only"
            )));
        }
    }
    if Path::new(CONFIG_FILE).exists() {
        for var in ["REPLAYS", "PROP_SEED"] {
            if env_var(var).is_some() {
                eprintln!("note: {var} is ignored: a freeze uses {CONFIG_FILE}");
            }
        }
    }
    Ok(())
}

/// Runs `xtask freeze`: [`freezegate_gate::freeze::freeze`], then the outcome printed.
pub fn run(args: Args) -> Outcome {
    let now = now_or_clock(args.now.as_deref())?;
    let property: PropertyId = args
        .property
        .parse()
        .with_context(|| format!("invalid --property {:?}", args.property))
        .map_err(Failure::usage)?;
    let fixture: FixtureId = args
        .fixture
        .parse()
        .with_context(|| format!("invalid --fixture {:?}", args.fixture))
        .map_err(Failure::usage)?;
    refuse_overrides(&args)?;
    let runner = crate::gate::runner_file(args.rust_runner.as_deref())?;
    let patch_id = crate::gate::pin_patch_id(args.patch_id.clone(), Path::new("."))?;
    // Where the run happens: `--env-class`, else `ENV_CLASS`; `--runner-id`, else
    // `RUNNER_ID`. The library reads nothing else of these.
    let mut overrides = RunOverrides::from_env(|k| std::env::var(k).ok());
    overrides.flag_env_class = args.env_class.clone();
    overrides.flag_runner_id = args.runner_id.clone();
    let ask = Ask {
        property,
        fixture,
        owner: args.owner.clone(),
        reason: args.reason.clone(),
        expires_in_days: args.expires_in,
        patch_id,
        now,
        overrides,
    };
    let registry = crate::properties::registry();
    // The labels are printed as soon as the replays end, before the ledger is written, so a
    // write that fails or waits for the lock does not lose them.
    let print_labels = |labels: &[freezegate_replay::Label]| {
        let names: Vec<&str> = labels.iter().map(|l| l.as_str()).collect();
        eprintln!("replays: {}", names.join(" "));
    };
    let frozen = freeze(
        Path::new("."),
        &registry,
        runner.as_deref(),
        ask,
        print_labels,
        WaitNote::start,
    )
    .map_err(|e| match e {
        FreezeError::ReadLedger(e) => ledger_failure(e, None),
        FreezeError::UpdateLedger(e) => ledger_failure(e, Some("cannot update the ledger")),
        other => Failure::usage(other),
    })?;
    // Runs a stopping signal killed are harness errors here: print nothing made of them (no
    // labels, no "infra queue" refusal); the signal's thread says why the command stopped.
    freezegate_gate::process::park_if_stopping();
    if matches!(frozen.outcome, FreezeOutcome::Written { .. }) {
        lock_file_note();
    }
    report(&args, &frozen.request, &frozen.labels, frozen.outcome)
}

/// Prints the outcome (a line, or one JSON document on stdout; a refusal's sentence also on
/// stderr) and gives the exit code: 0 when a row was written, 1 when refused.
fn report(
    args: &Args,
    request: &FreezeRequest,
    labels: &[Label],
    outcome: FreezeOutcome,
) -> Outcome {
    let written = matches!(outcome, FreezeOutcome::Written { .. });
    if !written {
        eprintln!("{}", outcome.line());
    }
    match args.format {
        Format::Text if written => write_stdout(&format!("{}\n", outcome.line()))?,
        Format::Text => {}
        Format::Json => write_stdout(&to_pretty_string(&outcome.to_value(request, labels)))?,
    }
    Ok(if written { OK } else { BLOCKED })
}

/// The lock file beside the ledger, and the temporaries a killed writer leaves there, must
/// not be committed: say so for each that git does not ignore.
fn lock_file_note() {
    let Ok(target) = write_target(Path::new(LEDGER_PATH)) else {
        return;
    };
    let lock = freezegate_ledger::lock_path(&target);
    if not_ignored(&lock) {
        eprintln!(
            "note: {} is the writers' lock, not part of the ledger: add it to .gitignore",
            lock.display()
        );
    }
    // A name like the temporaries' (`.ledger.json.<pid>-<n>.tmp`); git matches it whether or
    // not such a file exists.
    let dir = lock.parent().unwrap_or(Path::new("."));
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if not_ignored(&dir.join(format!(".{name}.0-0.tmp"))) {
        eprintln!(
            "note: {}/.*.tmp are temporaries a killed writer leaves (the next write removes them), not part of the ledger: add the pattern to .gitignore",
            dir.display()
        );
    }
}

/// Whether git says `path` is not ignored. Exit 1 is git's "not ignored"; anything else (no
/// git, not a repository) is not an answer, and says nothing.
fn not_ignored(path: &Path) -> bool {
    let ignored = std::process::Command::new("git")
        .args(["check-ignore", "-q"])
        .arg(path)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
    matches!(ignored.map(|s| s.code()), Ok(Some(1)))
}
