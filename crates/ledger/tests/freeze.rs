//! Freeze requests as a library user makes them: the row a flicker gets, each refusal's rule,
//! and the outcome documents `freeze --format json` prints (insta snapshots).

mod common;

use common::{NOW, signers, ts};
use freezegate_canon::fixture::Meta;
use freezegate_canon::{Canonicalization, Digest};
use freezegate_ledger::{
    EnvClass, FreezeOutcome, FreezeRequest, Ledger, Policy, Refusal, freeze_row, precheck,
    renewable,
};
use freezegate_replay::Label;

fn request(owner: &str, env_class: EnvClass) -> FreezeRequest {
    let fixture = Digest::of(br#"{"n":0}"#);
    let origin = Digest::of(br#"{"n":0,"pad":[1,2,3]}"#);
    FreezeRequest {
        meta: Meta {
            property_id: "report.header_keeps_declared_order".parse().unwrap(),
            fixture_id: fixture.fixture_id(),
            fixture_digest: fixture,
            origin_id: origin.fixture_id(),
            origin_digest: origin,
            canonicalization: Canonicalization::V1,
            seed: 20_260_917,
            pinned_at: "2026-09-14T08:00:00Z".to_owned(),
            patch_id: "feedface".to_owned(),
            oracle_calls: 12,
            shrink_path: Vec::new(),
        },
        seed: 20_260_917,
        env_class,
        runner_id: "ci-runner-7".to_owned(),
        owner: owner.to_owned(),
        reason: "header built from a set: order follows the hash seed".to_owned(),
        patch_id: "0123456789abcdef0123456789abcdef01234567".to_owned(),
        expires_in_days: 7,
        now: ts(NOW),
    }
}

const FLICKER: [Label; 7] = [
    Label::AssertPass,
    Label::AssertFail,
    Label::AssertPass,
    Label::AssertFail,
    Label::AssertFail,
    Label::AssertPass,
    Label::AssertFail,
];

#[test]
fn a_flicker_gets_its_row_and_the_outcome_document_holds_it() {
    let req = request("alice@example.com", EnvClass::Remote);
    let row = freeze_row(&req, &FLICKER, &Policy::default(), &signers()).unwrap();
    assert_eq!(row.replays, FLICKER);
    assert_eq!(row.expires_at, ts("2026-09-24T12:00:00Z"));
    let outcome = FreezeOutcome::Written {
        row: Box::new(row),
        renewed: false,
    };
    assert!(
        outcome
            .line()
            .starts_with("froze report.header_keeps_declared_order ")
    );
    insta::assert_json_snapshot!("freeze_outcome_written", outcome.to_value(&req, &FLICKER));
}

#[test]
fn each_refusal_names_its_rule_in_the_outcome_document() {
    let policy = Policy::default();
    let remote = request("alice@example.com", EnvClass::Remote);
    let regression = freeze_row(&remote, &[Label::AssertFail; 7], &policy, &signers()).unwrap_err();
    assert_eq!(regression, Refusal::Regression { n: 7 });
    let laptop = request("alice@example.com", EnvClass::Local);
    assert_eq!(
        precheck(&laptop, &policy, &signers()).unwrap_err().rule(),
        "env_class"
    );
    let stranger = request("eve@example.com", EnvClass::Remote);
    assert_eq!(
        precheck(&stranger, &policy, &signers()).unwrap_err().rule(),
        "owner"
    );
    assert_eq!(Refusal::NoSigners.rule(), "owner");
    let outcome = FreezeOutcome::Refused(regression);
    assert_eq!(
        outcome.line(),
        "freeze write refused: all 7 replays failed — this is a regression, fix it"
    );
    insta::assert_json_snapshot!(
        "freeze_outcome_refused",
        outcome.to_value(&remote, &[Label::AssertFail; 7])
    );
}

/// A policy where the request's property raised its own replay count to `n`.
fn raised(n: usize) -> Policy {
    let mut policy = Policy::default();
    let property = request("alice@example.com", EnvClass::Remote)
        .meta
        .property_id;
    policy.property_replays.insert(property, n);
    policy
}

#[test]
fn a_raised_replay_count_is_the_n_a_freeze_is_judged_by() {
    let policy = raised(10);
    let req = request("alice@example.com", EnvClass::Remote);
    let mut ten = FLICKER.to_vec();
    ten.extend([Label::AssertPass, Label::AssertFail, Label::AssertFail]);
    let row = freeze_row(&req, &ten, &policy, &signers()).unwrap();
    assert_eq!(row.replays, ten);
    assert_eq!(
        freeze_row(&req, &FLICKER, &policy, &signers()).unwrap_err(),
        Refusal::Malformed { got: 7, n: 10 }
    );
}

proptest::proptest! {
    /// `freeze_row` and `check` agree on N: a row freeze writes is never one whose replays
    /// check faults, whatever the property's own replay count.
    #[test]
    fn a_row_freeze_writes_passes_the_replay_rules_of_check(
        n in 1usize..=16,
        fails in proptest::collection::vec(proptest::bool::ANY, 1..=16),
    ) {
        let policy = raised(n);
        let req = request("alice@example.com", EnvClass::Remote);
        let labels: Vec<Label> = fails
            .iter()
            .map(|&f| if f { Label::AssertFail } else { Label::AssertPass })
            .collect();
        let mixed = labels.contains(&Label::AssertFail) && labels.contains(&Label::AssertPass);
        let written = freeze_row(&req, &labels, &policy, &signers());
        proptest::prop_assert_eq!(written.is_ok(), labels.len() == n && mixed);
        if let Ok(row) = written {
            let signers = signers();
            let no_fixtures =
                |_: &freezegate_canon::PropertyId, _| freezegate_ledger::FixtureFile::Missing;
            let checks = freezegate_ledger::Checks::new(&policy, ts(NOW), &signers, &no_fixtures);
            let report = freezegate_ledger::Ledger::from_rows(vec![row]).check(&checks);
            let replay_rules: Vec<_> = report
                .problems
                .iter()
                .filter(|p| matches!(p.rule, freezegate_ledger::Rule::Replays | freezegate_ledger::Rule::ReplayCount))
                .collect();
            proptest::prop_assert!(replay_rules.is_empty(), "{:?}", replay_rules);
        }
    }
}

/// A freeze renews the one row of its key, and refuses a key that several rows share: the
/// other row would stay, and the ledger with it as invalid as before.
#[test]
fn a_key_that_several_rows_share_is_not_renewed() {
    let req = request("alice@example.com", EnvClass::Remote);
    let row = freeze_row(&req, &FLICKER, &Policy::default(), &signers()).unwrap();
    assert_eq!(row.key(), req.key());
    let mut ledger = Ledger::new();
    assert_eq!(renewable(&ledger, &req.key()), Ok(()));
    assert_eq!(ledger.upsert(row.clone()), None);
    assert_eq!(renewable(&ledger, &req.key()), Ok(()));
    let mut twin = row.clone();
    twin.reason = "a second opinion".to_owned();
    let ledger = Ledger::from_rows(vec![row, twin]);
    assert_eq!(ledger.rows_with_key(&req.key()).len(), 2);
    let refusal = renewable(&ledger, &req.key()).unwrap_err();
    assert_eq!(refusal.rule(), "duplicate");
    assert_eq!(
        refusal,
        Refusal::Duplicate {
            key: req.key(),
            rows: 2
        }
    );
    assert!(
        refusal
            .to_string()
            .starts_with("freeze write refused: freeze/ledger.json has 2 rows with key ("),
        "{refusal}"
    );
}

/// An expiry past the last time a ledger can hold (`now` far in the future) is refused
/// before any replay, and says so: it is not "over the policy limit".
#[test]
fn an_expiry_past_year_9999_is_refused_before_any_replay() {
    let mut asked = request("alice@example.com", EnvClass::Remote);
    asked.now = ts("9999-12-30T00:00:00Z");
    asked.expires_in_days = 7;
    let refusal = precheck(&asked, &Policy::default(), &signers()).unwrap_err();
    assert_eq!(refusal.rule(), "expiry");
    assert_eq!(
        refusal.to_string(),
        "freeze write refused: an expiry of 7 days from 9999-12-30T00:00:00Z is past 9999-12-31T23:59:59Z, the last time a ledger can hold"
    );
    asked.expires_in_days = 1;
    assert!(precheck(&asked, &Policy::default(), &signers()).is_ok());
}
