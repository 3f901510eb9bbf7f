//! The fixed pass order, repeated to a fixpoint.

use std::collections::HashMap;

use freezegate_canon::{
    Canonicalization, Digest, Float, Int, Value, escape_pointer_token, value_bytes,
};

use crate::nfc::{is_nfc, is_nfc_char};
use crate::num::Num;
use crate::order::{member_order, smaller};
use crate::path::{Params, Step};

/// How many following integers (in document order) each integer is paired with for the
/// joint moves of the integer pass.
const PAIR_WINDOW: usize = 4;

/// How many descendants of a container (nearest first) the replacement pass tries in an
/// ordinary round. A round that accepts nothing then tries them all, so the cap never leaves
/// the result short of 1-minimal (SPEC §5).
const MAX_DESCENDANTS: usize = 64;

/// Arrays up to this length try keeping a single element right after deleting everything
/// failed, before the halves; longer ones only after the single deletions.
const KEEP_ONE_EARLY: usize = 64;

/// Arrays longer than this never try keeping a single element: it costs one call per element.
const KEEP_ONE_MAX: usize = 256;

/// One segment of a node's position.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seg {
    Index(usize),
    Key(String),
}

fn pointer_of(at: &[Seg]) -> String {
    let mut out = String::new();
    for seg in at {
        out.push('/');
        match seg {
            Seg::Index(i) => out.push_str(&i.to_string()),
            Seg::Key(k) => out.push_str(&escape_pointer_token(k)),
        }
    }
    out
}

fn node_at<'v>(value: &'v Value, at: &[Seg]) -> Option<&'v Value> {
    at.iter().try_fold(value, |node, seg| match (node, seg) {
        (Value::Array(items), Seg::Index(i)) => items.get(*i),
        (Value::Object(members), Seg::Key(k)) => {
            members.iter().find(|(key, _)| key == k).map(|(_, v)| v)
        }
        _ => None,
    })
}

/// The children of a container, in canonical order.
fn children(node: &Value, form: Canonicalization) -> Vec<Seg> {
    match node {
        Value::Array(items) => (0..items.len()).map(Seg::Index).collect(),
        Value::Object(members) => member_order(members, form)
            .into_iter()
            .map(|(k, _)| Seg::Key(k.clone()))
            .collect(),
        _ => Vec::new(),
    }
}

/// Every node's position in pre-order (a node before its children, children in canonical
/// order) whose value satisfies `keep`.
fn positions(value: &Value, form: Canonicalization, keep: fn(&Value) -> bool) -> Vec<Vec<Seg>> {
    let mut out = Vec::new();
    let mut stack: Vec<Vec<Seg>> = vec![Vec::new()];
    while let Some(at) = stack.pop() {
        let Some(node) = node_at(value, &at) else {
            continue;
        };
        if keep(node) {
            out.push(at.clone());
        }
        for seg in children(node, form).into_iter().rev() {
            let mut child = at.clone();
            child.push(seg);
            stack.push(child);
        }
    }
    out
}

/// What asking the oracle about one candidate told.
struct Asked {
    fails: bool,
    smaller: bool,
    candidate: Value,
    bytes: Vec<u8>,
}

/// The shrinker's state: the current (smallest failing) value and the bookkeeping.
pub(crate) struct Engine<F> {
    pub(crate) current: Value,
    current_bytes: Vec<u8>,
    form: Canonicalization,
    still_fails: F,
    memo: HashMap<[u8; 32], bool>,
    pub(crate) calls: u64,
    max_calls: u64,
    pub(crate) exhausted: bool,
    pub(crate) path: Vec<Step>,
}

impl<F: FnMut(&Value) -> bool> Engine<F> {
    pub(crate) fn new(
        value: Value,
        bytes: Vec<u8>,
        still_fails: F,
        form: Canonicalization,
        max_calls: u64,
    ) -> Engine<F> {
        let mut memo = HashMap::new();
        memo.insert(*Digest::of(&bytes).as_bytes(), true);
        Engine {
            current: value,
            current_bytes: bytes,
            form,
            still_fails,
            memo,
            calls: 0,
            max_calls,
            exhausted: false,
            path: Vec::new(),
        }
    }

