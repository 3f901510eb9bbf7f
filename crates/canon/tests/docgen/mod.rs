//! A proptest generator of JSON documents that stress canonical form v1: floats near the
//! switch points of Python's repr, huge integers, control characters, U+007F/U+2028,
//! astral-plane keys, non-NFC text. Characters are drawn only from blocks fully assigned in
//! Unicode 14 (Python 3.11's tables), so NFC agrees with the reference.
//!
//! A [`Doc`] is rendered to text by [`render`] with a style seed that picks whitespace,
//! escapes and (optionally) a shuffled member order, so one document has many spellings.

#![allow(dead_code)]

use std::collections::BTreeSet;

use proptest::prelude::*;
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg32;
use unicode_normalization::UnicodeNormalization;

/// A JSON document; numbers keep their literal text.
#[derive(Debug, Clone)]
pub enum Doc {
    Null,
    Bool(bool),
    Int(String),
    Float(String),
    Str(String),
    Arr(Vec<Doc>),
    /// Keys are distinct after NFC (the generator ensures it).
    Obj(Vec<(String, Doc)>),
}

/// Code point ranges assigned in Unicode 14, chosen for what they do under NFC and escaping.
const RANGES: &[(u32, u32)] = &[
    (0x20, 0x7e),       // ASCII, including '"', '\\' and '/'
    (0x00, 0x1f),       // C0 controls: escaped
    (0x7f, 0x7f),       // DEL: raw
    (0xa0, 0xff),       // Latin-1: precomposed letters
    (0x100, 0x17f),     // Latin Extended-A
    (0x300, 0x36f),     // combining diacritics (0340, 0341, 0343, 0344 are singletons)
    (0x391, 0x3a1),     // Greek capitals
    (0x3b1, 0x3c9),     // Greek small
    (0x915, 0x939),     // Devanagari consonants
    (0x93c, 0x93c),     // Devanagari nukta
    (0x958, 0x95f),     // composition exclusions
    (0x1100, 0x1112),   // Hangul leading jamo
    (0x1161, 0x1175),   // Hangul vowel jamo
    (0x11a8, 0x11c2),   // Hangul trailing jamo
    (0x1e00, 0x1eff),   // Latin Extended Additional
    (0x1f00, 0x1f15),   // Greek Extended
    (0x2028, 0x2029),   // line and paragraph separators: raw
    (0x2126, 0x2126),   // OHM SIGN -> U+03A9
    (0x212b, 0x212b),   // ANGSTROM SIGN -> U+00C5
    (0x4e00, 0x4e80),   // CJK
    (0xac00, 0xd7a3),   // Hangul syllables
    (0xf900, 0xfa2d),   // CJK compatibility ideographs (singletons)
    (0xfb1f, 0xfb36),   // Hebrew presentation forms (exclusions)
    (0xff01, 0xff5e),   // fullwidth forms
    (0x10000, 0x1000b), // Linear B
    (0x1d15e, 0x1d164), // musical symbols (exclusions, astral)
    (0x1f600, 0x1f64f), // emoji
    (0x2f800, 0x2fa1d), // CJK compatibility supplement (astral singletons)
];

fn any_char() -> impl Strategy<Value = char> {
    let ranges: Vec<BoxedStrategy<char>> = RANGES
        .iter()
        .map(|&(lo, hi)| {
            (lo..=hi)
                .prop_map(|c| char::from_u32(c).unwrap_or('?'))
                .boxed()
        })
        .collect();
    prop_oneof![
        6 => proptest::char::range('a', 'z'),
        4 => proptest::strategy::Union::new(ranges),
    ]
}

fn text(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(any_char(), 0..max).prop_map(|c| c.into_iter().collect())
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z_]{1,6}",
        1 => text(6),
        2 => shared_prefix_key(),
    ]
}

/// Prefixes of at least eight UTF-8 bytes, and one shorter: keys that start alike are told
/// apart only past the bytes a sort may compare first. `abc` and `abc\u{0}` are equal in
/// their first eight bytes when short keys are padded with zeros.
const PREFIXES: &[&str] = &["abcdefgh", "key_name_", "\u{e9}\u{e9}\u{e9}\u{e9}", "abc"];

