//! The integrity of the fixture folders as the gate and `freeze` judge it (SPEC §3, §5).
//!
//! `freezegate-canon` checks every file on its own terms ([`fixture::verify_declared`]); what
//! it cannot check is a meta file's `shrink_path`, since the steps are the shrinker's and
//! canon depends on nothing of ours. Here each meta file's path is read
//! ([`freezegate_shrink::path_from_value`]) and re-applied to its origin
//! ([`freezegate_shrink::apply_path`]); it must arrive at the fixture byte for byte, in the
//! meta file's canonicalization. A path that does not parse, does not apply or arrives
//! elsewhere is an integrity error naming the meta file (and the step, where one is to
//! blame).
//!
//! [`DiskFixtures`] is the ledger's view of the same folders: each row's fixture file, and
//! what the fixture's meta file records (canonicalization, origin digest) for the ledger's
//! `meta` rule.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use freezegate_canon::fixture::{self, FIXTURES_DIR, Meta, ORIGINS_DIR};
use freezegate_canon::{Canonicalization, Error, FixtureId, PropertyId, Value};
use freezegate_ledger::{FixtureFile, FixtureLookup, Recorded};

/// Every integrity error of the fixture folders under `root`: canon's checks of each file
/// ([`fixture::verify_declared`], with the form each property declares), then, for every meta
/// file whose own files are sound, that its shrink path turns the origin into the fixture
/// ([`check_shrink_path`]). Empty: all is well.
///
/// Each problem is reported once: a meta file is checked for its shrink path only when canon
/// reported nothing about it, its fixture, its origin or their folders, and a `fixtures/`
/// folder or property folder that is a symbolic link (an error canon reports) is not read
/// through.
pub fn verify(
    root: &Path,
    declared: impl Fn(&PropertyId) -> Option<Canonicalization>,
) -> Vec<Error> {
    let mut errors = fixture::verify_declared(root, declared);
    let dir = root.join(FIXTURES_DIR);
    if !is_real_dir(&dir) {
        return errors;
    }
    let Ok(folders) = std::fs::read_dir(&dir) else {
        return errors;
    };
    let reported: BTreeSet<PathBuf> = errors.iter().filter_map(error_path).collect();
    let mut metas: Vec<(PropertyId, FixtureId)> = Vec::new();
    for folder in folders.flatten() {
        let Ok(property) = folder.file_name().to_string_lossy().parse::<PropertyId>() else {
            continue;
        };
        if !is_real_dir(&folder.path()) {
            continue;
        }
        let Ok(files) = std::fs::read_dir(folder.path()) else {
            continue;
        };
        for file in files.flatten() {
            let name = file.file_name().to_string_lossy().into_owned();
            let regular = std::fs::symlink_metadata(file.path()).is_ok_and(|m| m.is_file());
            if let Some(id) = name
                .strip_suffix(".meta.json")
                .and_then(|stem| stem.parse::<FixtureId>().ok())
                && regular
            {
                metas.push((property.clone(), id));
            }
        }
    }
    metas.sort();
    for (property, id) in metas {
        // A meta file that does not read is reported above already.
        let Ok(meta) = fixture::read_meta(root, &property, id) else {
            continue;
        };
        let property_dir = dir.join(property.as_str());
        let involved = [
            property_dir.clone(),
            property_dir.join(ORIGINS_DIR),
            fixture::meta_path(root, &property, id),
            fixture::fixture_path(root, &property, id),
            fixture::origin_path(root, &property, meta.origin_id),
        ];
        // Any error of these files is reported above already, and a shrink path is only
        // worth checking between a sound origin and a sound fixture.
        if involved.iter().any(|path| reported.contains(path)) {
            continue;
        }
        if let Err(e) = check_shrink_path(root, &meta) {
            errors.push(e);
        }
    }
    errors
}

/// Whether `path` is a directory and not a symbolic link to one.
fn is_real_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

/// The file an error of canon's names, if it names one.
fn error_path(error: &Error) -> Option<PathBuf> {
    match error {
        Error::File { path, .. }
        | Error::Io { path, .. }
        | Error::Integrity { path, .. }
        | Error::NotCanonical { path, .. } => Some(path.clone()),
        _ => None,
    }
}

