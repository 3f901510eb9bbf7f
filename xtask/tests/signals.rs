//! SIGINT, SIGTERM and SIGHUP to `xtask` while oracles run: the real binary, real process
//! groups. xtask exits with 128 + the signal, and no process its runs started is still
//! running afterwards (SPEC §4: "no process left"), whichever runner started it: a fresh
//! process per replay, a worker, or a campaign's generator.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

mod support;

/// A temporary directory, and the argument that names every process a test's oracles start:
/// `sleep <token>`, a number of seconds no other process on the machine passes.
struct Scene {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    token: String,
}

impl Scene {
    fn new() -> Scene {
        static NEXT: AtomicU32 = AtomicU32::new(1);
        let tmp = tempfile::tempdir().expect("temp dir");
        let dir = tmp.path().to_path_buf();
        // 300 s and a fraction unique to this test process and scene.
        let token = format!(
            "300.{}{:03}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        Scene {
            _tmp: tmp,
            dir,
            token,
        }
    }

    fn write(&self, name: &str, text: &str) {
        std::fs::write(self.dir.join(name), text).expect("write");
    }

    fn git(&self, args: &[&str]) {
        support::git(&self.dir, args);
    }

    /// Starts xtask in the scene's directory.
    fn start(&self, args: &[&str]) -> Child {
        Command::new(env!("CARGO_BIN_EXE_xtask"))
            .arg("-C")
            .arg(&self.dir)
            .args(args)
            .env_remove("REPLAYS")
            .env_remove("PROP_SEED")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("xtask starts")
    }

    /// The running processes (zombies aside) whose command line holds the token.
    fn survivors(&self) -> Vec<(i32, String)> {
        running_processes()
            .into_iter()
            .filter(|p| p.cmdline.contains(&self.token))
            .map(|p| (p.pid, p.cmdline))
            .collect()
    }

