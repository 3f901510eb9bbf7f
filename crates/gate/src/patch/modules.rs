//! What Python, or the native loader under it, would run from a folder of property code that
//! the gate's line rules cannot judge: files it cannot read (compiled bytecode, native
//! libraries, path hooks, any binary file) and module files that take an import name from
//! another module ([`shadowed_by`]). These are the `opaque-code` and `module-shadowed` rules of
//! [`super::RULES`].
//!
//! Python's import rules as read here (`importlib`'s `FileFinder`, one folder of `sys.path`
//! for one name `X`): a package folder `X/` with an `__init__` module wins over everything
//! else in the folder; then an extension module (`X.cpython-311-x86_64-linux-gnu.so`,
//! `X.abi3.so`, `X.so`, `X.pyd`), then the source `X.py`, then a sourceless `X.pyc`, which is
//! never used while `X.py` is there. The folder of the script Python runs is `sys.path[0]`,
//! before the standard library, so a module there named like a standard one (`json.py`) is
//! what `import json` loads. Which folders a project's oracles put on `sys.path` is not known
//! here: a module file in any folder under `property_paths` is read as if its folder could be
//! one.

/// How many bytes git's diff looks at to tell a binary file (`FIRST_FEW_BYTES` of git's
/// `xdiff-interface.c`): a file with a NUL byte among them is binary.
const GIT_BINARY_PROBE: usize = 8000;

/// Whether git's diff treats these bytes as binary, attributes aside (the gate reads none):
/// a NUL byte among the first 8000, as git's `buffer_is_binary` says.
pub(crate) fn is_binary(bytes: &[u8]) -> bool {
    bytes.iter().take(GIT_BINARY_PROBE).any(|b| *b == 0)
}

/// [`opaque_by_name`] for compiled Python bytecode alone (a `.pyc`/`.pyo` file, a
/// `__pycache__` entry or anything under one): what nobody commits on purpose, and what Python
/// runs in place of its source wherever it lies.
pub(crate) fn bytecode_by_name(path: &str) -> Option<&'static str> {
    opaque_by_name(path).filter(|why| ![NATIVE_LIBRARY, PATH_HOOK].contains(why))
}

/// [`opaque_by_name`]'s reason for a native library or extension module.
const NATIVE_LIBRARY: &str = "a native library or extension module";

/// [`opaque_by_name`]'s reason for a `.pth` file.
const PATH_HOOK: &str = "a site path hook (`.pth`: its `import` lines run at start-up)";

/// Why Python would run a file of this path that the gate cannot read, by its path alone;
/// `None` for a path that says nothing (its bytes may still be binary).
pub(crate) fn opaque_by_name(path: &str) -> Option<&'static str> {
    let (folders, name) = path.rsplit_once('/').unwrap_or(("", path));
    // Any case: a file system that ignores it (macOS, Windows) finds `__PyCache__` too.
    let pycache = |component: &str| component.eq_ignore_ascii_case("__pycache__");
    if folders.split('/').any(pycache) {
        return Some(
            "a file of a `__pycache__` folder (compiled bytecode Python runs instead of the source)",
        );
    }
    if pycache(name) {
        return Some(
            "an entry named `__pycache__` (where Python looks for compiled bytecode to run instead of the source)",
        );
    }
    let lower = name.to_ascii_lowercase();
    if lower.ends_with(".pyc") || lower.ends_with(".pyo") {
        return Some("compiled Python bytecode");
    }
    if lower.ends_with(".pyd")
        || lower.ends_with(".so")
        || lower.ends_with(".dylib")
        || lower.ends_with(".dll")
        || is_versioned_so(&lower)
    {
        return Some(NATIVE_LIBRARY);
    }
    if lower.ends_with(".pth") {
        return Some(PATH_HOOK);
    }
    None
}

