//! `freezegate.toml`: the properties and the policy (SPEC §9), and the overrides of one run.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

use freezegate_canon::{Canonicalization, Position, PropertyId};
use freezegate_replay::MAX_REPLAYS;
use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use serde::Deserialize;

pub use freezegate_ledger::EnvClass;

/// The configuration file's name at the repository root.
pub const CONFIG_FILE: &str = "freezegate.toml";

/// The repository root for a command started in `start`: where oracle commands run (SPEC
/// §4) and where `freezegate.toml`, `fixtures/` and `freeze/` are. It is the nearest
/// directory at or above `start` that holds `freezegate.toml`; else the top of the git work
/// tree around it (a `.git` directory or file); else `start` itself. Only the file system
/// is asked, no git process.
pub fn repository_root(start: &Path) -> PathBuf {
    let holding = |name: &str| {
        start
            .ancestors()
            .find(|dir| dir.join(name).exists())
            .map(Path::to_path_buf)
    };
    holding(CONFIG_FILE)
        .or_else(|| holding(".git"))
        .unwrap_or_else(|| start.to_path_buf())
}

/// The glob of every `.gitattributes` file, in any folder: its attributes
/// (`working-tree-encoding`, `eol`, `text`, `ident`, `filter`) change the file git checks out
/// and runs away from the blob the patch checks read.
pub const GITATTRIBUTES: &str = "**/.gitattributes";

/// Paths protected whatever the file says, as globs: those of SPEC §9, and
/// [`GITATTRIBUTES`].
pub const DEFAULT_PROTECTED: &[&str] = &[
    "freezegate.toml",
    "freeze/**",
    ".ci/**",
    ".github/workflows/**",
    ".cargo/**",
    "rust-toolchain.toml",
    "xtask/**",
    GITATTRIBUTES,
];

/// Default policy seed (SPEC §8).
pub const DEFAULT_SEED: u64 = 20_260_917;
/// Default replay count.
pub const DEFAULT_REPLAYS: usize = 7;
/// Default per-run deadline in milliseconds.
pub const DEFAULT_TIMEOUT_MS: u64 = 10_000;
/// Default freeze lifetime limit in days.
pub const DEFAULT_MAX_FREEZE_DAYS: u32 = 14;
/// Default minimum campaign size.
pub const DEFAULT_MIN_CASES: u32 = 50;

/// An error in `freezegate.toml`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// TOML syntax or schema error (unknown key, wrong type, missing key), or a file that is
    /// not UTF-8.
    #[error("{}: line {line}, column {column}: {message}", path.display())]
    Syntax {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong, naming the key.
        message: String,
    },
    /// A rule of SPEC §9 is broken.
    #[error("{}: {}{key}: {message}", path.display(), place(at))]
    Rule {
        /// The file.
        path: PathBuf,
        /// Where the key's value is in the file (its first character).
        at: Option<Position>,
        /// The key, e.g. `property[2].replays` or `policy.freeze_env_classes[1]`.
        key: String,
        /// What is wrong.
        message: String,
    },
}

/// The `[policy]` table.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// Seed given to generators and to every replay.
    #[serde(default = "default_seed", deserialize_with = "seed_value")]
    pub seed: u64,
    /// Replay count N.
    #[serde(default = "default_replays")]
    pub replays: usize,
    /// Per-run deadline in milliseconds.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
    /// Parallel runs; `None` means the number of cores.
    #[serde(default)]
    pub jobs: Option<usize>,
    /// Env classes allowed to freeze.
    #[serde(default = "default_freeze_env_classes")]
    pub freeze_env_classes: Vec<String>,
    /// Longest freeze, in days.
    #[serde(default = "default_max_freeze_days")]
    pub max_freeze_days: u32,
    /// Smallest allowed campaign size.
    #[serde(default = "default_min_cases")]
    pub min_cases: u32,
    /// Extra protected globs (the defaults always apply).
    #[serde(default)]
    pub protected: Vec<String>,
    /// Globs of the files that hold property code (checked for gaming moves).
    #[serde(default)]
    pub property_paths: Vec<String>,
}

fn default_seed() -> u64 {
    DEFAULT_SEED
}

/// A seed: an integer from 0 to 2^64 - 1, with a message that says so for any other number
/// (TOML reads integers past `u64` as 128-bit ones, which serde's own message calls `i128`).
fn seed_value<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    struct Seed;
    impl serde::de::Visitor<'_> for Seed {
        type Value = u64;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a seed, an integer from 0 to 18446744073709551615 (2^64 - 1)")
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<u64, E> {
            Ok(v)
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<u64, E> {
            u64::try_from(v).map_err(|_| E::invalid_value(serde::de::Unexpected::Signed(v), &self))
        }
        fn visit_i128<E: serde::de::Error>(self, v: i128) -> Result<u64, E> {
            u64::try_from(v).map_err(|_| {
                E::invalid_value(
                    serde::de::Unexpected::Other(&format!("integer `{v}`")),
                    &self,
                )
            })
        }
        fn visit_u128<E: serde::de::Error>(self, v: u128) -> Result<u64, E> {
            u64::try_from(v).map_err(|_| {
                E::invalid_value(
                    serde::de::Unexpected::Other(&format!("integer `{v}`")),
                    &self,
                )
            })
        }
    }
    d.deserialize_u64(Seed)
}
fn default_replays() -> usize {
    DEFAULT_REPLAYS
}
fn default_timeout_ms() -> u64 {
    DEFAULT_TIMEOUT_MS
}
fn default_freeze_env_classes() -> Vec<String> {
    vec!["remote".to_owned()]
}
fn default_max_freeze_days() -> u32 {
    DEFAULT_MAX_FREEZE_DAYS
}
fn default_min_cases() -> u32 {
    DEFAULT_MIN_CASES
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            seed: DEFAULT_SEED,
            replays: DEFAULT_REPLAYS,
            timeout_ms: DEFAULT_TIMEOUT_MS,
            jobs: None,
            freeze_env_classes: default_freeze_env_classes(),
            max_freeze_days: DEFAULT_MAX_FREEZE_DAYS,
            min_cases: DEFAULT_MIN_CASES,
            protected: Vec::new(),
            property_paths: Vec::new(),
        }
    }
}

impl Policy {
    /// Every protected glob: the defaults of SPEC §9, then the file's own.
    pub fn protected_globs(&self) -> Vec<String> {
        DEFAULT_PROTECTED
            .iter()
            .map(|s| (*s).to_owned())
            .chain(self.protected.iter().cloned())
            .collect()
    }
}

/// One `[[property]]`, as written.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PropertyConfig {
    /// The property id.
    pub id: String,
    /// Oracle command (`sh -c`, repository root); absent for a Rust property registered in code.
    #[serde(default)]
    pub oracle: Option<String>,
    /// Generator command for campaigns (prints one JSON input per line), with its place in
    /// the file.
    #[serde(default)]
    pub generate: Option<toml::Spanned<String>>,
    /// Campaign size; the policy's `min_cases` when absent.
    #[serde(default)]
    pub cases: Option<u32>,
    /// Per-run deadline; the policy's when absent.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Replay count; may raise the policy's, never lower it.
    #[serde(default)]
    pub replays: Option<usize>,
    /// The oracle also speaks the worker protocol (used for campaigns and shrinking).
    #[serde(default)]
    pub worker: bool,
    /// `freezegate-canon-v1` (default) or `freezegate-canon-v1-ordered`.
    #[serde(default)]
    pub canonicalization: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    policy: Policy,
    #[serde(default)]
    property: Vec<PropertyConfig>,
}

