//! What the base revision says: the protected globs, the property paths, `min_cases`, the
//! properties' commands and the allowed signers, all read from REV's tree (never from the
//! working tree or HEAD).

use std::collections::BTreeMap;
use std::path::Path;

use globset::GlobSet;
use serde::Deserialize;

use super::PatchError;
use super::diff::top_path;
use super::git::Git;

use crate::config::{BadGlob, GITATTRIBUTES, check_globs, glob_set, rooted, syntax_error};
pub use crate::config::{CONFIG_FILE, DEFAULT_PROTECTED};

/// Files under this glob are protected once they exist: adding one is free.
pub const EXISTING_FIXTURES: &str = "fixtures/**";

/// The allowed-signers file, read at the base revision.
pub const ALLOWED_SIGNERS: &str = "freeze/allowed_signers";

/// Default `min_cases` of the policy (SPEC §9).
pub const DEFAULT_MIN_CASES: u64 = crate::config::DEFAULT_MIN_CASES as u64;

/// The keys of `freezegate.toml` the patch checks need, as they stand at the base revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BasePolicy {
    /// `protected` globs (added to [`DEFAULT_PROTECTED`]).
    pub protected: Vec<String>,
    /// `property_paths` globs: the files checked for gaming moves.
    pub property_paths: Vec<String>,
    /// `min_cases`: a case count set below it is a finding.
    pub min_cases: u64,
    /// The properties' commands: the files they name are protected.
    pub properties: Vec<BaseProperty>,
}

/// The commands of one `[[property]]` at the base revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseProperty {
    /// Its `id`; `property[N]` (its place in the file, from 0) when that is not a string.
    pub id: String,
    /// Its `oracle` command, when that is a string.
    pub oracle: Option<String>,
    /// Its `generate` command, when that is a string.
    pub generate: Option<String>,
}

impl Default for BasePolicy {
    fn default() -> Self {
        BasePolicy {
            protected: Vec::new(),
            property_paths: Vec::new(),
            min_cases: DEFAULT_MIN_CASES,
            properties: Vec::new(),
        }
    }
}

#[derive(Deserialize, Default)]
struct ConfigFile {
    #[serde(default)]
    policy: PolicyKeys,
    /// Read as any value, so that the base revision's properties are no stricter than the
    /// policy keys: what is not an array of tables of strings is passed over.
    #[serde(default)]
    property: Option<toml::Value>,
}

/// The commands of the `property` value of a `freezegate.toml`, as far as they are strings.
fn base_properties(value: Option<&toml::Value>) -> Vec<BaseProperty> {
    let Some(toml::Value::Array(items)) = value else {
        return Vec::new();
    };
    items
        .iter()
        .enumerate()
        .filter_map(|(i, item)| {
            let table = item.as_table()?;
            let text = |key: &str| table.get(key).and_then(toml::Value::as_str);
            Some(BaseProperty {
                id: text("id").map_or_else(|| format!("property[{i}]"), str::to_string),
                oracle: text("oracle").map(str::to_string),
                generate: text("generate").map(str::to_string),
            })
        })
        .collect()
}

#[derive(Deserialize)]
struct PolicyKeys {
    #[serde(default)]
    protected: Vec<String>,
    #[serde(default)]
    property_paths: Vec<String>,
    #[serde(default = "default_min_cases")]
    min_cases: u64,
}

impl Default for PolicyKeys {
    fn default() -> Self {
        PolicyKeys {
            protected: Vec::new(),
            property_paths: Vec::new(),
            min_cases: DEFAULT_MIN_CASES,
        }
    }
}

fn default_min_cases() -> u64 {
    DEFAULT_MIN_CASES
}

