//! Gaming moves in Python property code and pytest configuration: each move is one unsigned
//! commit in a real git repository, judged by `check_patch`, and must block with its rule; each
//! ordinary edit beside it must pass. The Python the gate reads is the Python pytest runs: lines
//! end at `\r` too, a logical line runs over brackets and backslashes, and a property counts
//! only where pytest collects it.

mod patch_support;

use std::collections::BTreeSet;

use patch_support::Repo;

const INVOICE: &str = "import contextlib
import pytest
from hypothesis import given, settings, strategies as st

from invoice import cached_total, fresh_sum


def helper(lines):
    return sum(l[\"cents\"] * l[\"qty\"] for l in lines)


@settings(max_examples=200)
@given(st.lists(st.integers(min_value=0, max_value=1000)))
def test_cached_total_equals_fresh_sum(xs):
    total = cached_total(xs)
    fresh = fresh_sum(xs)
    assert total == fresh


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_roundtrip(x):
    y = float(repr(x))
    assert y == x
";

const ALIAS: &str = "import hypothesis as hp
from hypothesis import strategies as st
from hypothesis import given as G

from invoice import cached_total


@hp.settings(max_examples=300)
@hp.given(st.lists(st.integers(min_value=0, max_value=9)))
def test_total_alias(xs):
    assert cached_total(xs) == sum(xs)


@G(st.lists(st.integers()))
def test_total_renamed_given(xs):
    assert cached_total(xs) == sum(xs)
";

const FILTERED: &str = "from hypothesis import given, strategies as st


@given(
    st.integers().filter(
        lambda v: v > 0,
    )
)
def test_positive(v):
    assert v > 0
";

const PROPERTY: &str = "def test_cached_total_equals_fresh_sum(xs):\n";
const BODY: &str = "    total = cached_total(xs)\n";
const EQUALITY: &str = "    assert total == fresh\n";

/// The base: the property files, and a policy that reads everything under `tests/`.
fn base() -> (Repo, String) {
    let repo = Repo::new();
    repo.write(
        "freezegate.toml",
        "[policy]\nproperty_paths = [\"tests/**\"]\nmin_cases = 50\n",
    );
    repo.write("tests/test_invoice.py", INVOICE);
    repo.write("tests/test_alias.py", ALIAS);
    repo.write("tests/test_filtered.py", FILTERED);
    repo.write("invoice.py", "def cached_total(xs):\n    return sum(xs)\n");
    let base = repo.commit("base");
    (repo, base)
}

/// Replaces `from` (which must be there) by `to` in a file of the repository.
fn edit(repo: &Repo, path: &str, from: &str, to: &str) {
    let full = repo.path().join(path);
    let text = std::fs::read_to_string(&full).unwrap();
    assert!(text.contains(from), "{path} lacks {from:?}");
    std::fs::write(full, text.replacen(from, to, 1)).unwrap();
}

type Edit = Box<dyn Fn(&Repo)>;

/// An edit of `tests/test_invoice.py`.
fn invoice(from: &'static str, to: &'static str) -> Edit {
    Box::new(move |repo| edit(repo, "tests/test_invoice.py", from, to))
}

/// A new file.
fn new_file(path: &'static str, text: &'static str) -> Edit {
    Box::new(move |repo| repo.write(path, text))
}

/// The rules that fire on the one commit `change` makes on the base, each with whether it
/// blocks.
fn judge(change: &Edit) -> BTreeSet<(String, bool)> {
    let (repo, base) = base();
    change(&repo);
    repo.commit("the move");
    repo.check(&base)
        .findings
        .iter()
        .map(|f| (f.rule.clone(), f.blocking))
        .collect()
}

/// The gaming moves, each with the rule that must block it.
fn moves() -> Vec<(&'static str, &'static str, Edit)> {
    vec![
        // A lone `\r` ends a Python line: what follows a comment's `\r` is code.
        (
            "code after a carriage return in a comment",
            "early-return",
            invoice(
                BODY,
                "    # fast path for short lists\r    if len(xs) > 3: return\n    total = cached_total(xs)\n",
            ),
        ),
        (
            "a decorator after a carriage return in a comment",
            "skip-added",
            invoice(
                "@settings(max_examples=200)\n",
                "# see issue 12\r@pytest.mark.skip\n@settings(max_examples=200)\n",
            ),
        ),
        // UTF-7 decodes `+AAo-` to a newline.
        (
            "a UTF-7 coding declaration",
            "source-encoding",
            Box::new(|repo: &Repo| {
                edit(
                    repo,
                    "tests/test_invoice.py",
                    "import contextlib\n",
                    "# coding: utf-7\nimport contextlib\n",
                );
                edit(
                    repo,
                    "tests/test_invoice.py",
                    BODY,
                    "    # fast path+AAo-    if len(xs) > 3: return\n    total = cached_total(xs)\n",
                );
            }),
        ),
        (
            "a coding declaration on the second line",
            "source-encoding",
            invoice(
                "import contextlib\n",
                "#!/usr/bin/env python\n# vim: set fileencoding=unicode_escape :\nimport contextlib\n",
            ),
        ),
        // Properties pytest no longer collects.
        (
            "a property indented under `if False:`",
            "property-removed",
            invoice(
                "@settings(max_examples=200)\n@given(st.lists(st.integers(min_value=0, max_value=1000)))\ndef test_cached_total_equals_fresh_sum(xs):\n    total = cached_total(xs)\n    fresh = fresh_sum(xs)\n    assert total == fresh\n",
                "if False:\n    @settings(max_examples=200)\n    @given(st.lists(st.integers(min_value=0, max_value=1000)))\n    def test_cached_total_equals_fresh_sum(xs):\n        total = cached_total(xs)\n        fresh = fresh_sum(xs)\n        assert total == fresh\n",
            ),
        ),
        (
            "a property moved into a class pytest does not collect",
            "property-removed",
            invoice(
                "@settings(max_examples=200)\n@given(st.lists(st.integers(min_value=0, max_value=1000)))\ndef test_cached_total_equals_fresh_sum(xs):\n    total = cached_total(xs)\n    fresh = fresh_sum(xs)\n    assert total == fresh\n",
                "class Helpers:\n    @settings(max_examples=200)\n    @given(st.lists(st.integers(min_value=0, max_value=1000)))\n    def test_cached_total_equals_fresh_sum(xs):\n        total = cached_total(xs)\n        fresh = fresh_sum(xs)\n        assert total == fresh\n",
            ),
        ),
        (
            "a later definition of the same name",
            "property-removed",
            invoice(
                "    assert y == x\n",
                "    assert y == x\n\n\n@given(st.lists(st.integers()))\ndef test_cached_total_equals_fresh_sum(xs):\n    pass\n",
            ),
        ),
        // Later bindings the module's code makes without naming the property in a binding
        // statement.
        (
            "a star import after the property",
            "property-removed",
            invoice(
                "    assert y == x\n",
                "    assert y == x\n\n\nfrom invoice_cases import *\n",
            ),
        ),
        (
            "the module's namespace updated from a mapping after the property",
            "property-removed",
            invoice(
                "    assert y == x\n",
                "    assert y == x\n\n\nglobals().update(load_overrides())\n",
            ),
        ),
        (
            "`exec` at module level after the property",
            "property-removed",
            invoice(
                "    assert y == x\n",
                "    assert y == x\n\n\nexec(open(\"cases.py\").read())\n",
            ),
        ),
        (
            "`exec` in the module's namespace from a function",
            "property-removed",
            invoice(
                "def helper(lines):\n",
                "def load(source):\n    exec(source, globals())\n\n\ndef helper(lines):\n",
            ),
        ),
        (
            "`exec` of a `global` statement in a helper class's body",
            "property-removed",
            invoice(
                "    assert y == x\n",
                "    assert y == x\n\n\nclass Helpers:\n    exec(\"global test_roundtrip\\ntest_roundtrip = None\")\n",
            ),
        ),
        (
            "the module's namespace through an alias",
            "property-removed",
            invoice(
                "    assert y == x\n",
                "    assert y == x\n\n\nnamespace = globals()\nnamespace[\"test_roundtrip\"] = None\n",
            ),
        ),
        (
            "the module through `import sys as s`",
            "property-removed",
            invoice(
                "    assert y == x\n",
                "    assert y == x\n\n\nimport sys as s\ndel s.modules[__name__].test_roundtrip\n",
            ),
        ),
        (
            "a `case` capture of the property's name",
            "property-removed",
            invoice(
                "    assert y == x\n",
                "    assert y == x\n\n\nmatch [1, None]:\n    case [_, test_roundtrip]:\n        pass\n",
            ),
        ),
        (
            "the file renamed out of pytest's file pattern",
            "property-removed",
            Box::new(|repo: &Repo| {
                repo.git(&["mv", "tests/test_invoice.py", "tests/invoice_checks.py"]);
            }),
        ),
        (
            "a property renamed under `import hypothesis as hp`",
            "property-removed",
            Box::new(|repo: &Repo| {
                edit(
                    repo,
                    "tests/test_alias.py",
                    "def test_total_alias",
                    "def _test_total_alias",
                );
            }),
        ),
        (
            "a property renamed under `from hypothesis import given as G`",
            "property-removed",
            Box::new(|repo: &Repo| {
                edit(
                    repo,
                    "tests/test_alias.py",
                    "def test_total_renamed_given",
                    "def check_total_renamed_given",
                );
            }),
        ),
        (
            "`__test__ = False` in the module",
            "skip-added",
            invoice(
                "    assert y == x\n",
                "    assert y == x\n\n__test__ = False\n",
            ),
        ),
        // Tautologies.
        (
            "`assert True or …`",
            "assertion-vacuous",
            invoice(EQUALITY, "    assert True or total == fresh\n"),
        ),
        (
            "an assertion of a non-empty tuple",
            "assertion-vacuous",
            invoice(EQUALITY, "    assert (total == fresh, \"totals differ\")\n"),
        ),
        // Statements over several lines.
        (
            "`except (` over several lines",
            "catch-broadened",
            invoice(
                EQUALITY,
                "    try:\n        assert total == fresh\n    except (\n        AssertionError\n    ):\n        pass\n",
            ),
        ),
        (
            "`suppress(` over several lines",
            "catch-broadened",
            invoice(
                EQUALITY,
                "    with contextlib.suppress(\n        AssertionError\n    ):\n        assert total == fresh\n",
            ),
        ),
        (
            "a `return` on a backslash continuation at column 0",
            "early-return",
            invoice(
                BODY,
                "    if len(xs) > 3: \\\nreturn\n    total = cached_total(xs)\n",
            ),
        ),
        (
            "a `return` after a bracket closed at column 0",
            "early-return",
            invoice(
                BODY,
                "    if (len(xs) > 3\n): return\n    total = cached_total(xs)\n",
            ),
        ),
        (
            "an equality replaced by an assertion that compares nothing",
            "assertion-weakened",
            invoice(EQUALITY, "    assert isinstance(total, int)\n"),
        ),
        // pytest configuration under property_paths.
        (
            "pytest.ini deselecting with -k",
            "skip-added",
            new_file(
                "tests/pytest.ini",
                "[pytest]\naddopts = -k \"not cached_total\"\n",
            ),
        ),
        (
            "pyproject.toml deselecting with -k",
            "skip-added",
            new_file(
                "tests/pyproject.toml",
                "[tool.pytest.ini_options]\naddopts = \"-k \\\"not cached_total\\\"\"\n",
            ),
        ),
        (
            "setup.cfg ignoring the file",
            "skip-added",
            new_file(
                "tests/setup.cfg",
                "[tool:pytest]\naddopts = --ignore=tests/test_invoice.py\n",
            ),
        ),
        (
            "tox.ini selecting a marker over two lines",
            "skip-added",
            new_file(
                "tests/tox.ini",
                "[pytest]\naddopts =\n    -m \"not hypothesis\"\n",
            ),
        ),
        (
            "pytest.ini with another python_files",
            "skip-added",
            new_file("tests/pytest.ini", "[pytest]\npython_files = check_*.py\n"),
        ),
        (
            "conftest.py dropping collected items",
            "skip-added",
            new_file(
                "tests/conftest.py",
                "def pytest_collection_modifyitems(config, items):\n    items[:] = [i for i in items if \"cached_total\" not in i.name]\n",
            ),
        ),
        (
            "conftest.py with collect_ignore",
            "skip-added",
            new_file(
                "tests/conftest.py",
                "collect_ignore = [\"test_invoice.py\"]\n",
            ),
        ),
        (
            "conftest.py setting the marker expression",
            "skip-added",
            new_file(
                "tests/conftest.py",
                "import pytest\ndef pytest_configure(config):\n    config.option.markexpr = \"not hypothesis\"\n",
            ),
        ),
    ]
}

/// Ordinary edits beside the moves: none may be a finding.
fn harmless() -> Vec<(&'static str, Edit)> {
    vec![
        (
            "a helper defined inside a property",
            invoice(
                BODY,
                "    def double(v):\n        return 2 * v\n\n    total = cached_total(xs)\n    assert double(total) == 2 * total\n",
            ),
        ),
        (
            "a one-line helper and a class inside a property",
            invoice(
                BODY,
                "    def double(v): return 2 * v\n    class Box:\n        def get(self):\n            return 1\n    total = cached_total(xs)\n",
            ),
        ),
        (
            "a plain variable named cases",
            invoice(
                "def helper(lines):\n",
                "CASES = [(1, 2), (3, 4)]\ncases = 10\n\n\ndef helper(lines):\n",
            ),
        ),
        (
            "the file converted to CRLF line ends",
            Box::new(|repo: &Repo| {
                repo.write("tests/test_invoice.py", &INVOICE.replace('\n', "\r\n"))
            }),
        ),
        (
            "a UTF-8 coding declaration",
            invoice(
                "import contextlib\n",
                "# -*- coding: utf-8 -*-\nimport contextlib\n",
            ),
        ),
        (
            "an equality assertion split over lines",
            invoice(
                EQUALITY,
                "    assert (\n        total\n        == fresh\n    ), \"totals differ\"\n",
            ),
        ),
        (
            "an isinstance assertion added beside the equality",
            invoice(
                EQUALITY,
                "    assert isinstance(total, int)\n    assert total == fresh\n",
            ),
        ),
        (
            "a comparison of two tuples",
            invoice(EQUALITY, "    assert (total, 1) == (fresh, 1)\n"),
        ),
        (
            "`except (` over several lines naming a narrow error",
            invoice(
                BODY,
                "    try:\n        total = cached_total(xs)\n    except (\n        ValueError,\n        KeyError,\n    ):\n        total = 0\n",
            ),
        ),
        (
            "the lambda of an existing filter changed",
            Box::new(|repo: &Repo| {
                edit(
                    repo,
                    "tests/test_filtered.py",
                    "lambda v: v > 0,",
                    "lambda v: v >= 1,",
                )
            }),
        ),
        (
            "a property moved into a Test class",
            invoice(
                "@settings(max_examples=200)\n@given(st.lists(st.integers(min_value=0, max_value=1000)))\ndef test_cached_total_equals_fresh_sum(xs):\n    total = cached_total(xs)\n    fresh = fresh_sum(xs)\n    assert total == fresh\n",
                "class TestInvoice:\n    @settings(max_examples=200)\n    @given(st.lists(st.integers(min_value=0, max_value=1000)))\n    def test_cached_total_equals_fresh_sum(self, xs):\n        total = cached_total(xs)\n        fresh = fresh_sum(xs)\n        assert total == fresh\n",
            ),
        ),
        (
            "the monkeypatch fixture replacing a property while a test runs",
            invoice(
                "    assert y == x\n",
                "    assert y == x\n\n\ndef test_patched_roundtrip(monkeypatch):\n    import sys\n    monkeypatch.setattr(sys.modules[__name__], \"test_roundtrip\", None)\n",
            ),
        ),
        (
            "a `case` capture in a function",
            invoice(
                "    assert y == x\n",
                "    assert y == x\n\n\ndef classify(v):\n    match v:\n        case [_, test_roundtrip]:\n            return test_roundtrip\n",
            ),
        ),
        (
            "a test running generated code with its own locals",
            invoice(
                "    assert y == x\n",
                "    assert y == x\n\n\ndef test_generated_function():\n    ns = {}\n    exec(\"def f(x):\\n    return x + 1\", globals(), ns)\n    assert ns[\"f\"](1) == 2\n",
            ),
        ),
        (
            "a test evaluating an expression in its own namespaces",
            invoice(
                "    assert y == x\n",
                "    assert y == x\n\n\ndef test_bad_keyword():\n    with pytest.raises(TypeError):\n        eval(\"cached_total([], bogus=1)\", globals(), locals())\n",
            ),
        ),
        (
            "the file renamed within pytest's file pattern",
            Box::new(|repo: &Repo| {
                repo.git(&["mv", "tests/test_invoice.py", "tests/invoice_test.py"]);
            }),
        ),
        (
            "a signature spread over lines",
            invoice(
                PROPERTY,
                "def test_cached_total_equals_fresh_sum(\n    xs,\n):\n",
            ),
        ),
        (
            "pytest.ini with markers and a report option",
            new_file(
                "tests/pytest.ini",
                "[pytest]\naddopts = -ra --strict-markers\nmarkers =\n    slow: long tests\n",
            ),
        ),
        (
            "conftest.py with a fixture and a hook that registers a marker",
            new_file(
                "tests/conftest.py",
                "import pytest\n\n\ndef pytest_configure(config):\n    config.addinivalue_line(\"markers\", \"slow: long\")\n\n\n@pytest.fixture\ndef lines():\n    return []\n",
            ),
        ),
    ]
}

#[test]
fn every_python_gaming_move_blocks_with_its_rule() {
    let mut missed = Vec::new();
    for (what, rule, change) in moves() {
        let found = judge(&change);
        if !found.contains(&(rule.to_string(), true)) {
            missed.push(format!("{what}: wanted {rule}, found {found:?}"));
        }
    }
    assert!(
        missed.is_empty(),
        "moves let through:\n{}",
        missed.join("\n")
    );
}

#[test]
fn ordinary_python_edits_beside_the_moves_are_silent() {
    let mut noisy = Vec::new();
    for (what, change) in harmless() {
        let found = judge(&change);
        if !found.is_empty() {
            noisy.push(format!("{what}: {found:?}"));
        }
    }
    assert!(
        noisy.is_empty(),
        "ordinary edits flagged:\n{}",
        noisy.join("\n")
    );
}