/// A property with every default resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Property {
    /// The property id.
    pub id: PropertyId,
    /// Where the property's table starts in the file (its `[[property]]` header, or the `{`
    /// of an inline table), for errors about the property as a whole.
    pub at: Option<Position>,
    /// Oracle command; `None` for a Rust property registered in code.
    pub oracle: Option<String>,
    /// Generator command, if any.
    pub generate: Option<String>,
    /// Where the generator command's value starts in the file, for findings about it.
    pub generate_at: Option<Position>,
    /// Campaign size.
    pub cases: u32,
    /// Per-run deadline in milliseconds.
    pub timeout_ms: u64,
    /// Replay count.
    pub replays: usize,
    /// The oracle speaks the worker protocol.
    pub worker: bool,
    /// Canonical form of the property's fixtures.
    pub canonicalization: Canonicalization,
}

/// `freezegate.toml`, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Where it was read from (for messages).
    pub path: PathBuf,
    /// The policy.
    pub policy: Policy,
    /// The properties, in file order.
    pub properties: Vec<Property>,
}

impl Config {
    /// Reads and validates `freezegate.toml` in `root`. Every error names the file relative
    /// to the root (`freezegate.toml: line 7, column 11: …`), as findings do: a file that
    /// cannot be read, one that is not UTF-8 (at its first byte that is not), and syntax and
    /// rule errors.
    pub fn load(root: &Path) -> Result<Config, ConfigError> {
        let path = root.join(CONFIG_FILE);
        let bytes = std::fs::read(&path).map_err(|source| ConfigError::Io {
            path: PathBuf::from(CONFIG_FILE),
            // A link to nothing says so: "No such file" alone reads as a missing file.
            source: match std::fs::read_link(&path) {
                Ok(target) if source.kind() == std::io::ErrorKind::NotFound => std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    format!(
                        "it is a symbolic link to {}, which does not exist",
                        target.display()
                    ),
                ),
                _ => source,
            },
        })?;
        let text = utf8(&bytes, Path::new(CONFIG_FILE))?;
        Config::parse(text, Path::new(CONFIG_FILE))
    }

    /// Parses and validates configuration text; `path` names it in messages.
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let raw: RawConfig = toml::from_str(text).map_err(|e| syntax_error(text, path, &e))?;
        let rule = |key: String, message: String| ConfigError::Rule {
            path: path.to_path_buf(),
            at: locate(text, &key),
            key,
            message,
        };
        let policy = raw.policy;
        if policy.replays == 0 {
            return Err(rule("policy.replays".into(), "must be at least 1".into()));
        }
        if policy.replays > MAX_REPLAYS {
            return Err(rule(
                "policy.replays".into(),
                format!(
                    "{} is over the most a replay plan allows, {MAX_REPLAYS}",
                    policy.replays
                ),
            ));
        }
        if policy.timeout_ms == 0 {
            return Err(rule(
                "policy.timeout_ms".into(),
                "must be at least 1".into(),
            ));
        }
        if policy.jobs == Some(0) {
            return Err(rule("policy.jobs".into(), "must be at least 1".into()));
        }
        if policy.max_freeze_days == 0 {
            return Err(rule(
                "policy.max_freeze_days".into(),
                "must be at least 1".into(),
            ));
        }
        for (i, class) in policy.freeze_env_classes.iter().enumerate() {
            if class != "local" && class != "remote" {
                return Err(rule(
                    format!("policy.freeze_env_classes[{i}]"),
                    format!("unknown env class {class:?}: expected \"local\" or \"remote\""),
                ));
            }
        }
        check_globs(text, path, &policy.protected, &policy.property_paths)?;
        let mut seen = BTreeSet::new();
        let mut properties = Vec::with_capacity(raw.property.len());
        let mut tables = property_places(text).into_iter();
        for (i, p) in raw.property.into_iter().enumerate() {
            let key = |field: &str| format!("property[{i}].{field}");
            let id: PropertyId =
                p.id.parse()
                    .map_err(|e: freezegate_canon::Error| rule(key("id"), e.to_string()))?;
            if !seen.insert(id.clone()) {
                return Err(rule(key("id"), format!("property {id} is listed twice")));
            }
            let generate = p.generate.as_ref().map(|g| g.get_ref().clone());
            for (field, cmd) in [("oracle", &p.oracle), ("generate", &generate)] {
                if cmd.as_deref().is_some_and(|c| c.trim().is_empty()) {
                    return Err(rule(key(field), "the command is empty".into()));
                }
                // `sh -c` gets the command as one argument, which cannot hold a NUL: such a
                // command would never start, each run an infra item.
                if cmd.as_deref().is_some_and(|c| c.contains('\0')) {
                    return Err(rule(
                        key(field),
                        "the command holds a NUL character (\\u0000), which no process argument can carry".into(),
                    ));
                }
            }
            let replays = p.replays.unwrap_or(policy.replays);
            if replays > MAX_REPLAYS {
                return Err(rule(
                    key("replays"),
                    format!("{replays} is over the most a replay plan allows, {MAX_REPLAYS}"),
                ));
            }
            if replays < policy.replays {
                return Err(rule(
                    key("replays"),
                    format!(
                        "{replays} is fewer than the policy's {}: a property may raise its replay count, never lower it",
                        policy.replays
                    ),
                ));
            }
            let cases = p.cases.unwrap_or(policy.min_cases);
            if cases < policy.min_cases {
                return Err(rule(
                    key("cases"),
                    format!(
                        "{cases} is below the policy's min_cases {}",
                        policy.min_cases
                    ),
                ));
            }
            let timeout_ms = p.timeout_ms.unwrap_or(policy.timeout_ms);
            if timeout_ms == 0 {
                return Err(rule(key("timeout_ms"), "must be at least 1".into()));
            }
            let canonicalization = match &p.canonicalization {
                None => Canonicalization::V1,
                Some(name) => name.parse().map_err(|e: freezegate_canon::Error| {
                    rule(key("canonicalization"), e.to_string())
                })?,
            };
            properties.push(Property {
                id,
                at: tables.next().flatten(),
                oracle: p.oracle,
                generate_at: p
                    .generate
                    .as_ref()
                    .map(|g| Position::at(text.as_bytes(), g.span().start)),
                generate,
                cases,
                timeout_ms,
                replays,
                worker: p.worker,
                canonicalization,
            });
        }
        Ok(Config {
            path: path.to_path_buf(),
            policy,
            properties,
        })
    }

    /// The property with this id.
    pub fn property(&self, id: &str) -> Option<&Property> {
        self.properties.iter().find(|p| p.id.as_str() == id)
    }

    /// Checks that every property has something to run: an `oracle` command, or a Rust
    /// property of its id that `registered` (the registry's `contains`) knows. A property
    /// with neither is a rule error at its table, found before any oracle runs.
    pub fn check_oracles(&self, registered: impl Fn(&str) -> bool) -> Result<(), ConfigError> {
        self.check_oracles_of(|_| true, registered)
    }

    /// [`Config::check_oracles`] for the property `id` alone: what a command that acts on one
    /// property (`classify`, `freeze`) needs, so that a Rust property another binary registers
    /// does not stop it acting on a property with an `oracle` command.
    pub fn check_oracle_of(
        &self,
        id: &str,
        registered: impl Fn(&str) -> bool,
    ) -> Result<(), ConfigError> {
        self.check_oracles_of(|p| p.id.as_str() == id, registered)
    }

    fn check_oracles_of(
        &self,
        which: impl Fn(&Property) -> bool,
        registered: impl Fn(&str) -> bool,
    ) -> Result<(), ConfigError> {
        let missing = self
            .properties
            .iter()
            .enumerate()
            .find(|(_, p)| which(p) && p.oracle.is_none() && !registered(p.id.as_str()));
        match missing {
            None => Ok(()),
            Some((i, p)) => Err(ConfigError::Rule {
                path: self.path.clone(),
                at: p.at,
                key: format!("property[{i}]"),
                message: format!(
                    "property {} has no `oracle` and no Rust property of that id is registered: give it an `oracle` command or register it as a Rust property",
                    p.id
                ),
            }),
        }
    }
}

