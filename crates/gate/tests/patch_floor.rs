//! The `min_cases` floor (SPEC §9): a new property whose case count is below the policy's
//! `min_cases` is a gaming finding, one at the floor is not. Each new property is added by its
//! own commit in a real git repository and judged by `check_patch`.

mod patch_support;

use std::collections::BTreeSet;

use patch_support::Repo;

/// A new Hypothesis property running `n` examples.
fn python_property(n: u64) -> String {
    format!(
        "from hypothesis import given, settings, strategies as st\n\n\n\
         @settings(max_examples={n})\n\
         @given(st.integers())\n\
         def test_total_{n}(x):\n    assert x + 0 == x\n"
    )
}

/// A new proptest property running `n` cases.
fn rust_property(n: u64) -> String {
    format!(
        "use proptest::prelude::*;\n\
         proptest! {{\n    #![proptest_config(ProptestConfig::with_cases({n}))]\n    \
         #[test]\n    fn total_{n}(x in 0u32..100) {{\n        prop_assert_eq!(x + 0, x);\n    }}\n}}\n"
    )
}

#[test]
fn a_new_property_one_case_below_min_cases_is_a_finding_and_one_at_it_is_not() {
    for floor in [50u64, 200] {
        let repo = Repo::new();
        repo.write(
            "freezegate.toml",
            &format!("[policy]\nproperty_paths = [\"tests/**\", \"py/**\"]\nmin_cases = {floor}\n"),
        );
        let base = repo.commit("base");
        let mut below = BTreeSet::new();
        for n in [floor - 1, floor, floor + 1] {
            for (path, text) in [
                (format!("py/test_total_{n}.py"), python_property(n)),
                (format!("tests/total_{n}.rs"), rust_property(n)),
            ] {
                repo.commit_and_write(&path, &text, None);
                if n < floor {
                    below.insert(path);
                }
            }
        }
        let report = repo.check(&base);
        let flagged: BTreeSet<String> = report
            .findings
            .iter()
            .filter(|f| f.rule == "cases-lowered")
            .map(|f| f.file.clone())
            .collect();
        assert_eq!(flagged, below, "min_cases {floor}: {:#?}", report.findings);
        for f in &report.findings {
            assert!(
                f.explanation
                    .contains(&format!(" {} is below min_cases {floor}", floor - 1)),
                "{f:?}"
            );
        }
    }
}
