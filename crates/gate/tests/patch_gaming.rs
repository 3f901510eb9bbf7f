//! Gaming moves: every rule of the table fires on its move and stays silent on a harmless edit
//! next to it — each move committed on its own in a real git repository and judged by
//! `check_patch`.

mod patch_support;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use freezegate_gate::patch::{PatchReport, RULES, WarningKind};
use patch_support::{Repo, keys};

/// One move: a property file before, after the gaming move, and after a harmless edit. An
/// empty text stands for no file: a move that adds a file has an empty `before`.
struct Case {
    rule: &'static str,
    path: &'static str,
    before: &'static str,
    gaming: &'static str,
    harmless: &'static str,
}

const IGNORE: &str = concat!("#[", "ignore]");

const PROPTEST_BLOCK: &str = "use proptest::prelude::*;
proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]
    #[test]
    fn total_is_sum(x in 0u32..100, y in 0u32..100) {
        let total = x + y;
        prop_assert_eq!(total, y + x);
    }

    #[test]
    fn total_is_positive(x in 0u32..100) {
        prop_assert!(x < 100);
    }
}
";

const PY_PROPERTY: &str = "from hypothesis import given, settings, strategies as st
import pytest


@settings(max_examples=500)
@given(st.integers(), st.integers())
def test_total_is_sum(x, y):
    total = x + y
    assert total == y + x
";

