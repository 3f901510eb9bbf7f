//! `xtask demo`: the whole promotion path on the seed examples, in a temporary git
//! repository, with real processes, narrated step by step.
//!
//! The demo runs the real command line (`gate`, `freeze`) of the binary it is given, so what
//! a newcomer sees is what CI does. Its properties are Python oracles speaking the command
//! protocol: a deep merge claimed to be associative (where `null` deletes a key, so it is
//! not), mixed-rate invoice tax whose cached total drifts from the fresh sum (decimal money),
//! a role allow-list where user id 0 gets an empty role, a report header that flickers with
//! the process's string hash seed, and a pager that hangs on an empty query.
//!
//! The demo never fails by chance: the flickering property replays 30 times, so the chance
//! that its flicker hides (all passes or all fails) is about 3 in 10^8; its generator makes
//! half of its cases exports, so a campaign misses the flicker with a chance under 10^-7.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// The demo's files: name and contents of the first (buggy) version.
const FILES: &[(&str, &str)] = &[
    ("freezegate.toml", include_str!("../demo/freezegate.toml")),
    // The writers' lock beside the ledger is never committed.
    (".gitignore", "/freeze/.ledger.lock\n"),
    ("oracle.py", include_str!("../demo/oracle.py")),
    ("merge.py", include_str!("../demo/merge.py")),
    ("gen_merge.py", include_str!("../demo/gen_merge.py")),
    ("invoice.py", include_str!("../demo/invoice.py")),
    ("gen_invoice.py", include_str!("../demo/gen_invoice.py")),
    ("roles.py", include_str!("../demo/roles.py")),
    ("gen_roles.py", include_str!("../demo/gen_roles.py")),
    ("columns.py", include_str!("../demo/columns.py")),
    ("gen_columns.py", include_str!("../demo/gen_columns.py")),
    ("search.py", include_str!("../demo/search.py")),
    ("gen_search.py", include_str!("../demo/gen_search.py")),
];

/// The fixes, written over the buggy versions once the failures are pinned.
const FIXES: &[(&str, &str)] = &[
    ("merge.py", include_str!("../demo/merge_fixed.py")),
    ("invoice.py", include_str!("../demo/invoice_fixed.py")),
    ("roles.py", include_str!("../demo/roles_fixed.py")),
    ("search.py", include_str!("../demo/search_fixed.py")),
];

/// The flickering property the demo freezes.
pub const FLICKER: &str = "report.header_keeps_declared_order";

/// The human who owns the demo's freeze (a principal of its `freeze/allowed_signers`).
pub const OWNER: &str = "alice@example.com";

const SIGNERS: &str = "alice@example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOm+iqtWY8JcllVdNqblscY+uEw8dN5PHWCH30uKwyvt\n";

/// Why the demo stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DemoError {
    /// A file or directory could not be written.
    #[error("cannot write {}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A command could not be started.
    #[error("cannot run {command}")]
    Spawn {
        /// The command.
        command: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A step ended otherwise than the demo expects.
    #[error("step {step:?} exited {got}, expected {expected}:\n{output}")]
    Unexpected {
        /// The step.
        step: String,
        /// Its exit code.
        got: i32,
        /// The code the demo expected.
        expected: i32,
        /// What it printed.
        output: String,
    },
    /// The gate pinned no flickering fixture to freeze.
    #[error("the gate pinned no fixture of {FLICKER}")]
    NoFlicker,
}

/// What the demo needs: the freezegate binary to run, where to work, where to narrate.
pub struct Demo<'a> {
    /// The `xtask` binary (the demo runs its `gate` and `freeze`).
    pub exe: PathBuf,
    /// The repository to create (must not exist or be empty).
    pub dir: PathBuf,
    /// The narration.
    pub out: &'a mut dyn Write,
    /// `PATH` for the commands the demo runs (see [`Demo::new`]).
    path: Option<std::ffi::OsString>,
}

