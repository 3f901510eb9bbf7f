//! Gaming moves on the Rust side and the treatment of new properties: each move is one unsigned
//! commit in a real git repository (a small cargo crate with Rust and Python properties),
//! judged by `check_patch`; each has a harmless edit next to it that must stay silent.

mod patch_support;

use std::collections::BTreeSet;

use patch_support::Repo;

const LIB: &str = "pub fn cached_total(v: &[u32]) -> u64 {\n    v.iter().map(|x| u64::from(*x)).sum()\n}\n\n#[cfg(test)]\nmod props;\n";

const PROPS_MOD: &str = "mod checks;\nmod mod_props;\n";

const CHECKS: &str = "use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn total_is_sum(v in prop::collection::vec(0u32..1000, 0..20)) {
        let total: u64 = v.iter().map(|x| u64::from(*x)).sum();
        prop_assert_eq!(total, crate::cached_total(&v));
    }

    #[test]
    fn control(x in 0u32..10) {
        prop_assert!(x < 10);
    }
}
";

const MOD_PROPS: &str = "#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn doubles(x in 0u32..100) {
            prop_assert_eq!(x * 2, x + x);
        }
    }
}
";

const PY: &str = "from hypothesis import given, settings, strategies as st


@settings(max_examples=500)
@given(st.lists(st.integers()))
def test_sum(xs):
    assert sum(xs) == sum(reversed(xs))
";

/// The base: a crate whose `src/lib.rs` declares `src/props/`, and a Python test.
fn repo() -> (Repo, String) {
    let repo = Repo::new();
    repo.write(
        "freezegate.toml",
        "[policy]\nproperty_paths = [\"tests/**\", \"src/props/**\"]\nmin_cases = 50\n",
    );
    repo.write(
        "Cargo.toml",
        "[package]\nname = \"invoice\"\nversion = \"0.1.0\"\n",
    );
    repo.write("src/lib.rs", LIB);
    repo.write("src/props/mod.rs", PROPS_MOD);
    repo.write("src/props/checks.rs", CHECKS);
    repo.write("src/props/mod_props.rs", MOD_PROPS);
    repo.write("tests/test_invoice.py", PY);
    let base = repo.commit("base");
    (repo, base)
}

/// The rules that fire (with the line of each finding) when `edits` are committed on a branch
/// off the base.
fn judge(edits: &[(&str, Option<&str>)]) -> BTreeSet<(String, String, u32)> {
    let (repo, base) = repo();
    for (path, text) in edits {
        match text {
            Some(text) => repo.write(path, text),
            None => repo.remove(path),
        }
    }
    repo.commit("edit");
    repo.check(&base)
        .findings
        .into_iter()
        .map(|f| (f.rule, f.file, f.line))
        .collect()
}

fn rules(found: &BTreeSet<(String, String, u32)>) -> BTreeSet<&str> {
    found.iter().map(|(r, _, _)| r.as_str()).collect()
}

#[test]
fn dropping_the_test_attribute_in_a_proptest_block_removes_the_property() {
    let gaming = CHECKS.replacen("    #[test]\n    fn total_is_sum", "    fn total_is_sum", 1);
    let found = judge(&[("src/props/checks.rs", Some(&gaming))]);
    assert!(
        found.contains(&("property-removed".into(), "src/props/checks.rs".into(), 7)),
        "{found:?}"
    );
    // Another attribute next to the test attribute, or another spelling of it, is harmless.
    for harmless in [
        CHECKS.replacen(
            "    #[test]\n    fn total_is_sum",
            "    #[allow(unused)]\n    #[test]\n    fn total_is_sum",
            1,
        ),
        CHECKS.replacen(
            "    #[test]\n    fn total_is_sum",
            "    #[::core::prelude::v1::test]\n    fn total_is_sum",
            1,
        ),
    ] {
        let found = judge(&[("src/props/checks.rs", Some(&harmless))]);
        assert!(found.is_empty(), "{harmless}\n{found:?}");
    }
}

