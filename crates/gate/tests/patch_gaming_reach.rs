//! A Rust property file that stays where it is, unchanged, but stops being compiled: its `mod`
//! line deleted or put behind a `#[cfg]` or `#[path]` in the file that declares it, its crate
//! root renamed, its `Cargo.toml` deleted. Each move is one unsigned commit in a real git
//! repository judged by `check_patch`, and must report the file's properties as
//! `property-removed`; each has a harmless edit next to it that must stay silent.

mod patch_support;

use std::collections::BTreeSet;

use freezegate_gate::patch::check_patch;
use patch_support::{Repo, keys};

const LIB: &str = "pub fn total(v: &[u32]) -> u64 {\n    v.iter().map(|x| u64::from(*x)).sum()\n}\n\n#[cfg(test)]\nmod props;\n";

const PROPS_MOD: &str = "mod checks;\nmod more;\n";

/// Two properties, `fn` on lines 7 and 13.
const CHECKS: &str = "use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn total_is_sum(v in prop::collection::vec(0u32..1000, 0..20)) {
        let total: u64 = v.iter().map(|x| u64::from(*x)).sum();
        prop_assert_eq!(total, crate::total(&v));
    }

    #[test]
    fn control(x in 0u32..10) {
        prop_assert!(x < 10);
    }
}
";

/// One property, `fn` on line 5.
const MORE: &str = "use proptest::prelude::*;

proptest! {
    #[test]
    fn doubles(x in 0u32..100) {
        prop_assert_eq!(x * 2, x + x);
    }
}
";

