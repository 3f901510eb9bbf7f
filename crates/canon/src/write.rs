//! Writing JSON: canonical bytes from a [`Value`], string escaping, Python's float `repr`,
//! and the two-space-indented rendering shared by meta files and the ledger.

use crate::error::ValueError;
use crate::read::{MAX_DEPTH, nfc_cow, nfc_in_place};
use crate::value::Value;

/// Appends `s` as a JSON string the way Python's `json.dumps(..., ensure_ascii=False)` does:
/// only `"`, `\` and U+0000-U+001F are escaped (`\b \f \n \r \t` short, others `\u00xx`);
/// everything else, U+007F and U+2028 included, stays raw UTF-8.
pub(crate) fn push_escaped(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let short: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0C => b"\\f",
            0x00..=0x1F => b"",
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        if short.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(b >> 4)]);
            out.push(HEX[usize::from(b & 0xF)]);
        } else {
            out.extend_from_slice(short);
        }
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// Appends Python's `repr` of a finite float: the shortest digits that round-trip, in fixed
/// notation when the decimal exponent is in `-4..16` (`0.0001`, `1234567890123456.0`) and
/// in scientific notation otherwise (`1e-05`, `1e+16`, `1.5e+300`); always a `.0` or an
/// exponent, so it never reads back as an integer.
pub(crate) fn push_float_repr(out: &mut Vec<u8>, x: f64) {
    // zmij writes fixed notation for decimal exponents -5..=15 (`0.00001` to
    // `999999999999999.9`), in the layout of Python's repr (`1000.0`, `0.25`), which uses
    // it for -4..=15. Where no two shortest decimals can be equally close to x, both pick
    // the same digits, so the text is Python's repr as it is.
    // zmij's scientific notation (decimal exponents from 16 up and from -6 down, where
    // Python's repr uses it too) is Python's but for the exponent's width: `1.5e-7` where
    // Python writes `1.5e-07`.
    let mut buffer = zmij::Buffer::new();
    let text = buffer.format_finite(x.abs()).as_bytes();
    if !any_tie_possible(x.abs()) {
        match text.iter().position(|&b| b == b'e') {
            None if !text.starts_with(b"0.0000") => {
                if x.is_sign_negative() {
                    out.push(b'-');
                }
                out.extend_from_slice(text);
                return;
            }
            // `e`, a sign, and one digit or more.
            Some(e) if text.len() > e + 2 => {
                if x.is_sign_negative() {
                    out.push(b'-');
                }
                let (head, exponent) = text.split_at(e + 2);
                out.extend_from_slice(head);
                if exponent.len() == 1 {
                    out.push(b'0');
                }
                out.extend_from_slice(exponent);
                return;
            }
            _ => {}
        }
    }
    push_float_repr_digits(out, x, Sci::shortest_from(x.abs(), text));
}

/// [`push_float_repr`] from the digits and exponent of [`Sci::shortest_from`].
fn push_float_repr_digits(out: &mut Vec<u8>, x: f64, sci: Option<Sci>) {
    match sci {
        Some(sci) => push_repr_layout(out, x.is_sign_negative(), sci.digits(), sci.exp),
        None => out.extend_from_slice(x.to_string().as_bytes()),
    }
}

/// Appends a float in the layout of Python's repr, from its shortest significant digits
/// (`digits`, not empty, no zeros at either end) and the decimal exponent of the first of
/// them (`sci`: the value is d.ddd × 10^sci): fixed notation while `sci` is in `-4..16`
/// (`0.0001`, `1234567890123456.0`, always with a fraction), scientific notation otherwise
/// with at least two exponent digits (`1e-05`, `1.5e+300`).
#[inline]
pub(crate) fn push_repr_layout(out: &mut Vec<u8>, negative: bool, digits: &[u8], sci: i32) {
    let n = digits.len();
    if negative {
        out.push(b'-');
    }
    if (-4..16).contains(&sci) {
        if sci < 0 {
            out.extend_from_slice(b"0.");
            out.extend(std::iter::repeat_n(b'0', (-sci - 1) as usize));
            out.extend_from_slice(digits);
        } else {
            let whole = sci as usize + 1;
            if whole >= n {
                out.extend_from_slice(digits);
                out.extend(std::iter::repeat_n(b'0', whole - n));
                out.extend_from_slice(b".0");
            } else {
                out.extend_from_slice(&digits[..whole]);
                out.push(b'.');
                out.extend_from_slice(&digits[whole..]);
            }
        }
    } else {
        out.extend_from_slice(&digits[..1.min(n)]);
        if n > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits[1..]);
        }
        out.push(b'e');
        out.push(if sci < 0 { b'-' } else { b'+' });
        let e = sci.unsigned_abs();
        if e >= 100 {
            out.push(b'0' + (e / 100) as u8);
        }
        out.push(b'0' + (e / 10 % 10) as u8);
        out.push(b'0' + (e % 10) as u8);
    }
}