#[test]
fn wrapping_properties_in_another_macro_removes_them() {
    let gaming = MOD_PROPS.replacen(
        "    proptest! {",
        "    macro_rules! off { ($($t:tt)*) => {} }\n    off! {",
        1,
    );
    let found = judge(&[("src/props/mod_props.rs", Some(&gaming))]);
    assert!(rules(&found).contains("property-removed"), "{found:?}");
}

#[test]
fn a_cfg_on_a_module_holding_properties_is_a_skip() {
    for gaming in [
        MOD_PROPS.replacen("#[cfg(test)]", "#[cfg(all(test, feature = \"props\"))]", 1),
        MOD_PROPS.replacen("#[cfg(test)]", "#[cfg(tests)]", 1),
        MOD_PROPS.replacen("#[cfg(test)]", "#[cfg(all(test, windows))]", 1),
        MOD_PROPS.replacen("#[cfg(test)]\n", "#[cfg(test)]\n#[cfg(miri)]\n", 1),
        MOD_PROPS.replacen(
            "#[cfg(test)]\n",
            "#[cfg(test)]\n#[cfg_attr(not(miri), cfg(any()))]\n",
            1,
        ),
        format!("#![cfg(feature = \"slow\")]\n{MOD_PROPS}"),
        MOD_PROPS.replacen(
            "mod tests {\n",
            "mod tests {\n    #![cfg(target_os = \"none\")]\n",
            1,
        ),
    ] {
        let found = judge(&[("src/props/mod_props.rs", Some(&gaming))]);
        assert!(rules(&found).contains("skip-added"), "{gaming}\n{found:?}");
    }
    // `#[cfg(test)]` itself, other attributes, and a `cfg` on a module without properties are
    // harmless.
    for harmless in [
        MOD_PROPS.replacen("#[cfg(test)]\n", "#[cfg(test)]\n#[allow(clippy::all)]\n", 1),
        MOD_PROPS.replacen("#[cfg(test)]\nmod tests", "#[cfg( test )]\nmod tests", 1),
        format!(
            "{MOD_PROPS}\n#[cfg(feature = \"slow\")]\nmod helpers {{\n    pub fn slow() {{}}\n}}\n"
        ),
    ] {
        let found = judge(&[("src/props/mod_props.rs", Some(&harmless))]);
        assert!(found.is_empty(), "{harmless}\n{found:?}");
    }
}

#[test]
fn an_assertion_that_starts_with_true_or_is_vacuous() {
    let gaming = CHECKS.replacen(
        "prop_assert_eq!(total, crate::cached_total(&v));",
        "prop_assert!(true || total == crate::cached_total(&v));",
        1,
    );
    let found = judge(&[("src/props/checks.rs", Some(&gaming))]);
    assert!(rules(&found).contains("assertion-vacuous"), "{found:?}");
    let harmless = CHECKS.replacen(
        "prop_assert_eq!(total, crate::cached_total(&v));",
        "prop_assert!(v.is_empty() || total == crate::cached_total(&v));",
        1,
    );
    let found = judge(&[("src/props/checks.rs", Some(&harmless))]);
    assert!(!rules(&found).contains("assertion-vacuous"), "{found:?}");
}

