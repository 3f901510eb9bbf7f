//! The files the `oracle` and `generate` commands of the base revision's properties name: the
//! executable form of each property (SPEC §2), protected like the globs are.
//!
//! A command is split as a POSIX shell splits it ([`split`]: quotes, backslashes, comments,
//! control and redirection operators), and read command by command ([`command_paths`]): a
//! `cd DIR` moves the folder the later words are resolved from, `VAR=value` prefixes and an
//! `env` with its options are skipped, `python -m pkg.mod` stands for `pkg/mod.py`,
//! `pkg/mod/__init__.py` and `pkg/mod/__main__.py`, and every other word (or the value of an
//! `--option=value`) is a candidate path. The candidates that name a regular file or a
//! symbolic link in the base revision's tree, resolved from the project folder where oracles
//! run (SPEC §4), are protected; a link's target is followed within the tree.
//!
//! A protected Python script (a name ending in `.py`, or a first line `#!…python…`) runs the
//! modules it imports: those the tree holds are protected too, transitively
//! ([`follow_imports`], reading each file's imports with [`super::imports`]). They are looked
//! for where Python looks first, in `sys.path[0]`: the script's folder (its real folder, for
//! a link), or for `python -m pkg.mod` the folder the command runs in, where the packages
//! above the module (`pkg/__init__.py`) are imported too. Nothing else is followed: not
//! variables, not globs, not folders on the way that are links, not `PYTHONPATH` or other
//! folders of `sys.path`, not what a shell script the command names runs.

use std::collections::{BTreeMap, BTreeSet};

use super::PatchError;
use super::diff::project_path;
use super::git::Git;
use super::imports::{Import, has_python_shebang, imports};
use super::policy::BaseProperty;
use super::props;

/// The most links followed one after another from a named file.
const MAX_LINK_HOPS: usize = 8;

/// A word or an operator of a shell command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Token {
    /// A word, with its quotes and escaping backslashes removed.
    Word(String),
    /// An operator: a control operator (`&&`, `||`, `;`, `;;`, `|`, `&`, a newline written
    /// `"\n"`, `(`, `)`) or a redirection (`<`, `>`, `>>`, `<<`, `<&`, `>&`, `>|`, `<>`).
    Op(&'static str),
}

/// The operators, longest first so that `&&` is not read as two `&`.
const OPERATORS: &[&str] = &[
    "&&", "||", ";;", ">>", "<<", "<&", ">&", ">|", "<>", "&", "|", ";", "(", ")", "<", ">",
];

/// Whether an operator ends a simple command (a redirection does not).
fn ends_command(op: &str) -> bool {
    matches!(op, "&&" | "||" | ";;" | "&" | "|" | ";" | "\n" | "(" | ")")
}

/// Splits `command` into words and operators as a POSIX shell's tokenizer does: blanks
/// separate words; `'…'` is literal; in `"…"` a backslash escapes only `$`, `` ` ``, `"`,
/// `\` and a newline; outside quotes a backslash escapes any character and a
/// backslash-newline joins lines; a `#` that starts a word starts a comment to the end of the
/// line. `$(…)`, `${…}` and `` `…` `` are copied into their word as written (nothing is
/// expanded). An unterminated quote or substitution runs to the end of the text.
pub(crate) fn split(command: &str) -> Vec<Token> {
    let chars: Vec<char> = command.chars().collect();
    let mut tokens = Vec::new();
    let mut word = String::new();
    // Whether a word has started, even an empty one (`''`).
    let mut in_word = false;
    let mut i = 0;
    let finish = |word: &mut String, in_word: &mut bool, tokens: &mut Vec<Token>| {
        if *in_word {
            tokens.push(Token::Word(std::mem::take(word)));
            *in_word = false;
        }
    };
    while let Some(&c) = chars.get(i) {
        match c {
            ' ' | '\t' => {
                finish(&mut word, &mut in_word, &mut tokens);
                i += 1;
            }
            '\n' => {
                finish(&mut word, &mut in_word, &mut tokens);
                tokens.push(Token::Op("\n"));
                i += 1;
            }
            '#' if !in_word => {
                while chars.get(i).is_some_and(|&c| c != '\n') {
                    i += 1;
                }
            }
            '\\' => {
                in_word = true;
                match chars.get(i + 1) {
                    Some('\n') => {}
                    Some(&next) => word.push(next),
                    None => word.push('\\'),
                }
                i += 2;
            }
            '\'' => {
                in_word = true;
                i += 1;
                while let Some(&c) = chars.get(i) {
                    i += 1;
                    if c == '\'' {
                        break;
                    }
                    word.push(c);
                }
            }
            '"' => {
                in_word = true;
                i += 1;
                while let Some(&c) = chars.get(i) {
                    i += 1;
                    match c {
                        '"' => break,
                        '\\' => match chars.get(i) {
                            Some('\n') => i += 1,
                            Some(&next @ ('$' | '`' | '"' | '\\')) => {
                                word.push(next);
                                i += 1;
                            }
                            _ => word.push('\\'),
                        },
                        _ => word.push(c),
                    }
                }
            }
            '$' if matches!(chars.get(i + 1), Some('(' | '{')) => {
                in_word = true;
                i = copy_substitution(&chars, i, &mut word);
            }
            '`' => {
                in_word = true;
                word.push('`');
                i += 1;
                while let Some(&c) = chars.get(i) {
                    word.push(c);
                    i += 1;
                    if c == '`' {
                        break;
                    }
                }
            }
            '&' | '|' | ';' | '<' | '>' | '(' | ')' => {
                finish(&mut word, &mut in_word, &mut tokens);
                let rest: String = chars[i..chars.len().min(i + 2)].iter().collect();
                let op = OPERATORS
                    .iter()
                    .find(|op| rest.starts_with(**op))
                    .copied()
                    .unwrap_or(";");
                tokens.push(Token::Op(op));
                i += op.chars().count();
            }
            _ => {
                in_word = true;
                word.push(c);
                i += 1;
            }
        }
    }
    finish(&mut word, &mut in_word, &mut tokens);
    tokens
}

/// Copies the `$(…)` or `${…}` starting at `chars[start]` into `word` as written, to its
/// matching close (counting nested opens) or the end of the text; returns where it ends.
fn copy_substitution(chars: &[char], start: usize, word: &mut String) -> usize {
    let (open, close) = match chars.get(start + 1) {
        Some('{') => ('{', '}'),
        _ => ('(', ')'),
    };
    let mut depth = 0usize;
    let mut i = start;
    while let Some(&c) = chars.get(i) {
        word.push(c);
        i += 1;
        if c == open {
            depth += 1;
        } else if c == close {
            depth = depth.saturating_sub(1);
            if depth == 0 {
                break;
            }
        }
    }
    i
}

/// `word` resolved lexically from the folder `cwd` (components from the project folder, which
/// may start with `..`): the path's components, or `None` for a word that is no relative path
/// (empty, absolute, `~…`, `.` itself).
fn resolve(cwd: &[String], word: &str) -> Option<Vec<String>> {
    if word.is_empty() || word.starts_with('/') || word.starts_with('~') || word.contains('\0') {
        return None;
    }
    let mut path = cwd.to_vec();
    for part in word.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if path.last().is_some_and(|last| last != "..") {
                    path.pop();
                } else {
                    path.push("..".to_string());
                }
            }
            name => path.push(name.to_string()),
        }
    }
    (!path.is_empty()).then_some(path)
}

/// [`resolve`] for a word naming a folder, which may be `cwd` itself (`.`, `sub/..`).
fn resolve_folder(cwd: &[String], word: &str) -> Option<Vec<String>> {
    if word.is_empty() || word.starts_with('/') || word.starts_with('~') || word.contains('\0') {
        return None;
    }
    Some(resolve(cwd, word).unwrap_or_default())
}