    /// Runs whole rounds of the six passes until a round accepts nothing or the budget runs out.
    ///
    /// An ordinary round tries at most [`MAX_DESCENDANTS`] descendants per container. When it
    /// accepts nothing, the replacement pass runs once more without the cap (the first ones
    /// are answered from the memo) before the value is declared a fixpoint: a descendant past
    /// the cap that still fails starts another round.
    pub(crate) fn run(&mut self) {
        loop {
            let before = self.path.len();
            self.delete_in(Vec::new());
            self.replace_in(Vec::new(), Some(MAX_DESCENDANTS));
            self.strings();
            self.integers();
            self.floats();
            self.merge_in(Vec::new());
            if self.exhausted {
                return;
            }
            if self.path.len() == before {
                self.replace_in(Vec::new(), None);
                if self.exhausted || self.path.len() == before {
                    return;
                }
            }
        }
    }

    /// Tries one step on the current value: accepted (and recorded) when the candidate is
    /// strictly smaller and still fails.
    fn attempt(&mut self, step: Step) -> bool {
        match self.ask(&step) {
            Some(Asked {
                fails: true,
                smaller: true,
                candidate,
                bytes,
            }) => {
                self.current = candidate;
                self.current_bytes = bytes;
                self.path.push(step);
                true
            }
            _ => false,
        }
    }

    /// Whether a step's candidate still fails, and whether it is smaller. The oracle is asked
    /// at most once per canonical candidate (never for the input), and only for candidates
    /// that are smaller or when `probe` is set; not at all once the budget is spent.
    fn ask_with(&mut self, step: &Step, probe: bool) -> Option<Asked> {
        if self.exhausted {
            return None;
        }
        let candidate = step.apply_to(&self.current, self.path.len()).ok()?;
        // The current value's strings are in NFC (`shrink` normalises the input). A string
        // step whose result NFC would rewrite (a compatibility ideograph, a mark that now
        // composes with its base) is never asked: the oracle would see another string than
        // the step records, and the order and the path's character indices would no longer
        // mean what the oracle sees. Only string steps change strings.
        if matches!(step.params, Params::Chars { .. } | Params::Char { .. })
            && !matches!(candidate.pointer(&step.pointer), Some(Value::String(s)) if is_nfc(s))
        {
            return None;
        }
        let bytes = value_bytes(&candidate, self.form).ok()?;
        let smaller = smaller(
            &candidate,
            &bytes,
            &self.current,
            &self.current_bytes,
            self.form,
        );
        if !smaller && !probe {
            return None;
        }
        let digest = *Digest::of(&bytes).as_bytes();
        let fails = match self.memo.get(&digest) {
            Some(&known) => known,
            None => {
                if self.calls >= self.max_calls {
                    self.exhausted = true;
                    return None;
                }
                self.calls += 1;
                let fails = (self.still_fails)(&candidate);
                self.memo.insert(digest, fails);
                fails
            }
        };
        Some(Asked {
            fails,
            smaller,
            candidate,
            bytes,
        })
    }

    fn ask(&mut self, step: &Step) -> Option<Asked> {
        self.ask_with(step, false)
    }

    fn node(&self, at: &[Seg]) -> Option<&Value> {
        node_at(&self.current, at)
    }

    // (1) Deletion: the container at `at` first, then its children.
    fn delete_in(&mut self, at: Vec<Seg>) {
        match self.node(&at) {
            Some(Value::Array(_)) => self.delete_elements(&at),
            Some(Value::Object(_)) => self.delete_members(&at),
            _ => return,
        }
        let kids = self
            .node(&at)
            .map(|n| children(n, self.form))
            .unwrap_or_default();
        for seg in kids {
            if self.exhausted {
                return;
            }
            let mut child = at.clone();
            child.push(seg);
            self.delete_in(child);
        }
    }

    fn array_len(&self, at: &[Seg]) -> usize {
        match self.node(at) {
            Some(Value::Array(items)) => items.len(),
            _ => 0,
        }
    }