#[test]
fn a_property_moved_to_a_file_nothing_compiles_is_removed() {
    let found = judge(&[
        ("src/props/checks.rs", None),
        ("src/props/old/checks.rs", Some(CHECKS)),
    ]);
    let removed: Vec<_> = found
        .iter()
        .filter(|(r, _, _)| r == "property-removed")
        .collect();
    assert_eq!(removed.len(), 2, "{found:?}");
    // Moved where a `mod` declaration or a crate root reaches it: no finding.
    for edits in [
        vec![
            ("src/props/checks.rs", None),
            ("src/props/sums.rs", Some(CHECKS)),
            ("src/props/mod.rs", Some("mod sums;\nmod mod_props;\n")),
        ],
        vec![
            ("src/props/checks.rs", None),
            ("src/props/old/checks.rs", Some(CHECKS)),
            ("src/props/old/mod.rs", Some("mod checks;\n")),
            ("src/props/mod.rs", Some("mod old;\nmod mod_props;\n")),
        ],
        vec![
            ("src/props/checks.rs", None),
            ("tests/checks.rs", Some(CHECKS)),
        ],
    ] {
        let found = judge(&edits);
        assert!(found.is_empty(), "{edits:?}\n{found:?}");
    }
    // A declaration in a comment, in a module nothing compiles, or with a `#[path]` (not
    // followed) does not count; nor does a `tests/` folder of something that is not a crate.
    for edits in [
        vec![
            ("src/props/checks.rs", None),
            ("src/props/old/checks.rs", Some(CHECKS)),
            ("src/props/old/mod.rs", Some("mod checks;\n")),
            (
                "src/props/mod.rs",
                Some("#[path = \"old/mod.rs\"]\nmod old;\nmod mod_props;\n"),
            ),
        ],
        vec![
            ("src/props/checks.rs", None),
            ("src/props/sums.rs", Some(CHECKS)),
            ("src/props/mod.rs", Some("// mod sums;\nmod mod_props;\n")),
        ],
        vec![
            ("src/props/checks.rs", None),
            ("src/props/old/checks.rs", Some(CHECKS)),
            ("src/props/old/mod.rs", Some("mod checks;\n")),
        ],
        vec![
            ("src/props/checks.rs", None),
            ("tests/attic/tests/checks.rs", Some(CHECKS)),
        ],
    ] {
        let found = judge(&edits);
        assert!(
            rules(&found).contains("property-removed"),
            "{edits:?}\n{found:?}"
        );
    }
}

#[test]
fn a_new_property_is_not_judged_as_a_weakened_one() {
    let new_rust = CHECKS.replacen(
        "    #[test]\n    fn control",
        "    #[test]\n    fn division(a in 0u32..100, b in 0u32..100) {\n        prop_assume!(b != 0);\n        if a == 0 { return Ok(()); }\n        prop_assert_eq!((a / b) * b + a % b, a);\n    }\n\n    #[test]\n    fn control",
        1,
    );
    let new_py = format!(
        "{PY}\n\n@given(st.integers(), st.integers())\ndef test_div(a, b):\n    assume(b != 0)\n    assert (a // b) * b + a % b == a\n\n\n@given(st.lists(st.integers(), max_size=50))\ndef test_order_free(xs):\n    if not xs:\n        return\n    assert sum(xs) == sum(list(reversed(xs)))\n"
    );
    let new_file = "from hypothesis import given, settings, strategies as st\n\n\n@settings(max_examples=500, deadline=None)\n@given(st.text())\ndef test_encode_roundtrip(s):\n    assert s.encode(\"utf-8\").decode(\"utf-8\") == s\n";
    let found = judge(&[
        ("src/props/checks.rs", Some(&new_rust)),
        ("tests/test_invoice.py", Some(&new_py)),
        ("tests/test_new.py", Some(new_file)),
    ]);
    assert!(found.is_empty(), "{found:?}");

    // The same moves in existing properties still fire.
    let weakened = CHECKS.replacen(
        "        let total",
        "        prop_assume!(!v.is_empty());\n        let total",
        1,
    );
    let found = judge(&[("src/props/checks.rs", Some(&weakened))]);
    assert!(rules(&found).contains("assume-added"), "{found:?}");
    let weakened = PY.replacen("max_examples=500", "max_examples=500, deadline=None", 1);
    let found = judge(&[("tests/test_invoice.py", Some(&weakened))]);
    assert!(rules(&found).contains("hypothesis-settings"), "{found:?}");

    // Renaming a property while weakening it is a removal.
    let renamed = CHECKS.replacen(
        "fn total_is_sum(v in prop::collection::vec(0u32..1000, 0..20)) {\n",
        "fn total_matches(v in prop::collection::vec(0u32..1000, 0..20)) {\n        prop_assume!(v.is_empty());\n",
        1,
    );
    let found = judge(&[("src/props/checks.rs", Some(&renamed))]);
    assert!(rules(&found).contains("property-removed"), "{found:?}");

    // Rules that matter for new code judge a new property too.
    let impure = CHECKS.replacen(
        "    #[test]\n    fn control",
        "    #[test]\n    fn timed(x in 0u32..10) {\n        let started = std::time::Instant::now();\n        prop_assert!(started.elapsed().as_secs() < u64::from(x) + 1);\n    }\n\n    #[test]\n    fn control",
        1,
    );
    let found = judge(&[("src/props/checks.rs", Some(&impure))]);
    assert!(rules(&found).contains("impure-property"), "{found:?}");
}

