//! The fixture folder of a property (SPEC §3): fixture, origin and meta files, written
//! atomically, read back with their integrity checked, and verified as a whole.
//!
//! Under `<root>/fixtures/<property_id>/`:
//!
//! - `<fixture_id>.json`: the fixture's canonical bytes and one `\n`;
//! - `origins/<origin_id>.json`: the un-shrunk failing input, canonical bytes and one `\n`;
//! - `<fixture_id>.meta.json`: a [`Meta`], rendered by [`Meta::render`] (fixed key order,
//!   two-space indent, trailing newline).
//!
//! Integrity rules, checked by [`read_fixture`], [`read_meta`] and [`verify`]: a fixture or
//! origin holds exactly canonical bytes (in the canonicalization its meta names, else
//! `freezegate-canon-v1`) and one `\n`, and its name is its id; a meta file parses (with a
//! non-empty `patch_id`), is in its rendered layout, and matches its fixture (property, ids,
//! digests) and an existing origin (its `shrink_path` is the shrinker's, so the gate checks
//! that it re-applies to the origin);
//! a fixture has its meta file ([`verify`]); nothing else lives in a property folder, except
//! the temporary files of a write in progress or of a writer that was killed
//! (`.<file name>.<pid>-<n>.tmp`), which the next [`pin`] of the property removes.
//!
//! [`pin`] writes the fixture file last and never rewrites a file: see there for what a crash
//! leaves and how pinning again completes it.
//!
//! The crate never reads the clock: `pinned_at` is whatever the caller puts in the [`Meta`].
//!
//! # Example
//!
//! ```
//! use freezegate_canon::fixture::{self, Meta};
//! use freezegate_canon::{Canonicalization, canonicalize};
//!
//! # fn main() -> Result<(), freezegate_canon::Error> {
//! # let dir = tempfile::tempdir().map_err(|e| freezegate_canon::Error::Name(e.to_string()))?;
//! let root = dir.path();
//! let origin = canonicalize(br#"{"items": [3, -1, 7]}"#, Canonicalization::V1)?;
//! let minimal = canonicalize(br#"{"items": [-1]}"#, Canonicalization::V1)?;
//! let meta = Meta {
//!     property_id: "cart.total_is_positive".parse()?,
//!     fixture_id: minimal.fixture_id(),
//!     fixture_digest: minimal.digest(),
//!     origin_id: origin.fixture_id(),
//!     origin_digest: origin.digest(),
//!     canonicalization: Canonicalization::V1,
//!     seed: 20260917,
//!     pinned_at: "2026-09-17T08:30:00Z".to_owned(),
//!     patch_id: "4f2a9c1".to_owned(),
//!     oracle_calls: 12,
//!     shrink_path: Vec::new(),
//! };
//! let path = fixture::pin(root, &meta, &minimal, &origin)?;
//! assert_eq!(std::fs::read(&path).unwrap(), b"{\"items\":[-1]}\n");
//!
//! let (bytes, _value) = fixture::read_fixture(root, &meta.property_id, meta.fixture_id)?;
//! assert_eq!(bytes, minimal);
//! assert!(fixture::verify(root).is_empty());
//! # Ok(())
//! # }
//! ```

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use crate::digest::{Canonical, Canonicalization, Digest, FixtureId, PropertyId};
use crate::error::{Error, MetaError, TimestampError};
use crate::value::{Int, Value};
use crate::write::to_pretty_string;

mod locate;

/// The folder under the repository root that holds one folder per property.
pub const FIXTURES_DIR: &str = "fixtures";
/// The sub-folder of a property folder that holds the origins.
pub const ORIGINS_DIR: &str = "origins";
/// The `schema` of a meta file.
pub const META_SCHEMA: &str = "freezegate-fixture-meta-v1";
/// Files tolerated directly under `fixtures/` (they are not property folders).
const TOP_LEVEL_EXTRAS: [&str; 2] = [".gitkeep", "README.md"];

/// The fields of a meta file, in their rendered order.
const FIELDS: [&str; 12] = [
    "schema",
    "property_id",
    "fixture_id",
    "fixture_digest",
    "origin_id",
    "origin_digest",
    "canonicalization",
    "seed",
    "pinned_at",
    "patch_id",
    "oracle_calls",
    "shrink_path",
];

/// The meta file of a pinned fixture (`<fixture_id>.meta.json`, SPEC §3).
///
/// Its `schema` is always [`META_SCHEMA`], so it is not a field here: [`Meta::render`] writes
/// it and [`Meta::parse`] checks it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meta {
    /// The property the fixture falsified.
    pub property_id: PropertyId,
    /// The fixture's id: the first 16 hex characters of `fixture_digest`.
    pub fixture_id: FixtureId,
    /// SHA-256 of the fixture's canonical bytes.
    pub fixture_digest: Digest,
    /// The origin's id: the first 16 hex characters of `origin_digest`.
    pub origin_id: FixtureId,
    /// SHA-256 of the origin's canonical bytes.
    pub origin_digest: Digest,
    /// The canonical form of both files.
    pub canonicalization: Canonicalization,
    /// The seed the failure was found and replayed under.
    pub seed: u64,
    /// When the fixture was pinned, UTC `YYYY-MM-DDTHH:MM:SSZ` (given by the caller).
    pub pinned_at: String,
    /// The patch under test when the fixture was pinned.
    pub patch_id: String,
    /// How many times the oracle ran while shrinking.
    pub oracle_calls: u64,
    /// The shrink path from origin to fixture: one JSON object per accepted step.
    pub shrink_path: Vec<Value>,
}

impl Meta {
    /// The meta as a [`Value`] whose members are in the rendered order.
    pub fn to_value(&self) -> Value {
        let s = |text: &str| Value::String(text.to_owned());
        Value::Object(vec![
            ("schema".to_owned(), s(META_SCHEMA)),
            ("property_id".to_owned(), s(self.property_id.as_str())),
            ("fixture_id".to_owned(), s(&self.fixture_id.to_string())),
            (
                "fixture_digest".to_owned(),
                s(&self.fixture_digest.to_string()),
            ),
            ("origin_id".to_owned(), s(&self.origin_id.to_string())),
            (
                "origin_digest".to_owned(),
                s(&self.origin_digest.to_string()),
            ),
            (
                "canonicalization".to_owned(),
                s(self.canonicalization.as_str()),
            ),
            ("seed".to_owned(), Value::Int(Int::from(self.seed))),
            ("pinned_at".to_owned(), s(&self.pinned_at)),
            ("patch_id".to_owned(), s(&self.patch_id)),
            (
                "oracle_calls".to_owned(),
                Value::Int(Int::from(self.oracle_calls)),
            ),
            (
                "shrink_path".to_owned(),
                Value::Array(self.shrink_path.clone()),
            ),
        ])
    }

    /// The text of the meta file: fixed key order, two-space indent, trailing newline.
    pub fn render(&self) -> String {
        to_pretty_string(&self.to_value())
    }