/// A float in scientific notation as `{:e}` writes it (`d.ddde-5`), with its digits and
/// decimal exponent pulled out.
struct Sci {
    text: [u8; 40],
    len: usize,
    /// The digits without the dot.
    digits: [u8; 24],
    n: usize,
    exp: i32,
}

/// A fixed buffer that `write!` can fill without allocating.
struct StackText {
    bytes: [u8; 40],
    len: usize,
}

impl std::fmt::Write for StackText {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        self.bytes
            .get_mut(self.len..end)
            .ok_or(std::fmt::Error)?
            .copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// `x` (x > 0) as m·2^e with m odd.
fn binary_parts(x: f64) -> Option<(u64, i32)> {
    let bits = x.to_bits();
    let exp_bits = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1u64 << 52) - 1);
    let (m, e) = if exp_bits == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1u64 << 52), exp_bits - 1075)
    };
    if m == 0 {
        return None;
    }
    let tz = m.trailing_zeros();
    Some((m >> tz, e + tz as i32))
}

/// Whether two decimals of some length can be equally close to `x` (x >= 0): only when x's
/// exact decimal expansion is short, i.e. x = m·2^e with e >= 0, or with e < 0 and m·5^-e
/// below 10^18 (a midpoint has at most 18 significant digits).
fn any_tie_possible(x: f64) -> bool {
    let Some((m, e)) = binary_parts(x) else {
        return false;
    };
    if e >= 0 {
        return true;
    }
    let k = e.unsigned_abs();
    k <= 26 && u128::from(m) * 5u128.pow(k) < 1_000_000_000_000_000_000
}

/// Whether two decimals of `n` significant digits can be equally close to `x` (x > 0): only
/// when x's exact decimal expansion is short, i.e. x = m·2^e with e >= 0, or with e < 0 and
/// m·5^-e below 10^18 (a midpoint has at most 18 significant digits); and then only when
/// that expansion has exactly n + 1 significant digits, the last a 5. Where the expansion
/// does not fit in 64 bits, a tie is assumed possible.
fn tie_possible(x: f64, n: usize) -> bool {
    let Some((m, e)) = binary_parts(x) else {
        return false;
    };
    // The exact significand: x = significand · 10^-k.
    let significand = if e >= 0 {
        if e > 10 {
            return true;
        }
        m << e
    } else {
        let k = e.unsigned_abs();
        if k > 26 || u128::from(m) * 5u128.pow(k) >= 1_000_000_000_000_000_000 {
            return false;
        }
        m * 5u64.pow(k)
    };
    let mut digits = significand;
    while digits % 10 == 0 {
        digits /= 10;
    }
    digits % 10 == 5 && digits.ilog10() as usize == n
}

impl Sci {
    /// Reads the digits and decimal exponent of a non-negative decimal float text in fixed
    /// (`0.00123`, `123.0`) or scientific (`1.23e-5`, `1e16`, `1.5E+300`) notation.
    fn from_text(t: &[u8]) -> Option<Sci> {
        let mut text = [0u8; 40];
        text.get_mut(..t.len())?.copy_from_slice(t);
        let mut digits = [0u8; 24];
        let mut n = 0;
        // Mantissa digits seen, the count of them before the point, and the index of the
        // first significant one.
        let mut seen = 0i32;
        let mut point = None;
        let mut first = 0i32;
        let mut i = 0;
        while let Some(&b) = t.get(i) {
            if b.is_ascii_digit() {
                if n > 0 || b != b'0' {
                    if n == 0 {
                        first = seen;
                    }
                    *digits.get_mut(n)? = b;
                    n += 1;
                }
                seen += 1;
            } else if b == b'.' {
                point = Some(seen);
            } else {
                break;
            }
            i += 1;
        }
        let mut exponent = 0i32;
        if i < t.len() {
            // `e` or `E`, an optional sign, digits.
            let (negative, digits_at) = match t.get(i + 1) {
                Some(b'-') => (true, i + 2),
                Some(b'+') => (false, i + 2),
                _ => (false, i + 1),
            };
            let magnitude = t
                .get(digits_at..)
                .unwrap_or_default()
                .iter()
                .fold(0i32, |m, d| m * 10 + i32::from(d.wrapping_sub(b'0')));
            exponent = if negative { -magnitude } else { magnitude };
        }
        if n == 0 {
            // Zero.
            digits[0] = b'0';
            return Some(Sci {
                text,
                len: t.len(),
                digits,
                n: 1,
                exp: 0,
            });
        }
        while n > 1 && digits[n - 1] == b'0' {
            n -= 1;
        }
        let point = point.unwrap_or(seen);
        let exp = point - 1 - first + exponent;
        Some(Sci {
            text,
            len: t.len(),
            digits,
            n,
            exp,
        })
    }

