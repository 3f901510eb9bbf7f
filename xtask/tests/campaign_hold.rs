//! A pinned fixture that blocks the run holds back its property's campaign: an unfrozen
//! flicker is as blocking as a regression, so the campaign stops at its first failing case
//! instead of pinning more inputs of what is most likely the same bug, run after run.
//! End to end through the real binary, in a temporary git repository with a Python oracle.

mod support;

use support::Repo;

/// `n` from 100 on flickers (fails on even replays); `n` from 1000 on always fails.
const FLAKE_AND_BUG: &str = "import os, sys\nfrom oracle import serve\ndef check(doc):\n    n = doc.get('n', 0)\n    if n >= 1000:\n        return 'n too big'\n    if n >= 100 and int(os.environ.get('FREEZEGATE_REPLAY', '0')) % 2 == 0:\n        return 'flaky cache'\n    return None\nsys.exit(serve(check))\n";

impl Repo {
    /// The names of the files in `fixtures/<property>/`, sorted.
    fn fixture_files(&self, property: &str) -> Vec<String> {
        let dir = self.dir.join("fixtures").join(property);
        let mut out: Vec<String> = std::fs::read_dir(dir)
            .expect("fixture folder")
            .flatten()
            .filter(|e| e.path().is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        out.sort();
        out
    }
}

/// A generator printing `{"n": v}` for each of `values`.
fn numbers(values: &[u32]) -> String {
    let lines: Vec<String> = values.iter().map(|v| format!("{{\"n\": {v}}}")).collect();
    format!("print('''{}''')\n", lines.join("\n"))
}

#[test]
fn an_unfrozen_flicker_holds_back_its_campaign() {
    // The flake's own origin first, then a stable failure the campaign would otherwise shrink
    // and pin.
    let mut values = vec![150];
    values.extend(1..=19);
    values.push(5000);
    let toml = format!(
        "[policy]\nseed = 20260917\nreplays = 3\ntimeout_ms = 5000\njobs = 2\nmin_cases = 10\n\n\
         [[property]]\nid = \"p.f\"\noracle = \"python3 f.py\"\ngenerate = \"python3 gen.py\"\nworker = true\ncases = {}\n",
        values.len()
    );
    let repo = Repo::with_oracle(&[
        ("freezegate.toml", &toml),
        ("f.py", FLAKE_AND_BUG),
        ("gen.py", &numbers(&values)),
    ]);
    let record = repo.classify("p.f", r#"{"n": 150}"#);
    assert_eq!(record["action"], "freeze_after_pin", "{record}");
    let flake = record["fixture_id"]
        .as_str()
        .expect("fixture id")
        .to_owned();
    repo.commit("pin the flake, freeze nothing");
    let pinned = repo.fixture_files("p.f");

    let (run, report) = repo.gate_json();
    assert_eq!(run.code, 1, "the unfrozen flicker blocks: {}", run.stdout);
    let fixtures = report["fixtures"].as_array().expect("fixtures");
    assert_eq!(fixtures.len(), 1, "{}", run.stdout);
    assert_eq!(fixtures[0]["fixture_id"], flake.as_str());
    assert_eq!(fixtures[0]["status"], "flicker");

    // The campaign stopped at its first failing case, the flake's origin: the stable failure
    // at the end was neither run nor shrunk, and nothing new was pinned.
    let campaign = &report["campaigns"][0];
    assert_eq!(campaign["action"], "already_pinned", "{campaign}");
    assert_eq!(campaign["failing_case"], 0, "{campaign}");
    assert_eq!(campaign["shrinks"], 0, "{campaign}");
    assert_eq!(campaign["cases_run"], 1, "{campaign}");
    let note = campaign["note"].as_str().expect("note");
    assert!(
        note.contains(&format!(
            "pinned fixture {flake} of this property blocks this run already"
        )),
        "{note}"
    );
    assert_eq!(report["summary"]["new_failures"], 0, "{}", run.stdout);
    assert_eq!(repo.fixture_files("p.f"), pinned);
}
