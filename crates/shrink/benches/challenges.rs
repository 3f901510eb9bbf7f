//! The shrinking-challenge benchmark: quality (did it reach the known minimum, canonical
//! size against it) and cost (oracle calls) of freezegate-shrink, with Hypothesis and
//! proptest as anchors on the same problems.
//!
//! `cargo bench -p freezegate-shrink --bench challenges [-- --seeds N] [-- --no-hypothesis]`
//!
//! freezegate-shrink starts from the large, noisy inputs of the seeded generators in
//! `tests/support/challenges.rs`. The anchors generate their own inputs (neither can be handed
//! a starting value): proptest in-process, with the strategies below; Hypothesis through
//! `scripts/shrink_hypothesis.py`, which makes a virtual environment under `target/` and
//! installs `hypothesis` from PyPI the first time. Without Python or without network the
//! Hypothesis column says so and the rest of the benchmark runs. Calls are oracle calls after
//! the first failure, which is what shrinking costs.

#[path = "../tests/support/challenges.rs"]
mod support;

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use freezegate_canon::{Int, Value, parse_str, to_canonical_bytes};
use freezegate_shrink::{Options, shrink};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};

/// One run of one shrinker on one problem and seed.
#[derive(Debug, Clone)]
struct Run {
    /// The minimum it reached, canonical text; `None` when no failure was found.
    minimum: Option<String>,
    /// Oracle calls after the first failure.
    calls: u64,
    /// The first failing input it met (the anchors), canonical text.
    start: Option<String>,
}

fn canonical(v: &Value) -> String {
    String::from_utf8(to_canonical_bytes(v).unwrap_or_default()).unwrap_or_default()
}

fn ints(xs: Vec<i64>) -> Value {
    Value::Array(xs.into_iter().map(Value::int).collect())
}

fn lists(xss: Vec<Vec<i64>>) -> Value {
    Value::Array(xss.into_iter().map(ints).collect())
}

fn expr_value(e: &Expr) -> Value {
    match e {
        Expr::Int(n) => Value::int(*n),
        Expr::Op(op, a, b) => Value::Array(vec![Value::from(*op), expr_value(a), expr_value(b)]),
    }
}

#[derive(Debug, Clone)]
enum Expr {
    Int(i64),
    Op(&'static str, Box<Expr>, Box<Expr>),
}

/// proptest's strategies for the problems, in the style of a proptest user.
fn proptest_strategy(problem: &str) -> Option<BoxedStrategy<Value>> {
    let any_ints = || vec(any::<i64>(), 0..100);
    let strategy = match problem {
        "reverse" | "distinct" => any_ints().prop_map(ints).boxed(),
        "lengthlist" => vec(0i64..=1000, 1..=100).prop_map(ints).boxed(),
        "largeunionlist" | "nestedlists" => {
            vec(vec(any::<i64>(), 0..10), 0..20).prop_map(lists).boxed()
        }
        "bound5" => vec(
            vec(any::<i16>(), 0..10).prop_filter("inner sum < 256", |xs| {
                xs.iter().fold(0i16, |a, &x| a.wrapping_add(x)) < 256
            }),
            5,
        )
        .prop_map(|xss| {
            lists(
                xss.into_iter()
                    .map(|xs| xs.into_iter().map(i64::from).collect())
                    .collect(),
            )
        })
        .boxed(),
        // Small ranges: over all positive i64 two random numbers are never close.
        "difference_zero" | "difference_small" | "difference_one" => (1i64..=1000, 1i64..=1000)
            .prop_map(|(a, b)| ints(vec![a, b]))
            .boxed(),
        "deletion" => vec(0i64..10, 1..50)
            .prop_flat_map(|ls| {
                let n = ls.len();
                (Just(ls), 0..n)
            })
            .prop_map(|(ls, i)| {
                Value::Object(vec![
                    ("ls".to_owned(), ints(ls)),
                    ("i".to_owned(), Value::Int(Int::from(i))),
                ])
            })
            .boxed(),
        "calculator" => {
            let leaf = prop_oneof![any::<i64>(), -10i64..10].prop_map(Expr::Int);
            leaf.prop_recursive(5, 64, 2, |inner| {
                (prop_oneof![Just("+"), Just("/")], inner.clone(), inner)
                    .prop_map(|(op, a, b)| Expr::Op(op, Box::new(a), Box::new(b)))
            })
            .prop_map(|e| expr_value(&e))
            .boxed()
        }
        "coupling" => (1usize..20)
            .prop_flat_map(|n| vec(0..n as i64, n))
            .prop_map(ints)
            .boxed(),
        _ => return None,
    };
    Some(strategy)
}

fn proptest_run(strategy: &BoxedStrategy<Value>, fails: fn(&Value) -> bool, seed: u64) -> Run {
    let config = Config {
        cases: 2000,
        failure_persistence: None,
        ..Config::default()
    };
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let mut runner = TestRunner::new_with_rng(
        config,
        TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes),
    );
    let calls = Cell::new(0u64);
    let first = Cell::new(None::<u64>);
    let start = RefCell::new(None::<String>);
    let result = runner.run(strategy, |v| {
        calls.set(calls.get() + 1);
        if fails(&v) {
            if first.get().is_none() {
                first.set(Some(calls.get()));
                *start.borrow_mut() = Some(canonical(&v));
            }
            return Err(TestCaseError::fail("falsified"));
        }
        Ok(())
    });
    match (result, first.get()) {
        (Err(TestError::Fail(_, minimum)), Some(first)) => Run {
            minimum: Some(canonical(&minimum)),
            calls: calls.get() - first,
            start: start.take(),
        },
        _ => Run {
            minimum: None,
            calls: 0,
            start: None,
        },
    }
}

