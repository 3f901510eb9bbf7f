//! `xtask freeze --property ID --fixture ID --owner WHO --reason TEXT --expires-in DAYS
//! [--patch-id P] [--oracle CMD] [--replays N] [--seed S] [--timeout-ms T] [--now RFC3339]`:
//! replays the pinned fixture now and writes (or renews) its ledger row, or refuses.
//! `--oracle`, `--replays` and `--seed` exist only for repositories without `freezegate.toml`.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, anyhow};
use freezegate_canon::fixture::{meta_path, read_fixture, read_meta};
use freezegate_canon::{FixtureId, PropertyId};
use freezegate_gate::config::CONFIG_FILE;
use freezegate_gate::run::ledger_policy;
use freezegate_gate::rust_prop::oracle_command;
use freezegate_ledger::{
    EnvClass, FreezeRequest, LEDGER_PATH, Policy, freeze_row, precheck, update,
};
use freezegate_replay::{ProcessOracle, ReplayOptions, ReplayPlan, replay};

use crate::exit::{BLOCKED, Failure, OK, Outcome};
use crate::gate::now as now_or_clock;
use crate::ledger::{file_settings, policy, signers};

/// Arguments of `xtask freeze`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The property id.
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
    /// The property's oracle command (only without freezegate.toml).
    #[arg(long, value_name = "CMD")]
    oracle: Option<String>,
    /// The replay count N [default: REPLAYS, else 7] (only without freezegate.toml).
    #[arg(long, value_name = "N")]
    replays: Option<usize>,
    /// The seed [default: PROP_SEED, else the meta file's] (only without freezegate.toml).
    #[arg(long, value_name = "S")]
    seed: Option<u64>,
    /// The deadline of each run, in milliseconds [default: the property's, else 10000].
    #[arg(long, value_name = "T")]
    timeout_ms: Option<u64>,
    /// The time of the freeze (RFC 3339) [default: the clock].
    #[arg(long, value_name = "RFC3339")]
    now: Option<String>,
}

/// What a freeze replays with: oracle, N, seed, deadline, and the policy it is judged by.
struct FreezeSettings {
    oracle: String,
    policy: Policy,
    seed: u64,
    timeout: Duration,
}

fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn env_number<T: std::str::FromStr>(name: &str) -> Result<Option<T>, Failure>
where
    T::Err: std::fmt::Display,
{
    env_var(name)
        .map(|v| {
            v.parse::<T>()
                .map_err(|e| Failure::usage(anyhow!("invalid {name}={v:?}: {e}")))
        })
        .transpose()
}

/// The settings of this freeze.
///
/// With `freezegate.toml`, the oracle, seed and replay count come from the file alone (SPEC
/// §7): `--oracle`, `--replays` and `--seed` are refused, `REPLAYS` and `PROP_SEED` ignored.
/// Without it, they come from the flags, `REPLAYS` and `PROP_SEED`, and the seed defaults to
/// the one the fixture was pinned with.
fn settings(args: &Args, meta_seed: u64) -> Result<FreezeSettings, Failure> {
    if Path::new(CONFIG_FILE).exists() {
        return settings_from_file(args);
    }
    let oracle = args.oracle.clone().ok_or_else(|| {
        Failure::usage(anyhow!(
            "no oracle for property {}: pass --oracle CMD (there is no {CONFIG_FILE})",
            args.property
        ))
    })?;
    let replays = match args.replays {
        Some(n) => n,
        None => env_number("REPLAYS")?.unwrap_or(Policy::default().replays),
    };
    let seed = match args.seed {
        Some(seed) => seed,
        None => env_number("PROP_SEED")?.unwrap_or(meta_seed),
    };
    Ok(FreezeSettings {
        oracle,
        policy: Policy {
            replays,
            ..policy()?
        },
        seed,
        timeout: Duration::from_millis(args.timeout_ms.unwrap_or(10_000)),
    })
}