    /// Parses the text of a meta file and checks it ([`Meta::check`]).
    ///
    /// JSON errors name line and column ([`Error::Parse`]); a missing or unknown field, or a
    /// field of the wrong type or with an invalid value, names the field and the line and
    /// column of its value (of its key, for an unknown field; of the object, for a missing
    /// one) ([`Error::MetaAt`]).
    ///
    /// ```
    /// use freezegate_canon::fixture::Meta;
    ///
    /// let err = Meta::parse(b"{\n  \"schema\": 1,\n  \"merged\": true\n}\n").unwrap_err();
    /// assert_eq!(err.to_string(), "line 3, column 3: unknown field \"merged\"");
    /// ```
    pub fn parse(text: &[u8]) -> Result<Meta, Error> {
        let value = crate::read::parse(text)?;
        Meta::from_value(&value).map_err(|error| Error::MetaAt {
            at: crate::Position::at(text, locate::offset(text, &value, &error)),
            error,
        })
    }

    /// Reads a meta from a parsed value and checks it ([`Meta::check`]).
    pub fn from_value(value: &Value) -> Result<Meta, MetaError> {
        let Value::Object(members) = value else {
            return Err(MetaError::NotAnObject(value.kind()));
        };
        if let Some((unknown, _)) = members.iter().find(|(k, _)| !FIELDS.contains(&k.as_str())) {
            return Err(MetaError::UnknownField(unknown.clone()));
        }
        if let Some(missing) = FIELDS
            .iter()
            .find(|f| !members.iter().any(|(k, _)| k == *f))
        {
            return Err(MetaError::MissingField(missing));
        }
        let get = |field: &'static str| {
            members
                .iter()
                .find(|(k, _)| k == field)
                .map(|(_, v)| v)
                .ok_or(MetaError::MissingField(field))
        };
        let schema = string(get("schema")?, "schema")?;
        if schema != META_SCHEMA {
            return Err(invalid(
                "schema",
                format!("expected {META_SCHEMA:?}, found {schema:?}"),
            ));
        }
        let meta = Meta {
            property_id: named(get("property_id")?, "property_id")?,
            fixture_id: named(get("fixture_id")?, "fixture_id")?,
            fixture_digest: named(get("fixture_digest")?, "fixture_digest")?,
            origin_id: named(get("origin_id")?, "origin_id")?,
            origin_digest: named(get("origin_digest")?, "origin_digest")?,
            canonicalization: named(get("canonicalization")?, "canonicalization")?,
            seed: unsigned(get("seed")?, "seed")?,
            pinned_at: string(get("pinned_at")?, "pinned_at")?.to_owned(),
            patch_id: string(get("patch_id")?, "patch_id")?.to_owned(),
            oracle_calls: unsigned(get("oracle_calls")?, "oracle_calls")?,
            shrink_path: steps(get("shrink_path")?)?,
        };
        meta.check()?;
        Ok(meta)
    }

    /// Checks what the types alone do not: `pinned_at` is a UTC time of the form
    /// `YYYY-MM-DDTHH:MM:SSZ`, each id is its digest's prefix, and each step of
    /// `shrink_path` is an object that a meta file can hold: no key twice in any of its
    /// objects (also after NFC) and no deeper than [`MAX_DEPTH`](crate::MAX_DEPTH) counting
    /// the meta object and the `shrink_path` array around it (a step may nest 126 more
    /// levels), the limits under which [`Meta::parse`] reads the file back. A meta file read
    /// from disk passes this check with an empty `patch_id` (older versions wrote one); a new
    /// meta must also pass [`Meta::check_new`], which [`pin`] asks for.
    ///
    /// ```
    /// use freezegate_canon::fixture::Meta;
    /// use freezegate_canon::{Canonicalization, Value, canonicalize};
    ///
    /// # fn main() -> Result<(), freezegate_canon::Error> {
    /// let c = canonicalize(b"[1]", Canonicalization::V1)?;
    /// let mut meta = Meta {
    ///     property_id: "p".parse()?,
    ///     fixture_id: c.fixture_id(),
    ///     fixture_digest: c.digest(),
    ///     origin_id: c.fixture_id(),
    ///     origin_digest: c.digest(),
    ///     canonicalization: Canonicalization::V1,
    ///     seed: 1,
    ///     pinned_at: "2026-09-17T08:30:00Z".to_owned(),
    ///     patch_id: "4f2a9c1".to_owned(),
    ///     oracle_calls: 1,
    ///     shrink_path: vec![Value::Object(vec![("a".into(), Value::int(1)), ("a".into(), Value::int(2))])],
    /// };
    /// assert_eq!(
    ///     meta.check().unwrap_err().to_string(),
    ///     "field \"shrink_path\": step 0: duplicate key \"a\" in the object at \"/shrink_path/0\""
    /// );
    /// meta.shrink_path = vec![Value::Null];
    /// assert_eq!(
    ///     meta.check().unwrap_err().to_string(),
    ///     "field \"shrink_path\": step 0 is a null, not an object"
    /// );
    /// # Ok(())
    /// # }
    /// ```
    pub fn check(&self) -> Result<(), MetaError> {
        check_utc_timestamp(&self.pinned_at).map_err(|e| invalid("pinned_at", e.to_string()))?;
        if !self.fixture_id.is_prefix_of(&self.fixture_digest) {
            return Err(invalid(
                "fixture_id",
                format!(
                    "{} is not the start of fixture_digest {}",
                    self.fixture_id, self.fixture_digest
                ),
            ));
        }
        if !self.origin_id.is_prefix_of(&self.origin_digest) {
            return Err(invalid(
                "origin_id",
                format!(
                    "{} is not the start of origin_digest {}",
                    self.origin_id, self.origin_digest
                ),
            ));
        }
        check_steps(&self.shrink_path)
    }

    /// [`Meta::check`], and what is asked of a meta only when it is written: `patch_id`
    /// names a candidate (it is not empty or blank).
    pub fn check_new(&self) -> Result<(), MetaError> {
        self.check()?;
        if self.patch_id.trim().is_empty() {
            return Err(invalid(
                "patch_id",
                format!(
                    "{:?} is empty: it names the candidate under test (a commit or pull request id)",
                    self.patch_id
                ),
            ));
        }
        Ok(())
    }
}

fn invalid(field: &'static str, problem: String) -> MetaError {
    MetaError::InvalidField { field, problem }
}

fn string<'v>(value: &'v Value, field: &'static str) -> Result<&'v str, MetaError> {
    match value {
        Value::String(s) => Ok(s),
        other => Err(invalid(
            field,
            format!("expected a string, found {}", other.kind()),
        )),
    }
}

fn named<T: std::str::FromStr<Err = Error>>(
    value: &Value,
    field: &'static str,
) -> Result<T, MetaError> {
    string(value, field)?
        .parse()
        .map_err(|e: Error| invalid(field, e.to_string()))
}

fn unsigned(value: &Value, field: &'static str) -> Result<u64, MetaError> {
    match value {
        Value::Int(n) => n
            .to_u64()
            .ok_or_else(|| invalid(field, format!("{n} is not an integer from 0 to 2^64-1"))),
        other => Err(invalid(
            field,
            format!("expected an integer, found {}", other.kind()),
        )),
    }
}

