//! `xtask gate`: the CI gate (SPEC §9).

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::Context;
use freezegate_gate::config::{Config, RunOverrides, Settings};
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

/// Opens what the run will write to, before it starts, so that a path that cannot be
/// written is bad input (exit 3) at once, not after every oracle has run and the report
/// is lost. Each is opened to append, which changes nothing in a file that exists; one that
/// did not exist is removed again, so that a run that stops before its report leaves none.
fn check_writable(args: &Args) -> Result<(), Failure> {
    let open = |path: &Path, what: &str| {
        // A pipe or a device cannot be tried without a side effect (opening a named pipe and
        // closing it again ends its reader's input): it is written when the report is out.
        if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
            return Ok(());
        }
        let existed = std::fs::symlink_metadata(path).is_ok();
        std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .with_context(|| format!("cannot open {what} {}", path.display()))
            .map_err(Failure::usage)?;
        if !existed {
            // Best effort: an empty file left behind is all a failure here costs.
            let _ = std::fs::remove_file(path);
        }
        Ok(())
    };
    for (flag, path) in outputs(args) {
        open(&path, flag)?;
    }
    Ok(())
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

/// Writes a report to `path`, or to stdout. A new file is written whole, by a rename, so
/// that a reader never sees half of it; what is still there (a pipe, a device, a process
/// substitution's `/dev/fd/N`, a link out of the root: see [`remove_stale_reports`]) is
/// written in place.
fn write_out(path: Option<&PathBuf>, text: &str) -> Result<(), Failure> {
    freezegate_gate::process::park_if_stopping();
    match path {
        Some(path) if std::fs::symlink_metadata(path).is_ok() => std::fs::write(path, text)
            .with_context(|| format!("cannot write {}", path.display()))
            .map_err(Failure::usage),
        Some(path) => freezegate_canon::fixture::write_atomic(path, text.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))
            .map_err(Failure::usage),
        None => crate::exit::write_stdout(text),
    }
}

/// The files a run writes, each with the flag (or variable) that names it.
fn outputs(args: &Args) -> Vec<(&'static str, PathBuf)> {
    let mut out: Vec<(&'static str, PathBuf)> = args
        .report_files()
        .map(|(flag, path)| (flag, path.clone()))
        .collect();
    if let Some(path) = &args.infra_out {
        out.push(("--infra-out", path.clone()));
    }
    if args.format == GateFormat::Github
        && let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY")
    {
        out.push(("$GITHUB_STEP_SUMMARY", PathBuf::from(path)));
    }
    out
}

/// `path` as the file system names it: resolved (links, `..`) when it exists; else, after
/// the links that lead nowhere yet (the file a write would create), its folder resolved when
/// that exists.
fn resolved(path: &Path) -> PathBuf {
    let mut path = path.to_path_buf();
    for _ in 0..40 {
        if let Ok(real) = std::fs::canonicalize(&path) {
            return real;
        }
        match std::fs::read_link(&path) {
            Ok(target) => {
                path = path
                    .parent()
                    .map_or(target.clone(), |dir| dir.join(&target))
            }
            Err(_) => break,
        }
    }
    match (path.parent(), path.file_name()) {
        (Some(dir), Some(name)) => std::fs::canonicalize(if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        })
        .map_or_else(|_| path.to_path_buf(), |dir| dir.join(name)),
        _ => path.to_path_buf(),
    }
}

/// The root the run works in, resolved.
fn resolved_root() -> Option<PathBuf> {
    std::env::current_dir().and_then(std::fs::canonicalize).ok()
}

/// `path` with `.` and `..` taken away as written, links not followed.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Outputs that would write where the caller did not mean, usage errors before anything is
/// touched: one among the gate's own files (`freezegate.toml`, `freeze/`, `fixtures/` of the
/// root; through a link too), which it would replace; one inside the root whose folder is a
/// link out of it (a patch could place that link and aim the run's writes, and its removal
/// of an earlier report, anywhere); a queue that is a link inside the root; and `-` for a
/// report besides `--format`'s, which has standard output.
fn check_own_files(args: &Args) -> Result<(), Failure> {
    let Some(root) = resolved_root() else {
        return Ok(());
    };
    let written_root = std::env::current_dir().map(|d| lexical(&d)).ok();
    for (flag, path) in outputs(args) {
        let refuse = |why: &str| {
            Err(Failure::usage(anyhow::anyhow!(
                "{flag} {}: {why}",
                path.display()
            )))
        };
        if path.as_os_str() == "-" {
            return refuse("standard output holds the report of --format: name a file");
        }
        let as_written = lexical(&path);
        let inside = written_root
            .as_ref()
            .is_some_and(|r| as_written.starts_with(r))
            || as_written.starts_with(&root);
        let folder_outside = as_written
            .parent()
            .and_then(|dir| std::fs::canonicalize(dir).ok())
            .is_some_and(|dir| !dir.starts_with(&root));
        if flag != "$GITHUB_STEP_SUMMARY" && inside && folder_outside {
            return refuse(
                "its folder is a link out of the repository: name the folder it points to",
            );
        }
        if flag == "--infra-out"
            && inside
            && std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink())
        {
            return refuse("a link inside the repository: name the queue's own file");
        }
        let here = resolved(&path);
        if here == root.join(freezegate_gate::config::CONFIG_FILE)
            || here.starts_with(root.join("freeze"))
            || here.starts_with(root.join(freezegate_canon::fixture::FIXTURES_DIR))
        {
            return refuse(
                "the gate's own files (freezegate.toml, freeze/, fixtures/) take no output",
            );
        }
    }
    Ok(())
}

