//! The gate itself (SPEC §9 steps 1 and 3-5): validate, replay every pinned fixture, run
//! the campaigns, decide.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use freezegate_canon::fixture::{self, FIXTURES_DIR};
use freezegate_canon::{ErrorChain, FixtureId, PropertyId, Value};
use freezegate_ledger::{AllowedSigners, Checks, EnvClass, Ledger, Seed, Severity, Timestamp};
use freezegate_replay::{CommandEnd, Label, RunContext, Verdict, verdict};

use crate::classify::{self, Action, Plan};
use crate::config::{Property, Settings};
use crate::oracles::{Job, OracleSource, PropertyOracles, labels, replay_contexts, run_parallel};
use crate::report::{
    CampaignResult, CampaignStatus, Decision, Finding, FindingKind, FixtureResult, FixtureStatus,
    FreezeInfo, Outcome, PropertySettings, REPORT_FORMAT, Report, SettingsView, Summary,
};
use crate::rust_prop::Registry;

/// The ledger's path relative to the root.
pub const LEDGER_FILE: &str = "freeze/ledger.json";
/// The allowed signers' path relative to the root.
pub const SIGNERS_FILE: &str = "freeze/allowed_signers";

/// Default budget of the gate's and `classify`'s classify loop, in oracle calls before the
/// replays, the first run on the failing input included.
pub const DEFAULT_MAX_SHRINK_CALLS: u64 = 5_000;

/// What the gate reports while it works (for progress bars and narration).
pub trait Progress: Sync {
    /// A phase starts, with the number of runs it will make (0 when unknown).
    fn phase(&self, name: &str, total: usize);
    /// `done` runs of the current phase have finished.
    fn tick(&self, done: usize);
    /// The run's effective settings, once they are known (the ledger read) and before any
    /// oracle runs: the report's own [`Report::settings`](crate::report::Report), given
    /// early so that a log shows them first, also of a run that hangs or is stopped (SPEC §9).
    /// [`run`] calls it exactly once for every report it returns.
    fn settings(&self, view: &SettingsView) {
        let _ = view;
    }
}

/// A [`Progress`] that reports nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Quiet;

impl Progress for Quiet {
    fn phase(&self, _: &str, _: usize) {}
    fn tick(&self, _: usize) {}
}

/// Everything a gate run needs besides the settings: [`Context::new`], then the `with_`
/// methods (the struct may gain fields, so it is not built by a struct expression outside
/// this crate).
#[non_exhaustive]
pub struct Context<'a> {
    /// The repository root.
    pub root: PathBuf,
    /// The clock reading to judge freeze rows against.
    pub now: Timestamp,
    /// Rust properties registered in code.
    pub registry: &'a Registry,
    /// The binary that serves the Rust properties' hidden subcommand (the xtask itself).
    pub exe: Option<PathBuf>,
    /// A binary built from the tree under test that serves the hidden subcommand in place of
    /// this process (`gate --rust-runner`). When set, every property without an `oracle` is
    /// a Rust property of that binary: its campaign inputs come from the binary
    /// ([`crate::rust_prop::GENERATE_ENV`]) and every run executes it, and `registry` and
    /// `exe` are not used for them. A gate built from the base revision (`--base`, as
    /// docs/threat-model.md asks) needs it, or its Rust properties run the base's code, not
    /// the patch's.
    pub rust_runner: Option<PathBuf>,
    /// `patch_id` of fixtures the campaigns pin (default: the full SHA of HEAD).
    pub patch_id: String,
    /// The budget of each failing case's classify loop, in oracle calls (its first run
    /// included, see [`classify::Plan::max_calls`]).
    pub max_shrink_calls: u64,
    /// Progress sink.
    pub progress: &'a dyn Progress,
}

impl<'a> Context<'a> {
    /// A run in the repository at `root` with the Rust properties of `registry`, pinning
    /// fixtures for the candidate `patch_id` (a commit or pull request id; see
    /// [`head_commit`]). The rest is the default: `now` from [`clock_now`], `exe` this
    /// process's binary (which must serve [`crate::rust_prop::PROPERTY_SUBCOMMAND`] when there
    /// are Rust properties), no `rust_runner`, [`DEFAULT_MAX_SHRINK_CALLS`], no progress.
    pub fn new(root: PathBuf, registry: &'a Registry, patch_id: String) -> Context<'a> {
        Context {
            root,
            now: clock_now(),
            registry,
            exe: std::env::current_exe().ok(),
            rust_runner: None,
            patch_id,
            max_shrink_calls: DEFAULT_MAX_SHRINK_CALLS,
            progress: &Quiet,
        }
    }

    /// This context judging freeze rows, and dating pins, at `now`.
    #[must_use]
    pub fn with_now(mut self, now: Timestamp) -> Context<'a> {
        self.now = now;
        self
    }

    /// This context with `exe` as the binary that serves the Rust properties' hidden
    /// subcommand (`None`: nothing does).
    #[must_use]
    pub fn with_exe(mut self, exe: Option<PathBuf>) -> Context<'a> {
        self.exe = exe;
        self
    }

    /// This context running every property without an `oracle` through `runner`, a build of
    /// the tree under test (see [`Context::rust_runner`]).
    #[must_use]
    pub fn with_rust_runner(mut self, runner: Option<PathBuf>) -> Context<'a> {
        self.rust_runner = runner;
        self
    }

    /// This context with a classify budget of `calls` oracle calls per failing case.
    #[must_use]
    pub fn with_max_shrink_calls(mut self, calls: u64) -> Context<'a> {
        self.max_shrink_calls = calls;
        self
    }

    /// This context reporting progress to `progress`.
    #[must_use]
    pub fn with_progress(mut self, progress: &'a dyn Progress) -> Context<'a> {
        self.progress = progress;
        self
    }
}

/// A problem that stops the gate before it can decide (exit 3).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GateError {
    /// The ledger is empty, truncated or not JSON.
    #[error("{path}: the ledger is not valid JSON")]
    LedgerSyntax {
        /// The ledger's path.
        path: String,
        /// Line and column.
        #[source]
        source: freezegate_canon::ParseError,
    },
    /// A file could not be read.
    #[error("cannot read {path}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// `freezegate.toml` breaks a rule only the run can see: a property with nothing to run
    /// (no `oracle`, and no Rust property of its id in the registry).
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// Settings changed after [`Settings::resolve`] to what it never gives.
    #[error(transparent)]
    Settings(#[from] crate::config::SettingsError),
    /// A property cannot be run.
    #[error(transparent)]
    Oracle(#[from] crate::oracles::OracleError),
    /// `allowed_signers` does not parse.
    #[error("{path}: invalid allowed signers file")]
    Signers {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: freezegate_ledger::Error,
    },
    /// A Rust property's inputs could not be generated.
    #[error(transparent)]
    Generate(#[from] crate::rust_prop::RegistryError),
    /// The Rust runner (`gate --rust-runner`) does not register a property that
    /// `freezegate.toml` names without an `oracle`.
    #[error("no Rust property {id} is registered by the Rust runner {runner}{}", detail.as_deref().map(|d| format!(" (it printed: {d})")).unwrap_or_default())]
    RunnerUnknown {
        /// The property.
        id: String,
        /// The runner binary.
        runner: String,
        /// The runner's last stderr line, when it wrote one.
        detail: Option<String>,
    },
}

/// The full SHA of `HEAD` in `root`; `None` outside a git repository or before the first
/// commit.
pub fn head_commit(root: &Path) -> Option<String> {
    std::process::Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["rev-parse", "HEAD"])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
}

/// The oracle source of a property: its command; else, for a Rust property, `runner` (a
/// build of the tree under test, `--rust-runner`) when given, whatever this binary registers,
/// or this binary `exe` when it registers the property. (A property with none of them is
/// refused, at its place in the file, by [`crate::config::Config::check_oracles`], which
/// [`run`] calls first.)
pub fn oracle_source(
    property: &Property,
    registry: &Registry,
    exe: Option<&Path>,
    runner: Option<&Path>,
) -> Result<OracleSource, crate::oracles::OracleError> {
    let registered = registry.contains(property.id.as_str());
    match (&property.oracle, exe) {
        (Some(cmd), _) => Ok(OracleSource::Command(cmd.clone())),
        (None, _) if let Some(runner) = runner => Ok(OracleSource::Rust {
            exe: runner.to_path_buf(),
        }),
        (None, Some(exe)) if registered => Ok(OracleSource::Rust {
            exe: exe.to_path_buf(),
        }),
        (None, None) if registered => Err(crate::oracles::OracleError::NoBinary(
            property.id.to_string(),
        )),
        (None, _) => Err(crate::oracles::OracleError::Missing(
            property.id.to_string(),
        )),
    }
}

/// The ledger, its rows' validation and the signers, read once.
pub struct LedgerState {
    /// The rows that parse (all rows when the ledger is valid).
    pub ledger: Ledger,
    /// The rows that parse and break no rule (warnings such as `expired` aside): the only
    /// rows that may freeze a flicker. A row that breaks a rule is reported and freezes
    /// nothing.
    pub valid: Ledger,
    /// Validation findings.
    pub findings: Vec<Finding>,
    /// `(property_id, fixture_id)` as written in each row that breaks a rule, loaded or not
    /// (a row with a field of the wrong shape is not loaded at all): a flicker such a row
    /// names is told why it is not frozen.
    pub broken: BTreeSet<(String, String)>,
}

/// The bytes of the gate's own file `name` (the ledger, `allowed_signers`) under `root`, or
/// `None` when it does not exist, read as the ledger crate reads the ledger: a link to nothing
/// (the file or its folder) is an error, not a missing file, which would pass as an empty
/// one, and so is anything but a regular file.
fn read_own_file(root: &Path, name: &str) -> Result<Option<Vec<u8>>, GateError> {
    match freezegate_ledger::read_bytes(&root.join(name)) {
        Ok(bytes) => Ok(bytes),
        Err(freezegate_ledger::Error::BrokenLink { path, target }) => Err(GateError::Io {
            path: path
                .strip_prefix(root)
                .unwrap_or(&path)
                .display()
                .to_string(),
            source: std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!(
                    "it is a symbolic link to {}, which does not exist",
                    target.display()
                ),
            ),
        }),
        Err(freezegate_ledger::Error::Io { source, .. }) => Err(GateError::Io {
            path: name.into(),
            source,
        }),
        Err(other) => Err(GateError::Io {
            path: name.into(),
            source: std::io::Error::other(other.to_string()),
        }),
    }
}

/// Reads and validates the ledger against the policy, the signers and the fixtures on disk.
pub fn load_ledger(
    root: &Path,
    settings: &Settings,
    now: Timestamp,
) -> Result<LedgerState, GateError> {
    let signers = match read_own_file(root, SIGNERS_FILE)? {
        Some(bytes) => AllowedSigners::from_bytes(&bytes).map_err(|source| GateError::Signers {
            path: SIGNERS_FILE.into(),
            source,
        })?,
        None => AllowedSigners::default(),
    };
    let policy = ledger_policy(settings);
    let Some(bytes) = read_own_file(root, LEDGER_FILE)? else {
        return Ok(LedgerState {
            ledger: Ledger::new(),
            valid: Ledger::new(),
            findings: Vec::new(),
            broken: BTreeSet::new(),
        });
    };
    let lookup = crate::integrity::DiskFixtures::new(root);
    let checks = Checks::new(&policy, now, &signers, &lookup);
    // One parse: the problems, and the rows that passed the schema for lookups (a row that
    // breaks a rule is reported and blocks, but does not hide the others).
    let (ledger, report) =
        freezegate_ledger::check_and_load(&bytes, &checks).map_err(|source| {
            GateError::LedgerSyntax {
                path: LEDGER_FILE.into(),
                source,
            }
        })?;
    let findings = report
        .problems
        .iter()
        .map(|p| Finding {
            kind: FindingKind::Ledger,
            blocking: p.severity == Severity::Error,
            file: Some(LEDGER_FILE.into()),
            line: p.at.map(|at| at.line as u64),
            column: p.at.map(|at| at.column as u64),
            rule: format!("ledger.{}", p.rule.as_str()),
            message: p.describe(),
        })
        .collect();
    // The problems above point into the file's rows; checking the loaded rows again gives
    // problems indexed by the loaded (sorted) rows, so the rows with an error can be left
    // out of the lookups. A ledger without errors (the usual case) needs no second check,
    // and so no second read of every fixture it names.
    let invalid: BTreeSet<usize> = if report.errors().next().is_none() {
        BTreeSet::new()
    } else {
        ledger
            .check(&checks)
            .problems
            .iter()
            .filter(|p| p.severity == Severity::Error)
            .filter_map(|p| p.row)
            .collect()
    };
    let valid = Ledger::from_rows(
        ledger
            .rows()
            .iter()
            .enumerate()
            .filter(|(i, _)| !invalid.contains(i))
            .map(|(_, r)| r.clone())
            .collect(),
    );
    let broken = broken_rows(&bytes, &report);
    Ok(LedgerState {
        ledger,
        valid,
        findings,
        broken,
    })
}