    /// Formats a non-negative finite float with `precision` digits after the first,
    /// correctly rounded (half to even).
    fn exact(x: f64, precision: usize) -> Option<Sci> {
        use std::fmt::Write as _;
        let mut buf = StackText {
            bytes: [0u8; 40],
            len: 0,
        };
        write!(buf, "{x:.precision$e}").ok()?;
        Sci::from_text(&buf.bytes[..buf.len])
    }

    /// Python's repr digits of a non-negative finite float: the shortest that read back as
    /// `x` and, of those, the closest to `x`, a tie going to the even digit.
    ///
    /// `zmij` (Schubfach) gives the shortest length and, but for ties, the closest digits;
    /// on a tie (`992380462925747.25` has `…747.2` and `…747.3` at 16 digits) it may
    /// pick the odd one, where Python (David Gay's dtoa) picks the even one. So when the last
    /// digit is odd and a tie is possible at all, the correctly rounded value at that length
    /// (Rust's exact mode rounds half to even) replaces it if it still reads back as `x`.
    /// `text` is zmij's text for `x`.
    fn shortest_from(x: f64, text: &[u8]) -> Option<Sci> {
        let sci = Sci::from_text(text)?;
        if sci.n < 2 || sci.digits[sci.n - 1] % 2 == 0 || !tie_possible(x, sci.n) {
            return Some(sci);
        }
        match Sci::exact(x, sci.n - 1) {
            Some(exact) if exact.n <= sci.n && exact.reads_back_as(x) => Some(exact),
            _ => Some(sci),
        }
    }

    /// [`Sci::shortest_from`] with zmij's text computed here.
    #[cfg(test)]
    fn shortest(x: f64) -> Option<Sci> {
        let mut buffer = zmij::Buffer::new();
        Sci::shortest_from(x, buffer.format_finite(x).as_bytes())
    }

    fn reads_back_as(&self, x: f64) -> bool {
        std::str::from_utf8(&self.text[..self.len])
            .ok()
            .and_then(|t| t.parse::<f64>().ok())
            .is_some_and(|y| y.to_bits() == x.to_bits())
    }

    fn digits(&self) -> &[u8] {
        &self.digits[..self.n]
    }
}

/// Canonical bytes of a value; `sort` is false for the ordered variant.
pub(crate) fn canonical_value(value: &Value, sort: bool) -> Result<Vec<u8>, ValueError> {
    canonical_value_at(value, sort, 0)
}

/// [`canonical_value`] of a value that sits inside `depth` arrays and objects of a larger
/// document: it may nest [`MAX_DEPTH`] minus `depth` levels, as [`crate::parse`] counts them.
pub(crate) fn canonical_value_at(
    value: &Value,
    sort: bool,
    depth: usize,
) -> Result<Vec<u8>, ValueError> {
    let mut w = ValueWriter {
        out: Vec::new(),
        sort,
        scratch: String::new(),
    };
    w.value(value, depth)?;
    Ok(w.out)
}

struct ValueWriter {
    out: Vec<u8>,
    sort: bool,
    scratch: String,
}