fn cases() -> Vec<Case> {
    let mut cases = vec![
        Case {
            rule: "property-removed",
            path: "tests/removed.rs",
            before: PROPTEST_BLOCK,
            gaming: "use proptest::prelude::*;
proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]
    #[test]
    fn total_is_sum(x in 0u32..100, y in 0u32..100) {
        let total = x + y;
        prop_assert_eq!(total, y + x);
    }
}
",
            harmless: "use proptest::prelude::*;
proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]
    #[test]
    fn total_is_sum(x in 0u32..100, y in 0u32..100) {
        let total = x + y;
        prop_assert_eq!(total, y + x);
    }

    /// Positive totals.
    #[test]
    fn total_is_positive(x in 0u32..100) {
        prop_assert!(x < 100);
    }
}
",
        },
        Case {
            rule: "property-removed",
            path: "py/test_removed.py",
            before: PY_PROPERTY,
            gaming: "from hypothesis import given, settings, strategies as st
import pytest


@settings(max_examples=500)
def test_total_is_sum():
    x, y = 1, 2
    total = x + y
    assert total == y + x
",
            harmless: "from hypothesis import given, settings, strategies as st
import pytest


@settings(max_examples=500)
@given(st.integers(), st.integers())
def test_total_is_sum(x, y):
    \"\"\"Addition commutes.\"\"\"
    total = x + y
    assert total == y + x
",
        },
        Case {
            rule: "cases-lowered",
            path: "tests/with_cases.rs",
            before: PROPTEST_BLOCK,
            gaming: &*Box::leak(PROPTEST_BLOCK.replace("with_cases(1000)", "with_cases(100)").into_boxed_str()),
            harmless: &*Box::leak(PROPTEST_BLOCK.replace("with_cases(1000)", "with_cases(5_000)").into_boxed_str()),
        },
        Case {
            rule: "cases-lowered",
            path: "tests/config_cases.rs",
            before: "fn config() -> ProptestConfig {\n    ProptestConfig { cases: 400, ..ProptestConfig::default() }\n}\n",
            gaming: "fn config() -> ProptestConfig {\n    ProptestConfig { cases: 20, ..ProptestConfig::default() }\n}\n",
            harmless: "fn config() -> ProptestConfig {\n    // More cases for the tax rules.\n    ProptestConfig { cases: 400, ..ProptestConfig::default() }\n}\n",
        },
        Case {
            rule: "cases-lowered",
            path: "tests/new_property.rs",
            before: "use proptest::prelude::*;\n",
            gaming: "use proptest::prelude::*;\nproptest! {\n    #![proptest_config(ProptestConfig::with_cases(10))]\n    #[test]\n    fn rounding(x in 0u32..10) { prop_assert!(x < 10); }\n}\n",
            harmless: "use proptest::prelude::*;\nproptest! {\n    #![proptest_config(ProptestConfig::with_cases(500))]\n    #[test]\n    fn rounding(x in 0u32..10) { prop_assert!(x < 10); }\n}\n",
        },
        Case {
            rule: "cases-lowered",
            path: "ci/env.sh",
            before: "export PROPTEST_CASES=1000\n",
            gaming: "export PROPTEST_CASES=64\n",
            harmless: "export PROPTEST_CASES=1000\nexport RUST_BACKTRACE=1\n",
        },
        Case {
            rule: "cases-lowered",
            path: "py/test_examples.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(PY_PROPERTY.replace("max_examples=500", "max_examples=60").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("max_examples=500", "max_examples=2000").into_boxed_str()),
        },
        Case {
            rule: "cases-lowered",
            path: "py/test_examples_removed.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(PY_PROPERTY.replace("@settings(max_examples=500)\n", "").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("@settings(max_examples=500)\n", "@settings(max_examples=500)  # tax rules\n").into_boxed_str()),
        },
        Case {
            rule: "skip-added",
            path: "tests/ignored.rs",
            before: "#[test]\nfn runner() {\n    proptest::test_runner::TestRunner::default();\n}\n",
            gaming: &*Box::leak(format!("#[test]\n{IGNORE}\nfn runner() {{\n    proptest::test_runner::TestRunner::default();\n}}\n").into_boxed_str()),
            harmless: "#[test]\n/// Runs the runner.\nfn runner() {\n    proptest::test_runner::TestRunner::default();\n}\n",
        },
        Case {
            rule: "skip-added",
            path: "tests/panicking.rs",
            before: "#[test]\nfn runner() {\n    proptest::test_runner::TestRunner::default();\n}\n",
            gaming: &*Box::leak(format!("#[test]\n{}\nfn runner() {{\n    proptest::test_runner::TestRunner::default();\n}}\n", concat!("#[", "should_panic]")).into_boxed_str()),
            harmless: "#[test]\n#[allow(unused)]\nfn runner() {\n    proptest::test_runner::TestRunner::default();\n}\n",
        },
        Case {
            rule: "skip-added",
            path: "py/test_skip.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(PY_PROPERTY.replace("@settings", "@pytest.mark.skip(reason=\"slow\")\n@settings").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("@settings", "@pytest.mark.tax\n@settings").into_boxed_str()),
        },
        Case {
            rule: "skip-added",
            path: "py/test_skipif.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(PY_PROPERTY.replace("@settings", "@pytest.mark.skipif(True, reason=\"ci\")\n@settings").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("@settings", "@pytest.mark.parametrize(\"z\", [1])\n@settings").into_boxed_str()),
        },
        Case {
            rule: "skip-added",
            path: "py/test_xfail.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(PY_PROPERTY.replace("@settings", "@pytest.mark.xfail\n@settings").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("@settings", "@pytest.mark.slow\n@settings").into_boxed_str()),
        },
        Case {
            rule: "opaque-code",
            path: "py/rates.bin",
            before: "a,b\n1,2\n",
            gaming: "a,b\n1,\u{0}2\n",
            harmless: "a,b\n1,3\n",
        },
        Case {
            rule: "opaque-code",
            path: "py/__pycache__/test_coding.cpython-311.pyc",
            before: "",
            gaming: "\u{a7}\r\r\n\u{1}\u{0}\u{0}\u{0}",
            harmless: "",
        },
        Case {
            rule: "module-shadowed",
            path: "py/json.py",
            before: "",
            gaming: "def loads(text):\n    return {}\n",
            harmless: "",
        },
        Case {
            rule: "module-shadowed",
            path: "py/test_coding/__init__.py",
            before: "",
            gaming: "x = 1\n",
            harmless: "",
        },
        Case {
            rule: "source-encoding",
            path: "py/test_coding.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(format!("# coding: utf-7\n{PY_PROPERTY}").into_boxed_str()),
            harmless: &*Box::leak(format!("# -*- coding: utf-8 -*-\n{PY_PROPERTY}").into_boxed_str()),
        },
        Case {
            // A commit that only deletes a code line 1 makes the declaration under it count.
            rule: "source-encoding",
            path: "py/test_coding_deleted.py",
            before: &*Box::leak(format!("from __future__ import annotations\n# -*- coding: utf-7 -*-\n{PY_PROPERTY}").into_boxed_str()),
            gaming: &*Box::leak(format!("# -*- coding: utf-7 -*-\n{PY_PROPERTY}").into_boxed_str()),
            harmless: &*Box::leak(format!("from __future__ import annotations\n{PY_PROPERTY}").into_boxed_str()),
        },
        Case {
            rule: "skip-added",
            path: "py/test_unittest.py",
            before: "import unittest\n\nclass Tax(unittest.TestCase):\n    def test_total(self):\n        self.assertEqual(1 + 1, 2)\n",
            gaming: "import unittest\n\nclass Tax(unittest.TestCase):\n    @unittest.skip(\"later\")\n    def test_total(self):\n        self.assertEqual(1 + 1, 2)\n",
            harmless: "import unittest\n\nclass Tax(unittest.TestCase):\n    maxDiff = None\n    def test_total(self):\n        self.assertEqual(1 + 1, 2)\n",
        },
        Case {
            rule: "skip-added",
            path: "tests/compiled_out.rs",
            before: PROPTEST_BLOCK,
            gaming: &*Box::leak(
                PROPTEST_BLOCK
                    .replace("proptest! {", "#[cfg(any())]\nproptest! {")
                    .into_boxed_str(),
            ),
            harmless: &*Box::leak(
                PROPTEST_BLOCK
                    .replace("proptest! {", "#[cfg(test)]\nproptest! {")
                    .into_boxed_str(),
            ),
        },
        Case {
            rule: "skip-added",
            path: "py/test_importorskip.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(
                PY_PROPERTY
                    .replace("import pytest\n", "import pytest\nnumpy = pytest.importorskip(\"numpy_missing\")\n")
                    .into_boxed_str(),
            ),
            harmless: &*Box::leak(
                PY_PROPERTY
                    .replace("import pytest\n", "import pytest\nimport numpy\n")
                    .into_boxed_str(),
            ),
        },
        Case {
            rule: "catch-broadened",
            path: "tests/unwind.rs",
            before: "fn check(x: u32) -> bool {\n    tax::total(x) == x\n}\n",
            gaming: "fn check(x: u32) -> bool {\n    std::panic::catch_unwind(|| tax::total(x) == x).unwrap_or(true)\n}\n",
            harmless: "fn check(x: u32) -> bool {\n    let expected = x;\n    tax::total(x) == expected\n}\n",
        },
        Case {
            rule: "catch-broadened",
            path: "py/test_except.py",
            before: "def check(x):\n    try:\n        return total(x) == x\n    except ValueError:\n        return False\n",
            gaming: "def check(x):\n    try:\n        return total(x) == x\n    except Exception:\n        return True\n",
            harmless: "def check(x):\n    try:\n        return total(x) == x\n    except (ValueError, KeyError):\n        return False\n",
        },
        Case {
            rule: "catch-broadened",
            path: "py/test_bare_except.py",
            before: "def check(x):\n    try:\n        return total(x) == x\n    except ValueError:\n        return False\n",
            gaming: "def check(x):\n    try:\n        return total(x) == x\n    except:\n        return True\n",
            harmless: "def check(x):\n    try:\n        return total(x) == x\n    except ValueError:  # bad input\n        return False\n",
        },
        Case {
            rule: "assertion-removed",
            path: "tests/assert_removed.rs",
            before: PROPTEST_BLOCK,
            gaming: &*Box::leak(PROPTEST_BLOCK.replace("        prop_assert_eq!(total, y + x);\n", "").into_boxed_str()),
            harmless: &*Box::leak(PROPTEST_BLOCK.replace("prop_assert_eq!(total, y + x);", "prop_assert_eq!(total, y + x, \"addition commutes\");").into_boxed_str()),
        },
        Case {
            rule: "assertion-removed",
            path: "py/test_assert_removed.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(PY_PROPERTY.replace("    assert total == y + x\n", "    print(total)\n").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("    assert total == y + x\n", "    assert total == y + x, \"commutes\"\n").into_boxed_str()),
        },
        Case {
            rule: "assertion-weakened",
            path: "tests/assert_weakened.rs",
            before: PROPTEST_BLOCK,
            gaming: &*Box::leak(PROPTEST_BLOCK.replace("prop_assert_eq!(total, y + x);", "prop_assert!(total >= y);").into_boxed_str()),
            harmless: &*Box::leak(PROPTEST_BLOCK.replace("prop_assert_eq!(total, y + x);", "prop_assert_eq!(y + x, total);").into_boxed_str()),
        },
        Case {
            rule: "assertion-weakened",
            path: "py/test_assert_weakened.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(PY_PROPERTY.replace("assert total == y + x", "assert total >= x").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("assert total == y + x", "assert y + x == total").into_boxed_str()),
        },
        Case {
            rule: "tolerance-widened",
            path: "py/test_tolerance.py",
            before: "def test_rate():\n    assert rate() == pytest.approx(0.2, rel=1e-9)\n",
            gaming: "def test_rate():\n    assert rate() == pytest.approx(0.2, rel=1e-3)\n",
            harmless: "def test_rate():\n    assert rate() == pytest.approx(0.2, rel=1e-12)\n",
        },
        Case {
            rule: "tolerance-widened",
            path: "py/test_abs_tol.py",
            before: &*Box::leak(PY_PROPERTY.replace("assert total == y + x", "assert math.isclose(total, y + x, rel_tol=1e-9)").into_boxed_str()),
            gaming: &*Box::leak(PY_PROPERTY.replace("assert total == y + x", "assert math.isclose(total, y + x, rel_tol=1e-9, abs_tol=1.0)").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("assert total == y + x", "assert math.isclose(total, y + x, rel_tol=1e-9, abs_tol=0.0)").into_boxed_str()),
        },
        Case {
            rule: "tolerance-widened",
            path: "py/test_rel_tol_added.py",
            before: &*Box::leak(PY_PROPERTY.replace("assert total == y + x", "assert math.isclose(total, y + x)").into_boxed_str()),
            gaming: &*Box::leak(PY_PROPERTY.replace("assert total == y + x", "assert math.isclose(total, y + x, rel_tol=0.01)").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("assert total == y + x", "assert math.isclose(total, y + x, rel_tol=1e-12)").into_boxed_str()),
        },
        Case {
            rule: "assertion-vacuous",
            path: "py/test_conditional_assert.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(PY_PROPERTY.replace("assert total == y + x", "assert total == y + x if x else True").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("assert total == y + x", "assert total == y + x\n    assert validate(total, strict=False if x else True)\n    assert total == x * (y if y else True)").into_boxed_str()),
        },
        Case {
            rule: "tolerance-widened",
            path: "tests/tolerance.rs",
            before: "fn close(a: f64, b: f64) {\n    assert!((a - b).abs() < 1e-9);\n}\n",
            gaming: "fn close(a: f64, b: f64) {\n    assert!((a - b).abs() < 0.5);\n}\n",
            harmless: "fn close(a: f64, b: f64) {\n    assert!((a - b).abs() < 1e-12);\n}\n",
        },
        Case {
            rule: "assume-added",
            path: "tests/assume.rs",
            before: PROPTEST_BLOCK,
            gaming: &*Box::leak(PROPTEST_BLOCK.replace("        let total = x + y;\n", "        prop_assume!(x == 0);\n        let total = x + y;\n").into_boxed_str()),
            harmless: &*Box::leak(PROPTEST_BLOCK.replace("        let total = x + y;\n", "        let doubled = x * 2;\n        let total = x + y;\n").into_boxed_str()),
        },
        Case {
            rule: "assume-added",
            path: "tests/filter.rs",
            before: "fn inputs() -> impl Strategy<Value = u32> {\n    0u32..1000\n}\n",
            gaming: "fn inputs() -> impl Strategy<Value = u32> {\n    (0u32..1000).prop_filter(\"small\", |x| *x < 2)\n}\n",
            harmless: "fn inputs() -> impl Strategy<Value = u32> {\n    (0u32..1000).prop_map(|x| x * 2)\n}\n",
        },
        Case {
            rule: "assume-added",
            path: "py/test_assume.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(PY_PROPERTY.replace("    total = x + y\n", "    assume(x == 0)\n    total = x + y\n").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("    total = x + y\n", "    doubled = x * 2\n    total = x + y\n").into_boxed_str()),
        },
        Case {
            rule: "hypothesis-settings",
            path: "py/test_deadline.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(PY_PROPERTY.replace("max_examples=500", "max_examples=500, deadline=None").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("max_examples=500", "max_examples=500, print_blob=True").into_boxed_str()),
        },
        Case {
            rule: "hypothesis-settings",
            path: "py/test_health.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(PY_PROPERTY.replace("max_examples=500", "max_examples=500, suppress_health_check=list(HealthCheck)").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("max_examples=500", "max_examples=500, derandomize=False").into_boxed_str()),
        },
        Case {
            rule: "hypothesis-settings",
            path: "py/test_derandomize.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(PY_PROPERTY.replace("max_examples=500", "max_examples=500, derandomize=True").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("max_examples=500", "max_examples=500, derandomize = False").into_boxed_str()),
        },
        Case {
            rule: "hypothesis-settings",
            path: "py/test_derandomize_spelled.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(PY_PROPERTY.replace("max_examples=500", "max_examples=500, derandomize=False or True").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("max_examples=500", "derandomize=0, max_examples=500").into_boxed_str()),
        },
        Case {
            rule: "hypothesis-settings",
            path: "py/test_derandomize_bits.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(PY_PROPERTY.replace("max_examples=500", "max_examples=500, derandomize=0x1").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("max_examples=500", "max_examples=500, derandomize=False  # reproducible by default").into_boxed_str()),
        },
        Case {
            rule: "hypothesis-settings",
            path: "py/test_phases.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(PY_PROPERTY.replace("max_examples=500", "max_examples=500, phases=[Phase.explicit]").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("max_examples=500", "max_examples=500, verbosity=Verbosity.normal").into_boxed_str()),
        },
        Case {
            rule: "shared-fixture",
            path: "py/test_fixture.py",
            before: "import pytest\n\n@pytest.fixture\ndef rates():\n    return load_rates()\n",
            gaming: "import pytest\n\n@pytest.fixture(scope=\"session\")\ndef rates():\n    return load_rates()\n",
            harmless: "import pytest\n\n@pytest.fixture(autouse=False)\ndef rates():\n    return load_rates()\n",
        },
        Case {
            rule: "shared-fixture",
            path: "tests/shared_state.rs",
            before: "fn rates() -> Vec<u32> {\n    load_rates()\n}\n",
            gaming: "static RATES: std::sync::OnceLock<Vec<u32>> = std::sync::OnceLock::new();\nfn rates() -> Vec<u32> {\n    RATES.get_or_init(load_rates).clone()\n}\n",
            harmless: "const LIMIT: usize = 10;\nfn rates() -> Vec<u32> {\n    load_rates()\n}\n",
        },
        Case {
            rule: "impure-property",
            path: "tests/clock.rs",
            before: PROPTEST_BLOCK,
            gaming: &*Box::leak(PROPTEST_BLOCK.replace("        let total = x + y;\n", "        let started = std::time::Instant::now();\n        let total = x + y;\n").into_boxed_str()),
            harmless: &*Box::leak(PROPTEST_BLOCK.replace("        let total = x + y;\n", "        let started = x.min(y);\n        let total = x + y;\n").into_boxed_str()),
        },
        Case {
            rule: "impure-property",
            path: "tests/environment.rs",
            before: PROPTEST_BLOCK,
            gaming: &*Box::leak(PROPTEST_BLOCK.replace("        let total = x + y;\n", "        let region = std::env::var(\"REGION\");\n        let total = x + y;\n").into_boxed_str()),
            harmless: &*Box::leak(PROPTEST_BLOCK.replace("        let total = x + y;\n", "        let region = \"eu\";\n        let total = x + y;\n").into_boxed_str()),
        },
        Case {
            rule: "impure-property",
            path: "py/test_network.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(PY_PROPERTY.replace("    total = x + y\n", "    rate = requests.get(\"http://127.0.0.1/rate\").json()\n    total = x + y\n").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("    total = x + y\n", "    rate = 0.2\n    total = x + y\n").into_boxed_str()),
        },
        Case {
            rule: "impure-property",
            path: "py/test_time.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(PY_PROPERTY.replace("    total = x + y\n", "    now = time.time()\n    total = x + y\n").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("    total = x + y\n", "    now = 0\n    total = x + y\n").into_boxed_str()),
        },
        Case {
            rule: "retry-or-sleep",
            path: "tests/sleep.rs",
            before: PROPTEST_BLOCK,
            gaming: &*Box::leak(PROPTEST_BLOCK.replace("        let total = x + y;\n", "        std::thread::sleep(std::time::Duration::from_millis(5));\n        let total = x + y;\n").into_boxed_str()),
            harmless: &*Box::leak(PROPTEST_BLOCK.replace("        let total = x + y;\n", "        let pause = std::time::Duration::from_millis(5);\n        let total = x + y;\n").into_boxed_str()),
        },
        Case {
            rule: "retry-or-sleep",
            path: "py/test_retry.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(PY_PROPERTY.replace("@settings", "@pytest.mark.flaky(reruns=3)\n@settings").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("@settings", "@pytest.mark.timeout(30)\n@settings").into_boxed_str()),
        },
        Case {
            rule: "retry-or-sleep",
            path: "tests/retry.rs",
            before: "fn check(x: u32) -> bool {\n    tax::total(x) == x\n}\n",
            gaming: "fn check(x: u32) -> bool {\n    (0..3).any(|_retry| tax::total(x) == x)\n}\n",
            harmless: "fn check(x: u32) -> bool {\n    (0..3).all(|_round| tax::total(x) == x)\n}\n",
        },
        // The audit's moves (each row failed before the fix that makes it pass).
        Case {
            rule: "assume-added",
            path: "tests/string_slashes.rs",
            before: PROPTEST_BLOCK,
            gaming: &*Box::leak(PROPTEST_BLOCK.replace("        let total = x + y;\n", "        let _u = \"a//b\"; prop_assume!(x == 7);\n        let total = x + y;\n").into_boxed_str()),
            harmless: &*Box::leak(PROPTEST_BLOCK.replace("        let total = x + y;\n", "        let _u = \"a//b\"; // prop_assume!(x == 7);\n        let total = x + y;\n").into_boxed_str()),
        },
        Case {
            rule: "assume-added",
            path: "py/test_hash_string.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(PY_PROPERTY.replace("    total = x + y\n", "    label = '#'; assume(x == 12345)\n    total = x + y\n").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("    total = x + y\n", "    label = '#'  # assume(x == 12345)\n    total = x + y\n").into_boxed_str()),
        },
        Case {
            rule: "assume-added",
            path: "py/test_hash_message.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(PY_PROPERTY.replace("    assert total == y + x\n", "    assert total == y + x, '#'; assume(x == 1)\n").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("    assert total == y + x\n", "    assert total == y + x, '#'  # assume(x == 1)\n").into_boxed_str()),
        },
        Case {
            rule: "assume-added",
            path: "tests/iterator_filter.rs",
            before: PROPTEST_BLOCK,
            gaming: &*Box::leak(PROPTEST_BLOCK.replace("fn total_is_positive(x in 0u32..100)", "fn total_is_positive(x in (0u32..100).prop_filter(\"odd\", |v| v % 2 == 1))").into_boxed_str()),
            harmless: &*Box::leak(PROPTEST_BLOCK.replace("        prop_assert!(x < 100);\n", "        let evens = (0..x).filter(|v| v % 2 == 0).count();\n        prop_assert!(x < 100);\n        prop_assert!(evens <= 50);\n").into_boxed_str()),
        },
        Case {
            rule: "cases-lowered",
            path: "py/test_new_and_raised.py",
            before: &*Box::leak(PY_PROPERTY.replace("max_examples=500", "max_examples=200").into_boxed_str()),
            gaming: &*Box::leak(PY_PROPERTY.replace("@settings(max_examples=500)\n", "@settings(max_examples=100)\n@given(st.integers())\ndef test_double(x):\n    assert x * 2 == x + x\n\n\n@settings(max_examples=150)\n").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("@settings(max_examples=500)\n", "@settings(max_examples=100)\n@given(st.integers())\ndef test_double(x):\n    assert x * 2 == x + x\n\n\n@settings(max_examples=300)\n").into_boxed_str()),
        },
        Case {
            rule: "cases-lowered",
            path: "py/test_examples_split.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(PY_PROPERTY.replace("max_examples=500", "\n    max_examples=\n    60,\n").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("max_examples=500", "\n    max_examples=\n    600,\n").into_boxed_str()),
        },
        Case {
            rule: "cases-lowered",
            path: "py/test_examples_expression.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(PY_PROPERTY.replace("max_examples=500", "max_examples=500 // 500").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("max_examples=500", "max_examples=5_000  # 500 // 500").into_boxed_str()),
        },
        Case {
            rule: "cases-lowered",
            path: "tests/with_cases_expression.rs",
            before: PROPTEST_BLOCK,
            gaming: &*Box::leak(PROPTEST_BLOCK.replace("with_cases(1000)", "with_cases(1000 / 100)").into_boxed_str()),
            harmless: &*Box::leak(PROPTEST_BLOCK.replace("with_cases(1000)", "with_cases(1000u32) // 1000 / 100").into_boxed_str()),
        },
        Case {
            rule: "cases-lowered",
            path: "tests/config_cases_split.rs",
            before: "fn config() -> ProptestConfig {\n    ProptestConfig { cases: 400, ..ProptestConfig::default() }\n}\n",
            gaming: "fn config() -> ProptestConfig {\n    ProptestConfig {\n        cases: 1,\n        ..ProptestConfig::default()\n    }\n}\n",
            harmless: "fn config() -> ProptestConfig {\n    ProptestConfig {\n        cases: 400,\n        ..ProptestConfig::default()\n    }\n}\n",
        },
        Case {
            rule: "cases-lowered",
            path: "tests/cases_constant.rs",
            before: "fn config() -> ProptestConfig {\n    ProptestConfig { cases: 400, ..ProptestConfig::default() }\n}\n",
            gaming: "const K: &str = \"PROPTEST_CASES\";\nfn config() -> ProptestConfig {\n    ProptestConfig { cases: 400, ..ProptestConfig::default() }\n}\n",
            harmless: "const K: &str = \"PROPTEST_TIMEOUT\";\nfn config() -> ProptestConfig {\n    ProptestConfig { cases: 400, ..ProptestConfig::default() }\n}\n",
        },
        Case {
            rule: "cases-lowered",
            path: "ci/default.sh",
            before: "export PROPTEST_CASES=1000\n",
            gaming: "export PROPTEST_CASES=${N:-1}\n",
            harmless: "X='#'; export PROPTEST_CASES=2000\n",
        },
        Case {
            rule: "skip-added",
            path: "py/test_mark_import.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(PY_PROPERTY.replace("import pytest\n", "import pytest\nfrom pytest import mark\n").replace("@settings", "@mark.skip\n@settings").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("import pytest\n", "import pytest\nfrom pytest import mark\n").replace("@settings", "@mark.slow\n@settings").into_boxed_str()),
        },
        Case {
            rule: "skip-added",
            path: "py/test_skiptest.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(PY_PROPERTY.replace("    total = x + y\n", "    raise unittest.SkipTest(\"later\")\n    total = x + y\n").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("    total = x + y\n", "    note = \"SkipTest later\"\n    total = x + y\n").into_boxed_str()),
        },
        Case {
            rule: "skip-added",
            path: "tests/cfg_feature.rs",
            before: PROPTEST_BLOCK,
            gaming: &*Box::leak(PROPTEST_BLOCK.replace("    #[test]\n    fn total_is_positive", "    #[cfg(feature = \"never\")]\n    #[test]\n    fn total_is_positive").into_boxed_str()),
            harmless: &*Box::leak(PROPTEST_BLOCK.replace("    #[test]\n    fn total_is_positive", "    /// Never negative.\n    #[test]\n    fn total_is_positive").into_boxed_str()),
        },
        Case {
            rule: "skip-added",
            path: "tests/cfg_not_all.rs",
            before: PROPTEST_BLOCK,
            gaming: &*Box::leak(PROPTEST_BLOCK.replace("proptest! {", "#[cfg(not(all()))]\nproptest! {").into_boxed_str()),
            harmless: &*Box::leak(PROPTEST_BLOCK.replace("proptest! {", "#[cfg(unix)]\nfn helper() {}\n\nproptest! {").into_boxed_str()),
        },
        Case {
            rule: "skip-added",
            path: "tests/ignore_reason.rs",
            before: PROPTEST_BLOCK,
            gaming: &*Box::leak(PROPTEST_BLOCK.replace("    #[test]\n    fn total_is_positive", &format!("    #[test]\n    {}\n    fn total_is_positive", concat!("#[", "ignore = \"flaky on CI\"]"))).into_boxed_str()),
            harmless: &*Box::leak(PROPTEST_BLOCK.replace("    #[test]\n    fn total_is_positive", "    #[test]\n    #[doc = \"was flaky on CI, fixed by retrying nothing\"]\n    fn total_is_positive").into_boxed_str()),
        },
        Case {
            rule: "catch-broadened",
            path: "py/test_except_tuple.py",
            before: "def check(x):\n    try:\n        return total(x) == x\n    except ValueError:\n        return False\n",
            gaming: "def check(x):\n    try:\n        return total(x) == x\n    except (ValueError, Exception):\n        return True\n",
            harmless: "def check(x):\n    try:\n        return total(x) == x\n    except (ValueError, ArithmeticError):\n        return False\n",
        },
        Case {
            rule: "catch-broadened",
            path: "py/test_except_assertion.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(PY_PROPERTY.replace("    assert total == y + x\n", "    try:\n        assert total == y + x\n    except AssertionError:\n        pass\n").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("    assert total == y + x\n", "    try:\n        assert total == y + x\n    finally:\n        pass\n").into_boxed_str()),
        },
        Case {
            rule: "catch-broadened",
            path: "py/test_suppress.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(PY_PROPERTY.replace("    assert total == y + x\n", "    with contextlib.suppress(AssertionError):\n        assert total == y + x\n").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("    assert total == y + x\n", "    with contextlib.suppress(KeyError):\n        assert total == y + x\n").into_boxed_str()),
        },
        Case {
            rule: "catch-broadened",
            path: "tests/join.rs",
            before: "fn check(x: u32) {\n    assert_eq!(tax::total(x), x);\n}\n",
            gaming: "fn check(x: u32) {\n    let _ = std::thread::spawn(move || assert_eq!(tax::total(x), x)).join();\n}\n",
            harmless: "fn check(x: u32) {\n    std::thread::spawn(move || assert_eq!(tax::total(x), x)).join().unwrap();\n}\n",
        },
        Case {
            rule: "assertion-vacuous",
            path: "py/test_tautology.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(PY_PROPERTY.replace("assert total == y + x", "assert total == total").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("assert total == y + x", "assert total == x + y").into_boxed_str()),
        },
        Case {
            rule: "assertion-vacuous",
            path: "py/test_or_true.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(PY_PROPERTY.replace("assert total == y + x", "assert total == y + x or True").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("assert total == y + x", "assert total == y + x or total is None").into_boxed_str()),
        },
        Case {
            rule: "assertion-vacuous",
            path: "tests/tautology.rs",
            before: PROPTEST_BLOCK,
            gaming: &*Box::leak(PROPTEST_BLOCK.replace("prop_assert_eq!(total, y + x);", "prop_assert_eq!(total, total);").into_boxed_str()),
            harmless: &*Box::leak(PROPTEST_BLOCK.replace("prop_assert_eq!(total, y + x);", "prop_assert_eq!(total, x + y);").into_boxed_str()),
        },
        Case {
            rule: "assertion-weakened",
            path: "tests/weakened_balanced.rs",
            before: PROPTEST_BLOCK,
            gaming: &*Box::leak(PROPTEST_BLOCK.replace("prop_assert_eq!(total, y + x);", "prop_assert!(total >= y);").replace("        prop_assert!(x < 100);\n", "        prop_assert!(x < 100);\n        prop_assert_eq!(x % 100, x);\n").into_boxed_str()),
            harmless: &*Box::leak(PROPTEST_BLOCK.replace("        prop_assert!(x < 100);\n", "        prop_assert!(x < 100);\n        prop_assert_eq!(x % 100, x);\n").into_boxed_str()),
        },
        Case {
            rule: "tolerance-added",
            path: "py/test_approx.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(PY_PROPERTY.replace("assert total == y + x", "assert total == pytest.approx(y + x, rel=0.5)").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("assert total == y + x", "assert total == y + x, \"approx(rel=0.5)\"").into_boxed_str()),
        },
        Case {
            rule: "tolerance-added",
            path: "py/test_isclose.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(PY_PROPERTY.replace("assert total == y + x", "assert math.isclose(total, y + x, rel_tol=0.1)").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("assert total == y + x", "assert total == (y + x)").into_boxed_str()),
        },
        Case {
            rule: "tolerance-widened",
            path: "py/test_leading_dot.py",
            before: "def test_rate():\n    assert rate() == pytest.approx(0.2, rel=1e-6)\n",
            gaming: "def test_rate():\n    assert rate() == pytest.approx(0.2, rel=.5)\n",
            harmless: "def test_rate():\n    assert rate() == pytest.approx(0.2, rel=.0000001)\n",
        },
        Case {
            rule: "impure-property",
            path: "py/test_from_time.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(PY_PROPERTY.replace("import pytest\n", "import pytest\nfrom time import time\n").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("import pytest\n", "import pytest\nfrom timeit import repeat\n").into_boxed_str()),
        },
        Case {
            rule: "impure-property",
            path: "py/test_from_os.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(PY_PROPERTY.replace("import pytest\n", "import pytest\nfrom os import environ\n").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("import pytest\n", "import pytest\nfrom os import path\n").into_boxed_str()),
        },
        Case {
            rule: "impure-property",
            path: "py/test_process_time.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(PY_PROPERTY.replace("    total = x + y\n", "    started = time.process_time()\n    total = x + y\n").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("    total = x + y\n", "    started = 0.0\n    total = x + y\n").into_boxed_str()),
        },
        Case {
            rule: "impure-property",
            path: "tests/option_env.rs",
            before: PROPTEST_BLOCK,
            gaming: &*Box::leak(PROPTEST_BLOCK.replace("        let total = x + y;\n", "        let region = option_env!(\"REGION\");\n        let total = x + y;\n").into_boxed_str()),
            harmless: &*Box::leak(PROPTEST_BLOCK.replace("        let total = x + y;\n", "        let region = Some(\"REGION\");\n        let total = x + y;\n").into_boxed_str()),
        },
        Case {
            rule: "impure-property",
            path: "tests/epoch.rs",
            before: PROPTEST_BLOCK,
            gaming: &*Box::leak(PROPTEST_BLOCK.replace("        let total = x + y;\n", "        let age = std::time::UNIX_EPOCH.elapsed();\n        let total = x + y;\n").into_boxed_str()),
            harmless: &*Box::leak(PROPTEST_BLOCK.replace("        let total = x + y;\n", "        let age = std::time::Duration::ZERO;\n        let total = x + y;\n").into_boxed_str()),
        },
        Case {
            rule: "impure-property",
            path: "tests/set_var_concat.rs",
            before: PROPTEST_BLOCK,
            gaming: &*Box::leak(PROPTEST_BLOCK.replace("        let total = x + y;\n", "        unsafe { std::env::set_var(concat!(\"PROPTEST_\", \"CASES\"), \"1\") };\n        let total = x + y;\n").into_boxed_str()),
            harmless: &*Box::leak(PROPTEST_BLOCK.replace("        let total = x + y;\n", "        let name = concat!(\"PROPTEST_\", \"CASES\");\n        let total = x + y;\n").into_boxed_str()),
        },
        Case {
            rule: "early-return",
            path: "py/test_early_return.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(PY_PROPERTY.replace("    total = x + y\n", "    return\n    total = x + y\n").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("def test_total_is_sum", "def helper():\n    return 1\n\n\n@settings(max_examples=500)\n@given(st.integers(), st.integers())\ndef test_total_is_sum").replacen("@settings(max_examples=500)\n@given(st.integers(), st.integers())\ndef helper", "def helper", 1).into_boxed_str()),
        },
        Case {
            rule: "early-return",
            path: "tests/early_return.rs",
            before: PROPTEST_BLOCK,
            gaming: &*Box::leak(PROPTEST_BLOCK.replace("        let total = x + y;\n", "        if x > 0 { return Ok(()); }\n        let total = x + y;\n").into_boxed_str()),
            harmless: &*Box::leak(PROPTEST_BLOCK.replace("use proptest::prelude::*;\n", "use proptest::prelude::*;\nfn half(x: u32) -> u32 {\n    return x / 2;\n}\n").into_boxed_str()),
        },
        Case {
            rule: "strategy-narrowed",
            path: "tests/just.rs",
            before: PROPTEST_BLOCK,
            gaming: &*Box::leak(PROPTEST_BLOCK.replace("fn total_is_positive(x in 0u32..100)", "fn total_is_positive(x in Just(7u32))").into_boxed_str()),
            harmless: &*Box::leak(PROPTEST_BLOCK.replace("fn total_is_positive(x in 0u32..100)", "fn total_is_positive(x in 0u32..99)").into_boxed_str()),
        },
        Case {
            rule: "strategy-narrowed",
            path: "py/test_map_constant.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(PY_PROPERTY.replace("@given(st.integers(), st.integers())", "@given(st.integers().map(lambda _: 0), st.integers())").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("@given(st.integers(), st.integers())", "@given(st.integers().map(lambda v: v * 2), st.integers())").into_boxed_str()),
        },
        Case {
            rule: "hypothesis-settings",
            path: "py/test_profile.py",
            before: PY_PROPERTY,
            gaming: &*Box::leak(PY_PROPERTY.replace("import pytest\n", "import pytest\nsettings.load_profile(\"ci\")\n").into_boxed_str()),
            harmless: &*Box::leak(PY_PROPERTY.replace("import pytest\n", "import pytest\nsettings.register_profile(\"ci\", print_blob=True)\n").into_boxed_str()),
        },
        Case {
            rule: "retry-or-sleep",
            path: "tests/retry_named.rs",
            before: PROPTEST_BLOCK,
            gaming: &*Box::leak(PROPTEST_BLOCK.replace("    #[test]\n    fn total_is_positive", "    #[test]\n    fn prop_retry_delay_is_monotonic(n in 0u32..10) {\n        std::thread::sleep(std::time::Duration::from_millis(1));\n        prop_assert!(delay(n) <= delay(n + 1), \"flaky\");\n    }\n\n    #[test]\n    fn total_is_positive").into_boxed_str()),
            harmless: &*Box::leak(PROPTEST_BLOCK.replace("    #[test]\n    fn total_is_positive", "    #[test]\n    fn prop_retry_delay_is_monotonic(n in 0u32..10) {\n        prop_assert!(delay(n) <= delay(n + 1), \"flaky\");\n    }\n\n    #[test]\n    fn total_is_positive").into_boxed_str()),
        },
    ];
    cases.extend(rebinding_cases());
    cases
}

