//! Reading JSON text: a strict parser shared by two drivers, one that builds a [`Value`] and
//! one that streams canonical bytes without building a tree.
//!
//! Both follow the grammar Python's `json.loads` accepts (strict mode), minus what SPEC §3
//! turns into errors: duplicate keys, `NaN`/`Infinity`, overflowing floats, lone surrogate
//! escapes, nesting deeper than [`MAX_DEPTH`], a byte-order mark and UTF-16/32 input.

use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfc_quick};

use crate::error::{ParseError, ParseErrorKind as K};
use crate::value::{Float, Int, Value};
use crate::write::{push_escaped, push_float_repr, push_repr_layout};

/// The deepest nesting of arrays and objects accepted: 128 levels parse, 129 are an error.
pub const MAX_DEPTH: usize = 128;

/// Bytes that end a run of plain string content: `"`, `\` and control characters.
static STRING_SPECIAL: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = true;
        i += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t
};

/// Checks the start of the input: no byte-order mark, not UTF-16/32.
fn check_prefix(input: &[u8]) -> Result<(), ParseError> {
    if input.starts_with(&[0xEF, 0xBB, 0xBF]) {
        return Err(ParseError::at(input, 0, K::ByteOrderMark));
    }
    if input.starts_with(&[0xFE, 0xFF])
        || input.starts_with(&[0xFF, 0xFE])
        || (input.len() >= 2 && (input[0] == 0 || input[1] == 0))
    {
        return Err(ParseError::at(input, 0, K::Utf16));
    }
    Ok(())
}

/// Runs a driver over `input` with the encoding rules of SPEC §3 applied first: no
/// byte-order mark, not UTF-16/32, and valid UTF-8 throughout (checked in one pass before
/// any parsing, so an encoding error wins over a syntax error further on, as when Python
/// decodes the bytes first). The driver gets the input as text: its slices need no further
/// validation.
fn with_encoding<T>(
    input: &[u8],
    run: impl FnOnce(&str) -> Result<T, ParseError>,
) -> Result<T, ParseError> {
    check_prefix(input)?;
    match std::str::from_utf8(input) {
        Ok(text) => run(text),
        Err(bad) => Err(ParseError::at(input, bad.valid_up_to(), K::InvalidUtf8)),
    }
}

/// Eight copies of byte `b`.
const fn splat(b: u8) -> u64 {
    0x0101_0101_0101_0101 * b as u64
}

/// A mask with the high bit set in each byte of `w` that is `"`, `\\` or below U+0020 (and
/// possibly in bytes above the lowest such byte: only the lowest set bit is exact).
#[inline]
fn special_mask(w: u64) -> u64 {
    const HIGH: u64 = splat(0x80);
    let zero = |v: u64| v.wrapping_sub(splat(1)) & !v & HIGH;
    let quote = zero(w ^ splat(b'"'));
    let backslash = zero(w ^ splat(b'\\'));
    let control = w.wrapping_sub(splat(0x20)) & !w & HIGH;
    quote | backslash | control
}

/// Scans plain string content from `i`: returns the index of the first `"`, `\` or control
/// byte (or the end), and whether every byte before it is ASCII. Eight bytes at a time.
#[inline]
fn scan_plain(input: &[u8], mut i: usize) -> (usize, bool) {
    let mut seen = 0u64;
    while let Some(chunk) = input.get(i..i + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let w = u64::from_le_bytes(word);
        let mask = special_mask(w);
        if mask != 0 {
            // The lowest flagged byte is the first special one; the bytes below it are
            // plain content.
            let n = mask.trailing_zeros() / 8;
            let below = (1u64 << (n * 8)).wrapping_sub(1);
            seen |= w & below;
            return (i + n as usize, seen & splat(0x80) == 0);
        }
        seen |= w;
        i += 8;
    }
    let mut high = seen & splat(0x80) != 0;
    while let Some(&b) = input.get(i) {
        if STRING_SPECIAL[b as usize] {
            break;
        }
        high |= b >= 0x80;
        i += 1;
    }
    (i, !high)
}

