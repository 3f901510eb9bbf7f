//! `xtask gate`: the CI gate (SPEC §9).

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::Context;
use freezegate_gate::config::{Config, RunOverrides, Settings};
use freezegate_gate::outputs::{self, Output, Role};
use freezegate_gate::render::{self, Style};
use freezegate_gate::report::Report;
use freezegate_gate::run::{self, Progress};

use crate::exit::{Failure, Outcome, USAGE};
use crate::properties;

/// Report formats of `xtask gate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum GateFormat {
    /// Text for people (settings, findings, summary line).
    #[default]
    Text,
    /// The JSON report (`docs/gate-report.schema.json`).
    Json,
    /// JUnit XML for CI dashboards.
    Junit,
    /// GitHub workflow annotations, and a markdown summary to `$GITHUB_STEP_SUMMARY`.
    Github,
}

/// Settings a run may override (flags beat `PROP_SEED`, `REPLAYS`, `ENV_CLASS`, `RUNNER_ID`;
/// both beat the file).
#[derive(Debug, clap::Args)]
pub struct RunFlags {
    /// Seed of generators and replays (else `PROP_SEED`, else the file's).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Replay count (else `REPLAYS`, else the file's).
    #[arg(long)]
    pub replays: Option<usize>,
    /// Per-run deadline in milliseconds for every property.
    #[arg(long)]
    pub timeout_ms: Option<u64>,
    /// Parallel runs (else the file's `jobs`, else the number of cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// This runner's env class, `local` or `remote` (else `ENV_CLASS`, else `local`).
    #[arg(long, value_name = "CLASS")]
    pub env_class: Option<String>,
    /// This runner's id (else `RUNNER_ID`, else `local` for the local class; required for
    /// `remote`).
    #[arg(long, value_name = "ID")]
    pub runner_id: Option<String>,
    /// The time to act at, RFC 3339 (for tests): freeze rows are judged by it and pinned
    /// fixtures' `pinned_at` records it [default: the clock].
    #[arg(long)]
    pub now: Option<String>,
    /// `patch_id` of fixtures pinned by this run (default: the full SHA of HEAD).
    #[arg(long)]
    pub patch_id: Option<String>,
}

/// Arguments of `xtask gate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Judge every commit of REV..HEAD: signatures on protected paths, gaming moves.
    #[arg(long, value_name = "REV")]
    base: Option<String>,
    /// Report format.
    #[arg(long, value_enum, default_value_t)]
    format: GateFormat,
    /// Write the report to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Also write the JSON report to FILE, from the same run (next to `--format`'s).
    #[arg(long, value_name = "FILE")]
    json_out: Option<PathBuf>,
    /// Also write the JUnit XML report to FILE, from the same run.
    #[arg(long, value_name = "FILE")]
    junit_out: Option<PathBuf>,
    /// Also write the text report (settings block included, no colour) to FILE, from the
    /// same run.
    #[arg(long, value_name = "FILE")]
    text_out: Option<PathBuf>,
    /// Append infra items (timeouts, harness errors) as JSON lines to FILE, for the runner
    /// owners' queue.
    #[arg(long, value_name = "FILE")]
    infra_out: Option<PathBuf>,
    /// Run the Rust properties (those without an `oracle`) through BINARY, a build of the
    /// tree under test, instead of this binary: their campaign inputs and every run come from
    /// it. Needed when this gate is built from the base revision (`--base`).
    #[arg(long, value_name = "BINARY")]
    rust_runner: Option<PathBuf>,
    #[command(flatten)]
    run: RunFlags,
}

impl Args {
    /// Makes the report paths absolute against `start`, where the command was typed.
    pub fn anchor(&mut self, start: &std::path::Path) {
        // `--out -` is standard output, where the report goes without it.
        if self.out.as_deref() == Some(Path::new("-")) {
            self.out = None;
        }
        crate::root::anchor(start, &mut self.out);
        crate::root::anchor(start, &mut self.json_out);
        crate::root::anchor(start, &mut self.junit_out);
        crate::root::anchor(start, &mut self.text_out);
        crate::root::anchor(start, &mut self.infra_out);
        crate::root::anchor(start, &mut self.rust_runner);
    }