/// `PY_PROPERTY`'s test as a method of a class pytest collects.
const PY_CLASS_PROPERTY: &str = "from hypothesis import given, settings, strategies as st
import pytest


class TestTotals:
    @settings(max_examples=500)
    @given(st.integers(), st.integers())
    def test_total_is_sum(self, x, y):
        total = x + y
        assert total == y + x
";

/// A property rebound after its `def` in its module or class: pytest collects what the name is
/// bound to last, so the property no longer runs. Beside each, the same kind of statement
/// binding another name, or the name in another scope, or before the `def`, or wrapping it.
fn rebinding_cases() -> Vec<Case> {
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    // (file stem, base, gaming addition, harmless addition): each addition is appended to the
    // base, unless the harmless one starts with `^`, which puts it after the imports.
    let moves: &[(&str, &str, &str, &str)] = &[
        (
            "assign",
            PY_PROPERTY,
            "test_total_is_sum = None",
            "test_total_is_sum_runs = None",
        ),
        (
            "annotated",
            PY_PROPERTY,
            "test_total_is_sum: object = None",
            "test_total_is_sum: object",
        ),
        (
            "augmented",
            PY_PROPERTY,
            "test_total_is_sum += 1",
            "total_runs = 0\ntotal_runs += 1",
        ),
        (
            "tuple",
            PY_PROPERTY,
            "_, test_total_is_sum = 1, 2",
            "def helper():\n    _, test_total_is_sum = 1, 2\n    return test_total_is_sum",
        ),
        (
            "walrus",
            PY_PROPERTY,
            "print((test_total_is_sum := None))",
            "print([(total := 1)])",
        ),
        (
            "del",
            PY_PROPERTY,
            "del test_total_is_sum",
            "# del test_total_is_sum",
        ),
        (
            "import_as",
            PY_PROPERTY,
            "import os as test_total_is_sum",
            "^import os as test_total_is_sum",
        ),
        (
            "from_import",
            PY_PROPERTY,
            "from os import path as test_total_is_sum",
            "from os import path as test_total_is_sum_path",
        ),
        (
            "for",
            PY_PROPERTY,
            "for test_total_is_sum in range(1):\n    pass",
            "for total in range(1):\n    pass",
        ),
        (
            "with",
            PY_PROPERTY,
            "import contextlib\nwith contextlib.nullcontext() as test_total_is_sum:\n    pass",
            "import contextlib\nwith contextlib.nullcontext() as total:\n    pass",
        ),
        (
            "except_as",
            PY_PROPERTY,
            "try:\n    pass\nexcept ValueError as test_total_is_sum:\n    pass",
            "try:\n    pass\nexcept ValueError as error:\n    print(error)",
        ),
        (
            "if_block",
            PY_PROPERTY,
            "if True:\n    test_total_is_sum = None",
            "if True:\n    def helper():\n        test_total_is_sum = None\n        return test_total_is_sum",
        ),
        (
            "global",
            PY_PROPERTY,
            "def _hide():\n    global test_total_is_sum\n    test_total_is_sum = None\n\n\n_hide()",
            "def _hide():\n    test_total_is_sum = None\n    return test_total_is_sum\n\n\n_hide()",
        ),
        (
            "globals_item",
            PY_PROPERTY,
            "globals()[\"test_total_is_sum\"] = None",
            "print(globals()[\"test_total_is_sum\"])",
        ),
        (
            "globals_update",
            PY_PROPERTY,
            "globals().update(test_total_is_sum=None)",
            "globals().update(total_is_sum_checked=True)",
        ),
        (
            "sys_modules",
            PY_PROPERTY,
            "import sys\nsetattr(sys.modules[__name__], \"test_total_is_sum\", None)",
            "import sys\nsetattr(sys.modules[__name__], \"total_is_sum_seen\", True)",
        ),
        (
            "wrapped",
            PY_PROPERTY,
            "def tagged(f):\n    return f\n\n\ntest_total_is_sum = tagged",
            "def tagged(f):\n    f.tagged = True\n    return f\n\n\ntest_total_is_sum = tagged(test_total_is_sum)",
        ),
        (
            "class_body",
            PY_CLASS_PROPERTY,
            "    test_total_is_sum = None",
            "    test_total_is_sum_runs = None",
        ),
        (
            "class_attr",
            PY_CLASS_PROPERTY,
            "TestTotals.test_total_is_sum = None",
            "class TestOther:\n    test_total_is_sum = None",
        ),
        (
            "class_setattr",
            PY_CLASS_PROPERTY,
            "setattr(TestTotals, \"test_total_is_sum\", None)",
            "setattr(TestTotals, \"total_is_sum_seen\", True)",
        ),
        (
            "class_del",
            PY_CLASS_PROPERTY,
            "del TestTotals.test_total_is_sum",
            "TestTotals.total_is_sum_seen = True",
        ),
        (
            "class_name",
            PY_CLASS_PROPERTY,
            "TestTotals = None",
            "TestTotals = pytest.mark.tax(TestTotals)",
        ),
    ];
    moves
        .iter()
        .map(|(stem, base, gaming, harmless)| {
            let harmless = match harmless.strip_prefix('^') {
                Some(line) => base.replace("import pytest\n", &format!("import pytest\n{line}\n")),
                None if harmless.starts_with(' ') => format!("{base}{harmless}\n"),
                None => format!("{base}\n\n{harmless}\n"),
            };
            let gaming = if gaming.starts_with(' ') {
                format!("{base}{gaming}\n")
            } else {
                format!("{base}\n\n{gaming}\n")
            };
            Case {
                rule: "property-removed",
                path: leak(format!("py/test_rebind_{stem}.py")),
                before: base,
                gaming: leak(gaming),
                harmless: leak(harmless),
            }
        })
        .collect()
}