/// The steps of a `shrink_path` value, which must be an array ([`check_steps`] checks the
/// steps, in [`Meta::check`]).
fn steps(value: &Value) -> Result<Vec<Value>, MetaError> {
    let Value::Array(items) = value else {
        return Err(invalid(
            "shrink_path",
            format!("expected an array, found {}", value.kind()),
        ));
    };
    Ok(items.clone())
}

/// The arrays and objects of a meta file around each step of its `shrink_path`: the meta
/// object and the `shrink_path` array.
const STEP_DEPTH: usize = 2;

/// Checks that each step is an object that a meta file can hold, as [`Meta::parse`] reads it
/// back: canonical form where the step sits in the file (no key twice, also after NFC; no
/// nesting deeper than [`MAX_DEPTH`](crate::MAX_DEPTH) in all).
fn check_steps(steps: &[Value]) -> Result<(), MetaError> {
    for (i, step) in steps.iter().enumerate() {
        if !matches!(step, Value::Object(_)) {
            return Err(invalid(
                "shrink_path",
                format!("step {i} is a {}, not an object", step.kind()),
            ));
        }
        crate::write::canonical_value_at(step, true, STEP_DEPTH).map_err(|e| {
            let e = e.within(&i.to_string()).within("shrink_path");
            invalid("shrink_path", format!("step {i}: {e}"))
        })?;
    }
    Ok(())
}

/// Checks that `s` is a UTC time `YYYY-MM-DDTHH:MM:SSZ` that exists on the calendar
/// (no leap seconds). The error says which of the two it is not.
pub fn check_utc_timestamp(s: &str) -> Result<(), TimestampError> {
    let b = s.as_bytes();
    let digits = [0..4, 5..7, 8..10, 11..13, 14..16, 17..19];
    let shape = b.len() == 20
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && b[19] == b'Z'
        && digits
            .iter()
            .all(|r| b[r.clone()].iter().all(u8::is_ascii_digit));
    if !shape {
        return Err(TimestampError::Form(s.to_owned()));
    }
    let num = |i: usize| -> u32 {
        b[digits[i].clone()]
            .iter()
            .fold(0, |n, d| n * 10 + u32::from(d - b'0'))
    };
    let (year, month, day) = (num(0), num(1), num(2));
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => 0,
    };
    if day == 0 || day > days || num(3) > 23 || num(4) > 59 || num(5) > 59 {
        return Err(TimestampError::NotOnCalendar(s.to_owned()));
    }
    Ok(())
}

/// `<root>/fixtures/<property>`.
pub fn property_dir(root: &Path, property: &PropertyId) -> PathBuf {
    root.join(FIXTURES_DIR).join(property.as_str())
}

/// `<root>/fixtures/<property>/<id>.json`.
pub fn fixture_path(root: &Path, property: &PropertyId, id: FixtureId) -> PathBuf {
    property_dir(root, property).join(format!("{id}.json"))
}

/// `<root>/fixtures/<property>/<id>.meta.json`.
pub fn meta_path(root: &Path, property: &PropertyId, id: FixtureId) -> PathBuf {
    property_dir(root, property).join(format!("{id}.meta.json"))
}

/// `<root>/fixtures/<property>/origins/<origin_id>.json`.
pub fn origin_path(root: &Path, property: &PropertyId, origin_id: FixtureId) -> PathBuf {
    property_dir(root, property)
        .join(ORIGINS_DIR)
        .join(format!("{origin_id}.json"))
}

/// The content of a fixture or origin file: the canonical bytes and one `\n`.
pub fn file_bytes(canonical: &Canonical) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(canonical.bytes().len() + 1);
    bytes.extend_from_slice(canonical.bytes());
    bytes.push(b'\n');
    bytes
}

/// The [`write_atomic`] calls of this process in progress, and whether [`hold_writes`] was
/// called.
struct Writes {
    running: usize,
    held: bool,
}

static WRITES: Mutex<Writes> = Mutex::new(Writes {
    running: 0,
    held: false,
});

/// Signalled when a write ends.
static WRITE_ENDED: Condvar = Condvar::new();

fn writes() -> MutexGuard<'static, Writes> {
    WRITES.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One write in progress, from before its temporary file exists until after the rename.
struct WriteGuard;

impl WriteGuard {
    /// Waits while writes are held (for ever: [`hold_writes`] is for a process that exits).
    fn begin() -> WriteGuard {
        let mut state = writes();
        while state.held {
            state = WRITE_ENDED
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        state.running += 1;
        WriteGuard
    }
}

impl Drop for WriteGuard {
    fn drop(&mut self) {
        writes().running -= 1;
        WRITE_ENDED.notify_all();
    }
}

/// Waits until the [`write_atomic`] calls of this process in progress on other threads
/// (fixture, origin and meta files, the ledger) are done, and makes every later one wait for
/// ever: for a program that is about to exit on a signal, so that it leaves no temporary file
/// behind (one in a fixture folder would be an integrity error). Returns at once if no write
/// is in progress. Call it from a thread that is not writing.
pub fn hold_writes() {
    let mut state = writes();
    state.held = true;
    while state.running > 0 {
        state = WRITE_ENDED
            .wait(state)
            .unwrap_or_else(PoisonError::into_inner);
    }
}

/// Replaces the file at `path` with `bytes` so that a crash leaves either the old or the new
/// content, never a mix: a temporary file in the same directory is written and fsynced, then
/// renamed over `path`, then the directory is fsynced. The directory must exist. Errors name
/// `path` (the directory, for its fsync), never the temporary file.
///
/// The temporary file is named `.<file name>.<pid>-<n>.tmp`; a writer killed mid-write leaves
/// it behind. [`pin`] removes those of its own files, and [`verify`] does not count them; see
/// [`hold_writes`] for a program that exits on a signal.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    write_atomic_with(path, |file| file.write_all(bytes))
}

/// [`write_atomic`] with the content written by `fill`; if `fill` fails, the temporary file
/// is removed and `path` is untouched.
fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut File) -> io::Result<()>,
) -> Result<(), Error> {
    // Held to the end: a program exiting on a signal waits for the rename too.
    let _writing = WriteGuard::begin();
    let (dir, tmp) = write_temporary(path, fill)?;
    if let Err(e) = fs::rename(&tmp, path) {
        let _ = fs::remove_file(&tmp);
        return Err(Error::io(path, e));
    }
    sync_dir(dir)
}

/// Writes a temporary file beside `path` with the content written by `fill` and fsyncs it;
/// returns the directory and the temporary file. If `fill` fails, the temporary file is
/// removed.
fn write_temporary(
    path: &Path,
    fill: impl FnOnce(&mut File) -> io::Result<()>,
) -> Result<(&Path, PathBuf), Error> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name().ok_or_else(|| {
        Error::io(
            path,
            io::Error::new(io::ErrorKind::InvalidInput, "no file name"),
        )
    })?;
    let tmp = dir.join(format!(
        ".{}.{}-{}{TEMPORARY_SUFFIX}",
        name.to_string_lossy(),
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        // The file asked for, not the temporary: its name is no concern of the caller's.
        .map_err(|e| Error::io(path, e))?;
    let written = fill(&mut file).and_then(|()| file.sync_all());
    drop(file);
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(Error::io(path, e));
    }
    Ok((dir, tmp))
}

fn sync_dir(dir: &Path) -> Result<(), Error> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io(dir, e))
}