    /// The reports asked for besides `--format`'s (`--json-out`, `--junit-out`,
    /// `--text-out`), each with its flag.
    fn extra_reports(&self) -> impl Iterator<Item = (&'static str, GateFormat, &PathBuf)> {
        [
            ("--json-out", GateFormat::Json, &self.json_out),
            ("--junit-out", GateFormat::Junit, &self.junit_out),
            ("--text-out", GateFormat::Text, &self.text_out),
        ]
        .into_iter()
        .filter_map(|(flag, format, path)| path.as_ref().map(|p| (flag, format, p)))
    }

    /// The report files of the run, each with its flag: `--out` and the extra reports (not
    /// the queues it appends to).
    fn report_files(&self) -> impl Iterator<Item = (&'static str, &PathBuf)> {
        self.out
            .iter()
            .map(|p| ("--out", p))
            .chain(self.extra_reports().map(|(flag, _, p)| (flag, p)))
    }
}

/// The `--rust-runner` of a command, checked to be a file: a usage error otherwise.
pub fn runner_file(runner: Option<&std::path::Path>) -> Result<Option<PathBuf>, Failure> {
    match runner {
        Some(runner) if !runner.is_file() => Err(Failure::usage(anyhow::anyhow!(
            "--rust-runner {}: no such file (a build of the tree under test that serves `{}`)",
            runner.display(),
            freezegate_gate::rust_prop::PROPERTY_SUBCOMMAND
        ))),
        other => Ok(other.map(std::path::Path::to_path_buf)),
    }
}

/// A progress bar on stderr, drawn only on a terminal.
struct Bar {
    phase: Mutex<(String, usize, Instant)>,
}

impl Progress for Bar {
    fn phase(&self, name: &str, total: usize) {
        if let Ok(mut p) = self.phase.lock() {
            *p = (name.to_owned(), total, Instant::now());
        }
        eprint!("\r\x1b[2K{name}…");
    }

    fn tick(&self, done: usize) {
        let Ok(p) = self.phase.lock() else { return };
        let (name, total, _) = &*p;
        if *total == 0 {
            return;
        }
        let width = 30;
        let filled = (done * width / total).min(width);
        eprint!(
            "\r\x1b[2K{name} [{}{}] {done}/{total}",
            "#".repeat(filled),
            "-".repeat(width - filled)
        );
        if done >= *total {
            eprint!("\r\x1b[2K");
        }
    }
}

/// Shows the run's settings the moment the gate knows them, before any oracle runs (every
/// report of `run::run` has had them shown), then passes progress on: on stdout when the
/// text report goes there (the report then leaves them out), else on stderr.
struct Announce<'a> {
    inner: &'a dyn Progress,
    on_stdout: bool,
}

impl Progress for Announce<'_> {
    fn phase(&self, name: &str, total: usize) {
        self.inner.phase(name, total);
    }

    fn tick(&self, done: usize) {
        self.inner.tick(done);
    }

    fn settings(&self, view: &freezegate_gate::report::SettingsView) {
        let block = render::settings_text(view);
        if self.on_stdout {
            let mut out = std::io::stdout().lock();
            // A closed stdout fails the report's own write later, with its message.
            let _ = out.write_all(block.as_bytes()).and_then(|()| out.flush());
        } else {
            eprint!("{block}");
        }
    }
}

/// Resolves the settings of a run from `freezegate.toml`, the environment and the flags.
pub fn settings(flags: &RunFlags) -> Result<Settings, Failure> {
    let root = std::env::current_dir()
        .context("cannot read the current directory")
        .map_err(Failure::usage)?;
    let config = Config::load(&root).map_err(Failure::usage)?;
    let mut overrides = RunOverrides::from_env(|k| std::env::var(k).ok());
    overrides.flag_seed = flags.seed;
    overrides.flag_replays = flags.replays;
    overrides.flag_timeout_ms = flags.timeout_ms;
    overrides.flag_jobs = flags.jobs;
    overrides.flag_env_class = flags.env_class.clone();
    overrides.flag_runner_id = flags.runner_id.clone();
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    Settings::resolve(config, &overrides, cores).map_err(Failure::usage)
}