fn hypothesis_runs(seeds: u64) -> Result<(String, BTreeMap<String, Vec<Run>>), String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let output = Command::new("python3")
        .arg(root.join("scripts/shrink_hypothesis.py"))
        .args(["--ensure-venv", "--seeds", &seeds.to_string()])
        .current_dir(&root)
        .output()
        .map_err(|e| format!("cannot run python3: {e}"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(format!(
            "the Hypothesis script failed: {}",
            stderr.lines().last().unwrap_or("no message")
        ));
    }
    let mut version = String::new();
    let mut runs: BTreeMap<String, Vec<Run>> = BTreeMap::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let v = parse_str(line).map_err(|e| format!("bad line from the script: {e}"))?;
        if let Some(Value::String(ver)) = v.get("version") {
            version = ver.clone();
            continue;
        }
        let (Some(Value::String(problem)), Some(Value::Bool(found))) =
            (v.get("problem"), v.get("found"))
        else {
            return Err(format!("bad line from the script: {line}"));
        };
        let run = match (found, v.get("minimum"), v.get("calls_after_failure")) {
            (true, Some(Value::String(m)), Some(Value::Int(c))) => Run {
                minimum: Some(m.clone()),
                calls: c.to_u64().unwrap_or(0),
                start: match v.get("start") {
                    Some(Value::String(s)) => Some(s.clone()),
                    _ => None,
                },
            },
            _ => Run {
                minimum: None,
                calls: 0,
                start: None,
            },
        };
        runs.entry(problem.clone()).or_default().push(run);
    }
    Ok((version, runs))
}

/// freezegate-shrink on the first failing inputs an anchor met: the same starting points.
fn ours_from(starts: &[Run], fails: fn(&Value) -> bool) -> Vec<Run> {
    starts
        .iter()
        .filter_map(|run| run.start.as_deref())
        .filter_map(|text| parse_str(text).ok())
        .filter(&fails)
        .map(|input| {
            let shrunk =
                shrink(&input, fails, &Options::default()).expect("parsed inputs are canonical");
            Run {
                minimum: Some(canonical(&shrunk.value)),
                calls: shrunk.oracle_calls,
                start: None,
            }
        })
        .collect()
}

/// Mean canonical size of the anchors' first failing inputs.
fn mean_start(runs: &[Run]) -> String {
    let sizes: Vec<usize> = runs
        .iter()
        .filter_map(|r| r.start.as_ref().map(String::len))
        .collect();
    if sizes.is_empty() {
        return "–".to_owned();
    }
    format!(
        "{:.0}",
        sizes.iter().sum::<usize>() as f64 / sizes.len() as f64
    )
}