/// `(property_id, fixture_id)`, as written, of every row with an error: the rows that
/// freeze nothing. Read from the text, since a row with a field of the wrong shape is not
/// among the loaded rows; only when there are errors, so a good ledger is read once.
fn broken_rows(bytes: &[u8], report: &freezegate_ledger::Report) -> BTreeSet<(String, String)> {
    let rows: BTreeSet<usize> = report.errors().filter_map(|p| p.row).collect();
    if rows.is_empty() {
        return BTreeSet::new();
    }
    let Ok(document) = serde_json::from_slice::<serde_json::Value>(bytes) else {
        return BTreeSet::new();
    };
    rows.into_iter()
        .filter_map(|i| {
            let row = document.get("rows")?.get(i)?;
            let name = |key: &str| row.get(key)?.as_str().map(str::to_owned);
            Some((name("property_id")?, name("fixture_id")?))
        })
        .collect()
}

/// The ledger crate's policy from the gate's settings.
pub fn ledger_policy(settings: &Settings) -> freezegate_ledger::Policy {
    let policy = &settings.config.policy;
    freezegate_ledger::Policy {
        replays: policy.replays,
        freeze_env_classes: policy
            .freeze_env_classes
            .iter()
            .filter_map(|c| c.parse::<EnvClass>().ok())
            .collect(),
        max_freeze_days: policy.max_freeze_days,
        property_replays: settings
            .config
            .properties
            .iter()
            .filter(|p| settings.replays_for(p) != settings.replays)
            .map(|p| (p.id.clone(), settings.replays_for(p)))
            .collect(),
    }
}

/// One pinned fixture found on disk.
struct Pinned {
    property: usize,
    id: FixtureId,
    path: String,
    bytes: Arc<Vec<u8>>,
}

/// Lists the fixture files of a property folder (not metas, not origins), sorted by id.
fn pinned_fixtures(root: &Path, property: &PropertyId) -> Vec<(FixtureId, PathBuf)> {
    let dir = fixture::property_dir(root, property);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out: Vec<(FixtureId, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let stem = name.strip_suffix(".json")?;
            if stem.ends_with(".meta") {
                return None;
            }
            let id: FixtureId = stem.parse().ok()?;
            Some((id, e.path()))
        })
        .collect();
    out.sort();
    out
}

fn rel(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// Runs the gate: validation, replays of every pinned fixture, campaigns, decision.
pub fn run(settings: &Settings, ctx: &Context<'_>) -> Result<Report, GateError> {
    run_trusting(settings, ctx, None)
}

/// The ledger rows that may freeze in a `--base` run whose patch has a change without an
/// allowed signature: those of the ledger at the base revision, and those that a commit of
/// the range an allowed signer signed brought in (added, or changed to what they are), less
/// those such a commit took out (commits are taken parents first). A row
/// is taken field for field, as the commits' files hold it: a row on disk that no such file
/// holds (a ledger reached through a link, a checkout filter) freezes nothing.
#[derive(Debug, Default)]
struct Trust {
    /// The base revision, as the caller named it.
    base: String,
    /// The rows that may freeze.
    trusted: HashSet<freezegate_ledger::Row>,
    /// Rows that a commit without an allowed signature brought in, with that commit.
    unsigned: HashMap<freezegate_ledger::Row, String>,
    /// Rows that a commit an allowed signer signed took out, with that commit.
    revoked: HashMap<freezegate_ledger::Row, String>,
    /// Rows that a signed commit holds after a parent whose ledger did not parse: a signature
    /// on a syntax fix vouches for none of them.
    mended: HashMap<freezegate_ledger::Row, String>,
}

impl Trust {
    /// Why `row`, which would freeze a fixture, does not.
    fn refusal(&self, row: &freezegate_ledger::Row) -> Option<String> {
        if self.trusted.contains(row) {
            return None;
        }
        Some(match (self.unsigned.get(row), self.revoked.get(row)) {
            (None, None) if self.mended.contains_key(row) => format!(
                "the row of {LEDGER_FILE} that would freeze it has no signature but that of commit {}, which mended a ledger that did not parse (a signature on a syntax fix vouches for no row): it freezes nothing",
                short(self.mended.get(row).map_or("", String::as_str))
            ),
            (_, Some(commit)) => format!(
                "the row of {LEDGER_FILE} that would freeze it was taken out by commit {}, which an allowed signer signed, and is back without a signature: it freezes nothing",
                short(commit)
            ),
            (Some(commit), None) => format!(
                "the row of {LEDGER_FILE} that would freeze it came in commit {} without an allowed signature: it freezes nothing",
                short(commit)
            ),
            (None, None) => format!(
                "the row of {LEDGER_FILE} that would freeze it is neither in the ledger at {} nor written by a commit of the patch that an allowed signer signed: it freezes nothing",
                self.base
            ),
        })
    }
}

/// [`run`], where only the rows `trust` allows freeze (all valid rows without it).
fn run_trusting(
    settings: &Settings,
    ctx: &Context<'_>,
    trust: Option<&Trust>,
) -> Result<Report, GateError> {
    let started = Instant::now();
    let root = ctx.root.as_path();
    let config = &settings.config;
    let seed = settings.seed;
    // Every property has something to run, and settings a caller may have changed after
    // resolving them hold what resolving gives, before anything is read or run.
    config.check_oracles(|id| ctx.rust_runner.is_some() || ctx.registry.contains(id))?;
    settings.check()?;

    // Step 1: the ledger and every fixture file.
    let mut ledger = load_ledger(root, settings, ctx.now)?;
    // The valid rows that the patch's signatures allow: the rows that may freeze.
    let trusted = trust.map(|t| {
        Ledger::from_rows(
            ledger
                .valid
                .rows()
                .iter()
                .filter(|r| t.trusted.contains(r))
                .cloned()
                .collect(),
        )
    });
    // The report's settings block, shown now, before any oracle runs.
    let mut view = settings_view(settings, ctx, &ledger);
    if let Some(trusted) = &trusted {
        // Only the rows the patch's signatures allow may freeze in this run.
        view.ledger_active = trusted
            .rows()
            .iter()
            .filter(|r| r.is_active(ctx.now))
            .count();
    }
    ctx.progress.settings(&view);
    let mut findings = std::mem::take(&mut ledger.findings);
    let declared = |id: &PropertyId| config.property(id.as_str()).map(|p| p.canonicalization);
    // Files with an integrity error: a fixture file among them is never replayed (its bytes
    // are not a canonical input; the blocking finding is all it gets).
    let mut broken: BTreeSet<String> = BTreeSet::new();
    for error in crate::integrity::verify(root, declared) {
        // The file relative to the root and, for JSON that does not parse or a meta file
        // that breaks its schema, its line and column (in the finding's fields, not again in
        // its message).
        let (file, place, message) = match &error {
            freezegate_canon::Error::Integrity { path, problem } => {
                (Some(rel(root, path)), None, problem.clone())
            }
            freezegate_canon::Error::NotCanonical {
                path,
                form,
                difference,
            } => (
                Some(rel(root, path)),
                Some((
                    difference.position.line as u64,
                    difference.position.column as u64,
                )),
                format!("its bytes are not canonical ({form}): {difference}"),
            ),
            freezegate_canon::Error::File { path, source } => {
                // The place goes in the finding's own fields (`file:line:column:`), so the
                // message is the cause without it.
                let (place, message) = match source.as_ref() {
                    freezegate_canon::Error::Parse(e) => {
                        (Some((e.line as u64, e.column as u64)), e.kind.to_string())
                    }
                    freezegate_canon::Error::MetaAt { at, error } => (
                        Some((at.line as u64, at.column as u64)),
                        ErrorChain(error).to_string(),
                    ),
                    other => (None, ErrorChain(other).to_string()),
                };
                (Some(rel(root, path)), place, message)
            }
            freezegate_canon::Error::Io { path, source } => {
                (Some(rel(root, path)), None, source.to_string())
            }
            other => (None, None, ErrorChain(other).to_string()),
        };
        if let Some(file) = &file {
            broken.insert(file.clone());
        }
        findings.push(Finding {
            kind: FindingKind::Integrity,
            blocking: true,
            file,
            line: place.map(|(line, _)| line),
            column: place.map(|(_, column)| column),
            rule: "integrity.fixture".into(),
            message,
        });
    }
    let known: BTreeSet<&str> = config.properties.iter().map(|p| p.id.as_str()).collect();
    if let Ok(entries) = std::fs::read_dir(root.join(FIXTURES_DIR)) {
        // Folders only, named like a property: stray files and badly named folders are
        // integrity.fixture findings already, and `.gitkeep` or `README.md` are allowed.
        let mut orphans: Vec<String> = entries
            .filter_map(Result::ok)
            .filter(|e| root.join(FIXTURES_DIR).join(e.file_name()).is_dir())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.parse::<PropertyId>().is_ok() && !known.contains(name.as_str()))
            .collect();
        orphans.sort();
        for name in orphans {
            findings.push(Finding {
                kind: FindingKind::Integrity,
                blocking: true,
                file: Some(format!("{FIXTURES_DIR}/{name}")),
                line: None,
                column: None,
                rule: "integrity.orphan".into(),
                message: format!(
                    "fixtures of {name:?}, a property freezegate.toml does not list: its fixtures would never be replayed"
                ),
            });
        }
    }

    // The oracles of every property.
    let mut oracles = Vec::with_capacity(config.properties.len());
    for property in &config.properties {
        let source = oracle_source(
            property,
            ctx.registry,
            ctx.exe.as_deref(),
            ctx.rust_runner.as_deref(),
        )?;
        oracles.push(PropertyOracles::new(property, &source, root)?);
    }

    // Step 3: replay every pinned fixture N times, all in one pool.
    let mut pinned = Vec::new();
    for (i, property) in config.properties.iter().enumerate() {
        for (id, path) in pinned_fixtures(root, &property.id) {
            let path = rel(root, &path);
            if broken.contains(&path) {
                continue;
            }
            let Ok(bytes) = std::fs::read(root.join(&path)) else {
                continue;
            };
            let body = bytes.strip_suffix(b"\n").unwrap_or(&bytes).to_vec();
            pinned.push(Pinned {
                property: i,
                id,
                path,
                bytes: Arc::new(body),
            });
        }
    }
    let mut jobs = Vec::new();
    let mut spans = Vec::with_capacity(pinned.len());
    let mut walls = Vec::with_capacity(pinned.len());
    for p in &pinned {
        let property = &config.properties[p.property];
        let n = settings.replays_for(property);
        spans.push((jobs.len(), n));
        // The fixture's wall time: from the first of its replays starting to the last one
        // ending (its replays run in parallel with each other and with other fixtures').
        let wall = Arc::new(WallClock::default());
        walls.push(Arc::clone(&wall));
        let oracle = timed(Arc::clone(&oracles[p.property].fresh), wall);
        for ctx_run in replay_contexts(
            seed,
            property.id.as_str(),
            settings.timeout_ms_for(property),
            n,
        ) {
            jobs.push(Job {
                oracle: Arc::clone(&oracle),
                candidate: Arc::clone(&p.bytes),
                ctx: ctx_run,
            });
        }
    }
    ctx.progress.phase("replaying pinned fixtures", jobs.len());
    let outcomes = run_parallel(jobs, settings.jobs, &|done| ctx.progress.tick(done));
    let seed_key = Seed::from(seed);
    let mut fixtures = Vec::with_capacity(pinned.len());
    for ((p, (start, n)), wall) in pinned.iter().zip(spans).zip(walls) {
        let property = &config.properties[p.property];
        let runs = &outcomes[start..start + n];
        let labels = labels(runs);
        let v = verdict(&labels, n);
        let digest = freezegate_canon::Digest::of(&p.bytes);
        // Only a row that breaks no rule, and that the patch did not bring in unsigned,
        // freezes; one that would match otherwise is named in the flicker's note.
        let lookup = |l: &Ledger| -> Option<freezegate_ledger::Row> {
            l.active_row(
                &property.id,
                &digest,
                &seed_key,
                settings.env_class,
                ctx.now,
            )
            .cloned()
        };
        let freeze = lookup(trusted.as_ref().unwrap_or(&ledger.valid))
            .as_ref()
            .map(freeze_info);
        let row_note = if freeze.is_some() {
            None
        } else if let Some(refusal) = trust
            .zip(lookup(&ledger.valid))
            .and_then(|(t, row)| t.refusal(&row))
        {
            Some(refusal)
        } else if lookup(&ledger.ledger).is_some()
            || ledger
                .broken
                .contains(&(property.id.to_string(), p.id.to_string()))
        {
            Some(format!(
                "a row of {LEDGER_FILE} names it but breaks a rule (see the ledger findings): it freezes nothing"
            ))
        } else {
            None
        };
        let signature = runs
            .iter()
            .find(|o| o.label == Label::AssertFail)
            .and_then(|o| o.signature.clone());
        let infra_note = runs
            .iter()
            .find(|o| o.label.is_infra())
            .map(|o| format!("{}: {}", o.label, infra_reason(o)));
        let (status, mut note) = fixture_status(v, freeze.is_some(), row_note, infra_note);
        if signature.is_none() && status.blocks() {
            // No signature: what the oracle said on stderr (a traceback's last line: an
            // import that failed, a crash) is the reader's only clue.
            let said = runs
                .iter()
                .filter(|o| o.label == Label::AssertFail)
                .find_map(|o| stderr_last_line(&o.stderr.text));
            if let Some(line) = said {
                add_note(
                    &mut note,
                    &format!("a failing replay's stderr ends: {line}"),
                );
            }
        }
        fixtures.push(FixtureResult {
            property_id: property.id.to_string(),
            fixture_id: p.id.to_string(),
            path: p.path.clone(),
            labels,
            verdict: v,
            status,
            freeze,
            note,
            signature,
            duration_ms: wall.millis(),
        });
    }

    // The report lists fixtures by property id, then fixture id, whatever the order of the
    // `[[property]]` tables: reordering the file changes no fixture line of any format.
    fixtures.sort_by(|a, b| {
        (a.property_id.as_str(), a.fixture_id.as_str())
            .cmp(&(b.property_id.as_str(), b.fixture_id.as_str()))
    });

    // Step 4: campaigns.
    // The fixture ids of each property among the fixtures that `keep` selects.
    let ids_where = |keep: fn(&FixtureResult) -> bool| {
        fixtures.iter().filter(|f| keep(f)).fold(
            BTreeMap::<&str, BTreeSet<String>>::new(),
            |mut m, f| {
                m.entry(f.property_id.as_str())
                    .or_default()
                    .insert(f.fixture_id.clone());
                m
            },
        )
    };
    let pinned_ids = ids_where(|_| true);
    // The first fixture of each property whose replays block this run.
    let blocking: BTreeMap<&str, &str> = fixtures
        .iter()
        .rev()
        .filter(|f| f.status.blocks())
        .map(|f| (f.property_id.as_str(), f.fixture_id.as_str()))
        .collect();
    // The fixtures of each property whose failure still shows in this run (every status but
    // `pass`): only their origins are known failures. A fixture that passes now while its
    // origin still fails was fixed for that one input, not for the bug.
    let live = ids_where(|f| f.status != FixtureStatus::Pass);
    // The fixtures of each property whose replays did not all fail: a campaign's stable
    // failure that shrinks onto one is not that fixture's failure, whatever a second set of
    // replays of the fixture (a flake) shows.
    let unsteady = ids_where(|f| f.verdict != Verdict::BlockPatch);
    let mut campaigns = Vec::with_capacity(config.properties.len());
    for (i, property) in config.properties.iter().enumerate() {
        let pinned = PinnedSoFar {
            ids: pinned_ids.get(property.id.as_str()),
            live: live.get(property.id.as_str()),
            unsteady: unsteady.get(property.id.as_str()),
            blocked_by: blocking.get(property.id.as_str()).copied(),
        };
        let result = campaign(settings, ctx, property, &oracles[i], &pinned)?;
        findings.extend(short_campaign(settings, property, &result));
        campaigns.push(result);
    }
    // A campaign may complete an interrupted pin (a fixture left without its meta file, a
    // meta file without its fixture): a finding about a file that verifies now describes a
    // state this run repaired, and goes, so that the report is of the tree it leaves.
    if campaigns.iter().any(|c| c.fixture_id.is_some())
        && findings.iter().any(|f| f.rule == "integrity.fixture")
    {
        let still: BTreeSet<String> = crate::integrity::verify(root, declared)
            .iter()
            .filter_map(|e| integrity_file(root, e))
            .collect();
        findings.retain(|f| {
            f.rule != "integrity.fixture" || f.file.as_ref().is_none_or(|file| still.contains(file))
        });
    }

    // Step 5: expired rows, decision.
    let expired_rows = ledger
        .ledger
        .rows()
        .iter()
        .filter(|r| r.is_expired(ctx.now))
        .map(freeze_info)
        .collect::<Vec<_>>();
    findings.sort();
    let mut report = Report {
        format: REPORT_FORMAT,
        settings: view,
        fixtures,
        campaigns,
        findings,
        expired_rows,
        patch: None,
        decision: Decision {
            outcome: Outcome::Pass,
            exit_code: 0,
        },
        summary: Summary {
            duration_ms: millis(started.elapsed()),
            ..Summary::default()
        },
    };
    report.decide();
    Ok(report)
}