/// The candidate under test, recorded in the meta files `gate`, `classify` and `freeze` pin
/// and the ledger rows they write: `--patch-id`, else the full SHA of HEAD. An empty or blank
/// `--patch-id`, or no HEAD to read (git is not on `PATH`, the directory is not a repository,
/// HEAD has no commit), is bad input (exit 3, before any oracle runs), never an empty id or a
/// placeholder written.
pub fn pin_patch_id(flag: Option<String>, root: &Path) -> Result<String, Failure> {
    match flag {
        Some(p) if p.trim().is_empty() => Err(Failure::usage(anyhow::anyhow!(
            "--patch-id {p:?} is empty: name the candidate under test (a commit or pull request id), or leave the flag out to use the commit of HEAD"
        ))),
        Some(p) => Ok(p),
        None => run::head_commit(root).ok_or_else(|| {
            Failure::usage(anyhow::anyhow!(
                "cannot read the commit of HEAD with git: pass --patch-id"
            ))
        }),
    }
}

/// Parses `--now` or reads the clock.
pub fn now(flag: Option<&str>) -> Result<freezegate_ledger::Timestamp, Failure> {
    match flag {
        Some(text) => freezegate_ledger::Timestamp::parse_rfc3339(text)
            .with_context(|| format!("--now {text:?}"))
            .map_err(Failure::usage),
        None => Ok(run::clock_now()),
    }
}

/// Writes a report to `path` ([`outputs::write`]), or to stdout.
fn write_out(path: Option<&PathBuf>, text: &str) -> Result<(), Failure> {
    freezegate_gate::process::park_if_stopping();
    match path {
        Some(path) => outputs::write(path, text).map_err(Failure::usage),
        None => crate::exit::write_stdout(text),
    }
}

/// The files a run writes, each with the flag (or variable) that names it.
fn outputs_of(args: &Args) -> Vec<Output> {
    let mut out: Vec<Output> = args
        .report_files()
        .map(|(flag, path)| Output::new(flag, path.clone(), Role::Report))
        .collect();
    if let Some(path) = &args.infra_out {
        out.push(Output::new("--infra-out", path.clone(), Role::Queue));
    }
    if args.format == GateFormat::Github
        && let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY")
    {
        out.push(Output::new(
            "$GITHUB_STEP_SUMMARY",
            PathBuf::from(path),
            Role::RunnerFile,
        ));
    }
    out
}

/// The whole report in `format` (the text report with its settings block).
fn document_of(report: &Report, format: GateFormat, style: Style) -> String {
    match format {
        GateFormat::Text => {
            let mut text = render::settings_text(&report.settings);
            text.push_str(&render::body_text(report, style));
            text
        }
        GateFormat::Json => render::json(report),
        GateFormat::Junit => render::junit(report),
        GateFormat::Github => render::github(report),
    }
}