/// A crate whose `src/lib.rs` (outside `property_paths`) declares `src/props/`, and an
/// integration-test crate `tests/it/` whose root declares `tests/it/props.rs`.
fn base_repo() -> (Repo, String) {
    let repo = Repo::new();
    repo.write(
        "freezegate.toml",
        "[policy]\nproperty_paths = [\"tests/**\", \"src/props/**\"]\nmin_cases = 50\n",
    );
    repo.write(
        "Cargo.toml",
        "[package]\nname = \"invoice\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    repo.write("src/lib.rs", LIB);
    repo.write("src/props/mod.rs", PROPS_MOD);
    repo.write("src/props/checks.rs", CHECKS);
    repo.write("src/props/more.rs", MORE);
    repo.write("tests/it/main.rs", "mod props;\n");
    repo.write("tests/it/props.rs", MORE);
    repo.write("tests/top.rs", CHECKS);
    repo.write("tests/main.rs", "mod top;\n");
    repo.write("docs/notes.md", "notes\n");
    let base = repo.commit("base");
    (repo, base)
}

type Found = BTreeSet<(String, String, u32)>;

/// The findings (rule, file, line) when `edits` (a path and its new text, or `None` to delete
/// it) are committed on the base.
fn judge(edits: &[(&str, Option<&str>)]) -> Found {
    let (repo, base) = base_repo();
    for (path, text) in edits {
        match text {
            Some(text) => repo.write(path, text),
            None => repo.remove(path),
        }
    }
    repo.commit("edit");
    findings(&repo, &base)
}

/// The findings (rule, file, line) of the check of `base..HEAD`.
fn findings(repo: &Repo, base: &str) -> Found {
    repo.check(base)
        .findings
        .into_iter()
        .map(|f| (f.rule, f.file, f.line))
        .collect()
}

fn removed(places: &[(&str, u32)]) -> Found {
    places
        .iter()
        .map(|(file, line)| ("property-removed".to_string(), file.to_string(), *line))
        .collect()
}

/// The properties of `src/props/`.
fn src_props() -> Found {
    removed(&[
        ("src/props/checks.rs", 7),
        ("src/props/checks.rs", 13),
        ("src/props/more.rs", 5),
    ])
}

#[test]
fn a_deleted_mod_line_removes_the_properties_of_the_file_it_declared() {
    // In a file outside `property_paths`: the whole module tree below it.
    let found = judge(&[(
        "src/lib.rs",
        Some(&LIB.replace("#[cfg(test)]\nmod props;\n", "")),
    )]);
    assert_eq!(found, src_props());
    // In a file under `property_paths`: the one file.
    let found = judge(&[("src/props/mod.rs", Some("mod more;\n"))]);
    assert_eq!(
        found,
        removed(&[("src/props/checks.rs", 7), ("src/props/checks.rs", 13)])
    );
    // In the root of an integration-test crate.
    let found = judge(&[("tests/it/main.rs", Some("\n"))]);
    assert_eq!(found, removed(&[("tests/it/props.rs", 5)]));
    // The declaring file deleted.
    let found = judge(&[("src/props/mod.rs", None)]);
    assert_eq!(found, src_props());
}

#[test]
fn edits_that_keep_the_mod_line_are_silent() {
    for edits in [
        vec![("src/lib.rs", Some(format!("{LIB}\npub fn other() {{}}\n")))],
        vec![(
            "src/lib.rs",
            Some(LIB.replace(
                "#[cfg(test)]\nmod props;\n",
                "#[cfg(test)]\n#[allow(dead_code)]\npub(crate) mod props;\n",
            )),
        )],
        vec![(
            "src/lib.rs",
            Some(LIB.replace(
                "#[cfg(test)]\nmod props;\n",
                "#[cfg(any(test, feature = \"slow\"))]\nmod props;\n",
            )),
        )],
        vec![("src/lib.rs", Some(LIB.replace("#[cfg(test)]\n", "")))],
        vec![(
            "src/props/mod.rs",
            Some("mod more;\n// a comment\nmod checks;\n".to_string()),
        )],
        vec![(
            "tests/it/main.rs",
            Some("mod props;\n\nfn helper() {}\n".to_string()),
        )],
        // `tests/top.rs` is a crate root of its own: the `mod top;` of `tests/main.rs` is not
        // what compiles it.
        vec![("tests/main.rs", Some("\n".to_string()))],
        vec![("docs/notes.md", None)],
        vec![("src/other.rs", Some("pub fn f() {}\n".to_string()))],
    ] {
        let edits: Vec<(&str, Option<&str>)> =
            edits.iter().map(|(p, t)| (*p, t.as_deref())).collect();
        let found = judge(&edits);
        assert!(found.is_empty(), "{edits:?}\n{found:?}");
    }
}

#[test]
fn a_cfg_or_path_attribute_on_the_mod_line_removes_the_properties() {
    for attribute in [
        "#[cfg(any())]",
        "#[cfg(FALSE)]",
        "#[cfg(not(test))]",
        "#[cfg(all(test, feature = \"never\"))]",
        "#[cfg(feature = \"slow\")]",
        "#[path = \"other.rs\"]",
        "#[cfg_attr(test, path = \"other/mod.rs\")]",
        "#[cfg_attr(test, cfg(any()))]",
    ] {
        let lib = LIB.replace(
            "#[cfg(test)]\nmod props;\n",
            &format!("{attribute}\nmod props;\n"),
        );
        let found = judge(&[("src/lib.rs", Some(&lib))]);
        assert_eq!(found, src_props(), "{attribute}");
        // The same attribute next to `#[cfg(test)]`, or on a line of its own before it.
        let lib = LIB.replace("#[cfg(test)]\n", &format!("#[cfg(test)] {attribute}\n"));
        let found = judge(&[("src/lib.rs", Some(&lib))]);
        assert_eq!(found, src_props(), "{attribute}");
    }
    // An inner `#![cfg(…)]` of the declaring file turns off all it declares.
    let found = judge(&[(
        "src/props/mod.rs",
        Some(&format!("#![cfg(any())]\n{PROPS_MOD}")),
    )]);
    assert!(src_props().iter().all(|f| found.contains(f)), "{found:?}");
}

#[test]
fn a_renamed_crate_root_or_a_deleted_cargo_toml_removes_the_properties() {
    let (repo, base) = base_repo();
    repo.git(&["mv", "tests/it/main.rs", "tests/it/main.rs.off"]);
    repo.commit("rename the root");
    let found = findings(&repo, &base);
    assert_eq!(found, removed(&[("tests/it/props.rs", 5)]));

    let mut all = src_props();
    all.extend(removed(&[
        ("tests/it/props.rs", 5),
        ("tests/top.rs", 7),
        ("tests/top.rs", 13),
    ]));
    let found = judge(&[("Cargo.toml", None)]);
    assert_eq!(found, all);
    let (repo, base) = base_repo();
    repo.git(&["mv", "Cargo.toml", "Cargo.toml.off"]);
    repo.commit("rename the manifest");
    let found = findings(&repo, &base);
    assert_eq!(found, all);
    // A changed manifest still makes a crate.
    let found = judge(&[(
        "Cargo.toml",
        Some("[package]\nname = \"invoice\"\nversion = \"0.2.0\"\nedition = \"2021\"\n"),
    )]);
    assert!(found.is_empty(), "{found:?}");
}

/// What `Cargo.toml` says of its targets decides whether `cargo test` runs them: a manifest
/// edit that turns a test target off removes the properties only it compiled.
#[test]
fn a_manifest_that_stops_running_a_target_removes_its_properties() {
    let manifest = |extra: &str| {
        format!("[package]\nname = \"invoice\"\nversion = \"0.1.0\"\nedition = \"2021\"\n{extra}")
    };
    let it = || removed(&[("tests/it/props.rs", 5)]);
    let top = || removed(&[("tests/top.rs", 7), ("tests/top.rs", 13)]);
    let mut tests = it();
    tests.extend(top());
    for (extra, expected) in [
        // No more test targets found by convention.
        ("autotests = false\n", tests.clone()),
        // …but the ones listed still run.
        (
            "autotests = false\n\n[[test]]\nname = \"it\"\npath = \"tests/it/main.rs\"\n",
            top(),
        ),
        ("autotests = false\n\n[[test]]\nname = \"main\"\n", it()),
        // A target whose tests never run.
        ("\n[[test]]\nname = \"it\"\nharness = false\n", it()),
        ("\n[[test]]\nname = \"it\"\ntest = false\n", it()),
        (
            "\n[[test]]\nname = \"it\"\nrequired-features = [\"slow\"]\n",
            it(),
        ),
        ("\n[lib]\ntest = false\n", src_props()),
        ("\n[lib]\nharness = false\n", src_props()),
        ("\n[lib]\npath = \"src/other.rs\"\n", src_props()),
        // A target of the file's name at another path: cargo infers none for the file.
        (
            "\n[[test]]\nname = \"it\"\npath = \"tests/empty.rs\"\n",
            it(),
        ),
        // The default feature a target requires, dropped.
        (
            "\n[features]\ndefault = []\nslow = []\n\n[[test]]\nname = \"it\"\nrequired-features = [\"slow\"]\n",
            it(),
        ),
    ] {
        let found = judge(&[("Cargo.toml", Some(&manifest(extra)))]);
        assert_eq!(found, expected, "{extra}");
    }
    // Edition 2015 (the `edition` key gone): one declared test target turns the discovery
    // of the others off.
    let found = judge(&[(
        "Cargo.toml",
        Some("[package]\nname = \"invoice\"\nversion = \"0.1.0\"\n\n[[test]]\nname = \"main\"\n"),
    )]);
    assert_eq!(found, it());
    // Harmless: a target off whose files another target still compiles (`tests/top.rs` is
    // declared by `tests/main.rs`), a bench without the harness, a dependency.
    for extra in [
        "\n[features]\ndefault = [\"slow\"]\nslow = []\n\n[[test]]\nname = \"it\"\nrequired-features = [\"slow\"]\n",
        "\n[[test]]\nname = \"top\"\nrequired-features = [\"slow\"]\n",
        "\n[[bench]]\nname = \"speed\"\nharness = false\n",
        "\n[dependencies]\nproptest = \"1\"\n",
        "autobenches = false\n",
    ] {
        let found = judge(&[("Cargo.toml", Some(&manifest(extra)))]);
        assert!(found.is_empty(), "{extra}: {found:?}");
    }
}

/// A property moved to a file that a target of `Cargo.toml` names by its own `path` still
/// runs; one moved to a target that runs no tests does not.
#[test]
fn a_target_path_in_the_manifest_compiles_the_file_it_names() {
    for (extra, expected) in [
        (
            "\n[[test]]\nname = \"extra\"\npath = \"tests/suites/extra.rs\"\n",
            Found::new(),
        ),
        (
            "\n[[test]]\nname = \"extra\"\npath = \"tests/suites/extra.rs\"\nharness = false\n",
            removed(&[("tests/top.rs", 7), ("tests/top.rs", 13)]),
        ),
    ] {
        let (repo, base) = base_repo();
        repo.write(
            "Cargo.toml",
            &format!(
                "[package]\nname = \"invoice\"\nversion = \"0.1.0\"\nedition = \"2021\"\n{extra}"
            ),
        );
        repo.write("tests/main.rs", "\n");
        std::fs::create_dir_all(repo.path().join("tests/suites")).unwrap();
        repo.git(&["mv", "tests/top.rs", "tests/suites/extra.rs"]);
        repo.commit_signed("the suite gets a target of its own", &keys().alice);
        let found: Found = findings(&repo, &base)
            .into_iter()
            .filter(|(rule, _, _)| rule == "property-removed")
            .collect();
        assert_eq!(found, expected, "{extra}");
    }
}

/// `cargo test` runs the `#[test]`s of a bench or an example only when its target says
/// `test = true` (both default to `test = false`; an example is only built): a property moved
/// into `benches/` or `examples/` without one is removed, and so are the properties of one
/// whose target loses `test = true`.
#[test]
fn a_bench_or_an_example_runs_its_tests_only_with_test_true() {
    let manifest = |extra: &str| {
        format!("[package]\nname = \"inv\"\nversion = \"0.1.0\"\nedition = \"2021\"\n{extra}")
    };
    let repo_with = |extra: &str, file: &str| -> (Repo, String) {
        let repo = Repo::new();
        repo.write(
            "freezegate.toml",
            "[policy]\nproperty_paths = [\"tests/**\", \"benches/**\", \"examples/**\"]\nmin_cases = 50\n",
        );
        repo.write("Cargo.toml", &manifest(extra));
        repo.write("src/lib.rs", "//! Invoices.\n");
        repo.write(file, MORE);
        let base = repo.commit("base");
        (repo, base)
    };
    let removals = |repo: &Repo, base: &str| -> Found {
        findings(repo, base)
            .into_iter()
            .filter(|(rule, _, _)| rule == "property-removed")
            .collect()
    };
    // Moved out of `tests/props.rs` into a bench or an example.
    let gone = removed(&[("tests/props.rs", 5)]);
    for (extra, file, runs) in [
        ("", "benches/props.rs", false),
        ("", "examples/props.rs", false),
        ("", "examples/props/main.rs", false),
        ("\n[[bench]]\nname = \"props\"\n", "benches/props.rs", false),
        (
            "\n[[bench]]\nname = \"props\"\ntest = true\n",
            "benches/props.rs",
            true,
        ),
        (
            "\n[[example]]\nname = \"props\"\ntest = true\n",
            "examples/props.rs",
            true,
        ),
        (
            "\n[[example]]\nname = \"props\"\ntest = true\nharness = false\n",
            "examples/props.rs",
            false,
        ),
        (
            "\n[[bench]]\nname = \"p\"\npath = \"benches/suite/props.rs\"\ntest = true\n",
            "benches/suite/props.rs",
            true,
        ),
    ] {
        let (repo, base) = repo_with(extra, "tests/props.rs");
        repo.remove("tests/props.rs");
        repo.write(file, MORE);
        repo.commit("the property moves");
        let found = removals(&repo, &base);
        let expected = if runs { Found::new() } else { gone.clone() };
        assert_eq!(found, expected, "{file} under {extra:?}");
    }
    // A bench or an example whose target loses `test = true`, left as it is.
    for (extra, file) in [
        (
            "\n[[bench]]\nname = \"props\"\ntest = true\n",
            "benches/props.rs",
        ),
        (
            "\n[[example]]\nname = \"props\"\ntest = true\n",
            "examples/props.rs",
        ),
    ] {
        let (repo, base) = repo_with(extra, file);
        repo.write("Cargo.toml", &manifest(&extra.replace("test = true\n", "")));
        repo.commit("the target keeps its name");
        assert_eq!(removals(&repo, &base), removed(&[(file, 5)]), "{file}");
        // Harmless: the target kept as it is beside another edit.
        let (repo, base) = repo_with(extra, file);
        repo.write(
            "Cargo.toml",
            &manifest(&format!("{extra}\n[dependencies]\n")),
        );
        repo.commit("an empty dependency table");
        assert!(removals(&repo, &base).is_empty(), "{file}");
    }
}

/// A workspace that stops holding a crate (`exclude`, or `members` that no longer match it)
/// stops testing it under `cargo test --workspace`.
#[test]
fn a_crate_dropped_from_its_workspace_loses_its_properties() {
    let workspace = |section: &str| format!("[workspace]\n{section}\nresolver = \"3\"\n");
    let judge_ws = |section: &str| -> Found {
        let repo = Repo::new();
        repo.write(
            "freezegate.toml",
            "[policy]\nproperty_paths = [\"crates/*/tests/**\"]\nmin_cases = 50\n",
        );
        repo.write("Cargo.toml", &workspace("members = [\"crates/*\"]"));
        repo.write(
            "crates/inv/Cargo.toml",
            "[package]\nname = \"inv\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        );
        repo.write("crates/inv/src/lib.rs", "//! Invoices.\n");
        repo.write("crates/inv/tests/props.rs", MORE);
        let base = repo.commit("base");
        repo.write("Cargo.toml", &workspace(section));
        repo.commit("workspace");
        findings(&repo, &base)
    };
    let gone = removed(&[("crates/inv/tests/props.rs", 5)]);
    for section in [
        "members = [\"crates/*\"]\nexclude = [\"crates/inv\"]",
        "members = [\"crates/other\"]",
        "members = []",
        // A glob overrides no `exclude`.
        "members = [\"crates/i*\"]\nexclude = [\"crates/inv\"]",
    ] {
        assert_eq!(judge_ws(section), gone, "{section}");
    }
    for section in [
        "members = [\"crates/*\", \"tools/*\"]",
        "members = [\"crates/inv\"]",
        "members = [\"crates/*\"]\nexclude = [\"crates/old\"]",
        // A member named by its literal path overrides `exclude`, as cargo reads it (the
        // unit tests of `reach` hold a crate below such a member too).
        "members = [\"crates/*\", \"crates/inv\"]\nexclude = [\"crates/inv\"]",
        "members = [\"./crates/inv/\"]\nexclude = [\"crates\"]",
    ] {
        let found = judge_ws(section);
        assert!(found.is_empty(), "{section}: {found:?}");
    }
}

/// A workspace root that is also a package: a crate it holds only as a path dependency
/// stops being tested when the dependency goes; an explicit test `path` in an excluded
/// crate's manifest does not bring it back.
#[test]
fn a_member_by_path_dependency_or_an_excluded_crate_with_a_target_path() {
    let judge_root = |root: &str, root_after: &str, inv_after: Option<&str>| -> Found {
        let repo = Repo::new();
        repo.write(
            "freezegate.toml",
            "[policy]\nproperty_paths = [\"crates/*/tests/**\"]\nmin_cases = 50\n",
        );
        repo.write("Cargo.toml", root);
        repo.write("src/lib.rs", "//! Root.\n");
        repo.write(
            "crates/inv/Cargo.toml",
            "[package]\nname = \"inv\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        );
        repo.write("crates/inv/src/lib.rs", "//! Invoices.\n");
        repo.write("crates/inv/tests/props.rs", MORE);
        let base = repo.commit("base");
        repo.write("Cargo.toml", root_after);
        if let Some(inv) = inv_after {
            repo.write("crates/inv/Cargo.toml", inv);
        }
        repo.commit("manifests");
        findings(&repo, &base)
    };
    let pkg = "[package]\nname = \"root\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";
    let gone = removed(&[("crates/inv/tests/props.rs", 5)]);
    // A member only as the root package's path dependency, the dependency removed.
    let with_dep =
        format!("[workspace]\n\n{pkg}\n[dependencies]\ninv = {{ path = \"crates/inv\" }}\n");
    let without = format!("[workspace]\n\n{pkg}");
    assert_eq!(judge_root(&with_dep, &without, None), gone);
    // A member through `[workspace.dependencies]` stays one over an unrelated edit.
    let inherited = format!(
        "[workspace]\n\n[workspace.dependencies]\ninv = {{ path = \"crates/inv\" }}\n\n{pkg}\n[dependencies]\ninv = {{ workspace = true }}\n"
    );
    let found = judge_root(&inherited, &inherited.replace("0.1.0", "0.2.0"), None);
    assert!(found.is_empty(), "{found:?}");
    // Excluded, with an explicit test path added in the crate's own manifest.
    let members = "[workspace]\nmembers = [\"crates/*\"]\n";
    let excluded = "[workspace]\nmembers = [\"crates/*\"]\nexclude = [\"crates/inv\"]\n";
    let explicit = "[package]\nname = \"inv\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[[test]]\nname = \"props\"\npath = \"tests/props.rs\"\n";
    assert_eq!(judge_root(members, excluded, Some(explicit)), gone);
}

/// Cargo makes every path dependency of a member that lies inside the workspace folder (and
/// is not excluded) a member too, transitively: a crate dropped from `members` that another
/// member still depends on by path keeps running its tests; when the last such dependency
/// goes, it stops.
#[test]
fn a_path_dependency_of_a_member_keeps_a_crate_in_its_workspace() {
    let pkg = |name: &str, extra: &str| {
        format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n{extra}")
    };
    let workspace =
        |members: &str| format!("[workspace]\nmembers = [{members}]\nresolver = \"3\"\n");
    // The root, then the manifests of `crates/app` and `crates/util` at each commit after the
    // base (`None`: as before); the findings with the index of their commit.
    type Step<'a> = (&'a str, Option<&'a str>, Option<&'a str>);
    let judge_steps =
        |app: &str, util: &str, steps: &[Step<'_>]| -> BTreeSet<(usize, String, u32)> {
            let repo = Repo::new();
            repo.write(
                "freezegate.toml",
                "[policy]\nproperty_paths = [\"crates/*/tests/**\"]\nmin_cases = 50\n",
            );
            repo.write(
                "Cargo.toml",
                &workspace("\"crates/app\", \"crates/lib\", \"crates/util\""),
            );
            repo.write("crates/app/Cargo.toml", app);
            repo.write("crates/app/src/main.rs", "fn main() {}\n");
            repo.write(
                "crates/lib/Cargo.toml",
                &pkg("lib", "\n[dependencies]\nutil = { path = \"../util\" }\n"),
            );
            repo.write("crates/lib/src/lib.rs", "//! Lib.\n");
            repo.write("crates/lib/tests/props.rs", MORE);
            repo.write("crates/util/Cargo.toml", util);
            repo.write("crates/util/src/lib.rs", "//! Util.\n");
            repo.write("crates/util/tests/props.rs", MORE);
            let base = repo.commit("base");
            let mut commits = Vec::new();
            for (root, app, util) in steps {
                repo.write("Cargo.toml", root);
                if let Some(app) = app {
                    repo.write("crates/app/Cargo.toml", app);
                }
                if let Some(util) = util {
                    repo.write("crates/util/Cargo.toml", util);
                }
                commits.push(repo.commit("step"));
            }
            repo.check(&base)
                .findings
                .into_iter()
                .map(|f| {
                    assert_eq!(f.rule, "property-removed", "{f:?}");
                    let at = commits.iter().position(|c| *c == f.commit).expect("a step");
                    (at, f.file, f.line)
                })
                .collect()
        };
    let lib = |at: usize| (at, "crates/lib/tests/props.rs".to_string(), 5);
    let util = |at: usize| (at, "crates/util/tests/props.rs".to_string(), 5);
    let only_app = workspace("\"crates/app\"");
    let util_pkg = pkg("util", "");
    for dep in [
        "[dependencies]\nlib = { path = \"../lib\" }\n",
        "[dev-dependencies]\nlib = { path = \"../lib/\" }\n",
        "[build-dependencies.lib]\npath = \"./../lib\"\n",
        "[target.'cfg(unix)'.dependencies]\nlib = { path = \"../lib\" }\n",
        "[target.'cfg(windows)'.dev-dependencies]\nlib = { path = \"../../crates/lib\" }\n",
    ] {
        let app = pkg("app", &format!("\n{dep}"));
        let bare = pkg("app", "");
        // `lib` and `util` leave `members`: still members, through `app` and then `lib`.
        let found = judge_steps(&app, &util_pkg, &[(&only_app, None, None)]);
        assert!(found.is_empty(), "{dep}: {found:?}");
        // …until `app` drops the dependency: both stop, in that commit.
        let found = judge_steps(
            &app,
            &util_pkg,
            &[(&only_app, None, None), (&only_app, Some(&bare), None)],
        );
        assert_eq!(found, BTreeSet::from([lib(1), util(1)]), "{dep}");
        // Excluded, a path dependency does not make a member.
        let excluded = format!("{only_app}exclude = [\"crates/lib\"]\n");
        let found = judge_steps(&app, &util_pkg, &[(&excluded, None, None)]);
        assert_eq!(found, BTreeSet::from([lib(0), util(0)]), "{dep}");
    }
    // A member's path dependency outside the workspace folder makes no member; `util` stays
    // one through `lib`, a member by glob.
    let outside = pkg(
        "app",
        "\n[dependencies]\nlib = { path = \"../../../elsewhere/lib\" }\n",
    );
    let found = judge_steps(
        &outside,
        &util_pkg,
        &[(&workspace("\"crates/app\", \"crates/l*\""), None, None)],
    );
    assert!(found.is_empty(), "{found:?}");
    // The dependency moved to a `[target]` table is no loss.
    let app = pkg("app", "\n[dependencies]\nlib = { path = \"../lib\" }\n");
    let target = pkg(
        "app",
        "\n[target.'cfg(unix)'.build-dependencies]\nlib = { path = \"../lib\" }\n",
    );
    let found = judge_steps(
        &app,
        &util_pkg,
        &[(&only_app, None, None), (&only_app, Some(&target), None)],
    );
    assert!(found.is_empty(), "{found:?}");
}

/// A crate named only in `[workspace.dependencies]` is no member by that alone: cargo makes it
/// one when a member inherits it (`lib = { workspace = true }`, in a dependency table of any
/// kind, target-specific too), resolving the path from the workspace folder.
#[test]
fn a_workspace_dependency_makes_a_member_only_when_a_member_inherits_it() {
    let pkg = |name: &str, extra: &str| {
        format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n{extra}")
    };
    let root = |extra: &str| {
        format!(
            "[workspace]\nmembers = [\"crates/app\"]\nresolver = \"2\"\n\n[workspace.dependencies]\nlib = {{ path = \"crates/lib\" }}\nutil = {{ path = \"./crates/util/\" }}\n{extra}"
        )
    };
    // `crates/lib` inherits `util` in turn; the findings of `base..HEAD` after `edits`.
    let judge_ws = |app: &str, root_extra: &str, edits: &[(&str, Option<&str>)]| -> Found {
        let repo = Repo::new();
        repo.write(
            "freezegate.toml",
            "[policy]\nproperty_paths = [\"crates/*/tests/**\"]\nmin_cases = 50\n",
        );
        repo.write("Cargo.toml", &root(root_extra));
        repo.write("crates/app/Cargo.toml", app);
        repo.write("crates/app/src/main.rs", "fn main() {}\n");
        repo.write("crates/app/tests/props.rs", CHECKS);
        repo.write(
            "crates/lib/Cargo.toml",
            &pkg("lib", "\n[dependencies]\nutil.workspace = true\n"),
        );
        repo.write("crates/lib/src/lib.rs", "//! Lib.\n");
        repo.write("crates/lib/tests/props.rs", MORE);
        repo.write("crates/util/Cargo.toml", &pkg("util", ""));
        repo.write("crates/util/src/lib.rs", "//! Util.\n");
        repo.write("crates/util/tests/props.rs", MORE);
        let base = repo.commit("base");
        for (path, text) in edits {
            match text {
                Some(text) => repo.write(path, text),
                None => repo.remove(path),
            }
        }
        repo.commit("edit");
        findings(&repo, &base)
            .into_iter()
            .filter(|(rule, _, _)| rule == "property-removed")
            .collect()
    };
    let both = removed(&[
        ("crates/lib/tests/props.rs", 5),
        ("crates/util/tests/props.rs", 5),
    ]);
    let bare = pkg("app", "");
    for dep in [
        "[dependencies]\nlib = { workspace = true }\n",
        "[dev-dependencies.lib]\nworkspace = true\n",
        "[target.'cfg(windows)'.build-dependencies]\nlib.workspace = true\n",
    ] {
        let app = pkg("app", &format!("\n{dep}"));
        // The last member that inherits `lib` drops it: `lib` and `util` stop.
        let found = judge_ws(&app, "", &[("crates/app/Cargo.toml", Some(&bare))]);
        assert_eq!(found, both, "{dep}");
        // Harmless: the dependency kept, beside another edit.
        let edited = format!("{app}\n[features]\n");
        let found = judge_ws(&app, "", &[("crates/app/Cargo.toml", Some(&edited))]);
        assert!(found.is_empty(), "{dep}: {found:?}");
        // …or moved to another table.
        let moved = pkg(
            "app",
            "\n[target.'cfg(unix)'.dev-dependencies]\nlib = { workspace = true }\n",
        );
        let found = judge_ws(&app, "", &[("crates/app/Cargo.toml", Some(&moved))]);
        assert!(found.is_empty(), "{dep}: {found:?}");
    }
    // A property moved into a crate that only `[workspace.dependencies]` names.
    let found = judge_ws(
        &bare,
        "",
        &[
            ("crates/app/tests/props.rs", None),
            ("crates/lib/tests/checks.rs", Some(CHECKS)),
        ],
    );
    assert_eq!(
        found,
        removed(&[
            ("crates/app/tests/props.rs", 7),
            ("crates/app/tests/props.rs", 13)
        ])
    );
    // The root's own package inherits `lib`, then stops.
    let root_pkg = "\n[package]\nname = \"root\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dev-dependencies]\nlib = { workspace = true }\n";
    let found = judge_ws(
        &bare,
        root_pkg,
        &[(
            "Cargo.toml",
            Some(&root(&root_pkg.replace("lib = { workspace = true }\n", ""))),
        )],
    );
    assert_eq!(found, both);
}

/// A workspace in a folder of the project: a member's path dependency is resolved from the
/// member's folder, even through the folders above the workspace.
#[test]
fn a_nested_workspace_resolves_member_paths_from_their_folder() {
    let repo = Repo::new();
    repo.write(
        "freezegate.toml",
        "[policy]\nproperty_paths = [\"rust/crates/*/tests/**\"]\nmin_cases = 50\n",
    );
    let ws = |members: &str| format!("[workspace]\nmembers = [{members}]\n");
    repo.write("rust/Cargo.toml", &ws("\"crates/app\", \"crates/lib\""));
    repo.write(
        "rust/crates/app/Cargo.toml",
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nlib = { path = \"../../../rust/crates/lib\" }\n",
    );
    repo.write("rust/crates/app/src/main.rs", "fn main() {}\n");
    repo.write(
        "rust/crates/lib/Cargo.toml",
        "[package]\nname = \"lib\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    repo.write("rust/crates/lib/src/lib.rs", "//! Lib.\n");
    repo.write("rust/crates/lib/tests/props.rs", MORE);
    let base = repo.commit("base");
    repo.write("rust/Cargo.toml", &ws("\"crates/app\""));
    repo.commit("lib leaves members");
    let found = findings(&repo, &base);
    assert!(found.is_empty(), "{found:?}");
    repo.write(
        "rust/crates/app/Cargo.toml",
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    repo.commit("app drops lib");
    let found = findings(&repo, &base);
    assert_eq!(found, removed(&[("rust/crates/lib/tests/props.rs", 5)]));
}

/// A file that a compiled file `include!`s (by a path from the including file's folder) is
/// compiled: a property moved there still runs, and it stops when the `include!` goes or
/// gains a `cfg` that is not always on in a test build.
#[test]
fn a_file_a_compiled_file_includes_is_compiled() {
    // The property moved out of `tests/top.rs` into files `tests/top.rs` includes.
    for (include, file) in [
        ("include!(\"common/props.rs\");", "tests/common/props.rs"),
        (
            "#[cfg(test)]\ninclude!(\"../tests/shared/props.rs\");",
            "tests/shared/props.rs",
        ),
        ("std::include! { \"./top_props.rs\" }", "tests/top_props.rs"),
        // In inline modules, still from the file's folder.
        (
            "#[cfg(test)]\nmod inner {\n    pub mod deeper {\n        include!(\"common/props.rs\");\n    }\n}",
            "tests/common/props.rs",
        ),
    ] {
        let (repo, base) = base_repo();
        repo.write("tests/top.rs", &format!("{include}\n"));
        repo.write(file, CHECKS);
        repo.commit("the properties move to an included file");
        let found: Found = findings(&repo, &base)
            .into_iter()
            .filter(|(rule, _, _)| rule == "property-removed")
            .collect();
        assert!(found.is_empty(), "{include}: {found:?}");
    }
    // …and not into a file an `include!` names only behind a `cfg`, or through `concat!`, or
    // in a function body, an `impl` or a `const` block (whose `#[test]`s the harness never
    // runs), or in a module behind a `cfg`.
    for include in [
        "#[allow(dead_code)]\nfn never() {\n    mod inner {\n        include!(\"common/props.rs\");\n    }\n}",
        "struct S;\nimpl S {\n    include!(\"common/props.rs\");\n}",
        "const _: () = {\n    include!(\"common/props.rs\");\n};",
        "#[cfg(feature = \"slow\")]\nmod inner {\n    include!(\"common/props.rs\");\n}",
        "#[cfg(feature = \"slow\")]\ninclude!(\"common/props.rs\");",
        "include!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/tests/common/props.rs\"));",
        "// include!(\"common/props.rs\");",
    ] {
        let (repo, base) = base_repo();
        repo.write("tests/top.rs", &format!("{include}\n"));
        repo.write("tests/common/props.rs", CHECKS);
        repo.commit("the properties move to a file nothing compiles");
        let found: Found = findings(&repo, &base)
            .into_iter()
            .filter(|(rule, _, _)| rule == "property-removed")
            .collect();
        assert_eq!(
            found,
            removed(&[("tests/top.rs", 7), ("tests/top.rs", 13)]),
            "{include}"
        );
    }
    // A property file that only an `include!` compiles, left as it is while the `include!`
    // goes or stops counting.
    let included = |root: &str| -> Found {
        let (repo, base) = base_repo();
        repo.write("tests/it/main.rs", "include!(\"../shared/props.rs\");\n");
        repo.remove("tests/it/props.rs");
        repo.write("tests/shared/props.rs", MORE);
        let base2 = repo.commit("the suite includes its properties");
        assert!(
            findings(&repo, &base)
                .iter()
                .all(|(rule, _, _)| rule != "property-removed")
        );
        repo.write("tests/it/main.rs", root);
        repo.commit("edit");
        findings(&repo, &base2)
    };
    let gone = removed(&[("tests/shared/props.rs", 5)]);
    for root in [
        "\n",
        "#[cfg(unix)]\ninclude!(\"../shared/props.rs\");\n",
        "include!(\"shared/props.rs\");\n",
    ] {
        assert_eq!(included(root), gone, "{root}");
    }
    for root in [
        "include!(\"../shared/props.rs\");\n\nfn helper() {}\n",
        "#[cfg(test)]\ninclude!(\"./../shared/props.rs\");\n",
    ] {
        let found = included(root);
        assert!(found.is_empty(), "{root}: {found:?}");
    }
}

/// A property file compiled only through an `include!` chain that leaves the folder of what
/// the commit changes (`tests/it/common.rs` includes `../shared/props.rs`): when the commit
/// takes away what compiled the including file, the included one is found all the same.
#[test]
fn an_include_chain_out_of_the_changed_folder_is_followed() {
    let chain = |edits: &[(&str, &str)]| -> Found {
        let repo = Repo::new();
        repo.write(
            "freezegate.toml",
            "[policy]\nproperty_paths = [\"tests/**\", \"shared/**\"]\nmin_cases = 50\n",
        );
        repo.write(
            "Cargo.toml",
            "[package]\nname = \"inv\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        );
        repo.write("src/lib.rs", "//! Invoices.\n");
        repo.write("tests/it/main.rs", "mod common;\nmod other;\n");
        repo.write("tests/it/other.rs", "\n");
        repo.write("tests/it/common.rs", "include!(\"../shared/props.rs\");\n");
        repo.write(
            "tests/shared/props.rs",
            "include!(\"../../shared/more.rs\");\n",
        );
        repo.write("shared/more.rs", MORE);
        repo.write("tests/shared/sibling.rs", CHECKS);
        let base = repo.commit("base");
        for (path, text) in edits {
            repo.write(path, text);
        }
        repo.commit("edit");
        findings(&repo, &base)
    };
    // `mod common;` dropped; the crate's tests turned off: the chain's end is removed.
    let gone = removed(&[("shared/more.rs", 5)]);
    assert_eq!(chain(&[("tests/it/main.rs", "mod other;\n")]), gone);
    assert_eq!(
        chain(&[(
            "Cargo.toml",
            "[package]\nname = \"inv\"\nversion = \"0.1.0\"\nedition = \"2021\"\nautotests = false\n"
        )]),
        gone
    );
    // Harmless: another module dropped.
    let found = chain(&[("tests/it/main.rs", "mod common;\n")]);
    assert!(found.is_empty(), "{found:?}");
    // A crate in a folder whose test includes a file outside it, then turns its tests off.
    let crate_at = |manifest_extra: &str| -> Found {
        let repo = Repo::new();
        repo.write(
            "freezegate.toml",
            "[policy]\nproperty_paths = [\"shared/**\"]\nmin_cases = 50\n",
        );
        let manifest = |extra: &str| {
            format!("[package]\nname = \"a\"\nversion = \"0.1.0\"\nedition = \"2021\"\n{extra}")
        };
        repo.write("crates/a/Cargo.toml", &manifest(""));
        repo.write("crates/a/src/lib.rs", "//! A.\n");
        repo.write(
            "crates/a/tests/it.rs",
            "include!(\"../../../shared/props.rs\");\n",
        );
        repo.write("shared/props.rs", MORE);
        let base = repo.commit("base");
        repo.write("crates/a/Cargo.toml", &manifest(manifest_extra));
        repo.commit("edit");
        findings(&repo, &base)
            .into_iter()
            .filter(|(rule, _, _)| rule == "property-removed")
            .collect()
    };
    assert_eq!(
        crate_at("autotests = false\n"),
        removed(&[("shared/props.rs", 5)])
    );
    let found = crate_at("autobenches = false\n");
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn the_finding_names_the_file_and_why_and_a_signed_commit_does_not_block() {
    let (repo, base) = base_repo();
    repo.write("tests/it/main.rs", "\n");
    let unsigned = repo.commit("drop the mod line");
    let report = repo.check(&base);
    let [finding] = report.findings.as_slice() else {
        panic!("{:#?}", report.findings);
    };
    assert_eq!(finding.commit, unsigned);
    assert_eq!(finding.file, "tests/it/props.rs");
    assert!(finding.blocking);
    assert!(
        finding.explanation.contains("`doubles`")
            && finding
                .explanation
                .contains("tests/it/props.rs is no longer compiled")
            && finding.explanation.contains("tests/it/main.rs"),
        "{}",
        finding.explanation
    );

    let keys = keys();
    let (repo, _) = base_repo();
    repo.write("freeze/allowed_signers", &keys.alice.allowed_line());
    let base = repo.commit("signers");
    repo.write("tests/it/main.rs", "\n");
    repo.commit_signed("drop the mod line", &keys.alice);
    let report = repo.check(&base);
    assert_eq!(report.findings.len(), 1, "{:#?}", report.findings);
    assert!(!report.findings[0].blocking);
    assert!(!report.blocking());
}

/// A `git` that logs its arguments, and fails `ls-tree -r` when `fail` is set.
fn wrapper(dir: &std::path::Path, fail: bool) -> (std::path::PathBuf, std::path::PathBuf) {
    let log = dir.join("git-calls");
    let script = dir.join("git-wrapper");
    let failing = if fail {
        "case \"$*\" in *ls-tree*-r*) exit 7;; esac\n"
    } else {
        ""
    };
    write_executable(
        &script,
        &format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\n{failing}exec git \"$@\"\n",
            log.display()
        ),
    );
    (script, log)
}

/// Writes an executable file from a child process (`sh -c 'cat > FILE'`). Written from this
/// process, the file's descriptor could be inherited by a child another test thread forks at
/// that moment, and running the file while that child still holds it fails with "Text file
/// busy" (`ETXTBSY`); this process never holds it open.
fn write_executable(path: &std::path::Path, text: &str) {
    use std::io::Write as _;
    let mut writer = std::process::Command::new("sh")
        .args(["-c", "cat > \"$1\" && chmod 755 \"$1\"", "sh"])
        .arg(path)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    writer
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    assert!(writer.wait().unwrap().success());
}

#[test]
fn commits_that_cannot_change_what_is_compiled_start_no_extra_git() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, base) = base_repo();
    // No Rust file or manifest; a Rust edit that keeps every `mod` line; a property file's
    // own edit.
    repo.write("docs/notes.md", "more notes\n");
    repo.commit("docs");
    repo.write("src/lib.rs", &format!("{LIB}\npub fn other() {{}}\n"));
    repo.commit("code");
    repo.write("src/props/more.rs", &format!("{MORE}\n// note\n"));
    repo.commit("property");
    let (git, log) = wrapper(tmp.path(), false);
    let mut options = Repo::options("HEAD");
    options.git = git.into();
    let report = check_patch(repo.path(), &base, &options).unwrap();
    assert!(report.findings.is_empty(), "{:#?}", report.findings);
    let listings = |log: &std::path::Path| {
        let calls = std::fs::read_to_string(log).unwrap();
        calls.lines().filter(|l| l.contains(" ls-tree -r ")).count()
    };
    assert_eq!(listings(&log), 0);
    // A commit that drops a `mod` line is looked at: the files below the folder of the
    // change are listed, the whole tree before it once, for the `include!` chains that lead
    // out of that folder, and the commit's whole tree once, for the `include!`s that might
    // still compile the file no `mod` line reaches.
    repo.write("tests/it/main.rs", "\n");
    repo.commit("drop the mod line");
    std::fs::remove_file(&log).unwrap();
    let report = check_patch(repo.path(), &base, &options).unwrap();
    assert_eq!(report.findings.len(), 1, "{:#?}", report.findings);
    assert_eq!(listings(&log), 3);
}

#[test]
fn a_git_failure_while_looking_is_an_error_not_a_pass() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, base) = base_repo();
    repo.write("tests/it/main.rs", "\n");
    repo.commit("drop the mod line");
    let (git, _) = wrapper(tmp.path(), true);
    let mut options = Repo::options("HEAD");
    options.git = git.into();
    assert!(check_patch(repo.path(), &base, &options).is_err());
}

/// A crate with `n` integration-test files, each a property, and `Cargo.toml` at its root.
fn wide_repo(n: usize) -> (Repo, String) {
    let repo = Repo::new();
    repo.write(
        "freezegate.toml",
        "[policy]\nproperty_paths = [\"tests/**\"]\nmin_cases = 50\n",
    );
    repo.write(
        "Cargo.toml",
        "[package]\nname = \"wide\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    repo.write("src/lib.rs", "pub fn one() -> u8 { 1 }\n");
    for i in 0..n {
        repo.write(&format!("tests/t{i}.rs"), MORE);
    }
    let base = repo.commit("base");
    (repo, base)
}

#[test]
fn a_wide_tests_folder_is_judged_with_a_bounded_number_of_git_processes() {
    // Without its `Cargo.toml`, each of the files of `tests/` may be declared by any other:
    // listed and read again for each file, that was n² git calls (a minute for a few hundred
    // files); looked up one path at a time, n calls (seconds for a few thousand). After a few
    // single lookups the tree is listed once and the rest read from that listing.
    let calls = |n: usize| -> usize {
        let tmp = tempfile::tempdir().unwrap();
        let (repo, base) = wide_repo(n);
        repo.remove("Cargo.toml");
        repo.commit("drop the manifest");
        let (git, log) = wrapper(tmp.path(), false);
        let mut options = Repo::options("HEAD");
        options.git = git.into();
        let found: Found = check_patch(repo.path(), &base, &options)
            .unwrap()
            .findings
            .into_iter()
            .map(|f| (f.rule, f.file, f.line))
            .collect();
        let expected: Vec<(String, u32)> = (0..n).map(|i| (format!("tests/t{i}.rs"), 5)).collect();
        let expected: Vec<(&str, u32)> = expected.iter().map(|(f, l)| (f.as_str(), *l)).collect();
        assert_eq!(found, removed(&expected));
        std::fs::read_to_string(log).unwrap().lines().count()
    };
    let counts: Vec<usize> = [10, 20, 40, 80].into_iter().map(calls).collect();
    // Past the single lookups, more files start no more processes.
    assert_eq!(counts[2], counts[3], "{counts:?}");
    assert!(counts.iter().all(|c| *c <= counts[3]), "{counts:?}");
    // Two trees judged (the commit's and its parent's), each with at most 32 single lookups
    // and one listing, beside the check's own fixed calls.
    assert!(counts[3] < 100, "{counts:?}");
}

#[test]
fn a_folder_named_like_pathspec_magic_is_read_literally() {
    // git reads `:(glob)…` in a pathspec as magic that `ls-tree` refuses: the gate must ask
    // for the folder by its literal name.
    let repo = Repo::new();
    repo.write(
        "freezegate.toml",
        "[policy]\nproperty_paths = [\"**/props.rs\"]\nmin_cases = 50\n",
    );
    repo.write(
        ":(glob)k/Cargo.toml",
        "[package]\nname = \"k\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    repo.write(":(glob)k/src/lib.rs", LIB);
    repo.write(":(glob)k/src/props.rs", MORE);
    let base = repo.commit("base");
    repo.write(
        ":(glob)k/src/lib.rs",
        &LIB.replace("#[cfg(test)]\nmod props;\n", ""),
    );
    repo.commit("drop the mod line");
    let found = findings(&repo, &base);
    assert_eq!(found, removed(&[(":(glob)k/src/props.rs", 5)]));
}
