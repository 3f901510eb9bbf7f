//! Freezing a flicker (SPEC §7, §8 `freeze`), for any program: `xtask freeze` is [`freeze`]
//! and a printer, and a Rust project's own xtask, whose binary serves its Rust properties,
//! calls the same function.
//!
//! [`freeze`] replays a pinned fixture N times now, with the oracle, seed, replay count and
//! deadline of `freezegate.toml` alone — no flag or variable changes them for a freeze, so
//! [`Ask::overrides`] is read for where the run happens (env class, runner id) and for
//! nothing else — then writes (or renews) the fixture's ledger row under the writers' lock,
//! or refuses. Bad input of any kind is an error found before any oracle runs: the
//! configuration, the fixture and its meta file (the shrink path included), the ledger and
//! whether it can be written, the signers file. What no replay can change (an env class
//! the policy does not allow, an owner who is no signer, an expiry past the policy's, a row
//! the ledger would hold twice) is refused before the replays too.
//!
//! ```no_run
//! use std::path::Path;
//! use freezegate_gate::config::RunOverrides;
//! use freezegate_gate::freeze::{Ask, freeze};
//! use freezegate_gate::rust_prop::Registry;
//! use freezegate_gate::{Timestamp, run};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let root = Path::new(".");
//! let registry = Registry::new(); // the project's Rust properties, as its gate registers them
//! let ask = Ask {
//!     property: "tax.cached_total_equals_fresh_sum".parse()?,
//!     fixture: "b39022c4ed96525c".parse()?,
//!     owner: "alice@example.com".to_owned(),
//!     reason: "the cache is warmed by a timer thread".to_owned(),
//!     expires_in_days: 7,
//!     patch_id: run::head_commit(root).ok_or("no HEAD")?,
//!     now: run::clock_now(),
//!     // ENV_CLASS and RUNNER_ID; REPLAYS and PROP_SEED would be ignored here.
//!     overrides: RunOverrides::from_env(|k| std::env::var(k).ok()),
//! };
//! let frozen = freeze(root, &registry, None, ask, |_labels| (), |_lock| ())?;
//! println!("{}", frozen.outcome.line());
//! # Ok(())
//! # }
//! ```

use std::path::{Path, PathBuf};
use std::time::Duration;

use freezegate_canon::fixture::{meta_path, read_fixture, read_meta};
use freezegate_canon::{FixtureId, PropertyId};
use freezegate_ledger::{
    AllowedSigners, EnvClass, FreezeOutcome, FreezeRequest, LEDGER_PATH, Ledger, Refusal,
    SIGNERS_PATH, Timestamp, check_writable, freeze_row, precheck, renewable,
};
use freezegate_replay::{Label, ReplayOptions, ReplayPlan, replay};

use crate::config::{CONFIG_FILE, Config, RunOverrides, Settings};
use crate::oracles::PropertyOracles;
use crate::run::{ledger_policy, oracle_source};
use crate::rust_prop::Registry;

/// What a freeze is asked for: the fixture, who vouches for its row and why, for how long,
/// and where the replays run.
#[derive(Debug, Clone)]
pub struct Ask {
    /// The property (listed in `freezegate.toml`).
    pub property: PropertyId,
    /// The pinned fixture; its meta file must exist.
    pub fixture: FixtureId,
    /// The human who vouches for the row: a principal of `freeze/allowed_signers`.
    pub owner: String,
    /// The named cause of non-determinism.
    pub reason: String,
    /// Days until the row expires (at most the policy's `max_freeze_days`).
    pub expires_in_days: u32,
    /// The candidate under test ([`crate::run::head_commit`] for HEAD's commit).
    pub patch_id: String,
    /// The time of the freeze.
    pub now: Timestamp,
    /// Where the run happens: `env_class`, `env_runner_id`, `flag_env_class` and
    /// `flag_runner_id` are read, as `gate` reads them; the rest (seed, replays, deadline,
    /// jobs) is not, since a freeze takes those from `freezegate.toml` alone.
    pub overrides: RunOverrides,
}

/// What a freeze did.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Frozen {
    /// The request the rules judged (the meta file, the file's seed, this runner).
    pub request: FreezeRequest,
    /// The labels of the replays, in run order; empty when a rule refused before them.
    pub labels: Vec<Label>,
    /// The row written (or renewed), or the refusal.
    pub outcome: FreezeOutcome,
}