/// What a path names: the file (device and inode) when it exists, else the path resolved; a
/// character device (`/dev/null`, a terminal) is no file two outputs could spoil.
#[derive(PartialEq, Eq)]
enum Identity {
    File(u64, u64),
    Path(PathBuf),
    Device(usize),
}

fn identity(path: &Path, index: usize) -> Identity {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    match std::fs::metadata(path) {
        Ok(m) if m.file_type().is_char_device() => Identity::Device(index),
        Ok(m) => Identity::File(m.dev(), m.ino()),
        Err(_) => Identity::Path(resolved(path)),
    }
}

/// Two of a run's outputs naming one file (however spelt: `/dev/stdout` and
/// `/proc/self/fd/1` are one pipe), or one naming the standard output that `--format`'s
/// report goes to, would leave whichever was written last, or mix them (or remove a queue as
/// an earlier report): a usage error, before anything is touched.
fn check_distinct(args: &Args) -> Result<(), Failure> {
    let mut outputs: Vec<(&'static str, PathBuf)> = Vec::new();
    if args.out.is_none() {
        outputs.push((
            "the standard output of --format",
            PathBuf::from("/dev/stdout"),
        ));
    }
    outputs.extend(self::outputs(args));
    let identities: Vec<Identity> = outputs
        .iter()
        .enumerate()
        .map(|(i, (_, p))| identity(p, i))
        .collect();
    for (i, (flag, path)) in outputs.iter().enumerate() {
        if let Some(at) = identities[..i].iter().position(|id| *id == identities[i]) {
            let other = outputs[at].0;
            return Err(Failure::usage(anyhow::anyhow!(
                "{flag} {} is also {other}: give each output its own file",
                path.display()
            )));
        }
    }
    Ok(())
}

/// Removes what stands at the report paths (not the queues the run appends to), so that each
/// holds this run's report or does not exist: a run stopped before its report (a signal, a
/// job timeout) leaves none, never an earlier run's, nor one the patch committed there for
/// an artifact upload to publish. A regular file goes, and so does a link inside the root
/// (the patch's to place); a link out of the root (`/dev/stdout`), a pipe or a device is
/// where the caller wants the report, and stays. A file that cannot be removed is a usage
/// error.
fn remove_stale_reports(args: &Args) -> Result<(), Failure> {
    let root = resolved_root();
    for (flag, path) in args.report_files() {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            continue;
        };
        let kind = meta.file_type();
        let in_root = || {
            path.parent()
                .and_then(|dir| std::fs::canonicalize(dir).ok())
                .zip(root.as_ref())
                .is_some_and(|(dir, root)| dir.starts_with(root))
        };
        if kind.is_file() || (kind.is_symlink() && in_root()) {
            std::fs::remove_file(path)
                .with_context(|| {
                    format!("cannot remove the earlier {flag} report {}", path.display())
                })
                .map_err(Failure::usage)?;
        }
    }
    Ok(())
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

/// Appends `text` to the file at `path` (created if need be); `what` names it in the error.
fn append(path: &Path, what: &str, text: &str) -> Result<(), Failure> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut file| file.write_all(text.as_bytes()))
        .with_context(|| format!("cannot write {what} {}", path.display()))
        .map_err(Failure::usage)
}

/// Runs `xtask gate`. When the gate cannot run at all (exit 3) a machine format still gets a
/// document, the error and its place, so that a dashboard shows why (the sentence also goes
/// to stderr as for every command).
pub fn run(args: Args) -> Outcome {
    // The reports of this run, or none: what stands at their paths goes first (unless it is
    // the gate's own, or also a queue the run appends to), whatever stops the run later.
    check_own_files(&args)?;
    check_distinct(&args)?;
    remove_stale_reports(&args)?;
    let format = args.format;
    let out = args.out.clone();
    let extra: Vec<(GateFormat, PathBuf)> = args
        .extra_reports()
        .map(|(_, format, path)| (format, path.clone()))
        .collect();
    // Set once the report is out: an error after it (writing the step summary or the infra
    // queue) must not add a second document.
    let mut reported = false;
    let result = run_gate(args, &mut reported);
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
        if format == GateFormat::Github
            && let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY")
        {
            // As above: stderr and the exit code say it if this fails.
            let _ = append(
                Path::new(&path),
                "$GITHUB_STEP_SUMMARY",
                &render::error_step_summary(&message, place.as_ref()),
            );
        }
    }
    result
}

fn run_gate(args: Args, reported: &mut bool) -> Outcome {
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
    check_writable(&args)?;
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
    if args.format == GateFormat::Github
        && let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY")
    {
        append(
            Path::new(&path),
            "$GITHUB_STEP_SUMMARY",
            &render::github_step_summary(&report),
        )?;
    }
    if let Some(path) = &args.infra_out {
        append(path, "--infra-out", &render::infra_lines(&report))?;
    }
    if report.decision.exit_code == USAGE {
        return Ok(USAGE);
    }
    Ok(report.decision.exit_code)
}