/// `PATH` with the directory of the real Python interpreter first, when `python3` on `PATH`
/// is a launcher script (pyenv's shims cost hundreds of milliseconds per start, and the demo
/// starts Python hundreds of times). `None` leaves `PATH` alone.
fn python_path() -> Option<std::ffi::OsString> {
    let out = Command::new("python3")
        .args([
            "-c",
            "import os, sys; print(os.path.dirname(os.path.realpath(sys.executable)))",
        ])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let dir = String::from_utf8(out.stdout).ok()?;
    let dir = Path::new(dir.trim());
    if !out.status.success() || !dir.join("python3").exists() {
        return None;
    }
    let mut paths = vec![dir.to_path_buf()];
    paths.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(paths).ok()
}

struct Step {
    code: i32,
    stdout: String,
    stderr: String,
}

impl<'a> Demo<'a> {
    /// A demo of `exe` in `dir`, narrated to `out`. Python properties run on the real
    /// interpreter behind `python3` when that is a launcher script.
    pub fn new(exe: PathBuf, dir: PathBuf, out: &'a mut dyn Write) -> Demo<'a> {
        Demo {
            exe,
            dir,
            out,
            path: python_path(),
        }
    }

    fn say(&mut self, text: &str) {
        let _ = writeln!(self.out, "{text}");
        let _ = self.out.flush();
    }

    fn write(&self, name: &str, text: &str) -> Result<(), DemoError> {
        let path = self.dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| DemoError::Io {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        std::fs::write(&path, text).map_err(|source| DemoError::Io { path, source })
    }

    fn git(&self, args: &[&str]) -> Result<(), DemoError> {
        let status = Command::new("git")
            .arg("-C")
            .arg(&self.dir)
            .args(["-c", "user.name=Demo", "-c", "user.email=demo@example.com"])
            .args(["-c", "commit.gpgsign=false"])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|source| DemoError::Spawn {
                command: format!("git {}", args.join(" ")),
                source,
            })?;
        if status.success() {
            Ok(())
        } else {
            Err(DemoError::Unexpected {
                step: format!("git {}", args.join(" ")),
                got: status.code().unwrap_or(-1),
                expected: 0,
                output: String::new(),
            })
        }
    }

    fn commit(&mut self, message: &str) -> Result<(), DemoError> {
        self.git(&["add", "-A"])?;
        self.git(&["commit", "-q", "-m", message])?;
        self.say(&format!("  $ git commit -am {message:?}"));
        Ok(())
    }

    /// Runs `xtask ARGS` in the repository with `env`, shows it, and checks its exit code.
    fn xtask(
        &mut self,
        env: &[(&str, &str)],
        args: &[&str],
        expected: i32,
    ) -> Result<Step, DemoError> {
        let shown_env: String = env.iter().map(|(k, v)| format!("{k}={v} ")).collect();
        let shown_args: Vec<String> = args
            .iter()
            .map(|a| {
                if a.contains(' ') {
                    format!("{a:?}")
                } else {
                    (*a).to_owned()
                }
            })
            .collect();
        self.say(&format!(
            "  $ {shown_env}cargo xtask {}",
            shown_args.join(" ")
        ));
        let mut cmd = Command::new(&self.exe);
        cmd.arg("-C").arg(&self.dir).args(args);
        if let Some(path) = &self.path {
            cmd.env("PATH", path);
        }
        for var in [
            "ENV_CLASS",
            "RUNNER_ID",
            "PROP_SEED",
            "REPLAYS",
            "FREEZEGATE_WORKER",
        ] {
            cmd.env_remove(var);
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        // The step is another xtask with oracles of its own: a stopping signal sent to this
        // one alone must reach it, or it and its oracles would outlive the demo.
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let (child, _forwarded) =
            crate::process::ForwardStop::spawn(&mut cmd).map_err(|source| DemoError::Spawn {
                command: format!("xtask {}", args.join(" ")),
                source,
            })?;
        let output = child
            .wait_with_output()
            .map_err(|source| DemoError::Spawn {
                command: format!("xtask {}", args.join(" ")),
                source,
            })?;
        // A stop that ended the step is ending this process too: its output and exit code
        // (143) are the stop's, not the demo's.
        crate::process::park_if_stopping();
        let step = Step {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        };
        for line in step.stdout.lines().chain(step.stderr.lines()) {
            self.say(&format!("    {line}"));
        }
        self.say(&format!("    (exit {})", step.code));
        if step.code != expected {
            return Err(DemoError::Unexpected {
                step: args.join(" "),
                got: step.code,
                expected,
                output: format!("{}{}", step.stdout, step.stderr),
            });
        }
        Ok(step)
    }

    /// Runs the demo.
    pub fn run(&mut self) -> Result<(), DemoError> {
        let started = Instant::now();
        std::fs::create_dir_all(&self.dir).map_err(|source| DemoError::Io {
            path: self.dir.clone(),
            source,
        })?;
        let dir = self.dir.display().to_string();
        self.say(&format!(
            "freezegate demo: the promotion path on the seed examples, in {dir}\n"
        ));

        self.say("1. A repository with five properties, each a Python oracle speaking the");
        self.say(
            "   command protocol (JSON on stdin; exit 0 holds, 1 fails), each with a generator.",
        );
        for (name, text) in FILES {
            self.write(name, text)?;
        }
        self.write("freeze/allowed_signers", SIGNERS)?;
        self.git(&["init", "-q"])?;
        self.commit("property suite")?;

        self.say("\n2. The gate runs each property's campaign under the fixed seed. A failure is");
        self.say(
            "   shrunk to a minimal input, canonicalised, pinned under fixtures/ and replayed:",
        );
        self.say(
            "   all replays fail = a regression; mixed = a flicker; a timeout = the infra queue.",
        );
        let first = self.xtask(&[], &["gate"], 1)?;
        let fixture = first
            .stdout
            .lines()
            .find(|l| l.contains(FLICKER) && l.contains("freeze_after_pin"))
            .and_then(|l| {
                l.split_whitespace()
                    .skip_while(|w| *w != "freeze_after_pin")
                    .nth(1)
            })
            .map(str::to_owned)
            .ok_or(DemoError::NoFlicker)?;

        self.say("\n3. The patch commits the fixtures: failures become fixtures, kept forever.");
        self.commit("pin the fixtures the gate found")?;

        self.say(
            "\n4. The bugs are fixed (merge, invoice cache, role of user 0, pager on an empty",
        );
        self.say("   query). The pinned fixtures now pass; the flicker still blocks.");
        for (name, text) in FIXES {
            self.write(name, text)?;
        }
        self.commit("fix merge, invoice cache, roles and paging")?;
        self.xtask(&[], &["gate"], 1)?;

        let freeze_args = [
            "freeze",
            "--property",
            FLICKER,
            "--fixture",
            fixture.as_str(),
            "--owner",
            OWNER,
            "--reason",
            "header built from a set: order follows the string hash seed",
            "--expires-in",
            "7",
        ];
        self.say("\n5. A human asks to freeze the flicker. From a laptop it is refused: local");
        self.say("   runs never get a vote.");
        self.xtask(&[], &freeze_args, 1)?;

        self.say(
            "\n6. On a remote runner the fixture is replayed again; it flickers, so the row is",
        );
        self.say("   written, keyed by the fixture's digest, with an owner and an expiry.");
        self.xtask(
            &[("ENV_CLASS", "remote"), ("RUNNER_ID", "ci-linux-1")],
            &freeze_args,
            0,
        )?;
        self.say("  (in a real repository the human signs this commit: the gate checks it)");
        self.commit("freeze the header flicker for 7 days")?;

        self.say("\n7. The gate passes: the frozen fixture still runs, but has no vote.");
        self.xtask(&[], &["gate"], 0)?;

        self.say(&format!(
            "\nDone in {:.1} s. Look around: fixtures/, freeze/ledger.json, git log.",
            started.elapsed().as_secs_f64()
        ));
        Ok(())
    }
}

/// Whether `dir` can hold the demo: absent, or an empty directory.
pub fn usable_dir(dir: &Path) -> bool {
    match std::fs::read_dir(dir) {
        Ok(mut entries) => entries.next().is_none(),
        Err(_) => !dir.exists(),
    }
}