/// "k/n", mean size of the minima found, mean and max calls.
fn summary(runs: &[Run], min_size: usize) -> String {
    let found: Vec<&Run> = runs.iter().filter(|r| r.minimum.is_some()).collect();
    if found.is_empty() {
        return format!("no failure found (0/{}) | – | –", runs.len());
    }
    let reached = found
        .iter()
        .filter(|r| r.minimum.as_ref().is_some_and(|m| m.len() == min_size))
        .count();
    let mean_size = found
        .iter()
        .map(|r| r.minimum.as_ref().map_or(0, String::len))
        .sum::<usize>() as f64
        / found.len() as f64;
    let mean_calls = found.iter().map(|r| r.calls).sum::<u64>() as f64 / found.len() as f64;
    let max_calls = found.iter().map(|r| r.calls).max().unwrap_or(0);
    let not_found = runs.len() - found.len();
    let note = if not_found > 0 {
        format!(" ({not_found} found none)")
    } else {
        String::new()
    };
    format!(
        "{reached}/{}{note} | {mean_size:.1} | {mean_calls:.0} (max {max_calls})",
        found.len()
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // `cargo bench` passes `--bench`; without it (`cargo test --benches`) this is a quick
    // smoke run: two seeds, no Hypothesis.
    let quick = !args.iter().any(|a| a == "--bench");
    let seeds = args
        .iter()
        .position(|a| a == "--seeds")
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(if quick { 2 } else { 10u64 });
    let with_hypothesis = !quick && !args.iter().any(|a| a == "--no-hypothesis");

    let hypothesis = if with_hypothesis {
        eprintln!("running the Hypothesis anchor ({seeds} seeds per problem)…");
        hypothesis_runs(seeds)
    } else {
        Err("skipped (--no-hypothesis)".to_owned())
    };

    println!("seeds per problem: {seeds}");
    match &hypothesis {
        Ok((version, _)) => println!("hypothesis: {version}"),
        Err(why) => println!("hypothesis: unavailable: {why}"),
    }
    println!();
    println!(
        "| problem | known min | shrinker | reached min | mean size | calls: mean (max) | start size: mean |"
    );
    println!("|---|---|---|---|---|---|---|");
    let mut total_ms = 0u128;
    for challenge in support::all() {
        let mut ours = Vec::new();
        let mut input_sizes = 0usize;
        let started = Instant::now();
        for seed in 1..=seeds {
            let input = (challenge.generate)(&mut support::Rng::new(seed));
            input_sizes += canonical(&input).len();
            let options = Options::default().with_max_calls(100_000);
            let shrunk =
                shrink(&input, challenge.fails, &options).expect("generated inputs are canonical");
            ours.push(Run {
                minimum: Some(canonical(&shrunk.value)),
                calls: shrunk.oracle_calls,
                start: None,
            });
        }
        total_ms += started.elapsed().as_millis();
        let mean_input = input_sizes as f64 / seeds as f64;
        let row = |who: &str, cells: String, input: &str| {
            println!(
                "| {} | {} ({}) | {who} | {cells} | {input} |",
                challenge.name, challenge.min_size, challenge.known_min
            );
        };
        row(
            "freezegate-shrink",
            summary(&ours, challenge.min_size),
            &format!("{mean_input:.0}"),
        );
        match &hypothesis {
            Ok((_, runs)) => {
                let runs = runs.get(challenge.name).cloned().unwrap_or_default();
                let start = mean_start(&runs);
                row("Hypothesis", summary(&runs, challenge.min_size), &start);
                let ours = ours_from(&runs, challenge.fails);
                row(
                    "freezegate-shrink, same starts",
                    summary(&ours, challenge.min_size),
                    &start,
                );
            }
            Err(_) => row("Hypothesis", "unavailable | – | –".to_owned(), "–"),
        }
        if let Some(strategy) = proptest_strategy(challenge.name) {
            let runs: Vec<Run> = (1..=seeds)
                .map(|seed| proptest_run(&strategy, challenge.fails, seed))
                .collect();
            let start = mean_start(&runs);
            row("proptest", summary(&runs, challenge.min_size), &start);
            let ours = ours_from(&runs, challenge.fails);
            row(
                "freezegate-shrink, same starts",
                summary(&ours, challenge.min_size),
                &start,
            );
        }
    }
    // bound5 from small starts (five lists of 0 to 5 int16 values, nearer what Hypothesis
    // draws than the noisy generator): how often the positive-overflow basin catches it.
    let small_seeds: u64 = if quick { 20 } else { 1_000 };
    let bound5 = support::all()
        .into_iter()
        .find(|c| c.name == "bound5")
        .expect("bound5 is a challenge");
    let mut misses: BTreeMap<usize, u64> = BTreeMap::new();
    let (mut calls, mut start, mut outside_basin) = (0u64, 0usize, 0u64);
    for seed in 1..=small_seeds {
        let input = support::gen_bound5_small(&mut support::Rng::new(seed));
        start += canonical(&input).len();
        let options = Options::default().with_max_calls(100_000);
        let shrunk =
            shrink(&input, bound5.fails, &options).expect("generated inputs are canonical");
        calls += shrunk.oracle_calls;
        let size = canonical(&shrunk.value).len();
        if size != bound5.min_size {
            *misses.entry(size).or_default() += 1;
            if !support::bound5_positive_overflow(&shrunk.value) {
                outside_basin += 1;
            }
        }
    }
    let missed: u64 = misses.values().sum();
    println!();
    println!(
        "bound5 from small starts (5 lists of 0-5 int16 values, mean {:.0} bytes), seeds 1..={small_seeds}: \
         known minimum {}/{small_seeds}, missed {missed} (by size: {}), {outside_basin} of them outside the \
         positive-overflow basin; mean {:.0} calls",
        start as f64 / small_seeds as f64,
        small_seeds - missed,
        misses
            .iter()
            .map(|(size, n)| format!("{size}: {n}"))
            .collect::<Vec<_>>()
            .join(", "),
        calls as f64 / small_seeds as f64,
    );
    // The cost target: one element among a thousand matters.
    let mut rng = support::Rng::new(7);
    let mut items: Vec<Value> = (0..1000).map(|_| Value::int(rng.range(0, 9_999))).collect();
    items[613] = Value::int(123_456_789);
    let fails = |v: &Value| match v {
        Value::Array(items) => items
            .iter()
            .any(|x| matches!(x, Value::Int(n) if n.to_i64().is_none_or(|n| n >= 10_000))),
        _ => false,
    };
    let shrunk = shrink(&Value::Array(items), fails, &Options::default()).expect("canonical");
    println!();
    println!(
        "1 000-element list, one element matters: {} in {} oracle calls",
        canonical(&shrunk.value),
        shrunk.oracle_calls
    );
    println!();
    println!("freezegate-shrink wall time, all problems and seeds: {total_ms} ms");
}