/// The first start and the last end of a set of runs.
#[derive(Default)]
struct WallClock(std::sync::Mutex<Option<(Instant, Instant)>>);

impl WallClock {
    fn record(&self, start: Instant, end: Instant) {
        if let Ok(mut span) = self.0.lock() {
            *span = Some(match *span {
                Some((first, last)) => (first.min(start), last.max(end)),
                None => (start, end),
            });
        }
    }

    fn millis(&self) -> u64 {
        match self.0.lock().ok().and_then(|span| *span) {
            Some((first, last)) => millis(last.saturating_duration_since(first)),
            None => 0,
        }
    }
}

/// `oracle`, recording when each of its runs starts and ends in `wall`.
fn timed(
    oracle: Arc<dyn freezegate_replay::Oracle>,
    wall: Arc<WallClock>,
) -> Arc<dyn freezegate_replay::Oracle> {
    Arc::new(move |candidate: &[u8], run: &RunContext| {
        let start = Instant::now();
        let outcome = oracle.run(candidate, run);
        wall.record(start, Instant::now());
        outcome
    })
}

/// A generator that printed fewer inputs than the property's `cases` ran a smaller campaign
/// than `freezegate.toml` asks for, which no patch could do through the file itself (a
/// lowered `cases`, or one below `min_cases`, is refused there): a warning, and a blocking
/// finding below the policy's `min_cases`, since such a campaign proves less than the policy
/// allows. A generator that failed is an infra item instead.
fn short_campaign(
    settings: &Settings,
    property: &Property,
    result: &CampaignResult,
) -> Option<Finding> {
    if property.generate.is_none()
        || result.status == CampaignStatus::Infra
        || result.cases >= property.cases
    {
        return None;
    }
    let min_cases = settings.config.policy.min_cases;
    let blocking = result.cases < min_cases;
    let mut message = format!(
        "the generator of {} printed {} input{} where its cases asks for {}",
        property.id,
        result.cases,
        if result.cases == 1 { "" } else { "s" },
        property.cases
    );
    if blocking {
        message.push_str(&format!(
            ": fewer than the policy's min_cases {min_cases}, so the campaign proves less than the policy allows"
        ));
    }
    Some(Finding {
        kind: FindingKind::Campaign,
        blocking,
        file: Some(crate::config::CONFIG_FILE.into()),
        // Where a reader would change it: the property's `generate` value.
        line: property.generate_at.map(|at| at.line as u64),
        column: property.generate_at.map(|at| at.column as u64),
        rule: "campaign.short".into(),
        message,
    })
}

/// The most characters of an oracle's or generator's stderr line a note carries.
const STDERR_LINE_CHARS: usize = 200;

/// The line of captured stderr that says what went wrong: the last non-blank line, trimmed,
/// past a runtime's stack frames and version banner ([`freezegate_replay::telling_line`]), at
/// most [`STDERR_LINE_CHARS`] characters of it (`…` marks a cut); `None` when stderr holds no
/// text. Renderers escape what it holds.
fn stderr_last_line(text: &str) -> Option<String> {
    freezegate_replay::telling_line(text).map(cut_line)
}

/// At most [`STDERR_LINE_CHARS`] characters of `line`, `…` marking a cut.
fn cut_line(line: &str) -> String {
    match line.char_indices().nth(STDERR_LINE_CHARS) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_owned(),
    }
}

/// Why a run is an infra run, in one line: the runner's message (or how it ended), then the
/// last line the oracle wrote to stderr, where the reason usually is (`exit 125; stderr:
/// cannot import the property: …`).
fn infra_reason(outcome: &freezegate_replay::RunOutcome) -> String {
    let mut reason = outcome
        .message
        .clone()
        .unwrap_or_else(|| outcome.exit.to_string());
    if let Some(line) = stderr_last_line(&outcome.stderr.text) {
        reason.push_str("; stderr: ");
        reason.push_str(&line);
    }
    reason
}

/// The file, relative to `root`, that an integrity error of canon names, if it names one.
fn integrity_file(root: &Path, error: &freezegate_canon::Error) -> Option<String> {
    match error {
        freezegate_canon::Error::Integrity { path, .. }
        | freezegate_canon::Error::NotCanonical { path, .. }
        | freezegate_canon::Error::File { path, .. }
        | freezegate_canon::Error::Io { path, .. } => Some(rel(root, path)),
        _ => None,
    }
}