/// The end of the names [`write_atomic`] gives its temporary files.
const TEMPORARY_SUFFIX: &str = ".tmp";

/// Whether `name` is the name of a temporary file of [`write_atomic`] or [`pin`] for the file
/// named `<16 hex>.json` (or, when `meta` is true, also `<16 hex>.meta.json`):
/// `.<that name>.<pid>-<n>.tmp`.
fn is_temporary(name: &str, meta: bool) -> bool {
    let Some(inner) = name
        .strip_prefix('.')
        .and_then(|n| n.strip_suffix(TEMPORARY_SUFFIX))
    else {
        return false;
    };
    let Some((file, writer)) = inner.rsplit_once('.') else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let writer_ok = writer
        .split_once('-')
        .is_some_and(|(pid, n)| digits(pid) && digits(n));
    writer_ok && (id_of(file, ".json").is_some() || (meta && id_of(file, ".meta.json").is_some()))
}

/// Removes the temporary files of fixture, meta and origin writes in a property folder: the
/// caller holds the folder's lock, and every writer of those files holds it while its
/// temporary file exists, so each one found is left by a writer that is gone.
fn remove_stale_temporaries(dir: &Path) {
    for (folder, meta) in [(dir.to_owned(), true), (dir.join(ORIGINS_DIR), false)] {
        let Ok(list) = fs::read_dir(&folder) else {
            continue;
        };
        for entry in list.flatten() {
            if is_temporary(&entry.file_name().to_string_lossy(), meta) {
                let _ = fs::remove_file(entry.path());
            }
        }
    }
}

/// Holds the exclusive lock on a property folder (an advisory lock on the folder itself, so no
/// lock file lives among the fixtures) until dropped. `None` where the platform has no such
/// lock.
fn lock_folder(dir: &Path) -> Result<Option<File>, Error> {
    let folder = File::open(dir).map_err(|e| Error::io(dir, e))?;
    match folder.lock() {
        Ok(()) => Ok(Some(folder)),
        Err(e) if e.kind() == io::ErrorKind::Unsupported => Ok(None),
        Err(e) => Err(Error::io(dir, e)),
    }
}

/// Creates the file at `path` with `bytes` unless it exists, atomically: a temporary file is
/// written and fsynced, then hard-linked to `path` (which fails, leaving the existing file as
/// it is, if `path` exists, whoever created it), then removed; then the directory is fsynced.
/// Returns whether this call created the file. `go` is asked before each step that changes
/// the folder and stops the write where it says no (a simulated crash, for tests).
fn create_new(path: &Path, bytes: &[u8], go: &mut dyn FnMut() -> bool) -> Result<bool, Error> {
    if fs::symlink_metadata(path).is_ok() || !go() {
        return Ok(false);
    }
    let (dir, tmp) = write_temporary(path, |file| file.write_all(bytes))?;
    if !go() {
        return Ok(false);
    }
    let linked = fs::hard_link(&tmp, path);
    if !go() {
        return Ok(false);
    }
    let _ = fs::remove_file(&tmp);
    match linked {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(false),
        Err(e) => return Err(Error::io(path, e)),
    }
    sync_dir(dir)?;
    Ok(true)
}

/// Where a file's bytes first differ from its canonical bytes, with a short excerpt of each
/// from there: what an error says instead of the whole canonical text, which can be as large
/// as the file.
///
/// ```
/// use freezegate_canon::fixture::Difference;
///
/// let d = Difference::between(b"{\"b\": 1,\n \"a\": 2}", b"{\"a\":2,\"b\":1}").unwrap();
/// assert_eq!(d.offset, 2);
/// assert_eq!(
///     d.to_string(),
///     r#"they first differ from the canonical bytes at byte 2 (line 1, column 3): found `b": 1,\n "a": 2}` where the canonical bytes have `a":2,"b":1}`"#
/// );
/// assert!(Difference::between(b"[]", b"[]").is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// The 0-based byte offset of the first difference (at a character boundary).
    pub offset: usize,
    /// Its line and column in the file.
    pub position: crate::Position,
    /// The file's text from there, at most [`Difference::EXCERPT`] characters.
    pub found: String,
    /// The canonical text from there, at most [`Difference::EXCERPT`] characters.
    pub expected: String,
}

impl Difference {
    /// The most characters an excerpt holds (an excerpt cut short ends with `…`).
    pub const EXCERPT: usize = 40;

    /// Where `found` first differs from `expected` (one may be a prefix of the other);
    /// `None` when they are equal. Costs one pass up to the difference, whatever the sizes.
    pub fn between(found: &[u8], expected: &[u8]) -> Option<Difference> {
        if found == expected {
            return None;
        }
        let mut offset = found
            .iter()
            .zip(expected)
            .position(|(a, b)| a != b)
            .unwrap_or(found.len().min(expected.len()));
        // Back to the start of the character both share the first bytes of.
        while offset > 0 && found.get(offset).is_some_and(|b| b & 0xC0 == 0x80) {
            offset -= 1;
        }
        Some(Difference {
            offset,
            position: crate::Position::at(found, offset),
            found: excerpt(&found[offset..]),
            expected: excerpt(&expected[offset..]),
        })
    }
}

/// At most [`Difference::EXCERPT`] characters of the start of `bytes`, `…` when cut.
fn excerpt(bytes: &[u8]) -> String {
    // Four bytes per character at most: the excerpt needs no more of the text.
    let head = &bytes[..bytes.len().min(4 * Difference::EXCERPT + 4)];
    let text = String::from_utf8_lossy(head);
    let mut out: String = text.chars().take(Difference::EXCERPT).collect();
    if out.len() < bytes.len() {
        out.push('…');
    }
    out
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let end = |s: &str| if s.is_empty() { " (the end)" } else { "" };
        write!(
            f,
            "they first differ from the canonical bytes at byte {} ({}): found `{}`{} where the canonical bytes have `{}`{}",
            self.offset,
            self.position,
            Shown(&self.found),
            end(&self.found),
            Shown(&self.expected),
            end(&self.expected),
        )
    }
}

/// An excerpt as a message shows it: as it is, but for control characters (`\n`, `\t`,
/// `\u{1b}`), line and paragraph separators and bidirectional controls (`\u{2028}`,
/// `\u{202e}`), so that the message stays on one line and reads as stored. JSON is full of
/// quotes and its strings of backslashes; quoting them again would double every one of them
/// in the message.
struct Shown<'a>(&'a str);

impl std::fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use std::fmt::Write as _;
        for c in self.0.chars() {
            let invisible = matches!(
                c,
                '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}' | '\u{61c}'
                    | '\u{202a}'..='\u{202e}'
                    | '\u{2066}'..='\u{2069}'
            );
            if c.is_control() {
                write!(f, "{}", c.escape_debug())?;
            } else if invisible {
                write!(f, "\\u{{{:x}}}", u32::from(c))?;
            } else {
                f.write_char(c)?;
            }
        }
        Ok(())
    }
}

fn integrity(path: &Path, problem: impl Into<String>) -> Error {
    Error::Integrity {
        path: path.to_owned(),
        problem: problem.into(),
    }
}