/// The repository: a base with every case's `before`, then two branches with one commit per
/// case, `gaming` and `harmless`; each branch judged once.
struct Judged {
    cases: Vec<Case>,
    /// Per case: the rule ids found in its gaming commit, and in its harmless commit.
    gaming: Vec<BTreeSet<String>>,
    harmless: Vec<BTreeMap<String, Vec<String>>>,
}

fn judged() -> &'static Judged {
    static JUDGED: OnceLock<Judged> = OnceLock::new();
    JUDGED.get_or_init(|| {
        let cases = cases();
        let repo = Repo::new();
        repo.write(
            "freezegate.toml",
            "[policy]\nproperty_paths = [\"tests/**\", \"py/**\", \"ci/**\"]\nmin_cases = 50\n",
        );
        let put = |path: &str, text: &str| {
            if !text.is_empty() {
                repo.write(path, text);
            } else if repo.path().join(path).exists() {
                repo.remove(path);
            }
        };
        for c in &cases {
            put(c.path, c.before);
        }
        let base = repo.commit("base");
        let run = |branch: &str, pick: fn(&Case) -> &'static str| -> (Vec<String>, PatchReport) {
            repo.branch(branch, &base);
            for c in &cases {
                put(c.path, pick(c));
                repo.git(&["add", "-A"]);
                repo.git(&[
                    "commit",
                    "-q",
                    "--allow-empty",
                    "-m",
                    &format!("{} {}", c.rule, c.path),
                ]);
            }
            // One commit per case, in case order.
            let range = format!("{base}..HEAD");
            let shas: Vec<String> = repo
                .git(&["rev-list", "--reverse", &range])
                .lines()
                .map(str::to_string)
                .collect();
            assert_eq!(shas.len(), cases.len());
            (shas, repo.check(&base))
        };
        let (gaming_shas, gaming_report) = run("gaming", |c| c.gaming);
        let (harmless_shas, harmless_report) = run("harmless", |c| c.harmless);
        let gaming = gaming_shas
            .iter()
            .map(|sha| {
                gaming_report
                    .findings
                    .iter()
                    .filter(|f| f.commit == *sha)
                    .map(|f| f.rule.clone())
                    .collect()
            })
            .collect();
        let harmless = harmless_shas
            .iter()
            .map(|sha| {
                let mut found: BTreeMap<String, Vec<String>> = BTreeMap::new();
                for f in harmless_report.findings.iter().filter(|f| f.commit == *sha) {
                    found
                        .entry(f.rule.clone())
                        .or_default()
                        .push(f.explanation.clone());
                }
                found
            })
            .collect();
        Judged {
            cases,
            gaming,
            harmless,
        }
    })
}