/// Whether `word` is a shell assignment `NAME=value`; its value.
fn assignment(word: &str) -> Option<&str> {
    let (name, value) = word.split_once('=')?;
    let mut chars = name.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic() || first == '_')
        .then_some(())
        .filter(|()| chars.all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .map(|()| value)
}

/// Whether a command word runs Python (`python3`, `/usr/bin/python3.12`, `pypy3`).
fn is_python(word: &str) -> bool {
    let name = word.rsplit('/').next().unwrap_or(word);
    // A word holding a blank is a quoted argument (`sh -c 'python3 -m x'`), no program name.
    (name.starts_with("python") || name.starts_with("pypy")) && !name.contains(char::is_whitespace)
}

/// The letters of a word of Python's short options (`-Bm` gives `Bm`; not `-`, nor a long
/// option `--x`), with where the first letter that takes an argument stands among them: `m`
/// and `c` (the module, the command) and `W` and `X`, each of which takes the rest of the word,
/// else the next word.
fn python_flags(word: &str) -> Option<(&str, Option<usize>)> {
    let flags = word
        .strip_prefix('-')
        .filter(|f| !f.is_empty() && !f.starts_with('-'))?;
    Some((flags, flags.find(['m', 'c', 'W', 'X'])))
}

/// The files `python -m module` may run, relative to the folder it runs in.
fn module_files(module: &str) -> Vec<String> {
    let valid = !module.is_empty()
        && module.split('.').all(|part| {
            let mut chars = part.chars();
            chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
                && chars.all(|c| c.is_alphanumeric() || c == '_')
        });
    if !valid {
        return Vec::new();
    }
    let path = module.replace('.', "/");
    vec![
        format!("{path}.py"),
        format!("{path}/__init__.py"),
        format!("{path}/__main__.py"),
    ]
}

/// What a shell command names: the paths it may run or read, and the modules `python -m`
/// runs.
#[derive(Debug, Default)]
pub(crate) struct Targets {
    /// Each path relative to the folder the command starts in, as its components (a path
    /// above that folder starts with `..`).
    pub paths: Vec<Vec<String>>,
    /// Each module of a `python -m`, once per folder it is looked for in (as `paths` are
    /// given: the folder the command runs in, then each `PYTHONPATH` folder of the command),
    /// its dotted name by part, and the folder it runs in (Python's `sys.path[0]`, where the
    /// module's own imports are looked for first).
    pub modules: Vec<(Vec<String>, Vec<String>, Vec<String>)>,
    /// The folders a Python command puts on `sys.path` before the standard library, as
    /// `paths` are given: the folder of the script Python runs, else (`-m`, `-c`, `-`, a
    /// script on stdin) the folder the command runs in, and each `PYTHONPATH` folder. A module
    /// file there named like a standard module is what `import` loads in its place.
    pub search_folders: Vec<Vec<String>>,
}

/// The paths a shell command may run or read: [`Targets::paths`] of [`command_targets`].
#[cfg(test)]
pub(crate) fn command_paths(command: &str) -> Vec<Vec<String>> {
    command_targets(command).paths
}

/// The paths a shell command may run or read and the modules it runs with `python -m`: see
/// the module docs. Words whose folder cannot be told (after a `cd` to an absolute path,
/// `cd -`, a bare `cd`) give none.
pub(crate) fn command_targets(command: &str) -> Targets {
    let mut found = Targets::default();
    targets_in(command, Vec::new(), &[], 0, &mut found);
    found
}

/// The most shells inside shells (`sh -c 'bash -c "…"'`) whose command strings are read.
const MAX_SHELL_DEPTH: usize = 4;

/// The shells whose `-c` argument is a command line of its own.
fn is_shell(word: &str) -> bool {
    let name = word.rsplit('/').next().unwrap_or(word);
    matches!(
        name,
        "sh" | "bash" | "dash" | "zsh" | "ksh" | "mksh" | "ash" | "busybox"
    )
}

/// [`command_targets`] of `command` run in the folder `start` with the `PYTHONPATH` folders
/// `inherited` exported, adding to `found`; `depth` counts the shells around it.
fn targets_in(
    command: &str,
    start: Vec<String>,
    inherited: &[Vec<String>],
    depth: usize,
    found: &mut Targets,
) {
    // The folder the next command starts in (`None`: unknown), and those saved by `(`.
    let mut cwd: Option<Vec<String>> = Some(start);
    // The `PYTHONPATH` folders an `export` (or a plain assignment) set for later commands.
    let mut exported: Vec<Vec<String>> = inherited.to_vec();
    let mut saved: Vec<Option<Vec<String>>> = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut tokens = split(command).into_iter().peekable();
    loop {
        let token = tokens.next();
        match &token {
            Some(Token::Word(w)) => {
                words.push(w.clone());
                continue;
            }
            Some(Token::Op(op)) if !ends_command(op) => continue,
            _ => {}
        }
        simple_command(&words, &mut cwd, &mut exported, depth, found);
        words.clear();
        match token {
            None => break,
            Some(Token::Op("(")) => saved.push(cwd.clone()),
            Some(Token::Op(")")) => {
                if let Some(outer) = saved.pop() {
                    cwd = outer;
                }
            }
            Some(_) => {}
        }
    }
}