/// Checks that `text`, the content of the fixture or origin file at `path`, is canonical bytes
/// in `form` plus one `\n`, and that its id is `name`.
fn check_canonical_file(
    path: &Path,
    text: &[u8],
    form: Canonicalization,
    name: FixtureId,
) -> Result<Canonical, Error> {
    let Some(body) = text.strip_suffix(b"\n") else {
        return Err(integrity(
            path,
            "does not end with exactly one newline (it has none)",
        ));
    };
    if body.last().is_some_and(|b| b.is_ascii_whitespace()) {
        return Err(integrity(
            path,
            "does not end with exactly one newline (whitespace precedes the last one)",
        ));
    }
    let canonical = crate::canonicalize(body, form).map_err(|e| Error::in_file(path, e))?;
    if let Some(difference) = Difference::between(body, canonical.bytes()) {
        return Err(Error::NotCanonical {
            path: path.to_owned(),
            form,
            difference: Box::new(difference),
        });
    }
    if canonical.fixture_id() != name {
        return Err(integrity(
            path,
            format!(
                "named {name} but the id of its bytes is {}",
                canonical.fixture_id()
            ),
        ));
    }
    Ok(canonical)
}

fn read(path: &Path) -> Result<Vec<u8>, Error> {
    fs::read(path).map_err(|e| Error::io(path, e))
}

/// Reads and checks a meta file's content, naming `path` in errors.
fn meta_from_bytes(path: &Path, text: &[u8]) -> Result<Meta, Error> {
    let meta = Meta::parse(text).map_err(|e| Error::in_file(path, e))?;
    if let Some(d) = Difference::between(text, meta.render().as_bytes()) {
        return Err(Error::in_file(
            path,
            Error::MetaAt {
                at: d.position,
                error: MetaError::Layout {
                    found: Shown(&d.found).to_string(),
                    expected: Shown(&d.expected).to_string(),
                },
            },
        ));
    }
    Ok(meta)
}

/// Reads the meta file of fixture `id` of `property`, checking that it parses, is in its
/// rendered layout, and names this property and fixture.
pub fn read_meta(root: &Path, property: &PropertyId, id: FixtureId) -> Result<Meta, Error> {
    let path = meta_path(root, property, id);
    let meta = meta_from_bytes(&path, &read(&path)?)?;
    if meta.property_id != *property {
        return Err(integrity(
            &path,
            format!(
                "names property {} but lies in the folder of {property}",
                meta.property_id
            ),
        ));
    }
    if meta.fixture_id != id {
        return Err(integrity(
            &path,
            format!(
                "names fixture {} but is the meta file of {id}",
                meta.fixture_id
            ),
        ));
    }
    Ok(meta)
}

/// Reads fixture `id` of `property`: its canonical bytes (checked: canonical in the form its
/// meta names, else v1; one trailing `\n`; named by its id) and the parsed value. When the
/// meta file exists, it must be valid and its digest must match.
pub fn read_fixture(
    root: &Path,
    property: &PropertyId,
    id: FixtureId,
) -> Result<(Canonical, Value), Error> {
    let meta_file = meta_path(root, property, id);
    let meta = if meta_file.exists() {
        Some(read_meta(root, property, id)?)
    } else {
        None
    };
    let form = meta
        .as_ref()
        .map_or(Canonicalization::V1, |m| m.canonicalization);
    let path = fixture_path(root, property, id);
    let canonical = check_canonical_file(&path, &read(&path)?, form, id)?;
    if let Some(meta) = &meta
        && meta.fixture_digest != canonical.digest()
    {
        return Err(integrity(
            &meta_file,
            format!(
                "fixture_digest {} does not match the fixture's digest {}",
                meta.fixture_digest,
                canonical.digest()
            ),
        ));
    }
    let value = crate::read::parse(canonical.bytes()).map_err(|e| Error::in_file(&path, e))?;
    Ok((canonical, value))
}

/// Reads origin `origin_id` of `property` in `form`: canonical bytes (checked as for a
/// fixture) and the parsed value.
pub fn read_origin(
    root: &Path,
    property: &PropertyId,
    origin_id: FixtureId,
    form: Canonicalization,
) -> Result<(Canonical, Value), Error> {
    let path = origin_path(root, property, origin_id);
    let canonical = check_canonical_file(&path, &read(&path)?, form, origin_id)?;
    let value = crate::read::parse(canonical.bytes()).map_err(|e| Error::in_file(&path, e))?;
    Ok((canonical, value))
}

/// Pins a fixture: creates its origin, then its meta file, then the fixture file, each
/// atomically and only if it does not exist yet, creating the folders as needed. Returns the
/// fixture's path.
///
/// The fixture file is written last: it is the commit point. A crash before it leaves no
/// fixture (nothing pinned; at most an origin and a meta file that the next pin of the same
/// fixture completes), never a fixture without its meta file. A file that exists is never
/// rewritten (SPEC §3), so pinning again completes an interrupted pin (a meta file without
/// its fixture, or a fixture without its meta file or origin) and keeps the meta of the first
/// pin: of two concurrent pins of
/// one fixture, the first to create the meta file wins and the other leaves it alone. An
/// existing meta file keeps its own origin: this origin is then written only if it is that
/// one. Something at the fixture's or meta file's name that is not a file (a link to
/// nothing, a folder) is an error: nothing was pinned.
///
/// Pins of one property hold an exclusive lock on its folder while they write, and first
/// remove the temporary files that writers killed mid-write left there; a writer that is
/// still running holds the lock, so its temporary files are never taken.
///
/// Refuses a meta that fails [`Meta::check_new`] (so every meta it writes reads back, its
/// `shrink_path` included) or does not match the two files (ids and digests), and bytes that
/// are not canonical in the meta's canonicalization; a refused pin writes nothing.
pub fn pin(
    root: &Path,
    meta: &Meta,
    fixture: &Canonical,
    origin: &Canonical,
) -> Result<PathBuf, Error> {
    pin_until(root, meta, fixture, origin, &mut || true)
}

