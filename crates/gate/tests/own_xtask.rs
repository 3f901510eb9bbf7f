//! A repository's own xtask, built from this crate's API alone (the crate docs' "Your own
//! xtask"), stopped by SIGTERM while an oracle runs: it exits with 143 and leaves no process
//! of the run, the one that left its group included (SPEC §4: no process left).
//!
//! This file is a program (`harness = false`): run by `cargo test` it builds a repository
//! whose one property hangs, starts itself there as the xtask (`OWN_XTASK_CHILD=1`), and
//! sends it SIGTERM once the oracle runs. It does so twice: with a shell oracle, and with an
//! oracle slow to die (it holds much memory, which the kernel frees before the process's
//! children are handed on), whose escaped child reaches the xtask only late in the stop.

mod libtest_args;

use std::path::Path;
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use freezegate_gate::config::{Config, RunOverrides, Settings};
use freezegate_gate::proptest;
use freezegate_gate::render::{self, Style};
use freezegate_gate::rust_prop::{PROPERTY_SUBCOMMAND, Registry, RegistryError};
use freezegate_gate::{ErrorChain, process, run};

/// The tests' names, for `--list` and filters.
const NAMES: [&str; 4] = [
    "own_xtask_stopped_by_sigterm_exits_143_and_leaves_no_oracle",
    "own_xtask_stopped_by_sigterm_kills_the_escapee_of_an_oracle_slow_to_die",
    "own_xtask_shrinks_a_rust_property_whose_panic_message_holds_the_input",
    "own_xtask_reads_the_ci_recipes_command_line_and_refuses_the_rest",
];

/// Set in the environment of the copy of this program that plays the xtask.
const CHILD: &str = "OWN_XTASK_CHILD";

fn main() -> ExitCode {
    if std::env::var_os(CHILD).is_some() {
        return own_xtask();
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--list") {
        for name in NAMES {
            println!("{name}: test");
        }
        return ExitCode::SUCCESS;
    }
    let tests: [(&str, fn()); 4] = [
        (NAMES[0], stopped_by_sigterm_exits_143_and_leaves_no_oracle),
        (NAMES[1], an_escapee_of_an_oracle_slow_to_die_is_killed),
        (NAMES[2], a_panic_message_holding_the_input_still_shrinks),
        (
            NAMES[3],
            the_ci_recipes_command_line_is_read_and_the_rest_refused,
        ),
    ];
    let selected: Vec<_> = tests
        .into_iter()
        .filter(|(name, _)| libtest_args::selects(&args, name))
        .collect();
    println!("running {} tests", selected.len());
    for (name, test) in selected {
        test();
        println!("test {name} ... ok");
    }
    ExitCode::SUCCESS
}

/// The xtask's Rust properties: one, whose `assert_eq!` message holds the input (`left: 3`).
fn registry() -> Result<Registry, RegistryError> {
    let mut registry = Registry::new();
    registry.property(
        "vec.none_above_500",
        proptest::collection::vec(0u32..1000, 1..20),
        |v: &Vec<u32>| {
            let above = v.iter().filter(|&&x| x > 500).count();
            assert_eq!(above, 0, "values above 500 in {v:?}");
            Ok(())
        },
    )?;
    Ok(registry)
}

/// The crate docs' example `main`, with the registry above.
fn own_xtask() -> ExitCode {
    match xtask() {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            process::park_if_stopping();
            eprintln!("error: {}", ErrorChain(&*error));
            ExitCode::from(3)
        }
    }
}

/// The crate docs' command line: `[-C DIR] [gate] [--base REV] [--rust-runner BINARY]
/// [--format text|json]`, anything else refused.
#[derive(Default)]
struct Cli {
    dir: Option<std::path::PathBuf>,
    base: Option<String>,
    rust_runner: Option<std::path::PathBuf>,
    json: bool,
}