/// Where each `property` table of `text`, a document that parses, starts, in file order.
fn property_places(text: &str) -> Vec<Option<Position>> {
    let Ok(document) = toml::de::DeTable::parse(text) else {
        return Vec::new();
    };
    let Some((_, value)) = document
        .get_ref()
        .iter()
        .find(|(k, _)| k.get_ref().as_ref() == "property")
    else {
        return Vec::new();
    };
    match value.get_ref() {
        toml::de::DeValue::Array(items) => items
            .iter()
            .map(|item| Some(Position::at(text.as_bytes(), item.span().start)))
            .collect(),
        _ => Vec::new(),
    }
}

/// `bytes` as text, or a syntax error at the first byte that is not UTF-8 (TOML is UTF-8);
/// its column counts the characters before it on its line.
fn utf8<'a>(bytes: &'a [u8], path: &Path) -> Result<&'a str, ConfigError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let at = e.valid_up_to();
        let Position { line, column } = Position::at(bytes, at);
        ConfigError::Syntax {
            path: path.to_path_buf(),
            line,
            column,
            message: match bytes.get(at) {
                Some(byte) => format!(
                    "the file is not UTF-8: byte 0x{byte:02x} here starts no character (TOML is UTF-8)"
                ),
                None => "the file is not UTF-8 (TOML is UTF-8)".to_owned(),
            },
        }
    })
}

/// The syntax or schema error `e` of TOML `text`, placed and naming the key to blame.
pub(crate) fn syntax_error(text: &str, path: &Path, e: &toml::de::Error) -> ConfigError {
    let Position { line, column } = e.span().map_or(Position { line: 1, column: 1 }, |span| {
        Position::at(text.as_bytes(), span.start)
    });
    let message = e.message().trim();
    ConfigError::Syntax {
        path: path.to_path_buf(),
        line,
        column,
        message: match e.span().and_then(|span| key_at(text, span.start, message)) {
            Some(Blame::Key(key)) => format!("{key}: {message}"),
            Some(Blame::Table(key)) => format!("{key}: the table [{key}] is defined twice"),
            None => message.to_owned(),
        },
    }
}

/// Compiles the policy's globs, `protected` and `property_paths`, as the patch checks use
/// them ([`glob_set`]): a glob that does not compile is a rule error at its place in `text`.
pub(crate) fn check_globs(
    text: &str,
    path: &Path,
    protected: &[String],
    property_paths: &[String],
) -> Result<(), ConfigError> {
    for (name, globs) in [("protected", protected), ("property_paths", property_paths)] {
        let Err(BadGlob { index, source }) = glob_set(globs) else {
            continue;
        };
        let (key, message) = match index.and_then(|i| Some((i, globs.get(i)?))) {
            Some((i, glob)) => (
                format!("policy.{name}[{i}]"),
                format!("bad glob {glob:?}: {}", source.kind()),
            ),
            None => (
                format!("policy.{name}"),
                format!("the globs do not compile together: {}", source.kind()),
            ),
        };
        return Err(ConfigError::Rule {
            path: path.to_path_buf(),
            at: locate(text, &key),
            key,
            message,
        });
    }
    Ok(())
}

/// A glob over repository-relative paths, as the policy's `protected` and `property_paths`
/// are read: `*` stays within a directory, `**` crosses them; a leading `./` or `/` is the
/// repository root.
pub(crate) fn path_glob(text: &str) -> Result<Glob, globset::Error> {
    GlobBuilder::new(rooted(text))
        .literal_separator(true)
        .build()
}

/// A glob without its leading `./` or `/`: relative to the repository root.
pub(crate) fn rooted(text: &str) -> &str {
    text.trim_start_matches("./").trim_start_matches('/')
}

/// Why a list of globs does not compile into a set.
#[derive(Debug)]
pub(crate) struct BadGlob {
    /// The glob to blame, by its index in the list; `None` when each compiles alone but the
    /// set does not.
    pub(crate) index: Option<usize>,
    /// The parser's error.
    pub(crate) source: globset::Error,
}

/// The set of `globs`, each read by [`path_glob`]: what the config checks when it is parsed
/// and the patch checks match paths with.
pub(crate) fn glob_set(globs: &[String]) -> Result<GlobSet, BadGlob> {
    let mut set = GlobSetBuilder::new();
    for (i, g) in globs.iter().enumerate() {
        set.add(path_glob(g).map_err(|source| BadGlob {
            index: Some(i),
            source,
        })?);
    }
    set.build().map_err(|source| BadGlob {
        index: None,
        source,
    })
}

/// `"line L, column C: "` for a place, nothing without one.
fn place(at: &Option<Position>) -> String {
    at.map(|at| format!("{at}: ")).unwrap_or_default()
}

/// Where the value of `key` (`policy.replays`, `property[2].id`,
/// `policy.freeze_env_classes[1]`) starts in `text`, a document that parses. Dotted keys,
/// inline tables and `[[property]]` headers all lead to the same value.
fn locate(text: &str, key: &str) -> Option<Position> {
    let document = toml::de::DeTable::parse(text).ok()?;
    let mut table = document.get_ref();
    let mut found = None;
    for part in key.split('.') {
        let (name, index) = match part.strip_suffix(']').and_then(|p| p.split_once('[')) {
            Some((name, index)) => (name, Some(index.parse::<usize>().ok()?)),
            None => (part, None),
        };
        if found.is_some() {
            // Only the last part may be a leaf.
            table = match found.take().map(toml::Spanned::get_ref) {
                Some(toml::de::DeValue::Table(t)) => t,
                _ => return None,
            };
        }
        let (_, value) = table.iter().find(|(k, _)| k.get_ref().as_ref() == name)?;
        let value = match (index, value.get_ref()) {
            (None, _) => value,
            (Some(i), toml::de::DeValue::Array(items)) => items.get(i)?,
            (Some(_), _) => return None,
        };
        found = Some(value);
    }
    found.map(|value| Position::at(text.as_bytes(), value.span().start))
}

/// What a TOML error is blamed on.
enum Blame {
    /// A key or value, by its path.
    Key(String),
    /// A `[table]` header that names a table defined above.
    Table(String),
}

/// The key path (`policy.replays`, `property[1].cases`, `policy.freeze_env_classes[1]`) of
/// the key or value at byte `at` of `text`, for an error that TOML reports there: a value of
/// the wrong type, an unknown key (its own path), a duplicated key or table. `None` where no
/// key is to blame (a syntax error inside a value, say).
fn key_at(text: &str, at: usize, message: &str) -> Option<Blame> {
    match toml::de::DeTable::parse(text) {
        Ok(document) => key_in(document.get_ref(), at, "").map(Blame::Key),
        // A duplicate stops the parse: name it from the lines (a table header, or a key
        // under the last header above it).
        Err(_) if message == "duplicate key" => duplicate_at(text, at),
        Err(_) => None,
    }
}

/// The path, below `prefix`, of the key or value of `table` that holds byte `at`.
fn key_in(table: &toml::de::DeTable<'_>, at: usize, prefix: &str) -> Option<String> {
    table.iter().find_map(|(key, value)| {
        let path = if prefix.is_empty() {
            key.get_ref().to_string()
        } else {
            format!("{prefix}.{}", key.get_ref())
        };
        if key.span().contains(&at) {
            return Some(path);
        }
        value_in(value, at, path)
    })
}