impl ValueWriter {
    fn value(&mut self, value: &Value, depth: usize) -> Result<(), ValueError> {
        match value {
            Value::Null => self.out.extend_from_slice(b"null"),
            Value::Bool(true) => self.out.extend_from_slice(b"true"),
            Value::Bool(false) => self.out.extend_from_slice(b"false"),
            Value::Int(n) => self.out.extend_from_slice(n.as_str().as_bytes()),
            Value::Float(x) => push_float_repr(&mut self.out, x.get()),
            Value::String(s) => self.string(s),
            Value::Array(items) => {
                if depth + 1 > MAX_DEPTH {
                    return Err(ValueError::TooDeep(MAX_DEPTH));
                }
                self.out.push(b'[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push(b',');
                    }
                    self.value(item, depth + 1)
                        .map_err(|e| e.within(&i.to_string()))?;
                }
                self.out.push(b']');
            }
            Value::Object(members) => {
                if depth + 1 > MAX_DEPTH {
                    return Err(ValueError::TooDeep(MAX_DEPTH));
                }
                let mut keyed: Vec<(std::borrow::Cow<'_, str>, &Value, &str)> = members
                    .iter()
                    .map(|(k, v)| (nfc_cow(k, &mut self.scratch), v, k.as_str()))
                    .collect();
                let mut order: Vec<usize> = (0..keyed.len()).collect();
                order.sort_by(|&a, &b| keyed[a].0.cmp(&keyed[b].0));
                if let Some(w) = order.windows(2).find(|w| keyed[w[0]].0 == keyed[w[1]].0) {
                    return Err(ValueError::DuplicateKey {
                        key: keyed[w[1]].0.clone().into_owned(),
                        pointer: String::new(),
                    });
                }
                if !self.sort {
                    order.sort_unstable();
                }
                self.out.push(b'{');
                for (n, &i) in order.iter().enumerate() {
                    if n > 0 {
                        self.out.push(b',');
                    }
                    let (key, v, raw) = &keyed[i];
                    push_escaped(&mut self.out, key);
                    self.out.push(b':');
                    self.value(v, depth + 1).map_err(|e| e.within(raw))?;
                }
                keyed.clear();
                self.out.push(b'}');
            }
        }
        Ok(())
    }

    fn string(&mut self, s: &str) {
        if s.is_ascii() {
            push_escaped(&mut self.out, s);
        } else {
            let mut owned = s.to_owned();
            nfc_in_place(&mut owned, &mut self.scratch);
            push_escaped(&mut self.out, &owned);
        }
    }
}

/// Compact JSON in the value's own member order, strings as they are (no NFC, no checks), at
/// any depth.
pub(crate) fn write_compact(out: &mut Vec<u8>, value: &Value) {
    write_json(out, value, false);
}

/// Renders a value for people and diffs: two-space indent, `", "`-free separators
/// (`,` at line end, `": "` between key and value), members in the value's own order,
/// strings escaped as in canonical form, and a trailing newline. Empty arrays and objects
/// print as `[]` and `{}`. This is the layout of fixture meta files and of the freeze
/// ledger (SPEC §3, §7); it matches Python's `json.dumps(v, indent=2, ensure_ascii=False)`
/// plus `"\n"`. A value of any depth is written: the writer keeps its own stack.
pub fn to_pretty_string(value: &Value) -> String {
    let mut out = Vec::new();
    write_json(&mut out, value, true);
    out.push(b'\n');
    // Only valid UTF-8 was written: strings are `str`, the rest is ASCII.
    String::from_utf8(out).unwrap_or_default()
}

fn indent(out: &mut Vec<u8>, level: usize) {
    out.push(b'\n');
    out.extend(std::iter::repeat_n(b' ', 2 * level));
}