/// `libx.so.1`, `libx.so.1.2.3`: a shared library with a version after `.so`.
fn is_versioned_so(name: &str) -> bool {
    name.match_indices(".so.").any(|(at, _)| {
        let version = &name[at + 4..];
        !version.is_empty()
            && version
                .split('.')
                .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// How a module file of a folder is loaded, in the order Python prefers them for one name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Loader {
    /// A package: a folder `X/` holding an `__init__` module.
    Package,
    /// An extension module: `X.<tag>.so`, `X.so`, `X.pyd`.
    Extension,
    /// Source: `X.py` (`X.pyw` on Windows).
    Source,
    /// A sourceless `X.pyc`, used only when there is no `X.py`.
    Bytecode,
}

impl Loader {
    fn what(self) -> &'static str {
        match self {
            Loader::Package => "the package",
            Loader::Extension => "the extension module",
            Loader::Source => "the source module",
            Loader::Bytecode => "the sourceless bytecode",
        }
    }
}

/// The import name a file named `name` gives its folder, and how it is loaded: `X.py` →
/// (`X`, source); an extension's name is what stands before its first dot (any
/// `X.<anything>.so` counts, whatever Python's own tag). `None` for other files and for a
/// stem holding a dot (`a.b.py` is not importable as `a`). A stem need not be an identifier:
/// `importlib.import_module("a-b")` loads `a-b.py`, and the standard library does so
/// (`sysconfig` imports `_sysconfigdata__linux_x86_64-linux-gnu`).
pub(crate) fn module_file(name: &str) -> Option<(&str, Loader)> {
    let lower = name.to_ascii_lowercase();
    let (stem, loader) = if lower.ends_with(".py") || lower.ends_with(".pyw") {
        (name.rsplit_once('.')?.0, Loader::Source)
    } else if lower.ends_with(".pyc") {
        (name.rsplit_once('.')?.0, Loader::Bytecode)
    } else if lower.ends_with(".so") || lower.ends_with(".pyd") {
        (name.split_once('.')?.0, Loader::Extension)
    } else {
        return None;
    };
    (!stem.is_empty() && !stem.contains('.')).then_some((stem, loader))
}

/// Whether `name` can be imported as one name (a Python identifier, approximately).
pub(crate) fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c == '_' || c.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
}

/// One import name a file provides: in `folder`, name `name` is loaded from `by`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Provision {
    /// The folder (from the project folder, `""` for the project folder itself).
    pub folder: String,
    /// The import name.
    pub name: String,
    /// How it is loaded.
    pub loader: Loader,
    /// What provides it: the file, or for a package its folder with a trailing `/`.
    pub by: String,
}

/// The import names the file `path` provides: its own (`D/X.py` gives `X` in `D`), and for
/// an `__init__` module also its package (`D/X/__init__.py` gives `X` in `D`). Nothing for a
/// file of a `__pycache__` folder, which is a cache of a source file, not a module.
pub(crate) fn provisions(path: &str) -> Vec<Provision> {
    let (folder, name) = path.rsplit_once('/').unwrap_or(("", path));
    if folder.split('/').any(|f| f == "__pycache__") {
        return Vec::new();
    }
    let Some((module, loader)) = module_file(name) else {
        return Vec::new();
    };
    let mut found = vec![Provision {
        folder: folder.to_string(),
        name: module.to_string(),
        loader,
        by: path.to_string(),
    }];
    if module == "__init__" && !folder.is_empty() {
        let (parent, package) = folder.rsplit_once('/').unwrap_or(("", folder));
        if is_identifier(package) {
            found.push(Provision {
                folder: parent.to_string(),
                name: package.to_string(),
                loader: Loader::Package,
                by: format!("{folder}/"),
            });
        }
    }
    found
}

/// The modules of `folder` named `name` in a tree whose folders `names_in` lists (the file
/// names directly in a folder): module files `name.*` and a package `name/` with an
/// `__init__` module.
pub(crate) fn providers(
    folder: &str,
    name: &str,
    names_in: &dyn Fn(&str) -> Vec<String>,
) -> Vec<Provision> {
    let join = |a: &str, b: &str| {
        if a.is_empty() {
            b.to_string()
        } else {
            format!("{a}/{b}")
        }
    };
    let mut found: Vec<Provision> = names_in(folder)
        .iter()
        .filter_map(|file| {
            let (module, loader) = module_file(file)?;
            (module == name).then(|| Provision {
                folder: folder.to_string(),
                name: name.to_string(),
                loader,
                by: join(folder, file),
            })
        })
        .collect();
    let package = join(folder, name);
    if names_in(&package)
        .iter()
        .any(|file| module_file(file).is_some_and(|(m, _)| m == "__init__"))
    {
        found.push(Provision {
            folder: folder.to_string(),
            name: name.to_string(),
            loader: Loader::Package,
            by: format!("{package}/"),
        });
    }
    found.sort_by(|a, b| (a.loader, &a.by).cmp(&(b.loader, &b.by)));
    found
}

