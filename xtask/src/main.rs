//! `cargo xtask`: the freezegate command line (SPEC §8).
//!
//! This binary parses arguments, calls the freezegate crates and maps their results to the
//! exit codes of SPEC §8. It holds no logic a crate could own: each subcommand lives in its
//! own module and is a thin shell over one crate's API.

/// `eprintln!` that carries on when stderr cannot be written (closed, a full disk,
/// `2>/dev/full`), where std's panics and the process would exit 101, a code SPEC §8 does
/// not have: a warning lost must not turn a ledger written or a report given into a crash.
/// Defined before the modules, so it is the `eprintln!` of all of them.
macro_rules! eprintln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// `eprint!` that carries on when stderr cannot be written (see `eprintln!` above).
macro_rules! eprint {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($arg)*);
    }};
}

mod canon;
mod classify;
mod demo;
mod exit;
mod freeze;
mod gate;
mod ledger;
mod properties;
mod replay;
mod root;
mod shrink;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

/// freezegate: shrink, pin, replay and gate property-test failures.
#[derive(Debug, Parser)]
#[command(name = "xtask", version, propagate_version = true)]
struct Cli {
    /// Act as if started in DIR.
    #[arg(short = 'C', global = true, value_name = "DIR")]
    dir: Option<PathBuf>,

    #[command(subcommand)]
    command: Command,
}

/// Machine-readable or human output, for commands that print a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Format {
    /// Text for people.
    #[default]
    Text,
    /// One JSON document on stdout, nothing else.
    Json,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Canonical bytes of one JSON document (stdin by default), without a newline.
    Canon(canon::Args),
    /// Shrinks, canonicalises, pins and replays one failing input, then acts by status.
    Classify(classify::Args),
    /// Walks through the whole promotion path on the seed examples in a temporary repository.
    Demo(demo::Args),
    /// The CI gate: validate, replay every pinned fixture, run the campaigns, decide.
    Gate(gate::Args),
    /// Runs one registered Rust property on stdin (the oracle protocol; used by the gate).
    #[command(name = "__freezegate-property", hide = true)]
    Property {
        /// The property id.
        id: String,
    },
    /// Replays a pinned fixture now and writes (or renews) its freeze row, or refuses.
    Freeze(freeze::Args),
    /// Checks, lists or lifts the rows of freeze/ledger.json.
    Ledger(ledger::Args),
    /// Replays a fixture N times on an oracle: the labels, the verdict, the detection power.
    Replay(replay::Args),
    /// Shrinks a failing input to a minimal one that fails the same way.
    Shrink(shrink::Args),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() {
                exit::USAGE
            } else {
                exit::OK
            };
            // clap prints help and version to stdout and usage errors to stderr.
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    if let Some(dir) = &cli.dir
        && let Err(e) = std::env::set_current_dir(dir)
    {
        eprintln!("error: cannot change to directory {}: {e}", dir.display());
        return ExitCode::from(exit::USAGE);
    }
    let start = match std::env::current_dir() {
        Ok(dir) => dir,
        Err(e) => {
            eprintln!("error: cannot read the current directory: {e}");
            return ExitCode::from(exit::USAGE);
        }
    };
    let root = freezegate_gate::config::repository_root(&start);
    let mut command = cli.command;
    // The repository's commands act in its root wherever they are started; their file
    // arguments keep the meaning they had where they were typed.
    let in_root = match &mut command {
        Command::Classify(args) => {
            args.anchor(&start);
            true
        }
        Command::Gate(args) => {
            args.anchor(&start);
            true
        }
        Command::Freeze(args) => {
            args.anchor(&start);
            true
        }
        Command::Ledger(_) => true,
        Command::Replay(args) => {
            args.oracle_dir = root.clone();
            false
        }
        Command::Shrink(args) => {
            args.oracle_dir = root.clone();
            false
        }
        Command::Canon(_) | Command::Demo(_) | Command::Property { .. } => false,
    };
    if in_root
        && root != start
        && let Err(e) = std::env::set_current_dir(&root)
    {
        eprintln!(
            "error: cannot change to the repository root {}: {e}",
            root.display()
        );
        return ExitCode::from(exit::USAGE);
    }
    // Commands that run oracles adopt the orphans their oracles leave, so every process of a
    // run is reaped here rather than by PID 1 (SPEC §4).
    let runs_oracles = !matches!(
        command,
        Command::Canon(_) | Command::Ledger(_) | Command::Property { .. }
    );
    if runs_oracles && let Err(e) = freezegate_gate::process::become_child_subreaper() {
        eprintln!("warning: cannot become a child subreaper, orphans go to PID 1: {e}");
    }
    // Oracles run in process groups of their own, out of reach of a terminal's Ctrl-C: on
    // SIGINT, SIGTERM or SIGHUP this process kills them, lets file writes in progress
    // finish, and exits with 128 + the signal. The hidden subcommand is itself an oracle and
    // keeps the default (its runner signals its group).
    let handles_signals = !matches!(command, Command::Canon(_) | Command::Property { .. });
    if handles_signals && let Err(e) = freezegate_gate::process::handle_stop_signals() {
        eprintln!("warning: {}", freezegate_gate::ErrorChain(&e));
    }
    let outcome = match command {
        Command::Canon(args) => canon::run(args),
        Command::Classify(args) => classify::run(args),
        Command::Demo(args) => demo::run(args),
        Command::Gate(args) => gate::run(args),
        Command::Property { id } => Ok(properties::serve(&id)),
        Command::Freeze(args) => freeze::run(args),
        Command::Ledger(args) => ledger::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Shrink(args) => shrink::run(args),
    };
    if runs_oracles {
        // Every run has ended and every process this command started was waited for: a child
        // left is a process an oracle left that no run's end could tie to its run.
        let orphans =
            freezegate_gate::process::kill_orphans(freezegate_gate::process::ORPHAN_LIMIT);
        if orphans > 0 {
            eprintln!(
                "note: killed {orphans} orphaned process{} that this command's children left running (an oracle's, most likely, out of its run's reach: a new session with an empty environment and none of the run's pipes)",
                if orphans == 1 { "" } else { "es" }
            );
        }
    }
    exit::finish(outcome)
}