/// The index of the first byte from `i` on that is not an ASCII digit (or the end). Eight
/// bytes at a time.
#[inline]
fn digits_end(input: &[u8], mut i: usize) -> usize {
    while let Some(chunk) = input.get(i..i + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let w = u64::from_le_bytes(word);
        // Nonzero in the high nibble of each byte that is not `0`-`9` (a carry out of a
        // byte from 0xFA up can only disturb the bytes above it, which is already flagged).
        let high = (w & splat(0xF0)) ^ splat(0x30);
        let past_nine = (w.wrapping_add(splat(0x06)) & splat(0xF0)) ^ splat(0x30);
        let other = high | past_nine;
        if other != 0 {
            return i + (other.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while matches!(input.get(i), Some(b'0'..=b'9')) {
        i += 1;
    }
    i
}

/// Ranges of code points (start inclusive, end exclusive) in which every character has
/// NFC_QC=Yes and canonical combining class 0: a starter that nothing before it can
/// combine with. Text made only of these is in NFC. They cover Latin to U+02FF, Greek and
/// Cyrillic, CJK punctuation, kana and ideographs, Hangul syllables, and the planes of emoji
/// and CJK extensions; a unit test checks every code point in them against the tables of
/// `unicode-normalization`.
const NFC_STARTERS: [(u32, u32); 7] = [
    (0x0000, 0x0300),
    (0x0388, 0x0483),
    (0x1E00, 0x1F71),
    (0x2E00, 0x302A),
    (0x309B, 0xA66F),
    (0xABEE, 0xF900),
    (0x1_E94B, 0x2_F800),
];

/// Whether every character of `s` is in [`NFC_STARTERS`] (then `s` is in NFC), without a
/// table look-up per character; false says nothing.
#[inline]
fn is_nfc_by_ranges(s: &str) -> bool {
    s.chars().all(is_listed_starter)
}

/// Whether `c` is in [`NFC_STARTERS`].
#[inline]
fn is_listed_starter(c: char) -> bool {
    let u = u32::from(c);
    NFC_STARTERS.iter().any(|&(lo, hi)| lo <= u && u < hi)
}

/// Appends the NFC form of `text` to `out` when `text` is of the simplest kind not in NFC:
/// characters of [`NFC_STARTERS`], and ASCII characters each followed by at most one
/// character with NFC_QC=Maybe before the next listed character or the end (`cafe\u{301}`,
/// `A\u{30a}ngstro\u{308}m`). NFC of such text composes each of those pairs that has a
/// primary composite and changes nothing else: an ASCII character has no decomposition, a
/// single mark has nothing to reorder with, and a listed character after it combines with
/// nothing before it. Returns false, with `out` as it was, for any other text; the caller
/// then runs the normaliser, whose cost per call is far higher.
fn push_nfc_simple(out: &mut String, text: &str) -> bool {
    let mark = out.len();
    let mut chars = text.chars().peekable();
    // The character pushed last, while it is ASCII and nothing has followed it.
    let mut ascii = None;
    while let Some(c) = chars.next() {
        if is_listed_starter(c) {
            out.push(c);
            ascii = c.is_ascii().then_some(c);
            continue;
        }
        let listed_next = chars.peek().is_none_or(|&n| is_listed_starter(n));
        match ascii {
            Some(a) if listed_next && is_nfc_quick(std::iter::once(c)) == IsNormalized::Maybe => {
                match unicode_normalization::char::compose(a, c) {
                    Some(composed) => {
                        out.pop();
                        out.push(composed);
                    }
                    None => out.push(c),
                }
                ascii = None;
            }
            _ => {
                out.truncate(mark);
                return false;
            }
        }
    }
    true
}

/// Appends the NFC form of `text` to `out`.
fn push_nfc(out: &mut String, text: &str) {
    if !push_nfc_simple(out, text) {
        out.extend(text.nfc());
    }
}

/// `text` in NFC: borrowed when it already is (ASCII always is), else a new string.
pub(crate) fn nfc_cow<'a>(text: &'a str, scratch: &mut String) -> std::borrow::Cow<'a, str> {
    if text.is_ascii() {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut nfc = text.to_owned();
    if nfc_in_place(&mut nfc, scratch) {
        std::borrow::Cow::Owned(nfc)
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// Normalises `s` to NFC in place if it is not already (ASCII never changes).
/// Returns whether it changed.
pub(crate) fn nfc_in_place(s: &mut String, scratch: &mut String) -> bool {
    if s.is_ascii() {
        return false;
    }
    if is_nfc_by_ranges(s) {
        return false;
    }
    match is_nfc_quick(s.chars()) {
        IsNormalized::Yes => false,
        _ => {
            scratch.clear();
            push_nfc(scratch, s);
            if scratch != s {
                std::mem::swap(s, scratch);
                true
            } else {
                false
            }
        }
    }
}

/// The lexical layer: position, whitespace, strings, numbers, literals.
struct Reader<'a> {
    /// The input, valid UTF-8.
    text: &'a str,
    /// The same input as bytes.
    input: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn new(text: &'a str) -> Self {
        Reader {
            text,
            input: text.as_bytes(),
            pos: 0,
        }
    }
}

enum Number<'a> {
    Int(&'a str),
    Float(f64),
}

impl<'a> Reader<'a> {
    fn err(&self, offset: usize, kind: K) -> ParseError {
        ParseError::at(self.input, offset, kind)
    }

    /// The error for the byte at `pos`: end of input or an unexpected character.
    fn unexpected(&self) -> ParseError {
        match self.char_at(self.pos) {
            None => self.err(self.pos, K::UnexpectedEnd),
            Some(c) => self.err(self.pos, K::UnexpectedChar(c)),
        }
    }

    fn char_at(&self, pos: usize) -> Option<char> {
        // `pos` is always on a character boundary here.
        self.text.get(pos..).and_then(|s| s.chars().next())
    }

    /// Skips whitespace. The common cases take one or two comparisons: no whitespace (a byte
    /// above U+0020 is never whitespace) and a single space before such a byte (`": "` and
    /// `", "`, as most JSON writers separate).
    #[inline]
    fn skip_ws(&mut self) {
        match self.input.get(self.pos) {
            Some(&b) if b > b' ' => {}
            Some(b' ') if self.input.get(self.pos + 1).is_some_and(|&b| b > b' ') => {
                self.pos += 1;
            }
            None => {}
            Some(_) => self.skip_ws_run(),
        }
    }

    /// [`Self::skip_ws`] for runs of whitespace.
    fn skip_ws_run(&mut self) {
        let input = self.input;
        let mut i = self.pos;
        while let Some(&b) = input.get(i) {
            if b == b' ' {
                i += 1;
            } else if matches!(b, b'\n' | b'\r' | b'\t') {
                i += 1;
                // Indentation: spaces, eight at a time.
                while let Some(chunk) = input.get(i..i + 8) {
                    let mut word = [0u8; 8];
                    word.copy_from_slice(chunk);
                    let other = u64::from_le_bytes(word) ^ splat(b' ');
                    if other != 0 {
                        i += (other.trailing_zeros() / 8) as usize;
                        break;
                    }
                    i += 8;
                }
            } else {
                break;
            }
        }
        self.pos = i;
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.input.get(self.pos).copied()
    }

    fn expect_literal(&mut self, word: &'static [u8]) -> Result<(), ParseError> {
        if self.input[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(self.unexpected())
        }
    }

    /// Non-finite literals Python accepts and canonical form refuses.
    fn non_finite(&self) -> Option<ParseError> {
        let rest = &self.input[self.pos..];
        let name = if rest.starts_with(b"NaN") {
            "NaN"
        } else if rest.starts_with(b"Infinity") {
            "Infinity"
        } else if rest.starts_with(b"-Infinity") {
            "-Infinity"
        } else {
            return None;
        };
        Some(self.err(self.pos, K::NonFinite(name)))
    }

    /// Reads a string whose opening quote is at `pos` into `buf` (cleared first), decoding
    /// escapes. Leaves `pos` after the closing quote.
    fn read_string(&mut self, buf: &mut String) -> Result<(), ParseError> {
        buf.clear();
        let input = self.input;
        self.pos += 1;
        loop {
            let start = self.pos;
            let mut i = start;
            while i < input.len() && !STRING_SPECIAL[input[i] as usize] {
                i += 1;
            }
            // `start..i` starts after and ends before an ASCII byte (or at the end), so it
            // is a whole number of characters.
            if let Some(chunk) = self.text.get(start..i) {
                buf.push_str(chunk);
            }
            self.pos = i;
            match input.get(i) {
                None => return Err(self.err(i, K::UnexpectedEnd)),
                Some(b'"') => {
                    self.pos = i + 1;
                    return Ok(());
                }
                Some(b'\\') => self.read_escape(buf)?,
                Some(&b) => return Err(self.err(i, K::ControlCharacter(u32::from(b)))),
            }
        }
    }

    fn read_escape(&mut self, buf: &mut String) -> Result<(), ParseError> {
        let at = self.pos;
        let c = match self.input.get(at + 1) {
            None => return Err(self.err(at + 1, K::UnexpectedEnd)),
            Some(&c) => c,
        };
        self.pos = at + 2;
        let ch = match c {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let hi = self.hex4(at)?;
                if (0xD800..0xDC00).contains(&hi) {
                    // A high surrogate must be followed by an escaped low surrogate.
                    let rest = &self.input[self.pos..];
                    if rest.len() >= 6 && rest[0] == b'\\' && rest[1] == b'u' {
                        let low_at = self.pos;
                        let lo = self.hex4(low_at)?;
                        if (0xDC00..0xE000).contains(&lo) {
                            let code = 0x10000
                                + ((u32::from(hi) - 0xD800) << 10)
                                + (u32::from(lo) - 0xDC00);
                            char::from_u32(code)
                                .ok_or_else(|| self.err(at, K::LoneSurrogate(hi)))?
                        } else {
                            return Err(self.err(at, K::LoneSurrogate(hi)));
                        }
                    } else {
                        return Err(self.err(at, K::LoneSurrogate(hi)));
                    }
                } else if (0xDC00..0xE000).contains(&hi) {
                    return Err(self.err(at, K::LoneSurrogate(hi)));
                } else {
                    char::from_u32(u32::from(hi)).ok_or_else(|| self.err(at, K::InvalidEscape))?
                }
            }
            _ => return Err(self.err(at, K::InvalidEscape)),
        };
        buf.push(ch);
        Ok(())
    }

    /// Reads the four hex digits of a `\u` escape starting at `at` (the backslash).
    fn hex4(&mut self, at: usize) -> Result<u16, ParseError> {
        let digits = self
            .input
            .get(at + 2..at + 6)
            .ok_or_else(|| self.err(at, K::InvalidEscape))?;
        let mut n: u16 = 0;
        for &d in digits {
            let v = match d {
                b'0'..=b'9' => d - b'0',
                b'a'..=b'f' => d - b'a' + 10,
                b'A'..=b'F' => d - b'A' + 10,
                _ => return Err(self.err(at, K::InvalidEscape)),
            };
            n = (n << 4) | u16::from(v);
        }
        self.pos = at + 6;
        Ok(n)
    }

    /// Reads a number at `pos` (which holds `-` or a digit).
    fn read_number(&mut self) -> Result<Number<'a>, ParseError> {
        let input = self.input;
        let start = self.pos;
        let mut i = start;
        if input.get(i) == Some(&b'-') {
            i += 1;
        }
        match input.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => {
                while matches!(input.get(i), Some(b'0'..=b'9')) {
                    i += 1;
                }
            }
            _ => return Err(self.err(i, K::InvalidNumber)),
        }
        let int_end = i;
        if input.get(i) == Some(&b'.') && matches!(input.get(i + 1), Some(b'0'..=b'9')) {
            i += 2;
            while matches!(input.get(i), Some(b'0'..=b'9')) {
                i += 1;
            }
        }
        if matches!(input.get(i), Some(b'e' | b'E')) {
            let mut j = i + 1;
            if matches!(input.get(j), Some(b'+' | b'-')) {
                j += 1;
            }
            if matches!(input.get(j), Some(b'0'..=b'9')) {
                while matches!(input.get(j), Some(b'0'..=b'9')) {
                    j += 1;
                }
                i = j;
            }
        }
        self.pos = i;
        // The slice holds only ASCII bytes.
        let text = self
            .text
            .get(start..i)
            .ok_or_else(|| self.err(start, K::InvalidNumber))?;
        if i == int_end {
            return Ok(Number::Int(text));
        }
        let x = float_of_literal(text).ok_or_else(|| self.err(start, K::InvalidNumber))?;
        if x.is_finite() {
            Ok(Number::Float(x))
        } else {
            Err(self.err(start, K::FloatOverflow))
        }
    }

    fn finish(&mut self) -> Result<(), ParseError> {
        self.skip_ws();
        if self.pos < self.input.len() {
            Err(self.err(self.pos, K::TrailingData))
        } else {
            Ok(())
        }
    }
}

