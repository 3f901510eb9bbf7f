//! The JSON form of a patch report, as an insta snapshot: a fixed repository (fixed identities,
//! dates and contents, so fixed commit ids) with a free fixture, a gaming move next to an
//! unsigned ledger edit, and a commit that changes property and code together.

mod patch_support;

use patch_support::Repo;

/// A public key only: nothing is signed with it here; it makes the base revision's signers list.
const REVIEWER: &str = "reviewer@example.org namespaces=\"git\" ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPR7QCQE5R/2/9YyORRZouznpder8KMSclIxymNRjT2h reviewer@example.org\n";

const PROPS: &str = "use proptest::prelude::*;
proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]
    #[test]
    fn total_is_sum(x in 0u32..100, y in 0u32..100) {
        prop_assert_eq!(tax::total(x, y), y + x);
    }
}
";

#[test]
fn the_json_report_of_a_gamed_patch() {
    let repo = Repo::new();
    repo.write(
        "freezegate.toml",
        "[policy]\nproperty_paths = [\"tests/**\"]\nmin_cases = 50\n",
    );
    repo.write("freeze/allowed_signers", REVIEWER);
    repo.write(
        "freeze/ledger.json",
        "{\"schema\": \"freezegate-ledger-v1\", \"rows\": []}\n",
    );
    repo.write("tests/props.rs", PROPS);
    repo.write(
        "src/tax.rs",
        "pub fn total(x: u32, y: u32) -> u32 { x + y }\n",
    );
    let base = repo.commit("base");

    repo.write(
        "fixtures/tax.total/84a6b2a276edd51b.json",
        "{\"role\":\"\",\"user_id\":0}\n",
    );
    repo.commit("pin the fixture of the failure");
    repo.write(
        "tests/props.rs",
        &PROPS.replace("with_cases(1000)", "with_cases(10)"),
    );
    repo.write(
        "freeze/ledger.json",
        "{\"schema\": \"freezegate-ledger-v1\", \"rows\": [{\"property_id\": \"tax.total\"}]}\n",
    );
    repo.commit("make CI green");
    repo.write(
        "src/tax.rs",
        "pub fn total(x: u32, y: u32) -> u32 { y + x }\n",
    );
    repo.write(
        "tests/props.rs",
        &PROPS.replace("with_cases(1000)", "with_cases(10)").replace(
            "prop_assert_eq!(tax::total(x, y), y + x);",
            "prop_assert_eq!(tax::total(x, y), x + y);",
        ),
    );
    repo.commit("fix the total and the property together");

    let report = repo.check(&base);
    assert!(report.blocking());
    let json = serde_json::to_string_pretty(&report).unwrap();
    insta::assert_snapshot!("patch_report_gamed", json);
}
