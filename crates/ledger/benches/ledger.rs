//! Validation and lookup of a 100 000-row ledger with fixture files on disk for 1 000 rows.
//!
//! `cargo bench -p freezegate-ledger --bench ledger` writes the ledger and the fixtures into
//! a temporary directory, then runs the measured work in a fresh child process (so its peak
//! resident memory, `VmHWM`, counts only that work): read `ledger.json`, parse it, check
//! every rule of every row (fixtures read from disk and hashed through the lookup), then look
//! up the active row of every row's key. It prints the median wall time of the runs and the
//! largest peak memory.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use freezegate_canon::fixture::fixture_path;
use freezegate_canon::{Canonicalization, Digest, FixtureId, PropertyId};
use freezegate_ledger::{
    AllowedSigners, Checks, EnvClass, FixtureFile, Ledger, Policy, Row, Rule, Seed, Timestamp,
    check_and_load,
};
use freezegate_replay::Label;

/// `cargo bench` passes `--bench`; without it (`cargo test --benches`) the run is a small
/// smoke test of the same code.
fn full_size() -> bool {
    static FULL: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FULL.get_or_init(|| std::env::args().any(|a| a == "--bench"))
}

/// Rows in the ledger.
fn rows_total() -> u64 {
    if full_size() { 100_000 } else { 2_000 }
}

/// Rows whose fixture file is on disk.
fn on_disk() -> u64 {
    if full_size() { 1_000 } else { 20 }
}
const RUNS: usize = 5;

fn body(n: u64) -> Vec<u8> {
    format!(
        "{{\"case\":{n},\"items\":[{},{}],\"role\":\"admin\"}}",
        n % 97,
        n % 13
    )
    .into_bytes()
}

fn ts(text: &str) -> Timestamp {
    text.parse().unwrap_or_else(|e| panic!("{e}"))
}

fn row(n: u64) -> Row {
    let digest = Digest::of(&body(n));
    Row {
        property_id: format!("prop{:03}.holds", n % 100)
            .parse()
            .unwrap_or_else(|e| panic!("{e}")),
        fixture_id: digest.fixture_id(),
        fixture_digest: digest,
        origin_digest: Digest::of(format!("origin {n}").as_bytes()),
        canonicalization: Canonicalization::V1,
        seed: Seed::from(20_260_917_u64),
        env_class: EnvClass::Remote,
        runner_id: format!("ci-runner-{}", n % 8),
        replays: [Label::AssertPass, Label::AssertFail]
            .into_iter()
            .cycle()
            .take(7)
            .collect(),
        patch_id: format!("{n:040x}"),
        owner: "alice@example.com".to_owned(),
        reason: "thread scheduling in the cache warm-up".to_owned(),
        created_at: ts("2026-09-15T09:30:00Z"),
        expires_at: ts("2026-09-25T09:30:00Z"),
    }
}