#[test]
fn a_lazily_made_static_of_immutable_data_is_not_a_shared_fixture() {
    let file = |item: &str| {
        format!(
            "use std::sync::LazyLock;\nuse proptest::prelude::*;\nuse regex::Regex;\n\n{item}\n\nproptest! {{\n    #[test]\n    fn digits_match(n in 0u64..u64::MAX) {{\n        prop_assert!(NUM.is_match(&n.to_string()));\n    }}\n}}\n"
        )
    };
    let harmless =
        file("static NUM: LazyLock<Regex> = LazyLock::new(|| Regex::new(r\"^[0-9]+$\").unwrap());");
    let found = judge(&[("src/props/parse_props.rs", Some(&harmless))]);
    assert!(found.is_empty(), "{found:?}");
    for gaming in [
        "static NUM: LazyLock<std::sync::Mutex<Vec<u64>>> = LazyLock::new(|| std::sync::Mutex::new(Vec::new()));",
        "static NUM: LazyLock<Cache> = LazyLock::new(Cache::default);",
        "type Shared = LazyLock<Vec<u64>>;",
    ] {
        let found = judge(&[("src/props/parse_props.rs", Some(&file(gaming)))]);
        assert!(
            rules(&found).contains("shared-fixture"),
            "{gaming}\n{found:?}"
        );
    }
    let aliased = file("static NUM: L<Regex> = L::new(|| Regex::new(r\"^[0-9]+$\").unwrap());")
        .replacen(
            "use std::sync::LazyLock;",
            "use std::sync::LazyLock as L;",
            1,
        );
    let found = judge(&[("src/props/parse_props.rs", Some(&aliased))]);
    assert!(rules(&found).contains("shared-fixture"), "{found:?}");
}