/// Appends `more` to a report's note, after `; ` when there is one.
fn add_note(note: &mut Option<String>, more: &str) {
    *note = Some(match note.take() {
        Some(n) => format!("{n}; {more}"),
        None => more.to_owned(),
    });
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn freeze_info(row: &freezegate_ledger::Row) -> FreezeInfo {
    FreezeInfo {
        property_id: row.property_id.to_string(),
        fixture_id: row.fixture_id.to_string(),
        env_class: row.env_class.as_str().to_owned(),
        owner: row.owner.clone(),
        reason: row.reason.clone(),
        expires_at: row.expires_at.to_string(),
    }
}

/// The settings block of a run: active rows are those that may freeze (they break no
/// rule), expired rows are all that have expired.
pub fn settings_view(settings: &Settings, ctx: &Context<'_>, ledger: &LedgerState) -> SettingsView {
    let config = &settings.config;
    let active = ledger
        .valid
        .rows()
        .iter()
        .filter(|r| r.is_active(ctx.now))
        .count();
    let expired = ledger
        .ledger
        .rows()
        .iter()
        .filter(|r| r.is_expired(ctx.now))
        .count();
    SettingsView {
        seed: settings.seed,
        replays: settings.replays,
        jobs: settings.jobs,
        env_class: settings.env_class.as_str().to_owned(),
        runner_id: settings.runner_id.clone(),
        now: ctx.now.to_string(),
        patch_id: ctx.patch_id.clone(),
        properties: config
            .properties
            .iter()
            .map(|p| PropertySettings {
                id: p.id.to_string(),
                oracle: match (&p.oracle, p.worker) {
                    (None, _) => "rust",
                    (Some(_), true) => "worker",
                    (Some(_), false) => "command",
                }
                .to_owned(),
                cases: if p.generate.is_some() || p.oracle.is_none() {
                    p.cases
                } else {
                    0
                },
                timeout_ms: settings.timeout_ms_for(p),
                replays: settings.replays_for(p),
            })
            .collect(),
        overrides: settings.overrides.iter().map(ToString::to_string).collect(),
        ledger_active: active,
        ledger_expired: expired,
        rust_runner: ctx
            .rust_runner
            .as_ref()
            .map(|runner| runner.display().to_string()),
    }
}

/// The inputs of a property's campaign: from its generator command, or from its Rust
/// strategy. `Ok(None)` when it has neither.
fn campaign_inputs(
    settings: &Settings,
    ctx: &Context<'_>,
    property: &Property,
) -> Result<Option<Result<Vec<Value>, String>>, GateError> {
    if let Some(cmd) = &property.generate {
        let generated = run_generator(cmd, &ctx.root, settings, property, &[]);
        return Ok(Some(generated.map_err(GeneratorFailure::into_message)));
    }
    if property.oracle.is_none()
        && let Some(runner) = &ctx.rust_runner
    {
        let cmd = crate::rust_prop::oracle_command(runner, property.id.as_str());
        let generated = run_generator(
            &cmd,
            &ctx.root,
            settings,
            property,
            &[(crate::rust_prop::GENERATE_ENV, "1")],
        );
        return match generated {
            Err(GeneratorFailure::Exit { code, stderr, .. })
                if code == i32::from(crate::rust_prop::EXIT_UNKNOWN) =>
            {
                Err(GateError::RunnerUnknown {
                    id: property.id.to_string(),
                    runner: runner.display().to_string(),
                    detail: stderr_last_line(&stderr),
                })
            }
            other => Ok(Some(other.map_err(GeneratorFailure::into_message))),
        };
    }
    if property.oracle.is_none() && ctx.registry.contains(property.id.as_str()) {
        // A strategy that draws what JSON cannot hold (a NaN) or rejects too much is this
        // campaign's infra item, as a generator command's failure is (and as it is through
        // `--rust-runner`): it does not stop the other properties.
        return match ctx
            .registry
            .generate(property.id.as_str(), settings.seed, property.cases)
        {
            Ok(inputs) => Ok(Some(Ok(inputs))),
            Err(e @ crate::rust_prop::RegistryError::Generate { .. }) => {
                Ok(Some(Err(e.to_string())))
            }
            Err(other) => Err(other.into()),
        };
    }
    Ok(None)
}

/// Why a generator gave no inputs.
enum GeneratorFailure {
    /// It exited with a status other than 0: the sentence, its exit code and its stderr.
    Exit {
        /// The infra sentence.
        message: String,
        /// The exit code.
        code: i32,
        /// What it wrote to stderr.
        stderr: String,
    },
    /// Anything else (it did not start, timed out, printed too much or a line that is not
    /// JSON): the infra sentence.
    Other(String),
}

impl GeneratorFailure {
    /// The infra sentence.
    fn into_message(self) -> String {
        match self {
            GeneratorFailure::Exit { message, .. } | GeneratorFailure::Other(message) => message,
        }
    }
}

/// Runs a generator command (`PROP_SEED`, `PROP_CASES`, `PROPERTY_ID` and `extra_env`; one
/// JSON input per line on stdout) under the replay runner's rules: its own process group, a
/// deadline, what it leaves running killed when it exits (a background child holding stdout
/// open cannot hold the gate), and its stdout capped.
fn run_generator(
    cmd: &str,
    root: &Path,
    settings: &Settings,
    property: &Property,
    extra_env: &[(&str, &str)],
) -> Result<Vec<Value>, GeneratorFailure> {
    // A generator gets a generous deadline: the per-run one for every 10 cases, at least 60 s.
    let deadline = Duration::from_millis(
        settings
            .timeout_ms_for(property)
            .saturating_mul(u64::from(property.cases / 10 + 1))
            .max(60_000),
    );
    let mut command = freezegate_replay::ShellCommand::new(cmd, root)
        .map_err(|e| GeneratorFailure::Other(format!("generator: {e}")))?
        .env("PROP_SEED", settings.seed.to_string())
        .env("PROP_CASES", property.cases.to_string())
        .env("PROPERTY_ID", property.id.as_str());
    for (name, value) in extra_env {
        command = command.env(name, value);
    }
    let out = command
        .timeout(deadline)
        .stdout_cap(GENERATOR_STDOUT_CAP)
        .run();
    let status =
        generator_status(&out.end, deadline, &out.stderr.text).map_err(GeneratorFailure::Other)?;
    if !status.success() {
        return Err(GeneratorFailure::Exit {
            message: generator_failed(format!("generator failed ({status})"), &out.stderr.text),
            code: status.code().unwrap_or(-1),
            stderr: out.stderr.text.clone(),
        });
    }
    let mut inputs = Vec::new();
    for (n, line) in out.stdout.split(|&b| b == b'\n').enumerate() {
        if line.trim_ascii().is_empty() {
            continue;
        }
        match freezegate_canon::parse(line) {
            Ok(v) => inputs.push(v),
            Err(e) => {
                // The line itself (its start), so that a stray print (a verbose test
                // framework, a log handler on stdout) is recognised at once.
                let shown = cut_line(&String::from_utf8_lossy(line));
                return Err(GeneratorFailure::Other(format!(
                    "generator output line {} is not one JSON input ({e}): {shown:?}",
                    n + 1
                )));
            }
        }
    }
    Ok(inputs)
}

/// How a generator ended: its exit status, or why it has none, with its last stderr line
/// when it wrote one (a generator stuck or stopped says why as often as one that failed).
fn generator_status(
    end: &CommandEnd,
    deadline: Duration,
    stderr: &str,
) -> Result<std::process::ExitStatus, String> {
    match end {
        CommandEnd::Exited(status) => Ok(*status),
        CommandEnd::TimedOut => Err(generator_failed(
            format!("generator timed out after {} ms", deadline.as_millis()),
            stderr,
        )),
        CommandEnd::StdoutOverflow => Err(generator_failed(
            format!(
                "generator printed more than {} MiB and was stopped",
                GENERATOR_STDOUT_CAP >> 20
            ),
            stderr,
        )),
        CommandEnd::NotRun(why) => Err(format!("generator did not start: {why}")),
        _ => Err(generator_failed(
            "generator ended in an unknown way".to_owned(),
            stderr,
        )),
    }
}

/// `what`, then the generator's last stderr line when it wrote one.
fn generator_failed(what: String, stderr: &str) -> String {
    match stderr_last_line(stderr) {
        Some(last) => format!("{what}: {last}"),
        None => what,
    }
}

/// The most bytes a generator may print: 256 MiB.
const GENERATOR_STDOUT_CAP: usize = freezegate_replay::DEFAULT_STDOUT_CAP;

/// The most failing cases one campaign shrinks and classifies. The first failing case is
/// always shrunk; while the failures shrunk so far do not block (the minimal input is
/// already pinned, does not reproduce, or its replays hit infra), the campaign looks at
/// further failing cases, so that a known (say frozen) failure early in the generator's
/// output cannot hide a new one after it. When the bound is hit, the campaign's note says
/// how many failing cases were left unshrunk, and each of them is run in fresh processes:
/// the first that fails every replay is pinned as it is and blocks.
pub const MAX_CAMPAIGN_SHRINKS: usize = 4;

/// After this many cases in a row (in the generator's order) time out, a campaign looks at
/// no more cases and starts no more: a property whose code hangs on every input would
/// otherwise cost a deadline per case (200 cases of 10 s on 2 jobs: over 16 minutes) to learn
/// nothing more. Outcomes of the chunk in flight past that case are not looked at either, so
/// that the outcome does not depend on `jobs`. The campaign's infra item says where it
/// stopped and how many cases were not looked at; failing cases found before are shrunk and
/// block as ever.
pub const MAX_TIMEOUTS_IN_A_ROW: usize = 8;

/// What running a campaign's cases found so far.
#[derive(Default)]
struct CaseScan {
    /// Cases looked at (a prefix of the inputs): what `cases_run` reports.
    done: usize,
    /// Outcomes of the cases after `done` that ran in the same chunk as the case the scan
    /// stopped at, in index order: looked at when the scan goes on, never run twice.
    ahead: std::collections::VecDeque<freezegate_replay::RunOutcome>,
    /// Failing cases in index order, with their first run.
    failing: Vec<(usize, freezegate_replay::RunOutcome)>,
    /// The first case, in index order, that timed out or broke the harness.
    infra: Option<String>,
    /// Set once a case of a chunk timed out or broke the harness on a worker that has
    /// answered no candidate (one that does not flush its answers, or prints something else
    /// on stdout first, looks so): from that chunk on, and for shrinking, every run is a
    /// fresh process, which gives the answers the replays will give, without the deadline
    /// every case would otherwise cost.
    fresh_only: bool,
    /// Cases that timed out in a row, up to the last one looked at.
    timeouts_in_a_row: usize,
    /// Set once [`MAX_TIMEOUTS_IN_A_ROW`] cases timed out in a row: no more cases run.
    stopped: bool,
}

/// Looks at the cases after `scan.done` one at a time in index order, until the end or, with
/// `until_failure`, the first failing case (included). They run `jobs * 4` at a time, but
/// what the scan records (cases looked at, failures, the infra item) depends on the cases'
/// outcomes alone, never on `jobs`: outcomes of a chunk past the stopping case are kept for
/// later, not counted.
fn run_cases(
    scan: &mut CaseScan,
    cases: &[Arc<Vec<u8>>],
    oracles: &PropertyOracles,
    run_ctx: &RunContext,
    settings: &Settings,
    progress: &dyn Progress,
    until_failure: bool,
) {
    let chunk = settings.jobs.max(1) * 4;
    while scan.done < cases.len() && !scan.stopped {
        if scan.ahead.is_empty() {
            let start = scan.done;
            let end = (start + chunk).min(cases.len());
            let run = |oracle: &Arc<dyn freezegate_replay::Oracle>| {
                let jobs = cases[start..end]
                    .iter()
                    .map(|candidate| Job {
                        oracle: Arc::clone(oracle),
                        candidate: Arc::clone(candidate),
                        ctx: run_ctx.clone(),
                    })
                    .collect();
                run_parallel(jobs, settings.jobs, &|d| progress.tick(start + d))
            };
            let oracle = if scan.fresh_only {
                &oracles.fresh
            } else {
                &oracles.fast
            };
            let mut outcomes = run(oracle);
            if !scan.fresh_only
                && oracles.worker_has_answered() == Some(false)
                && let Some((i, silent)) = outcomes
                    .iter()
                    .enumerate()
                    .find(|(_, o)| matches!(o.label, Label::Timeout | Label::HarnessError))
            {
                // No worker answered any of the chunk (it is silent, dies, or writes
                // something else on stdout first: a print when the code under test is
                // imported): run it again, and the rest, in fresh processes, which the
                // replays use too, and queue the worker's trouble for the runner owners.
                scan.infra.get_or_insert_with(|| {
                    format!(
                        "case {} was labelled {} ({}) and the worker has answered no case, so the campaign ran a fresh process per case instead",
                        start + i,
                        silent.label,
                        infra_reason(silent)
                    )
                });
                scan.fresh_only = true;
                outcomes = run(&oracles.fresh);
            }
            scan.ahead = outcomes.into();
        }
        let Some(o) = scan.ahead.pop_front() else {
            // Unreachable: a chunk holds at least one case.
            break;
        };
        let index = scan.done;
        scan.done += 1;
        scan.timeouts_in_a_row = if o.label == Label::Timeout {
            scan.timeouts_in_a_row + 1
        } else {
            0
        };
        match o.label {
            Label::AssertFail => {
                scan.failing.push((index, o));
                if until_failure {
                    break;
                }
            }
            Label::Timeout | Label::HarnessError if scan.infra.is_none() => {
                // The input too, so that the runner's owners can run it by hand.
                let input = String::from_utf8_lossy(&cases[index]);
                scan.infra = Some(format!(
                    "case {index} was labelled {} ({}) on input {}",
                    o.label,
                    infra_reason(&o),
                    cut_line(&input)
                ));
            }
            _ => {}
        }
        if scan.timeouts_in_a_row >= MAX_TIMEOUTS_IN_A_ROW && scan.done < cases.len() {
            scan.stopped = true;
            scan.ahead.clear();
            let left = cases.len() - scan.done;
            let stop = format!(
                "cases {} to {index} timed out in a row, so the campaign stopped there (MAX_TIMEOUTS_IN_A_ROW): {left} of its {} cases {} not looked at",
                index + 1 - MAX_TIMEOUTS_IN_A_ROW,
                cases.len(),
                if left == 1 { "was" } else { "were" }
            );
            scan.infra = Some(match scan.infra.take() {
                Some(first) => format!("{first}; {stop}"),
                None => stop,
            });
        }
    }
}

/// One failing case shrunk and classified, or why it could not be.
struct Examined {
    index: usize,
    /// The failure signature of the case's first failing run, if it had one.
    signature: Option<String>,
    /// The last line its first failing run wrote to stderr, if any.
    stderr_line: Option<String>,
    record: Result<classify::Record, String>,
    /// Whether it was shrunk now (not the origin of a pinned fixture).
    shrunk: bool,
    /// When `record` is the error of writing its fixture files, what the classification
    /// found: a failure found but not pinned (a read-only checkout, a full disk), which
    /// blocks rather than go to the infra queue, since the property failed.
    unpinned: Option<Box<classify::Record>>,
}

impl Examined {
    /// The case `index` whose first failing run had `signature` and `stderr_line`, with what
    /// classifying it gave; `shrunk` when it was shrunk now.
    fn new(
        index: usize,
        signature: Option<String>,
        stderr_line: Option<String>,
        outcome: Result<classify::Record, classify::ClassifyError>,
        shrunk: bool,
    ) -> Examined {
        let (record, unpinned) = match outcome {
            Ok(record) => (Ok(record), None),
            Err(e) => {
                let message = ErrorChain(&e).to_string();
                match e {
                    classify::ClassifyError::Pin { record, .. } => (Err(message), Some(record)),
                    _ => (Err(message), None),
                }
            }
        };
        Examined {
            index,
            signature,
            stderr_line,
            record,
            shrunk,
            unpinned,
        }
    }

    /// Whether the case is a new failure that blocks: a fixture pinned now, not before.
    fn blocks(&self, already: Option<&BTreeSet<String>>) -> bool {
        let Ok(record) = &self.record else {
            return self.unpinned.is_some();
        };
        let pinned_before = record.already_pinned
            || record.meta.as_ref().is_some_and(|m| {
                already.is_some_and(|ids| ids.contains(&m.fixture_id.to_string()))
            });
        record.action.pins() && !pinned_before
    }

    /// Its infra item: replays of the minimal input (or origin) that timed out or broke, or
    /// a classification that failed.
    fn infra(&self) -> Option<String> {
        match &self.record {
            Err(_) if self.unpinned.is_some() => None,
            Err(message) => Some(format!("case {}: {message}", self.index)),
            Ok(r) if r.action == Action::InfraQueue => Some(format!(
                "case {}: {}",
                self.index,
                r.message.as_deref().unwrap_or("infra queue")
            )),
            Ok(_) => None,
        }
    }

    /// `case 3 (already_pinned b39022c4ed96525c)`; `case 0 (b39022c4ed96525c)` for the origin
    /// of a pinned fixture.
    fn summary(&self) -> String {
        match &self.record {
            Ok(r) if !self.shrunk => match &r.meta {
                Some(m) => format!("case {} ({})", self.index, m.fixture_id),
                None => format!("case {}", self.index),
            },
            Ok(r) => match &r.meta {
                Some(m) => format!(
                    "case {} ({} {})",
                    self.index,
                    r.action.as_str(),
                    m.fixture_id
                ),
                None => format!("case {} ({})", self.index, r.action.as_str()),
            },
            Err(_) => format!("case {} (not classified)", self.index),
        }
    }
}

/// What the fixture replays of this run say about a property's pinned fixtures.
struct PinnedSoFar<'a> {
    /// Every pinned fixture id.
    ids: Option<&'a BTreeSet<String>>,
    /// Those whose failure still shows (every status but `pass`).
    live: Option<&'a BTreeSet<String>>,
    /// Those whose replays did not all fail.
    unsteady: Option<&'a BTreeSet<String>>,
    /// The first whose replays block this run.
    blocked_by: Option<&'a str>,
}