/// Runs `xtask gate`. When the gate cannot run at all (exit 3) a machine format still gets a
/// document, the error and its place, so that a dashboard shows why (the sentence also goes
/// to stderr as for every command).
pub fn run(args: Args) -> Outcome {
    // The reports of this run, or none: what stands at their paths goes first (unless it is
    // the gate's own, or also a queue the run appends to), whatever stops the run later.
    let outs = outputs_of(&args);
    let root = std::env::current_dir()
        .context("cannot read the current directory")
        .map_err(Failure::usage)?;
    outputs::prepare(&root, &outs, args.out.is_none()).map_err(Failure::usage)?;
    let summary = outs.iter().find(|o| o.role == Role::RunnerFile).cloned();
    let format = args.format;
    let out = args.out.clone();
    let extra: Vec<(GateFormat, PathBuf)> = args
        .extra_reports()
        .map(|(_, format, path)| (format, path.clone()))
        .collect();
    // Set once the report is out: an error after it (writing the step summary or the infra
    // queue) must not add a second document.
    let mut reported = false;
    let result = run_gate(args, &outs, &mut reported);
    if let Err(failure) = &result
        && failure.code == USAGE
        && !reported
    {
        let message = freezegate_gate::ErrorChain(&*failure.error).to_string();
        let place = render::error_place(failure.error.as_ref());
        let document = |format: GateFormat| match format {
            GateFormat::Text => None,
            GateFormat::Json => Some(render::error_json(&message, place.as_ref())),
            GateFormat::Junit => Some(render::error_junit(&message, place.as_ref())),
            GateFormat::Github => Some(render::error_github(&message, place.as_ref())),
        };
        // The exit code and stderr say it already if these writes fail too.
        if let Some(document) = document(format) {
            let _ = write_out(out.as_ref(), &document);
        }
        for (format, path) in &extra {
            if let Some(document) = document(*format) {
                let _ = write_out(Some(path), &document);
            }
        }
        if let Some(summary) = &summary {
            // As above: stderr and the exit code say it if this fails.
            let _ = outputs::append(
                summary,
                &render::error_step_summary(&message, place.as_ref()),
            );
        }
    }
    result
}

fn run_gate(args: Args, outs: &[Output], reported: &mut bool) -> Outcome {
    let settings = settings(&args.run)?;
    let now = now(args.run.now.as_deref())?;
    let root = std::env::current_dir()
        .context("cannot read the current directory")
        .map_err(Failure::usage)?;
    let registry = properties::registry();
    // The one proptest setting a campaign cannot fix comes from the environment: say so
    // when it may change the inputs of a Rust property's campaign.
    let rust_properties = settings
        .config
        .properties
        .iter()
        .any(|p| p.oracle.is_none() && registry.contains(p.id.as_str()));
    if rust_properties {
        for var in freezegate_gate::rust_prop::environment_changing_generation() {
            eprintln!(
                "warning: {var} is set: it changes the inputs proptest draws for Rust properties, so this run's campaigns differ from runs without it"
            );
        }
    }
    let exe = std::env::current_exe().ok();
    runner_file(args.rust_runner.as_deref())?;
    let machine = args.format != GateFormat::Text || args.out.is_some();
    let color = !machine && std::io::stdout().is_terminal();
    let style = Style { color };

    let patch_id = pin_patch_id(args.run.patch_id.clone(), &root)?;
    outputs::check_writable(outs).map_err(Failure::usage)?;
    let bar = Bar {
        phase: Mutex::new((String::new(), 0, Instant::now())),
    };
    let quiet = run::Quiet;
    // The settings come first: on stdout for people, on stderr for machine formats and for a
    // report written to a file.
    let progress = Announce {
        inner: if std::io::stderr().is_terminal() && !machine {
            &bar
        } else {
            &quiet
        },
        on_stdout: !machine,
    };
    let ctx = run::Context::new(root.clone(), &registry, patch_id)
        .with_now(now)
        .with_exe(exe)
        .with_rust_runner(args.rust_runner.clone())
        .with_progress(&progress);
    let mut report: Report =
        run::run_with_base(&settings, &ctx, args.base.as_deref()).map_err(Failure::usage)?;
    report.decide();

    let document = match args.format {
        // On stdout the settings are out already; a file gets the whole report.
        GateFormat::Text if progress.on_stdout => render::body_text(&report, style),
        format => document_of(&report, format, style),
    };
    write_out(args.out.as_ref(), &document)?;
    *reported = true;
    for (_, format, path) in args.extra_reports() {
        write_out(
            Some(path),
            &document_of(&report, format, Style { color: false }),
        )?;
    }
    if args.out.is_some() || args.format != GateFormat::Text {
        eprintln!("{}", report.summary_line());
    }
    for out in outs {
        let text = match out.role {
            Role::RunnerFile => render::github_step_summary(&report),
            Role::Queue => render::infra_lines(&report),
            _ => continue,
        };
        outputs::append(out, &text).map_err(Failure::usage)?;
    }
    if report.decision.exit_code == USAGE {
        return Ok(USAGE);
    }
    Ok(report.decision.exit_code)
}