fn cli(mut args: impl Iterator<Item = String>) -> Result<Cli, String> {
    let mut cli = Cli::default();
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "gate" => {}
            "-C" => cli.dir = Some(value()?.into()),
            "--base" => cli.base = Some(value()?),
            "--rust-runner" => cli.rust_runner = Some(value()?.into()),
            "--format" => {
                cli.json = match value()?.as_str() {
                    "json" => true,
                    "text" => false,
                    other => return Err(format!("unknown format {other}")),
                }
            }
            other => return Err(format!("unexpected argument {other}")),
        }
    }
    Ok(cli)
}

fn xtask() -> Result<u8, Box<dyn std::error::Error>> {
    let registry = registry()?;
    let args: Vec<String> = std::env::args().collect();
    if let [_, subcommand, id] = args.as_slice()
        && subcommand == PROPERTY_SUBCOMMAND
    {
        return Ok(registry.serve_stdio(id));
    }
    let cli = cli(args.into_iter().skip(1))?;
    process::setup()?;
    let root = match cli.dir {
        Some(dir) => dir,
        None => std::env::current_dir()?,
    };
    let config = Config::load(&root)?;
    let overrides = RunOverrides::from_env(|key| std::env::var(key).ok());
    let settings = Settings::resolve(config, &overrides, 2)?;
    let patch_id = run::head_commit(&root).ok_or("cannot read the commit of HEAD")?;
    let ctx = run::Context::new(root, &registry, patch_id).with_rust_runner(cli.rust_runner);
    let mut report = run::run_with_base(&settings, &ctx, cli.base.as_deref())?;
    report.decide();
    process::kill_orphans(process::ORPHAN_LIMIT);
    process::park_if_stopping();
    if cli.json {
        print!("{}", render::json(&report));
    } else {
        print!("{}", render::settings_text(&report.settings));
        print!("{}", render::body_text(&report, Style { color: false }));
    }
    Ok(report.decision.exit_code)
}

fn stopped_by_sigterm_exits_143_and_leaves_no_oracle() {
    // The oracle starts a sleep in its group and one that leaves it, then says so.
    stop_while_the_oracle_runs(
        |token| {
            format!(
                "cat >/dev/null; setsid sleep {token} & sleep {token} & touch started.oracle; wait"
            )
        },
        &[],
        2,
    );
}

/// A killed process's children are handed to the xtask (the subreaper) only once its
/// memory is freed: with hundreds of megabytes that takes a while, during which the dying
/// process no longer shows its environment (the run's mark). Here the slow one has left the
/// oracle's group (so its death is the stop's own doing, not the group kill's) and has a
/// child of its own that left too: the stop must wait for that child to come, and kill it.
fn an_escapee_of_an_oracle_slow_to_die_is_killed() {
    let script = "import subprocess, sys, time\n\
                  held = b'x' * (768 << 20)\n\
                  subprocess.Popen(['sleep', sys.argv[1]], start_new_session=True)\n\
                  open('started.oracle', 'w').close()\n\
                  time.sleep(300)\n";
    stop_while_the_oracle_runs(
        |token| format!("cat >/dev/null; setsid python3 slow.py {token} & wait"),
        &[("slow.py", script)],
        2,
    );
}