#[test]
fn every_gaming_move_fires_its_rule() {
    let j = judged();
    let mut missed = Vec::new();
    for (c, found) in j.cases.iter().zip(&j.gaming) {
        // Deleting a property also deletes its assertions: the one expected companion.
        let companion = if c.rule == "property-removed" {
            "assertion-removed"
        } else {
            c.rule
        };
        let unexpected = found.iter().any(|r| r != c.rule && r != companion);
        if !found.contains(c.rule) || unexpected {
            missed.push(format!("{} on {}: found {found:?}", c.rule, c.path));
        }
    }
    assert!(
        missed.is_empty(),
        "rules that did not fire:\n{}",
        missed.join("\n")
    );
}

#[test]
fn every_harmless_edit_next_to_a_move_is_silent() {
    let j = judged();
    let mut noisy = Vec::new();
    for (c, found) in j.cases.iter().zip(&j.harmless) {
        if !found.is_empty() {
            noisy.push(format!("{}: {found:?}", c.path));
        }
    }
    assert!(
        noisy.is_empty(),
        "harmless edits with findings:\n{}",
        noisy.join("\n")
    );
}

#[test]
fn every_rule_of_the_table_has_a_case() {
    let covered: BTreeSet<&str> = judged().cases.iter().map(|c| c.rule).collect();
    for rule in RULES {
        assert!(covered.contains(rule.id), "rule {} has no case", rule.id);
    }
}