/// Reads one simple command's words: a `cd` moves `cwd`; `export PYTHONPATH=…` (or an
/// assignment alone, `PYTHONPATH=…;`) sets `exported` for the commands after it; any other
/// command adds its candidate paths and `-m` modules to `found`.
fn simple_command(
    words: &[String],
    cwd: &mut Option<Vec<String>>,
    exported: &mut Vec<Vec<String>>,
    depth: usize,
    found: &mut Targets,
) {
    let mut here = cwd.clone();
    let mut candidates: Vec<&str> = Vec::new();
    // The folders of `PYTHONPATH=…` assignments: where `python -m` also looks.
    let mut python_path: Vec<&str> = Vec::new();
    let mut rest = words.iter().map(String::as_str).peekable();
    // `VAR=value` prefixes.
    while let Some(word) = rest.peek().copied() {
        let Some(value) = assignment(word) else { break };
        candidates.push(value);
        if word.starts_with("PYTHONPATH=") {
            python_path.extend(value.split(':').filter(|d| !d.is_empty()));
        }
        rest.next();
    }
    // The folders of a `PYTHONPATH` value, from where the command runs (a word that needs the
    // shell, `$PYTHONPATH`, is no folder).
    let folders = |value: &str, from: &Option<Vec<String>>| -> Vec<Vec<String>> {
        let Some(from) = from else { return Vec::new() };
        value
            .split(':')
            .filter(|d| !d.is_empty() && !d.contains('$'))
            .filter_map(|d| resolve_folder(from, d))
            .collect()
    };
    match rest.peek().copied() {
        None => {
            if let Some(value) = words.iter().find_map(|w| w.strip_prefix("PYTHONPATH=")) {
                *exported = folders(value, cwd);
            }
        }
        Some("export") => {
            if let Some(value) = words.iter().find_map(|w| w.strip_prefix("PYTHONPATH=")) {
                *exported = folders(value, cwd);
            }
            return;
        }
        Some("cd") => {
            rest.next();
            let args: Vec<&str> = rest
                .filter(|a| !matches!(*a, "-L" | "-P" | "-e" | "--"))
                .collect();
            *cwd = match args.as_slice() {
                [dir] if *dir != "-" => cwd.as_ref().and_then(|c| resolve(c, dir)),
                _ => None,
            };
            return;
        }
        Some("env") => {
            rest.next();
            while let Some(word) = rest.peek().copied() {
                if let Some(value) = assignment(word) {
                    candidates.push(value);
                    if word.starts_with("PYTHONPATH=") {
                        python_path.extend(value.split(':').filter(|d| !d.is_empty()));
                    }
                } else if matches!(word, "-u" | "--unset" | "-C" | "--chdir") {
                    rest.next();
                    if let Some(arg) = rest.peek()
                        && matches!(word, "-C" | "--chdir")
                    {
                        here = here.as_ref().and_then(|h| resolve(h, arg));
                    }
                } else if let Some(dir) = word
                    .strip_prefix("--chdir=")
                    .or_else(|| word.strip_prefix("-C").filter(|d| !d.is_empty()))
                {
                    here = here.as_ref().and_then(|h| resolve(h, dir));
                } else if word == "--" {
                    rest.next();
                    break;
                } else if !word.starts_with('-') {
                    break;
                }
                rest.next();
            }
        }
        _ => {}
    }
    // `sh -c 'COMMAND'` (also `bash -ec '…'`): the command line is read in its own right,
    // from the folder the shell starts in.
    if let Some(shell) = rest.peek().copied()
        && is_shell(shell)
    {
        let args: Vec<&str> = rest.clone().skip(1).collect();
        if let Some(at) = args.iter().position(|a| {
            a.starts_with('-')
                && !a.starts_with("--")
                && a[1..].chars().all(|c| c.is_ascii_alphabetic())
                && a.contains('c')
        }) && let (Some(line), Some(start)) = (args.get(at + 1), here.clone())
            && depth < MAX_SHELL_DEPTH
        {
            targets_in(line, start, exported, depth + 1, found);
        }
    }
    let mut python = false;
    let mut modules = Vec::new();
    let mut module_names = Vec::new();
    // The script Python runs: the first word after the interpreter that is no option nor an
    // option's argument (`-W arg`, `-X arg`); `-c` and `-m` run none.
    let mut script: Option<&str> = None;
    let mut script_read = false;
    let mut option_argument = false;
    // Python's option letters before what it runs (`-I`, `-P`, `-E` change its search path).
    let mut letters = String::new();
    while let Some(word) = rest.next() {
        if python && !script_read {
            if option_argument {
                option_argument = false;
            } else if word.starts_with('-') && word != "-" {
                if let Some((flags, at)) = python_flags(word) {
                    letters.push_str(at.map_or(flags, |i| &flags[..i]));
                }
                if let Some((flags, Some(i))) = python_flags(word) {
                    if matches!(&flags[i..i + 1], "m" | "c") {
                        script_read = true;
                    } else {
                        option_argument = flags.len() == i + 1;
                    }
                }
            } else {
                script = Some(word).filter(|w| *w != "-");
                script_read = true;
            }
        }
        python |= is_python(word);
        // Python's short options may be run together (`-Bm pkg.mod`, `-um mod`, `-Im mod`):
        // an `m` among them takes the rest of the word, else the next word, as the module;
        // `c`, `W` and `X` take an argument of their own, so what follows is not a flag.
        let module = match python_flags(word).filter(|_| python) {
            Some((flags, Some(i))) if flags[i..].starts_with('m') => {
                let attached = &flags[i + 1..];
                if attached.is_empty() {
                    rest.next()
                } else {
                    Some(attached)
                }
            }
            _ => None,
        };
        if let Some(module) = module {
            let files = module_files(module);
            if !files.is_empty() {
                module_names.push(module.split('.').map(str::to_string).collect());
            }
            modules.extend(files);
            continue;
        }
        candidates.push(word);
        if word.starts_with('-')
            && let Some((_, value)) = word.split_once('=')
        {
            candidates.push(value);
        }
    }
    let Some(here) = here else {
        return;
    };
    // `python -m` looks in the folder it runs in, then in each `PYTHONPATH` folder.
    let roots: Vec<Vec<String>> = std::iter::once(here.clone())
        .chain(
            python_path
                .iter()
                .filter_map(|dir| resolve_folder(&here, dir)),
        )
        .chain(exported.iter().cloned())
        .collect();
    found.paths.extend(
        candidates
            .into_iter()
            .filter_map(|word| resolve(&here, word)),
    );
    if python {
        // `-E` (and `-I`) ignore `PYTHONPATH`; `-P` and `-I` keep the script's folder (or the
        // one the command runs in) off `sys.path`. Not `PYTHONSAFEPATH`: a Python before 3.11
        // ignores it, where `-P` is refused and `-I` has been read since 3.4.
        let ignores_environment = letters.contains(['E', 'I']);
        let safe_path = letters.contains(['P', 'I']);
        // The script's folder; for `-m`, `-c`, `-` or a script on stdin, the folder the
        // command runs in.
        if !safe_path {
            match script.and_then(|word| resolve(&here, word)) {
                Some(mut file) => {
                    file.pop();
                    found.search_folders.push(file);
                }
                None => found.search_folders.push(here.clone()),
            }
        }
        if !ignores_environment {
            found.search_folders.extend(roots.iter().skip(1).cloned());
        }
    }
    for root in &roots {
        found
            .paths
            .extend(modules.iter().filter_map(|file| resolve(root, file)));
        found.modules.extend(
            module_names
                .iter()
                .map(|m: &Vec<String>| (root.clone(), m.clone(), here.clone())),
        );
    }
}

