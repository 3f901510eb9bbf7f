//! Shrinks a failing JSON value to a minimal one that still fails, in a fixed, deterministic
//! order, and records the path from one to the other.
//!
//! [`shrink`] takes a failing [`Value`] and a closure that says whether a candidate still
//! fails. The crate knows nothing of processes, labels or failure signatures: the caller's
//! closure maps an oracle's outcome to `true` (the same failure) or `false` (anything else,
//! including a timeout or a harness error). Refusing to shrink a timeout is also the caller's
//! job: a run that never finished has no output to minimise, so it must not be handed here.
//!
//! # Main items
//!
//! - [`shrink`] with its [`Options`] gives a [`Shrunk`]: the minimal value, the shrink path
//!   as [`Step`]s, the call count; [`ShrinkError`] when the input cannot be canonicalised.
//! - [`apply_path`] re-applies a path to the origin; [`path_to_value`] and
//!   [`path_from_value`] are its JSON form.
//! - [`Value`] and [`Canonicalization`] come from `freezegate-canon`, re-exported here with
//!   the whole crate ([`freezegate_canon`]), so this one dependency is enough; so is
//!   [`ErrorChain`], which prints an error with its causes (`a: b: c`).
//!
//! # The order "smaller"
//!
//! Every accepted step makes the value strictly smaller: shorter canonical bytes (in the
//! [`Canonicalization`] of [`Options`]), then a structural tie-break (integers by absolute
//! value, positive before negative; strings shortlex; arrays and objects by size then element
//! by element). So shrinking terminates and the result is never larger than the input.
//!
//! The order is judged on what the oracle sees. The shrinker holds its values in canonical
//! form (strings and keys in NFC, see [`shrink`]) and never asks about a string step whose
//! result NFC would rewrite, so the value compared, the value recorded in the path and the
//! canonical bytes the oracle gets are one and the same.
//!
//! # The passes
//!
//! One round runs six passes in this fixed order; rounds repeat until one accepts nothing:
//!
//! 1. **delete** array elements and object members, whole container first, then halves,
//!    quarters, … then one at a time, last in canonical order first; an array may also keep a
//!    single element of any position, and an array of indices into itself may have its later
//!    indices lowered with the gap (`reindex`);
//! 2. **replace** a container by one of its descendants, of any kind, nearest first (at most
//!    64 per container in an ordinary round; all of them before a fixpoint is declared);
//! 3. **string**: remove characters in chunks, then one at a time (whole Unicode scalar
//!    values, never a split UTF-8 sequence); then move each remaining character toward `'0'`
//!    (`'0'`, `'A'` or `'a'`, then bisection of its code point, over the characters that
//!    leave the string in NFC);
//! 4. **integer**: toward zero, `0` first, then the positive twin of a negative, fewer digits,
//!    bisection, one step (a negative left over tries the digits 1 to 9); then pairs of nearby non-zero integers together, keeping their
//!    difference or their sum, for values that cannot fall alone (the *difference* problems);
//! 5. **float**: toward `0.0`, integral values and fewer significant digits;
//! 6. **merge** two adjacent arrays of the same array.
//!
//! Within a pass the first candidate that still fails is taken (the earlier pass's result
//! wins). A candidate whose canonical digest was already asked is answered from memory, so the
//! oracle never sees the same canonical candidate twice, and never sees the input again. The
//! result is 1-minimal for these steps unless the budget ran out: no single step fails.
//!
//! The design, the escape from the difference problems' local minimum and the measured
//! quality against Hypothesis and proptest are in the repository's `docs/shrinking.md` and
//! `docs/performance.md`.
//!
//! # Example
//!
//! ```
//! use freezegate_shrink::freezegate_canon::{parse_str, to_canonical_bytes};
//! use freezegate_shrink::{apply_path, shrink, Options, Value};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // Fails when some integer is at least 900.
//! let fails = |v: &Value| match v {
//!     Value::Array(items) => items.iter().any(|x| match x {
//!         Value::Int(n) => n.to_i64().is_none_or(|n| n >= 900),
//!         _ => false,
//!     }),
//!     _ => false,
//! };
//! let input = parse_str("[3, 17, 4005, 12, 77, 901234]")?;
//! let shrunk = shrink(&input, fails, &Options::default())?;
//! assert_eq!(to_canonical_bytes(&shrunk.value)?, b"[900]");
//! assert!(!shrunk.budget_exhausted);
//!
//! // The path re-applied to the input gives the result again.
//! assert_eq!(apply_path(&input, &shrunk.path)?, shrunk.value);
//! # Ok(())
//! # }
//! ```