impl BasePolicy {
    /// Parses the `[policy]` keys and the properties' `id`, `oracle` and `generate` of a
    /// `freezegate.toml` text; other keys are left to the gate's own configuration reader, and a
    /// property key that is not a string is passed over. `rev` names the revision in error
    /// messages.
    pub fn parse(text: &str, rev: &str) -> Result<BasePolicy, PatchError> {
        let broken = |source| PatchError::Config {
            rev: rev.to_string(),
            source,
        };
        let path = Path::new(CONFIG_FILE);
        let file: ConfigFile =
            toml::from_str(text).map_err(|e| broken(syntax_error(text, path, &e)))?;
        check_globs(
            text,
            path,
            &file.policy.protected,
            &file.policy.property_paths,
        )
        .map_err(broken)?;
        Ok(BasePolicy {
            protected: file.policy.protected,
            property_paths: file.policy.property_paths,
            min_cases: file.policy.min_cases,
            properties: base_properties(file.property.as_ref()),
        })
    }

    /// Reads the policy of `freezegate.toml` at `rev` (defaults when the file does not exist there).
    pub(crate) fn at(git: &Git, rev: &str, label: &str) -> Result<BasePolicy, PatchError> {
        match read_at(git, rev, CONFIG_FILE)? {
            None => Ok(BasePolicy::default()),
            Some(bytes) => BasePolicy::parse(&String::from_utf8_lossy(&bytes), label),
        }
    }
}

/// The bytes of a regular file at `rev`, or `None` when the path is absent or not a regular file.
/// `path` is relative to the project folder the handle was opened on.
pub(crate) fn read_at(git: &Git, rev: &str, path: &str) -> Result<Option<Vec<u8>>, PatchError> {
    let full = format!("{}{path}", git.prefix()?);
    match git.tree_entry(rev, &full)? {
        Some((mode, oid)) if mode == "100644" || mode == "100755" => Ok(Some(git.blob(&oid)?)),
        _ => Ok(None),
    }
}

/// Why a path is protected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Protection {
    /// Every change counts; the glob that matched.
    Always(String),
    /// Only changes to an existing file count (fixtures).
    Existing(String),
    /// A file a property's command names at the base revision; why (`the oracle of property
    /// tax.total at main`). Every change counts.
    Command(String),
}

/// Glob sets compiled from the base policy.
#[derive(Debug)]
pub(crate) struct PathRules {
    always: Vec<String>,
    always_set: GlobSet,
    /// Where each `always` glob can match below a directory ([`link_prefix`]).
    always_prefixes: Vec<Option<(String, bool)>>,
    fixtures: GlobSet,
    property: GlobSet,
    /// The globs of [`DEFAULT_PROTECTED`] for what steers CI, the build and the checkout (all
    /// but `freezegate.toml` and `freeze/**`, which are the project's own), matched against
    /// paths from the top of the work tree too: for a project in a folder, the CI files
    /// (`.github/workflows`, `.cargo`, ...) and a `.gitattributes` above the folder sit there.
    top_set: GlobSet,
    /// Those globs.
    top: Vec<String>,
    /// Their literal prefixes ([`link_prefix`]).
    top_prefixes: Vec<Option<(String, bool)>>,
    /// Where the project lies in the work tree (`""` or `svc/`); paths given to the rules are
    /// relative to it.
    prefix: String,
    /// The files the properties' commands name at the base revision (paths relative to the
    /// project folder), each with why ([`super::scripts::protected_scripts`]).
    commands: BTreeMap<String, String>,
    /// `min_cases` at the base revision.
    pub min_cases: u64,
    /// Whether `property_paths` names any glob.
    pub has_property_paths: bool,
}

/// Where a glob can match below a directory: `None` for one that matches top-level entries
/// only (`freezegate.toml`, `*.toml`); else the components of its directory part before the
/// first wildcard, joined (`src/oracle` for `src/oracle/*.rs`, empty for `**/x`), and whether
/// the glob holds a `**`.
fn literal_prefix(text: &str) -> Option<(String, bool)> {
    let rooted = rooted(text);
    let (dir, _) = rooted.rsplit_once('/')?;
    let literal: Vec<&str> = dir
        .split('/')
        .take_while(|c| !c.contains(['*', '?', '[', '{', '\\']))
        .collect();
    Some((literal.join("/"), rooted.contains("**")))
}