/// Why a freeze could not be judged: bad input, found before any oracle runs (or a ledger
/// that could not be written after them). A refusal by a rule is not an error: it is
/// [`Frozen::outcome`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FreezeError {
    /// There is no `freezegate.toml` under the root.
    #[error(
        "there is no {CONFIG_FILE}: a freeze replays the fixture with the property's oracle, seed, replay count and deadline from that file"
    )]
    NoConfig,
    /// `freezegate.toml` cannot be read or breaks a rule, or the property has nothing to run.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// The settings of `freezegate.toml` do not resolve.
    #[error("{CONFIG_FILE}")]
    Settings(#[source] crate::config::SettingsError),
    /// Where the run happens (env class, runner id) does not resolve.
    #[error(transparent)]
    Runner(crate::config::SettingsError),
    /// The property is not in `freezegate.toml`.
    #[error("property {0} is not in {CONFIG_FILE}")]
    UnknownProperty(PropertyId),
    /// The property's oracle cannot be set up.
    #[error(transparent)]
    Oracle(#[from] crate::oracles::OracleError),
    /// The fixture has no meta file.
    #[error(
        "{} does not exist: pin the fixture with `xtask classify` first; a freeze needs its meta file",
        path.display()
    )]
    NoMeta {
        /// The meta file looked for.
        path: PathBuf,
    },
    /// The fixture's folder cannot be read.
    #[error("cannot read {}", path.display())]
    Folder {
        /// The meta file looked for.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The fixture, its origin or its meta file is unreadable or inconsistent.
    #[error(transparent)]
    Fixture(#[from] freezegate_canon::Error),
    /// The ledger cannot be read, or breaks its schema.
    #[error(transparent)]
    ReadLedger(freezegate_ledger::Error),
    /// The ledger cannot be written.
    #[error("cannot update the ledger")]
    UpdateLedger(#[source] freezegate_ledger::Error),
    /// `freeze/allowed_signers` cannot be read.
    #[error("cannot read {SIGNERS_PATH}")]
    ReadSigners(#[source] freezegate_ledger::Error),
    /// `freeze/allowed_signers` is not an allowed signers file.
    #[error("{SIGNERS_PATH} is not an allowed signers file")]
    Signers(#[source] freezegate_ledger::Error),
    /// The replay count cannot be planned.
    #[error(transparent)]
    Plan(#[from] freezegate_replay::PlanError),
}

/// `rel` under `root`, named without a leading `./` when the root is the current directory,
/// so that messages name `freeze/ledger.json` as the user knows it.
fn under(root: &Path, rel: &str) -> PathBuf {
    if root.as_os_str().is_empty() || root == Path::new(".") {
        PathBuf::from(rel)
    } else {
        root.join(rel)
    }
}

/// Replays the pinned fixture `ask` names and writes its freeze row, or refuses (see the
/// module docs). `registry` and `rust_runner` serve a Rust property (one without an
/// `oracle`): through `rust_runner`, a build of the tree under test, when given, else
/// through this program. `replayed` is called with the replays' labels as soon as they are
/// known, before the ledger is written (a command line prints them, so that they are not lost
/// when the write fails or waits). `waiting` is called with the lock file's path when another
/// writer holds the ledger's lock, and what it returns is dropped once the lock is held (a
/// command line can say after a while what it waits for).
pub fn freeze<W>(
    root: &Path,
    registry: &Registry,
    rust_runner: Option<&Path>,
    ask: Ask,
    replayed: impl FnOnce(&[Label]),
    waiting: impl FnOnce(&Path) -> W,
) -> Result<Frozen, FreezeError> {
    if !under(root, CONFIG_FILE).exists() {
        return Err(FreezeError::NoConfig);
    }
    let config = Config::load(root)?;
    let settings = Settings::resolve(config.clone(), &RunOverrides::default(), 1)
        .map_err(FreezeError::Settings)?;
    // A property with nothing to run is a configuration error, as in `gate`.
    config.check_oracle_of(ask.property.as_str(), |id| {
        rust_runner.is_some() || registry.contains(id)
    })?;
    let property = config
        .property(ask.property.as_str())
        .ok_or_else(|| FreezeError::UnknownProperty(ask.property.clone()))?;
    let exe = std::env::current_exe().ok();
    let source = oracle_source(property, registry, exe.as_deref(), rust_runner)?;
    // Its fresh-process oracle, as the gate's replays run it (a Rust property's exit 0 counts
    // only with the harness's `pass` line). Relative to the current directory, as the files
    // are, when `root` is.
    let oracle = PropertyOracles::new(property, &source, root)?.fresh;
    let policy = ledger_policy(&settings);

    let meta_file = meta_path(&under(root, ""), &ask.property, ask.fixture);
    // `try_exists`, not `exists`: a folder that cannot be read is its own error, not "pin the
    // fixture first".
    let there = meta_file
        .try_exists()
        .map_err(|source| FreezeError::Folder {
            path: meta_file.clone(),
            source,
        })?;
    if !there {
        return Err(FreezeError::NoMeta { path: meta_file });
    }
    let fixtures = under(root, "");
    let meta = read_meta(&fixtures, &ask.property, ask.fixture)?;
    let (canonical, _) = read_fixture(&fixtures, &ask.property, ask.fixture)?;
    // The meta file must match its fixture, shrink path included (SPEC §3, §5).
    crate::integrity::check_shrink_path(&fixtures, &meta)?;

    let ledger_file = under(root, LEDGER_PATH);
    let ledger = match freezegate_ledger::read_bytes(&ledger_file) {
        Ok(Some(bytes)) => Ledger::from_slice(&bytes).map_err(FreezeError::ReadLedger)?,
        Ok(None) => Ledger::new(),
        Err(e) => return Err(FreezeError::ReadLedger(e)),
    };
    // A ledger that cannot be written is found now, not after the replays.
    check_writable(&ledger_file).map_err(FreezeError::UpdateLedger)?;
    let signers = match freezegate_ledger::read_bytes(&under(root, SIGNERS_PATH)) {
        Ok(Some(bytes)) => Some(AllowedSigners::from_bytes(&bytes).map_err(FreezeError::Signers)?),
        Ok(None) => None,
        Err(e) => return Err(FreezeError::ReadSigners(e)),
    };
    let (env_class, runner_id) = runner(&config, &ask.overrides)?;
    let request = FreezeRequest {
        meta,
        seed: settings.seed,
        env_class,
        runner_id,
        owner: ask.owner,
        reason: ask.reason,
        patch_id: ask.patch_id,
        expires_in_days: ask.expires_in_days,
        now: ask.now,
    };
    let refused = |request: FreezeRequest, labels: Vec<Label>, refusal: Refusal| Frozen {
        request,
        labels,
        outcome: FreezeOutcome::Refused(refusal),
    };
    let Some(signers) = signers else {
        return Ok(refused(request, Vec::new(), Refusal::NoSigners));
    };
    // Refuse what no replay can change before running the oracle.
    if let Err(refusal) =
        precheck(&request, &policy, &signers).and_then(|()| renewable(&ledger, &request.key()))
    {
        return Ok(refused(request, Vec::new(), refusal));
    }

    let plan = ReplayPlan::new(policy.replays_for(&ask.property), settings.seed)?;
    let options = ReplayOptions::default()
        .with_timeout(Duration::from_millis(settings.timeout_ms_for(property)))
        .with_property_id(ask.property.to_string());
    let labels = replay(&*oracle, canonical.bytes(), &plan, &options).labels();
    // A stopping signal during the replays ends the process from the signal's thread
    // ([`crate::process`]): write no row after it, even from runs it did not kill.
    crate::process::park_if_stopping();
    replayed(&labels);
    let row = match freeze_row(&request, &labels, &policy, &signers) {
        Ok(row) => row,
        Err(refusal) => return Ok(refused(request, labels, refusal)),
    };
    let written = row.clone();
    // Asked again under the lock: another writer may have changed the ledger meanwhile.
    let renewed = freezegate_ledger::update_waiting(&ledger_file, waiting, |ledger| {
        renewable(ledger, &row.key()).map(|()| ledger.upsert(row))
    })
    .map_err(FreezeError::UpdateLedger)?;
    Ok(match renewed {
        Ok(renewed) => Frozen {
            request,
            labels,
            outcome: FreezeOutcome::Written {
                row: Box::new(written),
                renewed: renewed.is_some(),
            },
        },
        Err(refusal) => refused(request, labels, refusal),
    })
}

/// The env class and runner id of `overrides` over `config`, resolved and checked as `gate`
/// resolves them, with nothing else of the overrides.
fn runner(config: &Config, overrides: &RunOverrides) -> Result<(EnvClass, String), FreezeError> {
    let only = RunOverrides {
        env_class: overrides.env_class.clone(),
        env_runner_id: overrides.env_runner_id.clone(),
        flag_env_class: overrides.flag_env_class.clone(),
        flag_runner_id: overrides.flag_runner_id.clone(),
        ..RunOverrides::default()
    };
    let settings = Settings::resolve(config.clone(), &only, 1).map_err(FreezeError::Runner)?;
    Ok((settings.env_class, settings.runner_id))
}