/// The arrays and objects [`write_json`] is inside, each with what is left of it.
enum Open<'v> {
    Array(std::slice::Iter<'v, Value>),
    Object(std::slice::Iter<'v, (String, Value)>),
}

/// Writes `value` as JSON text in its own member order, strings as they are (no NFC, no
/// checks): compact, or `pretty` as [`to_pretty_string`] lays it out. It keeps its own stack
/// of the arrays and objects it is inside, so a value of any depth is written (a value built
/// in code can nest deeper than [`MAX_DEPTH`] and than the thread's stack).
fn write_json(out: &mut Vec<u8>, value: &Value, pretty: bool) {
    // Each open array or object, and whether none of its elements is written yet.
    let mut stack: Vec<(Open<'_>, bool)> = Vec::new();
    let mut next = Some(value);
    loop {
        match next.take() {
            Some(Value::Null) => out.extend_from_slice(b"null"),
            Some(Value::Bool(b)) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
            Some(Value::Int(n)) => out.extend_from_slice(n.as_str().as_bytes()),
            Some(Value::Float(x)) => push_float_repr(out, x.get()),
            Some(Value::String(s)) => push_escaped(out, s),
            Some(Value::Array(items)) => {
                out.push(b'[');
                stack.push((Open::Array(items.iter()), true));
            }
            Some(Value::Object(members)) => {
                out.push(b'{');
                stack.push((Open::Object(members.iter()), true));
            }
            None => {}
        }
        let level = stack.len();
        let Some((open, empty)) = stack.last_mut() else {
            return;
        };
        let first = std::mem::replace(empty, false);
        let (element, close) = match open {
            Open::Array(items) => (items.next().map(|item| (None, item)), b']'),
            Open::Object(members) => (members.next().map(|(k, v)| (Some(k), v)), b'}'),
        };
        match element {
            Some((key, item)) => {
                if !first {
                    out.push(b',');
                }
                if pretty {
                    indent(out, level);
                }
                if let Some(key) = key {
                    push_escaped(out, key);
                    out.extend_from_slice(if pretty { b": " } else { b":" });
                }
                next = Some(item);
            }
            None => {
                stack.pop();
                if pretty && !first {
                    indent(out, level - 1);
                }
                out.push(close);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Sci;
    use rand_core::{RngCore, SeedableRng};

    /// [`Sci::shortest`] without the `tie_possible` filter: the exact-mode check on every
    /// odd last digit.
    fn shortest_checking_every_odd_digit(x: f64) -> Option<(Vec<u8>, i32)> {
        let mut buffer = zmij::Buffer::new();
        let sci = Sci::from_text(buffer.format_finite(x).as_bytes())?;
        let chosen = if sci.n < 2 || sci.digits[sci.n - 1] % 2 == 0 {
            sci
        } else {
            match Sci::exact(x, sci.n - 1) {
                Some(exact) if exact.n <= sci.n && exact.reads_back_as(x) => exact,
                _ => sci,
            }
        };
        Some((chosen.digits().to_vec(), chosen.exp))
    }

    /// zmij's text, where it is taken as it is (fixed notation) or with its exponent
    /// widened to two digits (scientific notation), is what the digits path writes.
    #[test]
    fn the_zmij_text_shortcut_writes_python_repr() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(11);
        let mut xs = vec![
            0.0,
            -0.0,
            1e-4,
            1e-5,
            1e-6,
            -1.5e-7,
            1.2e-9,
            2.5e-100,
            5e-324,
            1e300,
            1.7976931348623157e308,
            1.2345e16,
            9.9999e-5,
            1e15,
            1e16,
            9999999999999998.0,
            0.1,
            1.0,
            3_969_521_851_702_989.0 / 4.0,
        ];
        for _ in 0..20_000 {
            let r = rng.next_u64();
            xs.push((r >> 11) as f64 / (1u64 << 53) as f64);
            xs.push((r % 1_000_000_000_000_000) as f64 / 4.0);
            xs.push((r % 100_000) as f64 * 10f64.powi((r >> 40) as i32 % 44 - 22));
            xs.push((r >> 11) as f64 * 2f64.powi((r % 120) as i32 - 60));
            xs.push(f64::from_bits(r >> 1));
            xs.push(-f64::from_bits(r >> 2));
        }
        for x in xs.into_iter().filter(|x| x.is_finite()) {
            let (mut fast, mut digits) = (Vec::new(), Vec::new());
            super::push_float_repr(&mut fast, x);
            super::push_float_repr_digits(&mut digits, x, Sci::shortest(x.abs()));
            assert_eq!(fast, digits, "{x:e}");
        }
    }

    /// The tie filter only skips the exact-mode check where it could not change the digits:
    /// integers, halves and quarters, short decimals, and random bit patterns.
    #[test]
    fn the_tie_filter_never_changes_the_digits() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
        let mut xs = vec![
            3_969_521_851_702_989.0 / 4.0,
            0.5,
            2.5,
            1e23,
            9007199254740993.0,
            5e-324,
        ];
        for _ in 0..20_000 {
            let r = rng.next_u64();
            xs.push((r % 1_000_000_000_000_000) as f64 / 4.0);
            xs.push((r % 100_000) as f64 * 10f64.powi((r >> 40) as i32 % 30 - 15));
            xs.push((r >> 11) as f64 * 2f64.powi((r % 80) as i32 - 40));
            xs.push(f64::from_bits(r >> 2));
        }
        for x in xs.into_iter().filter(|x| x.is_finite() && *x > 0.0) {
            let got = Sci::shortest(x).map(|s| (s.digits().to_vec(), s.exp));
            assert_eq!(got, shortest_checking_every_odd_digit(x), "{x:e}");
        }
    }
}
