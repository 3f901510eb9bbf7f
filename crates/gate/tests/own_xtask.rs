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
use freezegate_gate::render::{self, Style};
use freezegate_gate::rust_prop::{PROPERTY_SUBCOMMAND, Registry};
use freezegate_gate::{ErrorChain, process, run};

/// The tests' names, for `--list` and filters.
const NAMES: [&str; 2] = [
    "own_xtask_stopped_by_sigterm_exits_143_and_leaves_no_oracle",
    "own_xtask_stopped_by_sigterm_kills_the_escapee_of_an_oracle_slow_to_die",
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
    let tests: [(&str, fn()); 2] = [
        (NAMES[0], stopped_by_sigterm_exits_143_and_leaves_no_oracle),
        (NAMES[1], an_escapee_of_an_oracle_slow_to_die_is_killed),
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

/// The crate docs' example `main`, with an empty registry.
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

fn xtask() -> Result<u8, Box<dyn std::error::Error>> {
    let registry = Registry::new();
    let args: Vec<String> = std::env::args().collect();
    if let [_, subcommand, id] = args.as_slice()
        && subcommand == PROPERTY_SUBCOMMAND
    {
        let (stdin, stdout) = (std::io::stdin(), std::io::stdout());
        return Ok(registry.serve(id, false, &mut stdin.lock(), &mut stdout.lock()));
    }
    process::setup()?;
    let root = std::env::current_dir()?;
    let config = Config::load(&root)?;
    let overrides = RunOverrides::from_env(|key| std::env::var(key).ok());
    let settings = Settings::resolve(config, &overrides, 2)?;
    let ctx = run::Context {
        patch_id: run::head_commit(&root).ok_or("cannot read the commit of HEAD")?,
        root,
        now: run::clock_now(),
        registry: &registry,
        exe: std::env::current_exe().ok(),
        rust_runner: None,
        max_shrink_calls: run::DEFAULT_MAX_SHRINK_CALLS,
        progress: &run::Quiet,
    };
    let mut report = run::run_with_base(&settings, &ctx, None)?;
    report.decide();
    process::kill_orphans(process::ORPHAN_LIMIT);
    process::park_if_stopping();
    print!("{}", render::settings_text(&report.settings));
    print!("{}", render::body_text(&report, Style { color: false }));
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