/// Why the module file `path`, which the commit adds, shadows another module or is shadowed
/// by one, one sentence each: its import name is a standard-library module's (or a test
/// tool's: `hypothesis`, `pytest`), or another module of its folder in the commit's tree
/// answers to the same name with another loader. A sourceless `.pyc` beside the `.py` of its
/// name is not one (Python ignores it; it is `opaque-code` anyway).
pub(crate) fn shadowed_by(path: &str, names_in: &dyn Fn(&str) -> Vec<String>) -> Vec<String> {
    let mut why = Vec::new();
    for own in provisions(path) {
        if own.name == "__init__" {
            // Only the package's name reaches `import`; its `__init__` variants are below.
        } else if stdlib_looks_for(&own.name) {
            why.push(format!(
                "`{}` takes the name `{}`, which the standard library imports when it finds it on sys.path: a script in `{}` (or with it on sys.path) runs this",
                own.by,
                own.name,
                shown_folder(&own.folder)
            ));
        } else if is_stdlib(&own.name) {
            why.push(format!(
                "`{}` takes the name of the standard library's module `{}`: a script in `{}` (or with it on sys.path) imports this instead",
                own.by,
                own.name,
                shown_folder(&own.folder)
            ));
        } else if TEST_TOOL_MODULES.contains(&own.name.as_str()) {
            why.push(format!(
                "`{}` takes the name of the test tool `{}`: a script in `{}` (or with it on sys.path) imports this instead",
                own.by,
                own.name,
                shown_folder(&own.folder)
            ));
        }
        for other in providers(&own.folder, &own.name, names_in) {
            if other.by == own.by
                || matches!(
                    (own.loader, other.loader),
                    (Loader::Source, Loader::Bytecode) | (Loader::Bytecode, Loader::Source)
                )
            {
                continue;
            }
            let (winner, loser) = if own.loader <= other.loader {
                (&own, &other)
            } else {
                (&other, &own)
            };
            why.push(format!(
                "`{}` and `{}` both answer `import {}`: Python loads {} `{}`, never `{}`",
                own.by,
                other.by,
                own.name,
                winner.loader.what(),
                winner.by,
                loser.by
            ));
        }
    }
    why
}

fn shown_folder(folder: &str) -> &str {
    if folder.is_empty() { "." } else { folder }
}

/// Third-party modules whose shadowing would change how every property runs.
const TEST_TOOL_MODULES: &[&str] = &["hypothesis", "pytest", "_pytest", "pluggy"];

/// Whether `name` is a top-level module of Python's standard library ([`STDLIB_MODULES`]).
pub(crate) fn is_stdlib(name: &str) -> bool {
    STDLIB_MODULES.split_ascii_whitespace().any(|n| n == name) || stdlib_looks_for(name)
}

/// Whether the standard library imports a module `name` from `sys.path` when it is there,
/// though it is not one of its own ([`STDLIB_LOOKS_FOR`], and `_sysconfigdata_…`).
fn stdlib_looks_for(name: &str) -> bool {
    STDLIB_LOOKS_FOR.contains(&name) || name.starts_with("_sysconfigdata_")
}

/// Modules that are not part of the standard library but that it imports from `sys.path`
/// when they are there: `copy` and `pickle` try `org.python.core` (Jython), `platform` tries
/// `java` and `_winreg`, `site` runs `sitecustomize` and `usercustomize`, and `sysconfig`
/// imports `_sysconfigdata_…` by a name that depends on the build.
const STDLIB_LOOKS_FOR: &[&str] = &[
    "org",
    "java",
    "_winreg",
    "vms_lib",
    "sitecustomize",
    "usercustomize",
];

