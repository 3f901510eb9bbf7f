//! Digests, fixture ids, property ids and the canonicalization names.

use std::fmt;
use std::str::FromStr;

use sha2::{Digest as _, Sha256};

use crate::error::Error;

/// The SHA-256 of canonical bytes: `fixture_digest`, 64 lowercase hex characters.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest([u8; 32]);

impl Digest {
    /// The SHA-256 of `bytes`.
    pub fn of(bytes: &[u8]) -> Digest {
        Digest(Sha256::digest(bytes).into())
    }

    /// The raw 32 bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The first 16 hex characters: the fixture's file name.
    pub fn fixture_id(&self) -> FixtureId {
        let mut id = [0u8; 8];
        id.copy_from_slice(&self.0[..8]);
        FixtureId(id)
    }
}

fn write_hex(f: &mut fmt::Formatter<'_>, bytes: &[u8]) -> fmt::Result {
    // Two characters per byte into a buffer, written at once: one `write!` per byte costs
    // more than the rest of printing a digest.
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut text = [0u8; 64];
    for (pair, &b) in text.chunks_exact_mut(2).zip(bytes) {
        pair[0] = HEX[usize::from(b >> 4)];
        pair[1] = HEX[usize::from(b & 0xF)];
    }
    let used = &text[..2 * bytes.len().min(32)];
    f.write_str(std::str::from_utf8(used).map_err(|_| fmt::Error)?)
}

fn parse_hex<const N: usize>(s: &str, what: &str) -> Result<[u8; N], Error> {
    let bad = || {
        Error::Name(format!(
            "{s:?} is not a {what}: expected {} lowercase hex characters",
            2 * N
        ))
    };
    if s.len() != 2 * N || !s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return Err(bad());
    }
    let mut out = [0u8; N];
    for (i, pair) in s.as_bytes().chunks(2).enumerate() {
        let hi = (pair[0] as char).to_digit(16).ok_or_else(bad)?;
        let lo = (pair[1] as char).to_digit(16).ok_or_else(bad)?;
        out[i] = u8::try_from(hi * 16 + lo).map_err(|_| bad())?;
    }
    Ok(out)
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_hex(f, &self.0)
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({self})")
    }
}

impl FromStr for Digest {
    type Err = Error;
    /// Parses 64 lowercase hex characters.
    fn from_str(s: &str) -> Result<Digest, Error> {
        parse_hex::<32>(s, "fixture digest").map(Digest)
    }
}

/// The first 16 lowercase hex characters of a [`Digest`]: `fixture_id`, the file name.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FixtureId([u8; 8]);

impl FixtureId {
    /// Whether `digest` starts with this id.
    pub fn is_prefix_of(&self, digest: &Digest) -> bool {
        digest.0[..8] == self.0
    }
}

impl fmt::Display for FixtureId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_hex(f, &self.0)
    }
}

impl fmt::Debug for FixtureId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FixtureId({self})")
    }
}

impl FromStr for FixtureId {
    type Err = Error;
    /// Parses 16 lowercase hex characters.
    fn from_str(s: &str) -> Result<FixtureId, Error> {
        parse_hex::<8>(s, "fixture id").map(FixtureId)
    }
}

/// Which canonical form a property uses (SPEC §3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Canonicalization {
    /// `freezegate-canon-v1`: object members sorted by key code points.
    #[default]
    V1,
    /// `freezegate-canon-v1-ordered`: identical, except that object members keep their input
    /// order (for properties where member order is observable behaviour).
    V1Ordered,
}

impl Canonicalization {
    /// The name recorded in meta files and ledger rows.
    pub fn as_str(self) -> &'static str {
        match self {
            Canonicalization::V1 => "freezegate-canon-v1",
            Canonicalization::V1Ordered => "freezegate-canon-v1-ordered",
        }
    }

    pub(crate) fn sorts(self) -> bool {
        matches!(self, Canonicalization::V1)
    }
}

impl fmt::Display for Canonicalization {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Canonicalization {
    type Err = Error;
    fn from_str(s: &str) -> Result<Canonicalization, Error> {
        match s {
            "freezegate-canon-v1" => Ok(Canonicalization::V1),
            "freezegate-canon-v1-ordered" => Ok(Canonicalization::V1Ordered),
            _ => Err(Error::Name(format!(
                "unknown canonicalization {s:?}: expected \"freezegate-canon-v1\" or \"freezegate-canon-v1-ordered\""
            ))),
        }
    }
}

/// A property id: `[A-Za-z0-9][A-Za-z0-9._-]{0,99}` (it names a directory under `fixtures/`).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PropertyId(String);

impl PropertyId {
    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for PropertyId {
    type Err = Error;
    fn from_str(s: &str) -> Result<PropertyId, Error> {
        let bytes = s.as_bytes();
        let ok = !bytes.is_empty()
            && bytes.len() <= 100
            && bytes[0].is_ascii_alphanumeric()
            && bytes
                .iter()
                .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
        if ok {
            Ok(PropertyId(s.to_owned()))
        } else {
            Err(Error::Name(format!(
                "{s:?} is not a property id: expected [A-Za-z0-9][A-Za-z0-9._-]{{0,99}}"
            )))
        }
    }
}

impl fmt::Display for PropertyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for PropertyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PropertyId({})", self.0)
    }
}

/// Canonical bytes together with their digest.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Canonical {
    bytes: Vec<u8>,
    digest: Digest,
}

impl Canonical {
    /// Wraps bytes that are already canonical and computes their digest.
    pub(crate) fn from_canonical_bytes(bytes: Vec<u8>) -> Canonical {
        let digest = Digest::of(&bytes);
        Canonical { bytes, digest }
    }

    /// The canonical bytes (no trailing newline).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The canonical bytes, owned.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// The canonical bytes as text (they are always UTF-8).
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes).unwrap_or_default()
    }

    /// SHA-256 of the bytes.
    pub fn digest(&self) -> Digest {
        self.digest
    }

    /// The first 16 hex characters of the digest.
    pub fn fixture_id(&self) -> FixtureId {
        self.digest.fixture_id()
    }
}