#![cfg_attr(not(test), warn(clippy::unwrap_used, clippy::expect_used))]

mod engine;
mod nfc;
mod num;
mod order;
mod path;

use freezegate_canon::{ValueError, value_bytes};

pub use path::{
    Params, Pass, PathError, Step, apply_path, apply_path_checked, path_from_value, path_to_value,
};

/// The canonical form crate whose [`Value`] this crate shrinks, re-exported so that a user
/// needs one dependency and gets the version this crate was built with.
pub use freezegate_canon;
/// Prints an error with its causes on one line (`a: b: c`), from `freezegate-canon`.
pub use freezegate_canon::ErrorChain;
pub use freezegate_canon::{Canonicalization, Value};

/// How to shrink: [`Options::default`], then the `with_` methods (the struct may gain
/// fields, so it is not built by a struct expression outside this crate).
///
/// ```
/// use freezegate_shrink::{Canonicalization, Options};
///
/// let options = Options::default()
///     .with_max_calls(500)
///     .with_canonicalization(Canonicalization::V1Ordered);
/// assert_eq!(options.max_calls, 500);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Options {
    /// The most oracle calls [`shrink`] may make; when they are spent the smallest failing
    /// value so far is returned with [`Shrunk::budget_exhausted`] set.
    pub max_calls: u64,
    /// The canonical form whose byte length "smaller" measures and whose digest the memo
    /// keys on; it also fixes the canonical member order of objects.
    pub canonicalization: Canonicalization,
}

impl Default for Options {
    /// 10 000 calls, canonical form v1.
    fn default() -> Options {
        Options {
            max_calls: 10_000,
            canonicalization: Canonicalization::V1,
        }
    }
}

impl Options {
    /// These options with a budget of `max_calls` oracle calls.
    #[must_use]
    pub const fn with_max_calls(mut self, max_calls: u64) -> Options {
        self.max_calls = max_calls;
        self
    }

    /// These options measuring and keying on the canonical form `canonicalization`.
    #[must_use]
    pub const fn with_canonicalization(mut self, canonicalization: Canonicalization) -> Options {
        self.canonicalization = canonicalization;
        self
    }
}

/// The result of [`shrink`] (it may gain fields).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Shrunk {
    /// The smallest failing value found.
    pub value: Value,
    /// Every accepted step, in order: [`apply_path`] on the input (in NFC, see [`shrink`])
    /// gives [`Shrunk::value`].
    pub path: Vec<Step>,
    /// How many times the closure was called (the input itself is never asked).
    pub oracle_calls: u64,
    /// Whether the call budget ran out before a round accepted nothing.
    pub budget_exhausted: bool,
}

/// Why [`shrink`] cannot start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ShrinkError {
    /// The input value has no canonical form (a duplicate key after NFC, too deep).
    #[error("the input has no canonical form")]
    Canonical(#[source] ValueError),
}

/// Shrinks `value`, which must fail, with `still_fails` as the oracle.
///
/// `still_fails` returns `true` when a candidate shows the same failure. The input is taken to
/// fail and is never passed to it. Deterministic: the same input and a deterministic closure
/// give the same result, path and call count.
///
/// Shrinking works on what an oracle sees, the canonical form: an input whose strings or keys
/// are not in NFC is first normalised (members keep their order), and the path applies to
/// that form, which is the origin a fixture store keeps (`parse` of the input's canonical
/// bytes). For an input already in NFC it is the input itself. Every value on the path has
/// its strings in NFC, so [`apply_path`] gives [`Shrunk::value`] exactly.
pub fn shrink<F>(value: &Value, still_fails: F, options: &Options) -> Result<Shrunk, ShrinkError>
where
    F: FnMut(&Value) -> bool,
{
    let bytes = value_bytes(value, options.canonicalization).map_err(ShrinkError::Canonical)?;
    // The oracle sees strings in NFC: shrink that form, so that "smaller", character indices
    // and the path all mean what it sees. An input already in NFC is taken as it is.
    let start = if nfc::value_is_nfc(value) {
        value.clone()
    } else {
        nfc::normalise(value)
    };
    let mut engine = engine::Engine::new(
        start,
        bytes,
        still_fails,
        options.canonicalization,
        options.max_calls,
    );
    engine.run();
    Ok(Shrunk {
        value: engine.current,
        path: engine.path,
        oracle_calls: engine.calls,
        budget_exhausted: engine.exhausted,
    })
}
