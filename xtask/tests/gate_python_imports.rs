//! `xtask gate --base` against a patch that changes what Python runs without changing a line
//! of text the gate reads: a bytecode file in `__pycache__` that Python loads instead of the
//! untouched `oracle.py` (made with `invalidation_mode=UNCHECKED_HASH`, so never compared with
//! the source), and a `json.py` beside the oracle that `import json` loads instead of the
//! standard library's. Both block, and a signature by an allowed signer clears them. The same
//! two moves made with symbolic links only (a link `json` to a package folder outside
//! `property_paths`, a link `__pycache__` to a folder of bytecode outside them) block too.

mod support;

use std::path::Path;
use std::process::Command;

use support::Repo;

/// What the oracle imports: the untouched module the patch replaces with bytecode.
const ORACLE: &str = "import json, sys\n\ndef serve(check):\n    m = check(json.load(sys.stdin))\n    if m is None:\n        return 0\n    print('failure: ' + m)\n    return 1\n";

/// The bytecode's source, which the patch never commits: it passes every input.
const EVIL: &str =
    "import sys\nMARK = 'evil'\n\ndef serve(check):\n    sys.stdin.read()\n    return 0\n";

const CHECK: &str = "import sys\nfrom oracle import serve\n\ndef check(doc):\n    return 'negative' if doc['n'] < 0 else None\n\nsys.exit(serve(check))\n";

const GENERATOR: &str = "import json, os\nfor i in range(int(os.environ['PROP_CASES'])):\n    print(json.dumps({'n': i}))\n";

const CONFIG: &str = "[policy]\nseed = 20260917\nreplays = 3\ntimeout_ms = 5000\njobs = 2\nmin_cases = 10\nproperty_paths = [\"tests/properties/**\"]\n\n[[property]]\nid = \"p\"\noracle = \"python3 tests/properties/check.py\"\ngenerate = \"python3 gen.py\"\ncases = 10\n";

const PYC: &str = "tests/properties/__pycache__/oracle.cpython-311.pyc";

/// Runs `python3` in `dir` with `args`; its standard output.
fn python(dir: &Path, args: &[&str]) -> String {
    let mut cmd = Command::new("python3");
    if let Some(path) = support::python_path() {
        cmd.env("PATH", path);
    }
    let out = cmd
        .current_dir(dir)
        .args(args)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "python3 {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A base revision, tagged `base`: the policy, `signers` as the allowed signers, the
/// generator, the oracle helper `oracle.py`, and `check` as the property's oracle script.
fn base_repo(signers: &str, check: &str) -> Repo {
    let repo = Repo::new(&[
        ("freezegate.toml", CONFIG),
        ("freeze/allowed_signers", signers),
        ("gen.py", GENERATOR),
        ("tests/properties/oracle.py", ORACLE),
        ("tests/properties/check.py", check),
    ]);
    repo.git(&["tag", "base"]);
    repo
}

/// Where this machine's Python caches the bytecode of `tests/properties/oracle.py` (from the
/// repository's folder).
fn oracle_cache(dir: &Path) -> String {
    python(
        dir,
        &[
            "-B",
            "-c",
            "import importlib.util; print(importlib.util.cache_from_source('tests/properties/oracle.py'))",
        ],
    )
}

/// Compiles [`EVIL`] (written to `scratch`) to `cfile` (from `dir`) as bytecode that claims to
/// be `oracle.py` and that Python never compares with a source (`UNCHECKED_HASH`).
fn compile_evil(dir: &Path, scratch: &Path, cfile: &str) {
    let evil = scratch.join("evil.py");
    std::fs::write(&evil, EVIL).expect("write");
    let evil = evil.to_string_lossy().into_owned();
    python(
        dir,
        &[
            "-B",
            "-c",
            "import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], dfile='oracle.py', doraise=True, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)",
            &evil,
            cfile,
        ],
    );
}

/// The gaming findings of a JSON report, as (rule, file, line, blocking).
fn gaming(report: &serde_json::Value) -> Vec<(String, String, serde_json::Value, bool)> {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["rule"].as_str().is_some_and(|r| r.starts_with("gaming.")))
        .map(|f| {
            (
                f["rule"].as_str().unwrap_or_default().to_string(),
                f["file"].as_str().unwrap_or_default().to_string(),
                f["line"].clone(),
                f["blocking"] == true,
            )
        })
        .collect()
}