/// Builds a repository whose one property runs `oracle(token)` (with `files` beside it),
/// starts the own xtask there, sends it SIGTERM once the oracle has written
/// `started.oracle` and `running` processes hold the token, and checks that it exits with
/// 143 and that none of them is left.
fn stop_while_the_oracle_runs(
    oracle: impl Fn(&str) -> String,
    files: &[(&str, &str)],
    running: usize,
) {
    let tmp = tempfile::Builder::new()
        .prefix("own-xtask")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("temp dir");
    let dir = tmp.path();
    // 300 s and a fraction no other process on the machine passes to sleep.
    let token = format!("300.{}", std::process::id());
    let oracle = oracle(&token);
    for (name, text) in files {
        std::fs::write(dir.join(name), text).expect("write");
    }
    let toml = format!(
        "[policy]\nreplays = 3\ntimeout_ms = 120000\nmin_cases = 1\n\n\
         [[property]]\nid = \"slow.oracle\"\noracle = \"{oracle}\"\n\
         generate = \"echo '{{}}'\"\ncases = 1\n"
    );
    std::fs::write(dir.join("freezegate.toml"), toml).expect("write");
    git(dir, &["init", "-q"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "suite"]);

    let exe = std::env::current_exe().expect("the test's own path");
    // The xtask's output goes to files, read once it has exited: a pipe nobody reads while
    // it runs could fill and block it.
    let logs = tempfile::Builder::new()
        .prefix("own-xtask-output")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("temp dir");
    let (out_path, err_path) = (logs.path().join("stdout"), logs.path().join("stderr"));
    let create = |path: &Path| std::fs::File::create(path).expect("output file");
    let mut xtask = Command::new(exe)
        .current_dir(dir)
        .env(CHILD, "1")
        .env_remove("REPLAYS")
        .env_remove("PROP_SEED")
        .stdin(Stdio::null())
        .stdout(create(&out_path))
        .stderr(create(&err_path))
        .spawn()
        .expect("the xtask starts");
    let guard = Survivors(token);
    wait_for(&dir.join("started.oracle"), &mut xtask);
    assert!(
        guard.running().len() >= running,
        "{running} processes run: {:?}",
        guard.running()
    );

    let ok = Command::new("kill")
        .args(["-TERM", &xtask.id().to_string()])
        .status()
        .expect("kill runs")
        .success();
    assert!(ok, "kill -TERM");
    let limit = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = xtask.try_wait().expect("wait") {
            break status;
        }
        assert!(
            Instant::now() < limit,
            "the xtask still runs 20 s after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let stderr = std::fs::read_to_string(&err_path).expect("the xtask's stderr");
    let stdout = std::fs::read_to_string(&out_path).expect("the xtask's stdout");
    assert_eq!(status.code(), Some(143), "{stderr}");
    assert!(stdout.is_empty(), "no report after the signal: {stdout}");
    assert_eq!(
        stderr.lines().last(),
        Some("error: stopped by SIGTERM: killed 1 oracle run"),
        "{stderr}"
    );
    // The kill happens before the exit; the kernel may take a moment to finish the dying.
    let limit = Instant::now() + Duration::from_secs(2);
    let mut left = guard.running();
    while !left.is_empty() && Instant::now() < limit {
        std::thread::sleep(Duration::from_millis(20));
        left = guard.running();
    }
    assert!(left.is_empty(), "SIGTERM left running: {left:?}");
}

/// The gate of the own xtask on its Rust property: campaign, shrink and replays all run the
/// property through the xtask's hidden subcommand (a worker for the shrink). The assertion's
/// message changes with every candidate; its place does not, so the shrink reaches `[501]`.
fn a_panic_message_holding_the_input_still_shrinks() {
    let tmp = tempfile::Builder::new()
        .prefix("own-xtask-rust")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("temp dir");
    let dir = tmp.path();
    let toml = "[policy]\nreplays = 3\nmin_cases = 1\n\n\
                [[property]]\nid = \"vec.none_above_500\"\ncases = 50\n";
    std::fs::write(dir.join("freezegate.toml"), toml).expect("write");
    git(dir, &["init", "-q"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "suite"]);
    let output = Command::new(std::env::current_exe().expect("the test's own path"))
        .current_dir(dir)
        .env(CHILD, "1")
        .env_remove("REPLAYS")
        .env_remove("PROP_SEED")
        .stdin(Stdio::null())
        .output()
        .expect("the xtask runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("minimal [501]"),
        "the shrink stopped short:\n{stdout}"
    );
    // One run of the hidden subcommand: the message for people, then the signature.
    let mut run = Command::new(std::env::current_exe().expect("the test's own path"))
        .args([PROPERTY_SUBCOMMAND, "vec.none_above_500"])
        .current_dir(dir)
        .env(CHILD, "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the property runs");
    std::io::Write::write_all(&mut run.stdin.take().expect("stdin"), b"[501,7,501]\n")
        .expect("write the input");
    let output = run.wait_with_output().expect("the property ends");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    let lines: Vec<&str> = stdout.lines().collect();
    let site = lines
        .last()
        .and_then(|l| l.strip_prefix("failure: panicked at crates/gate/tests/own_xtask.rs:"))
        .unwrap_or_else(|| panic!("the signature is the panic's place: {stdout}"));
    assert!(
        lines[0].ends_with(&format!(
            "{site}: assertion `left == right` failed: values above 500 in [501, 7, 501]"
        )),
        "{stdout}"
    );
}

/// The command line of the CI recipe reaches the gate (`-C`, `--base`, `--format json`), and
/// an argument the example does not read stops it (exit 3) instead of being ignored.
fn the_ci_recipes_command_line_is_read_and_the_rest_refused() {
    let tmp = tempfile::Builder::new()
        .prefix("own-xtask-cli")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("temp dir");
    let dir = tmp.path();
    std::fs::write(
        dir.join("freezegate.toml"),
        "[policy]\nreplays = 3\nmin_cases = 1\n\n[[property]]\nid = \"p\"\noracle = \"cat >/dev/null\"\ngenerate = \"echo 1\"\ncases = 1\n",
    )
    .expect("write");
    git(dir, &["init", "-q"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "suite"]);
    let run = |args: &[&str]| {
        Command::new(std::env::current_exe().expect("the test's own path"))
            .args(args)
            .current_dir(env!("CARGO_TARGET_TMPDIR"))
            .env(CHILD, "1")
            .env_remove("REPLAYS")
            .env_remove("PROP_SEED")
            .stdin(Stdio::null())
            .output()
            .expect("the xtask runs")
    };
    let root = dir.to_str().expect("utf-8");
    let out = run(&["-C", root, "gate", "--base", "HEAD", "--format", "json"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("a JSON report");
    assert_eq!(report["decision"]["outcome"], "pass", "{report}");
    assert!(
        report["patch"].is_object(),
        "--base reached the gate: {report}"
    );
    let out = run(&["-C", root, "gate", "--bogus"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("unexpected argument --bogus"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=T", "-c", "user.email=t@example.com"])
        .args(["-c", "commit.gpgsign=false"])
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdout(Stdio::null())
        .status()
        .expect("git runs")
        .success();
    assert!(ok, "git {args:?}");
}

/// Waits until `file` exists, failing if the xtask ends first.
fn wait_for(file: &Path, xtask: &mut Child) {
    let limit = Instant::now() + Duration::from_secs(60);
    while !file.exists() {
        if let Ok(Some(status)) = xtask.try_wait() {
            panic!("the xtask ended before its oracle started: {status}");
        }
        assert!(Instant::now() < limit, "the oracle never started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The processes whose command line holds a token; kills them when dropped, so that a
/// failing test leaves no sleep behind.
struct Survivors(String);

impl Survivors {
    /// The running processes (zombies aside) whose command line holds the token.
    fn running(&self) -> Vec<(i32, String)> {
        let mut found = Vec::new();
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return found;
        };
        for entry in entries.flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
                continue;
            };
            let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
                continue;
            };
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if !cmdline.contains(&self.0) {
                continue;
            }
            let running = std::fs::read_to_string(entry.path().join("stat"))
                .ok()
                .and_then(|stat| {
                    let state = stat.rsplit_once(')')?.1.trim_start().chars().next()?;
                    Some(!matches!(state, 'Z' | 'X'))
                })
                .is_some_and(|running| running);
            if running {
                found.push((pid, cmdline));
            }
        }
        found
    }
}

impl Drop for Survivors {
    fn drop(&mut self) {
        for (pid, _) in self.running() {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
    }
}