    /// Kills what the test left behind, so that a failing test does not leave sleeps.
    fn clean_up(&self) {
        for (pid, _) in self.survivors() {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
    }
}

impl Drop for Scene {
    fn drop(&mut self) {
        self.clean_up();
    }
}

/// Waits until `count` files whose names start with `prefix` exist in `dir`.
fn wait_for_files(dir: &Path, prefix: &str, count: usize, child: &mut Child) {
    let limit = Instant::now() + Duration::from_secs(60);
    loop {
        let found = std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .flatten()
                    .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
                    .count()
            })
            .unwrap_or(0);
        if found >= count {
            return;
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("xtask ended before its oracles started: {status}");
        }
        assert!(Instant::now() < limit, "the oracles never started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends `signal` to xtask, waits for it, and checks its exit code, its message and that no
/// process of the scene still runs.
fn interrupt(scene: &Scene, xtask: Child, signal: &str, code: i32) {
    stop(xtask, signal, code, Duration::from_secs(20));
    let left = still_running(|| scene.survivors());
    assert!(left.is_empty(), "SIG{signal} left running: {left:?}");
}

/// Sends `signal` to xtask, waits up to `limit` for it to exit, and checks that it exits with
/// `code` and names the signal on its last line of stderr. Returns its stdout.
fn stop(mut xtask: Child, signal: &str, code: i32, limit: Duration) -> String {
    let ok = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(xtask.id().to_string())
        .status()
        .expect("kill runs")
        .success();
    assert!(ok, "kill -{signal}");
    let limit = Instant::now() + limit;
    let status = loop {
        if let Some(status) = xtask.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() >= limit {
            let _ = xtask.kill();
            panic!("xtask still runs after SIG{signal}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = xtask.wait_with_output().expect("output");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(status.code(), Some(code), "SIG{signal}: {status}\n{stderr}");
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.contains(&format!("SIG{signal}")),
        "the last line names the signal: {stderr}"
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What `find` still lists after up to 2 s: xtask kills before it exits, and the kernel may
/// take a moment to finish the dying.
fn still_running(find: impl Fn() -> Vec<(i32, String)>) -> Vec<(i32, String)> {
    let limit = Instant::now() + Duration::from_secs(2);
    let mut left = find();
    while !left.is_empty() && Instant::now() < limit {
        std::thread::sleep(Duration::from_millis(20));
        left = find();
    }
    left
}

#[test]
fn sigint_during_replays_kills_every_run_and_its_escapees_and_exits_130() {
    let scene = Scene::new();
    scene.write("f.json", "{}\n");
    // Each run starts a sleep in its group and one that leaves it, then says it started.
    let oracle = format!(
        "cat >/dev/null; setsid sleep {t} & sleep {t} & touch started.$FREEZEGATE_REPLAY; wait",
        t = scene.token
    );
    let mut xtask = scene.start(&[
        "replay",
        "--oracle",
        &oracle,
        "--fixture",
        "f.json",
        "--replays",
        "2",
        "--jobs",
        "2",
        "--timeout-ms",
        "60000",
    ]);
    wait_for_files(&scene.dir, "started.", 2, &mut xtask);
    // Both runs' sleeps, and the escapees, are up.
    assert!(scene.survivors().len() >= 4, "{:?}", scene.survivors());
    interrupt(&scene, xtask, "INT", 130);
}

/// A process that leaves its run with nothing of the run (a new session, an empty
/// environment, every descriptor on `/dev/null`: Python's `subprocess.Popen(env={},
/// start_new_session=True, …DEVNULL)`) cannot be tied to its run when the run ends; it is an
/// orphan of xtask, which kills it when the command is done, or when a signal stops it.
#[test]
fn an_escapee_with_nothing_of_its_run_does_not_outlive_the_command() {
    let scene = Scene::new();
    scene.write("f.json", "{}\n");
    let leave = format!(
        "cat >/dev/null; env -i setsid sh -c ': > ready.$$; exec sleep {t}' </dev/null >/dev/null 2>&1 & \
         while ! ls ready.* >/dev/null 2>&1; do sleep 0.01; done",
        t = scene.token
    );
    let xtask = scene.start(&[
        "replay",
        "--oracle",
        &format!("{leave}; exit 0"),
        "--fixture",
        "f.json",
        "--replays",
        "1",
    ]);
    let out = xtask.wait_with_output().expect("xtask runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let left = still_running(|| scene.survivors());
    assert!(left.is_empty(), "left running: {left:?}");
    assert!(
        stderr.contains(
            "note: killed 1 orphaned process that this command's children left running (an oracle's"
        ),
        "{stderr}"
    );
    // Stopped by a signal while the run that left it still goes.
    for entry in std::fs::read_dir(&scene.dir).expect("dir").flatten() {
        if entry.file_name().to_string_lossy().starts_with("ready.") {
            std::fs::remove_file(entry.path()).expect("rm");
        }
    }
    let mut xtask = scene.start(&[
        "replay",
        "--oracle",
        &format!("{leave}; touch started.1; sleep {}", scene.token),
        "--fixture",
        "f.json",
        "--replays",
        "1",
        "--timeout-ms",
        "60000",
    ]);
    wait_for_files(&scene.dir, "started.", 1, &mut xtask);
    // The run's own sleep and the escapee.
    let sleeps = |running: Vec<(i32, String)>| {
        running
            .into_iter()
            .filter(|(_, cmdline)| cmdline.starts_with("sleep "))
            .count()
    };
    // `started.1` is touched just before the run's own sleep starts: wait for that sleep (as
    // `wait_for_files` waits, so that a broken run fails instead of hanging).
    let limit = Instant::now() + Duration::from_secs(60);
    while sleeps(scene.survivors()) < 2 && Instant::now() < limit {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(sleeps(scene.survivors()), 2, "{:?}", scene.survivors());
    interrupt(&scene, xtask, "TERM", 143);
}

#[test]
fn sigterm_during_a_campaign_generator_exits_143() {
    let scene = Scene::new();
    scene.write(
        "freezegate.toml",
        &format!(
            "[policy]\nreplays = 3\ntimeout_ms = 60000\nmin_cases = 1\n\n\
             [[property]]\nid = \"slow.generator\"\noracle = \"true\"\n\
             generate = \"touch started.gen; sleep {}\"\ncases = 1\n",
            scene.token
        ),
    );
    scene.git(&["init", "-q"]);
    scene.git(&["add", "-A"]);
    scene.git(&["commit", "-q", "-m", "suite"]);
    let mut xtask = scene.start(&["gate", "--patch-id", "test-patch"]);
    wait_for_files(&scene.dir, "started.", 1, &mut xtask);
    interrupt(&scene, xtask, "TERM", 143);
}

#[test]
fn sighup_while_a_worker_runs_exits_129() {
    let scene = Scene::new();
    scene.write("input.json", "[1, 2, 3]\n");
    let oracle = format!("touch started.worker; sleep {}", scene.token);
    let mut xtask = scene.start(&[
        "shrink",
        "--oracle",
        &oracle,
        "--input",
        "input.json",
        "--worker",
        "--timeout-ms",
        "60000",
    ]);
    wait_for_files(&scene.dir, "started.", 1, &mut xtask);
    interrupt(&scene, xtask, "HUP", 129);
}

/// A running process (zombies aside): its id, command line (arguments joined by spaces) and
/// working folder.
struct Running {
    pid: i32,
    cmdline: String,
    cwd: String,
}

/// Every running process this test can see.
fn running_processes() -> Vec<Running> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let running = std::fs::read_to_string(entry.path().join("stat"))
            .ok()
            .and_then(|stat| {
                let state = stat.rsplit_once(')')?.1.trim_start().chars().next()?;
                Some(!matches!(state, 'Z' | 'X'))
            })
            .unwrap_or(false);
        if !running {
            continue;
        }
        let cmdline = std::fs::read(entry.path().join("cmdline"))
            .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
            .unwrap_or_default();
        let cwd = std::fs::read_link(entry.path().join("cwd"))
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        found.push(Running { pid, cmdline, cwd });
    }
    found
}

/// The running processes whose command line names `dir` or whose working folder is in it.
fn processes_in(dir: &Path) -> Vec<(i32, String)> {
    let dir = dir.to_string_lossy().into_owned();
    running_processes()
        .into_iter()
        .filter(|p| p.cmdline.contains(&dir) || p.cwd.starts_with(&dir))
        .map(|p| (p.pid, p.cmdline))
        .collect()
}

/// The demo runs each step as another xtask, which runs oracles of its own: SIGTERM sent to
/// the demo alone (a CI runner's cancel) stops the step and its oracles too, and the
/// demo's temporary repository does not outlive it.
#[test]
fn sigterm_during_the_demo_stops_its_steps_and_removes_its_repository() {
    let scene = Scene::new();
    let mut xtask = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("demo")
        .env("TMPDIR", &scene.dir)
        .env_remove("REPLAYS")
        .env_remove("PROP_SEED")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("xtask starts");
    // Wait for the demo's repository and a step's oracles (Python, run in it).
    let limit = Instant::now() + Duration::from_secs(120);
    let demo = loop {
        let repo = std::fs::read_dir(&scene.dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .find(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("freezegate-demo-"))
            });
        if let Some(repo) = repo
            && processes_in(&repo)
                .iter()
                .any(|(_, cmdline)| cmdline.contains("python3"))
        {
            break repo;
        }
        if let Ok(Some(status)) = xtask.try_wait() {
            panic!("the demo ended before its oracles ran: {status}");
        }
        assert!(Instant::now() < limit, "the demo never ran an oracle");
        std::thread::sleep(Duration::from_millis(20));
    };
    // The step is almost always still running when the signal lands ("stopped 1 child
    // process"), but one may just have ended: what must hold either way is checked.
    let stdout = stop(xtask, "TERM", 143, Duration::from_secs(30));
    // The step the signal stopped is not reported as the demo's own outcome.
    assert!(
        !stdout.contains("(exit 143)"),
        "the demo printed its stopped step: {stdout}"
    );
    let left = still_running(|| processes_in(&demo));
    for (pid, _) in &left {
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
    assert!(left.is_empty(), "SIGTERM left running: {left:?}");
    assert!(!demo.exists(), "{} is left", demo.display());
}

/// A freeze stopped by a signal during its replays prints nothing made of the runs the
/// signal killed (no labels, no "infra queue" refusal): only the stop line, with 128 + the
/// signal, and the ledger stays as it was.
#[test]
fn a_signal_during_a_freezes_replays_reports_only_the_stop() {
    use freezegate_canon::fixture::{Meta, pin};
    use freezegate_canon::{Canonicalization, canonicalize};
    for (signal, code) in [("TERM", 143), ("INT", 130), ("HUP", 129)] {
        let scene = Scene::new();
        let fixture = canonicalize(br#"{"n":1}"#, Canonicalization::V1).expect("fixture");
        let meta = Meta {
            property_id: "p".parse().expect("id"),
            fixture_id: fixture.fixture_id(),
            fixture_digest: fixture.digest(),
            origin_id: fixture.fixture_id(),
            origin_digest: fixture.digest(),
            canonicalization: Canonicalization::V1,
            seed: 20_260_917,
            pinned_at: "2026-09-14T08:00:00Z".to_owned(),
            patch_id: "feedface".to_owned(),
            oracle_calls: 1,
            shrink_path: Vec::new(),
        };
        pin(&scene.dir, &meta, &fixture, &fixture).expect("pin");
        scene.write(
            "freezegate.toml",
            &format!(
                "[policy]\nreplays = 3\ntimeout_ms = 60000\n\n[[property]]\nid = \"p\"\n\
                 oracle = \"touch started.$FREEZEGATE_REPLAY; sleep {}\"\n",
                scene.token
            ),
        );
        std::fs::create_dir_all(scene.dir.join("freeze")).expect("mkdir");
        scene.write(
            "freeze/allowed_signers",
            "alice@example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAlice\n",
        );
        let fixture_id = fixture.fixture_id().to_string();
        let mut xtask = Command::new(env!("CARGO_BIN_EXE_xtask"))
            .arg("-C")
            .arg(&scene.dir)
            .args(["freeze", "--property", "p", "--fixture", &fixture_id])
            .args(["--owner", "alice@example.com", "--reason", "r"])
            .args(["--expires-in", "7", "--patch-id", "test-patch"])
            .args(["--format", "json"])
            .env("ENV_CLASS", "remote")
            .env("RUNNER_ID", "ci-1")
            .env_remove("REPLAYS")
            .env_remove("PROP_SEED")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("xtask starts");
        // Until a replay has started (however long that takes), or xtask ended without one.
        loop {
            let started = std::fs::read_dir(&scene.dir)
                .expect("dir")
                .flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with("started."));
            if started {
                break;
            }
            if let Some(status) = xtask.try_wait().expect("wait") {
                let out = xtask.wait_with_output().expect("output");
                panic!(
                    "xtask ended before a replay started: {status}\n{}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let sent = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(xtask.id().to_string())
            .status()
            .expect("kill runs")
            .success();
        assert!(sent, "kill -{signal}");
        let out = xtask.wait_with_output().expect("output");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "SIG{signal}: {stderr}");
        assert!(
            out.stdout.is_empty(),
            "SIG{signal}: stdout {:?}",
            out.stdout
        );
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "SIG{signal}: only the stop line: {stderr}");
        assert!(
            lines[0].starts_with(&format!("error: stopped by SIG{signal}")),
            "{stderr}"
        );
        assert!(!scene.dir.join("freeze/ledger.json").exists());
    }
}