fn settings_from_file(args: &Args) -> Result<FreezeSettings, Failure> {
    for (flag, given) in [
        ("--oracle", args.oracle.is_some()),
        ("--replays", args.replays.is_some()),
        ("--seed", args.seed.is_some()),
    ] {
        if given {
            return Err(Failure::usage(anyhow!(
                "{flag} is not accepted: {CONFIG_FILE} exists, and a freeze replays with its oracle, seed and replay count only"
            )));
        }
    }
    for var in ["REPLAYS", "PROP_SEED"] {
        if env_var(var).is_some() {
            eprintln!("note: {var} is ignored: a freeze uses {CONFIG_FILE}");
        }
    }
    let settings = file_settings()?;
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
    let oracle = match &property.oracle {
        Some(command) => command.clone(),
        None => {
            let exe = std::env::current_exe()
                .context("cannot find this binary to run a Rust property")
                .map_err(Failure::usage)?;
            oracle_command(&exe, property.id.as_str())
        }
    };
    Ok(FreezeSettings {
        oracle,
        policy: Policy {
            replays: settings.replays_for(&property),
            ..ledger_policy(&settings)
        },
        seed: settings.seed,
        timeout: Duration::from_millis(args.timeout_ms.unwrap_or(property.timeout_ms)),
    })
}

/// `ENV_CLASS` (default `local`) and `RUNNER_ID` (default `local` for the local class,
/// required for `remote`).
fn runner() -> Result<(EnvClass, String), Failure> {
    let class: EnvClass = env_var("ENV_CLASS")
        .unwrap_or_else(|| "local".to_owned())
        .parse()
        .context("invalid ENV_CLASS")
        .map_err(Failure::usage)?;
    let runner_id = match (class, env_var("RUNNER_ID")) {
        (_, Some(id)) => id,
        (EnvClass::Local, None) => "local".to_owned(),
        (EnvClass::Remote, None) => {
            return Err(Failure::usage(anyhow!(
                "ENV_CLASS=remote needs RUNNER_ID to name this runner"
            )));
        }
    };
    Ok((class, runner_id))
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
    let root = Path::new(".");
    let meta_file = meta_path(root, &property, fixture);
    if !meta_file.exists() {
        return Err(Failure::usage(anyhow!(
            "{} does not exist: pin the fixture with `cargo xtask classify` first; a freeze needs its meta file",
            meta_file.display()
        )));
    }
    let meta = read_meta(root, &property, fixture).map_err(Failure::usage)?;
    let settings = settings(&args, meta.seed)?;
    let (env_class, runner_id) = runner()?;
    let patch_id = match &args.patch_id {
        Some(p) => p.clone(),
        None => freezegate_gate::run::head_commit(Path::new(".")).ok_or_else(|| {
            Failure::usage(anyhow!(
                "cannot read the commit of HEAD with git: pass --patch-id"
            ))
        })?,
    };
    let signers = signers()?;
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
    // Refuse what no replay can change before running the oracle.
    if let Err(refusal) = precheck(&request, &settings.policy, &signers) {
        eprintln!("{refusal}");
        return Ok(BLOCKED);
    }
    let (canonical, _) = read_fixture(root, &property, fixture).map_err(Failure::usage)?;
    let dir = std::env::current_dir()
        .context("cannot read the current directory")
        .map_err(Failure::usage)?;
    let oracle = ProcessOracle::new(settings.oracle.as_str(), dir).map_err(Failure::usage)?;
    let plan = ReplayPlan::new(settings.policy.replays, settings.seed).map_err(Failure::usage)?;
    let options = ReplayOptions {
        timeout: settings.timeout,
        property_id: property.to_string(),
        ..ReplayOptions::default()
    };
    let report = replay(&oracle, canonical.bytes(), &plan, &options);
    let labels = report.labels();
    let names: Vec<&str> = labels.iter().map(|l| l.as_str()).collect();
    eprintln!("replays: {}", names.join(" "));
    let row = match freeze_row(&request, &labels, &settings.policy, &signers) {
        Ok(row) => row,
        Err(refusal) => {
            eprintln!("{refusal}");
            return Ok(BLOCKED);
        }
    };
    let summary = format!(
        "{} {} seed {} {} until {}",
        row.property_id, row.fixture_id, row.seed, row.env_class, row.expires_at
    );
    let renewed =
        update(Path::new(LEDGER_PATH), |ledger| ledger.upsert(row)).map_err(|e| Failure {
            code: if e.syntax().is_some() {
                crate::exit::USAGE
            } else {
                BLOCKED
            },
            error: anyhow!(e).context("cannot update the ledger"),
        })?;
    let verb = if renewed.is_some() {
        "renewed"
    } else {
        "froze"
    };
    println!("{verb} {summary} in {LEDGER_PATH}; commit it signed");
    Ok(OK)
}