/// The nearest `f64` to a JSON number literal with a fraction or an exponent, as Python's
/// `float` reads it (infinity past the range); `None` when it is not such a literal.
///
/// `core`'s parser is exact except for one case: it stops reading an exponent's digits once
/// the exponent has passed 65 535 (so `e-700000` counts as `e-70000`), which is only wrong
/// when the literal's own digits make up for such an exponent (`1` and 700 000 zeros,
/// `e-700000`, is 1.0, not infinity). An exponent of five digits or more is therefore taken
/// apart here: the significant digits, and the place of the decimal point counted exactly,
/// give a literal `0.DIGITSeN` whose exponent is small.
fn float_of_literal(text: &str) -> Option<f64> {
    let x = text.parse::<f64>().ok()?;
    let Some(e_at) = text.find(['e', 'E']) else {
        return Some(x);
    };
    let (mantissa, exponent) = (&text[..e_at], &text[e_at + 1..]);
    let exp_negative = exponent.starts_with('-');
    let exp_digits = exponent
        .trim_start_matches(['+', '-'])
        .trim_start_matches('0');
    if exp_digits.len() < 5 {
        return Some(x);
    }
    let (negative, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mantissa),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let leading = int
        .bytes()
        .chain(frac.bytes())
        .take_while(|&b| b == b'0')
        .count();
    let digits: String = int.chars().chain(frac.chars()).skip(leading).collect();
    let digits = digits.trim_end_matches('0');
    let zero = if negative { -0.0 } else { 0.0 };
    if digits.is_empty() {
        return Some(zero);
    }
    // Past 10^18 the value is infinite or zero whatever the digits (an input holds far
    // fewer than 10^18 of them).
    let exp: i128 = if exp_digits.len() > 18 {
        10_i128.pow(18)
    } else {
        exp_digits.parse().ok()?
    };
    let exp = if exp_negative { -exp } else { exp };
    // The value is 0.DIGITS × 10^point.
    let point = i128::try_from(int.len()).ok()? - i128::try_from(leading).ok()? + exp;
    if point > 400 {
        return Some(if negative {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        });
    }
    if point < -400 {
        return Some(zero);
    }
    let sign = if negative { "-" } else { "" };
    format!("{sign}0.{digits}e{point}").parse().ok()
}

/// Parses JSON text into a [`Value`], keeping strings as written (canonical bytes apply NFC
/// later) and object members in input order.
///
/// Every error of SPEC §3 is reported here, with line and column, including keys that are
/// equal only after NFC: a value this function returns always has a canonical form.
pub fn parse(input: &[u8]) -> Result<Value, ParseError> {
    with_encoding(input, |text| {
        let mut p = ValueParser {
            r: Reader::new(text),
            nfc_a: String::new(),
            scratch: String::new(),
        };
        p.r.skip_ws();
        let v = p.value(0)?;
        p.r.finish()?;
        Ok(v)
    })
}

struct ValueParser<'a> {
    r: Reader<'a>,
    nfc_a: String,
    scratch: String,
}