/// [`literal_prefix`] for the link rule of [`PathRules::link_protection`]: `None` for
/// [`GITATTRIBUTES`], since git reads a `.gitattributes` only where the tree holds it, never
/// through a symbolic link's or a submodule's folder (the link itself at a `.gitattributes`
/// path is matched by the glob as any path is).
fn link_prefix(glob: &str) -> Option<(String, bool)> {
    if glob == GITATTRIBUTES {
        return None;
    }
    literal_prefix(glob)
}

impl PathRules {
    /// Rules for paths relative to the top of the work tree.
    #[cfg(test)]
    pub(crate) fn new(policy: &BasePolicy, rev: &str) -> Result<PathRules, PatchError> {
        PathRules::in_folder(policy, rev, "")
    }

    /// Rules for paths relative to the project folder `prefix` of the work tree.
    pub(crate) fn in_folder(
        policy: &BasePolicy,
        rev: &str,
        prefix: &str,
    ) -> Result<PathRules, PatchError> {
        let always: Vec<String> = DEFAULT_PROTECTED
            .iter()
            .map(|s| (*s).to_string())
            .chain(policy.protected.iter().cloned())
            .collect();
        let build = |globs: &[String], key: &'static str| -> Result<GlobSet, PatchError> {
            glob_set(globs).map_err(|BadGlob { index, source }| PatchError::Glob {
                rev: rev.to_string(),
                key,
                glob: match index.and_then(|i| globs.get(i)) {
                    Some(glob) => glob.clone(),
                    None => globs.join(", "),
                },
                source,
            })
        };
        let top: Vec<String> = DEFAULT_PROTECTED
            .iter()
            .filter(|g| !PROJECT_DEFAULTS.contains(g))
            .map(|s| (*s).to_string())
            .collect();
        Ok(PathRules {
            top_set: build(&top, "protected")?,
            top_prefixes: top.iter().map(|g| link_prefix(g)).collect(),
            top,
            prefix: prefix.to_string(),
            always_set: build(&always, "protected")?,
            always_prefixes: always.iter().map(|g| link_prefix(g)).collect(),
            always,
            fixtures: build(&[EXISTING_FIXTURES.to_string()], "protected")?,
            property: build(&policy.property_paths, "property_paths")?,
            commands: BTreeMap::new(),
            min_cases: policy.min_cases,
            has_property_paths: !policy.property_paths.is_empty(),
        })
    }

    /// These rules, with the files the properties' commands name protected too (paths
    /// relative to the project folder, each with why).
    pub(crate) fn with_commands(mut self, commands: BTreeMap<String, String>) -> PathRules {
        self.commands = commands;
        self
    }

    /// Why changing `path` needs a signature; `existed` says whether the path existed before the
    /// change (a modification, deletion or the old side of a rename).
    pub(crate) fn protection(&self, path: &str, existed: bool) -> Option<Protection> {
        if let Some(i) = self.always_set.matches(path).into_iter().min() {
            return Some(Protection::Always(self.always[i].clone()));
        }
        if !self.prefix.is_empty()
            && let Some(i) = self
                .top_set
                .matches(top_path(&self.prefix, path))
                .into_iter()
                .min()
        {
            return Some(Protection::Always(self.top[i].clone()));
        }
        if let Some(why) = self.commands.get(path) {
            return Some(Protection::Command(why.clone()));
        }
        if existed && self.fixtures.is_match(path) {
            return Some(Protection::Existing(EXISTING_FIXTURES.to_string()));
        }
        None
    }

    /// Why changing a symbolic link or submodule at `path` needs a signature: such an entry
    /// stands for a whole directory, so it is protected when a protected glob could match a
    /// path inside it — `.cargo` as a link to a folder holding `config.toml` changes
    /// `.cargo/config.toml` as surely as writing that file does. So: when the glob's literal
    /// prefix lies at or under `path`, when `path` lies under the prefix of a glob with `**`,
    /// or when the glob starts with a wildcard.
    pub(crate) fn link_protection(&self, path: &str) -> Option<Protection> {
        link_protection_among(path, &self.always, &self.always_prefixes).or_else(|| {
            // What steers CI, for a link at the top of the work tree.
            (!self.prefix.is_empty()).then_some(())?;
            let top = top_path(&self.prefix, path);
            link_protection_among(&top, &self.top, &self.top_prefixes)
        })
    }

    /// Whether `path` is matched by a glob of `policy.protected` or of the defaults (not only
    /// protected as a file a command names).
    pub(crate) fn is_listed_protected(&self, path: &str) -> bool {
        matches!(self.protection(path, true), Some(Protection::Always(_)))
    }

    /// Whether `path` holds property code (matches `property_paths`).
    pub(crate) fn is_property_path(&self, path: &str) -> bool {
        self.property.is_match(path)
    }
}