/// The metas of the pinned fixtures `ids` of `property`, by their origin's digest. A fixture
/// whose meta cannot be read is left out (the integrity check reports it).
fn pinned_origins(
    root: &Path,
    property: &PropertyId,
    ids: Option<&BTreeSet<String>>,
) -> BTreeMap<freezegate_canon::Digest, fixture::Meta> {
    ids.into_iter()
        .flatten()
        .filter_map(|id| id.parse::<FixtureId>().ok())
        .filter_map(|id| fixture::read_meta(root, property, id).ok())
        .map(|meta| (meta.origin_digest, meta))
        .collect()
}

/// The record of a failing case that is the origin of a pinned fixture: that fixture's
/// failure, not shrunk again (a flaky oracle would shrink it to another minimal input each
/// run, and each would look new); the fixture's own replays decide for it.
fn known_failure(root: &Path, meta: &fixture::Meta) -> classify::Record {
    let minimal = fixture::read_fixture(root, &meta.property_id, meta.fixture_id)
        .ok()
        .map(|(canonical, _)| canonical);
    classify::Record {
        property_id: meta.property_id.clone(),
        meta: Some(meta.clone()),
        status: None,
        action: Action::AlreadyPinned,
        labels: Vec::new(),
        trivial: minimal
            .as_ref()
            .is_some_and(|m| classify::TRIVIAL.contains(&m.bytes())),
        minimal,
        budget_exhausted: false,
        message: Some(format!(
            "the failing case is the origin of pinned fixture {}: its replays decide for it",
            meta.fixture_id
        )),
        already_pinned: true,
        // Not shrunk again: no call was made for it.
        oracle_calls: 0,
    }
}

