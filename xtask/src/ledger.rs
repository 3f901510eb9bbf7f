//! `xtask ledger check [--strict]`, `xtask ledger list [--expiring DAYS]` and
//! `xtask ledger lift --property ID --fixture ID`.

use std::path::Path;

use anyhow::{Context, anyhow};
use freezegate_canon::fixture::fixture_path;
use freezegate_canon::{FixtureId, PropertyId};
use freezegate_gate::config::{CONFIG_FILE, Config, RunOverrides, Settings};
use freezegate_gate::run::ledger_policy;
use freezegate_ledger::{
    AllowedSigners, Checks, FixtureFile, LEDGER_PATH, Ledger, Policy, SIGNERS_PATH, Timestamp,
    check, list_json, list_text, read_bytes, update,
};

use crate::Format;
use crate::exit::{BLOCKED, Failure, OK, Outcome};

/// Arguments of `xtask ledger`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Sub,
}

#[derive(Debug, clap::Subcommand)]
enum Sub {
    /// Validate freeze/ledger.json against the fixtures, signers and policy; print every problem.
    Check {
        /// Expired rows fail the check too (otherwise they are warnings).
        #[arg(long)]
        strict: bool,
        /// The time to judge expiry by (RFC 3339) [default: the clock].
        #[arg(long, value_name = "RFC3339")]
        now: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// List the freeze rows: property, fixture, owner, env class, expiry.
    List {
        /// Only rows that expire within DAYS days (expired ones included).
        #[arg(long, value_name = "DAYS")]
        expiring: Option<u32>,
        /// The time to judge expiry by (RFC 3339) [default: the clock].
        #[arg(long, value_name = "RFC3339")]
        now: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// Remove every row of one property's fixture (commit the change signed).
    Lift {
        /// The property id.
        #[arg(long, value_name = "ID")]
        property: String,
        /// The fixture id (16 hex).
        #[arg(long, value_name = "ID")]
        fixture: String,
    },
}

/// Runs `xtask ledger`.
pub fn run(args: Args) -> Outcome {
    match args.command {
        Sub::Check {
            strict,
            now,
            format,
        } => run_check(strict, crate::gate::now(now.as_deref())?, format),
        Sub::List {
            expiring,
            now,
            format,
        } => run_list(expiring, crate::gate::now(now.as_deref())?, format),
        Sub::Lift { property, fixture } => run_lift(&property, &fixture),
    }
}

/// The policy the ledger is judged by: `freezegate.toml`'s when the file exists (read by
/// the gate crate, no flag or variable applied), else the SPEC defaults (7 replays, `remote`
/// only, 14 days).
pub fn policy() -> Result<Policy, Failure> {
    if !Path::new(CONFIG_FILE).exists() {
        return Ok(Policy::default());
    }
    Ok(ledger_policy(&file_settings()?))
}

/// The settings of `freezegate.toml` alone: no environment variable or flag overrides them.
pub fn file_settings() -> Result<Settings, Failure> {
    let config = Config::load(Path::new(".")).map_err(Failure::usage)?;
    Settings::resolve(config, &RunOverrides::default(), 1)
        .map_err(|e| Failure::usage(anyhow!("{CONFIG_FILE}: {e}")))
}

/// `freeze/allowed_signers`; a missing file allows nobody.
pub fn signers() -> Result<AllowedSigners, Failure> {
    match std::fs::read_to_string(SIGNERS_PATH) {
        Ok(text) => AllowedSigners::parse(&text)
            .with_context(|| format!("{SIGNERS_PATH} is not an allowed signers file"))
            .map_err(Failure::usage),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(AllowedSigners::default()),
        Err(e) => Err(Failure::usage(
            anyhow!(e).context(format!("cannot read {SIGNERS_PATH}")),
        )),
    }
}

/// Reads fixture files from `fixtures/<property>/<id>.json` under the current directory.
fn fixture_file(property: &PropertyId, id: FixtureId) -> FixtureFile {
    let path = fixture_path(Path::new("."), property, id);
    match std::fs::read(&path) {
        Ok(bytes) => FixtureFile::Found(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => FixtureFile::Missing,
        Err(e) => FixtureFile::Unreadable(format!("{}: {e}", path.display())),
    }
}

fn ledger_bytes() -> Result<Option<Vec<u8>>, Failure> {
    read_bytes(Path::new(LEDGER_PATH)).map_err(Failure::usage)
}

fn run_check(strict: bool, now: Timestamp, format: Format) -> Outcome {
    let signers = signers()?;
    let bytes = ledger_bytes()?;
    let text = bytes
        .as_deref()
        .unwrap_or(br#"{"schema": "freezegate-ledger-v1", "rows": []}"#);
    let policy = policy()?;
    let checks = Checks {
        policy: &policy,
        now,
        signers: &signers,
        fixtures: &fixture_file,
    };
    let report = check(text, &checks)
        .with_context(|| format!("{LEDGER_PATH} is not JSON"))
        .map_err(Failure::usage)?;
    match format {
        Format::Json => print!("{}", report.to_json(strict)),
        Format::Text => {
            for problem in &report.problems {
                println!("{}", problem.in_file(LEDGER_PATH));
            }
            let errors = report.errors().count();
            let warnings = report.warnings().count();
            let verdict = if report.fails(strict) {
                "invalid"
            } else {
                "valid"
            };
            println!("{LEDGER_PATH}: {verdict}: {errors} errors, {warnings} warnings");
        }
    }
    Ok(if report.fails(strict) { BLOCKED } else { OK })
}

/// Reads the ledger: syntax errors exit 3, schema problems exit 1 (`ledger check` lists them).
fn read_ledger() -> Result<Ledger, Failure> {
    let Some(bytes) = ledger_bytes()? else {
        return Ok(Ledger::new());
    };
    Ledger::from_slice(&bytes).map_err(|e| {
        let code = if e.syntax().is_some() {
            crate::exit::USAGE
        } else {
            BLOCKED
        };
        Failure {
            code,
            error: anyhow!(e).context(LEDGER_PATH),
        }
    })
}

fn run_list(expiring: Option<u32>, now: Timestamp, format: Format) -> Outcome {
    let ledger = read_ledger()?;
    let rows: Vec<_> = match expiring {
        Some(days) => ledger.expiring(now, days).collect(),
        None => ledger.rows().iter().collect(),
    };
    match format {
        Format::Text => print!("{}", list_text(rows, now)),
        Format::Json => print!("{}", list_json(rows, now)),
    }
    Ok(OK)
}

fn run_lift(property: &str, fixture: &str) -> Outcome {
    let property: PropertyId = property
        .parse()
        .with_context(|| format!("invalid --property {property:?}"))
        .map_err(Failure::usage)?;
    let fixture: FixtureId = fixture
        .parse()
        .with_context(|| format!("invalid --fixture {fixture:?}"))
        .map_err(Failure::usage)?;
    let lifted = update(Path::new(LEDGER_PATH), |ledger| {
        ledger.lift(&property, fixture)
    })
    .map_err(|e| {
        let code = if e.syntax().is_some() {
            crate::exit::USAGE
        } else {
            BLOCKED
        };
        Failure {
            code,
            error: anyhow!(e).context("cannot update the ledger"),
        }
    })?;
    if lifted.is_empty() {
        return Err(Failure::usage(anyhow!(
            "{LEDGER_PATH} has no row for fixture {fixture} of property {property}"
        )));
    }
    for row in &lifted {
        eprintln!(
            "lifted {} {} seed {} {} (owner {})",
            row.property_id, row.fixture_id, row.seed, row.env_class, row.owner
        );
    }
    println!(
        "lifted {} row(s) from {LEDGER_PATH}; commit the change signed",
        lifted.len()
    );
    Ok(OK)
}