impl ValueParser<'_> {
    fn value(&mut self, depth: usize) -> Result<Value, ParseError> {
        match self.r.peek() {
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => {
                let mut s = String::new();
                self.r.read_string(&mut s)?;
                Ok(Value::String(s))
            }
            Some(b't') => self.r.expect_literal(b"true").map(|()| Value::Bool(true)),
            Some(b'f') => self.r.expect_literal(b"false").map(|()| Value::Bool(false)),
            Some(b'n') => self.r.expect_literal(b"null").map(|()| Value::Null),
            Some(b'-' | b'0'..=b'9') => {
                if let Some(e) = self.r.non_finite() {
                    return Err(e);
                }
                match self.r.read_number()? {
                    Number::Int(text) => {
                        let (neg, digits) = match text.strip_prefix('-') {
                            Some(d) => (true, d),
                            None => (false, text),
                        };
                        Ok(Value::Int(Int::from_sign_digits(neg, digits)))
                    }
                    Number::Float(x) => Ok(Value::Float(
                        Float::new(x).map_err(|_| self.r.err(self.r.pos, K::FloatOverflow))?,
                    )),
                }
            }
            _ => Err(self.r.non_finite().unwrap_or_else(|| self.r.unexpected())),
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, ParseError> {
        if depth > MAX_DEPTH {
            return Err(self.r.err(self.r.pos, K::TooDeep(MAX_DEPTH)));
        }
        self.r.pos += 1;
        self.r.skip_ws();
        let mut items = Vec::new();
        if self.r.peek() == Some(b']') {
            self.r.pos += 1;
            return Ok(Value::Array(items));
        }
        loop {
            items.push(self.value(depth)?);
            self.r.skip_ws();
            match self.r.peek() {
                Some(b',') => {
                    self.r.pos += 1;
                    self.r.skip_ws();
                }
                Some(b']') => {
                    self.r.pos += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(self.r.unexpected()),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, ParseError> {
        if depth > MAX_DEPTH {
            return Err(self.r.err(self.r.pos, K::TooDeep(MAX_DEPTH)));
        }
        self.r.pos += 1;
        self.r.skip_ws();
        let mut members: Vec<(String, Value)> = Vec::new();
        // NFC keys with the offset of their opening quote, for duplicate detection.
        let mut nfc_keys: Vec<(String, usize, bool)> = Vec::new();
        if self.r.peek() == Some(b'}') {
            self.r.pos += 1;
            return Ok(Value::Object(members));
        }
        loop {
            if self.r.peek() != Some(b'"') {
                return Err(self.r.unexpected());
            }
            let key_at = self.r.pos;
            let mut key = String::new();
            self.r.read_string(&mut key)?;
            self.nfc_a.clone_from(&key);
            let changed = nfc_in_place(&mut self.nfc_a, &mut self.scratch);
            nfc_keys.push((self.nfc_a.clone(), key_at, changed));
            self.r.skip_ws();
            if self.r.peek() != Some(b':') {
                return Err(self.r.unexpected());
            }
            self.r.pos += 1;
            self.r.skip_ws();
            let v = self.value(depth)?;
            members.push((key, v));
            self.r.skip_ws();
            match self.r.peek() {
                Some(b',') => {
                    self.r.pos += 1;
                    self.r.skip_ws();
                }
                Some(b'}') => {
                    self.r.pos += 1;
                    break;
                }
                _ => return Err(self.r.unexpected()),
            }
        }
        if let Some((a, b)) = first_duplicate(
            nfc_keys.len(),
            |i| nfc_keys[i].0.as_str(),
            |i| nfc_keys[i].1,
        ) {
            let (key, _, changed_a) = &nfc_keys[a];
            let changed_b = nfc_keys[b].2;
            let kind = if *changed_a || changed_b {
                K::DuplicateKeyAfterNfc(key.clone())
            } else {
                K::DuplicateKey(key.clone())
            };
            return Err(self.r.err(nfc_keys[b].1, kind));
        }
        Ok(Value::Object(members))
    }
}

/// Finds a pair of the `n` members with equal keys; returns their indices, the later one (by
/// `offset`) second, choosing the pair whose second key comes first in the input. `None`
/// when all keys differ.
fn first_duplicate<'s>(
    n: usize,
    key: impl Fn(usize) -> &'s str,
    offset: impl Fn(usize) -> usize,
) -> Option<(usize, usize)> {
    if n < 2 || (1..n).all(|i| key(i - 1) < key(i)) {
        return None;
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| key(a).cmp(key(b)).then(offset(a).cmp(&offset(b))));
    order
        .windows(2)
        .filter(|w| key(w[0]) == key(w[1]))
        .map(|w| (w[0], w[1]))
        .min_by_key(|&(_, b)| offset(b))
}

/// One member of an object being canonicalised: its NFC key (a range of the output, or of
/// the key arena when the key was escaped or changed by NFC), the range of its
/// `"key":value` bytes in the output, and where its key was in the input.
struct Member {
    /// The first eight bytes of the NFC key, big-endian, zero-padded: comparing these
    /// orders two keys unless they are equal, when the whole keys decide.
    prefix: u64,
    key: (usize, usize),
    /// Whether `key` is a range of the key arena rather than of the output.
    in_arena: bool,
    out: (usize, usize),
    at: usize,
    changed: bool,
}

impl Member {
    /// The member's NFC key: the output holds it verbatim unless it was written escaped.
    #[inline]
    fn key<'k>(&self, out: &'k [u8], arena: &'k [u8]) -> &'k [u8] {
        let (s, e) = self.key;
        if self.in_arena {
            &arena[s..e]
        } else {
            &out[s..e]
        }
    }
}

/// Orders two members by NFC key (code point order is UTF-8 byte order).
#[inline]
fn key_order(a: &Member, b: &Member, out: &[u8], arena: &[u8]) -> std::cmp::Ordering {
    a.prefix
        .cmp(&b.prefix)
        .then_with(|| a.key(out, arena).cmp(b.key(out, arena)))
}

/// The first eight bytes of the key at `buf[start..end]`, big-endian, zero-padded
/// ([`Member::prefix`]). When `buf` holds eight bytes from `start` (a key in the output is
/// followed by at least `":` and a value), they are loaded as one word and the bytes past the
/// key masked off, instead of copying a key of variable length into a zeroed word (a `memcpy`
/// call, and a stalled load of what it stored).
#[inline]
fn key_prefix(buf: &[u8], start: usize, end: usize) -> u64 {
    let n = end - start;
    if let Some(&word) = buf.get(start..).and_then(|b| b.first_chunk::<8>()) {
        let word = u64::from_be_bytes(word);
        // Keep the first n bytes: the top 8n bits of the big-endian word.
        return if n < 8 {
            word & !(u64::MAX >> (8 * n))
        } else {
            word
        };
    }
    let mut word = [0u8; 8];
    for (w, &b) in word.iter_mut().zip(&buf[start..end]) {
        *w = b;
    }
    u64::from_be_bytes(word)
}

/// A parse error on the canonicaliser's paths, boxed so that a `Result` of theirs fits
/// in registers.
type Fail = Box<ParseError>;

/// Streams canonical bytes from JSON text without building a tree.
struct Canonicalizer<'a> {
    r: Reader<'a>,
    out: Vec<u8>,
    sort: bool,
    w: Scratch,
}

/// Canonical bytes of JSON text, streamed: members are sorted in place in the output, so no
/// tree is built and memory stays a small multiple of the input.
pub(crate) fn canonicalize_text(input: &[u8], sort: bool) -> Result<Vec<u8>, ParseError> {
    with_encoding(input, |text| {
        let mut c = Canonicalizer {
            r: Reader::new(text),
            out: Vec::with_capacity(input.len()),
            sort,
            w: SCRATCH.take(),
        };
        c.r.skip_ws();
        let done = c.value(0).map_err(|e| *e).and_then(|()| c.r.finish());
        let Canonicalizer { out, mut w, .. } = c;
        if w.held() <= SCRATCH_KEPT {
            w.clear();
            SCRATCH.set(w);
        }
        done.map(|()| out)
    })
}

/// The canonicaliser's working buffers, kept per thread between documents so that each
/// document does not grow them from nothing again.
#[derive(Default)]
struct Scratch {
    buf: String,
    scratch: String,
    /// The NFC keys of the objects being read, as UTF-8 (byte order is code point order).
    keys: Vec<u8>,
    members: Vec<Member>,
    /// The key prefixes and indices of the members of the object being finished, sorted.
    order: Vec<(u64, usize)>,
    reorder: Vec<u8>,
}

impl Scratch {
    /// The bytes the buffers hold allocated.
    fn held(&self) -> usize {
        self.reorder.capacity()
            + self.keys.capacity()
            + self.buf.capacity()
            + self.scratch.capacity()
            + self.members.capacity() * std::mem::size_of::<Member>()
            + self.order.capacity() * std::mem::size_of::<(u64, usize)>()
    }

    /// Empties every buffer, keeping its allocation.
    fn clear(&mut self) {
        self.buf.clear();
        self.scratch.clear();
        self.keys.clear();
        self.members.clear();
        self.order.clear();
        self.reorder.clear();
    }
}

/// The most bytes of working buffers a thread keeps for the next document; a larger
/// document's buffers are freed with it.
const SCRATCH_KEPT: usize = 1 << 20;

thread_local! {
    static SCRATCH: std::cell::Cell<Scratch> = std::cell::Cell::new(Scratch::default());
}

/// Appends `input[start..end]` to `out`. A run of at most 16 bytes with 16 bytes of input
/// from its start is copied as a block of 16 and the output cut back to the run: a copy of
/// fixed size, inlined, instead of a `memcpy` call whose branches on the size go wrong as
/// often as the sizes of keys and words change.
#[inline(always)]
fn push_run(out: &mut Vec<u8>, input: &[u8], start: usize, end: usize) {
    let len = end - start;
    if len <= 16
        && let Some(block) = input.get(start..).and_then(|b| b.first_chunk::<16>())
    {
        let at = out.len();
        out.extend_from_slice(block);
        out.truncate(at + len);
    } else {
        out.extend_from_slice(&input[start..end]);
    }
}

/// For a literal `int.frac` (no exponent, `frac` not empty) that [`push_short_float`]
/// would write in fixed notation, the number of fraction digits its canonical form keeps:
/// the literal up to them is that form (`12.50` is written `12.5`, `3.000` is `3.0`).
/// `None` for any other literal.
#[inline]
fn plain_decimal(int: &[u8], frac: &[u8]) -> Option<usize> {
    let kept = frac.len() - frac.iter().rev().take_while(|&&d| d == b'0').count();
    let significant = if int == b"0" {
        let zeros = frac.iter().take_while(|&&d| d == b'0').count();
        if kept > 0 && zeros > 3 {
            // 0.0000123 is 1.23e-05.
            return None;
        }
        kept.saturating_sub(zeros)
    } else if kept == 0 {
        int.len() - int.iter().rev().take_while(|&&d| d == b'0').count()
    } else {
        int.len() + kept
    };
    (significant <= 15 && int.len() <= 16).then_some(kept.max(1))
}

/// Appends the canonical form of a float literal with at most 15 significant digits whose
/// value is a normal double (`12.50`, `-0.001`, `100.0`, `25e-3`, `1.5E+200`), or returns
/// false for any other literal. `int` is a well-formed integer part, `frac` the digits after
/// the point (empty without one), `exp` the exponent's sign and digits (`None` without one).
///
/// Such a literal needs no float parsing or formatting: distinct decimals of at most 15
/// significant digits are distinct doubles in the normal range (DBL_DIG), so its digits
/// (zeros at either end dropped) are the shortest that round-trip, which is what Python's
/// repr prints: in fixed notation while the decimal exponent is in `-4..16`, else in
/// scientific notation with at least two exponent digits.
#[inline]
fn push_short_float(
    out: &mut Vec<u8>,
    negative: bool,
    int: &[u8],
    frac: &[u8],
    exp: Option<&[u8]>,
) -> bool {
    // The exponent, when it is small enough to matter here.
    let exp = match exp {
        None => 0,
        Some(e) => {
            let (minus, digits) = match e.split_first() {
                Some((b'-', rest)) => (true, rest),
                Some((b'+', rest)) => (false, rest),
                _ => (false, e),
            };
            let zeros = digits.iter().take_while(|&&d| d == b'0').count();
            let digits = &digits[zeros..];
            if digits.len() > 4 {
                return false;
            }
            let value = digits
                .iter()
                .fold(0i32, |n, &d| n * 10 + i32::from(d - b'0'));
            if minus { -value } else { value }
        }
    };
    // The significant digits (int and frac without the zeros at either end), as two
    // slices, and the decimal exponent of the first of them.
    let trim_end =
        |d: &'_ [u8]| -> usize { d.len() - d.iter().rev().take_while(|&&d| d == b'0').count() };
    let (first, second, point) = if int == b"0" {
        let zeros = frac.iter().take_while(|&&d| d == b'0').count();
        let rest = &frac[zeros..];
        (&rest[..trim_end(rest)], &[][..], -(zeros as i32) - 1)
    } else {
        let point = int.len() as i32 - 1;
        match trim_end(frac) {
            0 => (&int[..trim_end(int)], &[][..], point),
            kept => (int, &frac[..kept], point),
        }
    };
    let n = first.len() + second.len();
    if n == 0 {
        // Zero, whatever its exponent.
        out.extend_from_slice(if negative { b"-0.0" } else { b"0.0" });
        return true;
    }
    if n > 15 {
        return false;
    }
    let sci = point + exp;
    if !(-300..=300).contains(&sci) {
        return false;
    }
    let mut sig = [0u8; 15];
    sig[..first.len()].copy_from_slice(first);
    sig[first.len()..n].copy_from_slice(second);
    push_repr_layout(out, negative, &sig[..n], sci);
    true
}

impl Canonicalizer<'_> {
    /// Reads the string at `pos` and writes it in canonical form (NFC, escaped). Returns
    /// whether NFC changed it, and whether its NFC text differs from the bytes written
    /// between the quotes (then, when `key` is true, that text is appended to the key arena).
    #[inline(always)]
    fn string(&mut self, key: bool) -> Result<(bool, bool), Fail> {
        let input = self.r.input;
        let start = self.r.pos + 1;
        let (end, ascii) = scan_plain(input, start);
        if ascii && input.get(end) == Some(&b'"') {
            // ASCII without escapes or control characters: its own canonical form, quotes
            // and all.
            push_run(&mut self.out, input, start - 1, end + 1);
            self.r.pos = end + 1;
            return Ok((false, false));
        }
        self.string_slow(key, start, end, ascii)
    }

    /// [`Self::string`] for content that is not plain ASCII up to the closing quote.
    #[inline(never)]
    fn string_slow(
        &mut self,
        key: bool,
        start: usize,
        end: usize,
        ascii: bool,
    ) -> Result<(bool, bool), Fail> {
        let input = self.r.input;
        if input.get(end) == Some(&b'"') {
            // No escapes and no control characters: the content is its own canonical form
            // if it is in NFC.
            let chunk = &input[start..end];
            let mut plain = true;
            // The content lies between two quotes: a whole number of characters.
            if !ascii && let Some(text) = self.r.text.get(start..end) {
                // Every character below U+0300 (lead bytes below 0xCC) has NFC_QC=Yes and
                // combining class 0, so such text is in NFC without a table look-up; so is
                // text of characters from the ranges of `NFC_STARTERS`.
                if chunk.iter().any(|&b| b >= 0xCC)
                    && !is_nfc_by_ranges(text)
                    && is_nfc_quick(text.chars()) != IsNormalized::Yes
                {
                    self.w.scratch.clear();
                    push_nfc(&mut self.w.scratch, text);
                    plain = self.w.scratch.as_bytes() == chunk;
                }
            }
            if !plain {
                // Changed by NFC (which can turn some characters into ASCII ones, so the
                // result is escaped again).
                push_escaped(&mut self.out, &self.w.scratch);
                if key {
                    self.w.keys.extend_from_slice(self.w.scratch.as_bytes());
                }
                self.r.pos = end + 1;
                return Ok((true, true));
            }
            push_run(&mut self.out, input, start - 1, end + 1);
            self.r.pos = end + 1;
            return Ok((false, false));
        }
        if !key && ascii && self.ascii_escaped(start) {
            return Ok((false, true));
        }
        self.r.read_string(&mut self.w.buf)?;
        let changed = nfc_in_place(&mut self.w.buf, &mut self.w.scratch);
        push_escaped(&mut self.out, &self.w.buf);
        if key {
            self.w.keys.extend_from_slice(self.w.buf.as_bytes());
        }
        Ok((changed, true))
    }

    /// Writes the canonical form of a string value whose content from `start` is ASCII
    /// with escapes that all stand for ASCII characters (`line\n\"two\"`), straight from
    /// the input: such content is in NFC, and its escapes are canonical as written but for
    /// `\/` and `\u`, which are rewritten. Returns false, having written nothing, for
    /// anything else (a non-ASCII byte or escape, a control character, a malformed escape,
    /// the end of the input): the general path then reads the string, or reports the error.
    fn ascii_escaped(&mut self, start: usize) -> bool {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let input = self.r.input;
        let mark = self.out.len();
        self.out.push(b'"');
        let mut i = start;
        loop {
            let (end, ascii) = scan_plain(input, i);
            if !ascii {
                break;
            }
            self.out.extend_from_slice(&input[i..end]);
            match input.get(end) {
                Some(b'"') => {
                    self.out.push(b'"');
                    self.r.pos = end + 1;
                    return true;
                }
                Some(b'\\') => {}
                _ => break,
            }
            match input.get(end + 1) {
                Some(b'"' | b'\\' | b'n' | b'r' | b't' | b'b' | b'f') => {
                    self.out.extend_from_slice(&input[end..end + 2]);
                    i = end + 2;
                }
                Some(b'/') => {
                    self.out.push(b'/');
                    i = end + 2;
                }
                Some(b'u') => {
                    let hex = |d: u8| char::from(d).to_digit(16);
                    let code = match input.get(end + 2..end + 6) {
                        Some(&[b'0', b'0', hi, lo]) => match (hex(hi), hex(lo)) {
                            (Some(hi @ 0..8), Some(lo)) => (hi << 4 | lo) as u8,
                            _ => break,
                        },
                        _ => break,
                    };
                    match code {
                        b'"' => self.out.extend_from_slice(b"\\\""),
                        b'\\' => self.out.extend_from_slice(b"\\\\"),
                        b'\n' => self.out.extend_from_slice(b"\\n"),
                        b'\r' => self.out.extend_from_slice(b"\\r"),
                        b'\t' => self.out.extend_from_slice(b"\\t"),
                        0x08 => self.out.extend_from_slice(b"\\b"),
                        0x0C => self.out.extend_from_slice(b"\\f"),
                        0x00..=0x1F => {
                            self.out.extend_from_slice(b"\\u00");
                            self.out.push(HEX[usize::from(code >> 4)]);
                            self.out.push(HEX[usize::from(code & 0xF)]);
                        }
                        _ => self.out.push(code),
                    }
                    i = end + 6;
                }
                _ => break,
            }
        }
        self.out.truncate(mark);
        false
    }

    fn number(&mut self) -> Result<(), Fail> {
        let input = self.r.input;
        let start = self.r.pos;
        let negative = input.get(start) == Some(&b'-');
        let int_start = start + usize::from(negative);
        let i = digits_end(input, int_start);
        if i == int_start
            && let Some(e) = self.r.non_finite()
        {
            // `-Infinity`: the only non-finite literal that starts like a number.
            return Err(e.into());
        }
        let int_end = i;
        let int = &input[int_start..int_end];
        let next = input.get(i).copied();
        let well_formed_int = !int.is_empty() && (int[0] != b'0' || int.len() == 1);
        if well_formed_int && !matches!(next, Some(b'.' | b'e' | b'E')) {
            // An integer: its digits are canonical, but for `-0`.
            self.r.pos = int_end;
            let from = if negative && int == b"0" {
                int_start
            } else {
                start
            };
            push_run(&mut self.out, input, from, int_end);
            return Ok(());
        }
        if well_formed_int {
            // A fraction, an exponent, or both (each only with at least one digit).
            let mut end = int_end;
            let mut frac: &[u8] = &[];
            let mut exp = None;
            if next == Some(b'.') {
                let j = digits_end(input, i + 1);
                if j > i + 1 {
                    frac = &input[i + 1..j];
                    end = j;
                }
            }
            if matches!(input.get(end), Some(b'e' | b'E')) {
                let digits = end + 1 + usize::from(matches!(input.get(end + 1), Some(b'+' | b'-')));
                let e = digits_end(input, digits);
                if e > digits {
                    exp = Some(&input[end + 1..e]);
                    end = e;
                }
            }
            if exp.is_none()
                && !frac.is_empty()
                && let Some(keep) = plain_decimal(int, frac)
            {
                // Its own canonical form, up to the digits kept of its fraction.
                push_run(&mut self.out, input, start, i + 1 + keep);
                self.r.pos = end;
                return Ok(());
            }
            if end > int_end && push_short_float(&mut self.out, negative, int, frac, exp) {
                self.r.pos = end;
                return Ok(());
            }
            if end > int_end {
                let invalid = || self.r.err(start, K::InvalidNumber);
                let text = self.r.text.get(start..end).ok_or_else(invalid)?;
                let x = float_of_literal(text).ok_or_else(invalid)?;
                if !x.is_finite() {
                    return Err(self.r.err(start, K::FloatOverflow).into());
                }
                self.r.pos = end;
                push_float_repr(&mut self.out, x);
                return Ok(());
            }
        }
        match self.r.read_number()? {
            Number::Int("-0") => self.out.push(b'0'),
            Number::Int(text) => self.out.extend_from_slice(text.as_bytes()),
            Number::Float(x) => push_float_repr(&mut self.out, x),
        }
        Ok(())
    }

    /// [`Self::value`] for an array element or member value: strings and numbers, most of
    /// them, are read here without the call into the recursive dispatch.
    #[inline]
    fn member_value(&mut self, depth: usize) -> Result<(), Fail> {
        match self.r.peek() {
            Some(b'"') => self.string(false).map(drop),
            Some(b'0'..=b'9') => self.number(),
            _ => self.value(depth),
        }
    }

    fn value(&mut self, depth: usize) -> Result<(), Fail> {
        match self.r.peek() {
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => self.string(false).map(drop),
            Some(b't') => {
                self.r.expect_literal(b"true")?;
                self.out.extend_from_slice(b"true");
                Ok(())
            }
            Some(b'f') => {
                self.r.expect_literal(b"false")?;
                self.out.extend_from_slice(b"false");
                Ok(())
            }
            Some(b'n') => {
                self.r.expect_literal(b"null")?;
                self.out.extend_from_slice(b"null");
                Ok(())
            }
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self
                .r
                .non_finite()
                .unwrap_or_else(|| self.r.unexpected())
                .into()),
        }
    }

    fn array(&mut self, depth: usize) -> Result<(), Fail> {
        if depth > MAX_DEPTH {
            return Err(self.r.err(self.r.pos, K::TooDeep(MAX_DEPTH)).into());
        }
        self.r.pos += 1;
        self.out.push(b'[');
        self.r.skip_ws();
        if self.r.peek() == Some(b']') {
            self.r.pos += 1;
            self.out.push(b']');
            return Ok(());
        }
        loop {
            self.member_value(depth)?;
            self.r.skip_ws();
            match self.r.peek() {
                Some(b',') => {
                    self.r.pos += 1;
                    self.out.push(b',');
                    self.r.skip_ws();
                }
                Some(b']') => {
                    self.r.pos += 1;
                    self.out.push(b']');
                    return Ok(());
                }
                _ => return Err(self.r.unexpected().into()),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<(), Fail> {
        if depth > MAX_DEPTH {
            return Err(self.r.err(self.r.pos, K::TooDeep(MAX_DEPTH)).into());
        }
        self.r.pos += 1;
        self.out.push(b'{');
        let body = self.out.len();
        let base = self.w.members.len();
        let keys_base = self.w.keys.len();
        self.r.skip_ws();
        if self.r.peek() == Some(b'}') {
            self.r.pos += 1;
            self.out.push(b'}');
            return Ok(());
        }
        loop {
            if self.r.peek() != Some(b'"') {
                return Err(self.r.unexpected().into());
            }
            let at = self.r.pos;
            let key_start = self.w.keys.len();
            let out_start = self.out.len();
            let input = self.r.input;
            let (end, ascii) = scan_plain(input, at + 1);
            let (changed, in_arena, key) =
                if ascii && input.get(end) == Some(&b'"') && input.get(end + 1) == Some(&b':') {
                    // A plain key with its colon right after it, as most writers put it: the
                    // key, quotes and colon are copied as they are.
                    push_run(&mut self.out, input, at, end + 2);
                    self.r.pos = end + 2;
                    (
                        false,
                        false,
                        (out_start + 1, out_start + 1 + (end - at - 1)),
                    )
                } else {
                    let (changed, in_arena) = self.string(true)?;
                    let key = if in_arena {
                        (key_start, self.w.keys.len())
                    } else {
                        (out_start + 1, self.out.len() - 1)
                    };
                    self.out.push(b':');
                    self.r.skip_ws();
                    if self.r.peek() != Some(b':') {
                        return Err(self.r.unexpected().into());
                    }
                    self.r.pos += 1;
                    (changed, in_arena, key)
                };
            self.r.skip_ws();
            self.member_value(depth)?;
            let prefix = if in_arena {
                key_prefix(&self.w.keys, key.0, key.1)
            } else {
                key_prefix(&self.out, key.0, key.1)
            };
            self.w.members.push(Member {
                prefix,
                key,
                in_arena,
                out: (out_start, self.out.len()),
                at,
                changed,
            });
            self.r.skip_ws();
            match self.r.peek() {
                Some(b',') => {
                    self.r.pos += 1;
                    self.out.push(b',');
                    self.r.skip_ws();
                }
                Some(b'}') => {
                    self.r.pos += 1;
                    break;
                }
                _ => return Err(self.r.unexpected().into()),
            }
        }
        self.finish_object(body, base)?;
        self.out.push(b'}');
        self.w.members.truncate(base);
        self.w.keys.truncate(keys_base);
        Ok(())
    }

    /// Checks the members of the object whose body starts at `body` for duplicate keys and,
    /// for v1, rewrites them in key order.
    fn finish_object(&mut self, body: usize, base: usize) -> Result<(), Fail> {
        let Canonicalizer {
            r,
            out,
            sort,
            w:
                Scratch {
                    keys,
                    members,
                    order,
                    reorder,
                    ..
                },
        } = self;
        let members = &members[base..];
        let key = |i: usize| members[i].key(out, keys);
        // Strictly increasing keys: sorted already, and no duplicates.
        if members
            .windows(2)
            .all(|w| key_order(&w[0], &w[1], out, keys).is_lt())
        {
            return Ok(());
        }
        // Prefixes decide unless equal; the whole keys decide then.
        let less =
            |a: (u64, usize), b: (u64, usize)| a.0 < b.0 || (a.0 == b.0 && key(a.1) < key(b.1));
        order.clear();
        order.extend(members.iter().enumerate().map(|(i, m)| (m.prefix, i)));
        if order.len() <= 16 {
            for i in 1..order.len() {
                let x = order[i];
                let mut j = i;
                while j > 0 && less(x, order[j - 1]) {
                    order[j] = order[j - 1];
                    j -= 1;
                }
                order[j] = x;
            }
        } else {
            order.sort_unstable_by(|&a, &b| a.0.cmp(&b.0).then_with(|| key(a.1).cmp(key(b.1))));
        }
        if order
            .windows(2)
            .any(|w| w[0].0 == w[1].0 && key(w[0].1) == key(w[1].1))
        {
            let text = |i: usize| std::str::from_utf8(key(i)).unwrap_or_default();
            if let Some((a, b)) = first_duplicate(members.len(), text, |i| members[i].at) {
                let name = text(b).to_owned();
                let kind = if members[a].changed || members[b].changed {
                    K::DuplicateKeyAfterNfc(name)
                } else {
                    K::DuplicateKey(name)
                };
                return Err(r.err(members[b].at, kind).into());
            }
        }
        if !*sort {
            return Ok(());
        }
        // Members already in their place at the start stay where they are.
        let first = order
            .iter()
            .enumerate()
            .take_while(|&(n, &(_, i))| n == i)
            .count();
        let from = match first.checked_sub(1) {
            Some(last) => members[last].out.1,
            None => body,
        };
        // The members from `from` on are rewritten in key order over the same bytes: the
        // same members and commas, so the same length.
        reorder.clear();
        reorder.extend_from_slice(&out[from..]);
        // Room for a block copy past the last member on both sides, cut off again below.
        let end = out.len();
        reorder.extend_from_slice(&[0; 32]);
        out.extend_from_slice(&[0; 32]);
        let mut dst = from;
        for (n, &(_, i)) in order[first..].iter().enumerate() {
            if n > 0 || first > 0 {
                out[dst] = b',';
                dst += 1;
            }
            let (s, e) = (members[i].out.0 - from, members[i].out.1 - from);
            // A member of at most 32 bytes is copied as a block of 32 (the bytes past it are
            // rewritten by the members after it, or cut off): a fixed-size copy instead of a
            // `memcpy` call whose size branches go wrong as member lengths vary.
            if e - s <= 32 {
                out[dst..dst + 32].copy_from_slice(&reorder[s..s + 32]);
            } else {
                out[dst..dst + (e - s)].copy_from_slice(&reorder[s..e]);
            }
            dst += e - s;
        }
        out.truncate(end);
        debug_assert_eq!(dst, end);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use unicode_normalization::char::canonical_combining_class;
    use unicode_normalization::{IsNormalized, is_nfc_quick};

    /// The string fast path skips the NFC table for text whose characters are all below
    /// U+0300: that is only right while each of them is NFC_QC=Yes with combining class 0.
    #[test]
    fn every_character_below_u0300_is_nfc_by_itself() {
        for c in (0..0x300).filter_map(char::from_u32) {
            assert_eq!(is_nfc_quick(std::iter::once(c)), IsNormalized::Yes, "{c:?}");
            assert_eq!(canonical_combining_class(c), 0, "{c:?}");
        }
    }

    /// A float literal of at most 15 significant digits is written from its own digits:
    /// that must be what parsing it and writing Python's repr of the double gives.
    #[test]
    fn short_float_literals_are_written_as_their_repr() {
        use rand_core::{RngCore, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(15);
        let digits = |n: u64, rng: &mut rand_pcg::Pcg64| -> String {
            (0..n)
                .map(|_| char::from(b'0' + (rng.next_u64() % 10) as u8))
                .collect()
        };
        let (mut taken, mut tried) = (0, 0);
        for _ in 0..200_000 {
            let r = rng.next_u64();
            let int = match r % 4 {
                0 => "0".to_owned(),
                _ => format!("{}{}", 1 + r % 9, digits(r >> 8 & 15, &mut rng)),
            };
            let frac = match r >> 12 & 3 {
                0 => String::new(),
                1 => format!(
                    "{}{}",
                    "0".repeat((r >> 16 & 7) as usize),
                    digits(r >> 20 & 15, &mut rng)
                ),
                _ => digits(1 + (r >> 24 & 15), &mut rng),
            };
            let exp = match r >> 28 & 3 {
                0 if !frac.is_empty() => String::new(),
                1 => format!("e-{}", r >> 32 & 511),
                2 => format!("E+0{}", r >> 32 & 511),
                _ => format!("e{}", (r >> 32) % 100_000),
            };
            let negative = r >> 60 & 1 == 1;
            let text = format!(
                "{}{int}{}{frac}{exp}",
                if negative { "-" } else { "" },
                if frac.is_empty() { "" } else { "." }
            );
            let exp_part = exp.strip_prefix(['e', 'E']).map(str::as_bytes);
            let mut short = Vec::new();
            tried += 1;
            if !super::push_short_float(
                &mut short,
                negative,
                int.as_bytes(),
                frac.as_bytes(),
                exp_part,
            ) {
                continue;
            }
            taken += 1;
            let x: f64 = text.parse().expect("a valid literal");
            let mut repr = Vec::new();
            crate::write::push_float_repr(&mut repr, x);
            assert_eq!(
                String::from_utf8_lossy(&short),
                String::from_utf8_lossy(&repr),
                "{text}"
            );
        }
        // Many literals take the shortcut; the rest (too many digits, out of range) do not.
        assert!(taken > tried / 5 && taken < tried, "{taken} of {tried}");
    }

    /// Strings of ASCII with escapes are written straight from the input: the same bytes
    /// (or the same error) as decoding them into a value and writing that.
    #[test]
    fn ascii_escaped_strings_match_the_decoding_path() {
        use rand_core::{RngCore, SeedableRng};
        const PIECES: &[&str] = &[
            "a",
            "word ",
            "\\\"",
            "\\\\",
            "\\n",
            "\\r",
            "\\t",
            "\\b",
            "\\f",
            "\\/",
            "\\u0041",
            "\\u001f",
            "\\u0000",
            "\\u007F",
            "\\u0022",
            "\\u005C",
            "\\u000a",
            "\\u0008",
            "\\u000C",
            "\\u0080",
            "\\u00e9",
            "\\u00+f",
            "\\u00G0",
            "\\u2028",
            "\\ud83d\\ude00",
            "\\x",
            "\\",
            "\t",
            "\u{1}",
            "\u{e9}",
            "e\u{301}",
            "\u{7f}",
        ];
        let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
        let mut errors = 0;
        for _ in 0..20_000 {
            let n = 1 + rng.next_u64() % 6;
            let body: String = (0..n)
                .map(|_| PIECES[(rng.next_u64() % PIECES.len() as u64) as usize])
                .collect();
            let doc = format!("[\"{body}\", 1]");
            let streamed =
                super::canonicalize_text(doc.as_bytes(), true).map_err(|e| e.to_string());
            let decoded = super::parse(doc.as_bytes())
                .map_err(|e| e.to_string())
                .and_then(|v| crate::to_canonical_bytes(&v).map_err(|e| e.to_string()));
            errors += usize::from(streamed.is_err());
            assert_eq!(streamed, decoded, "{doc}");
        }
        // Both outcomes were compared.
        assert!(errors > 1000 && errors < 19_000, "{errors} errors");
    }

    /// The working buffers a thread keeps between documents carry nothing from one to the
    /// next, even from a document that failed halfway through an object.
    #[test]
    fn kept_buffers_carry_nothing_over() {
        let good = br#"{"b": {"y": 1, "x": "caf\u00e9"}, "a": [{"d": 2, "c": 3}]}"#;
        let expected = super::canonicalize_text(good, true).expect("valid");
        for bad in [
            &br#"{"z": {"q": 1, "p": 2, "k": "#[..],
            br#"{"z": 1, "a": {"m": 2, "m": 3}}"#,
            br#"{"e\u0301": 1, "\u00e9": 2}"#,
        ] {
            assert!(super::canonicalize_text(bad, true).is_err());
            assert_eq!(
                super::canonicalize_text(good, true).expect("valid"),
                expected
            );
        }
        assert_eq!(
            String::from_utf8_lossy(&expected),
            r#"{"a":[{"c":3,"d":2}],"b":{"x":"café","y":1}}"#
        );
    }

    /// Where a decimal is written as a prefix of itself, that prefix is what the general
    /// short-float path writes.
    #[test]
    fn plain_decimals_are_their_own_prefix() {
        use rand_core::{RngCore, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(21);
        let mut taken = 0;
        for _ in 0..100_000 {
            let r = rng.next_u64();
            let digits = |n: u64, seed: u64| -> String {
                (0..n)
                    .map(|k| char::from(b'0' + (seed >> (k % 16 * 4) & 15) as u8 % 10))
                    .collect()
            };
            let int = match r % 3 {
                0 => "0".to_owned(),
                _ => format!("{}{}", 1 + r % 9, digits(r >> 4 & 15, r >> 8)),
            };
            let frac = format!(
                "{}{}{}",
                "0".repeat((r >> 12 & 7) as usize),
                digits(1 + (r >> 16 & 15), r >> 20),
                "0".repeat((r >> 24 & 3) as usize)
            );
            let negative = r >> 30 & 1 == 1;
            let literal = format!("{}{int}.{frac}", if negative { "-" } else { "" });
            let mut general = Vec::new();
            let written = super::push_short_float(
                &mut general,
                negative,
                int.as_bytes(),
                frac.as_bytes(),
                None,
            );
            // The general path decides the others (scientific notation, too many digits).
            if let Some(keep) = super::plain_decimal(int.as_bytes(), frac.as_bytes()) {
                taken += 1;
                let prefix = &literal.as_bytes()[..literal.len() - frac.len() + keep];
                assert!(written, "{literal}");
                assert_eq!(
                    String::from_utf8_lossy(prefix),
                    String::from_utf8_lossy(&general),
                    "{literal}"
                );
            }
        }
        assert!(taken > 20_000, "{taken}");
    }

    /// A run is appended as it is, whether copied as a block or not.
    #[test]
    fn push_run_appends_exactly_the_run() {
        let input: Vec<u8> = (0..40).collect();
        for start in 0..=input.len() {
            for end in start..=input.len() {
                let mut out = b"head".to_vec();
                super::push_run(&mut out, &input, start, end);
                assert_eq!(&out[..4], b"head");
                assert_eq!(&out[4..], &input[start..end], "{start}..{end}");
            }
        }
    }

    /// A key's prefix is its first eight bytes, zero-padded, whatever follows it.
    #[test]
    fn key_prefix_ignores_the_bytes_after_the_key() {
        let buf = b"abcdefghij\":1,\"z\":\xff\xff\xff\xff\xff\xff\xff\xff";
        for start in 0..buf.len() {
            for end in start..buf.len() {
                let mut word = [0u8; 8];
                for (w, &b) in word.iter_mut().zip(&buf[start..end]) {
                    *w = b;
                }
                let expected = u64::from_be_bytes(word);
                assert_eq!(
                    super::key_prefix(buf, start, end),
                    expected,
                    "{start}..{end}"
                );
            }
        }
    }

    /// Text of characters from `NFC_STARTERS` skips the NFC quick check: each of them must
    /// be NFC_QC=Yes with combining class 0.
    #[test]
    fn every_character_of_the_nfc_starter_ranges_is_nfc_by_itself() {
        for (lo, hi) in super::NFC_STARTERS {
            for c in (lo..hi).filter_map(char::from_u32) {
                assert_eq!(is_nfc_quick(std::iter::once(c)), IsNormalized::Yes, "{c:?}");
                assert_eq!(canonical_combining_class(c), 0, "{c:?}");
            }
        }
        // The ranges stop where the tables say so: at a combining mark, a decomposing
        // compatibility ideograph, a trailing Hangul jamo.
        for c in [
            '\u{0300}',
            '\u{0483}',
            '\u{3099}',
            '\u{F900}',
            '\u{2F800}',
            '\u{11A8}',
        ] {
            assert!(!super::is_nfc_by_ranges(&c.to_string()), "{c:?}");
        }
        assert!(super::is_nfc_by_ranges(
            "数据 Ωmega Ελλάδα 😀 ok Łódź 한국어"
        ));
    }

    /// Skipping whitespace stops at the first byte that is not a space, tab, line feed or
    /// carriage return, from every offset, whichever path it takes.
    #[test]
    fn skip_ws_stops_at_the_first_other_byte() {
        let text = " x  y \n          z\r\n\t \t  ,\n\n:          \x0b  \x0c ]  ";
        for start in 0..=text.len() {
            let expected = start
                + text.as_bytes()[start..]
                    .iter()
                    .take_while(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
                    .count();
            let mut r = super::Reader::new(text);
            r.pos = start;
            r.skip_ws();
            assert_eq!(r.pos, expected, "from {start}");
        }
    }

    /// The shortcut for ASCII letters with single marks gives the NFC form, for every
    /// character with NFC_QC=Maybe after several ASCII characters, alone and between others,
    /// and for random mixes; where it declines, nothing is left behind.
    #[test]
    fn push_nfc_simple_agrees_with_the_normaliser() {
        use rand_core::{RngCore, SeedableRng};
        use unicode_normalization::UnicodeNormalization;
        let check = |text: &str| {
            let mut out = String::from("x");
            let taken = super::push_nfc_simple(&mut out, text);
            if taken {
                let whole: String = text.nfc().collect();
                assert_eq!(out, format!("x{whole}"), "{text:?}");
            } else {
                assert_eq!(out, "x", "{text:?}");
            }
            taken
        };
        let maybe: Vec<char> = (0..0x11_0000)
            .filter_map(char::from_u32)
            .filter(|&c| is_nfc_quick(std::iter::once(c)) == IsNormalized::Maybe)
            .collect();
        assert!(maybe.len() > 50, "{}", maybe.len());
        let mut taken = 0;
        for &m in &maybe {
            for a in ['a', 'e', 'A', 'o', 'n', 'u', 'z', ' ', '0', '\u{7f}'] {
                for text in [
                    format!("{a}{m}"),
                    format!("q{a}{m}b{a}{m}"),
                    format!("{a}{m}\u{5b57}"),
                ] {
                    taken += usize::from(check(&text));
                }
            }
        }
        assert!(taken > 1000, "{taken}");
        const CHARS: &[char] = &[
            'a',
            'e',
            'n',
            'A',
            ' ',
            '\u{e9}',
            '\u{301}',
            '\u{303}',
            '\u{308}',
            '\u{323}',
            '\u{327}',
            '\u{345}',
            '\u{3b1}',
            '\u{212b}',
            '\u{1112}',
            '\u{1161}',
            '\u{11ab}',
            '\u{ac00}',
            '\u{304b}',
            '\u{3099}',
            '\u{fa10}',
            '\u{0344}',
            '\u{0340}',
            '\u{30a}',
            '\u{0b47}',
            '\u{0b3e}',
            '\u{1f600}',
            '\u{5b57}',
        ];
        let mut rng = rand_pcg::Pcg64::seed_from_u64(9);
        for _ in 0..50_000 {
            let n = rng.next_u64() % 8;
            let text: String = (0..n)
                .map(|_| CHARS[(rng.next_u64() % CHARS.len() as u64) as usize])
                .collect();
            check(&text);
        }
    }

    /// The eight-at-a-time digit scan agrees with a byte loop at every offset.
    #[test]
    fn digits_end_stops_at_the_first_non_digit() {
        let text = b"0123456789/:\xfa9\xff12345678901234567890a0 9.5e+1";
        for start in 0..text.len() {
            let expected = start
                + text[start..]
                    .iter()
                    .take_while(|b| b.is_ascii_digit())
                    .count();
            assert_eq!(super::digits_end(text, start), expected, "from {start}");
        }
    }

    /// The eight-at-a-time string scan agrees with a byte loop at every offset.
    #[test]
    fn scan_plain_stops_at_the_first_special_byte() {
        let text = "abc\u{e9}defgh\"ijklmnop\\qrstuvw\u{1f}xyz\u{7f} \u{80}ABCDEFGHIJK".as_bytes();
        for start in 0..text.len() {
            let end = start
                + text[start..]
                    .iter()
                    .take_while(|&&b| b != b'"' && b != b'\\' && b >= 0x20)
                    .count();
            let ascii = text[start..end].is_ascii();
            assert_eq!(super::scan_plain(text, start), (end, ascii), "from {start}");
        }
    }
}
