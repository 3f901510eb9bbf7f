//! Canonical bytes, digests and fixture files for freezegate: one JSON document in, one byte
//! string and one SHA-256 out, identical to the Python reference of canonical form v1, so a
//! fixture digested by a Python harness and by freezegate gets the same name.
//!
//! # The canonical rules (form v1)
//!
//! - Parse strictly (Python's `json.loads` grammar): integers keep every digit (`-0` → `0`),
//!   `1.0` and `1e2` are floats.
//! - Normalise every string to NFC, object keys included.
//! - Write with keys sorted by code point, no whitespace, floats as Python's `repr`
//!   (`1.0`, `1e+16`, `1e-05`, `0.0001`, `-0.0`), only `"`, `\` and U+0000-U+001F escaped
//!   (`\b \f \n \r \t` short, others `\u00xx`), everything else raw UTF-8.
//! - The digest is the SHA-256 of those bytes (64 lowercase hex); the fixture id is its first
//!   16 characters.
//!
//! Errors, never silent fixes: invalid JSON or UTF-8, trailing data, duplicate keys (in the
//! input or after NFC), `NaN`/`Infinity`, float literals that overflow, lone surrogate
//! escapes, nesting deeper than [`MAX_DEPTH`], a byte-order mark, UTF-16/32 input. Every
//! parse error names its line and column ([`ParseError`]). A float literal that underflows
//! is `0.0`, as in Python.
//!
//! NFC uses the Unicode tables of the `unicode-normalization` crate: Unicode 18.0.0 in the
//! version this workspace locks (0.1.26; [`UNICODE_VERSION`] says it, and a test keeps this
//! sentence true). Characters assigned after an older Python's tables (3.11: Unicode 14.0)
//! can normalise differently there; text assigned in both normalises identically. A build
//! outside this workspace resolves `unicode-normalization` itself, and a later 0.1 release may
//! carry newer tables: where fixture names must match those of freezegate's own binary,
//! check that [`UNICODE_VERSION`] is the version named here.
//!
//! The ordered variant, `freezegate-canon-v1-ordered` ([`Canonicalization::V1Ordered`]),
//! is identical except that object members keep their input order.
//!
//! # Main items
//!
//! - [`Value`], the workspace's lossless JSON value: integers of any size as decimal text
//!   ([`Int`]), floats as finite `f64` that print as Python's `repr` ([`Float`]), objects in
//!   input order. Every freezegate crate passes it.
//! - [`parse`] (bytes) and [`parse_str`] (text) read one strict JSON document into a
//!   [`Value`]; a [`ParseError`] names line and column.
//! - [`canonicalize`] (text in) and [`canonicalize_value`] (a [`Value`] in) give a
//!   [`Canonical`]: the bytes, their [`Digest`] and [`FixtureId`]; [`value_bytes`] and
//!   [`to_canonical_bytes`] give the bytes alone. [`Canonicalization`] picks the form.
//! - [`to_value`] and [`from_value`]: the serde edge, where a Rust type meets a [`Value`]
//!   without going through JSON text.
//! - [`PropertyId`] (a checked property id) and [`FixtureId`] name a fixture's folder and
//!   file; the [`fixture`] module reads, writes and verifies them.
//! - [`ErrorChain`] prints an error with its causes on one line (`a: b: c`). The errors of
//!   every freezegate crate keep their cause out of their message and behind
//!   [`std::error::Error::source`], so `{error}` alone drops it (a parse error's line and
//!   column, say); `ErrorChain(&error)` shows it. The other crates re-export it.
//!
//! # Example
//!
//! ```
//! use freezegate_canon::{canonicalize, Canonicalization};
//!
//! # fn main() -> Result<(), freezegate_canon::Error> {
//! let c = canonicalize(br#"{"user_id": 0, "role": ""}"#, Canonicalization::V1)?;
//! assert_eq!(c.bytes(), br#"{"role":"","user_id":0}"#);
//! assert_eq!(c.fixture_id().to_string(), "84a6b2a276edd51b");
//!
//! // Integers keep their digits; floats print as Python's repr.
//! let c = canonicalize(b"[1E2, 0.1e1, 1.000, -0, 12345678901234567890123]", Canonicalization::V1)?;
//! assert_eq!(c.as_str(), "[100.0,1.0,1.0,0,12345678901234567890123]");
//!
//! // Duplicate keys are an error that names line and column.
//! let err = canonicalize(b"{\"a\": 1,\n \"a\": 2}", Canonicalization::V1).unwrap_err();
//! assert_eq!(err.to_string(), "line 2, column 2: duplicate key \"a\"");
//! # Ok(())
//! # }
//! ```
//!
//! # Fixture files
//!
//! [`fixture`] reads, writes and verifies a property's fixture folder (SPEC §3):
//! `fixtures/<property_id>/<fixture_id>.json` (canonical bytes and one `\n`),
//! `origins/<origin_id>.json` (the un-shrunk input, likewise) and `<fixture_id>.meta.json`
//! ([`fixture::Meta`], rendered by [`to_pretty_string`] in a fixed key order).
//! [`fixture::pin`] creates the three files atomically and only if missing (temporary file,
//! fsync, hard link, fsync of the directory), origin and meta first and the fixture file last,
//! so a crash never leaves a fixture without its meta and pinning again completes an
//! interrupted pin without rewriting anything; [`fixture::read_fixture`] checks a fixture's
//! integrity as it reads it; [`fixture::verify`] checks every folder and reports every problem.
//!
//! The crate does no I/O except in [`fixture`]; it never reads the clock (`pinned_at` is the
//! caller's).

