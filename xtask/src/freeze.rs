//! `xtask freeze --property ID --fixture ID --owner WHO --reason TEXT --expires-in DAYS
//! [--patch-id P] [--now RFC3339] [--format text|json]`: replays the pinned fixture now, with
//! the oracle, seed, replay count and deadline of `freezegate.toml`, and writes (or renews) its
//! ledger row, or refuses.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, anyhow};
use freezegate_canon::fixture::{meta_path, read_fixture, read_meta};
use freezegate_canon::{FixtureId, PropertyId, to_pretty_string};
use freezegate_gate::config::{CONFIG_FILE, Config, RunOverrides, Settings};
use freezegate_gate::run::ledger_policy;
use freezegate_ledger::{
    EnvClass, FreezeOutcome, FreezeRequest, LEDGER_PATH, Policy, Refusal, check_writable,
    freeze_row, precheck, renewable, write_target,
};
use freezegate_replay::{Label, ProcessOracle, ReplayOptions, ReplayPlan, replay};

use crate::Format;
use crate::exit::{BLOCKED, Failure, OK, Outcome, write_stdout};
use crate::gate::now as now_or_clock;
use crate::ledger::{file_settings, ledger_failure, read_ledger, signers_file, update_ledger};

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

/// What a freeze replays with: oracle, N, seed, deadline, and the policy it is judged by.
struct FreezeSettings {
    oracle: String,
    policy: Policy,
    seed: u64,
    timeout: Duration,
    /// `freezegate.toml` as read (the runner's env class and id are resolved over it).
    config: Config,
}

fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The settings of this freeze: those of `freezegate.toml` alone (SPEC §7: no flag or
/// variable overrides them for a freeze). Without the file there is nothing to replay with.
fn settings(args: &Args) -> Result<FreezeSettings, Failure> {
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
    if !Path::new(CONFIG_FILE).exists() {
        return Err(Failure::usage(anyhow!(
            "there is no {CONFIG_FILE}: a freeze replays the fixture with the property's oracle, seed, replay count and deadline from that file"
        )));
    }
    for var in ["REPLAYS", "PROP_SEED"] {
        if env_var(var).is_some() {
            eprintln!("note: {var} is ignored: a freeze uses {CONFIG_FILE}");
        }
    }
    let settings = file_settings()?;
    // A property with nothing to run is a configuration error, as in `gate`.
    let registry = crate::properties::registry();
    let runner = crate::gate::runner_file(args.rust_runner.as_deref())?;
    settings
        .config
        .check_oracle_of(&args.property, |id| {
            runner.is_some() || registry.contains(id)
        })
        .map_err(Failure::usage)?;
    let property = settings
        .config
        .property(&args.property)
        .cloned()
        .ok_or_else(|| {
            Failure::usage(anyhow!(
                "property {} is not in {CONFIG_FILE}",
                args.property
            ))
        })?;
    let exe = std::env::current_exe().ok();
    let oracle = freezegate_gate::run::oracle_source(
        &property,
        &registry,
        exe.as_deref(),
        runner.as_deref(),
    )
    .map_err(Failure::usage)?
    .command(property.id.as_str());
    Ok(FreezeSettings {
        oracle,
        // The property's own raised replay count is in the policy's `property_replays`:
        // `freeze_row` and `ledger check` both judge by `Policy::replays_for`.
        policy: ledger_policy(&settings),
        seed: settings.seed,
        timeout: Duration::from_millis(settings.timeout_ms_for(&property)),
        config: settings.config,
    })
}

/// `--env-class`, else `ENV_CLASS` (default `local`), and `--runner-id`, else `RUNNER_ID`
/// (default `local` for the local class, required for `remote`): resolved and checked as
/// `gate` and `classify` do.
fn runner(args: &Args, config: &Config) -> Result<(EnvClass, String), Failure> {
    let env = RunOverrides::from_env(|k| std::env::var(k).ok());
    // Only where the run happens: the seed, replays and deadline are the file's.
    let mut overrides = RunOverrides::default();
    overrides.env_class = env.env_class;
    overrides.env_runner_id = env.env_runner_id;
    overrides.flag_env_class = args.env_class.clone();
    overrides.flag_runner_id = args.runner_id.clone();
    let settings = Settings::resolve(config.clone(), &overrides, 1).map_err(Failure::usage)?;
    Ok((settings.env_class, settings.runner_id))
}

/// Runs `xtask freeze`.
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
    // Bad input of any kind (exit 3) is found before any rule is judged or oracle run:
    // the settings, the fixture and its meta file, the ledger, the signers file.
    let settings = settings(&args)?;
    let root = Path::new(".");
    let meta_file = meta_path(root, &property, fixture);
    // `try_exists`, not `exists`: a folder that cannot be read is its own error, not "pin
    // the fixture first".
    let there = meta_file
        .try_exists()
        .with_context(|| format!("cannot read {}", meta_file.display()))
        .map_err(Failure::usage)?;
    if !there {
        return Err(Failure::usage(anyhow!(
            "{} does not exist: pin the fixture with `xtask classify` first; a freeze needs its meta file",
            meta_file.display()
        )));
    }
    let meta = read_meta(root, &property, fixture).map_err(Failure::usage)?;
    let (canonical, _) = read_fixture(root, &property, fixture).map_err(Failure::usage)?;
    // The meta file must match its fixture, shrink path included (SPEC §3, §5).
    freezegate_gate::integrity::check_shrink_path(root, &meta).map_err(Failure::usage)?;
    let ledger = read_ledger()?;
    // A ledger that cannot be written is found now, not after the replays.
    check_writable(Path::new(LEDGER_PATH))
        .map_err(|e| ledger_failure(e, Some("cannot update the ledger")))?;
    let signers = signers_file()?;
    let (env_class, runner_id) = runner(&args, &settings.config)?;
    let patch_id = crate::gate::pin_patch_id(args.patch_id.clone(), Path::new("."))?;
    let request = FreezeRequest {
        meta,
        seed: settings.seed,
        env_class,
        runner_id,
        owner: args.owner.clone(),
        reason: args.reason.clone(),
        patch_id,
        expires_in_days: args.expires_in,
        now,
    };
    let Some(signers) = signers else {
        return report(
            &args,
            &request,
            &[],
            FreezeOutcome::Refused(Refusal::NoSigners),
        );
    };
    // Refuse what no replay can change before running the oracle.
    if let Err(refusal) = precheck(&request, &settings.policy, &signers)
        .and_then(|()| renewable(&ledger, &request.key()))
    {
        return report(&args, &request, &[], FreezeOutcome::Refused(refusal));
    }
    let dir = std::env::current_dir()
        .context("cannot read the current directory")
        .map_err(Failure::usage)?;
    let oracle = ProcessOracle::new(settings.oracle.as_str(), dir).map_err(Failure::usage)?;
    let plan = ReplayPlan::new(settings.policy.replays_for(&property), settings.seed)
        .map_err(Failure::usage)?;
    let options = ReplayOptions::default()
        .with_timeout(settings.timeout)
        .with_property_id(property.to_string());
    let replayed = replay(&oracle, canonical.bytes(), &plan, &options);
    // Runs a stopping signal killed are harness errors here: print nothing made of them (no
    // labels, no "infra queue" refusal); the signal's thread says why the command stopped.
    freezegate_gate::process::park_if_stopping();
    let labels = replayed.labels();
    let names: Vec<&str> = labels.iter().map(|l| l.as_str()).collect();
    eprintln!("replays: {}", names.join(" "));
    let row = match freeze_row(&request, &labels, &settings.policy, &signers) {
        Ok(row) => row,
        Err(refusal) => {
            return report(&args, &request, &labels, FreezeOutcome::Refused(refusal));
        }
    };
    let written = row.clone();
    // Asked again under the lock: another writer may have changed the ledger meanwhile.
    let renewed =
        update_ledger(|ledger| renewable(ledger, &row.key()).map(|()| ledger.upsert(row)))
            .map_err(|e| ledger_failure(e, Some("cannot update the ledger")))?;
    let renewed = match renewed {
        Ok(renewed) => renewed,
        Err(refusal) => {
            return report(&args, &request, &labels, FreezeOutcome::Refused(refusal));
        }
    };
    lock_file_note();
    let outcome = FreezeOutcome::Written {
        row: Box::new(written),
        renewed: renewed.is_some(),
    };
    report(&args, &request, &labels, outcome)
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