/// The files the commands of `properties` name in the tree of `commit`, and the Python modules
/// they import, by their paths relative to the project folder `prefix` of the work tree (as
/// the patch checks name paths), each with why it is protected: "the oracle of property `ID`
/// at REV" (`rev` is the base revision as the caller named it), for a module "… (imported by
/// FILE)". A symbolic link is protected and so is the file it points to, within the tree. One
/// `git ls-tree` asks for every candidate at once (one more per round of links followed, and
/// per round of imports: [`follow_imports`]); blobs are read through the one `cat-file
/// --batch` of [`Git::blob`].
pub(crate) fn protected_scripts(
    git: &Git,
    commit: &str,
    rev: &str,
    prefix: &str,
    properties: &[BaseProperty],
) -> Result<Scripts, PatchError> {
    let top: Vec<String> = prefix
        .split('/')
        .filter(|c| !c.is_empty())
        .map(str::to_string)
        .collect();
    // Each candidate path from the top of the work tree, with the first reason found for it.
    let mut wanted: BTreeMap<String, String> = BTreeMap::new();
    // The files a `python -m` runs (from the top), with the folder it runs in.
    let mut module_roots: BTreeMap<String, Vec<String>> = BTreeMap::new();
    // What `python -m a.b` imports before it runs `a/b.py`: the packages above it.
    let mut module_imports: Vec<Candidate> = Vec::new();
    // Each command with the paths (from the top) it may name: one that names no file of the
    // tree protects nothing, which the caller reports.
    let mut named: Vec<(String, Vec<String>)> = Vec::new();
    // The folders the commands' Python searches before the standard library.
    let mut search_folders: BTreeSet<String> = BTreeSet::new();
    for property in properties {
        for (role, command) in [
            ("oracle", &property.oracle),
            ("generator", &property.generate),
        ] {
            let Some(command) = command else { continue };
            let why = format!("the {role} of property {} at {rev}", property.id);
            let targets = command_targets(command);
            for folder in &targets.search_folders {
                if let Some(full) = parts_from_top(&top, folder) {
                    search_folders.insert(project_folder(prefix, &full));
                }
            }
            let mut paths = Vec::new();
            for path in targets.paths {
                let Some(full) = from_top(&top, &path) else {
                    continue;
                };
                paths.push(full.clone());
                wanted.entry(full).or_insert_with(|| why.clone());
            }
            named.push((format!("the {role} of property {}", property.id), paths));
            for (folder, module, cwd) in targets.modules {
                let (Some(root), Some(first)) =
                    (parts_from_top(&top, &folder), parts_from_top(&top, &cwd))
                else {
                    continue;
                };
                let import = Import {
                    level: 0,
                    module: module.clone(),
                    names: Vec::new(),
                };
                for path in import.candidates(&root, &root) {
                    module_imports.push(Candidate {
                        path: path.join("/"),
                        root: root.clone(),
                        why: why.clone(),
                        importer: Some(format!("python -m {}", module.join("."))),
                        import: None,
                    });
                }
                let mut file = root.clone();
                file.extend(module.iter().cloned());
                let file = file.join("/");
                for name in [
                    format!("{file}.py"),
                    format!("{file}/__init__.py"),
                    format!("{file}/__main__.py"),
                ] {
                    // Its imports are looked for in `sys.path[0]` first: the folder the
                    // command runs in, wherever the module was found.
                    module_roots
                        .entry(name.clone())
                        .or_insert_with(|| first.clone());
                    // Also where the tree holds nothing: a package added beside `file.py`
                    // is what `-m` runs.
                    module_imports.push(Candidate {
                        path: name,
                        root: first.clone(),
                        why: why.clone(),
                        importer: Some(format!("python -m {}", module.join("."))),
                        import: None,
                    });
                }
            }
        }
    }
    let mut protected = BTreeMap::new();
    let mut unfollowed = BTreeMap::new();
    // What the tree holds at each path asked about (`None`: nothing, a folder or a submodule).
    let mut known: BTreeMap<String, Option<(String, String)>> = BTreeMap::new();
    // The regular files named, each a Python script to read if it is one.
    let mut scripts: Vec<Candidate> = Vec::new();
    for _ in 0..=MAX_LINK_HOPS {
        let round: Vec<String> = wanted
            .keys()
            .filter(|p| !known.contains_key(*p))
            .cloned()
            .collect();
        if round.is_empty() {
            break;
        }
        let entries = git.entries(commit, &round)?;
        for path in &round {
            known.insert(path.clone(), entries.get(path).cloned());
        }
        let mut next = BTreeMap::new();
        for (path, (mode, oid)) in entries {
            let Some(why) = wanted.get(&path).cloned() else {
                continue;
            };
            match mode.as_str() {
                "100644" | "100755" => {
                    if unfollowed_language(&path, &git.blob(&oid)?) {
                        unfollowed.insert(project_path(prefix, &path), why.clone());
                    }
                    scripts.push(Candidate {
                        root: module_roots
                            .get(&path)
                            .cloned()
                            .unwrap_or_else(|| folder_of(&path)),
                        path: path.clone(),
                        why: why.clone(),
                        importer: None,
                        import: None,
                    })
                }
                "120000" => {
                    if let Some(target) = link_target(&path, &git.blob(&oid)?) {
                        // Python runs a linked script from its real folder: that folder is
                        // searched first too.
                        if search_folders.contains(&project_folder(prefix, &folder_of(&path))) {
                            search_folders.insert(project_folder(prefix, &folder_of(&target)));
                        }
                        next.entry(target).or_insert_with(|| why.clone());
                    }
                }
                _ => continue,
            }
            protected.insert(project_path(prefix, &path), why);
        }
        for (path, why) in next {
            wanted.entry(path).or_insert(why);
        }
    }
    scripts.extend(module_imports);
    let resolves = |path: &String| matches!(known.get(path), Some(Some(_)));
    let unresolved = named
        .into_iter()
        .filter(|(_, paths)| !paths.iter().any(resolves))
        .map(|(what, _)| what)
        .collect();
    let imported = follow_imports(
        scripts,
        prefix,
        known,
        &mut |paths| git.entries(commit, paths),
        &mut |oid| git.blob(oid),
    )?;
    let imported = imported
        .into_iter()
        .map(|(path, place)| (project_path(prefix, &path), place))
        .filter(|(path, _)| !protected.contains_key(path))
        .collect();
    Ok(Scripts {
        protected,
        imported,
        unresolved,
        unfollowed,
        search_folders,
    })
}

/// The endings of scripts in languages that load other files of the tree (`require`,
/// `import`, `source`, `load`, `use`, `include`) whose loads the gate does not follow: it
/// reads Python's imports only.
const UNFOLLOWED_ENDINGS: &[&str] = &[
    ".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx", ".sh", ".bash", ".zsh", ".ksh",
    ".fish", ".ps1", ".rb", ".pl", ".pm", ".php", ".lua", ".r", ".jl", ".java", ".kt", ".kts",
    ".groovy", ".scala", ".clj", ".ex", ".exs", ".erl", ".tcl", ".go", ".swift", ".dart", ".cs",
    ".fsx", ".hs", ".ml", ".nim", ".cr", ".rkt", ".scm",
];

/// Whether the script at `path` (its `bytes`) is one whose loads the gate does not follow:
/// its name ends in a script language's ending ([`UNFOLLOWED_ENDINGS`], in any case), or it
/// is not named `.py` and starts with a `#!` line that is not Python's (`#!/usr/bin/env
/// node` in `oracle` or `oracle.cli`). A data file a command names (`--config cases.json`)
/// is neither.
fn unfollowed_language(path: &str, bytes: &[u8]) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    if UNFOLLOWED_ENDINGS.iter().any(|e| name.ends_with(e)) {
        return true;
    }
    !name.ends_with(".py") && bytes.starts_with(b"#!") && !has_python_shebang(bytes)
}

/// A folder from the top of the work tree (components, `[]` for the top) as a folder of the
/// project `prefix`: `""` for the project folder itself, `../x` above it.
fn project_folder(prefix: &str, full: &[String]) -> String {
    let path = if full.is_empty() {
        project_path(prefix, "")
    } else {
        project_path(prefix, &format!("{}/", full.join("/")))
    };
    path.trim_end_matches('/').to_string()
}

/// What [`protected_scripts`] found.
#[derive(Debug, Default)]
pub(crate) struct Scripts {
    /// Each file a command names (relative to the project folder) with why it is protected.
    pub protected: BTreeMap<String, String>,
    /// Each place (relative to the project folder) the imports of those scripts may load a
    /// module from, whether the tree holds a file there or not: protected where it is
    /// property code (under `property_paths`), and where a top-level module's place holds
    /// nothing (a file added there takes the place of a module found elsewhere: the standard
    /// library, an installed package); never the code under test, which a fix must be able
    /// to change or add to.
    pub imported: BTreeMap<String, Imported>,
    /// The commands, as "the oracle of property ID", that name no file of the tree: their
    /// edits cannot be protected this way.
    pub unresolved: Vec<String>,
    /// The scripts the commands name (relative to the project folder, each with why it is
    /// protected) that are written in a language whose loads are not followed
    /// ([`unfollowed_language`]): what they load is not protected by their being named.
    pub unfollowed: BTreeMap<String, String>,
    /// The folders (relative to the project folder, `""` for it) that the commands' Python
    /// searches before the standard library ([`Targets::search_folders`]).
    pub search_folders: BTreeSet<String>,
}

/// A place an import of a protected script may load a module from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Imported {
    /// Why it is protected: "WHY (imported by FILE)".
    pub why: String,
    /// Whether the tree at REV holds a file (or a link) there.
    pub in_tree: bool,
    /// Whether it is where a top-level module would be found in the `sys.path[0]` it is
    /// looked for in (`X.py` or `X/__init__.py` directly in that folder): where the tree
    /// holds nothing, the import is answered from elsewhere on `sys.path` (the standard
    /// library, site-packages), and a file added there takes its place. A submodule's place
    /// (`pkg/x.py`) can only be answered from its package's folder: a file added there is
    /// more of that package.
    pub top_level: bool,
}