#[test]
fn bytecode_and_a_standard_library_shadow_under_property_paths_block_until_signed() {
    // A signing key of the base's allowed signers.
    let (keys, key, signers) = support::signing_key();

    let repo = base_repo(&signers, CHECK);

    // The patch: bytecode for the untouched oracle.py, compiled from other source, where
    // Python's import looks for it; and a json.py beside the oracle.
    let cache = oracle_cache(&repo.dir);
    compile_evil(&repo.dir, keys.path(), &cache);
    // Python runs the bytecode, not the source beside it.
    assert_eq!(
        python(
            &repo.dir,
            &[
                "-c",
                "import sys; sys.path.insert(0, 'tests/properties'); import oracle; print(oracle.MARK)",
            ],
        ),
        "evil"
    );
    // This machine's tag is the one the test names; the committed file is binary.
    let pyc = if cache.ends_with("oracle.cpython-311.pyc") {
        PYC.to_string()
    } else {
        cache.clone()
    };
    assert!(
        std::fs::read(repo.dir.join(&pyc))
            .expect("pyc")
            .contains(&0)
    );
    repo.write(
        "tests/properties/json.py",
        "def load(f):\n    f.read()\n    return {'n': 0}\n\n\ndef loads(s):\n    return {'n': 0}\n",
    );
    repo.git(&["add", "-f", &pyc, "tests/properties/json.py"]);
    repo.git(&["commit", "-q", "-m", "speed up the oracle"]);

    let run = repo.gate(&["--base", "base", "--format", "json"], &[]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).expect("report");
    let found = gaming(&report);
    let opaque = (
        "gaming.opaque-code".to_string(),
        pyc.clone(),
        serde_json::Value::Null,
        true,
    );
    let shadow = (
        "gaming.module-shadowed".to_string(),
        "tests/properties/json.py".to_string(),
        serde_json::Value::Null,
        true,
    );
    assert!(found.contains(&opaque), "{found:?}");
    assert!(found.contains(&shadow), "{found:?}");
    let text = repo.gate(&["--base", "base"], &[]);
    assert_eq!(text.code, 1);
    assert!(
        text.stdout
            .contains("[gaming.module-shadowed] tests/properties/json.py"),
        "{}",
        text.stdout
    );

    // The same commit signed by an allowed signer: reported, not blocking.
    repo.amend_signed(&key);
    let run = repo.gate(&["--base", "base", "--format", "json"], &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).expect("report");
    let found = gaming(&report);
    assert!(found.iter().all(|f| !f.3), "{found:?}");
    let unblocked = |f: &(String, String, serde_json::Value, bool)| {
        (f.0.clone(), f.1.clone(), f.2.clone(), true)
    };
    let found: Vec<_> = found.iter().map(unblocked).collect();
    assert!(found.contains(&opaque), "{found:?}");
    assert!(found.contains(&shadow), "{found:?}");
}

/// A property that fails from `n = 3` on: at the base, the campaign finds it.
const BUGGY_CHECK: &str = "import sys\nfrom oracle import serve\n\ndef check(doc):\n    return 'n is 3 or more' if doc['n'] >= 3 else None\n\nsys.exit(serve(check))\n";

/// The package the link `json` stands for: every document it reads is `{"n": 0}`.
const FAST_JSON: &str = "MARK = 'fast'\n\ndef loads(s, **kw):\n    return {'n': 0}\n\ndef load(f, **kw):\n    f.read()\n    return {'n': 0}\n\ndef dumps(o, **kw):\n    return '{}'\n";

#[test]
fn symbolic_links_to_a_package_and_to_a_bytecode_folder_block_until_signed() {
    let (keys, key, signers) = support::signing_key();

    let repo = base_repo(&signers, BUGGY_CHECK);

    // Outside property_paths: a package, where no rule looks, and bytecode of other source
    // for the untouched oracle.py, named as Python's cache names it, which is opaque-code
    // wherever it lies.
    repo.write("src/fastjson/__init__.py", FAST_JSON);
    let cache = oracle_cache(&repo.dir);
    let name = cache.rsplit('/').next().expect("a file name");
    let pyc = format!("build/pyc/{name}");
    std::fs::create_dir_all(repo.dir.join("build/pyc")).expect("mkdir");
    compile_evil(&repo.dir, keys.path(), &pyc);
    repo.git(&["add", "-f", "src/fastjson/__init__.py", &pyc]);
    repo.git(&[
        "commit",
        "-q",
        "-m",
        "calc: a small json codec and a build cache",
    ]);

    // Under property_paths: two links, and not one line of text.
    let json = "tests/properties/json";
    let pycache = "tests/properties/__pycache__";
    std::os::unix::fs::symlink("../../src/fastjson", repo.dir.join(json)).expect("symlink");
    std::os::unix::fs::symlink("../../build/pyc", repo.dir.join(pycache)).expect("symlink");
    repo.git(&["add", "-f", json, pycache]);
    repo.git(&[
        "commit",
        "-q",
        "-m",
        "tests: share the codec and the bytecode cache",
    ]);
    // Python follows both: `import json` beside the oracle is the package, and `import
    // oracle` runs the bytecode instead of the source.
    let imported = python(
        &repo.dir,
        &[
            "-B",
            "-c",
            "import sys; sys.path.insert(0, 'tests/properties'); import json, oracle; print(json.MARK, oracle.MARK)",
        ],
    );
    assert_eq!(imported, "fast evil");

    let run = repo.gate(&["--base", "base", "--format", "json"], &[]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).expect("report");
    let found = gaming(&report);
    let opaque = |file: &str| {
        (
            "gaming.opaque-code".to_string(),
            file.to_string(),
            serde_json::Value::Null,
            true,
        )
    };
    assert_eq!(
        found,
        vec![opaque(&pyc), opaque(pycache), opaque(json)],
        "{found:?}"
    );

    // The links' commit signed by an allowed signer: its findings are reported, not
    // blocking; the bytecode's commit is not signed and still blocks.
    repo.amend_signed(&key);
    let run = repo.gate(&["--base", "base", "--format", "json"], &[]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).expect("report");
    let found = gaming(&report);
    let blocking: Vec<&str> = found.iter().filter(|f| f.3).map(|f| f.1.as_str()).collect();
    assert_eq!(found.len(), 3, "{found:?}");
    assert_eq!(blocking, vec![pyc.as_str()], "{found:?}");
}