fn campaign(
    settings: &Settings,
    ctx: &Context<'_>,
    property: &Property,
    oracles: &PropertyOracles,
    pinned: &PinnedSoFar<'_>,
) -> Result<CampaignResult, GateError> {
    let (already, blocked_by) = (pinned.ids, pinned.blocked_by);
    let started = Instant::now();
    let mut result = CampaignResult {
        property_id: property.id.to_string(),
        cases: property.cases,
        cases_run: 0,
        status: CampaignStatus::NoGenerator,
        blocking: false,
        failing_case: None,
        action: None,
        fixture_id: None,
        minimal: None,
        labels: Vec::new(),
        signature: None,
        already_pinned: false,
        trivial: false,
        oracle_calls: 0,
        shrinks: 0,
        note: None,
        infra: None,
        duration_ms: 0,
    };
    let inputs = match campaign_inputs(settings, ctx, property)? {
        None => {
            result.cases = 0;
            return Ok(result);
        }
        Some(Err(message)) => {
            result.status = CampaignStatus::Infra;
            result.infra = Some(message.clone());
            result.note = Some(message);
            result.cases = 0;
            result.duration_ms = millis(started.elapsed());
            return Ok(result);
        }
        Some(Ok(inputs)) => inputs,
    };
    result.cases = u32::try_from(inputs.len()).unwrap_or(u32::MAX);
    let form = property.canonicalization;
    let mut cases = Vec::with_capacity(inputs.len());
    for input in &inputs {
        match freezegate_canon::value_bytes(input, form) {
            Ok(bytes) => cases.push(Arc::new(bytes)),
            Err(e) => {
                let message = format!("a generated input has no canonical form: {e}");
                result.status = CampaignStatus::Infra;
                result.infra = Some(message.clone());
                result.note = Some(message);
                result.duration_ms = millis(started.elapsed());
                return Ok(result);
            }
        }
    }
    let timeout = Duration::from_millis(settings.timeout_ms_for(property));
    let run_ctx = RunContext::new(settings.seed)
        .with_property(property.id.as_str())
        .with_timeout(timeout);
    ctx.progress
        .phase(&format!("campaign {}", property.id), inputs.len());
    // Cases run in chunks of `jobs * 4`; the first failing case in index order is shrunk
    // first, whatever the completion order, and the scan stops right after it.
    let mut scan = CaseScan::default();
    run_cases(
        &mut scan,
        &cases,
        oracles,
        &run_ctx,
        settings,
        ctx.progress,
        true,
    );
    if scan.failing.is_empty() {
        result.cases_run = u32::try_from(scan.done).unwrap_or(u32::MAX);
        result.status = if scan.infra.is_some() {
            CampaignStatus::Infra
        } else {
            CampaignStatus::Pass
        };
        result.note.clone_from(&scan.infra);
        result.infra = scan.infra;
        result.duration_ms = millis(started.elapsed());
        return Ok(result);
    }
    // A worker that answered nothing is not asked to shrink either.
    let fresh_only;
    let oracles_used = if scan.fresh_only {
        fresh_only = oracles.fresh_only();
        &fresh_only
    } else {
        oracles
    };
    let plan = Plan {
        root: &ctx.root,
        property: &property.id,
        oracles: oracles_used,
        canonicalization: form,
        seed: settings.seed,
        replays: settings.replays_for(property),
        timeout_ms: settings.timeout_ms_for(property),
        jobs: settings.jobs,
        max_calls: ctx.max_shrink_calls,
        pinned_at: ctx.now.to_string(),
        patch_id: ctx.patch_id.clone(),
        pin: true,
        stop_if_pinned: true,
        unsteady: pinned.unsteady,
    };
    // Canonical inputs already shrunk, and minimal inputs already found: a failing case
    // equal to one of them would shrink to what is known.
    let mut seen: BTreeSet<Arc<Vec<u8>>> = BTreeSet::new();
    // Signatures of the failures shrunk so far that did not block: a failing case with
    // another signature is looked at first (it is more likely another bug).
    let mut quiet: BTreeSet<Option<String>> = BTreeSet::new();
    let mut examined: Vec<Examined> = Vec::new();
    // The origins of the fixtures pinned for this property: a failing case that is one of
    // them is that fixture's failure, whatever a flaky oracle would shrink it to this time.
    let origins = pinned_origins(&ctx.root, &property.id, pinned.live);
    let examine = |index: usize,
                   first: freezegate_replay::RunOutcome,
                   seen: &mut BTreeSet<Arc<Vec<u8>>>,
                   quiet: &mut BTreeSet<Option<String>>,
                   examined: &mut Vec<Examined>|
     -> bool {
        let signature = first.signature.clone();
        let stderr_line = stderr_last_line(&first.stderr.text);
        let known = origins.get(&freezegate_canon::Digest::of(&cases[index]));
        let outcome = match known {
            // The origin of a pinned fixture that does not block this run (a flake, perhaps
            // frozen) is that fixture's failure only while it does not fail every replay of
            // its own: a patch that makes the origin fail for good has a new, stable
            // failure, which no freeze of the fixture's flicker may excuse.
            Some(meta) if blocked_by.is_none() => {
                classify::unexplained_origin(&plan, &inputs[index], meta)
                    .map(|record| record.unwrap_or_else(|| known_failure(&ctx.root, meta)))
            }
            Some(meta) => Ok(known_failure(&ctx.root, meta)),
            None => {
                ctx.progress
                    .phase(&format!("shrinking a failure of {}", property.id), 0);
                classify::classify_observed(&plan, &inputs[index], Some(first))
            }
        };
        let case = Examined::new(
            index,
            signature.clone(),
            stderr_line,
            outcome,
            known.is_none(),
        );
        seen.insert(Arc::clone(&cases[index]));
        if let Ok(Some(minimal)) = case.record.as_ref().map(|r| r.minimal.as_ref()) {
            seen.insert(Arc::new(minimal.bytes().to_vec()));
        }
        let blocks = case.blocks(already);
        if !blocks {
            quiet.insert(signature);
        }
        examined.push(case);
        blocks
    };

    let mut failing = std::mem::take(&mut scan.failing).into_iter();
    let mut unshrunk = 0usize;
    // Why the fresh runs of the unshrunk failing cases stopped early, if they did.
    let mut probe_stopped: Option<String> = None;
    // The first of those fresh runs (or their replays) that timed out or broke, if any.
    let mut probe_infra: Option<String> = None;
    // Those that failed their fresh run and then flickered in their replays: not pinned.
    let mut probe_flickers: Vec<(usize, String)> = Vec::new();
    let first_blocks = match failing.next() {
        Some((index, first)) => examine(index, first, &mut seen, &mut quiet, &mut examined),
        None => false,
    };
    // A pinned fixture of the property that blocks this run already: looking further would
    // only pin more inputs of what is most likely the same bug, run after run.
    let held = (!first_blocks && !examined.is_empty())
        .then_some(blocked_by)
        .flatten();
    if !first_blocks && held.is_none() {
        // Nothing blocks yet: run the rest of the campaign and look at the other failures,
        // each distinct input once, new signatures first, then in index order.
        let mut pending: Vec<(usize, freezegate_replay::RunOutcome)> = failing.collect();
        run_cases(
            &mut scan,
            &cases,
            oracles_used,
            &run_ctx,
            settings,
            ctx.progress,
            false,
        );
        pending.append(&mut scan.failing);
        let mut distinct: BTreeSet<Arc<Vec<u8>>> = BTreeSet::new();
        pending.retain(|(i, _)| distinct.insert(Arc::clone(&cases[*i])));
        loop {
            pending.retain(|(i, _)| !seen.contains(&cases[*i]));
            let Some(pos) = pending
                .iter()
                .enumerate()
                .min_by_key(|(_, (i, o))| (quiet.contains(&o.signature), *i))
                .map(|(pos, _)| pos)
            else {
                break;
            };
            let is_origin =
                |i: usize| origins.contains_key(&freezegate_canon::Digest::of(&cases[i]));
            let pos = if examined.iter().filter(|e| e.shrunk).count() >= MAX_CAMPAIGN_SHRINKS
                && !is_origin(pending[pos].0)
            {
                // Origins of pinned fixtures cost no shrink: each one left is still looked
                // at (its own N replays, at most one set per live fixture), wherever it
                // stands in the order, and only the others are left out. Else a stable
                // failure of a frozen flake's origin could hide behind the bound, which the
                // fresh runs of the unshrunk cases below do not reach.
                match pending.iter().position(|(i, _)| is_origin(*i)) {
                    Some(origin) => origin,
                    None => {
                        unshrunk = pending.len();
                        break;
                    }
                }
            } else {
                pos
            };
            let (index, first) = pending.remove(pos);
            if examine(index, first, &mut seen, &mut quiet, &mut examined) {
                break;
            }
        }
        // The bound on shrinks must not let failures that do not block (a worker's
        // failure that no fresh process shows, each dropped as not reproduced) hide a stable
        // one after them: each case left unshrunk is run once in a fresh process (`jobs` at a
        // time), and the first that fails it and then every replay is pinned as it is and
        // blocks. Cases that time out there cost a deadline each: after
        // MAX_TIMEOUTS_IN_A_ROW of them in a row the probe stops, as an infra item, since
        // what the rest would show is unknown.
        if unshrunk > 0 && !examined.iter().any(|e| e.blocks(already)) {
            pending.sort_by_key(|(i, _)| *i);
            let is_origin =
                |i: usize| origins.contains_key(&freezegate_canon::Digest::of(&cases[i]));
            let left: Vec<usize> = pending
                .iter()
                .map(|(i, _)| *i)
                .filter(|i| !is_origin(*i))
                .collect();
            let mut timeouts_in_a_row = 0usize;
            'probe: for part in left.chunks(settings.jobs.max(1) * 4) {
                let jobs = part
                    .iter()
                    .map(|&i| Job {
                        oracle: Arc::clone(&oracles_used.fresh),
                        candidate: Arc::clone(&cases[i]),
                        ctx: run_ctx.clone(),
                    })
                    .collect();
                let outcomes = run_parallel(jobs, settings.jobs, &|_| {});
                for (&index, probe) in part.iter().zip(outcomes) {
                    timeouts_in_a_row = if probe.label == Label::Timeout {
                        timeouts_in_a_row + 1
                    } else {
                        0
                    };
                    if timeouts_in_a_row >= MAX_TIMEOUTS_IN_A_ROW {
                        probe_stopped = Some(format!(
                            "{MAX_TIMEOUTS_IN_A_ROW} unshrunk failing cases in a row, up to case {index}, timed out when run in a fresh process, so the others were not looked at"
                        ));
                        break 'probe;
                    }
                    if probe.label.is_infra() {
                        // A case the worker failed that times out or breaks in a fresh
                        // process, where its replays run: an infra item, never a pass.
                        probe_infra.get_or_insert_with(|| {
                            format!(
                                "unshrunk failing case {index} was labelled {} ({}) when run in a fresh process",
                                probe.label,
                                infra_reason(&probe)
                            )
                        });
                    }
                    if probe.label != Label::AssertFail {
                        continue;
                    }
                    let outcome = match classify::unshrunk_stable(&plan, &inputs[index]) {
                        Ok(classify::Unshrunk::Undecided(labels)) => {
                            // A flicker: said in the note, since nothing else shows it (it
                            // may be a frozen fixture's failure on another input, or new).
                            if verdict(&labels, labels.len()) == Verdict::FreezeEligible {
                                probe_flickers.push((index, freezegate_replay::letters(&labels)));
                            }
                            continue;
                        }
                        Ok(classify::Unshrunk::Decided(record))
                            if record.action == Action::InfraQueue =>
                        {
                            // Its replays timed out or broke: an infra item; a stable failure
                            // after it is still looked for.
                            probe_infra.get_or_insert_with(|| {
                                format!(
                                    "unshrunk failing case {index}: {}",
                                    record.message.as_deref().unwrap_or("infra queue")
                                )
                            });
                            continue;
                        }
                        Ok(classify::Unshrunk::Decided(record)) => Ok(*record),
                        Err(e) => Err(e),
                    };
                    examined.push(Examined::new(
                        index,
                        probe.signature.clone(),
                        stderr_last_line(&probe.stderr.text),
                        outcome,
                        false,
                    ));
                    break 'probe;
                }
            }
        }
    }
    result.cases_run = u32::try_from(scan.done).unwrap_or(u32::MAX);
    result.shrinks =
        u32::try_from(examined.iter().filter(|e| e.shrunk).count()).unwrap_or(u32::MAX);
    result.oracle_calls = examined
        .iter()
        .filter(|e| e.shrunk)
        .filter_map(|e| e.record.as_ref().ok())
        .map(|r| r.oracle_calls)
        .sum();

    // The case reported: the one that blocks, else the first shrunk.
    let reported = examined.iter().position(|e| e.blocks(already)).unwrap_or(0);
    let others = |shrunk: bool| -> Vec<String> {
        examined
            .iter()
            .enumerate()
            .filter(|(k, e)| *k != reported && e.shrunk == shrunk)
            .map(|(_, e)| e.summary())
            .collect()
    };
    let (others, known) = (others(true), others(false));
    // One infra item per campaign: the first case that timed out or broke, else the first
    // failing case whose replays did.
    let infra = scan
        .infra
        .clone()
        .or_else(|| examined.iter().find_map(Examined::infra))
        .or_else(|| probe_stopped.clone())
        .or_else(|| probe_infra.clone());
    let Some(case) = examined.get(reported) else {
        // Unreachable: a failing case was examined above.
        result.status = CampaignStatus::Infra;
        result.note = Some("no failing case could be classified".into());
        result.infra = result.note.clone();
        result.duration_ms = millis(started.elapsed());
        return Ok(result);
    };
    result.failing_case = u32::try_from(case.index).ok();
    result.signature = case.signature.clone();
    // The input of the reported fixture: the case itself for `pin_origin`, which pins it as
    // it is, else the minimal input.
    let fixture_input = |record: &classify::Record| -> Option<String> {
        if record.action == Action::PinOrigin {
            std::str::from_utf8(&cases[case.index])
                .ok()
                .map(str::to_owned)
        } else {
            record.minimal.as_ref().map(|c| c.as_str().to_owned())
        }
    };
    match (&case.record, &case.unpinned) {
        (Err(message), Some(record)) => {
            // The property failed on this case; only its fixture files could not be written.
            // The campaign shows what would have been pinned, with no action taken.
            result.status = CampaignStatus::Failure;
            result.labels = record.labels.clone();
            result.trivial = record.trivial;
            result.fixture_id = record.meta.as_ref().map(|m| m.fixture_id.to_string());
            result.minimal = fixture_input(record);
            result.note = Some(format!(
                "{message}: the failure blocks, but its fixture is not pinned; fix what stops the write (a read-only tree, a full disk, something in the way under fixtures/) and run the gate again to pin it"
            ));
            if let Some(why) = &record.message {
                add_note(&mut result.note, why);
            }
        }
        (Err(message), None) => {
            result.status = CampaignStatus::Infra;
            result.note = Some(message.clone());
        }
        (Ok(record), _) => {
            result.status = match record.action {
                Action::InfraQueue => CampaignStatus::Infra,
                Action::NoFailure => CampaignStatus::Pass,
                _ => CampaignStatus::Failure,
            };
            result.action = Some(record.action.as_str().to_owned());
            result.labels = record.labels.clone();
            result.trivial = record.trivial;
            result.note = record.message.clone();
            if let Some(meta) = &record.meta {
                let id = meta.fixture_id.to_string();
                result.already_pinned =
                    record.already_pinned || already.is_some_and(|ids| ids.contains(&id));
                result.fixture_id = Some(id);
            }
            result.minimal = fixture_input(record);
            if (record.action.pins() || record.action == Action::AlreadyPinned)
                && result.note.is_none()
            {
                result.note = Some(if result.already_pinned {
                    "the same minimal input is already pinned: fix the property's code".to_owned()
                } else if record.action == Action::FreezeAfterPin {
                    "new fixture pinned in the working tree, whose replays mix passes and fails (a flicker): commit it with the patch, then make the property deterministic, or have a human freeze it from a runner the policy allows (xtask freeze)".to_owned()
                } else {
                    "new fixture pinned in the working tree: commit it with the patch, then make the property pass".to_owned()
                });
            }
        }
    }
    // The record of the failure reported, pinned or not.
    let found = match (&case.record, &case.unpinned) {
        (Ok(record), _) => Some(record),
        (Err(_), Some(record)) => Some(&**record),
        (Err(_), None) => None,
    };
    if let Some(record) = found {
        if case.signature.is_none()
            && record.action.pins()
            && let Some(line) = &case.stderr_line
        {
            // No signature: the stderr of the case's first failing run (a traceback's last
            // line: an import that failed, a crash) is the reader's only clue.
            add_note(
                &mut result.note,
                &format!("its first failing run's stderr ends: {line}"),
            );
        }
        if record.trivial {
            add_note(
                &mut result.note,
                "the minimal failing input is trivial: the oracle may be too weak",
            );
        }
    }
    let mut more = Vec::new();
    if !others.is_empty() {
        more.push(format!("also shrunk: {}", others.join(", ")));
    }
    if !known.is_empty() {
        more.push(format!("origins of pinned fixtures: {}", known.join(", ")));
    }
    if let Some(id) = held {
        more.push(format!(
            "pinned fixture {id} of this property blocks this run already, so the campaign stopped at its first failing case: fix that first"
        ));
    }
    if unshrunk > 0 {
        more.push(format!(
            "stopped after {MAX_CAMPAIGN_SHRINKS} shrinks (MAX_CAMPAIGN_SHRINKS): {unshrunk} more failing case{} not shrunk",
            if unshrunk == 1 { " was" } else { "s were" }
        ));
    }
    if let Some(stopped) = &probe_stopped {
        more.push(stopped.clone());
    }
    if let Some(broke) = &probe_infra {
        more.push(broke.clone());
    }
    if !probe_flickers.is_empty() {
        // Grouped by their replays' letters, so that a flicker unlike the others stands out.
        const SHOWN: usize = 8;
        let mut groups: Vec<(&str, Vec<usize>)> = Vec::new();
        for (index, letters) in &probe_flickers {
            match groups.iter_mut().find(|(l, _)| *l == letters.as_str()) {
                Some((_, cases)) => cases.push(*index),
                None => groups.push((letters.as_str(), vec![*index])),
            }
        }
        let groups: Vec<String> = groups
            .iter()
            .map(|(letters, cases)| {
                let shown: Vec<String> = cases.iter().take(SHOWN).map(usize::to_string).collect();
                let rest = cases.len().saturating_sub(SHOWN);
                format!(
                    "{letters} in case{} {}{}",
                    if cases.len() == 1 { "" } else { "s" },
                    shown.join(", "),
                    if rest > 0 {
                        format!(" and {rest} more")
                    } else {
                        String::new()
                    }
                )
            })
            .collect();
        more.push(format!(
            "unshrunk failing cases that flickered in their fresh replays and were not pinned: {}; each may be a frozen fixture's failure on another input, or a new flicker that the bound on shrinks hides",
            groups.join("; ")
        ));
    }
    if !more.is_empty() {
        let more = more.join("; ");
        result.note = Some(match result.note.take() {
            Some(n) => format!("{n}; {more}"),
            None => more,
        });
    }
    result.infra = if result.status == CampaignStatus::Infra {
        result.note.clone().or(infra)
    } else {
        infra
    };
    result.duration_ms = millis(started.elapsed());
    Ok(result)
}