/// Whether `path` (from the top) is a top-level module's place in the folder `root`:
/// `root/X.py` or `root/X/__init__.py`.
fn is_top_level(path: &str, root: &[String]) -> bool {
    let parts: Vec<&str> = path.split('/').collect();
    let Some(rest) = parts.get(root.len()..) else {
        return false;
    };
    parts.iter().zip(root).all(|(a, b)| a == b)
        && match rest {
            [file] => file.ends_with(".py"),
            [_, init] => *init == "__init__.py",
            _ => false,
        }
}

/// The most Python files (each with the `sys.path[0]` it is read for) whose imports are
/// followed: a bound on the work, however many modules the tree holds.
const MAX_MODULES: usize = 1000;

/// The most paths one `git ls-tree` is asked about (the command line stays short).
const MAX_PATHS_PER_LOOKUP: usize = 1000;

/// The blob entries of a tree at some paths: by path, the mode and blob id.
type Entries = BTreeMap<String, (String, String)>;

/// A file that may be a Python module some protected script runs.
#[derive(Debug, Clone)]
struct Candidate {
    /// From the top of the work tree.
    path: String,
    /// The `sys.path[0]` it is read for, from the top.
    root: Vec<String>,
    /// Why the script that leads to it is protected.
    why: String,
    /// What imports it, as shown (`None` for a script a command names).
    importer: Option<String>,
    /// The import statement it is a candidate of (a number unique within one
    /// [`follow_imports`]), when it is one: when none of an import's candidates is in the
    /// tree, the module comes from elsewhere, and a file added at one of them would take its
    /// place.
    import: Option<usize>,
}

/// The Python modules the scripts `seeds` import, transitively ([`super::imports`]), that the
/// tree holds, each (by its path from the top) with why it is protected: "WHY (imported by
/// FILE)". A seed is read when its name ends in `.py` or its first line is a `#!` that runs
/// Python; every module found is read in turn: each file is read once, and its imports are
/// resolved for each `sys.path[0]` it is reached with, at most [`MAX_MODULES`] times in all
/// (beyond that, imports are no longer followed). `known` holds what the tree holds at the paths
/// already asked about; `lookup` asks about more (one round of imports at a time: one call per
/// [`MAX_PATHS_PER_LOOKUP`] paths), `read` reads a blob. A module that is a symbolic link is
/// protected with its target.
fn follow_imports(
    seeds: Vec<Candidate>,
    prefix: &str,
    mut known: BTreeMap<String, Option<(String, String)>>,
    lookup: &mut dyn FnMut(&[String]) -> Result<Entries, PatchError>,
    read: &mut dyn FnMut(&str) -> Result<Vec<u8>, PatchError>,
) -> Result<BTreeMap<String, Imported>, PatchError> {
    let mut protected: BTreeMap<String, Imported> = BTreeMap::new();
    // The files read, by path and root; the imports of each path, read once.
    let mut done: BTreeSet<(String, Vec<String>)> = BTreeSet::new();
    let mut parsed: BTreeMap<String, Vec<Import>> = BTreeMap::new();
    let mut links: BTreeSet<(String, Vec<String>)> = BTreeSet::new();
    // Numbers the import statements read, for [`Candidate::import`].
    let mut imports_seen = 0usize;
    let mut round = seeds;
    while !round.is_empty() {
        let unknown: BTreeSet<String> = round
            .iter()
            .filter(|c| !known.contains_key(&c.path))
            .map(|c| c.path.clone())
            .collect();
        let unknown: Vec<String> = unknown.into_iter().collect();
        for chunk in unknown.chunks(MAX_PATHS_PER_LOOKUP) {
            let entries = lookup(chunk)?;
            for path in chunk {
                known.insert(path.clone(), entries.get(path).cloned());
            }
        }
        let mut next = Vec::new();
        for candidate in round {
            let Some(Some((mode, oid))) = known.get(&candidate.path) else {
                // A place the tree holds nothing at: a file the patch adds there is what the
                // import then loads — in place of a module found elsewhere (the standard
                // library, the code under test put on `sys.path`), or of one of lower rank
                // (a package `X/__init__.py` beside `X.py`) — so adding it changes the
                // property's code too.
                if let Some(importer) = &candidate.importer {
                    let top_level = is_top_level(&candidate.path, &candidate.root);
                    let place =
                        protected
                            .entry(candidate.path.clone())
                            .or_insert_with(|| Imported {
                                why: format!("{} (imported by {importer})", candidate.why),
                                in_tree: false,
                                top_level,
                            });
                    // Reached from several roots: top-level in any of them is enough.
                    place.top_level |= top_level;
                }
                continue;
            };
            let (mode, oid) = (mode.clone(), oid.clone());
            match mode.as_str() {
                "100644" | "100755" | "120000" => {}
                _ => continue,
            }
            if let Some(importer) = &candidate.importer {
                protected
                    .entry(candidate.path.clone())
                    .or_insert_with(|| Imported {
                        why: format!("{} (imported by {importer})", candidate.why),
                        in_tree: true,
                        top_level: false,
                    });
            }
            if mode == "120000" {
                if links.insert((candidate.path.clone(), candidate.root.clone()))
                    && let Some(target) = link_target(&candidate.path, &read(&oid)?)
                {
                    next.push(Candidate {
                        path: target,
                        importer: candidate
                            .importer
                            .clone()
                            .or_else(|| Some(project_path(prefix, &candidate.path))),
                        ..candidate
                    });
                }
                continue;
            }
            if done.len() >= MAX_MODULES
                || !done.insert((candidate.path.clone(), candidate.root.clone()))
            {
                continue;
            }
            if !parsed.contains_key(&candidate.path) {
                let bytes = read(&oid)?;
                let python = candidate.path.ends_with(".py") || has_python_shebang(&bytes);
                let found = if python {
                    imports(&props::source_text(&candidate.path, &bytes))
                } else {
                    Vec::new()
                };
                parsed.insert(candidate.path.clone(), found);
            }
            let Some(found) = parsed.get(&candidate.path) else {
                continue;
            };
            let folder = folder_of(&candidate.path);
            let shown = project_path(prefix, &candidate.path);
            for import in found {
                imports_seen += 1;
                for path in import.candidates(&folder, &candidate.root) {
                    next.push(Candidate {
                        path: path.join("/"),
                        root: candidate.root.clone(),
                        why: candidate.why.clone(),
                        importer: Some(shown.clone()),
                        import: Some(imports_seen),
                    });
                }
            }
        }
        // Each path once per root, the first reason kept.
        // (Each import keeps all its places, read or not, so that it is known whether the
        // tree holds one; a file is read once whatever leads to it, by `done`.)
        let mut seen = BTreeSet::new();
        next.retain(|c| seen.insert((c.path.clone(), c.root.clone(), c.import)));
        round = next;
    }
    Ok(protected)
}

/// The folder of a path from the top, as components.
fn folder_of(path: &str) -> Vec<String> {
    path.rsplit_once('/')
        .map(|(dir, _)| dir.split('/').map(str::to_string).collect())
        .unwrap_or_default()
}

/// Where the symbolic link at `path` (from the top) whose target is `target` leads, within the
/// tree.
fn link_target(path: &str, target: &[u8]) -> Option<String> {
    let target = String::from_utf8_lossy(target);
    resolve(&folder_of(path), &target)
        .filter(|resolved| resolved.first().is_none_or(|c| c != ".."))
        .map(|resolved| resolved.join("/"))
}

/// A path relative to the project folder (components, maybe starting with `..`) as a path from
/// the top of the work tree, whose folders from the top to the project are `top`; `None` for
/// one that climbs above the top or is the top itself.
fn from_top(top: &[String], path: &[String]) -> Option<String> {
    parts_from_top(top, path)
        .filter(|full| !full.is_empty())
        .map(|full| full.join("/"))
}