/// `path`, or the path of the element of `value` that holds byte `at`. A `[table]` or
/// `[[array]]` spans only its header, so tables are always searched.
fn value_in(
    value: &toml::Spanned<toml::de::DeValue<'_>>,
    at: usize,
    path: String,
) -> Option<String> {
    match value.get_ref() {
        toml::de::DeValue::Table(table) => {
            key_in(table, at, &path).or_else(|| value.span().contains(&at).then_some(path))
        }
        toml::de::DeValue::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, item)| value_in(item, at, format!("{path}[{i}]")))
            .or_else(|| value.span().contains(&at).then_some(path)),
        _ => value.span().contains(&at).then_some(path),
    }
}

/// The path of the duplicated key or table whose name starts at byte `at`: `[policy]` twice
/// gives the table `policy`, `seed` twice under `[policy]` gives `policy.seed`, `id` twice
/// in the second `[[property]]` gives `property[1].id`.
fn duplicate_at(text: &str, at: usize) -> Option<Blame> {
    let line_start = text.get(..at)?.rfind('\n').map_or(0, |i| i + 1);
    let line = text.get(line_start..)?.lines().next()?.trim();
    let header = |line: &str| -> Option<(String, bool)> {
        let array = line.strip_prefix("[[").and_then(|l| l.split_once("]]"));
        let table = line.strip_prefix('[').and_then(|l| l.split_once(']'));
        match (array, table) {
            (Some((name, _)), _) => Some((name.trim().to_owned(), true)),
            (None, Some((name, _))) => Some((name.trim().to_owned(), false)),
            _ => None,
        }
    };
    if let Some((name, _)) = header(line) {
        return Some(Blame::Table(name));
    }
    let key = line.split_once('=')?.0.trim();
    // The last header above, and for an array of tables which element it opens.
    let above = text.get(..line_start)?;
    let Some((name, array)) = above.lines().rev().find_map(|l| header(l.trim())) else {
        return Some(Blame::Key(key.to_owned()));
    };
    let table = if array {
        let index = above
            .lines()
            .filter_map(|l| header(l.trim()))
            .filter(|(n, a)| *a && *n == name)
            .count()
            .saturating_sub(1);
        format!("{name}[{index}]")
    } else {
        name
    };
    Some(Blame::Key(format!("{table}.{key}")))
}

/// Where an override of the file's policy came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// An environment variable (`PROP_SEED`, `REPLAYS`, `ENV_CLASS`, `RUNNER_ID`).
    Env,
    /// A command-line flag.
    Flag,
}

/// One setting of a run that differs from the signed file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Override {
    /// The setting, e.g. `seed` or `replays`.
    pub key: String,
    /// What the file (or the default) says.
    pub file: String,
    /// What the run uses.
    pub run: String,
    /// Where the run's value came from.
    pub source: Source,
    /// Whether it weakens the policy (other seed, fewer replays, longer deadline).
    pub weakens: bool,
}

impl fmt::Display for Override {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let from = match self.source {
            Source::Env => "environment",
            Source::Flag => "flag",
        };
        write!(
            f,
            "{} = {} (file: {}; {from}{})",
            self.key,
            self.run,
            self.file,
            if self.weakens {
                "; weakens the policy"
            } else {
                ""
            }
        )
    }
}

impl Source {
    /// The name of a setting as this source spells it: `env` for the environment, `flag`
    /// for the command line (`name(Source::Env, "REPLAYS", "--replays")`).
    fn name(self, env: &'static str, flag: &'static str) -> &'static str {
        match self {
            Source::Env => env,
            Source::Flag => flag,
        }
    }
}

/// Why the settings of a run cannot be resolved: a malformed environment value or flag (a
/// usage error). Each message names the variable or flag the value came from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SettingsError {
    /// `PROP_SEED` is not a non-negative integer.
    #[error("PROP_SEED {0:?} is not a non-negative integer")]
    Seed(String),
    /// `REPLAYS` is not a positive integer.
    #[error("REPLAYS {0:?} is not a positive integer")]
    Replays(String),
    /// `--replays 0`.
    #[error("--replays must be at least 1")]
    ZeroReplays,
    /// The replay count is over what a replay plan allows.
    #[error(
        "{} {replays} is over the most a replay plan allows, {MAX_REPLAYS}",
        .from.name("REPLAYS", "--replays")
    )]
    TooManyReplays {
        /// The count asked for.
        replays: usize,
        /// Where it came from.
        from: Source,
    },
    /// `--timeout-ms 0`.
    #[error("--timeout-ms must be at least 1")]
    ZeroTimeout,
    /// `--jobs 0`.
    #[error("--jobs must be at least 1")]
    ZeroJobs,
    /// The env class is neither `local` nor `remote`.
    #[error(
        "{} {value:?} is not an env class: expected \"local\" or \"remote\"",
        .from.name("ENV_CLASS", "--env-class")
    )]
    EnvClass {
        /// The value given.
        value: String,
        /// Where it came from.
        from: Source,
    },
    /// The runner id in force (`RUNNER_ID`, or `--runner-id` over it) is blank.
    #[error(
        "{} {value:?} is blank: it must name this runner",
        .from.name("RUNNER_ID", "--runner-id")
    )]
    BlankRunnerId {
        /// The value given.
        value: String,
        /// Where it came from.
        from: Source,
    },
    /// The env class is `remote` and nothing names the runner.
    #[error("RUNNER_ID or --runner-id is required when the env class is remote")]
    RunnerIdRequired,
    /// A field of [`Settings`], set after [`Settings::resolve`], holds what resolving never
    /// gives ([`Settings::check`]).
    #[error("the settings' {field} is {value}, which Settings::resolve never gives: {rule}")]
    Altered {
        /// The field (`replays`, `jobs`, `timeout_ms`, or a property's replay count).
        field: String,
        /// Its value.
        value: String,
        /// What it must be.
        rule: &'static str,
    },
}

/// Values a run may set over the file: from the environment and from flags (flags win).
/// Start from [`RunOverrides::from_env`] or `default()` and set fields (the struct may gain
/// fields, so it is not built by a struct expression outside this crate).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunOverrides {
    /// `PROP_SEED`.
    pub env_seed: Option<String>,
    /// `REPLAYS`.
    pub env_replays: Option<String>,
    /// `ENV_CLASS`.
    pub env_class: Option<String>,
    /// `RUNNER_ID`.
    pub env_runner_id: Option<String>,
    /// `--seed`.
    pub flag_seed: Option<u64>,
    /// `--replays`.
    pub flag_replays: Option<usize>,
    /// `--timeout-ms`.
    pub flag_timeout_ms: Option<u64>,
    /// `--jobs`.
    pub flag_jobs: Option<usize>,
    /// `--env-class`.
    pub flag_env_class: Option<String>,
    /// `--runner-id`.
    pub flag_runner_id: Option<String>,
}

impl RunOverrides {
    /// Reads `PROP_SEED`, `REPLAYS`, `ENV_CLASS` and `RUNNER_ID` from an environment lookup
    /// (the gate's caller passes `std::env::var`; tests pass a map).
    pub fn from_env(lookup: impl Fn(&str) -> Option<String>) -> RunOverrides {
        let get = |k: &str| lookup(k).filter(|v| !v.is_empty());
        RunOverrides {
            env_seed: get("PROP_SEED"),
            env_replays: get("REPLAYS"),
            env_class: get("ENV_CLASS"),
            env_runner_id: get("RUNNER_ID"),
            ..RunOverrides::default()
        }
    }
}