/// A small base with one Rust property file and one unrelated source file.
fn small_repo() -> (Repo, String) {
    let repo = Repo::new();
    repo.write(
        "freezegate.toml",
        "[policy]\nproperty_paths = [\"tests/**\"]\nmin_cases = 50\n",
    );
    repo.write("tests/props.rs", PROPTEST_BLOCK);
    // A crate: its `tests/*.rs` are compiled, so a property renamed among them still runs.
    repo.write(
        "Cargo.toml",
        "[package]\nname = \"tax\"\nversion = \"0.1.0\"\n",
    );
    repo.write(
        "src/tax.rs",
        "pub fn total(x: u32, y: u32) -> u32 { x + y }\n",
    );
    let base = repo.commit("base");
    (repo, base)
}

#[test]
fn a_rename_without_content_change_is_not_a_removal_but_leaving_property_paths_is() {
    let (repo, base) = small_repo();
    repo.git(&["mv", "tests/props.rs", "tests/tax_props.rs"]);
    repo.commit("rename");
    let report = repo.check(&base);
    assert!(report.findings.is_empty(), "{:#?}", report.findings);

    repo.branch("out", &base);
    std::fs::create_dir_all(repo.path().join("attic")).unwrap();
    repo.git(&["mv", "tests/props.rs", "attic/props.rs"]);
    let moved = repo.commit("move the properties where nobody looks");
    let report = repo.check(&base);
    let rules: BTreeSet<&str> = report.findings.iter().map(|f| f.rule.as_str()).collect();
    assert!(rules.contains("property-removed"), "{rules:?}");
    assert!(
        report
            .findings
            .iter()
            .all(|f| f.commit == moved && f.file == "tests/props.rs")
    );
}