/// Checks that the shrink path of `meta` (a meta file under `root`) re-applied to its origin
/// gives its fixture byte for byte (SPEC §5), and that the meta's digests are the files'. The fixture and origin are read and checked as
/// [`fixture::read_fixture`] and [`fixture::read_origin`] do, and their errors are returned as
/// they are; a path that breaks the rule is an [`Error::Integrity`] of the meta file.
pub fn check_shrink_path(root: &Path, meta: &Meta) -> Result<(), Error> {
    let property = &meta.property_id;
    let meta_file = fixture::meta_path(root, property, meta.fixture_id);
    let (fixture, _) = fixture::read_fixture(root, property, meta.fixture_id)?;
    let (origin, origin_value) =
        fixture::read_origin(root, property, meta.origin_id, meta.canonicalization)?;
    let broken = |problem: String| Error::Integrity {
        path: meta_file.clone(),
        problem,
    };
    // The files are read by id, the first 16 hex digits: the meta's whole digests must
    // match them too, as the gate's check of every folder says.
    for (what, recorded, found) in [
        ("fixture", meta.fixture_digest, fixture.digest()),
        ("origin", meta.origin_digest, origin.digest()),
    ] {
        if recorded != found {
            return Err(broken(format!(
                "{what}_digest {recorded} does not match the {what}'s digest {found}"
            )));
        }
    }
    let steps = freezegate_shrink::path_from_value(&Value::Array(meta.shrink_path.clone()))
        .map_err(|e| broken(format!("its shrink_path cannot be read: shrink_path {e}")))?;
    let arrived =
        freezegate_shrink::apply_path_checked(&origin_value, &steps, meta.canonicalization)
            .map_err(|e| {
                let id = origin.fixture_id();
                broken(match e {
                    freezegate_shrink::PathError::NotSmaller { .. } => format!(
                        "its shrink_path from origin {id} is not the shrinker's (SPEC §5: every step makes the value smaller): shrink_path {e}"
                    ),
                    _ => format!("its shrink_path does not apply to origin {id}: shrink_path {e}"),
                })
            })?;
    let arrived =
        freezegate_canon::canonicalize_value(&arrived, meta.canonicalization).map_err(|e| {
            broken(format!(
                "its shrink_path turns origin {} into a value with no canonical form: {e}",
                origin.fixture_id()
            ))
        })?;
    if arrived.bytes() != fixture.bytes() {
        return Err(broken(format!(
            "its shrink_path ({} steps) turns origin {} into {}, not into the fixture {} (SPEC §5: the path re-applied to the origin arrives at the fixture byte for byte)",
            steps.len(),
            origin.fixture_id(),
            arrived.fixture_id(),
            meta.fixture_id
        )));
    }
    Ok(())
}

/// The fixture files and meta files under a repository root, as the ledger's checks reach
/// them: [`FixtureLookup::fixture`] reads `fixtures/<property>/<id>.json`;
/// [`FixtureLookup::recorded`] reads its meta file (`None` when it is missing or broken:
/// that is an integrity error of the folder, reported by [`verify`]).
#[derive(Debug, Clone)]
pub struct DiskFixtures {
    root: PathBuf,
}

impl DiskFixtures {
    /// The fixtures under `root` (`.` for the current directory).
    pub fn new(root: impl Into<PathBuf>) -> DiskFixtures {
        DiskFixtures { root: root.into() }
    }

    /// The meta files of the fixtures that `rows` name which exist but cannot be read or
    /// break their schema, each once (relative to the root as `new` was given it), with why:
    /// for such a row the ledger's `meta` rule has nothing to compare with, so a caller that
    /// validates the ledger alone (`ledger check`) can say so. [`verify`] reports them as
    /// integrity errors.
    pub fn unreadable_metas<'r>(
        &self,
        rows: impl IntoIterator<Item = &'r freezegate_ledger::Row>,
    ) -> Vec<(PathBuf, String)> {
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        for row in rows {
            let path = fixture::meta_path(&self.root, &row.property_id, row.fixture_id);
            if !seen.insert(path.clone())
                || !fixture::fixture_path(&self.root, &row.property_id, row.fixture_id).exists()
            {
                continue;
            }
            if let Err(e) = fixture::read_meta(&self.root, &row.property_id, row.fixture_id) {
                out.push((path, freezegate_canon::ErrorChain(&e).to_string()));
            }
        }
        out
    }
}

impl FixtureLookup for DiskFixtures {
    fn fixture(&self, property: &PropertyId, id: FixtureId) -> FixtureFile {
        let path = fixture::fixture_path(&self.root, property, id);
        match std::fs::read(&path) {
            Ok(bytes) => FixtureFile::Found(bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => FixtureFile::Missing,
            Err(e) => FixtureFile::Unreadable(format!("{}: {e}", path.display())),
        }
    }

    fn recorded(&self, property: &PropertyId, id: FixtureId) -> Option<Recorded> {
        let meta = fixture::read_meta(&self.root, property, id).ok()?;
        Some(Recorded {
            canonicalization: meta.canonicalization,
            origin_digest: meta.origin_digest,
        })
    }
}