/// [`pin`], asking `go` before each step that changes the folder; where it says no, the pin
/// stops as a crash would stop it, leaving the folder as it is at that moment.
fn pin_until(
    root: &Path,
    meta: &Meta,
    fixture: &Canonical,
    origin: &Canonical,
    go: &mut dyn FnMut() -> bool,
) -> Result<PathBuf, Error> {
    meta.check_new()?;
    let property = &meta.property_id;
    let fixture_file = fixture_path(root, property, meta.fixture_id);
    let origin_file = origin_path(root, property, meta.origin_id);
    for (path, c, digest, what) in [
        (&fixture_file, fixture, meta.fixture_digest, "fixture"),
        (&origin_file, origin, meta.origin_digest, "origin"),
    ] {
        if c.digest() != digest {
            return Err(integrity(
                path,
                format!(
                    "the meta names {what} digest {digest} but the bytes have {}",
                    c.digest()
                ),
            ));
        }
        let again = crate::canonicalize(c.bytes(), meta.canonicalization)
            .map_err(|e| Error::in_file(path, e))?;
        if again.bytes() != c.bytes() {
            return Err(integrity(
                path,
                format!(
                    "the {what} bytes are not canonical ({})",
                    meta.canonicalization
                ),
            ));
        }
    }
    let dir = property_dir(root, property);
    let origins = dir.join(ORIGINS_DIR);
    fs::create_dir_all(&origins).map_err(|e| Error::io(&origins, e))?;
    let lock = lock_folder(&dir)?;
    // One write from here to the fixture's link: a program exiting on a signal waits for the
    // whole pin, so it leaves no meta without its fixture.
    let _writing = WriteGuard::begin();
    if lock.is_some() {
        remove_stale_temporaries(&dir);
    }
    let meta_file = meta_path(root, property, meta.fixture_id);
    // The origin a meta file that is already there names (when it reads), else ours.
    let recorded_origin = read(&meta_file)
        .ok()
        .map(|text| Meta::parse(&text).map(|m| m.origin_id).ok());
    // Whether a simulated crash stopped the pin (tests only).
    let mut stopped = false;
    let mut go = || {
        let on = go();
        stopped |= !on;
        on
    };
    if recorded_origin.is_none() || recorded_origin == Some(Some(meta.origin_id)) {
        create_new(&origin_file, &file_bytes(origin), &mut go)?;
    }
    create_new(&meta_file, meta.render().as_bytes(), &mut go)?;
    create_new(&fixture_file, &file_bytes(fixture), &mut go)?;
    // Something other than a file at a name (a link to nothing, a folder) kept `create_new`
    // from writing there: nothing is pinned, whatever the caller would say.
    if !stopped {
        for path in [&meta_file, &fixture_file] {
            if !fs::symlink_metadata(path).is_ok_and(|m| m.is_file()) {
                return Err(integrity(
                    path,
                    "is there but is not a regular file, so nothing was pinned".to_owned(),
                ));
            }
        }
    }
    drop(lock);
    Ok(fixture_file)
}

/// The entries of a directory, sorted by name, as (name, path, is_dir).
///
/// A symbolic link is no entry but an integrity error pushed to `errors`: what a link points
/// at lies outside the paths the patch checks protect (`fixtures/**`), so an unsigned change
/// there would change a pinned fixture unseen.
fn entries(dir: &Path, errors: &mut Vec<Error>) -> Result<Vec<(String, PathBuf, bool)>, Error> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let path = entry.path();
        let meta = fs::symlink_metadata(&path).map_err(|e| Error::io(&path, e))?;
        if meta.file_type().is_symlink() {
            errors.push(link_error(&path));
            continue;
        }
        let is_dir = meta.is_dir();
        out.push((
            entry.file_name().to_string_lossy().into_owned(),
            path,
            is_dir,
        ));
    }
    out.sort();
    Ok(out)
}

/// The integrity error of a symbolic link in the fixtures tree.
fn link_error(path: &Path) -> Error {
    integrity(
        path,
        "a symbolic link: fixtures must be files in the repository, so that the patch checks see every change to them",
    )
}

/// The id in a file name `<16 hex><suffix>`.
fn id_of(name: &str, suffix: &str) -> Option<FixtureId> {
    name.strip_suffix(suffix)?.parse().ok()
}

/// Checks every property folder under `<root>/fixtures/` against the integrity rules of
/// SPEC §3 and returns every problem found, each naming its file (empty: all is well). A
/// missing `fixtures/` folder holds no fixtures and is fine. Each fixture is judged in the
/// canonical form its meta file records (v1 without one); [`verify_declared`] also holds
/// the meta files to the form each property declares.
///
/// An error's message names its file and leaves the cause (a parse error's line and column,
/// an operating system error) to [`std::error::Error::source`]; print each with
/// [`ErrorChain`](crate::ErrorChain) to show both:
///
/// ```
/// use freezegate_canon::{ErrorChain, fixture};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// let root = dir.path();
/// let folder = root.join("fixtures/cart.total_is_positive");
/// std::fs::create_dir_all(&folder)?;
/// std::fs::write(folder.join("0123456789abcdef.meta.json"), "{\n  \"seed\": \n")?;
/// let errors: Vec<String> = fixture::verify(root)
///     .iter()
///     .map(|error| ErrorChain(error).to_string())
///     .collect();
/// for error in &errors {
///     eprintln!("error: {error}");
/// }
/// assert_eq!(
///     errors[0].strip_prefix(root.to_str().ok_or("not UTF-8")?),
///     Some("/fixtures/cart.total_is_positive/0123456789abcdef.meta.json: line 3, column 1: unexpected end of input")
/// );
/// # Ok(())
/// # }
/// ```
pub fn verify(root: &Path) -> Vec<Error> {
    verify_declared(root, |_| None)
}

/// [`verify`], knowing the canonical form each property declares (`None`: not known, as
/// for a folder of a property the caller does not list). A meta file that records another
/// form than its property declares is an integrity error (SPEC §3: the choice is recorded in
/// the meta file), and a fixture without a meta file is judged in the declared form.
pub fn verify_declared(
    root: &Path,
    declared: impl Fn(&PropertyId) -> Option<Canonicalization>,
) -> Vec<Error> {
    let dir = root.join(FIXTURES_DIR);
    if fs::symlink_metadata(&dir).is_ok_and(|m| m.file_type().is_symlink()) {
        return vec![link_error(&dir)];
    }
    if !dir.exists() {
        return Vec::new();
    }
    let mut errors = Vec::new();
    let list = match entries(&dir, &mut errors) {
        Ok(list) => list,
        Err(e) => return vec![e],
    };
    for (name, path, is_dir) in list {
        if !is_dir {
            if !TOP_LEVEL_EXTRAS.contains(&name.as_str()) {
                errors.push(integrity(
                    &path,
                    "unexpected file: fixtures/ holds only property folders",
                ));
            }
            continue;
        }
        match name.parse::<PropertyId>() {
            Ok(property) => {
                let form = declared(&property);
                verify_property(&path, &property, form, &mut errors);
            }
            Err(e) => errors.push(integrity(&path, format!("not a property folder: {e}"))),
        }
    }
    errors
}