/// The effective settings of one run: the file's policy with the run's overrides applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// The configuration as read.
    pub config: Config,
    /// Seed in force.
    pub seed: u64,
    /// Policy replay count in force (properties may raise it).
    pub replays: usize,
    /// Flag override of every deadline, if any.
    pub timeout_ms: Option<u64>,
    /// Parallel runs.
    pub jobs: usize,
    /// This runner's env class.
    pub env_class: EnvClass,
    /// This runner's id.
    pub runner_id: String,
    /// Every setting that differs from the file, in a fixed order.
    pub overrides: Vec<Override>,
}

impl Settings {
    /// Applies `overrides` to `config`; `cores` is the default for `jobs`.
    ///
    /// Fails (as a usage error) on a malformed environment value or flag, or on `remote`
    /// without a runner id; the error names the variable or flag the value came from.
    pub fn resolve(
        config: Config,
        overrides: &RunOverrides,
        cores: usize,
    ) -> Result<Settings, SettingsError> {
        let policy = &config.policy;
        let mut list = Vec::new();
        let env_seed = overrides
            .env_seed
            .as_deref()
            .map(|s| {
                s.trim()
                    .parse::<u64>()
                    .map_err(|_| SettingsError::Seed(s.to_owned()))
            })
            .transpose()?;
        let env_replays = overrides
            .env_replays
            .as_deref()
            .map(|s| match s.trim().parse::<usize>() {
                Ok(n) if n > 0 => Ok(n),
                _ => Err(SettingsError::Replays(s.to_owned())),
            })
            .transpose()?;
        let (seed, seed_src) = pick(policy.seed, env_seed, overrides.flag_seed);
        if let Some(source) = seed_src {
            list.push(Override {
                key: "seed".into(),
                file: policy.seed.to_string(),
                run: seed.to_string(),
                source,
                weakens: seed != policy.seed,
            });
        }
        let (replays, rep_src) = pick(policy.replays, env_replays, overrides.flag_replays);
        if replays == 0 {
            return Err(SettingsError::ZeroReplays);
        }
        if replays > MAX_REPLAYS {
            return Err(SettingsError::TooManyReplays {
                replays,
                from: rep_src.unwrap_or(Source::Flag),
            });
        }
        if let Some(source) = rep_src {
            list.push(Override {
                key: "replays".into(),
                file: policy.replays.to_string(),
                run: replays.to_string(),
                source,
                weakens: replays < policy.replays,
            });
        }
        if let Some(t) = overrides.flag_timeout_ms {
            if t == 0 {
                return Err(SettingsError::ZeroTimeout);
            }
            // The flag replaces every property's own deadline too: it weakens the policy when
            // it is longer than the shortest deadline the file gives any property.
            let shortest = config
                .properties
                .iter()
                .filter(|p| p.timeout_ms < policy.timeout_ms)
                .min_by_key(|p| p.timeout_ms);
            let file = match shortest {
                Some(p) => format!("{}; property {}: {}", policy.timeout_ms, p.id, p.timeout_ms),
                None => policy.timeout_ms.to_string(),
            };
            let weakens = t > shortest.map_or(policy.timeout_ms, |p| p.timeout_ms);
            list.push(Override {
                key: "timeout_ms".into(),
                file,
                run: t.to_string(),
                source: Source::Flag,
                weakens,
            });
        }
        let jobs = match overrides.flag_jobs {
            Some(0) => return Err(SettingsError::ZeroJobs),
            Some(j) => {
                list.push(Override {
                    key: "jobs".into(),
                    file: policy
                        .jobs
                        .map_or_else(|| format!("cores, {}", cores.max(1)), |j| j.to_string()),
                    run: j.to_string(),
                    source: Source::Flag,
                    weakens: false,
                });
                j
            }
            None => policy.jobs.unwrap_or(cores.max(1)),
        };
        let (class, class_src) = pick(
            None,
            overrides.env_class.as_deref().map(Some),
            overrides.flag_env_class.as_deref().map(Some),
        );
        let env_class = match (class, class_src) {
            (Some(s), Some(from)) => s.parse().map_err(|_| SettingsError::EnvClass {
                value: s.to_owned(),
                from,
            })?,
            _ => EnvClass::Local,
        };
        if let Some(source) = class_src {
            list.push(Override {
                key: "env_class".into(),
                file: "default local".into(),
                run: env_class.as_str().to_owned(),
                source,
                weakens: false,
            });
        }
        let (id, id_src) = pick(
            None,
            overrides.env_runner_id.as_deref().map(Some),
            overrides.flag_runner_id.as_deref().map(Some),
        );
        // The id in force, from either source, must name the runner.
        if let (Some(id), Some(from)) = (id, id_src)
            && id.trim().is_empty()
        {
            return Err(SettingsError::BlankRunnerId {
                value: id.to_owned(),
                from,
            });
        }
        let runner_id = match (id, env_class) {
            (Some(id), _) => id.to_owned(),
            (None, EnvClass::Local) => "local".to_owned(),
            (None, EnvClass::Remote) => return Err(SettingsError::RunnerIdRequired),
        };
        if let Some(source) = id_src {
            list.push(Override {
                key: "runner_id".into(),
                file: "default local".into(),
                run: runner_id.clone(),
                source,
                weakens: false,
            });
        }
        Ok(Settings {
            seed,
            replays,
            timeout_ms: overrides.flag_timeout_ms,
            jobs,
            env_class,
            runner_id,
            overrides: list,
            config,
        })
    }

    /// The replay count for a property: the larger of its own and the run's.
    pub fn replays_for(&self, property: &Property) -> usize {
        if property.replays > self.config.policy.replays {
            property.replays.max(self.replays)
        } else {
            self.replays
        }
    }

    /// Checks what [`Settings::resolve`] guarantees and public fields let a caller change
    /// afterwards: at least 1 and at most [`MAX_REPLAYS`] replays for every property, at least
    /// one job, a deadline of at least 1 ms. The gate checks this before it runs anything, so
    /// that a regression is never judged on 0 replays.
    pub fn check(&self) -> Result<(), SettingsError> {
        let altered = |field: String, value: String, rule: &'static str| {
            Err(SettingsError::Altered { field, value, rule })
        };
        for property in &self.config.properties {
            let n = self.replays_for(property);
            if n == 0 || n > MAX_REPLAYS {
                return altered(
                    format!("replay count of property {}", property.id),
                    n.to_string(),
                    "from 1 to MAX_REPLAYS",
                );
            }
            if self.timeout_ms_for(property) == 0 {
                return altered(
                    format!("deadline of property {}", property.id),
                    "0 ms".to_owned(),
                    "at least 1 ms",
                );
            }
        }
        if self.replays == 0 || self.replays > MAX_REPLAYS {
            return altered(
                "replays".to_owned(),
                self.replays.to_string(),
                "from 1 to MAX_REPLAYS",
            );
        }
        if self.jobs == 0 {
            return altered("jobs".to_owned(), "0".to_owned(), "at least 1");
        }
        Ok(())
    }

    /// The deadline for a property: a flag override, else its own.
    pub fn timeout_ms_for(&self, property: &Property) -> u64 {
        self.timeout_ms.unwrap_or(property.timeout_ms)
    }

    /// Whether any override weakens the signed policy.
    pub fn weakening_overrides(&self) -> impl Iterator<Item = &Override> {
        self.overrides.iter().filter(|o| o.weakens)
    }
}