    /// Chunks of `k` elements from the end, for `k` = the whole array, then halves, quarters,
    /// … down to single elements.
    fn delete_elements(&mut self, at: &[Seg]) {
        let pointer = pointer_of(at);
        let mut k = self.array_len(at);
        let mut kept_early = false;
        while k > 0 {
            if !kept_early && k < self.array_len(at) && self.array_len(at) <= KEEP_ONE_EARLY {
                kept_early = true;
                self.keep_one(at, &pointer);
                k = k.min(self.array_len(at));
            }
            let mut end = self.array_len(at);
            while end > 0 && !self.exhausted {
                let start = end.saturating_sub(k);
                let count = end - start;
                let plain = Step {
                    pointer: pointer.clone(),
                    params: Params::Elements {
                        start,
                        count,
                        reindex: false,
                    },
                };
                if !self.attempt(plain) && self.is_index_array(at, end) {
                    self.attempt(Step {
                        pointer: pointer.clone(),
                        params: Params::Elements {
                            start,
                            count,
                            reindex: true,
                        },
                    });
                }
                end = start;
            }
            k /= 2;
        }
        self.keep_one(at, &pointer);
    }

    /// One element alone, of any position: the deletion of both sides of an inner element
    /// at once, which no chunk makes in one step.
    fn keep_one(&mut self, at: &[Seg], pointer: &str) {
        if self.array_len(at) > KEEP_ONE_MAX {
            return;
        }
        let mut index = 0;
        while index < self.array_len(at) && self.array_len(at) > 2 && !self.exhausted {
            if self.attempt(Step {
                pointer: pointer.to_owned(),
                params: Params::Keep { index },
            }) {
                return;
            }
            index += 1;
        }
    }

    /// Whether the array at `at` holds only integers `0 <= v < len` and one of them is at
    /// least `gap_end`: it may hold indices into itself, so a deletion may need the later
    /// indices to fall with it.
    fn is_index_array(&self, at: &[Seg], gap_end: usize) -> bool {
        let Some(Value::Array(items)) = self.node(at) else {
            return false;
        };
        let len = items.len();
        let mut reaches_past = false;
        for item in items {
            let Value::Int(n) = item else {
                return false;
            };
            match n.to_u64().and_then(|v| usize::try_from(v).ok()) {
                Some(v) if v < len => reaches_past |= v >= gap_end,
                _ => return false,
            }
        }
        reaches_past
    }

    fn delete_members(&mut self, at: &[Seg]) {
        let pointer = pointer_of(at);
        let keys = |engine: &Self| -> Vec<String> {
            match engine.node(at) {
                Some(Value::Object(members)) => member_order(members, engine.form)
                    .into_iter()
                    .map(|(k, _)| k.clone())
                    .collect(),
                _ => Vec::new(),
            }
        };
        let mut k = keys(self).len();
        while k > 0 {
            let mut end = keys(self).len();
            while end > 0 && !self.exhausted {
                let start = end.saturating_sub(k);
                let chunk = keys(self)[start..end].to_vec();
                self.attempt(Step {
                    pointer: pointer.clone(),
                    params: Params::Members { keys: chunk },
                });
                end = start;
            }
            k /= 2;
        }
    }