/// The current time (UTC, whole seconds): the one place the gate reads the clock. A clock set
/// outside the years a ledger time can hold reads as the nearer end ([`Timestamp::MIN`] or
/// [`Timestamp::MAX`]).
pub fn clock_now() -> Timestamp {
    let now = time::OffsetDateTime::now_utc();
    Timestamp::from_datetime(now).unwrap_or(if now.year() < 0 {
        Timestamp::MIN
    } else {
        Timestamp::MAX
    })
}

/// Runs the gate and, with `base`, the patch checks of SPEC §9 step 2 on `base..HEAD`:
/// signatures on protected paths, gaming moves, and overrides that weaken the signed policy.
/// When a commit of the range changes something protected without an allowed signature (the
/// run blocks), a ledger row freezes only if, field for field, the ledger at `base` holds it
/// or a commit of the range that an allowed signer signed wrote it, and no such commit took
/// it out since; any other row's fixture is reported as a flicker with a note saying why.
pub fn run_with_base(
    settings: &Settings,
    ctx: &Context<'_>,
    base: Option<&str>,
) -> Result<Report, RunError> {
    let mut patch_findings = Vec::new();
    let mut section = None;
    let mut trust = None;
    let mut patch_report = None;
    if let Some(base) = base {
        let options = crate::patch::PatchOptions::default();
        let report = patch_report
            .insert(crate::patch::check_patch(&ctx.root, base, &options).map_err(RunError::Patch)?);
        trust = ledger_trust(settings, ctx, base, report, &options).map_err(RunError::Patch)?;
        let mut at_base = crate::patch::files_at(
            &ctx.root,
            &report.base,
            &[LEDGER_FILE, crate::config::CONFIG_FILE],
            &options,
        )
        .map_err(RunError::Patch)?
        .into_iter();
        let (base_ledger, base_config) = (at_base.next().flatten(), at_base.next().flatten());
        let head_ledger = std::fs::read(ctx.root.join(LEDGER_FILE)).ok();
        let base_config = base_config
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .and_then(|text| {
                crate::config::Config::parse(&text, Path::new(crate::config::CONFIG_FILE)).ok()
            });
        section = Some(crate::report::PatchSection {
            base: base.to_owned(),
            commits: report.commits.len(),
            ledger_diff: crate::diffs::ledger_diff(
                &crate::diffs::lenient_ledger(base_ledger.as_deref()),
                &crate::diffs::lenient_ledger(head_ledger.as_deref()),
            ),
            settings_diff: crate::diffs::settings_diff(base_config.as_ref(), &settings.config),
        });
        for v in &report.violations {
            patch_findings.push(Finding {
                file: Some(v.path.clone()),
                ..patch_finding(
                    true,
                    "patch.unsigned_protected_change",
                    format!(
                    "commit {} changes protected {} ({}, protected by {}) without a signature by a key in freeze/allowed_signers at {base} ({})",
                    short(&v.commit),
                    v.path,
                    serde_name(&v.change),
                    v.protected_by,
                        serde_name(&v.signature)
                    ),
                )
            });
        }
        for f in &report.findings {
            patch_findings.push(Finding {
                file: Some(f.file.clone()),
                // `0`: a finding about the whole file (`opaque-code`, `module-shadowed`).
                line: (f.line > 0).then(|| u64::from(f.line)),
                ..patch_finding(
                    f.blocking,
                    format!("gaming.{}", f.rule),
                    format!("commit {}: {}", short(&f.commit), f.explanation),
                )
            });
        }
        for w in &report.warnings {
            patch_findings.push(patch_finding(
                false,
                "patch.warning",
                match &w.commit {
                    Some(c) => format!("commit {}: {}", short(c), w.message),
                    None => w.message.clone(),
                },
            ));
        }
        let rust_properties: Vec<&str> = settings
            .config
            .properties
            .iter()
            .filter(|p| p.oracle.is_none())
            .map(|p| p.id.as_str())
            .collect();
        if ctx.rust_runner.is_none() && !rust_properties.is_empty() {
            patch_findings.push(patch_finding(
                false,
                "patch.rust_properties_of_this_build",
                format!(
                    "the Rust properties ({}) run the code this gate binary was built from: a gate built from {base} judges the base's code with them, not the patch's; pass --rust-runner with a build of the patch (docs/threat-model.md)",
                    rust_properties.join(", ")
                ),
            ));
        }
        for o in settings.weakening_overrides() {
            patch_findings.push(patch_finding(
                true,
                "patch.weakening_override",
                format!("the run overrides the signed policy and weakens it: {o}"),
            ));
        }
    }
    let mut report = run_trusting(settings, ctx, trust.as_ref())
        .map_err(|e| blame_unsigned(e, patch_report.as_ref()))?;
    report.patch = section;
    report.findings.extend(patch_findings);
    report.findings.sort();
    report.decide();
    Ok(report)
}

/// Which ledger rows may freeze in a `--base` run ([`Trust`]); `None` when every change of
/// the patch has an allowed signature, so that every valid row may. With an unsigned
/// change the run blocks anyway; this keeps its reports from showing a fixture frozen by a
/// row no allowed signer wrote, however the patch brought the row in (an unsigned commit, a
/// clean merge of unsigned halves, a merge with an old parent that still had it, a link).
fn ledger_trust(
    settings: &Settings,
    ctx: &Context<'_>,
    base: &str,
    report: &crate::patch::PatchReport,
    options: &crate::patch::PatchOptions,
) -> Result<Option<Trust>, crate::patch::PatchError> {
    if report.violations.is_empty() {
        return Ok(None);
    }
    // The rows that pass the schema, as the gate reads them (the rules do not matter here:
    // a row that breaks one freezes nothing anyway, so no fixture file is read).
    let policy = ledger_policy(settings);
    let signers = AllowedSigners::default();
    let no_fixtures = |_: &PropertyId, _: FixtureId| freezegate_ledger::FixtureFile::Missing;
    let checks = Checks::new(&policy, ctx.now, &signers, &no_fixtures);
    // The rows of the ledger at each revision read: none when it has no ledger (or a link or
    // folder in its place), `None` when its ledger does not parse.
    type Rows = Option<HashSet<freezegate_ledger::Row>>;
    let mut read: HashMap<String, Rows> = HashMap::new();
    let mut rows_at = |rev: &str| -> Result<Rows, crate::patch::PatchError> {
        if let Some(rows) = read.get(rev) {
            return Ok(rows.clone());
        }
        let bytes = crate::patch::files_at(&ctx.root, rev, &[LEDGER_FILE], options)?
            .pop()
            .flatten();
        let rows = match bytes {
            None => Some(HashSet::new()),
            Some(b) => freezegate_ledger::check_and_load(&b, &checks)
                .ok()
                .map(|(ledger, _)| ledger.into_rows().into_iter().collect()),
        };
        read.insert(rev.to_owned(), rows.clone());
        Ok(rows)
    };
    let mut trust = Trust {
        base: base.to_owned(),
        trusted: rows_at(&report.base)?.unwrap_or_default(),
        unsigned: HashMap::new(),
        revoked: HashMap::new(),
        mended: HashMap::new(),
    };
    for commit in &report.commits {
        // Only a commit whose own change touches the ledger, or a merge, can bring a row in.
        if commit.parents.len() < 2 && !commit.protected_paths.iter().any(|p| p == LEDGER_FILE) {
            continue;
        }
        let Some(own) = rows_at(&commit.commit)? else {
            continue;
        };
        let mut parents = Vec::with_capacity(commit.parents.len());
        for parent in &commit.parents {
            parents.push(rows_at(parent)?);
        }
        let brought = own
            .iter()
            .filter(|row| !parents.iter().flatten().any(|rows| rows.contains(*row)))
            .cloned();
        if commit.signature.status.is_allowed() {
            // The signer's word on each key the commit touched (a row of a parent it took out
            // or changed): a vouched row of that key that its ledger lacks is vouched for no
            // more, whichever version it was (the base's too), whoever puts it back later
            // without a signature. After a parent whose ledger does not parse, what it touched
            // is unknown: every vouched row its ledger lacks.
            let mended = parents.iter().any(Option::is_none);
            let touched: HashSet<freezegate_ledger::Key> = parents
                .iter()
                .flatten()
                .flatten()
                .filter(|r| !own.contains(*r))
                .map(freezegate_ledger::Row::key)
                .collect();
            let taken: Vec<freezegate_ledger::Row> = trust
                .trusted
                .iter()
                .filter(|r| !own.contains(*r) && (mended || touched.contains(&r.key())))
                .cloned()
                .collect();
            for row in taken {
                trust.trusted.remove(&row);
                trust.revoked.insert(row, commit.commit.clone());
            }
            if mended {
                // After a parent whose ledger does not parse, every row would look new: a
                // signer who mended the syntax did not write them.
                for row in brought {
                    trust.mended.insert(row, commit.commit.clone());
                }
            } else {
                for row in brought {
                    trust.revoked.remove(&row);
                    trust.mended.remove(&row);
                    trust.trusted.insert(row);
                }
            }
        } else {
            for row in brought {
                trust.unsigned.insert(row, commit.commit.clone());
            }
        }
    }
    Ok(Some(trust))
}

/// A finding of the patch checks about no file in particular (callers name one with struct
/// update syntax).
fn patch_finding(blocking: bool, rule: impl Into<String>, message: String) -> Finding {
    Finding {
        kind: FindingKind::Patch,
        blocking,
        file: None,
        line: None,
        column: None,
        rule: rule.into(),
        message,
    }
}

/// The snake_case name serde gives a unit enum variant (as the JSON reports spell it).
fn serde_name<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        _ => "?".to_owned(),
    }
}

fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

/// Why a gate run could not decide (exit 3).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The gate's own steps.
    #[error(transparent)]
    Gate(#[from] GateError),
    /// The patch could not be judged (git missing, REV unknown, REV's policy unreadable).
    #[error("the patch checks could not run")]
    Patch(#[source] crate::patch::PatchError),
    /// The gate's own steps failed on a protected file that commits of the range changed
    /// without an allowed signature ([`UnsignedBreak`]).
    #[error(transparent)]
    Unsigned(Box<UnsignedBreak>),
}

/// The gate's own steps failed on a protected file (the ledger, `allowed_signers`) that
/// commits of `--base`'s range changed without an allowed signature: the patch broke it.
/// The source says where.
#[derive(Debug, thiserror::Error)]
#[error(
    "{path} was changed without an allowed signature by commit {}",
    commits.join(", ")
)]
#[non_exhaustive]
pub struct UnsignedBreak {
    /// The file the error names.
    pub path: String,
    /// The commits (12 hex digits) that changed it, or a folder or link on its way, without
    /// an allowed signature, oldest first.
    pub commits: Vec<String>,
    /// The error.
    #[source]
    pub source: GateError,
}

/// The file a gate error names, if it names one.
fn error_file(e: &GateError) -> Option<&str> {
    match e {
        GateError::LedgerSyntax { path, .. }
        | GateError::Io { path, .. }
        | GateError::Signers { path, .. } => Some(path),
        _ => None,
    }
}