/// A key made of one of [`PREFIXES`] and a short tail, so that tails of different lengths
/// sort by code point, not by length (`"b"` after `"aa"`).
fn shared_prefix_key() -> impl Strategy<Value = String> {
    (
        prop::sample::select(PREFIXES),
        prop_oneof![
            3 => "[ab]{0,3}",
            1 => text(3),
            1 => Just("\u{0}".to_owned()),
        ],
    )
        .prop_map(|(prefix, tail)| format!("{prefix}{tail}"))
}

/// Members with distinct keys after NFC, in generated order.
fn distinct(members: Vec<(String, Doc)>) -> Doc {
    let mut seen = BTreeSet::new();
    Doc::Obj(
        members
            .into_iter()
            .filter(|(k, _)| seen.insert(k.nfc().collect::<String>()))
            .collect(),
    )
}

fn int() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => any::<i64>().prop_map(|n| n.to_string()),
        1 => Just("-0".to_owned()),
        2 => (any::<bool>(), prop::collection::vec(0u8..10, 1..40)).prop_map(digits),
        1 => (any::<bool>(), prop::collection::vec(0u8..10, 1000..6000)).prop_map(digits),
    ]
}

fn digits((neg, d): (bool, Vec<u8>)) -> String {
    let mut s = String::from(if neg { "-" } else { "" });
    s.push(char::from(b'1' + d[0] % 9));
    s.extend(d[1..].iter().map(|x| char::from(b'0' + x)));
    s
}

/// Float literals: any finite f64 in several spellings, and hand-made literals near the
/// exponents where repr switches notation, near the subnormal and overflow edges.
fn float() -> impl Strategy<Value = String> {
    let finite = any::<f64>().prop_filter("finite", |x| x.is_finite());
    prop_oneof![
        3 => (finite, 0..4u8).prop_map(|(x, style)| match style {
            0 => format!("{x:e}"),
            1 => format!("{x:E}"),
            2 => format!("{x:?}").replace("inf", "1e400"),
            _ => format!("{x:.3e}"),
        }),
        // Subnormals and the smallest normals.
        1 => (1u64..(1 << 53)).prop_map(|bits| format!("{:e}", f64::from_bits(bits))),
        // mantissa × 10^exp around the switch points 1e16 and 1e-4, and the extremes.
        4 => (
            1u64..100_000_000_000_000_000,
            prop_oneof![
                -25i32..-10,
                -10i32..5,
                5i32..25,
                280i32..=291,
                -345i32..-300,
            ],
            0..3u8,
            any::<bool>(),
        )
            .prop_map(|(m, e, style, neg)| {
                let sign = if neg { "-" } else { "" };
                match style {
                    0 => format!("{sign}{m}e{e}"),
                    1 => format!("{sign}{m}.0E+{}", e.max(0)),
                    _ => {
                        let d = m.to_string();
                        format!("{sign}{}.{}e{e}", &d[..1], if d.len() > 1 { &d[1..] } else { "0" })
                    }
                }
            }),
        // Binary fractions of large magnitude: their exact decimal value can fall halfway
        // between two shortest candidates (ties go to the even digit).
        2 => (1u64 << 40..1u64 << 53, 1..8i32)
            .prop_map(|(m, s)| format!("{:?}", m as f64 / f64::from(1u32 << s))),
        // Exact powers of ten and their neighbours in fixed notation.
        1 => (0usize..20, 0usize..20).prop_map(|(int_zeros, frac_zeros)| {
            format!("1{}.{}1", "0".repeat(int_zeros), "0".repeat(frac_zeros))
        }),
        1 => (0usize..8).prop_map(|z| format!("0.{}1", "0".repeat(z))),
    ]
}

/// Any document, up to a few levels deep.
pub fn doc() -> impl Strategy<Value = Doc> {
    let leaf = prop_oneof![
        1 => Just(Doc::Null),
        1 => any::<bool>().prop_map(Doc::Bool),
        3 => int().prop_map(Doc::Int),
        3 => float().prop_map(Doc::Float),
        4 => text(12).prop_map(Doc::Str),
    ]
    .boxed();
    leaf.clone().prop_recursive(4, 64, 8, move |inner| {
        prop_oneof![
            4 => prop::collection::vec(inner.clone(), 0..8).prop_map(Doc::Arr),
            4 => prop::collection::vec((key(), inner), 0..8).prop_map(distinct),
            // More than sixteen members, keys alike in their first bytes: a sort of many
            // members takes another path than a sort of few. Leaf values keep the size down.
            1 => prop::collection::vec((shared_prefix_key(), leaf.clone()), 17..40)
                .prop_map(distinct),
        ]
    })
}

