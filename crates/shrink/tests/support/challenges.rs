//! The shrinking-challenge problems over JSON (`shared/shrinking-challenges.md`): each one's
//! oracle as a Rust closure, its known minimum, and a seeded generator of large, noisy,
//! domain-valid failing inputs. Shared by the tests and the benchmark.

#![allow(dead_code)]

use freezegate_canon::{Int, Value};
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64;

/// One challenge problem.
pub struct Challenge {
    /// The name used in `shared/shrinking-challenges.md`.
    pub name: &'static str,
    /// The canonical size of the known minimum.
    pub min_size: usize,
    /// One known minimum, in canonical bytes.
    pub known_min: &'static str,
    /// `true` when the value falsifies the property (outside the domain or of the wrong
    /// shape: `false`, the property holds there).
    pub fails: fn(&Value) -> bool,
    /// A large, noisy, failing input from a seeded generator.
    pub generate: fn(&mut Rng) -> Value,
}

/// All challenges of the benchmark and the tests.
pub fn all() -> Vec<Challenge> {
    vec![
        Challenge {
            name: "reverse",
            min_size: 5,
            known_min: "[0,1]",
            fails: reverse,
            generate: gen_reverse,
        },
        Challenge {
            name: "lengthlist",
            min_size: 5,
            known_min: "[900]",
            fails: lengthlist,
            generate: gen_lengthlist,
        },
        Challenge {
            name: "largeunionlist",
            min_size: 13,
            known_min: "[[0,1,2,3,4]]",
            fails: largeunionlist,
            generate: gen_largeunionlist,
        },
        Challenge {
            name: "bound5",
            min_size: 24,
            known_min: "[[-32768],[-1],[],[],[]]",
            fails: bound5,
            generate: gen_bound5,
        },
        Challenge {
            name: "difference_zero",
            min_size: 7,
            known_min: "[10,10]",
            fails: difference_zero,
            generate: gen_difference_zero,
        },
        Challenge {
            name: "difference_small",
            min_size: 6,
            known_min: "[10,6]",
            fails: difference_small,
            generate: gen_difference_small,
        },
        Challenge {
            name: "difference_one",
            min_size: 6,
            known_min: "[10,9]",
            fails: difference_one,
            generate: gen_difference_one,
        },
        Challenge {
            name: "distinct",
            min_size: 7,
            known_min: "[0,1,2]",
            fails: distinct,
            generate: gen_distinct,
        },
        Challenge {
            name: "nestedlists",
            min_size: 25,
            known_min: "[[0,0,0,0,0,0,0,0,0,0,0]]",
            fails: nestedlists,
            generate: gen_nestedlists,
        },
        Challenge {
            name: "deletion",
            min_size: 18,
            known_min: r#"{"i":0,"ls":[0,0]}"#,
            fails: deletion,
            generate: gen_deletion,
        },
        Challenge {
            name: "calculator",
            min_size: 17,
            known_min: r#"["/",0,["+",0,0]]"#,
            fails: calculator,
            generate: gen_calculator,
        },
        Challenge {
            name: "coupling",
            min_size: 5,
            known_min: "[1,0]",
            fails: coupling,
            generate: gen_coupling,
        },
    ]
}

/// The seeded generator: PCG-64, a fixed algorithm whose stream never changes.
pub struct Rng(Pcg64);

impl Rng {
    /// A generator for one seed.
    pub fn new(seed: u64) -> Rng {
        Rng(Pcg64::seed_from_u64(seed))
    }
    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.0.next_u64() % n
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        let span = (i128::from(hi) - i128::from(lo) + 1) as u128;
        (i128::from(lo) + (u128::from(self.0.next_u64()) % span) as i128) as i64
    }
    /// `true` with probability `num / den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }
    /// A noisy integer: small, 64-bit, or tens of digits, of either sign.
    pub fn noisy_int(&mut self) -> Int {
        match self.below(4) {
            0 => Int::from(self.range(-100, 100)),
            1 => Int::from(self.range(i64::MIN, i64::MAX)),
            _ => {
                let digits = 15 + self.below(30) as usize;
                let mut text = String::new();
                if self.chance(1, 2) {
                    text.push('-');
                }
                text.push(char::from(b'1' + self.below(9) as u8));
                for _ in 1..digits {
                    text.push(char::from(b'0' + self.below(10) as u8));
                }
                Int::parse(&text).unwrap()
            }
        }
    }
    /// A positive integer of 15 to 45 digits.
    pub fn big_positive(&mut self) -> Int {
        let digits = 15 + self.below(30) as usize;
        let mut text = String::new();
        text.push(char::from(b'1' + self.below(9) as u8));
        for _ in 1..digits {
            text.push(char::from(b'0' + self.below(10) as u8));
        }
        Int::parse(&text).unwrap()
    }
}