/// Checks one property folder, appending every problem to `errors`.
fn verify_property(
    dir: &Path,
    property: &PropertyId,
    declared: Option<Canonicalization>,
    errors: &mut Vec<Error>,
) {
    let unexpected = |path: &Path| {
        integrity(
            path,
            "unexpected file: a property folder holds only <fixture_id>.json, <fixture_id>.meta.json and origins/<origin_id>.json",
        )
    };
    let list = match entries(dir, errors) {
        Ok(list) => list,
        Err(e) => return errors.push(e),
    };
    let mut fixtures: BTreeMap<FixtureId, PathBuf> = BTreeMap::new();
    let mut metas: BTreeMap<FixtureId, PathBuf> = BTreeMap::new();
    let mut origins: BTreeMap<FixtureId, PathBuf> = BTreeMap::new();
    for (name, path, is_dir) in list {
        if is_dir {
            if name != ORIGINS_DIR {
                errors.push(unexpected(&path));
                continue;
            }
            match entries(&path, errors) {
                Ok(inner) => {
                    for (name, path, is_dir) in inner {
                        match id_of(&name, ".json") {
                            Some(id) if !is_dir => {
                                origins.insert(id, path);
                            }
                            _ if !is_dir && is_temporary(&name, false) => {}
                            _ => errors.push(unexpected(&path)),
                        }
                    }
                }
                Err(e) => errors.push(e),
            }
        } else if let Some(id) = id_of(&name, ".meta.json") {
            metas.insert(id, path);
        } else if let Some(id) = id_of(&name, ".json") {
            fixtures.insert(id, path);
        } else if is_temporary(&name, true) {
            // A write in progress, or one a killed writer left: not part of what is pinned
            // (the next pin removes it once its writer is gone).
        } else {
            errors.push(unexpected(&path));
        }
    }

    // Metas first: they say which canonicalization their fixture and origin use.
    let mut parsed: BTreeMap<FixtureId, (PathBuf, Meta)> = BTreeMap::new();
    // Fixtures whose meta file exists but is broken (reported already).
    let mut metas_broken: Vec<FixtureId> = Vec::new();
    for (id, path) in metas {
        let meta = match read(&path).and_then(|text| meta_from_bytes(&path, &text)) {
            Ok(meta) => meta,
            Err(e) => {
                errors.push(e);
                metas_broken.push(id);
                continue;
            }
        };
        if meta.property_id != *property {
            errors.push(integrity(
                &path,
                format!(
                    "names property {} but lies in the folder of {property}",
                    meta.property_id
                ),
            ));
        }
        if meta.fixture_id != id {
            errors.push(integrity(
                &path,
                format!(
                    "names fixture {} but is the meta file of {id}",
                    meta.fixture_id
                ),
            ));
        }
        if let Some(form) = declared
            && meta.canonicalization != form
        {
            errors.push(integrity(
                &path,
                format!(
                    "records canonicalization {} but property {property} declares {}",
                    meta.canonicalization.as_str(),
                    form.as_str()
                ),
            ));
        }
        if !fixtures.contains_key(&id) {
            errors.push(integrity(
                &path,
                format!(
                    "its fixture {id}.json does not exist (a pin that was interrupted before its last step, or a deleted fixture); complete the pin with `xtask classify --property {property} --input {FIXTURES_DIR}/{property}/{ORIGINS_DIR}/{}.json`",
                    meta.origin_id
                ),
            ));
        }
        if !origins.contains_key(&meta.origin_id) {
            errors.push(integrity(
                &path,
                format!(
                    "its origin {ORIGINS_DIR}/{}.json does not exist",
                    meta.origin_id
                ),
            ));
        }
        parsed.insert(id, (path, meta));
    }

    // Origins no meta file names: the likely origin of a fixture whose meta is missing.
    let unclaimed: Vec<FixtureId> = origins
        .keys()
        .filter(|o| !parsed.values().any(|(_, m)| m.origin_id == **o))
        .copied()
        .collect();
    for (id, path) in &fixtures {
        let meta = parsed.get(id);
        let form = meta.map_or(declared.unwrap_or(Canonicalization::V1), |(_, m)| {
            m.canonicalization
        });
        let checked = read(path).and_then(|text| check_canonical_file(path, &text, form, *id));
        match (checked, meta) {
            (Err(e), _) => errors.push(e),
            (Ok(_), None) if !metas_broken.contains(id) => {
                errors.push(missing_meta(dir, property, *id, &unclaimed))
            }
            (Ok(c), Some((meta_file, meta))) if c.digest() != meta.fixture_digest => {
                errors.push(integrity(
                    meta_file,
                    format!(
                        "fixture_digest {} does not match the fixture's digest {}",
                        meta.fixture_digest,
                        c.digest()
                    ),
                ));
            }
            (Ok(_), _) => {}
        }
    }

    for (id, path) in &origins {
        let users: Vec<&(PathBuf, Meta)> = parsed
            .values()
            .filter(|(_, m)| m.origin_id == *id)
            .collect();
        let form = users
            .first()
            .map_or(declared.unwrap_or(Canonicalization::V1), |(_, m)| {
                m.canonicalization
            });
        match read(path).and_then(|text| check_canonical_file(path, &text, form, *id)) {
            Err(e) => errors.push(e),
            Ok(c) => {
                for (meta_file, meta) in users {
                    if meta.origin_digest != c.digest() {
                        errors.push(integrity(
                            meta_file,
                            format!(
                                "origin_digest {} does not match the origin's digest {}",
                                meta.origin_digest,
                                c.digest()
                            ),
                        ));
                    }
                }
            }
        }
    }
}