/// [`from_top`] as components, the top itself being none.
fn parts_from_top(top: &[String], path: &[String]) -> Option<Vec<String>> {
    let mut full = top.to_vec();
    for part in path {
        if part == ".." {
            full.pop()?;
        } else {
            full.push(part.clone());
        }
    }
    Some(full)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Scripts in other languages, by ending or by a `#!` line that is not Python's, are
    /// unfollowed; Python scripts and data files are not.
    #[test]
    fn unfollowed_languages_by_ending_or_shebang() {
        let node = b"#!/usr/bin/env node\nrequire('./x')\n";
        for (path, bytes, unfollowed) in [
            ("tests/a.js", &b"require('./b')\n"[..], true),
            ("tests/A.MJS", b"", true),
            ("tests/gen.sh", b"", true),
            ("tests/prop.go", b"package main\n", true),
            ("tests/oracle", node, true),
            ("tests/oracle.cli", node, true),
            ("tests/check", b"#!/bin/sh\n", true),
            ("tests/check", b"#!/usr/bin/env python3\n", false),
            ("tests/p.py", node, false),
            ("tests/p.py", b"import x\n", false),
            ("tests/cases.json", b"[]\n", false),
            ("tests/data.csv", b"a,b\n", false),
        ] {
            assert_eq!(
                unfollowed_language(path, bytes),
                unfollowed,
                "{path} {:?}",
                String::from_utf8_lossy(bytes)
            );
        }
    }

    fn words(command: &str) -> Vec<String> {
        split(command)
            .into_iter()
            .map(|t| match t {
                Token::Word(w) => w,
                Token::Op(op) => format!("<{op}>"),
            })
            .collect()
    }

    fn paths(command: &str) -> Vec<String> {
        command_paths(command)
            .into_iter()
            .map(|p| p.join("/"))
            .collect()
    }

    /// [`follow_imports`] over an in-memory tree of `(path, text)` (a text `-> T` is a
    /// symbolic link to `T`), from the scripts `seeds` (each read with its folder as root, or
    /// `(path, root)`); the modules it protects with why, and how many lookups it made.
    fn follow(
        files: &[(&str, &str)],
        seeds: &[(&str, Option<&str>)],
    ) -> (Vec<(String, String)>, usize, usize) {
        let tree: BTreeMap<String, (String, String)> = files
            .iter()
            .map(|(path, text)| {
                let mode = if text.starts_with("-> ") {
                    "120000"
                } else {
                    "100644"
                };
                (path.to_string(), (mode.to_string(), path.to_string()))
            })
            .collect();
        let texts: BTreeMap<String, String> = files
            .iter()
            .map(|(path, text)| {
                let text = text.strip_prefix("-> ").unwrap_or(text);
                (path.to_string(), text.to_string())
            })
            .collect();
        let parts = |s: &str| -> Vec<String> {
            s.split('/')
                .filter(|c| !c.is_empty())
                .map(str::to_string)
                .collect()
        };
        let seeds = seeds
            .iter()
            .map(|(path, root)| Candidate {
                path: path.to_string(),
                root: root.map_or_else(|| folder_of(path), parts),
                why: "the oracle of property p at main".to_string(),
                importer: None,
                import: None,
            })
            .collect();
        let mut lookups = 0;
        let mut reads: BTreeMap<String, usize> = BTreeMap::new();
        let found = follow_imports(
            seeds,
            "",
            BTreeMap::new(),
            &mut |paths| {
                lookups += 1;
                Ok(paths
                    .iter()
                    .filter_map(|p| tree.get(p).map(|e| (p.clone(), e.clone())))
                    .collect())
            },
            &mut |oid| {
                *reads.entry(oid.to_string()).or_default() += 1;
                Ok(texts.get(oid).cloned().unwrap_or_default().into_bytes())
            },
        )
        .expect("followed");
        let most_reads = reads.values().copied().max().unwrap_or(0);
        // The modules the tree holds; where an import found none, see `absent`.
        for (path, place) in &found {
            assert_eq!(place.in_tree, tree.contains_key(path), "{path}");
        }
        let present = found
            .into_iter()
            .filter(|(path, _)| tree.contains_key(path))
            .map(|(path, place)| (path, place.why))
            .collect();
        (present, lookups, most_reads)
    }

    /// The places [`follow_imports`] protects where the tree holds nothing.
    fn absent(files: &[(&str, &str)], seeds: &[(&str, Option<&str>)]) -> Vec<String> {
        let texts: BTreeMap<String, String> = files
            .iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect();
        let seeds = seeds
            .iter()
            .map(|(path, _)| Candidate {
                path: path.to_string(),
                root: folder_of(path),
                why: "w".to_string(),
                importer: None,
                import: None,
            })
            .collect();
        follow_imports(
            seeds,
            "",
            BTreeMap::new(),
            &mut |paths| {
                Ok(paths
                    .iter()
                    .filter(|p| texts.contains_key(*p))
                    .map(|p| (p.clone(), ("100644".to_string(), p.clone())))
                    .collect())
            },
            &mut |oid| Ok(texts.get(oid).cloned().unwrap_or_default().into_bytes()),
        )
        .expect("followed")
        .into_keys()
        .filter(|p| !texts.contains_key(p))
        .collect()
    }

    /// Every place an import may load its module from is protected, the tree holding a file
    /// there or not: where it finds its module nowhere in the tree (the standard library, a
    /// folder put on `sys.path` at run time), a new file would take its place, and beside a
    /// module the tree holds, a package of its name would (`t/oracle/__init__.py` beside
    /// `t/oracle.py`).
    #[test]
    fn a_module_the_tree_does_not_hold_protects_the_places_that_would_shadow_it() {
        let found = absent(
            &[
                (
                    "t/prop_add.py",
                    "import sys\nsys.path.insert(0, 'src')\nfrom calc import add\nfrom oracle import serve\n",
                ),
                ("t/oracle.py", "def serve(check):\n    return 0\n"),
            ],
            &[("t/prop_add.py", None)],
        );
        assert_eq!(
            found,
            [
                "t/calc.py",
                "t/calc/__init__.py",
                "t/calc/add.py",
                "t/calc/add/__init__.py",
                "t/oracle/__init__.py",
                "t/oracle/serve.py",
                "t/oracle/serve/__init__.py",
                "t/sys.py",
                "t/sys/__init__.py"
            ]
        );
    }

    fn why(importer: &str) -> String {
        format!("the oracle of property p at main (imported by {importer})")
    }

    #[test]
    fn imports_are_followed_transitively_from_the_script_folder() {
        let (found, lookups, _) = follow(
            &[
                (
                    "t/prop_add.py",
                    "import sys\nfrom oracle import serve\nimport helpers.num as n\n",
                ),
                ("t/oracle.py", "import json\n"),
                (
                    "t/helpers/__init__.py",
                    "from .num import add\nfrom . import fmt\n",
                ),
                ("t/helpers/num.py", "from ..oracle import x\n"),
                ("t/helpers/fmt.py", "def f(): pass\n"),
                ("t/helpers/unused.py", ""),
                ("oracle.py", "# at the root, not on sys.path\n"),
                ("t/json/x.py", ""),
            ],
            &[("t/prop_add.py", None)],
        );
        assert_eq!(
            found,
            [
                ("t/helpers/__init__.py".to_string(), why("t/prop_add.py")),
                ("t/helpers/fmt.py".to_string(), why("t/helpers/__init__.py")),
                ("t/helpers/num.py".to_string(), why("t/prop_add.py")),
                ("t/oracle.py".to_string(), why("t/prop_add.py")),
            ]
        );
        // One lookup per round of imports.
        assert_eq!(lookups, 3);
    }

    #[test]
    fn a_cycle_of_imports_ends_and_each_file_is_read_once() {
        let (found, _, reads) = follow(
            &[
                ("p.py", "import a\n"),
                ("a.py", "import b\n"),
                ("b.py", "import a\nfrom p import q\n"),
            ],
            &[("p.py", None)],
        );
        // The script itself is imported back by b.py (a command names it, which protects
        // it under its own reason first in `protected_scripts`).
        assert_eq!(
            found,
            [
                ("a.py".to_string(), why("p.py")),
                ("b.py".to_string(), why("a.py")),
                ("p.py".to_string(), why("b.py")),
            ]
        );
        assert_eq!(reads, 1);
    }

    #[test]
    fn a_module_run_with_dash_m_imports_from_the_folder_it_runs_in() {
        // `cd svc && python3 -m props.add`: `props/add.py` is read with `svc` as its root.
        let (found, _, _) = follow(
            &[
                (
                    "svc/props/add.py",
                    "from props import shared\nimport util\n",
                ),
                ("svc/props/shared.py", ""),
                ("svc/util.py", ""),
                ("svc/props/util.py", "# not on sys.path\n"),
            ],
            &[("svc/props/add.py", Some("svc"))],
        );
        let names: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(names, ["svc/props/shared.py", "svc/util.py"]);
    }

    #[test]
    fn shebang_scripts_are_read_and_other_files_are_not() {
        let (found, _, _) = follow(
            &[
                ("bin/check", "#!/usr/bin/env python3\nimport helper\n"),
                ("bin/helper.py", ""),
                ("bin/run.sh", "#!/bin/sh\nimport other\n"),
                ("bin/other.py", ""),
                ("bin/data.json", "import other\n"),
            ],
            &[
                ("bin/check", None),
                ("bin/run.sh", None),
                ("bin/data.json", None),
            ],
        );
        let names: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(names, ["bin/helper.py"]);
    }

    #[test]
    fn a_module_that_is_a_link_protects_its_target() {
        let (found, _, _) = follow(
            &[
                ("t/p.py", "import shared\n"),
                ("t/shared.py", "-> ../lib/shared.py"),
                ("lib/shared.py", "import deep\n"),
                ("t/deep.py", ""),
                ("t/loop.py", "-> loop.py"),
            ],
            &[("t/p.py", None)],
        );
        let names: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(names, ["lib/shared.py", "t/deep.py", "t/shared.py"]);
    }

    #[test]
    fn the_work_is_bounded() {
        // A chain of modules longer than the bound: the first MAX_MODULES files are read.
        let texts: Vec<(String, String)> = (0..MAX_MODULES + 10)
            .map(|i| (format!("m{i}.py"), format!("import m{}\n", i + 1)))
            .collect();
        let files: Vec<(&str, &str)> = texts
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        let (found, _, _) = follow(&files, &[("m0.py", None)]);
        assert_eq!(found.len(), MAX_MODULES);
    }

    #[test]
    fn words_split_as_a_shell_splits_them() {
        assert_eq!(words("python3  p.py\targ"), ["python3", "p.py", "arg"]);
        assert_eq!(words(r#"a 'b c' "d e" f\ g"#), ["a", "b c", "d e", "f g"]);
        assert_eq!(words(r#""a\"b\$c\d" 'x\y'"#), ["a\"b$c\\d", "x\\y"]);
        assert_eq!(words("a''b '' \"\""), ["ab", "", ""]);
        assert_eq!(words("a \\\nb"), ["a", "b"]);
        assert_eq!(words("a # b c\nd"), ["a", "<\n>", "d"]);
        assert_eq!(words("a#b"), ["a#b"]);
        assert_eq!(
            words("cd x&&python3 y.py||z;w|v&u"),
            [
                "cd", "x", "<&&>", "python3", "y.py", "<||>", "z", "<;>", "w", "<|>", "v", "<&>",
                "u"
            ]
        );
        assert_eq!(
            words("p <in.json >>out 2>&1"),
            ["p", "<<>", "in.json", "<>>>", "out", "2", "<>&>", "1"]
        );
        assert_eq!(
            words("echo $(cat a b) ${X:-a b} `x y`"),
            ["echo", "$(cat a b)", "${X:-a b}", "`x y`"]
        );
        // Unterminated quotes run to the end.
        assert_eq!(words("a 'b c"), ["a", "b c"]);
        assert_eq!(words("a \"b c\\"), ["a", "b c\\"]);
        assert_eq!(words("a\\"), ["a\\"]);
    }

    #[test]
    fn paths_follow_cd_assignments_env_and_python_modules() {
        assert_eq!(
            paths("python3 tests/properties/prop_add.py"),
            ["python3", "tests/properties/prop_add.py"]
        );
        assert_eq!(
            paths("cd crates/gate/demo && python3 merge_fixed.py"),
            [
                "crates/gate/demo/python3",
                "crates/gate/demo/merge_fixed.py"
            ]
        );
        assert_eq!(
            paths("cd a; cd ../b && sh ./run.sh x/../y.sh"),
            ["b/sh", "b/run.sh", "b/y.sh"]
        );
        assert_eq!(
            paths("PYTHONHASHSEED=0 DATA=d.json python3 -u p.py --config=c.toml"),
            [
                "0",
                "d.json",
                "python3",
                "-u",
                "p.py",
                "--config=c.toml",
                "c.toml"
            ]
        );
        assert_eq!(
            paths("env -i -u HOME X=1 -C sub python3 p.py"),
            ["sub/1", "sub/python3", "sub/p.py"]
        );
        assert_eq!(
            paths("python3 -m tests.props.add"),
            [
                "python3",
                "tests/props/add.py",
                "tests/props/add/__init__.py",
                "tests/props/add/__main__.py"
            ]
        );
        assert_eq!(
            paths("python -mpkg"),
            ["python", "pkg.py", "pkg/__init__.py", "pkg/__main__.py"]
        );
        // `-m` of another program is a word like any other.
        assert_eq!(paths("git commit -m x"), ["git", "commit", "-m", "x"]);
        // A subshell's `cd` ends with it.
        assert_eq!(paths("(cd a && p x) && q y"), ["a/p", "a/x", "q", "y"]);
        // Above the project folder, and where the folder is unknown.
        assert_eq!(
            paths("python3 ../shared/o.py"),
            ["python3", "../shared/o.py"]
        );
        assert_eq!(paths("cd /srv && python3 o.py"), Vec::<String>::new());
        assert_eq!(paths("cd && o.py; cd - && p.py"), Vec::<String>::new());
        assert_eq!(
            paths("cat < in.json | python3 o.py"),
            ["cat", "in.json", "python3", "o.py"]
        );
        assert_eq!(paths("/usr/bin/python3 ~/o.py ./a/./b.py"), ["a/b.py"]);
    }

    /// The folders Python searches before the standard library: the script's folder, else
    /// (`-m`, `-c`, `-`, stdin) where the command runs, and each `PYTHONPATH` folder (`.`
    /// too); none for another program.
    #[test]
    fn search_folders_are_where_python_looks_first() {
        let folders = |command: &str| -> Vec<String> {
            command_targets(command)
                .search_folders
                .iter()
                .map(|f| f.join("/"))
                .collect()
        };
        assert_eq!(folders("python3 -m tests.oracles.invoice"), [""]);
        assert_eq!(folders("cd checks && python3 -Bm props.add"), ["checks"]);
        assert_eq!(folders("python3 tests/o.py arg.py"), ["tests"]);
        assert_eq!(folders("python3 -W ignore -X dev o.py"), [""]);
        assert_eq!(
            folders("cd sub && PYTHONPATH=lib:.:../x python3 -u t/o.py"),
            ["sub/t", "sub/lib", "sub", "x"]
        );
        assert_eq!(folders("env PYTHONPATH=src python3 -m pkg"), ["", "src"]);
        assert_eq!(folders("sh -c 'cd a && python3 -m m'"), ["a"]);
        // `-c`, `-` and a script on stdin run with the folder they start in first.
        assert_eq!(folders("cd a && python3 -c 'import x' o.py"), ["a"]);
        assert_eq!(folders("python3 - < o.py"), [""]);
        assert_eq!(folders("PYTHONPATH=lib python3 < o.py"), ["", "lib"]);
        assert_eq!(folders("node o.js"), Vec::<String>::new());
        // A `PYTHONPATH` exported, or assigned alone, counts for the commands after it, in
        // nested shells too; `$PYTHONPATH` in its value is no folder.
        assert_eq!(
            folders("export PYTHONPATH=lib; python3 -m pkg"),
            ["", "lib"]
        );
        assert_eq!(
            folders("cd a && export PYTHONPATH=../lib && cd b && python3 t.py"),
            ["a/b", "lib"]
        );
        assert_eq!(
            folders("PYTHONPATH=src; export PYTHONPATH; python3 -m x"),
            ["", "src"]
        );
        assert_eq!(
            folders("export PYTHONPATH=$PYTHONPATH:lib && python3 -m x"),
            ["", "lib"]
        );
        assert_eq!(
            folders("export PYTHONPATH=lib && sh -c 'python3 -m x'"),
            ["", "lib"]
        );
        assert_eq!(folders("export PYTHONPATH=lib"), Vec::<String>::new());
        // `-P` and `-I` keep the first folder off `sys.path`; `-E` and `-I` ignore
        // `PYTHONPATH`, wherever it was set. `PYTHONSAFEPATH` is not read: a Python before
        // 3.11 searches that folder anyway.
        let none = Vec::<String>::new();
        assert_eq!(folders("python3 -I t/o.py"), none);
        assert_eq!(folders("python3 -IBm pkg"), none);
        assert_eq!(folders("PYTHONPATH=lib python3 -P -m pkg"), ["lib"]);
        assert_eq!(folders("PYTHONPATH=lib python3 -I -m pkg"), none);
        assert_eq!(folders("PYTHONPATH=lib python3 -E t/o.py"), ["t"]);
        assert_eq!(folders("export PYTHONPATH=lib; python3 -sE t/o.py"), ["t"]);
        assert_eq!(folders("PYTHONSAFEPATH=1 python3 t/o.py"), ["t"]);
        assert_eq!(
            folders("env PYTHONSAFEPATH=1 PYTHONPATH=lib python3 -m x"),
            ["", "lib"]
        );
        // An option's argument, or what Python runs, is no option of Python's.
        assert_eq!(folders("python3 -W I t/o.py"), ["t"]);
        assert_eq!(folders("python3 t/o.py -I"), ["t"]);
        assert_eq!(folders("python3 -c 'import x' -I"), [""]);
    }

    /// The spellings a red-team audit found unread: Python's short options run together, a
    /// shell's `-c` command line, and `python -m` under `PYTHONPATH`.
    #[test]
    fn paths_follow_option_clusters_shell_command_lines_and_pythonpath() {
        let module = |folder: &str, name: &str| {
            [".py", "/__init__.py", "/__main__.py"].map(|end| format!("{folder}{name}{end}"))
        };
        let has_all =
            |found: &[String], wanted: &[String]| wanted.iter().all(|w| found.contains(w));
        let found = paths("cd tests/properties && python3 -Bm prop_add");
        assert!(
            has_all(&found, &module("tests/properties/", "prop_add")),
            "{found:?}"
        );
        let found = paths("python3 -Bmprop_add");
        assert!(has_all(&found, &module("", "prop_add")), "{found:?}");
        // `-c` and `-X` take an argument: an `m` after them is not the module option.
        assert!(!paths("python3 -Xmx").iter().any(|p| p.starts_with("x.py")));
        let found = paths("sh -c 'cd tests/properties && exec python3 prop_add.py'");
        assert!(
            found.contains(&"tests/properties/prop_add.py".to_string()),
            "{found:?}"
        );
        let found = paths("cd t && bash -ec \"python3 o.py\"");
        assert!(found.contains(&"t/o.py".to_string()), "{found:?}");
        let found = paths("PYTHONPATH=tests/properties python3 -m prop_add");
        assert!(
            has_all(&found, &module("tests/properties/", "prop_add")),
            "{found:?}"
        );
        assert!(has_all(&found, &module("", "prop_add")), "{found:?}");
        let found = paths("env PYTHONPATH=a:b python3 -m m");
        assert!(has_all(&found, &module("a/", "m")) && has_all(&found, &module("b/", "m")));
        // Shells inside shells are read to a bound.
        let nested = (0..10).fold("python3 deep.py".to_string(), |line, _| {
            format!("sh -c {}", quote(&line))
        });
        assert!(!paths(&nested).contains(&"deep.py".to_string()));
        let shallow = (0..3).fold("python3 deep.py".to_string(), |line, _| {
            format!("sh -c {}", quote(&line))
        });
        assert!(paths(&shallow).contains(&"deep.py".to_string()));
    }

    /// `s` as one word for `sh`, in single quotes.
    fn quote(s: &str) -> String {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod invariants {
    use super::*;
    use proptest::prelude::*;

    /// Whether `word` is `text`'s characters in order, some left out: a word keeps what it
    /// read and drops only quotes and escaping backslashes.
    fn is_subsequence(word: &str, text: &str) -> bool {
        let mut rest = text.chars();
        word.chars().all(|c| rest.any(|t| t == c))
    }

    fn quoted(word: &str) -> String {
        format!("'{}'", word.replace('\'', "'\\''"))
    }

    proptest! {
        /// Any text splits without a panic, into words that are its own characters in order.
        #[test]
        fn splitting_never_panics_and_words_come_from_the_text(
            text in "[a-z./ '\"\\\\$(){}`#&|;<>=\n\t-]{0,40}",
        ) {
            for token in split(&text) {
                if let Token::Word(w) = token {
                    prop_assert!(is_subsequence(&w, &text), "{:?} from {:?}", w, text);
                }
            }
            let _ = command_paths(&text);
        }

        /// Words quoted in single quotes and joined by blanks split back into themselves.
        #[test]
        fn single_quoted_words_split_back(words in proptest::collection::vec(".{0,8}", 0..6)) {
            let text = words.iter().map(|w| quoted(w)).collect::<Vec<_>>().join(" ");
            let back: Vec<Token> = words.iter().cloned().map(Token::Word).collect();
            prop_assert_eq!(split(&text), back);
        }

        /// Where `sh` itself splits the text (no expansions in it to tell apart: no `$`,
        /// `` ` ``, globs or `~`), the words are the shell's.
        #[test]
        fn words_are_the_shells_words(text in "[a-z '\"\\\t]{0,24}") {
            // `printf` with no word would print one empty one: a first word is put before.
            let script = format!("set -- {text}\nprintf '%s\\0' first \"$@\"");
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(&script)
                .output()
                .expect("sh runs");
            // A text the shell refuses (an unterminated quote) has no words to compare.
            if out.status.success() {
                let shell: Vec<Token> = String::from_utf8_lossy(&out.stdout)
                    .split_terminator('\0')
                    .skip(1)
                    .map(|w| Token::Word(w.to_string()))
                    .collect();
                prop_assert_eq!(split(&text), shell, "{:?}", text);
            }
        }

        /// Every path found is relative and normal: no empty, `.` or absolute component, and
        /// `..` only at its start.
        #[test]
        fn paths_are_relative_and_normal(text in "[a-z./ ;&|()=-]{0,40}") {
            for path in command_paths(&text) {
                prop_assert!(!path.is_empty());
                let ups = path.iter().take_while(|c| *c == "..").count();
                for c in &path[ups..] {
                    prop_assert!(!c.is_empty() && c != "." && c != ".." && !c.contains('/'));
                }
            }
        }
    }
}
