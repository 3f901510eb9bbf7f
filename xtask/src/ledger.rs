//! `xtask ledger check [--strict]`, `xtask ledger list [--expiring DAYS]` and
//! `xtask ledger lift --property ID --fixture ID`.

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{Context, anyhow};
use freezegate_canon::{FixtureId, PropertyId, Value, to_pretty_string};
use freezegate_gate::config::{CONFIG_FILE, Config, RunOverrides, Settings};
use freezegate_gate::integrity::DiskFixtures;
use freezegate_gate::run::ledger_policy;
use freezegate_ledger::{
    AllowedSigners, Checks, Error as LedgerError, LEDGER_PATH, Ledger, Listed, Policy, SCHEMA,
    SIGNERS_PATH, Timestamp, check_and_load, leftover_temporaries, list_json, list_text,
    read_bytes, update_waiting,
};

use crate::Format;
use crate::exit::{BLOCKED, Failure, OK, Outcome, write_stdout};

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
        /// Output format.
        #[arg(long, value_enum, default_value_t)]
        format: Format,
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
        Sub::Lift {
            property,
            fixture,
            format,
        } => run_lift(&property, &fixture, format),
    }
}

/// The policy the ledger is judged by: `freezegate.toml`'s when the file exists (read by
/// the gate crate, no flag or variable applied), else the SPEC defaults (7 replays, `remote`
/// only, 14 days).
///
/// A `freezegate.toml` that is there but cannot be read (a link to nothing, a folder) is an
/// error, as in the gate, not a missing file.
pub fn policy() -> Result<Policy, Failure> {
    if std::fs::symlink_metadata(CONFIG_FILE)
        .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
    {
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

/// `freeze/allowed_signers`, or `None` when the file does not exist (then nobody is allowed).
/// A link to nothing there is an error, as for the ledger, not a missing file.
pub fn signers_file() -> Result<Option<AllowedSigners>, Failure> {
    match read_bytes(Path::new(SIGNERS_PATH)) {
        Ok(Some(bytes)) => AllowedSigners::from_bytes(&bytes)
            .map(Some)
            .with_context(|| format!("{SIGNERS_PATH} is not an allowed signers file"))
            .map_err(Failure::usage),
        Ok(None) => Ok(None),
        Err(e) => Err(Failure::usage(
            anyhow!(e).context(format!("cannot read {SIGNERS_PATH}")),
        )),
    }
}

fn ledger_bytes() -> Result<Option<Vec<u8>>, Failure> {
    read_bytes(Path::new(LEDGER_PATH)).map_err(Failure::usage)
}

/// What rows are checked against: the policy of `freezegate.toml` and
/// `freeze/allowed_signers` (with a note when it is missing).
fn rule_inputs() -> Result<(Policy, AllowedSigners), Failure> {
    let signers = signers_file()?;
    if signers.is_none() {
        eprintln!("note: {SIGNERS_PATH} does not exist: no row's owner can be an allowed signer");
    }
    Ok((policy()?, signers.unwrap_or_default()))
}

fn run_check(strict: bool, now: Timestamp, format: Format) -> Outcome {
    // Not a problem of the ledger (readers ignore them), so not in the report: a warning that
    // fails nothing, since `git add -A` would commit them.
    for leftover in leftover_temporaries(Path::new(LEDGER_PATH)) {
        eprintln!(
            "warning: {} is a temporary file a killed writer left: the next write of the ledger removes it; do not commit it",
            leftover.display()
        );
    }
    let (policy, signers) = rule_inputs()?;
    let bytes = ledger_bytes()?;
    let text = bytes
        .as_deref()
        .unwrap_or(br#"{"schema": "freezegate-ledger-v1", "rows": []}"#);
    let fixtures = DiskFixtures::new(".");
    let checks = Checks::new(&policy, now, &signers, &fixtures);
    let (ledger, report) = check_and_load(text, &checks)
        .with_context(|| format!("{LEDGER_PATH} is not JSON"))
        .map_err(Failure::usage)?;
    for (path, why) in fixtures.unreadable_metas(ledger.rows()) {
        eprintln!(
            "warning: {} cannot be read, so its row's canonicalization and origin_digest are not checked against it: {why} (`xtask gate` reports it as an integrity error)",
            path.strip_prefix(".").unwrap_or(&path).display()
        );
    }
    let report = if strict { report.strict() } else { report };
    match format {
        Format::Json => write_stdout(&report.to_json(strict))?,
        Format::Text => {
            let mut out = String::new();
            for problem in &report.problems {
                out.push_str(&format!("{}\n", problem.in_file(LEDGER_PATH)));
            }
            let errors = plural(report.errors().count(), "error");
            let warnings = plural(report.warnings().count(), "warning");
            let verdict = if report.fails(strict) {
                "invalid"
            } else {
                "valid"
            };
            out.push_str(&format!("{LEDGER_PATH}: {verdict}: {errors}, {warnings}\n"));
            write_stdout(&out)?;
        }
    }
    Ok(if report.fails(strict) { BLOCKED } else { OK })
}

/// `1 error`, `2 errors`, `0 errors`.
fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// Reads the ledger: I/O and syntax errors exit 3, schema problems exit 1.
pub fn read_ledger() -> Result<Ledger, Failure> {
    let Some(bytes) = ledger_bytes()? else {
        return Ok(Ledger::new());
    };
    Ledger::from_slice(&bytes).map_err(|e| ledger_failure(e, None))
}

/// The exit code and message of a ledger that cannot be read or written. A ledger that breaks
/// the schema exits 1, with each problem printed on stderr first as its own sentence, as
/// `ledger check` prints them; anything else (not JSON, a broken link, a file that cannot be
/// read, locked or written) is bad input and exits 3, the message naming the ledger. `doing`
/// (`cannot update the ledger`) leads the message.
pub fn ledger_failure(e: LedgerError, doing: Option<&str>) -> Failure {
    if let Some(problems) = e.schema_problems() {
        for problem in problems {
            eprintln!("{}", problem.in_file(LEDGER_PATH));
        }
        let count = match problems.len() {
            1 => "1 problem".to_owned(),
            n => format!("{n} problems"),
        };
        let error = anyhow!("{LEDGER_PATH} breaks schema {SCHEMA} ({count}, listed above)");
        return Failure {
            code: BLOCKED,
            error: match doing {
                Some(doing) => error.context(doing.to_owned()),
                None => error,
            },
        };
    }
    match (doing, e.syntax()) {
        (Some(doing), _) => Failure::usage(anyhow!(e).context(doing.to_owned())),
        // A syntax error has no file of its own: name the ledger.
        (None, Some(_)) => Failure::usage(anyhow!(e).context(format!("{LEDGER_PATH} is not JSON"))),
        (None, None) => Failure::usage(e),
    }
}

fn run_list(expiring: Option<u32>, now: Timestamp, format: Format) -> Outcome {
    let ledger = read_ledger()?;
    // The rows are checked as `ledger check` checks them; a policy or signers file that
    // cannot be read leaves them unchecked, with a warning, since the listing is still true.
    let broken = if ledger.rows().is_empty() {
        None
    } else {
        match rule_inputs() {
            Ok((policy, signers)) => Some(ledger.broken_rules(&Checks::new(
                &policy,
                now,
                &signers,
                &DiskFixtures::new("."),
            ))),
            Err(failure) => {
                eprintln!(
                    "warning: the rows are listed unchecked against the rules: {}",
                    freezegate_canon::ErrorChain(&*failure.error)
                );
                None
            }
        }
    };
    let rows: Vec<Listed> = ledger
        .rows()
        .iter()
        .enumerate()
        .filter(|(_, row)| expiring.is_none_or(|days| row.expires_within(now, days)))
        .map(|(at, row)| match broken.as_ref().and_then(|b| b.get(at)) {
            Some(rules) => Listed::new(row, rules),
            None => Listed::unchecked(row),
        })
        .collect();
    let breaking = rows.iter().filter(|r| !r.broken.is_empty()).count();
    if breaking > 0 {
        eprintln!(
            "note: {breaking} of these rows {} rules and freeze{} nothing (`ledger check` says where)",
            if breaking == 1 { "breaks" } else { "break" },
            if breaking == 1 { "s" } else { "" }
        );
    }
    match (format, expiring) {
        // Rows there, none within the window: not "no freeze rows".
        (Format::Text, Some(days)) if rows.is_empty() && !ledger.rows().is_empty() => {
            let all = ledger.rows().len();
            write_stdout(&format!(
                "no freeze rows expire within {days} day{} ({all} row{} in all)\n",
                if days == 1 { "" } else { "s" },
                if all == 1 { "" } else { "s" }
            ))?
        }
        (Format::Text, _) => write_stdout(&list_text(rows, now))?,
        (Format::Json, _) => write_stdout(&list_json(rows, now))?,
    }
    Ok(OK)
}

fn run_lift(property: &str, fixture: &str, format: Format) -> Outcome {
    let property: PropertyId = property
        .parse()
        .with_context(|| format!("invalid --property {property:?}"))
        .map_err(Failure::usage)?;
    let fixture: FixtureId = fixture
        .parse()
        .with_context(|| format!("invalid --fixture {fixture:?}"))
        .map_err(Failure::usage)?;
    // No ledger, no row: said without taking the writers' lock, which would create
    // `freeze/` and its lock file in a repository that has neither.
    let there = read_bytes(Path::new(LEDGER_PATH))
        .map_err(|e| ledger_failure(e, Some("cannot update the ledger")))?;
    let lifted = if there.is_none() {
        Vec::new()
    } else {
        update_ledger(|ledger| ledger.lift(&property, fixture))
            .map_err(|e| ledger_failure(e, Some("cannot update the ledger")))?
    };
    if lifted.is_empty() {
        return Err(Failure::usage(anyhow!(
            "{LEDGER_PATH} has no row for fixture {fixture} of property {property}"
        )));
    }
    for row in &lifted {
        eprintln!(
            "lifted {} {} seed {} {} (owner {})",
            row.property_id,
            row.fixture_id,
            row.seed,
            row.env_class,
            freezegate_ledger::shown(&row.owner)
        );
    }
    match format {
        Format::Text => write_stdout(&format!(
            "lifted {} from {LEDGER_PATH}; commit the change signed\n",
            if lifted.len() == 1 {
                "1 row".to_owned()
            } else {
                format!("{} rows", lifted.len())
            }
        ))?,
        Format::Json => {
            let rows = lifted.iter().map(|row| row.to_value()).collect();
            let document = Value::Object(vec![
                (
                    "schema".into(),
                    Value::String(freezegate_ledger::LIFT_SCHEMA.into()),
                ),
                ("lifted".into(), Value::Array(rows)),
            ]);
            write_stdout(&to_pretty_string(&document))?;
        }
    }
    Ok(OK)
}

/// After how long a writer waiting for the lock says so.
const WAIT_NOTE_AFTER: Duration = Duration::from_secs(1);

/// Changes `freeze/ledger.json` under the writers' lock ([`update_waiting`]); when another
/// writer has held the lock for about a second, says once on stderr what this one waits for.
pub fn update_ledger<T>(change: impl FnOnce(&mut Ledger) -> T) -> Result<T, LedgerError> {
    update_waiting(Path::new(LEDGER_PATH), WaitNote::start, change)
}

/// The timer behind the waiting line: a thread that prints it unless the lock is held first.
pub(crate) struct WaitNote {
    done: Option<mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl WaitNote {
    pub(crate) fn start(lock: &Path) -> WaitNote {
        let (done, wait) = mpsc::channel::<()>();
        let lock = lock.display().to_string();
        let thread = std::thread::spawn(move || {
            if wait.recv_timeout(WAIT_NOTE_AFTER) == Err(mpsc::RecvTimeoutError::Timeout) {
                eprintln!("waiting for {lock}, held by another writer");
            }
        });
        WaitNote {
            done: Some(done),
            thread: Some(thread),
        }
    }
}

impl Drop for WaitNote {
    fn drop(&mut self) {
        // Dropping the sender wakes the timer; joining it keeps its line before what follows.
        drop(self.done.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