    // (2) Replacement of a container by a descendant, breadth first: at most `cap`
    // descendants per container, all of them with `None`.
    fn replace_in(&mut self, at: Vec<Seg>, cap: Option<usize>) {
        let Some(node) = self.node(&at) else {
            return;
        };
        if !matches!(node, Value::Array(_) | Value::Object(_)) {
            return;
        }
        let limit = cap.unwrap_or(usize::MAX);
        let mut descendants = Vec::new();
        let mut frontier: Vec<Vec<Seg>> = children(node, self.form)
            .into_iter()
            .map(|s| vec![s])
            .collect();
        'levels: while !frontier.is_empty() {
            let mut next = Vec::new();
            for rel in frontier {
                if descendants.len() >= limit {
                    break 'levels;
                }
                if let Some(d) = node_at(node, &rel) {
                    for seg in children(d, self.form) {
                        let mut deeper = rel.clone();
                        deeper.push(seg);
                        next.push(deeper);
                    }
                }
                descendants.push(rel);
            }
            frontier = next;
        }
        let pointer = pointer_of(&at);
        for rel in descendants {
            if self.exhausted {
                return;
            }
            let step = Step {
                pointer: pointer.clone(),
                params: Params::Descendant {
                    by: pointer_of(&rel),
                },
            };
            if self.attempt(step) {
                // The node is now that descendant: start again on it.
                return self.replace_in(at, cap);
            }
        }
        let kids = self
            .node(&at)
            .map(|n| children(n, self.form))
            .unwrap_or_default();
        for seg in kids {
            if self.exhausted {
                return;
            }
            let mut child = at.clone();
            child.push(seg);
            self.replace_in(child, cap);
        }
    }

    // (3) Strings: chunks of characters, then single characters, from the end; then each
    // character that remains, from the start, toward '0'.
    fn strings(&mut self) {
        for at in positions(&self.current, self.form, |v| matches!(v, Value::String(_))) {
            let pointer = pointer_of(&at);
            let char_len = |engine: &Self| match engine.node(&at) {
                Some(Value::String(s)) => s.chars().count(),
                _ => 0,
            };
            let mut k = char_len(self);
            while k > 0 {
                let mut end = char_len(self);
                while end > 0 && !self.exhausted {
                    let start = end.saturating_sub(k);
                    self.attempt(Step {
                        pointer: pointer.clone(),
                        params: Params::Chars {
                            start,
                            count: end - start,
                        },
                    });
                    end = start;
                }
                k /= 2;
            }
            for index in 0..char_len(self) {
                if self.exhausted {
                    break;
                }
                self.simplify_char(&at, &pointer, index);
            }
        }
    }

    /// Moves character `index` of the string at `at` toward `'0'`: first to `'0'`, `'A'` or
    /// `'a'` (the first of them that still fails), then bisection of the code points between
    /// `'0'` and the current one (surrogates skipped), as integers are bisected toward zero.
    /// Every accepted step is smaller: fewer canonical bytes, or as many and a lower code point.
    ///
    /// Only characters whose substitution leaves the string in NFC are tried (see
    /// [`Engine::ask_with`]): when the midpoint is not one (a compatibility ideograph, a
    /// Hebrew presentation form, a mark that would compose), the bisection takes the highest
    /// one between the passing bound and the midpoint, and, if there is none, moves the
    /// passing bound to the midpoint without a call.
    fn simplify_char(&mut self, at: &[Seg], pointer: &str, index: usize) {
        let char_at = |engine: &Self| match engine.node(at) {
            Some(Value::String(s)) => s.chars().nth(index),
            _ => None,
        };
        let step = |to: char| Step {
            pointer: pointer.to_owned(),
            params: Params::Char { index, to },
        };
        // A step that is not smaller (`'A'` for `'7'`, `'0'` for a space) costs no call.
        for simple in ['0', 'A', 'a'] {
            if char_at(self).is_none_or(|c| c == simple) || self.exhausted {
                return;
            }
            if self.attempt(step(simple)) {
                break;
            }
        }
        let (mut low, mut high) = ('0' as u32, char_at(self).map_or(0, u32::from));
        while high > low + 1 && !self.exhausted {
            let mid = low + (high - low) / 2;
            let Some(to) = self.nfc_char_in(at, index, low, mid) else {
                low = mid;
                continue;
            };
            if self.attempt(step(to)) {
                high = u32::from(to);
            } else {
                low = mid;
            }
        }
    }

    /// The highest character in `(low, high]`, surrogates skipped, that can replace character
    /// `index` of the string at `at` with the string still in NFC; asks no oracle.
    fn nfc_char_in(&self, at: &[Seg], index: usize, low: u32, high: u32) -> Option<char> {
        let Some(Value::String(s)) = self.node(at) else {
            return None;
        };
        let (start, old) = s.char_indices().nth(index)?;
        let mut code_point = high;
        while code_point > low {
            if (0xD800..=0xDFFF).contains(&code_point) {
                code_point = 0xD7FF;
                continue;
            }
            if let Some(c) = char::from_u32(code_point).filter(|&c| is_nfc_char(c)) {
                let mut substituted = s.clone();
                substituted
                    .replace_range(start..start + old.len_utf8(), c.encode_utf8(&mut [0; 4]));
                if is_nfc(&substituted) {
                    return Some(c);
                }
            }
            code_point -= 1;
        }
        None
    }

    fn int_at(&self, at: &[Seg]) -> Option<Num> {
        match self.node(at) {
            Some(Value::Int(n)) => Some(Num::from_int(n)),
            _ => None,
        }
    }

    fn set_int(&mut self, pointer: &str, to: &Num) -> bool {
        self.attempt(Step {
            pointer: pointer.to_owned(),
            params: Params::Int { to: to.to_int() },
        })
    }

    // (4) Integers: each toward zero alone, then pairs together.
    fn integers(&mut self) {
        let ints = positions(&self.current, self.form, |v| matches!(v, Value::Int(_)));
        for at in &ints {
            if self.exhausted {
                return;
            }
            self.one_integer(at);
        }
        for (i, a) in ints.iter().enumerate() {
            for b in ints.iter().skip(i + 1).take(PAIR_WINDOW) {
                if self.exhausted {
                    return;
                }
                self.two_integers(a, b);
            }
        }
    }

    /// 0; the positive twin of a negative; fewer leading digits; bisection of the distance
    /// to zero; one step toward zero; for a negative still there, the digits 1 to 9.
    fn one_integer(&mut self, at: &[Seg]) {
        let pointer = pointer_of(at);
        let Some(n) = self.int_at(at) else {
            return;
        };
        if n.is_zero() || self.set_int(&pointer, &Num::zero()) {
            return;
        }
        let mut n = n;
        if n.is_negative() && self.set_int(&pointer, &n.abs()) {
            n = n.abs();
        }
        // Leading digits: the largest number of digits that still fails, by bisection.
        let digits = n.to_int().magnitude_digits().to_owned();
        let (mut lo, mut hi) = (0usize, digits.len());
        while hi - lo > 1 && !self.exhausted {
            let mid = lo + (hi - lo) / 2;
            let text = format!(
                "{}{}",
                if n.is_negative() { "-" } else { "" },
                &digits[..mid]
            );
            let to = Int::parse(&text)
                .map(|t| Num::from_int(&t))
                .unwrap_or(Num::zero());
            if self.set_int(&pointer, &to) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        let Some(n) = self.int_at(at) else {
            return;
        };
        // Bisection of |n| between a passing lower bound and the failing current value.
        let mut lo = Num::zero();
        let mut hi = n.abs();
        let one = Num::small(1);
        while hi.sub(&lo).cmp_abs(&one).is_gt() && !self.exhausted {
            let mid = lo.add(&hi).half();
            if self.set_int(&pointer, &mid.with_sign_of(&n)) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        // One step toward zero (free when bisection already asked it).
        if let Some(n) = self.int_at(at)
            && !n.is_zero()
        {
            let toward = n.abs().sub(&one).with_sign_of(&n);
            self.set_int(&pointer, &toward);
        }
        // A negative that could not become positive (its twin is taken, as a duplicate
        // would be), or a number of two or more digits that bisection could not lower (the
        // failing values below it are sparse, as with rounding), tries the one-digit
        // non-negatives, all shorter than it.
        if let Some(n) = self.int_at(at)
            && (n.is_negative() || n.cmp_abs(&Num::small(10)).is_ge())
        {
            for digit in 1..=9 {
                if self.exhausted || self.set_int(&pointer, &Num::small(digit)) {
                    return;
                }
            }
        }
    }

    /// Two integers that may only fall together: both toward zero by the same amount (their
    /// difference kept), or one toward zero while the other takes up the change (their sum
    /// kept). Each move tries its full length, then one unit, then bisects between them.
    fn two_integers(&mut self, a: &[Seg], b: &[Seg]) {
        let (pa, pb) = (pointer_of(a), pointer_of(b));
        let (Some(x), Some(y)) = (self.int_at(a), self.int_at(b)) else {
            return;
        };
        if x.is_zero() || y.is_zero() {
            return;
        }
        // Together, keeping the difference.
        if !x.is_zero() && !y.is_zero() && x.is_negative() == y.is_negative() {
            let full = if x.cmp_abs(&y).is_le() {
                x.abs()
            } else {
                y.abs()
            };
            let sign = x.clone();
            self.joint_move(&pa, &pb, &x, &y, &full, |x, y, d| {
                let step = d.with_sign_of(&sign);
                (x.sub(&step), y.sub(&step))
            });
        }
        // One toward zero, the other taking up the change (the sum kept), both ways round.
        for (first, second, pf, ps) in [(a, b, &pa, &pb), (b, a, &pb, &pa)] {
            let (Some(x), Some(y)) = (self.int_at(first), self.int_at(second)) else {
                return;
            };
            if x.is_zero() {
                continue;
            }
            let full = x.abs();
            let sign = x.clone();
            self.joint_move(pf, ps, &x, &y, &full, |x, y, d| {
                let step = d.with_sign_of(&sign);
                (x.sub(&step), y.add(&step))
            });
        }
    }

    /// Tries the full move `moved(x, y, full)`; when it does not fail, probes one unit and,
    /// if that still fails, bisects for the longest move that still fails. The probes may be
    /// larger than the current value (one number grows while the other falls): only the
    /// move finally taken must be smaller.
    fn joint_move(
        &mut self,
        pa: &str,
        pb: &str,
        x: &Num,
        y: &Num,
        full: &Num,
        moved: impl Fn(&Num, &Num, &Num) -> (Num, Num),
    ) {
        let step_for = |d: &Num| {
            let (nx, ny) = moved(x, y, d);
            Step {
                pointer: pa.to_owned(),
                params: Params::Ints {
                    to: nx.to_int(),
                    with: pb.to_owned(),
                    with_to: ny.to_int(),
                },
            }
        };
        if full.is_zero() || self.attempt(step_for(full)) {
            return;
        }
        let one = Num::small(1);
        let fails = |engine: &mut Self, d: &Num| {
            engine
                .ask_with(&step_for(d), true)
                .is_some_and(|asked| asked.fails)
        };
        if full.cmp_abs(&one).is_le() || !fails(self, &one) {
            return;
        }
        let (mut lo, mut hi) = (one.clone(), full.clone());
        while hi.sub(&lo).cmp_abs(&one).is_gt() && !self.exhausted {
            let mid = lo.add(&hi).half();
            if fails(self, &mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        self.attempt(step_for(&lo));
    }

    // (5) Floats: toward 0, toward integral values (either side), toward fewer significant
    // digits.
    fn floats(&mut self) {
        for at in positions(&self.current, self.form, |v| matches!(v, Value::Float(_))) {
            let pointer = pointer_of(&at);
            loop {
                if self.exhausted {
                    return;
                }
                let Some(Value::Float(x)) = self.node(&at) else {
                    break;
                };
                let x = x.get();
                // `floor`/`ceil` away from zero: a tiny float that fails by its sign falls
                // to `-1.0`/`1.0` where truncating (to `-0.0`/`0.0`) passes.
                let away = if x < 0.0 { x.floor() } else { x.ceil() };
                let mut targets = vec![0.0, x.abs(), x.trunc(), away];
                for digits in 0..16 {
                    if let Ok(rounded) = format!("{x:.digits$e}").parse::<f64>() {
                        targets.push(rounded);
                    }
                }
                let accepted = targets.into_iter().any(|t| {
                    Float::new(t).is_ok_and(|to| {
                        self.attempt(Step {
                            pointer: pointer.clone(),
                            params: Params::Float { to },
                        })
                    })
                });
                if !accepted {
                    break;
                }
            }
            // Integral floats: bisection of the distance to zero, exact below 2^53.
            let Some(Value::Float(x)) = self.node(&at) else {
                continue;
            };
            let x = x.get();
            if x.fract() == 0.0 && x.abs() < 9_007_199_254_740_992.0 {
                let (mut lo, mut hi) = (0.0f64, x.abs());
                while hi - lo > 1.0 && !self.exhausted {
                    let mid = ((lo + hi) / 2.0).floor();
                    let ok = Float::new(mid.copysign(x)).is_ok_and(|to| {
                        self.attempt(Step {
                            pointer: pointer.clone(),
                            params: Params::Float { to },
                        })
                    });
                    if ok {
                        hi = mid;
                    } else {
                        lo = mid;
                    }
                }
            }
        }
    }

    // (6) Merge adjacent sibling arrays, left to right, then inside the children.
    fn merge_in(&mut self, at: Vec<Seg>) {
        let pointer = pointer_of(&at);
        let mut index = 0;
        loop {
            if self.exhausted {
                return;
            }
            let Some(Value::Array(items)) = self.node(&at) else {
                break;
            };
            if index + 1 >= items.len() {
                break;
            }
            let both = matches!(
                (&items[index], &items[index + 1]),
                (Value::Array(_), Value::Array(_))
            );
            let merged = both
                && self.attempt(Step {
                    pointer: pointer.clone(),
                    params: Params::Merge { index },
                });
            if !merged {
                index += 1;
            }
        }
        let kids = self
            .node(&at)
            .map(|n| children(n, self.form))
            .unwrap_or_default();
        for seg in kids {
            let mut child = at.clone();
            child.push(seg);
            self.merge_in(child);
        }
    }
}
