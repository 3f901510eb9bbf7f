#!/usr/bin/env python3
"""Hypothesis anchor of the freezegate shrinking benchmark.

Runs each shrinking-challenge problem (shared/shrinking-challenges.md) as a Hypothesis test
under several fixed seeds and prints one JSON line per (problem, seed):

    {"anchor": "hypothesis", "problem": ..., "seed": ..., "found": true,
     "minimum": <canonical JSON text>, "size": <its length>, "calls_after_failure": N,
     "start": <the first failing input, canonical JSON text>}

"calls_after_failure" counts test-body calls from the first failing call (excluded) to the
end, i.e. the cost of shrinking; "start" lets the benchmark shrink the same first failure with
freezegate-shrink. The benchmark (crates/shrink/benches/challenges.rs) calls
this script; with --ensure-venv it first creates a virtual environment under
target/shrink-bench-venv and installs hypothesis from PyPI when it is missing, then re-runs
itself there.

Usage: shrink_hypothesis.py [--ensure-venv] [--seeds N] [--problem NAME]
"""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(ROOT, "target", "shrink-bench-venv")


def ensure_venv(argv):
    python = os.path.join(VENV, "bin", "python")
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True,
                       stdout=sys.stderr)
    probe = subprocess.run([python, "-c", "import hypothesis"], capture_output=True)
    if probe.returncode != 0:
        subprocess.run([python, "-m", "pip", "install", "--quiet", "hypothesis"],
                       check=True, stdout=sys.stderr)
    rest = [a for a in argv if a != "--ensure-venv"]
    os.execv(python, [python, os.path.abspath(__file__)] + rest)


def canonical(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# ---- the properties: each returns True when the property holds (the test passes)

def reverse(ls):
    return list(reversed(ls)) == ls


def lengthlist(ls):
    if not (1 <= len(ls) <= 100) or any(not 0 <= x <= 1000 for x in ls):
        return True
    return max(ls) < 900


def largeunionlist(ls):
    return len(set(x for inner in ls for x in inner)) < 5


def int16(x):
    return (x + 32768) % 65536 - 32768


def bound5(ls):
    if len(ls) != 5 or any(int16(sum(inner)) >= 256 for inner in ls):
        return True
    return int16(sum(int16(sum(inner)) for inner in ls)) < 1280


def difference(test):
    def prop(pair):
        first, second = pair
        if first < 1 or second < 1:
            return True
        return first < 10 or not test(abs(first - second))
    return prop


def distinct(ls):
    return len(set(ls)) < 3


def nestedlists(ls):
    return sum(len(inner) for inner in ls) <= 10


def deletion(case):
    ls, i = case["ls"], case["i"]
    if not 0 <= i < len(ls):
        return True
    x = ls[i]
    rest = list(ls)
    rest.remove(x)
    return x not in rest


def has_literal_zero_divisor(e):
    if isinstance(e, list):
        return (e[0] == "/" and e[2] == 0) or has_literal_zero_divisor(e[1]) \
            or has_literal_zero_divisor(e[2])
    return False


def evaluate(e):
    if isinstance(e, int):
        return e
    a, b = evaluate(e[1]), evaluate(e[2])
    return a + b if e[0] == "+" else a // b


def calculator(e):
    if has_literal_zero_divisor(e):
        return True
    try:
        evaluate(e)
    except ZeroDivisionError:
        return False
    return True


def coupling(ls):
    if any(not 0 <= v < len(ls) for v in ls):
        return True
    return all(j == i or ls[j] != i for i, j in enumerate(ls))


def strategies():
    from hypothesis import strategies as st

    ints = st.integers()
    expr = st.recursive(
        ints,
        lambda sub: st.tuples(st.sampled_from(["+", "/"]), sub, sub).map(list),
        max_leaves=64,
    )
    return {
        "reverse": (st.lists(ints), reverse),
        "lengthlist": (st.lists(st.integers(0, 1000), min_size=1, max_size=100), lengthlist),
        "largeunionlist": (st.lists(st.lists(ints)), largeunionlist),
        "bound5": (st.lists(st.lists(st.integers(-32768, 32767)).filter(
            lambda x: int16(sum(x)) < 256), min_size=5, max_size=5), bound5),
        "difference_zero": (st.tuples(st.integers(1), st.integers(1)).map(list),
                            difference(lambda d: d == 0)),
        "difference_small": (st.tuples(st.integers(1), st.integers(1)).map(list),
                             difference(lambda d: 1 <= d <= 4)),
        "difference_one": (st.tuples(st.integers(1), st.integers(1)).map(list),
                           difference(lambda d: d == 1)),
        "distinct": (st.lists(ints), distinct),
        "nestedlists": (st.lists(st.lists(ints)), nestedlists),
        "deletion": (st.lists(ints, min_size=1).flatmap(
            lambda ls: st.fixed_dictionaries(
                {"ls": st.just(ls), "i": st.integers(0, len(ls) - 1)})), deletion),
        "calculator": (expr, calculator),
        "coupling": (st.lists(st.integers(0, 10)).filter(
            lambda ls: all(v < len(ls) for v in ls)), coupling),
    }


def run(problem, strategy, holds, seed):
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as hseed

    sys.set_int_max_str_digits(0)
    state = {"calls": 0, "first_failure": None, "first_value": None, "last_failure": None}

    @hseed(seed)
    @settings(database=None, max_examples=2000, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def test(value):
        state["calls"] += 1
        if not holds(value):
            if state["first_failure"] is None:
                state["first_failure"] = state["calls"]
                state["first_value"] = canonical(value)
            state["last_failure"] = value
            raise AssertionError("falsified")

    try:
        test()
    except AssertionError:
        pass
    except Exception as e:  # a Hypothesis error (e.g. flaky): report it, do not crash
        return {"anchor": "hypothesis", "problem": problem, "seed": seed, "found": False,
                "error": type(e).__name__}
    if state["first_failure"] is None:
        return {"anchor": "hypothesis", "problem": problem, "seed": seed, "found": False}
    minimum = canonical(state["last_failure"])
    return {
        "anchor": "hypothesis",
        "problem": problem,
        "seed": seed,
        "found": True,
        "minimum": minimum,
        "size": len(minimum.encode("utf-8")),
        "calls_after_failure": state["calls"] - state["first_failure"],
        "start": state["first_value"],
    }


def main(argv):
    if "--ensure-venv" in argv:
        ensure_venv(argv)
    seeds = 5
    only = None
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg == "--seeds":
            seeds = int(args.pop(0))
        elif arg == "--problem":
            only = args.pop(0)
    import hypothesis

    print(json.dumps({"anchor": "hypothesis", "version": hypothesis.__version__}), flush=True)
    for problem, (strategy, holds) in strategies().items():
        if only and problem != only:
            continue
        for seed in range(1, seeds + 1):
            print(json.dumps(run(problem, strategy, holds, seed)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