/// The document with every string and key mapped by `f` (e.g. to NFC or NFD).
pub fn map_strings(doc: &Doc, f: &impl Fn(&str) -> String) -> Doc {
    match doc {
        Doc::Str(s) => Doc::Str(f(s)),
        Doc::Arr(items) => Doc::Arr(items.iter().map(|d| map_strings(d, f)).collect()),
        Doc::Obj(members) => Doc::Obj(
            members
                .iter()
                .map(|(k, v)| (f(k), map_strings(v, f)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// How to spell a document.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    /// Picks whitespace and escapes.
    pub seed: u64,
    /// Shuffle object members.
    pub shuffle: bool,
    /// Whitespace may hold `\n` (off for line-batched input).
    pub newlines: bool,
}

/// Renders `doc` as JSON text in `style`.
pub fn render(doc: &Doc, style: Style) -> String {
    let mut r = Renderer {
        rng: Pcg32::seed_from_u64(style.seed),
        out: String::new(),
        style,
    };
    r.ws();
    r.doc(doc);
    r.ws();
    r.out
}

struct Renderer {
    rng: Pcg32,
    out: String,
    style: Style,
}

impl Renderer {
    fn pick(&mut self, n: u32) -> u32 {
        self.rng.next_u32() % n
    }

    fn ws(&mut self) {
        let choices: &[&str] = if self.style.newlines {
            &["", "", "", " ", "\n", "\t", "\r\n  "]
        } else {
            &["", "", "", " ", "\t", "\r", "  "]
        };
        let i = self.pick(choices.len() as u32) as usize;
        self.out.push_str(choices[i]);
    }

    fn doc(&mut self, doc: &Doc) {
        match doc {
            Doc::Null => self.out.push_str("null"),
            Doc::Bool(b) => self.out.push_str(if *b { "true" } else { "false" }),
            Doc::Int(s) | Doc::Float(s) => self.out.push_str(s),
            Doc::Str(s) => self.string(s),
            Doc::Arr(items) => {
                self.out.push('[');
                self.ws();
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push(',');
                        self.ws();
                    }
                    self.doc(item);
                    self.ws();
                }
                self.out.push(']');
            }
            Doc::Obj(members) => {
                let mut order: Vec<usize> = (0..members.len()).collect();
                if self.style.shuffle {
                    for i in (1..order.len()).rev() {
                        let j = self.pick(i as u32 + 1) as usize;
                        order.swap(i, j);
                    }
                }
                self.out.push('{');
                self.ws();
                for (n, &i) in order.iter().enumerate() {
                    if n > 0 {
                        self.out.push(',');
                        self.ws();
                    }
                    let (k, v) = &members[i];
                    self.string(k);
                    self.ws();
                    self.out.push(':');
                    self.ws();
                    self.doc(v);
                    self.ws();
                }
                self.out.push('}');
            }
        }
    }

    fn string(&mut self, s: &str) {
        self.out.push('"');
        for c in s.chars() {
            let short = match c {
                '"' => Some("\\\""),
                '\\' => Some("\\\\"),
                '\n' => Some("\\n"),
                '\r' => Some("\\r"),
                '\t' => Some("\\t"),
                '\u{8}' => Some("\\b"),
                '\u{c}' => Some("\\f"),
                '/' if self.pick(2) == 0 => Some("\\/"),
                _ => None,
            };
            let escape = (c as u32) < 0x20 || self.pick(5) == 0;
            match short {
                Some(text) if escape || matches!(c, '"' | '\\' | '/') || self.pick(2) == 0 => {
                    self.out.push_str(text)
                }
                _ if escape => {
                    let mut units = [0u16; 2];
                    for u in c.encode_utf16(&mut units) {
                        if self.pick(2) == 0 {
                            self.out.push_str(&format!("\\u{u:04x}"));
                        } else {
                            self.out.push_str(&format!("\\u{u:04X}"));
                        }
                    }
                }
                _ => self.out.push(c),
            }
        }
        self.out.push('"');
    }
}