#[test]
fn a_new_python_property_that_acts_beyond_itself_is_judged() {
    for gaming in [
        // Ends the session green before later tests run.
        format!(
            "import pytest\n{PY}\n\n@given(st.integers())\ndef test_new(x):\n    pytest.exit(\"done\", returncode=0)\n"
        ),
        // Skips the whole module when it is imported.
        format!(
            "import pytest\n{PY}\n\n@given(st.integers())\ndef test_new(x, _=pytest.skip(\"wip\", allow_module_level=True)):\n    assert x == x + 0\n"
        ),
        format!(
            "import pytest\n{PY}\n\n@given(st.integers())\ndef test_new(\n    x,\n    _=pytest.importorskip(\"missing\"),\n):\n    assert x == x + 0\n"
        ),
        // Changes the defaults of the properties decorated after it.
        format!(
            "{PY}\n\n@given(st.integers())\ndef test_new(x, _=settings.load_profile(\"fast\")):\n    assert x == x + 0\n"
        ),
        format!(
            "{PY}\n\n@given(st.integers())\ndef test_new(x):\n    settings.register_profile(\"default\", max_examples=1)\n"
        ),
    ] {
        let found = judge(&[("tests/test_invoice.py", Some(&gaming))]);
        assert!(
            rules(&found).contains("skip-added") || rules(&found).contains("hypothesis-settings"),
            "{gaming}\n{found:?}"
        );
    }
    // What stays within the new test is its own business.
    let own = format!(
        "import pytest\n{PY}\n\n@settings(deadline=None)\n@pytest.mark.skip(reason=\"slow\")\n@given(st.integers())\ndef test_new(x):\n    if x < 0:\n        pytest.skip(\"negative\")\n    assert x == x + 0\n"
    );
    let found = judge(&[("tests/test_invoice.py", Some(&own))]);
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn an_attribute_after_a_new_property_on_its_last_line_is_judged() {
    let gaming = CHECKS.replacen(
        "    #[test]\n    fn control",
        "    #[test]\n    fn fresh(x in 0u32..10) { prop_assert!(x < 10); } #[cfg(any())]\n    #[test]\n    fn control",
        1,
    );
    let found = judge(&[("src/props/checks.rs", Some(&gaming))]);
    assert!(rules(&found).contains("skip-added"), "{found:?}");
    // Outside a proptest! block too, where no old span holds the line.
    let file = "use proptest::prelude::*;\n\n#[test]\nfn control() {\n    proptest!(|(x in 0u32..10)| prop_assert!(x < 10));\n}\n";
    let gaming = file.replacen(
        "#[test]\nfn control",
        "#[test]\nfn fresh() { proptest!(|(x in 0u32..10)| prop_assert!(x < 10)); } #[cfg(any())]\n#[test]\nfn control",
        1,
    );
    let (repo, _) = repo();
    repo.write("src/props/plain.rs", file);
    let base = repo.commit("plain");
    repo.write("src/props/plain.rs", &gaming);
    repo.commit("edit");
    let found: BTreeSet<String> = repo
        .check(&base)
        .findings
        .into_iter()
        .map(|f| f.rule)
        .collect();
    assert!(found.contains("skip-added"), "{found:?}");
}

#[test]
fn an_old_property_that_starts_on_a_new_ones_last_line_is_judged() {
    let gaming = CHECKS.replacen(
        "    #[test]\n    fn control(x in 0u32..10) {",
        "    #[test]\n    fn fresh(x in 0u32..10) { prop_assert!(x < 10); } #[test] fn control(x in Just(3u32)) {",
        1,
    );
    let found = judge(&[("src/props/checks.rs", Some(&gaming))]);
    assert!(rules(&found).contains("strategy-narrowed"), "{found:?}");
}

#[test]
fn properties_moved_into_a_src_tests_module_are_not_removed() {
    let moved = |declaration: &str| {
        let (repo, _) = repo();
        repo.write(
            "freezegate.toml",
            "[policy]\nproperty_paths = [\"tests/**\", \"src/props/**\", \"src/tests/**\"]\nmin_cases = 50\n",
        );
        let base = repo.commit("policy");
        let lib = LIB.replace("mod props;\n", "mod props;\n#[cfg(test)]\nmod tests;\n");
        repo.write("src/lib.rs", &lib);
        repo.write("src/tests/mod.rs", declaration);
        repo.write("src/tests/checks.rs", CHECKS);
        repo.remove("src/props/checks.rs");
        repo.write("src/props/mod.rs", "mod mod_props;\n");
        repo.commit("move");
        let found: Vec<String> = repo
            .check(&base)
            .findings
            .into_iter()
            .map(|f| f.rule)
            .collect();
        found
    };
    let found = moved("mod checks;\n");
    assert!(found.is_empty(), "{found:?}");
    // Undeclared, the same file is not compiled.
    let found = moved("\n");
    assert!(found.contains(&"property-removed".to_string()), "{found:?}");
}