/// The top-level module names of Python's standard library, sorted, one space or newline
/// apart: the union of `sys.stdlib_module_names` of CPython 3.11.7, 3.12.1 and 3.13.0, made with
///
/// ```text
/// for py in python3.11 python3.12 python3.13; do
///   $py -c 'import sys; print("\n".join(sorted(sys.stdlib_module_names)))'
/// done | sort -u | fmt -w 92
/// ```
///
/// (the list is the same on every platform: it names Windows-only and optional modules too),
/// and CPython 3.14's new top-level modules, added by hand from its "What's New":
/// `annotationlib`, and `compression` with its Zstandard extension module `_zstd` (PEP 784).
pub(crate) const STDLIB_MODULES: &str = "
__future__ _abc _aix_support _android_support _ast _asyncio _bisect _blake2 _bootsubprocess
_bz2 _codecs _codecs_cn _codecs_hk _codecs_iso2022 _codecs_jp _codecs_kr _codecs_tw
_collections _collections_abc _colorize _compat_pickle _compression _contextvars _crypt _csv
_ctypes _curses _curses_panel _datetime _dbm _decimal _elementtree _frozen_importlib
_frozen_importlib_external _functools _gdbm _hashlib _heapq _imp _interpchannels
_interpqueues _interpreters _io _ios_support _json _locale _lsprof _lzma _markupbase _md5
_msi _multibytecodec _multiprocessing _opcode _opcode_metadata _operator _osx_support
_overlapped _pickle _posixshmem _posixsubprocess _py_abc _pydatetime _pydecimal _pyio
_pylong _pyrepl _queue _random _scproxy _sha1 _sha2 _sha256 _sha3 _sha512 _signal
_sitebuiltins _socket _sqlite3 _sre _ssl _stat _statistics _string _strptime _struct
_suggestions _symtable _sysconfig _thread _threading_local _tkinter _tokenize _tracemalloc
_typing _uuid _warnings _weakref _weakrefset _winapi _wmi _zoneinfo _zstd
abc aifc annotationlib antigravity
argparse array ast asynchat asyncio asyncore atexit audioop base64 bdb binascii bisect
builtins bz2 cProfile calendar cgi cgitb chunk cmath cmd code codecs codeop collections
colorsys compileall compression concurrent configparser contextlib contextvars copy copyreg
crypt csv
ctypes curses dataclasses datetime dbm decimal difflib dis distutils doctest email encodings
ensurepip enum errno faulthandler fcntl filecmp fileinput fnmatch fractions ftplib functools
gc genericpath getopt getpass gettext glob graphlib grp gzip hashlib heapq hmac html http
idlelib imaplib imghdr imp importlib inspect io ipaddress itertools json keyword lib2to3
linecache locale logging lzma mailbox mailcap marshal math mimetypes mmap modulefinder
msilib msvcrt multiprocessing netrc nis nntplib nt ntpath nturl2path numbers opcode operator
optparse os ossaudiodev pathlib pdb pickle pickletools pipes pkgutil platform plistlib
poplib posix posixpath pprint profile pstats pty pwd py_compile pyclbr pydoc pydoc_data
pyexpat queue quopri random re readline reprlib resource rlcompleter runpy sched secrets
select selectors shelve shlex shutil signal site smtpd smtplib sndhdr socket socketserver
spwd sqlite3 sre_compile sre_constants sre_parse ssl stat statistics string stringprep
struct subprocess sunau symtable sys sysconfig syslog tabnanny tarfile telnetlib tempfile
termios textwrap this threading time timeit tkinter token tokenize tomllib trace traceback
tracemalloc tty turtle turtledemo types typing unicodedata unittest urllib uu uuid venv
warnings wave weakref webbrowser winreg winsound wsgiref xdrlib xml xmlrpc zipapp zipfile
zipimport zlib zoneinfo
";

