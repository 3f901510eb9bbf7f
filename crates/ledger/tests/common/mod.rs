//! Shared builders for the ledger's integration tests.

#![allow(dead_code)]

use freezegate_canon::{Canonicalization, Digest, FixtureId, PropertyId};
use freezegate_ledger::{AllowedSigners, EnvClass, FixtureFile, Row, Seed, Timestamp};
use freezegate_replay::Label;

/// The `now` of the tests.
pub const NOW: &str = "2026-09-17T12:00:00Z";

pub fn now() -> Timestamp {
    NOW.parse().unwrap()
}

pub fn ts(text: &str) -> Timestamp {
    text.parse().unwrap()
}

/// The canonical bytes of fixture number `n`.
pub fn fixture_body(n: u64) -> Vec<u8> {
    format!("{{\"n\":{n}}}").into_bytes()
}

/// The digest of fixture number `n`.
pub fn digest(n: u64) -> Digest {
    Digest::of(&fixture_body(n))
}

/// A lookup that knows fixtures 0..count of every property.
pub fn fixtures_upto(count: u64) -> impl Fn(&PropertyId, FixtureId) -> FixtureFile {
    move |_: &PropertyId, id: FixtureId| {
        (0..count)
            .find(|&n| digest(n).fixture_id() == id)
            .map_or(FixtureFile::Missing, |n| {
                let mut bytes = fixture_body(n);
                bytes.push(b'\n');
                FixtureFile::Found(bytes)
            })
    }
}

pub fn signers() -> AllowedSigners {
    AllowedSigners::parse(
        "alice@example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAlice alice\n\
         bob@example.com,carol@example.com namespaces=\"git\" ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBob\n",
    )
    .unwrap()
}

/// A valid row for `property`, fixture number `n`, remote, active at [`NOW`].
pub fn row(property: &str, n: u64) -> Row {
    let d = digest(n);
    Row {
        property_id: property.parse().unwrap(),
        fixture_id: d.fixture_id(),
        fixture_digest: d,
        origin_digest: Digest::of(format!("origin {n}").as_bytes()),
        canonicalization: Canonicalization::V1,
        seed: Seed::from(20_260_917_u64),
        env_class: EnvClass::Remote,
        runner_id: "ci-runner-7".to_owned(),
        replays: vec![
            Label::AssertPass,
            Label::AssertFail,
            Label::AssertPass,
            Label::AssertPass,
            Label::AssertFail,
            Label::AssertPass,
            Label::AssertPass,
        ],
        patch_id: "0123456789abcdef0123456789abcdef01234567".to_owned(),
        owner: "alice@example.com".to_owned(),
        reason: "thread scheduling order in the cache warm-up".to_owned(),
        created_at: ts("2026-09-15T09:30:00Z"),
        expires_at: ts("2026-09-25T09:30:00Z"),
    }
}