/// The defaults that are the project's own files, protected in its folder only.
const PROJECT_DEFAULTS: &[&str] = &[CONFIG_FILE, "freeze/**"];

/// [`PathRules::link_protection`] over `globs` with their literal prefixes.
fn link_protection_among(
    path: &str,
    globs: &[String],
    prefixes: &[Option<(String, bool)>],
) -> Option<Protection> {
    let inside = |prefix: &str| prefix == path || prefix.starts_with(&format!("{path}/"));
    let under = |prefix: &str| path.starts_with(&format!("{prefix}/"));
    prefixes
        .iter()
        .position(|p| {
            p.as_ref().is_some_and(|(prefix, deep)| {
                prefix.is_empty() || inside(prefix) || (*deep && under(prefix))
            })
        })
        .map(|i| Protection::Always(globs[i].clone()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use freezegate_canon::Position;

    fn rules(protected: &[&str]) -> PathRules {
        let policy = BasePolicy {
            protected: protected.iter().map(|s| s.to_string()).collect(),
            property_paths: vec!["tests/**/*.rs".into(), "py/test_*.py".into()],
            min_cases: 50,
            properties: Vec::new(),
        };
        PathRules::new(&policy, "base").unwrap()
    }

    #[test]
    fn defaults_are_protected_whatever_the_policy_says() {
        let r = rules(&[]);
        for path in [
            "freezegate.toml",
            "freeze/ledger.json",
            "freeze/allowed_signers",
            ".ci/run",
            ".github/workflows/ci.yml",
            ".cargo/config.toml",
            "rust-toolchain.toml",
            "xtask/src/main.rs",
            ".gitattributes",
            "tests/properties/.gitattributes",
            "a/b/c/.gitattributes",
        ] {
            assert!(r.protection(path, false).is_some(), "{path}");
        }
        for path in [
            "src/freezegate.toml",
            "freeze",
            "freezer/x",
            "crates/xtask/a.rs",
            "README.md",
            "gitattributes",
            "docs/.gitattributes.md",
            ".gitattributes/x",
        ] {
            assert_eq!(r.protection(path, true), None, "{path}");
        }
    }

    #[test]
    fn a_link_protects_what_a_glob_could_match_inside_it() {
        let r = rules(&["src/oracle/*.rs", "deploy/**/*.yml"]);
        for path in [
            ".cargo",
            ".github",
            ".github/workflows",
            "xtask",
            "freeze",
            ".ci",
            "src",
            "src/oracle",
            "deploy/prod",
        ] {
            assert!(r.link_protection(path).is_some(), "{path}");
        }
        for path in [
            "docs",
            "src/lib",
            "src/oracle/x",
            "xtask2",
            "github",
            "tests/data",
        ] {
            assert_eq!(r.link_protection(path), None, "{path}");
        }
        let anywhere = rules(&["**/secrets.txt"]);
        assert!(anywhere.link_protection("docs").is_some());
    }

    /// Every `.gitattributes` is protected, in the project's folder, below it and above it up
    /// to the top of the work tree; a link elsewhere is not, since git reads no attributes
    /// through a link, while a link at a `.gitattributes` path is a change of that path.
    #[test]
    fn every_gitattributes_is_protected_and_links_elsewhere_are_not() {
        let policy = BasePolicy::default();
        let svc = PathRules::in_folder(&policy, "base", "svc/app/").unwrap();
        for path in [
            ".gitattributes",
            "tests/.gitattributes",
            "../.gitattributes",
            "../../.gitattributes",
        ] {
            assert_eq!(
                svc.protection(path, true),
                Some(Protection::Always(GITATTRIBUTES.into())),
                "{path}"
            );
        }
        for r in [rules(&[]), svc] {
            assert_eq!(r.link_protection("docs"), None);
            assert_eq!(r.link_protection("tests/properties"), None);
            assert!(r.protection(".gitattributes", false).is_some());
        }
    }

    #[test]
    fn fixtures_are_protected_only_once_they_exist() {
        let r = rules(&[]);
        let p = "fixtures/tax.total/0123456789abcdef.json";
        assert_eq!(r.protection(p, false), None);
        assert_eq!(
            r.protection(p, true),
            Some(Protection::Existing(EXISTING_FIXTURES.into()))
        );
    }

    #[test]
    fn policy_globs_add_to_the_defaults() {
        let r = rules(&["src/oracle/*.rs"]);
        assert_eq!(
            r.protection("src/oracle/tax.rs", false),
            Some(Protection::Always("src/oracle/*.rs".into()))
        );
        assert_eq!(r.protection("src/oracle/deep/tax.rs", false), None);
        assert!(r.is_property_path("tests/a/b.rs"));
        assert!(r.is_property_path("py/test_x.py"));
        let rooted = PathRules::new(
            &BasePolicy {
                protected: vec!["./ops/**".into(), "/deploy.sh".into()],
                ..BasePolicy::default()
            },
            "base",
        )
        .unwrap();
        assert!(rooted.protection("ops/a.yml", false).is_some());
        assert!(rooted.protection("deploy.sh", false).is_some());
        assert!(!r.is_property_path("src/lib.rs"));
    }

    #[test]
    fn policy_keys_parse_and_errors_name_line_and_column() {
        let p = BasePolicy::parse(
            "[policy]\nseed = 1\nprotected = [\"a/**\"]\nproperty_paths = [\"t/**\"]\nmin_cases = 80\n[[property]]\nid = \"x\"\n",
            "base",
        )
        .unwrap();
        assert_eq!(p.protected, vec!["a/**".to_string()]);
        assert_eq!(p.min_cases, 80);
        let err = BasePolicy::parse("[policy]\nmin_cases = \"many\"\n", "base").unwrap_err();
        // The revision at the top, the file's own error (line and column) as its source.
        let text = format!(
            "{err}: {}",
            std::error::Error::source(&err).map_or(String::new(), ToString::to_string)
        );
        assert!(
            text.starts_with("the base revision base's freezegate.toml is broken: freezegate.toml: line 2, column 13: policy.min_cases: invalid type"),
            "{text}"
        );
        assert_eq!(
            BasePolicy::parse("", "base").unwrap(),
            BasePolicy::default()
        );
    }

    /// The properties' commands are read where they are strings; any other shape is passed
    /// over, as it was before they were read at all.
    #[test]
    fn property_commands_are_read_and_other_shapes_passed_over() {
        let p = BasePolicy::parse(
            "[[property]]\nid = \"a.b\"\noracle = \"python3 o.py\"\ngenerate = \"python3 g.py\"\ncases = 9\n\n[[property]]\nid = 5\noracle = [\"x\"]\nunknown = 1\n",
            "base",
        )
        .unwrap();
        assert_eq!(
            p.properties,
            vec![
                BaseProperty {
                    id: "a.b".into(),
                    oracle: Some("python3 o.py".into()),
                    generate: Some("python3 g.py".into()),
                },
                BaseProperty {
                    id: "property[1]".into(),
                    oracle: None,
                    generate: None,
                },
            ]
        );
        for text in [
            "property = 3\n",
            "property = [1, \"x\"]\n",
            "[property]\nid = \"a\"\n",
        ] {
            assert_eq!(
                BasePolicy::parse(text, "base").unwrap().properties,
                Vec::new(),
                "{text}"
            );
        }
    }

    #[test]
    fn a_bad_glob_at_the_base_is_named_with_its_place() {
        let err = BasePolicy::parse(
            "[policy]\nseed = 1\nproperty_paths = [\"tests/[oracles/**\"]\n",
            "HEAD~1",
        )
        .unwrap_err();
        let PatchError::Config {
            rev,
            source: crate::config::ConfigError::Rule { path, at, key, .. },
        } = &err
        else {
            panic!("{err:?}");
        };
        assert_eq!(rev, "HEAD~1");
        assert_eq!(path, Path::new(CONFIG_FILE));
        assert_eq!(
            *at,
            Some(Position {
                line: 3,
                column: 19
            })
        );
        assert_eq!(key, "policy.property_paths[0]");
        assert_eq!(
            err.to_string(),
            "the base revision HEAD~1's freezegate.toml is broken"
        );
        let place = crate::render::error_place(&err).unwrap();
        assert_eq!(
            (place.file.as_str(), place.line, place.column),
            (CONFIG_FILE, Some(3), Some(19))
        );
        // A syntax error there is placed the same way.
        let err = BasePolicy::parse("[policy]\nmin_cases = \"many\"\n", "main").unwrap_err();
        let place = crate::render::error_place(&err).unwrap();
        assert_eq!((place.line, place.column), (Some(2), Some(13)));
    }

    #[test]
    fn a_bad_glob_is_a_configuration_error() {
        let policy = BasePolicy {
            protected: vec!["src/[".into()],
            ..BasePolicy::default()
        };
        let err = PathRules::new(&policy, "base").unwrap_err();
        assert!(err.to_string().contains("src/["), "{err}");
    }
}

#[cfg(test)]
mod invariants {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The configuration accepts exactly the globs the patch checks can compile: none
        /// that it lets through fails the patch checks later.
        #[test]
        fn the_config_accepts_the_globs_the_patch_checks_compile(
            glob in "[a-z/*?\\[\\]{},!.\\\\-]{0,12}",
            protected in any::<bool>(),
        ) {
            let key = if protected { "protected" } else { "property_paths" };
            let text = format!("[policy]\n{key} = ['{glob}']\n");
            let parsed = crate::config::Config::parse(&text, Path::new(CONFIG_FILE));
            let base = BasePolicy::parse(&text, "base");
            let policy = BasePolicy {
                protected: if protected { vec![glob.clone()] } else { Vec::new() },
                property_paths: if protected { Vec::new() } else { vec![glob.clone()] },
                ..BasePolicy::default()
            };
            let compiles = PathRules::new(&policy, "base").is_ok();
            prop_assert_eq!(parsed.is_ok(), compiles, "{:?}", parsed.err());
            prop_assert_eq!(base.is_ok(), compiles);
        }
    }

    fn segment() -> impl Strategy<Value = String> {
        "[a-z0-9._-]{1,8}"
    }

    proptest! {
        #[test]
        fn everything_under_freeze_is_protected_and_new_fixtures_are_free(
            parts in proptest::collection::vec(segment(), 1..4),
            existed in any::<bool>(),
        ) {
            let rules = PathRules::new(&BasePolicy::default(), "base").unwrap();
            let tail = parts.join("/");
            let freeze = format!("freeze/{tail}");
            prop_assert!(rules.protection(&freeze, existed).is_some());
            let fixture = format!("fixtures/{tail}");
            prop_assert_eq!(rules.protection(&fixture, existed).is_some(), existed);
            let elsewhere = format!("src/{tail}");
            prop_assert_eq!(rules.protection(&elsewhere, existed), None);
        }
    }
}