fn int(n: i64) -> Value {
    Value::Int(Int::from(n))
}

fn ints(v: &Value) -> Option<Vec<&Int>> {
    match v {
        Value::Array(items) => items
            .iter()
            .map(|x| match x {
                Value::Int(n) => Some(n),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

fn small_ints(v: &Value) -> Option<Vec<i128>> {
    ints(v)?.into_iter().map(|n| n.to_i128()).collect()
}

fn lists_of_ints(v: &Value) -> Option<Vec<Vec<&Int>>> {
    match v {
        Value::Array(items) => items.iter().map(ints).collect(),
        _ => None,
    }
}

// ---- reverse

fn reverse(v: &Value) -> bool {
    match ints(v) {
        Some(ls) => ls.iter().rev().ne(ls.iter()),
        None => false,
    }
}

fn gen_reverse(rng: &mut Rng) -> Value {
    loop {
        let n = 200 + rng.below(400) as usize;
        let v = Value::Array((0..n).map(|_| Value::Int(rng.noisy_int())).collect());
        if reverse(&v) {
            return v;
        }
    }
}

// ---- lengthlist

fn lengthlist(v: &Value) -> bool {
    let Some(ls) = small_ints(v) else {
        return false;
    };
    if ls.is_empty() || ls.len() > 100 || ls.iter().any(|&x| !(0..=1000).contains(&x)) {
        return false;
    }
    ls.iter().max().is_some_and(|&m| m >= 900)
}

fn gen_lengthlist(rng: &mut Rng) -> Value {
    let n = 60 + rng.below(41) as usize;
    let mut ls: Vec<Value> = (0..n).map(|_| int(rng.range(0, 1000))).collect();
    let at = rng.below(n as u64) as usize;
    ls[at] = int(rng.range(900, 1000));
    Value::Array(ls)
}

// ---- largeunionlist

fn largeunionlist(v: &Value) -> bool {
    let Some(lists) = lists_of_ints(v) else {
        return false;
    };
    let mut seen = std::collections::BTreeSet::new();
    for n in lists.into_iter().flatten() {
        seen.insert(n.as_str());
    }
    seen.len() >= 5
}

fn gen_largeunionlist(rng: &mut Rng) -> Value {
    let n = 50 + rng.below(150) as usize;
    Value::Array(
        (0..n)
            .map(|_| {
                let m = rng.below(12) as usize;
                Value::Array((0..m).map(|_| Value::Int(rng.noisy_int())).collect())
            })
            .collect(),
    )
}

// ---- bound5

fn bound5(v: &Value) -> bool {
    let Value::Array(lists) = v else { return false };
    if lists.len() != 5 {
        return false;
    }
    let mut total: i16 = 0;
    for list in lists {
        let Some(xs) = small_ints(list) else {
            return false;
        };
        if xs.iter().any(|&x| !(-32768..=32767).contains(&x)) {
            return false;
        }
        let sum = xs.iter().fold(0i16, |acc, &x| acc.wrapping_add(x as i16));
        if sum >= 256 {
            return false;
        }
        total = total.wrapping_add(sum);
    }
    total >= 1280
}

fn gen_bound5(rng: &mut Rng) -> Value {
    loop {
        let lists: Vec<Value> = (0..5)
            .map(|_| {
                loop {
                    let m = 20 + rng.below(60) as usize;
                    let list =
                        Value::Array((0..m).map(|_| int(rng.range(-32768, 32767))).collect());
                    let sum = small_ints(&list)
                        .unwrap()
                        .iter()
                        .fold(0i16, |acc, &x| acc.wrapping_add(x as i16));
                    if sum < 256 {
                        break list;
                    }
                }
            })
            .collect();
        let v = Value::Array(lists);
        if bound5(&v) {
            return v;
        }
    }
}

/// A small *bound5* start, closer to what Hypothesis draws than [`gen_bound5`]: five lists
/// of 0 to 5 values uniform over int16, each list redrawn until its wrapped sum is below
/// 256, the whole redrawn until it fails.
pub fn gen_bound5_small(rng: &mut Rng) -> Value {
    loop {
        let lists: Vec<Value> = (0..5)
            .map(|_| {
                loop {
                    let m = rng.below(6) as usize;
                    let list =
                        Value::Array((0..m).map(|_| int(rng.range(-32768, 32767))).collect());
                    let sum = small_ints(&list)
                        .unwrap()
                        .iter()
                        .fold(0i16, |acc, &x| acc.wrapping_add(x as i16));
                    if sum < 256 {
                        break list;
                    }
                }
            })
            .collect();
        let v = Value::Array(lists);
        if bound5(&v) {
            return v;
        }
    }
}

/// Whether a *bound5* value holds an inner list that overflows on the positive side: no
/// negative element, a negative wrapped sum (`[1,32767]`, wrapped `-32768`). Steps toward
/// zero cannot turn such a list into a shorter one with the same negative sum.
pub fn bound5_positive_overflow(v: &Value) -> bool {
    lists_of_ints(v).is_some_and(|lists| {
        lists.iter().any(|list| {
            let xs: Vec<i128> = list.iter().filter_map(|n| n.to_i128()).collect();
            xs.len() == list.len()
                && xs.iter().all(|&x| x >= 0)
                && xs.iter().fold(0i16, |acc, &x| acc.wrapping_add(x as i16)) < 0
        })
    })
}

// ---- the difference problems

/// `[first, second]`, both positive integers of any length.
fn big_pair(v: &Value) -> Option<(Int, Int)> {
    let xs = ints(v)?;
    match xs.as_slice() {
        [a, b] if !a.is_negative() && !a.is_zero() && !b.is_negative() && !b.is_zero() => {
            Some(((*a).clone(), (*b).clone()))
        }
        _ => None,
    }
}

/// `|a - b|` of two non-negative integers of any length, when it is at most `cap`.
fn small_gap(a: &Int, b: &Int, cap: u64) -> Option<u64> {
    let (x, y) = (a.as_str(), b.as_str());
    let (big, small) = if (x.len(), x) >= (y.len(), y) {
        (x, y)
    } else {
        (y, x)
    };
    // Schoolbook subtraction, least significant digit first.
    let mut out = Vec::with_capacity(big.len());
    let mut borrow = 0i32;
    let (bb, sb) = (big.as_bytes(), small.as_bytes());
    for i in 0..bb.len() {
        let d = i32::from(bb[bb.len() - 1 - i] - b'0')
            - borrow
            - if i < sb.len() {
                i32::from(sb[sb.len() - 1 - i] - b'0')
            } else {
                0
            };
        borrow = i32::from(d < 0);
        out.push(u8::try_from(d.rem_euclid(10)).unwrap());
    }
    while out.len() > 1 && out.last() == Some(&0) {
        out.pop();
    }
    if out.len() > 18 {
        return None;
    }
    let gap = out
        .iter()
        .rev()
        .fold(0u64, |acc, &d| acc * 10 + u64::from(d));
    (gap <= cap).then_some(gap)
}

fn ge_10(a: &Int) -> bool {
    a.to_i64().is_none_or(|x| x >= 10)
}

fn difference_zero(v: &Value) -> bool {
    big_pair(v).is_some_and(|(a, b)| ge_10(&a) && small_gap(&a, &b, 0) == Some(0))
}

fn difference_small(v: &Value) -> bool {
    big_pair(v).is_some_and(|(a, b)| ge_10(&a) && matches!(small_gap(&a, &b, 4), Some(1..=4)))
}

fn difference_one(v: &Value) -> bool {
    big_pair(v).is_some_and(|(a, b)| ge_10(&a) && small_gap(&a, &b, 1) == Some(1))
}

/// `a + by` for a long positive `a` whose last digits do not wrap.
fn offset(a: &Int, by: i64) -> Int {
    let text = a.as_str();
    let cut = text.len() - 12;
    let low: i64 = text[cut..].parse().unwrap();
    let low = low + by;
    assert!((0..1_000_000_000_000).contains(&low));
    Int::parse(&format!("{}{low:012}", &text[..cut])).unwrap()
}

fn gen_difference_zero(rng: &mut Rng) -> Value {
    let a = rng.big_positive();
    Value::Array(vec![Value::Int(a.clone()), Value::Int(a)])
}

fn gen_difference_small(rng: &mut Rng) -> Value {
    loop {
        let a = Int::parse(&format!("{}5000", rng.big_positive())).unwrap();
        let d = rng.range(1, 4) * if rng.chance(1, 2) { 1 } else { -1 };
        let v = Value::Array(vec![Value::Int(a.clone()), Value::Int(offset(&a, d))]);
        if difference_small(&v) {
            return v;
        }
    }
}

fn gen_difference_one(rng: &mut Rng) -> Value {
    loop {
        let a = Int::parse(&format!("{}5000", rng.big_positive())).unwrap();
        let d = if rng.chance(1, 2) { 1 } else { -1 };
        let v = Value::Array(vec![Value::Int(a.clone()), Value::Int(offset(&a, d))]);
        if difference_one(&v) {
            return v;
        }
    }
}

// ---- distinct

fn distinct(v: &Value) -> bool {
    match ints(v) {
        Some(ls) => {
            ls.iter()
                .map(|n| n.as_str())
                .collect::<std::collections::BTreeSet<_>>()
                .len()
                >= 3
        }
        None => false,
    }
}

fn gen_distinct(rng: &mut Rng) -> Value {
    let n = 200 + rng.below(600) as usize;
    Value::Array((0..n).map(|_| Value::Int(rng.noisy_int())).collect())
}

// ---- nestedlists

fn nestedlists(v: &Value) -> bool {
    lists_of_ints(v).is_some_and(|lists| lists.iter().map(Vec::len).sum::<usize>() > 10)
}

fn gen_nestedlists(rng: &mut Rng) -> Value {
    let n = 50 + rng.below(150) as usize;
    Value::Array(
        (0..n)
            .map(|_| {
                let m = rng.below(10) as usize;
                Value::Array((0..m).map(|_| Value::Int(rng.noisy_int())).collect())
            })
            .collect(),
    )
}

// ---- deletion

fn deletion(v: &Value) -> bool {
    let (Some(ls), Some(Value::Int(i))) = (v.get("ls"), v.get("i")) else {
        return false;
    };
    let Some(ls) = ints(ls) else { return false };
    let Some(i) = i.to_u64().and_then(|i| usize::try_from(i).ok()) else {
        return false;
    };
    if i >= ls.len() {
        return false;
    }
    ls.iter().filter(|x| x.as_str() == ls[i].as_str()).count() >= 2
}

fn gen_deletion(rng: &mut Rng) -> Value {
    let n = 200 + rng.below(300) as usize;
    let mut ls: Vec<Int> = (0..n)
        .map(|_| {
            if rng.chance(1, 3) {
                Int::from(rng.range(0, 40))
            } else {
                rng.noisy_int()
            }
        })
        .collect();
    let i = rng.below(n as u64) as usize;
    let mut j = rng.below(n as u64) as usize;
    if j == i {
        j = (i + 1) % n;
    }
    ls[j] = ls[i].clone();
    Value::Object(vec![
        (
            "ls".to_owned(),
            Value::Array(ls.into_iter().map(Value::Int).collect()),
        ),
        (
            "note".to_owned(),
            Value::from(format!("noise {}", rng.below(1_000_000))),
        ),
        ("i".to_owned(), int(i as i64)),
        (
            "weight".to_owned(),
            Value::Float(freezegate_canon::Float::new(rng.below(1000) as f64 / 7.0).unwrap()),
        ),
        (
            "tags".to_owned(),
            Value::Array(
                (0..rng.below(20))
                    .map(|k| Value::from(format!("t{k}")))
                    .collect(),
            ),
        ),
    ])
}

// ---- calculator

enum Eval {
    Value(i128),
    DivByZero,
    Invalid,
}

fn has_literal_zero_divisor(e: &Value) -> bool {
    match e {
        Value::Array(items) if items.len() == 3 => {
            let literal_zero = matches!(&items[2], Value::Int(n) if n.is_zero());
            (items[0] == Value::from("/") && literal_zero)
                || has_literal_zero_divisor(&items[1])
                || has_literal_zero_divisor(&items[2])
        }
        _ => false,
    }
}

fn eval(e: &Value) -> Eval {
    match e {
        Value::Int(n) => n.to_i128().map_or(Eval::Invalid, Eval::Value),
        Value::Array(items) if items.len() == 3 => {
            let op = match &items[0] {
                Value::String(s) if s == "+" || s == "/" => s.as_str(),
                _ => return Eval::Invalid,
            };
            let a = match eval(&items[1]) {
                Eval::Value(a) => a,
                other => return other,
            };
            let b = match eval(&items[2]) {
                Eval::Value(b) => b,
                other => return other,
            };
            match op {
                "+" => a.checked_add(b).map_or(Eval::Invalid, Eval::Value),
                _ if b == 0 => Eval::DivByZero,
                // Floor division, as Python's `//`.
                _ => {
                    let q = a / b;
                    Eval::Value(if a % b != 0 && ((a < 0) != (b < 0)) {
                        q - 1
                    } else {
                        q
                    })
                }
            }
        }
        _ => Eval::Invalid,
    }
}

fn calculator(v: &Value) -> bool {
    if has_literal_zero_divisor(v) {
        return false;
    }
    matches!(eval(v), Eval::DivByZero)
}

fn gen_expr(rng: &mut Rng, depth: u32) -> Value {
    if depth == 0 || rng.chance(1, 5) {
        let mut n = rng.range(-1_000_000_000_000, 1_000_000_000_000);
        if n == 0 {
            n = 7;
        }
        return int(n);
    }
    let op = if rng.chance(1, 3) { "/" } else { "+" };
    Value::Array(vec![
        Value::from(op),
        gen_expr(rng, depth - 1),
        gen_expr(rng, depth - 1),
    ])
}

fn gen_calculator(rng: &mut Rng) -> Value {
    loop {
        let mut root = gen_expr(rng, 7);
        // Hide a division by zero: a divisor that evaluates to zero, never a literal 0.
        let k = rng.range(1, 1_000_000_000);
        let zero = if rng.chance(1, 2) {
            Value::Array(vec![Value::from("+"), int(k), int(-k)])
        } else {
            Value::Array(vec![
                Value::from("/"),
                int(k),
                int(k + 1 + rng.range(0, 1_000_000)),
            ])
        };
        let bad = Value::Array(vec![Value::from("/"), gen_expr(rng, 3), zero]);
        root = Value::Array(vec![Value::from("+"), root, bad]);
        if let Value::Array(items) = &mut root
            && rng.chance(1, 2)
        {
            items.swap(1, 2);
        }
        if calculator(&root) {
            return root;
        }
    }
}

// ---- coupling

fn coupling(v: &Value) -> bool {
    let Some(ls) = small_ints(v) else {
        return false;
    };
    let n = ls.len() as i128;
    if ls.iter().any(|&x| !(0..n).contains(&x)) {
        return false;
    }
    ls.iter()
        .enumerate()
        .any(|(i, &j)| j != i as i128 && ls[j as usize] == i as i128)
}

fn gen_coupling(rng: &mut Rng) -> Value {
    let n = 100 + rng.below(300) as usize;
    let mut ls: Vec<i64> = (0..n).map(|_| rng.below(n as u64) as i64).collect();
    let i = rng.below(n as u64) as usize;
    let j = (i + 1 + rng.below(n as u64 - 1) as usize) % n;
    ls[i] = j as i64;
    ls[j] = i as i64;
    Value::Array(ls.into_iter().map(int).collect())
}