/// The names in each folder of a tree that holds `files` (paths from the project folder), for
/// tests that stand in for a tree's listing.
#[cfg(test)]
pub(crate) fn folder_names(files: &[&str]) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut folders: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for f in files {
        let (folder, name) = f.rsplit_once('/').unwrap_or(("", f));
        folders
            .entry(folder.to_string())
            .or_default()
            .push(name.to_string());
    }
    folders
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[&str]) -> impl Fn(&str) -> Vec<String> {
        let folders = folder_names(files);
        move |folder: &str| folders.get(folder).cloned().unwrap_or_default()
    }

    #[test]
    fn binary_is_a_nul_byte_in_the_first_8000_bytes_as_for_git() {
        assert!(is_binary(b"\x00abc"));
        assert!(is_binary(b"a\x00"));
        assert!(!is_binary(b"print('hello')\n"));
        assert!(!is_binary("é\u{7f}".as_bytes()));
        let mut late = vec![b'a'; 8000];
        late.push(0);
        assert!(!is_binary(&late));
        late[7999] = 0;
        assert!(is_binary(&late));
    }

    #[test]
    fn opaque_files_by_name() {
        for path in [
            "tests/properties/__pycache__/oracle.cpython-311.pyc",
            "tests/properties/__pycache__/notes.txt",
            "tests/properties/json.pyc",
            "tests/old.PYO",
            "tests/fast.cpython-311-x86_64-linux-gnu.so",
            "tests/fast.so",
            "tests/libz.so.1",
            "tests/libz.so.1.2.13",
            "tests/fast.pyd",
            "tests/libfast.dylib",
            "tests/fast.dll",
            "tests/hook.pth",
            // The name itself, whatever the entry (a symbolic link to a folder of bytecode).
            "tests/properties/__pycache__",
            "__pycache__",
            "tests/properties/__PyCache__/oracle.py",
        ] {
            assert!(opaque_by_name(path).is_some(), "{path}");
        }
        for path in [
            "tests/oracle.py",
            "tests/so.py",
            "tests/notes.so.txt",
            "tests/libz.so.x",
            "tests/pycache/x.txt",
            "tests/conftest.py",
            "tests/__pycache__.py",
            "tests/my__pycache__",
        ] {
            assert_eq!(opaque_by_name(path), None, "{path}");
        }
    }

    #[test]
    fn module_files_and_their_import_names() {
        assert_eq!(module_file("json.py"), Some(("json", Loader::Source)));
        assert_eq!(module_file("json.pyc"), Some(("json", Loader::Bytecode)));
        assert_eq!(
            module_file("fast.cpython-311-x86_64-linux-gnu.so"),
            Some(("fast", Loader::Extension))
        );
        assert_eq!(
            module_file("fast.abi3.so"),
            Some(("fast", Loader::Extension))
        );
        assert_eq!(module_file("fast.pyd"), Some(("fast", Loader::Extension)));
        assert_eq!(
            module_file("__init__.py"),
            Some(("__init__", Loader::Source))
        );
        assert_eq!(module_file("a.b.py"), None);
        // Not an identifier, but `importlib.import_module` loads it, and `sysconfig` does.
        assert_eq!(module_file("1x.py"), Some(("1x", Loader::Source)));
        assert_eq!(
            module_file("_sysconfigdata__linux_x86_64-linux-gnu.py"),
            Some(("_sysconfigdata__linux_x86_64-linux-gnu", Loader::Source))
        );
        assert!(is_stdlib("_sysconfigdata__linux_x86_64-linux-gnu"));
        assert!(is_stdlib("org") && is_stdlib("sitecustomize"));
        assert_eq!(module_file("oracle.cpython-311.pyc"), None);
        assert_eq!(module_file("notes.txt"), None);
    }

    #[test]
    fn a_new_module_named_like_the_standard_library_shadows_it() {
        let empty = tree(&[]);
        for path in [
            "tests/properties/json.py",
            "tests/properties/json.pyc",
            "tests/properties/json/__init__.py",
            "tests/properties/random.cpython-311-x86_64-linux-gnu.so",
            "json.py",
            "tests/hypothesis/__init__.py",
        ] {
            let why = shadowed_by(path, &empty);
            assert_eq!(why.len(), 1, "{path}: {why:?}");
        }
        for path in [
            "tests/properties/oracle.py",
            "tests/properties/test_json.py",
            "tests/properties/json_helpers.py",
            "tests/properties/__pycache__/json.cpython-311.pyc",
            "tests/properties/json/decoder.py",
            "tests/properties/json.txt",
        ] {
            assert_eq!(shadowed_by(path, &empty), Vec::<String>::new(), "{path}");
        }
        assert!(shadowed_by("tests/json.py", &empty)[0].contains("`tests`"));
    }

    #[test]
    fn a_new_module_beside_another_of_its_name_is_reported_with_the_winner() {
        let check = |files: &[&str], path: &str| shadowed_by(path, &tree(files));
        // A package wins over the module file beside it, added either way round.
        let why = check(
            &["t/oracle.py", "t/oracle/__init__.py"],
            "t/oracle/__init__.py",
        );
        assert_eq!(why.len(), 1, "{why:?}");
        assert!(
            why[0].contains("Python loads the package `t/oracle/`, never `t/oracle.py`"),
            "{why:?}"
        );
        let why = check(&["t/oracle.py", "t/oracle/__init__.pyc"], "t/oracle.py");
        assert!(why[0].contains("never `t/oracle.py`"), "{why:?}");
        // An extension module wins over the source.
        for ext in [
            "t/oracle.cpython-311-x86_64-linux-gnu.so",
            "t/oracle.abi3.so",
            "t/oracle.so",
            "t/oracle.pyd",
        ] {
            let why = check(&["t/oracle.py", ext], ext);
            assert_eq!(why.len(), 1, "{why:?}");
            assert!(
                why[0].contains(&format!(
                    "the extension module `{ext}`, never `t/oracle.py`"
                )),
                "{why:?}"
            );
        }
        // Two extension modules: one hides the other.
        assert_eq!(check(&["t/x.so", "t/x.abi3.so"], "t/x.so").len(), 1);
        // An `__init__` extension beside `__init__.py` in a package.
        let why = check(
            &["t/pkg/__init__.py", "t/pkg/__init__.so"],
            "t/pkg/__init__.so",
        );
        assert_eq!(why.len(), 1, "{why:?}");
        // A source file beside its sourceless bytecode, either way: no shadow finding.
        assert!(check(&["t/oracle.py", "t/oracle.pyc"], "t/oracle.pyc").is_empty());
        assert!(check(&["t/oracle.py", "t/oracle.pyc"], "t/oracle.py").is_empty());
        // A folder without `__init__` (a namespace portion) loses to the module file.
        assert!(check(&["t/oracle.py", "t/oracle/data.txt"], "t/oracle.py").is_empty());
        assert!(
            check(
                &["t/oracle.py", "t/oracle/helpers.py"],
                "t/oracle/helpers.py"
            )
            .is_empty()
        );
        // Alone in its folder: nothing.
        assert!(check(&["t/oracle.py"], "t/oracle.py").is_empty());
        assert!(check(&["oracle.py", "oracle/__init__.py"], "oracle/__init__.py").len() == 1);
    }

    #[test]
    fn the_standard_library_list_is_sorted_and_names_the_usual_modules() {
        let names: Vec<&str> = STDLIB_MODULES.split_ascii_whitespace().collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(names, sorted);
        for name in [
            "json",
            "os",
            "sys",
            "random",
            "importlib",
            "distutils",
            "tomllib",
            "_pyrepl",
            // CPython 3.14's.
            "annotationlib",
            "compression",
            "_zstd",
        ] {
            assert!(is_stdlib(name), "{name}");
        }
        assert!(!is_stdlib("hypothesis"));
    }

    /// Our list holds every name the machine's Python lists (when there is a `python3`).
    #[test]
    fn the_standard_library_list_holds_every_name_of_the_local_python() {
        let Ok(out) = std::process::Command::new("python3")
            .args([
                "-c",
                "import sys; print('\\n'.join(sorted(getattr(sys, 'stdlib_module_names', ()))))",
            ])
            .output()
        else {
            return;
        };
        if !out.status.success() {
            return;
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let missing: Vec<&str> = text.split_whitespace().filter(|n| !is_stdlib(n)).collect();
        assert!(
            missing.is_empty(),
            "missing from STDLIB_MODULES: {missing:?}"
        );
    }
}