#[test]
fn a_signed_gaming_move_is_reported_but_does_not_block() {
    let (repo, base) = small_repo();
    repo.write(
        "tests/props.rs",
        &PROPTEST_BLOCK.replace("with_cases(1000)", "with_cases(200)"),
    );
    repo.commit_signed("fewer cases, on purpose", &keys().alice);
    repo.git(&["checkout", "-q", &base, "--", "."]);
    // The base lacks allowed signers: the finding blocks.
    let report = repo.check(&base);
    assert!(report.blocking());
    assert_eq!(report.findings.len(), 1);
    assert!(
        report.findings[0].explanation.contains("from 1000 to 200"),
        "{}",
        report.findings[0].explanation
    );

    let (repo, _) = small_repo();
    repo.write("freeze/allowed_signers", &keys().alice.allowed_line());
    let base = repo.commit_signed("trust alice", &keys().alice);
    repo.write(
        "tests/props.rs",
        &PROPTEST_BLOCK.replace("with_cases(1000)", "with_cases(200)"),
    );
    repo.commit_signed("fewer cases, on purpose", &keys().alice);
    let report = repo.check(&base);
    assert_eq!(report.findings.len(), 1);
    assert!(!report.findings[0].blocking);
    assert!(!report.blocking());
}

#[test]
fn property_and_code_changed_together_is_a_warning_only() {
    let (repo, base) = small_repo();
    repo.write(
        "src/tax.rs",
        "pub fn total(x: u32, y: u32) -> u32 { y + x }\n",
    );
    repo.write(
        "tests/props.rs",
        &PROPTEST_BLOCK.replace("let total = x + y;", "let total = y + x;"),
    );
    let c = repo.commit("fix and adjust the property");
    let report = repo.check(&base);
    assert!(!report.blocking(), "{:#?}", report.findings);
    let warnings: Vec<_> = report
        .warnings
        .iter()
        .filter(|w| w.kind == WarningKind::PropertyAndCode)
        .collect();
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0].commit.as_deref(), Some(c.as_str()));
}