#![cfg_attr(not(test), warn(clippy::unwrap_used, clippy::expect_used))]

mod deserializer;
mod digest;
mod error;
pub mod fixture;
mod read;
mod serde_edge;
mod serializer;
mod value;
pub mod walk;
mod write;

pub use digest::{Canonical, Canonicalization, Digest, FixtureId, PropertyId};
pub use error::{
    Error, ErrorChain, MetaError, ParseError, ParseErrorKind, Position, TimestampError, ValueError,
};
pub use read::{MAX_DEPTH, parse};
/// The `serde` whose traits [`to_value`] and [`from_value`] take, for bounds and hand-written
/// impls in the version this crate was built with. Deriving them needs `serde` with its
/// `derive` feature in your own `Cargo.toml`: this crate derives nothing, so it does not
/// turn that feature on.
pub use serde;
pub use serde_edge::{from_value, to_value};
pub use value::{Float, Int, Value, escape_pointer_token};
pub use write::to_pretty_string;

/// The Unicode version of the NFC tables canonical bytes use, as `(major, minor, update)`.
pub const UNICODE_VERSION: (u8, u8, u8) = unicode_normalization::UNICODE_VERSION;

/// Canonical bytes of JSON text, with their digest.
///
/// This streams: no tree is built, object members are sorted in place in the output buffer,
/// and memory stays a small multiple of the input. Each thread keeps its working buffers
/// (at most 1 MiB of them) for the next call, so that many small documents in a row do not
/// allocate them again; a larger document's buffers are freed when it is done.
pub fn canonicalize(text: &[u8], form: Canonicalization) -> Result<Canonical, ParseError> {
    read::canonicalize_text(text, form.sorts()).map(Canonical::from_canonical_bytes)
}

/// Canonical bytes (form v1) of JSON text, without the digest.
pub fn canonical_bytes(text: &[u8]) -> Result<Vec<u8>, ParseError> {
    read::canonicalize_text(text, true)
}

/// Canonical bytes of a [`Value`] in the given form.
///
/// Fails when an object holds the same key twice after NFC, or when the value nests deeper
/// than [`MAX_DEPTH`].
pub fn value_bytes(value: &Value, form: Canonicalization) -> Result<Vec<u8>, ValueError> {
    write::canonical_value(value, form.sorts())
}

/// Canonical bytes of a [`Value`] in the given form, with their digest ([`value_bytes`]
/// with the digest and fixture id).
///
/// Fails as [`value_bytes`] does.
///
/// ```
/// use freezegate_canon::{Canonicalization, canonicalize_value, parse};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let value = parse(br#"{"b": 1, "a": 2}"#)?;
/// assert_eq!(canonicalize_value(&value, Canonicalization::V1)?.as_str(), r#"{"a":2,"b":1}"#);
/// // The ordered form keeps the members in the value's order.
/// let ordered = canonicalize_value(&value, Canonicalization::V1Ordered)?;
/// assert_eq!(ordered.as_str(), r#"{"b":1,"a":2}"#);
/// # Ok(())
/// # }
/// ```
pub fn canonicalize_value(value: &Value, form: Canonicalization) -> Result<Canonical, ValueError> {
    value_bytes(value, form).map(Canonical::from_canonical_bytes)
}

/// Canonical bytes (form v1) of a [`Value`].
pub fn to_canonical_bytes(value: &Value) -> Result<Vec<u8>, ValueError> {
    write::canonical_value(value, true)
}

/// `text` in NFC, as canonical bytes hold it: borrowed when it already is. The tables are
/// those of [`UNICODE_VERSION`], the same the canonical form uses.
pub fn nfc(text: &str) -> std::borrow::Cow<'_, str> {
    read::nfc_cow(text, &mut String::new())
}

/// Parses JSON text given as `&str` (see [`parse`]).
pub fn parse_str(text: &str) -> Result<Value, ParseError> {
    parse(text.as_bytes())
}