/// The finding of a fixture file without its meta file: it names the missing file and how to
/// complete the pin (classify the input it was shrunk from again; `pin` writes what is
/// missing and never rewrites the fixture).
fn missing_meta(
    dir: &Path,
    property: &PropertyId,
    id: FixtureId,
    unclaimed: &[FixtureId],
) -> Error {
    let input = match unclaimed {
        [origin] => format!("{FIXTURES_DIR}/{property}/{ORIGINS_DIR}/{origin}.json"),
        _ => "<the failing input>".to_owned(),
    };
    integrity(
        &dir.join(format!("{id}.meta.json")),
        format!(
            "missing: fixture {id}.json has no meta file (added by hand, or pinned before metas were written first); complete the pin with `xtask classify --property {property} --input {input}`, which writes the missing files and leaves the fixture as it is"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonicalize;

    fn sample(pinned_at: &str) -> (Meta, Canonical, Canonical) {
        let fixture = canonicalize(br#"{"items":[-1]}"#, Canonicalization::V1).unwrap();
        let origin = canonicalize(br#"{"items":[3,-1,7]}"#, Canonicalization::V1).unwrap();
        let meta = Meta {
            property_id: "cart.total".parse().unwrap(),
            fixture_id: fixture.fixture_id(),
            fixture_digest: fixture.digest(),
            origin_id: origin.fixture_id(),
            origin_digest: origin.digest(),
            canonicalization: Canonicalization::V1,
            seed: 1,
            pinned_at: pinned_at.to_owned(),
            patch_id: "p".to_owned(),
            oracle_calls: 3,
            shrink_path: Vec::new(),
        };
        (meta, fixture, origin)
    }

    /// Every file under `dir`, relative to it, sorted.
    fn files(dir: &Path) -> Vec<String> {
        let mut out = Vec::new();
        for (name, path, is_dir) in entries(dir, &mut Vec::new()).unwrap_or_default() {
            if is_dir {
                out.extend(files(&path).into_iter().map(|n| format!("{name}/{n}")));
            } else {
                out.push(name);
            }
        }
        out
    }

    #[test]
    fn every_crash_point_of_a_pin_leaves_a_state_the_next_pin_completes() {
        let (first, fixture, origin) = sample("2026-09-17T08:30:00Z");
        let (later, _, _) = sample("2026-09-18T08:30:00Z");
        let property = first.property_id.clone();
        let complete = {
            let dir = tempfile::tempdir().unwrap();
            pin(dir.path(), &first, &fixture, &origin).unwrap();
            files(&dir.path().join(FIXTURES_DIR))
        };
        let mut crash_states = std::collections::BTreeSet::new();
        for kill_at in 0.. {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path();
            let mut steps = 0;
            pin_until(root, &first, &fixture, &origin, &mut || {
                steps += 1;
                steps <= kill_at
            })
            .unwrap();
            let fixtures = root.join(FIXTURES_DIR);
            let left = files(&fixtures);
            if left == complete {
                // The pin ran to its end: every crash point has been tried.
                assert_eq!(kill_at, 9, "three steps for each of three files");
                break;
            }
            crash_states.insert(left.clone());
            // The fixture file is the commit point: once it exists, so do its meta and origin.
            let fixture_file = fixture_path(root, &property, first.fixture_id);
            if fixture_file.exists() {
                assert!(
                    meta_path(root, &property, first.fixture_id).exists(),
                    "{left:?}"
                );
                assert!(
                    origin_path(root, &property, first.origin_id).exists(),
                    "{left:?}"
                );
            }
            // No leftover is an unexpected file; without a fixture, at most its meta file is
            // reported, and the message says how to complete the pin.
            for error in verify(root) {
                let text = error.to_string();
                assert!(!text.contains("unexpected file"), "{left:?}: {text}");
                assert!(
                    text.contains("`xtask classify --property cart.total"),
                    "{left:?}: {text}"
                );
            }
            // The next pin (another run, a later time) completes it; the meta of the first is
            // kept when the first wrote it.
            pin(root, &later, &fixture, &origin).unwrap();
            assert_eq!(
                files(&fixtures),
                complete,
                "after a crash at step {kill_at}"
            );
            assert!(verify(root).is_empty(), "{:#?}", verify(root));
            let meta = read_meta(root, &property, first.fixture_id).unwrap();
            let meta_was_there =
                left.contains(&format!("{}/{}.meta.json", property, first.fixture_id));
            assert_eq!(
                meta,
                if meta_was_there {
                    first.clone()
                } else {
                    later.clone()
                }
            );
        }
        // Leftover temporary files, a linked meta without fixture, etc.: several states.
        assert!(crash_states.len() > 6, "{crash_states:#?}");
    }

    #[test]
    fn a_running_pin_keeps_its_temporary_file_and_the_first_meta_wins() {
        use std::sync::mpsc;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_owned();
        let (first, fixture, origin) = sample("2026-09-17T08:30:00Z");
        let (later, _, _) = sample("2026-09-18T08:30:00Z");
        let property = first.property_id.clone();
        let (paused_tx, paused_rx) = mpsc::channel();
        let (resume_tx, resume_rx) = mpsc::channel::<()>();
        let writer = {
            let (root, first, fixture, origin) =
                (root.clone(), first.clone(), fixture.clone(), origin.clone());
            std::thread::spawn(move || {
                let mut steps = 0;
                pin_until(&root, &first, &fixture, &origin, &mut || {
                    steps += 1;
                    // Pause with the meta file's temporary written, not yet linked.
                    if steps == 5 {
                        paused_tx.send(()).unwrap();
                        resume_rx.recv().unwrap();
                    }
                    true
                })
                .unwrap();
            })
        };
        paused_rx.recv().unwrap();
        let property_dir = property_dir(&root, &property);
        let temporary: Vec<String> = files(&property_dir)
            .into_iter()
            .filter(|n| is_temporary(n, true))
            .collect();
        assert_eq!(temporary.len(), 1, "{:?}", files(&property_dir));
        assert!(temporary[0].contains(".meta.json."), "{temporary:?}");
        // A write in progress is no finding.
        assert!(verify(&root).is_empty(), "{:#?}", verify(&root));
        // A second pin waits for the first; it must not take the first's temporary file.
        let second = {
            let (root, fixture, origin) = (root.clone(), fixture.clone(), origin.clone());
            std::thread::spawn(move || pin(&root, &later, &fixture, &origin).unwrap())
        };
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(property_dir.join(&temporary[0]).exists());
        assert!(!meta_path(&root, &property, first.fixture_id).exists());
        resume_tx.send(()).unwrap();
        writer.join().unwrap();
        second.join().unwrap();
        assert_eq!(
            read_meta(&root, &property, first.fixture_id).unwrap(),
            first
        );
        assert!(verify(&root).is_empty(), "{:#?}", verify(&root));
        assert!(files(&property_dir).iter().all(|n| !is_temporary(n, true)));
    }

    #[test]
    fn only_the_writers_own_names_count_as_temporary_files() {
        let id = "0123456789abcdef";
        for (name, meta, expected) in [
            (format!(".{id}.json.12-0.tmp"), false, true),
            (format!(".{id}.meta.json.12-30.tmp"), true, true),
            (format!(".{id}.meta.json.12-30.tmp"), false, false),
            (format!(".{id}.json.12.tmp"), true, false),
            (format!(".{id}.json.-1.tmp"), true, false),
            (format!(".{id}.json.1x-1.tmp"), true, false),
            (format!("{id}.json.1-1.tmp"), true, false),
            (format!(".{id}.txt.1-1.tmp"), true, false),
            (".0123.json.1-1.tmp".to_owned(), true, false),
            (format!(".{id}.json.1-1.temp"), true, false),
        ] {
            assert_eq!(is_temporary(&name, meta), expected, "{name} (meta: {meta})");
        }
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_intact_and_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.json");
        write_atomic(&path, b"old\n").unwrap();
        let err = write_atomic_with(&path, |file| {
            file.write_all(b"half of the new cont")?;
            Err(io::Error::other("disk full"))
        })
        .unwrap_err();
        assert!(matches!(err, Error::Io { .. }), "{err:?}");
        assert_eq!(fs::read(&path).unwrap(), b"old\n");
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("a.json")]);
        write_atomic(&path, b"new\n").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new\n");
    }

    #[test]
    fn timestamps_must_exist_on_the_calendar() {
        for ok in [
            "2026-09-17T00:00:00Z",
            "2024-02-29T23:59:59Z",
            "2000-02-29T12:00:00Z",
        ] {
            assert_eq!(check_utc_timestamp(ok), Ok(()), "{ok}");
        }
        for bad in [
            "2026-09-17T00:00:00",
            "2026-09-17 00:00:00Z",
            "2026-09-17T00:00:00+00:00",
            "2026-9-17T00:00:00Z",
            "2023-02-29T00:00:00Z",
            "1900-02-29T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-04-31T00:00:00Z",
            "2026-00-10T00:00:00Z",
            "2026-01-00T00:00:00Z",
            "2026-01-01T24:00:00Z",
            "2026-01-01T00:60:00Z",
            "2026-01-01T00:00:60Z",
            "２０２６-01-01T00:00:00Z",
        ] {
            assert!(check_utc_timestamp(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_timestamp_error_is_typed_and_says_which_rule_it_breaks() {
        fn is_error<E: std::error::Error + Send + Sync + 'static>(_: &E) {}
        let form = check_utc_timestamp("2026-09-17 00:00:00Z").unwrap_err();
        is_error(&form);
        assert_eq!(form, TimestampError::Form("2026-09-17 00:00:00Z".into()));
        assert_eq!(
            form.to_string(),
            "\"2026-09-17 00:00:00Z\" is not a UTC time of the form YYYY-MM-DDTHH:MM:SSZ"
        );
        assert_eq!(
            check_utc_timestamp("2026-04-31T00:00:00Z"),
            Err(TimestampError::NotOnCalendar("2026-04-31T00:00:00Z".into()))
        );
    }
}