fn setup(root: &Path) {
    let ledger = Ledger::from_rows((0..rows_total()).map(row).collect());
    std::fs::create_dir_all(root.join("freeze")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(root.join("freeze/ledger.json"), ledger.render())
        .unwrap_or_else(|e| panic!("{e}"));
    for n in 0..on_disk() {
        let r = row(n);
        let path = fixture_path(root, &r.property_id, r.fixture_id);
        std::fs::create_dir_all(path.parent().unwrap_or(root)).unwrap_or_else(|e| panic!("{e}"));
        let mut bytes = body(n);
        bytes.push(b'\n');
        std::fs::write(path, bytes).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// CPU time (user + system) of this process so far, in microseconds (Linux, 100 Hz ticks).
fn cpu_us() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<u64> = after_name
        .split_whitespace()
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    // utime and stime are fields 14 and 15 of the line; 12 and 13 after the name.
    (fields.get(11).unwrap_or(&0) + fields.get(12).unwrap_or(&0)) * 10_000
}

fn peak_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// The measured work, in the child.
fn measure(root: &Path) {
    let start = Instant::now();
    let cpu_start = cpu_us();
    let text = std::fs::read(root.join("freeze/ledger.json")).unwrap_or_else(|e| panic!("{e}"));
    let signers = AllowedSigners::parse("alice@example.com ssh-ed25519 AAAAC3Nza\n")
        .unwrap_or_else(|e| panic!("{e}"));
    let lookup = |p: &PropertyId, id: FixtureId| match std::fs::read(fixture_path(root, p, id)) {
        Ok(bytes) => FixtureFile::Found(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => FixtureFile::Missing,
        Err(e) => FixtureFile::Unreadable(e.to_string()),
    };
    let policy = Policy::default();
    let checks = Checks::new(&policy, ts("2026-09-17T12:00:00Z"), &signers, &lookup);
    let (ledger, report) = check_and_load(&text, &checks).unwrap_or_else(|e| panic!("{e}"));
    let validated = start.elapsed();
    let mut found = 0u64;
    for r in ledger.rows() {
        if ledger
            .active_row(
                &r.property_id,
                &r.fixture_digest,
                &r.seed,
                EnvClass::Local,
                checks.now,
            )
            .is_some()
        {
            found += 1;
        }
    }
    let total = start.elapsed();
    let cpu = cpu_us() - cpu_start;
    let missing = report
        .problems
        .iter()
        .filter(|p| p.rule == Rule::Fixture)
        .count() as u64;
    assert_eq!(found, rows_total());
    assert_eq!(missing, rows_total() - on_disk(), "every other rule holds");
    assert_eq!(report.problems.len() as u64, missing);
    println!(
        "{} {} {} {} {}",
        validated.as_micros(),
        total.as_micros(),
        peak_kib(),
        text.len(),
        cpu
    );
}

/// The baseline, in the child: read the file and parse it whole with canon's parser (what
/// validation did before it read rows one at a time), then the fixture lookups alone.
fn floor(root: &Path) {
    let start = Instant::now();
    let cpu_start = cpu_us();
    let text = std::fs::read(root.join("freeze/ledger.json")).unwrap_or_else(|e| panic!("{e}"));
    let value = freezegate_canon::parse(&text).unwrap_or_else(|e| panic!("{e}"));
    let parsed = start.elapsed();
    let parse_cpu = cpu_us() - cpu_start;
    let peak = peak_kib();
    drop(value);
    let start = Instant::now();
    let mut found = 0u64;
    for n in 0..rows_total() {
        let r = row(n);
        if std::fs::read(fixture_path(root, &r.property_id, r.fixture_id)).is_ok() {
            found += 1;
        }
    }
    assert_eq!(found, on_disk());
    println!(
        "{} {} {} {}",
        parsed.as_micros(),
        parse_cpu,
        peak,
        start.elapsed().as_micros()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--floor") {
        floor(&PathBuf::from(&args[i + 1]));
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--measure") {
        measure(&PathBuf::from(&args[i + 1]));
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--setup") {
        setup(Path::new(&args[i + 1]));
        return;
    }
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let t = Instant::now();
    setup(dir.path());
    eprintln!("setup: {:.1} s", t.elapsed().as_secs_f64());
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("{e}"));
    let mut runs = Vec::new();
    for _ in 0..RUNS {
        let out = Command::new(&exe)
            .arg("--measure")
            .arg(dir.path())
            .args(full_size().then_some("--bench"))
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let fields: Vec<u64> = String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .map(|f| f.parse().unwrap_or(0))
            .collect();
        runs.push(fields);
    }
    let mut floors = Vec::new();
    for _ in 0..RUNS {
        let out = Command::new(&exe)
            .arg("--floor")
            .arg(dir.path())
            .args(full_size().then_some("--bench"))
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let fields: Vec<u64> = String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .map(|f| f.parse().unwrap_or(0))
            .collect();
        floors.push(fields);
    }
    floors.sort_by_key(|f| f[0]);
    let floor = &floors[RUNS / 2];
    runs.sort_by_key(|f| f[1]);
    let median = &runs[RUNS / 2];
    let peak = runs.iter().map(|f| f[2]).max().unwrap_or(0);
    println!(
        "ledger of {} rows ({:.1} MB), fixtures on disk for {} (hashed), {RUNS} runs:",
        rows_total(),
        median[3] as f64 / 1e6,
        on_disk()
    );
    println!(
        "  read + parse + validate: {:.0} ms (median)",
        median[0] as f64 / 1e3
    );
    println!(
        "  + {} lookups:       {:.0} ms total (median)",
        rows_total(),
        median[1] as f64 / 1e3
    );
    println!(
        "  CPU time (user + sys):   {:.0} ms (of the median run)",
        median[4] as f64 / 1e3
    );
    println!(
        "  peak resident memory:    {:.0} MB (max of runs)",
        peak as f64 / 1024.0
    );
    println!(
        "baseline: read + canon::parse of the whole file: {:.0} ms, {:.0} ms CPU, peak {:.0} MB; {} fixture reads alone: {:.0} ms",
        floor[0] as f64 / 1e3,
        floor[1] as f64 / 1e3,
        floor[2] as f64 / 1024.0,
        rows_total(),
        floor[3] as f64 / 1e3
    );
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("  load average after the runs: {}", load.trim());
}