#[test]
fn a_gaming_move_hidden_in_a_merge_commit_is_found() {
    let (repo, base) = small_repo();
    repo.branch("side", &base);
    repo.write(
        "src/tax.rs",
        "pub fn total(x: u32, y: u32) -> u32 { x.wrapping_add(y) }\n",
    );
    repo.commit("side");
    repo.branch("main", &base);
    repo.write("README.md", "x\n");
    repo.commit("main");
    repo.git(&["merge", "-q", "--no-ff", "--no-commit", "side"]);
    repo.write(
        "tests/props.rs",
        &PROPTEST_BLOCK.replace(
            "        let total = x + y;\n",
            "        prop_assume!(x == 0);\n        let total = x + y;\n",
        ),
    );
    let merge = repo.commit("Merge branch 'side'");
    let report = repo.check(&base);
    let found: Vec<(&str, &str, u32)> = report
        .findings
        .iter()
        .map(|f| (f.commit.as_str(), f.rule.as_str(), f.line))
        .collect();
    assert_eq!(found, vec![(merge.as_str(), "assume-added", 6)]);
}

/// A symbolic link under `property_paths` is `opaque-code` wherever it points, whether a
/// commit adds it, retargets it or turns a file into it: a link `json` to a package folder
/// outside `property_paths` (which `import json` beside the oracle loads) and a link
/// `__pycache__` to a folder of bytecode (which Python runs instead of the untouched source)
/// read as nothing to the line rules. Deleting one, and a link outside `property_paths`, are
/// not findings.
#[test]
fn a_symbolic_link_under_property_paths_is_opaque_code() {
    let repo = Repo::new();
    repo.write(
        "freezegate.toml",
        "[policy]\nproperty_paths = [\"tests/properties/**\"]\nmin_cases = 50\n",
    );
    repo.write("tests/properties/oracle.py", "import json\n");
    repo.write("tests/properties/notes.py", "NOTE = 1\n");
    repo.write("src/fastjson/__init__.py", "def loads(s):\n    return {}\n");
    repo.write("build/pyc/oracle.cpython-311.pyc", "bytecode\n");
    let base = repo.commit("base");
    let link = |target: &str, at: &str| {
        std::os::unix::fs::symlink(target, repo.path().join(at)).expect("symlink");
    };
    let json = "tests/properties/json";
    let pycache = "tests/properties/__pycache__";
    link("../../src/fastjson", json);
    let package = repo.commit("tests: share the codec with the properties");
    link("../../build/pyc", pycache);
    let cache = repo.commit("tests: share the bytecode cache");
    repo.remove(json);
    link("../../src", json);
    let retargeted = repo.commit("tests: the whole source folder");
    repo.remove("tests/properties/notes.py");
    link("oracle.py", "tests/properties/notes.py");
    let type_changed = repo.commit("tests: one helper");
    repo.remove(json);
    repo.commit("tests: no codec");
    link("src", "docs");
    repo.commit("docs: the source");

    let report = repo.check(&base);
    let found: Vec<(&str, &str, &str)> = report
        .findings
        .iter()
        .map(|f| (f.commit.as_str(), f.rule.as_str(), f.file.as_str()))
        .collect();
    assert_eq!(
        found,
        vec![
            (package.as_str(), "opaque-code", json),
            (cache.as_str(), "opaque-code", pycache),
            (retargeted.as_str(), "opaque-code", json),
            (
                type_changed.as_str(),
                "opaque-code",
                "tests/properties/notes.py"
            ),
        ],
        "{:#?}",
        report.findings
    );
    assert!(report.findings.iter().all(|f| {
        f.blocking
            && f.explanation
                .contains("is a symbolic link: the gate does not read what it stands for")
    }));
    assert!(report.blocking());
}

#[test]
fn without_property_paths_a_warning_says_nothing_was_looked_for() {
    let repo = Repo::new();
    repo.write("tests/props.rs", PROPTEST_BLOCK);
    let base = repo.commit("base");
    repo.remove("tests/props.rs");
    repo.commit("drop");
    let report = repo.check(&base);
    assert!(report.findings.is_empty());
    assert!(
        report
            .warnings
            .iter()
            .any(|w| w.kind == WarningKind::NoPropertyPaths)
    );
}