/// `e`, named as the doing of unsigned commits when such commits changed the file it names
/// (the file itself, or a folder or link on its way).
fn blame_unsigned(e: GateError, report: Option<&crate::patch::PatchReport>) -> RunError {
    let Some(path) = error_file(&e).map(str::to_owned) else {
        return RunError::Gate(e);
    };
    let mut commits: Vec<String> = Vec::new();
    for v in report.map_or(&[][..], |r| &r.violations[..]) {
        let on_the_way = path
            .strip_prefix(v.path.as_str())
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'));
        let commit = short(&v.commit).to_owned();
        if on_the_way && !commits.contains(&commit) {
            commits.push(commit);
        }
    }
    if commits.is_empty() {
        RunError::Gate(e)
    } else {
        RunError::Unsigned(Box::new(UnsignedBreak {
            path,
            commits,
            source: e,
        }))
    }
}

/// What a fixture's verdict means for the merge, given whether an active, valid ledger row
/// freezes it (`frozen`) and, when none does, why a row that names it freezes nothing
/// (`row_note`: it breaks a rule, or came in unsigned): a freeze excuses flicker, never a
/// regression; an infra verdict is infra, frozen or not.
fn fixture_status(
    verdict: Verdict,
    frozen: bool,
    row_note: Option<String>,
    infra_note: Option<String>,
) -> (FixtureStatus, Option<String>) {
    match (verdict, frozen) {
        (Verdict::BlockPatch, false) => (FixtureStatus::Regression, None),
        (Verdict::BlockPatch, true) => (
            FixtureStatus::Regression,
            Some(
                "frozen, but every replay failed: a freeze excuses flicker, not a regression"
                    .to_owned(),
            ),
        ),
        (Verdict::FreezeEligible, false) => (FixtureStatus::Flicker, row_note),
        (Verdict::FreezeEligible, true) => (FixtureStatus::Frozen, None),
        (Verdict::NotReproduced, false) => (FixtureStatus::Pass, None),
        (Verdict::NotReproduced, true) => (
            FixtureStatus::Pass,
            Some("frozen, but every replay of this run passed: if it keeps passing run after run, the freeze can be lifted (a flake may pass one run)".to_owned()),
        ),
        (Verdict::InfraQueue | Verdict::RejectMalformed, _) => (FixtureStatus::Infra, infra_note),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A generator that did not exit on its own is reported with its last stderr line, as
    /// one that failed is, so that the infra item says why it was stuck.
    #[test]
    fn a_stuck_or_stopped_generator_says_why() {
        let deadline = Duration::from_millis(60_000);
        let stderr = "warming up\nwaiting for the fixture server\n\n";
        assert_eq!(
            generator_status(&CommandEnd::TimedOut, deadline, stderr),
            Err("generator timed out after 60000 ms: waiting for the fixture server".to_owned())
        );
        assert_eq!(
            generator_status(&CommandEnd::StdoutOverflow, deadline, stderr),
            Err(format!(
                "generator printed more than {} MiB and was stopped: waiting for the fixture server",
                GENERATOR_STDOUT_CAP >> 20
            ))
        );
        assert_eq!(
            generator_status(&CommandEnd::TimedOut, deadline, ""),
            Err("generator timed out after 60000 ms".to_owned())
        );
    }

    /// A Rust strategy that draws what JSON cannot hold is its campaign's infra item, as a
    /// generator command's failure is, not an error that stops the whole gate.
    #[test]
    fn a_rust_strategy_drawing_a_nan_is_the_campaigns_infra_item() {
        let dir = tempfile::tempdir().unwrap();
        let mut registry = Registry::new();
        registry
            .property("p.nan", proptest::strategy::Just(f64::NAN), |_| Ok(()))
            .unwrap();
        let config = crate::config::Config::parse(
            "[policy]\nmin_cases = 1\n\n[[property]]\nid = \"p.nan\"\ncases = 3\n",
            Path::new("freezegate.toml"),
        )
        .unwrap();
        let settings =
            Settings::resolve(config, &crate::config::RunOverrides::default(), 1).unwrap();
        let ctx = Context::new(dir.path().to_path_buf(), &registry, "test".to_owned());
        let property = &settings.config.properties[0];
        match campaign_inputs(&settings, &ctx, property) {
            Ok(Some(Err(message))) => assert!(
                message.starts_with("generating inputs for p.nan failed: "),
                "{message}"
            ),
            Ok(other) => panic!("{other:?}"),
            Err(e) => panic!("an error of the whole run: {e}"),
        }
    }

    #[test]
    fn a_ledger_syntax_error_prints_with_the_line_and_column_of_its_cause() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("freeze")).unwrap();
        std::fs::write(root.join(LEDGER_FILE), "{\n  \"rows\": ").unwrap();
        let config =
            crate::config::Config::parse("[policy]\nseed = 5\n", Path::new("freezegate.toml"))
                .unwrap();
        let settings =
            Settings::resolve(config, &crate::config::RunOverrides::default(), 1).unwrap();
        let now: Timestamp = "2026-09-17T12:00:00Z".parse().unwrap();
        let Err(error) = load_ledger(root, &settings, now) else {
            panic!("a truncated ledger loads");
        };
        // The message leaves the place to its cause; the chain prints both, as the crate
        // docs' `main` does.
        assert_eq!(
            error.to_string(),
            "freeze/ledger.json: the ledger is not valid JSON"
        );
        assert_eq!(
            ErrorChain(&error).to_string(),
            "freeze/ledger.json: the ledger is not valid JSON: line 2, column 11: unexpected end of input"
        );
    }

    #[test]
    fn the_stderr_line_of_a_note_is_the_last_non_blank_one_and_bounded() {
        assert_eq!(
            stderr_last_line("Traceback\n  cannot import x  \n\n \n").as_deref(),
            Some("cannot import x")
        );
        assert_eq!(stderr_last_line(" \n\n"), None);
        // Node's uncaught exception: the error, not the frames and banner after it.
        assert_eq!(
            stderr_last_line("TypeError: x\n    at f (/t/p.js:1:1)\n\nNode.js v20.20.2\n")
                .as_deref(),
            Some("TypeError: x")
        );
        let long = "é".repeat(STDERR_LINE_CHARS + 5);
        let line = stderr_last_line(&long).unwrap_or_default();
        assert_eq!(line.chars().count(), STDERR_LINE_CHARS + 1);
        assert!(line.ends_with('…'));
    }

    use proptest::prelude::*;

    /// One pinned fixture of a generated run: its labels and whether a valid, active row
    /// freezes it.
    type FixtureCase = (Vec<Label>, bool);
    /// One campaign: found a failure, already pinned, dropped as not reproduced, has an infra
    /// item.
    type CampaignCase = (bool, bool, bool, bool);

    fn label() -> impl Strategy<Value = Label> {
        prop_oneof![
            4 => Just(Label::AssertPass),
            4 => Just(Label::AssertFail),
            1 => Just(Label::Timeout),
            1 => Just(Label::HarnessError),
        ]
    }

    fn fixture_case() -> impl Strategy<Value = FixtureCase> {
        (1usize..6).prop_flat_map(|n| {
            (
                prop_oneof![
                    prop::collection::vec(label(), n),
                    // Runs without infra labels are common enough to decide alone.
                    prop::collection::vec(
                        prop_oneof![Just(Label::AssertPass), Just(Label::AssertFail)],
                        n
                    ),
                ],
                any::<bool>(),
            )
        })
    }

    fn report(fixtures: &[FixtureCase], campaigns: &[CampaignCase], findings: &[bool]) -> Report {
        let fixtures = fixtures
            .iter()
            .enumerate()
            .map(|(i, (labels, frozen))| {
                let v = verdict(labels, labels.len());
                let (status, note) = fixture_status(v, *frozen, None, None);
                FixtureResult {
                    property_id: "p".into(),
                    fixture_id: format!("{i:016x}"),
                    path: String::new(),
                    labels: labels.clone(),
                    verdict: v,
                    status,
                    freeze: None,
                    note,
                    signature: None,
                    duration_ms: 0,
                }
            })
            .collect();
        let campaigns = campaigns
            .iter()
            .map(|&(failure, pinned, dropped, infra)| CampaignResult {
                property_id: "p".into(),
                cases: 10,
                cases_run: 10,
                status: match (failure, infra) {
                    (true, _) => CampaignStatus::Failure,
                    (false, true) => CampaignStatus::Infra,
                    (false, false) => CampaignStatus::Pass,
                },
                blocking: false,
                failing_case: None,
                action: failure.then(|| {
                    if dropped {
                        "drop_nonreproducible".to_owned()
                    } else {
                        "pin_fixture".to_owned()
                    }
                }),
                fixture_id: None,
                minimal: None,
                labels: Vec::new(),
                signature: None,
                already_pinned: pinned,
                trivial: false,
                oracle_calls: 0,
                shrinks: 0,
                note: None,
                infra: infra.then(|| "timeout".to_owned()),
                duration_ms: 0,
            })
            .collect();
        let findings = findings
            .iter()
            .map(|&blocking| Finding {
                kind: FindingKind::Patch,
                blocking,
                file: None,
                line: None,
                column: None,
                rule: "r".into(),
                message: "m".into(),
            })
            .collect();
        let mut report = Report {
            format: REPORT_FORMAT,
            settings: SettingsView {
                seed: 1,
                replays: 1,
                jobs: 1,
                env_class: "local".into(),
                runner_id: "local".into(),
                now: String::new(),
                patch_id: String::new(),
                properties: Vec::new(),
                overrides: Vec::new(),
                ledger_active: 0,
                ledger_expired: 0,
                rust_runner: None,
            },
            fixtures,
            campaigns,
            findings,
            expired_rows: Vec::new(),
            patch: None,
            decision: Decision {
                outcome: Outcome::Pass,
                exit_code: 0,
            },
            summary: Summary::default(),
        };
        report.decide();
        report
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// SPEC §9 step 5 and §8's precedence: the gate exits 1 iff a fixture fails every
        /// replay (frozen or not), a fixture flickers without a freeze, a campaign finds a new
        /// failure (not already pinned, not dropped) or a finding blocks; else 2 iff anything
        /// timed out or broke the harness; else 0. Judged from the labels alone.
        #[test]
        fn the_gate_exits_1_then_2_then_0_as_the_spec_says(
            fixtures in prop::collection::vec(fixture_case(), 0..6),
            campaigns in prop::collection::vec(any::<CampaignCase>(), 0..4),
            findings in prop::collection::vec(any::<bool>(), 0..3),
        ) {
            let report = report(&fixtures, &campaigns, &findings);
            let infra_label = |l: &Label| matches!(l, Label::Timeout | Label::HarnessError);
            let all = |labels: &[Label], want: Label| labels.iter().all(|l| *l == want);
            let regression = fixtures.iter().any(|(l, _)| all(l, Label::AssertFail));
            let unfrozen_flicker = fixtures.iter().any(|(l, frozen)| {
                !frozen
                    && !l.iter().any(infra_label)
                    && l.contains(&Label::AssertPass)
                    && l.contains(&Label::AssertFail)
            });
            let new_failure = campaigns.iter().any(|&(f, pinned, dropped, _)| f && !pinned && !dropped);
            let blocking = findings.iter().any(|&b| b);
            let infra = fixtures.iter().any(|(l, _)| l.iter().any(infra_label))
                || campaigns.iter().any(|c| c.3);
            let expected = if regression || unfrozen_flicker || new_failure || blocking {
                (Outcome::Blocked, 1)
            } else if infra {
                (Outcome::Infra, 2)
            } else {
                (Outcome::Pass, 0)
            };
            prop_assert_eq!((report.decision.outcome, report.decision.exit_code), expected);
            // A freeze excuses flicker, never a regression: a frozen fixture votes only when
            // every replay failed.
            for (f, (labels, frozen)) in report.fixtures.iter().zip(&fixtures) {
                if *frozen {
                    prop_assert_eq!(f.status.blocks(), all(labels, Label::AssertFail));
                }
                prop_assert_eq!(f.status == FixtureStatus::Frozen, *frozen && f.verdict == Verdict::FreezeEligible);
            }
        }
    }
}