fn pick<T: Copy>(file: T, env: Option<T>, flag: Option<T>) -> (T, Option<Source>) {
    match (flag, env) {
        (Some(v), _) => (v, Some(Source::Flag)),
        (None, Some(v)) => (v, Some(Source::Env)),
        (None, None) => (file, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(text, Path::new("freezegate.toml"))
    }

    #[test]
    fn defaults_follow_the_spec() {
        let c = parse("[[property]]\nid = \"a.b\"\noracle = \"true\"\n").unwrap();
        assert_eq!(c.policy.seed, 20_260_917);
        assert_eq!(c.policy.replays, 7);
        assert_eq!(c.policy.timeout_ms, 10_000);
        assert_eq!(c.policy.freeze_env_classes, vec!["remote".to_owned()]);
        assert_eq!(c.policy.max_freeze_days, 14);
        assert_eq!(c.policy.min_cases, 50);
        let p = &c.properties[0];
        assert_eq!((p.cases, p.replays, p.timeout_ms), (50, 7, 10_000));
        assert_eq!(p.canonicalization, Canonicalization::V1);
        assert!(c.policy.protected_globs().contains(&"xtask/**".to_owned()));
    }

    #[test]
    fn unknown_keys_name_line_and_key() {
        let err = parse("[policy]\nseed = 1\nreplay = 3\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("freezegate.toml: line 3, column 1:"),
            "{err}"
        );
        assert!(err.contains("replay"), "{err}");
    }

    #[test]
    fn type_errors_and_duplicates_name_their_key() {
        let cases = [
            (
                "[policy]\nreplays = \"x\"\n",
                "line 2, column 11: policy.replays: invalid type: string \"x\", expected usize",
            ),
            (
                "[[property]]\nid = \"a\"\n[[property]]\nid = \"b\"\ncases = \"x\"\n",
                "line 5, column 9: property[1].cases: invalid type",
            ),
            (
                "policy = { seed = \"x\" }\n",
                "line 1, column 19: policy.seed: invalid type",
            ),
            (
                "[policy]\nseed = -1\n",
                "line 2, column 8: policy.seed: invalid value: integer `-1`, expected a seed, an integer from 0 to 18446744073709551615 (2^64 - 1)",
            ),
            (
                "[policy]\nseed = 18446744073709551616\n",
                "line 2, column 8: policy.seed: invalid value: integer `18446744073709551616`, expected a seed, an integer from 0",
            ),
            (
                "[policy]\nfreeze_env_classes = [\"a\", 3]\n",
                "line 2, column 28: policy.freeze_env_classes[1]: invalid type",
            ),
            (
                "[[property]]\nid = \"a\"\nbogus = 1\n",
                "line 3, column 1: property[0].bogus: unknown field `bogus`",
            ),
            (
                "[policy]\nseed = 1\n[policy]\nreplays = 3\n",
                "line 3, column 2: policy: the table [policy] is defined twice",
            ),
            (
                "[policy]\nseed = 1\nseed = 2\n",
                "line 3, column 1: policy.seed: duplicate key",
            ),
            (
                "[[property]]\nid = \"a\"\n[[property]]\nid = \"b\"\nid = \"c\"\n",
                "line 5, column 1: property[1].id: duplicate key",
            ),
        ];
        for (text, expected) in cases {
            let err = parse(text).unwrap_err().to_string();
            assert!(
                err.starts_with(&format!("freezegate.toml: {expected}")),
                "{text:?}: {err}"
            );
        }
    }

    #[test]
    fn a_file_that_is_not_utf8_is_refused_at_its_first_bad_byte() {
        let dir = tempfile::tempdir().unwrap();
        for (bytes, line, column) in [
            (&b"[policy]\nseed = 1 # \xff\n"[..], 2, 12),
            // Columns count characters: `é` is one. A character cut short is placed at its start.
            (&b"# \xc3\xa9\xc3\xa9 x\n\n[policy] # \xc3(\n"[..], 3, 12),
            (&b"\xfe"[..], 1, 1),
        ] {
            std::fs::write(dir.path().join(CONFIG_FILE), bytes).unwrap();
            let err = Config::load(dir.path()).unwrap_err();
            let ConfigError::Syntax {
                path,
                line: l,
                column: c,
                ..
            } = &err
            else {
                panic!("{err:?}");
            };
            assert_eq!(path, Path::new(CONFIG_FILE), "relative to the root");
            assert_eq!((*l, *c), (line, column), "{bytes:?}: {err}");
            assert!(
                err.to_string().starts_with(&format!(
                    "freezegate.toml: line {line}, column {column}: the file is not UTF-8: byte 0x"
                )),
                "{err}"
            );
            let place = crate::render::error_place(&err).unwrap();
            assert_eq!(
                (place.file.as_str(), place.line, place.column),
                (CONFIG_FILE, Some(line as u64), Some(column as u64))
            );
        }
    }

    #[test]
    fn the_root_is_the_nearest_folder_with_the_config_else_the_git_top() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path();
        let deep = top.join("a/b/c");
        std::fs::create_dir_all(&deep).unwrap();
        assert_eq!(repository_root(&deep), deep, "neither: where it started");
        std::fs::create_dir(top.join(".git")).unwrap();
        assert_eq!(repository_root(&deep), top);
        std::fs::write(top.join("a").join(CONFIG_FILE), "").unwrap();
        assert_eq!(
            repository_root(&deep),
            top.join("a"),
            "the config wins over git"
        );
    }

    #[test]
    fn replay_counts_over_the_plan_limit_are_refused_where_written() {
        let err = parse("[policy]\nreplays = 10001\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("policy.replays") && err.contains("10000"),
            "{err}"
        );
        let err = parse("[[property]]\nid = \"p\"\noracle = \"true\"\nreplays = 99999999\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("property[0].replays"), "{err}");
        assert!(parse("[policy]\nreplays = 10000\n").is_ok());
    }

    #[test]
    fn a_property_may_raise_but_not_lower_replays() {
        let ok = parse("[[property]]\nid = \"p\"\noracle = \"true\"\nreplays = 41\n").unwrap();
        assert_eq!(ok.properties[0].replays, 41);
        let err = parse("[[property]]\nid = \"p\"\noracle = \"true\"\nreplays = 3\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("property[0].replays"), "{err}");
    }

    #[test]
    fn rule_errors_name_the_key_and_where_its_value_is() {
        for (text, key, line, column) in [
            ("[[property]]\nid = \"../x\"\n", "property[0].id", 2, 6),
            (
                "[[property]]\nid = \"p\"\ncases = 3\n",
                "property[0].cases",
                3,
                9,
            ),
            (
                "[[property]]\nid = \"p\"\n[[property]]\nid = \"p\"\n",
                "property[1].id",
                4,
                6,
            ),
            (
                "[[property]]\nid = \"p\"\noracle = \" \"\n",
                "property[0].oracle",
                3,
                10,
            ),
            (
                "[[property]]\nid = \"p\"\ncanonicalization = \"v2\"\n",
                "property[0].canonicalization",
                3,
                20,
            ),
            (
                "[policy]\nfreeze_env_classes = [\"remote\", \"laptop\"]\n",
                "policy.freeze_env_classes[1]",
                2,
                33,
            ),
            ("[policy]\nreplays = 0\n", "policy.replays", 2, 11),
            // A command no process can be given.
            (
                "[[property]]\nid = \"p\"\noracle = \"python3 o.py\\u0000\"\n",
                "property[0].oracle",
                3,
                10,
            ),
            (
                "[[property]]\nid = \"p\"\noracle = \"true\"\ngenerate = \"seq 3\\u0000\"\n",
                "property[0].generate",
                4,
                12,
            ),
            // A glob the patch checks could not compile, where it is written.
            (
                "[policy]\nproperty_paths = [\"tests/**\", \"tests/[oracles/**\"]\n",
                "policy.property_paths[1]",
                2,
                31,
            ),
            (
                "policy.protected = [\"a/{b\"]\n",
                "policy.protected[0]",
                1,
                21,
            ),
            // Dotted keys, inline tables and arrays of inline tables lead to the same value.
            ("policy.replays = 0\n", "policy.replays", 1, 18),
            ("policy = { jobs = 0 }\n", "policy.jobs", 1, 19),
            (
                "property = [{ id = \"p\" }, { id = \"q\", replays = 2 }]\n",
                "property[1].replays",
                1,
                49,
            ),
            // Columns count characters, not bytes.
            (
                "# é\n[[property]]\nid = \"p\" # ü\noracle = \"\t\"\n",
                "property[0].oracle",
                4,
                10,
            ),
        ] {
            let err = parse(text).unwrap_err();
            let ConfigError::Rule { at, key: k, .. } = &err else {
                panic!("{text:?}: {err}");
            };
            assert_eq!(k, key, "{text:?}");
            assert_eq!(*at, Some(Position { line, column }), "{text:?}: {err}");
            let shown = err.to_string();
            assert!(
                shown.starts_with(&format!(
                    "freezegate.toml: line {line}, column {column}: {key}: "
                )),
                "{shown}"
            );
        }
    }

    #[test]
    fn a_glob_that_does_not_compile_is_refused_with_why() {
        let err = parse("[policy]\nproperty_paths = [\"tests/[oracles/**\"]\n")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "freezegate.toml: line 2, column 19: policy.property_paths[0]: bad glob \"tests/[oracles/**\": unclosed character class; missing ']'"
        );
        // Globs the patch checks read are accepted: rooted, `**`, classes, alternatives.
        let ok = parse(
            "[policy]\nprotected = [\"./ops/**\", \"/deploy.sh\", \"ci/[a-z]*.yml\"]\nproperty_paths = [\"tests/{unit,prop}/**\"]\n",
        )
        .unwrap();
        assert_eq!(ok.policy.protected.len(), 3);
    }

    #[test]
    fn a_property_with_nothing_to_run_is_refused_at_its_table() {
        let text = "[policy]\nseed = 1\n\n[[property]]\nid = \"a\"\noracle = \"true\"\n\n  [[property]]\nid = \"rust.one\"\n\n[[property]] # é\nid = \"b\"\n";
        let c = parse(text).unwrap();
        let places: Vec<Option<Position>> = c.properties.iter().map(|p| p.at).collect();
        assert_eq!(
            places,
            [(4, 1), (8, 3), (11, 1)].map(|(line, column)| Some(Position { line, column }))
        );
        // `rust.one` is a registered Rust property; `b` has nothing to run.
        let err = c.check_oracles(|id| id == "rust.one").unwrap_err();
        let ConfigError::Rule { at, key, .. } = &err else {
            panic!("{err:?}");
        };
        assert_eq!((key.as_str(), *at), ("property[2]", places[2]));
        assert_eq!(
            err.to_string(),
            "freezegate.toml: line 11, column 1: property[2]: property b has no `oracle` and no Rust property of that id is registered: give it an `oracle` command or register it as a Rust property"
        );
        let place = crate::render::error_place(&err).unwrap();
        assert_eq!((place.line, place.column), (Some(11), Some(1)));
        // Registered, or given an oracle: nothing to say.
        assert!(c.check_oracles(|id| id != "a").is_ok());
        // Inline tables are placed at their brace.
        let c = parse("property = [{ id = \"a\", oracle = \"true\" }, { id = \"b\" }]\n").unwrap();
        let err = c.check_oracles(|_| false).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("freezegate.toml: line 1, column 44: property[1]: property b"),
            "{err}"
        );
    }

    /// The text from a line and column (characters) to the end of that line.
    fn from_place(text: &str, at: Position) -> String {
        text.split('\n')
            .nth(at.line - 1)
            .map(|l| l.chars().skip(at.column - 1).collect())
            .unwrap_or_default()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// However `[[property]]` entries are written (tables with comments and padding, or
        /// one inline array) and wherever the policy sits, a rule error points at the value
        /// it refuses.
        #[test]
        fn a_rule_error_points_at_the_refused_value(
            count in 1usize..5,
            bad in proptest::prelude::any::<proptest::sample::Index>(),
            low in 1u32..7,
            inline in proptest::prelude::any::<bool>(),
            dotted_policy in proptest::prelude::any::<bool>(),
            pad in 0usize..3,
            comments in proptest::prelude::any::<bool>(),
        ) {
            let bad = bad.index(count);
            let eq = format!("{}={}", " ".repeat(pad), " ".repeat(pad));
            let mut text = if dotted_policy {
                format!("policy.replays{eq}7\n")
            } else {
                format!("[policy]\nreplays{eq}7\n")
            };
            if inline {
                let items: Vec<String> = (0..count)
                    .map(|i| {
                        let replays = if i == bad { format!(", replays{eq}{low}") } else { String::new() };
                        format!("{{ id{eq}\"p{i}\", oracle{eq}\"true\"{replays} }}")
                    })
                    .collect();
                // A top-level key: before any table header.
                text.insert_str(0, &format!("property{eq}[{}]\n", items.join(", ")));
            } else {
                for i in 0..count {
                    if comments {
                        text.push_str(&format!("\n# property {i}, é\n"));
                    }
                    text.push_str(&format!("[[property]]\nid{eq}\"p{i}\"\noracle{eq}\"true\"\n"));
                    if i == bad {
                        text.push_str(&format!("replays{eq}{low}  # too few\n"));
                    }
                }
            }
            let err = parse(&text).unwrap_err();
            let ConfigError::Rule { at: Some(at), key, .. } = &err else {
                panic!("{text}\n{err}");
            };
            proptest::prop_assert_eq!(key, &format!("property[{bad}].replays"));
            let rest = from_place(&text, *at);
            proptest::prop_assert!(rest.starts_with(&low.to_string()), "{}: {:?}", err, rest);
        }
    }

    #[test]
    fn locate_finds_nothing_for_keys_the_text_lacks() {
        let text = "[policy]\nreplays = 3\nfreeze_env_classes = [\"remote\"]\n";
        assert_eq!(
            locate(text, "policy.replays"),
            Some(Position {
                line: 2,
                column: 11
            })
        );
        for key in [
            "policy.seed",
            "policy.replays.x",
            "policy.freeze_env_classes[1]",
            "policy[0]",
            "property[0].id",
            "policy.freeze_env_classes[x]",
        ] {
            assert_eq!(locate(text, key), None, "{key}");
        }
        assert_eq!(locate("not toml [", "policy"), None);
    }

    fn settings(overrides: RunOverrides) -> Result<Settings, SettingsError> {
        let c = parse("[policy]\nseed = 5\nreplays = 7\ntimeout_ms = 100\n").unwrap();
        Settings::resolve(c, &overrides, 2)
    }

    /// Resolved settings pass their check; changed afterwards to what resolving never
    /// gives (public fields), they fail it, naming the field.
    #[test]
    fn settings_altered_after_resolving_fail_their_check() {
        let c = parse("[policy]\nreplays = 3\n\n[[property]]\nid = \"a.b\"\noracle = \"true\"\n")
            .unwrap();
        let resolved = Settings::resolve(c, &RunOverrides::default(), 2).unwrap();
        assert_eq!(resolved.check(), Ok(()));
        let mut zero = resolved.clone();
        zero.replays = 0;
        zero.config.properties[0].replays = 0;
        assert_eq!(
            zero.check().unwrap_err().to_string(),
            "the settings' replay count of property a.b is 0, which Settings::resolve never gives: from 1 to MAX_REPLAYS"
        );
        let mut jobs = resolved.clone();
        jobs.jobs = 0;
        assert!(jobs.check().is_err());
        let mut deadline = resolved;
        deadline.timeout_ms = Some(0);
        assert!(
            deadline
                .check()
                .unwrap_err()
                .to_string()
                .contains("deadline of property a.b is 0 ms")
        );
    }

    #[test]
    fn flags_beat_the_environment_and_every_override_is_listed() {
        let s = settings(RunOverrides {
            env_seed: Some("9".into()),
            env_replays: Some("9".into()),
            flag_replays: Some(3),
            flag_timeout_ms: Some(50),
            ..RunOverrides::default()
        })
        .unwrap();
        assert_eq!(
            (s.seed, s.replays, s.timeout_ms, s.jobs),
            (9, 3, Some(50), 2)
        );
        let shown: Vec<String> = s.overrides.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "seed = 9 (file: 5; environment; weakens the policy)",
                "replays = 3 (file: 7; flag; weakens the policy)",
                "timeout_ms = 50 (file: 100; flag)",
            ]
        );
        assert_eq!(s.weakening_overrides().count(), 2);
    }

    #[test]
    fn a_longer_deadline_than_a_propertys_own_weakens_and_jobs_are_listed() {
        let c = parse(
            "[policy]\ntimeout_ms = 10000\n\n[[property]]\nid = \"fast\"\noracle = \"true\"\ntimeout_ms = 2000\n",
        )
        .unwrap();
        let resolve = |t: u64| {
            let overrides = RunOverrides {
                flag_timeout_ms: Some(t),
                flag_jobs: Some(1),
                ..RunOverrides::default()
            };
            Settings::resolve(c.clone(), &overrides, 2).unwrap()
        };
        let s = resolve(9000);
        let shown: Vec<String> = s.overrides.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "timeout_ms = 9000 (file: 10000; property fast: 2000; flag; weakens the policy)",
                "jobs = 1 (file: cores, 2; flag)",
            ]
        );
        assert_eq!(s.weakening_overrides().count(), 1);
        // No longer than any property's deadline: stricter, not weaker.
        assert_eq!(resolve(2000).weakening_overrides().count(), 0);
    }

    #[test]
    fn remote_needs_a_runner_id_and_bad_values_are_refused() {
        assert!(
            settings(RunOverrides {
                env_class: Some("remote".into()),
                ..RunOverrides::default()
            })
            .unwrap_err()
            .to_string()
            .contains("RUNNER_ID")
        );
        assert!(
            settings(RunOverrides {
                env_replays: Some("zero".into()),
                ..RunOverrides::default()
            })
            .is_err()
        );
        let s = settings(RunOverrides {
            env_class: Some("remote".into()),
            env_runner_id: Some("ci-7".into()),
            ..RunOverrides::default()
        })
        .unwrap();
        assert_eq!(
            (s.env_class, s.runner_id.as_str()),
            (EnvClass::Remote, "ci-7")
        );
        // Listed like every other override, and none of them weakens the policy.
        let shown: Vec<String> = s.overrides.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "env_class = remote (file: default local; environment)",
                "runner_id = ci-7 (file: default local; environment)",
            ]
        );
        assert_eq!(s.weakening_overrides().count(), 0);
    }

    #[test]
    fn settings_errors_are_typed_and_name_where_the_value_came_from() {
        fn is_error<E: std::error::Error + Send + Sync + 'static>(_: &E) {}
        let over = |env: Option<&str>, flag: Option<usize>| {
            settings(RunOverrides {
                env_replays: env.map(str::to_owned),
                flag_replays: flag,
                ..RunOverrides::default()
            })
            .unwrap_err()
        };
        let from_env = over(Some("99999"), None);
        is_error(&from_env);
        assert_eq!(
            from_env,
            SettingsError::TooManyReplays {
                replays: 99_999,
                from: Source::Env
            }
        );
        assert_eq!(
            from_env.to_string(),
            "REPLAYS 99999 is over the most a replay plan allows, 10000"
        );
        assert_eq!(
            over(Some("3"), Some(99_999)).to_string(),
            "--replays 99999 is over the most a replay plan allows, 10000"
        );
        assert_eq!(over(None, Some(0)), SettingsError::ZeroReplays);
        assert_eq!(
            over(Some("0"), None).to_string(),
            "REPLAYS \"0\" is not a positive integer"
        );
        let bad_class = settings(RunOverrides {
            env_class: Some("laptop".into()),
            ..RunOverrides::default()
        })
        .unwrap_err();
        assert_eq!(
            bad_class.to_string(),
            "ENV_CLASS \"laptop\" is not an env class: expected \"local\" or \"remote\""
        );
        // A blank runner id is refused whichever source gave it, and only the one in force.
        let runner = |env: Option<&str>, flag: Option<&str>| {
            settings(RunOverrides {
                env_class: Some("remote".into()),
                env_runner_id: env.map(str::to_owned),
                flag_runner_id: flag.map(str::to_owned),
                ..RunOverrides::default()
            })
        };
        assert_eq!(
            runner(Some("   "), None).unwrap_err(),
            SettingsError::BlankRunnerId {
                value: "   ".into(),
                from: Source::Env
            }
        );
        assert_eq!(
            runner(Some("   "), None).unwrap_err().to_string(),
            "RUNNER_ID \"   \" is blank: it must name this runner"
        );
        assert_eq!(
            runner(Some("ci-7"), Some(" ")).unwrap_err().to_string(),
            "--runner-id \" \" is blank: it must name this runner"
        );
        assert_eq!(
            runner(Some("  "), Some("ci-7")).map(|s| s.runner_id),
            Ok("ci-7".to_owned())
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// SPEC §6: a property may raise the replay count for itself, never lower it. A
        /// property below the policy is refused where it is written. For any policy count,
        /// property count and run override (flag or `REPLAYS`), a property that raised its
        /// count gets max(its own, the run's): an override below it is ignored for it. One
        /// that did not raise follows the run's count, and the run's count is never ignored
        /// upwards. An override below the policy is listed as weakening it.
        #[test]
        fn a_propertys_replays_are_the_larger_of_its_own_and_the_runs(
            policy in 1usize..40,
            property in 1usize..80,
            run in proptest::option::of(1usize..80),
            from_flag in proptest::prelude::any::<bool>(),
        ) {
            let text = format!(
                "[policy]\nreplays = {policy}\n\n[[property]]\nid = \"p\"\noracle = \"true\"\nreplays = {property}\n"
            );
            let parsed = parse(&text);
            if property < policy {
                let err = parsed.expect_err("a property below the policy is refused");
                proptest::prop_assert!(err.to_string().contains("property[0].replays"), "{}", err);
                return Ok(());
            }
            let config = parsed.expect("a property at or above the policy is accepted");
            let overrides = match (run, from_flag) {
                (Some(n), true) => RunOverrides { flag_replays: Some(n), ..RunOverrides::default() },
                (Some(n), false) => RunOverrides { env_replays: Some(n.to_string()), ..RunOverrides::default() },
                (None, _) => RunOverrides::default(),
            };
            let s = Settings::resolve(config, &overrides, 1).expect("valid overrides");
            let run_n = run.unwrap_or(policy);
            let effective = s.replays_for(&s.config.properties[0]);
            let expected = if property > policy { property.max(run_n) } else { run_n };
            proptest::prop_assert_eq!(effective, expected);
            proptest::prop_assert!(effective >= run_n, "the run's count is never lowered");
            if run_n >= policy {
                proptest::prop_assert_eq!(effective, property.max(run_n));
            }
            proptest::prop_assert_eq!(s.weakening_overrides().count(), usize::from(run_n < policy));
        }
    }
}
