//! `to_value`, the direct serde serialiser into `Value`: a differential test against the text
//! round trip it replaced (serde_json writes the type, `parse` reads it back), which it must
//! match for every input without NaN or infinities; and the errors for those.

mod docgen;

use std::collections::{BTreeMap, HashMap};

use freezegate_canon::{MAX_DEPTH, Value, ValueError, parse, to_canonical_bytes, to_value};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde::Serialize;
use serde::ser::SerializeMap;

/// The old `to_value`: serde_json text, read back by canon's parser. It writes NaN and
/// infinities as `null`.
fn via_text<T: Serialize + ?Sized>(input: &T) -> Result<Value, ValueError> {
    let text = serde_json::to_vec(input).map_err(|e| ValueError::Serde(e.to_string()))?;
    parse(&text).map_err(|e| ValueError::Serde(e.to_string()))
}

/// Both conversions give the same value (same float bits), or both fail.
fn same<T: Serialize + ?Sized + std::fmt::Debug>(input: &T) -> Result<(), TestCaseError> {
    match (to_value(input), via_text(input)) {
        (Ok(new), Ok(old)) => prop_assert_eq!(new, old, "input {:?}", input),
        (Err(_), Err(_)) => {}
        (new, old) => prop_assert!(false, "input {:?}: new {:?}, old {:?}", input, new, old),
    }
    Ok(())
}

/// Finite floats over the whole range: any bit pattern, NaN and infinities mapped to a few
/// interesting values.
fn finite_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => any::<u64>().prop_map(f64::from_bits),
        2 => any::<f64>(),
        1 => prop::sample::select(vec![
            0.0, -0.0, 1e16, 1e15, 1e-5, 1e-4, 0.1, 5e-324, f64::MAX, 1.5,
        ]),
    ]
    .prop_map(|x| if x.is_finite() { x } else { -0.0 })
}

fn finite_f32() -> impl Strategy<Value = f32> {
    prop_oneof![
        4 => any::<u32>().prop_map(f32::from_bits),
        2 => any::<f32>(),
        1 => prop::sample::select(vec![
            0.0f32, -0.0, 0.1, 1e16, 1e-5, 16777216.0, f32::MAX, f32::MIN_POSITIVE, 1e-45,
        ]),
    ]
    .prop_map(|x| if x.is_finite() { x } else { 0.0 })
}

/// Strings that stress escaping and NFC (`é` precomposed and decomposed, so two keys can be
/// equal only after NFC).
fn text() -> impl Strategy<Value = String> {
    "[ab~/\"\\\\\u{0}-\u{1f}\u{7f}\u{e9}\u{301}e\u{2028}\u{1F600}]{0,4}"
}

fn json() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::Value as J;
    let leaf = prop_oneof![
        Just(J::Null),
        any::<bool>().prop_map(J::Bool),
        any::<i64>().prop_map(J::from),
        any::<u64>().prop_map(J::from),
        finite_f64().prop_map(|x| serde_json::Number::from_f64(x).map_or(J::Null, J::Number)),
        text().prop_map(J::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(J::Array),
            prop::collection::vec((text(), inner), 0..6)
                .prop_map(|members| J::Object(members.into_iter().collect())),
        ]
    })
}

#[derive(Serialize, Debug, Clone)]
struct UnitStruct;

#[derive(Serialize, Debug, Clone)]
struct Newtype(f32);

#[derive(Serialize, Debug, Clone)]
struct TupleStruct(i64, char);

#[derive(Serialize, Debug, Clone)]
enum Shape {
    Unit,
    Newtype(f64),
    Tuple(i128, f32),
    Struct { x: u128, y: Option<String> },
}

/// Bytes that serialize with `serialize_bytes` (a `Vec<u8>` is a sequence instead).
#[derive(Debug, Clone)]
struct Bytes(Vec<u8>);

impl Serialize for Bytes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&self.0)
    }
}

/// A map key of any serde shape.
#[derive(Debug, Clone)]
enum Key {
    Str(String),
    I8(i8),
    I32(i32),
    U64(u64),
    I128(i128),
    U128(u128),
    Char(char),
    Bool(bool),
    F32(f32),
    F64(f64),
    UnitVariant,
    Newtype(String),
    Some(u8),
    // Keys serde_json refuses.
    None,
    Unit,
    Bytes,
    Seq,
    NewtypeVariant,
}

impl Serialize for Key {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Key::Str(k) => s.serialize_str(k),
            Key::I8(n) => s.serialize_i8(*n),
            Key::I32(n) => s.serialize_i32(*n),
            Key::U64(n) => s.serialize_u64(*n),
            Key::I128(n) => s.serialize_i128(*n),
            Key::U128(n) => s.serialize_u128(*n),
            Key::Char(c) => s.serialize_char(*c),
            Key::Bool(b) => s.serialize_bool(*b),
            Key::F32(x) => s.serialize_f32(*x),
            Key::F64(x) => s.serialize_f64(*x),
            Key::UnitVariant => s.serialize_unit_variant("Key", 0, "Variant"),
            Key::Newtype(k) => s.serialize_newtype_struct("Key", k),
            Key::Some(n) => s.serialize_some(n),
            Key::None => s.serialize_none(),
            Key::Unit => s.serialize_unit(),
            Key::Bytes => s.serialize_bytes(b"k"),
            Key::Seq => s.collect_seq([1u8]),
            Key::NewtypeVariant => s.serialize_newtype_variant("Key", 1, "V", &1u8),
        }
    }
}

fn key() -> impl Strategy<Value = Key> {
    prop_oneof![
        8 => text().prop_map(Key::Str),
        2 => any::<i8>().prop_map(Key::I8),
        2 => any::<i32>().prop_map(Key::I32),
        2 => any::<u64>().prop_map(Key::U64),
        2 => any::<i128>().prop_map(Key::I128),
        2 => any::<u128>().prop_map(Key::U128),
        2 => any::<char>().prop_map(Key::Char),
        2 => any::<bool>().prop_map(Key::Bool),
        2 => finite_f32().prop_map(Key::F32),
        2 => finite_f64().prop_map(Key::F64),
        1 => Just(Key::UnitVariant),
        2 => text().prop_map(Key::Newtype),
        1 => (0u8..3).prop_map(Key::Some),
        1 => prop::sample::select(vec![
            Key::None, Key::Unit, Key::Bytes, Key::Seq, Key::NewtypeVariant,
        ]),
    ]
}

/// A map given as pairs, keys of any shape (so duplicates, such as `1` and `"1"`, happen).
#[derive(Debug, Clone)]
struct Pairs(Vec<(Key, i32)>);

impl Serialize for Pairs {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

#[derive(Serialize, Debug, Clone)]
struct Record {
    f: f32,
    d: f64,
    big: i128,
    ubig: u128,
    c: char,
    s: String,
    seq_bytes: Vec<u8>,
    bytes: Bytes,
    opt: Option<i8>,
    unit: (),
    unit_struct: UnitStruct,
    newtype: Newtype,
    tuple_struct: TupleStruct,
    tuple: (u16, f32, Option<f64>),
    shapes: Vec<Shape>,
    by_name: HashMap<String, f64>,
    by_number: BTreeMap<u64, Option<f32>>,
    by_char: BTreeMap<char, bool>,
    by_bool: BTreeMap<bool, i32>,
    by_i32: BTreeMap<i32, Shape>,
    json: serde_json::Value,
}

fn shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        Just(Shape::Unit),
        finite_f64().prop_map(Shape::Newtype),
        (any::<i128>(), finite_f32()).prop_map(|(a, b)| Shape::Tuple(a, b)),
        (any::<u128>(), prop::option::of(text())).prop_map(|(x, y)| Shape::Struct { x, y }),
    ]
}

fn record() -> impl Strategy<Value = Record> {
    let scalars = (
        finite_f32(),
        finite_f64(),
        any::<i128>(),
        any::<u128>(),
        any::<char>(),
        text(),
        prop::collection::vec(any::<u8>(), 0..4),
        prop::collection::vec(any::<u8>(), 0..4).prop_map(Bytes),
        any::<Option<i8>>(),
        finite_f32().prop_map(Newtype),
        (any::<i64>(), any::<char>()).prop_map(|(a, b)| TupleStruct(a, b)),
        (any::<u16>(), finite_f32(), prop::option::of(finite_f64())),
    );
    let compounds = (
        prop::collection::vec(shape(), 0..4),
        prop::collection::hash_map(text(), finite_f64(), 0..4),
        prop::collection::btree_map(any::<u64>(), prop::option::of(finite_f32()), 0..4),
        prop::collection::btree_map(any::<char>(), any::<bool>(), 0..3),
        prop::collection::btree_map(any::<bool>(), any::<i32>(), 0..2),
        prop::collection::btree_map(any::<i32>(), shape(), 0..3),
        json(),
    );
    (scalars, compounds).prop_map(
        |(
            (f, d, big, ubig, c, s, seq_bytes, bytes, opt, newtype, tuple_struct, tuple),
            (shapes, by_name, by_number, by_char, by_bool, by_i32, json),
        )| Record {
            f,
            d,
            big,
            ubig,
            c,
            s,
            seq_bytes,
            bytes,
            opt,
            unit: (),
            unit_struct: UnitStruct,
            newtype,
            tuple_struct,
            tuple,
            shapes,
            by_name,
            by_number,
            by_char,
            by_bool,
            by_i32,
            json,
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512, failure_persistence: None, ..ProptestConfig::default()
    })]

    #[test]
    fn serde_json_values_convert_as_through_text(v in json()) {
        same(&v)?;
        // `to_value` never fails on a serde_json value unless two keys are equal after NFC.
        if let Err(e) = to_value(&v) {
            prop_assert!(matches!(e, ValueError::DuplicateKey { .. }), "{e}");
        }
    }

    #[test]
    fn rust_types_convert_as_through_text(r in record()) {
        same(&r)?;
        same(&(r.f, r.d, r.big, r.ubig, r.c))?;
        same(&Some(r.shapes))?;
    }

    #[test]
    fn map_keys_convert_as_through_text(
        pairs in prop::collection::vec((key(), any::<i32>()), 0..5),
    ) {
        let pairs = Pairs(pairs);
        same(&pairs)?;
        same(&vec![Shape::Unit])?;
        same(&BTreeMap::from([("k", &pairs)]))?;
    }

    #[test]
    fn floats_convert_as_through_text(x in finite_f64(), y in finite_f32()) {
        same(&x)?;
        same(&y)?;
        same(&(vec![x], [y]))?;
    }

    #[test]
    fn canon_values_convert_as_through_text(d in docgen::doc(), seed in any::<u64>()) {
        let text = docgen::render(&d, docgen::Style { seed, shuffle: true, newlines: true });
        let value = parse(text.as_bytes()).unwrap();
        same(&value)?;
        // Within 128-bit integers, a value converts to itself.
        if let Ok(converted) = to_value(&value) {
            prop_assert_eq!(converted, value);
        }
    }
}

#[derive(Serialize, Debug)]
struct Point {
    x: f64,
    y: f32,
}

#[derive(Serialize, Debug)]
enum Tagged {
    New(f64),
    Tup(u8, f32),
    Fields { point: Point },
}

fn non_finite(err: Result<Value, ValueError>) -> (&'static str, String) {
    match err {
        Err(ValueError::NonFiniteAt { float, pointer }) => (float, pointer),
        other => panic!("expected a non-finite error, got {other:?}"),
    }
}

#[test]
fn nan_and_infinities_are_errors_that_name_their_place() {
    for (x, name) in [
        (f64::NAN, "NaN"),
        (f64::INFINITY, "inf"),
        (f64::NEG_INFINITY, "-inf"),
    ] {
        let y = x as f32;
        // The old path silently wrote `null`.
        assert_eq!(via_text(&x), Ok(Value::Null));
        assert_eq!(non_finite(to_value(&x)), (name, String::new()));
        assert_eq!(non_finite(to_value(&y)), (name, String::new()));
        assert_eq!(non_finite(to_value(&Some(x))), (name, String::new()));
        let p = |s: &str| (name, s.to_owned());
        assert_eq!(non_finite(to_value(&Point { x, y: 0.0 })), p("/x"));
        assert_eq!(non_finite(to_value(&Point { x: 0.0, y })), p("/y"));
        assert_eq!(non_finite(to_value(&vec![0.0, 1.0, x])), p("/2"));
        assert_eq!(non_finite(to_value(&[[y]])), p("/0/0"));
        assert_eq!(non_finite(to_value(&(1u8, "a", y))), p("/2"));
        assert_eq!(
            non_finite(to_value(&BTreeMap::from([("a/b~c", vec![x])]))),
            p("/a~1b~0c/0")
        );
        assert_eq!(
            non_finite(to_value(&HashMap::from([(7u64, Point { x: 1.0, y })]))),
            p("/7/y")
        );
        assert_eq!(non_finite(to_value(&Tagged::New(x))), p("/New"));
        assert_eq!(non_finite(to_value(&Tagged::Tup(1, y))), p("/Tup/1"));
        assert_eq!(
            non_finite(to_value(&vec![Tagged::Fields {
                point: Point { x, y: 0.0 }
            }])),
            p("/0/Fields/point/x")
        );
        assert_eq!(
            non_finite(to_value(&BTreeMap::from([("a", vec![1.0, x])]))),
            p("/a/1")
        );
        // A map key: the pointer is the map's.
        let mut pairs = Pairs(vec![(Key::F64(x), 1)]);
        assert_eq!(non_finite(to_value(&vec![&pairs])), p("/0"));
        pairs.0[0].0 = Key::F32(y);
        assert_eq!(non_finite(to_value(&pairs)), p(""));
        assert!(
            via_text(&pairs).is_err(),
            "serde_json refuses them as keys too"
        );
    }
    let err = to_value(&Point {
        x: f64::NAN,
        y: 0.0,
    })
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "non-finite float NaN at \"/x\" (canonical form has no NaN or infinities)"
    );
}

fn canonical(value: &impl Serialize) -> String {
    String::from_utf8(to_canonical_bytes(&to_value(value).unwrap()).unwrap()).unwrap()
}

#[test]
fn floats_keep_their_python_repr() {
    assert_eq!(canonical(&-0.0f64), "-0.0");
    assert_eq!(canonical(&-0.0f32), "-0.0");
    assert_eq!(to_value(&-0.0f64).unwrap(), parse(b"-0.0").unwrap());
    assert_ne!(to_value(&-0.0f64).unwrap(), to_value(&0.0f64).unwrap());
    assert_eq!(canonical(&1e16), "1e+16");
    assert_eq!(canonical(&1e16f32), "1e+16");
    assert_eq!(
        canonical(&[1.0, 1e-5, 1e-4, 100.0]),
        "[1.0,1e-05,0.0001,100.0]"
    );
    // An f32 is the f64 of its shortest text, as serde_json writes it: 0.1, not
    // 0.10000000149011612, and it reads back as the same f32.
    assert_eq!(canonical(&0.1f32), "0.1");
    assert_eq!(canonical(&f64::from(0.1f32)), "0.10000000149011612");
    let back: f32 = freezegate_canon::from_value(&to_value(&0.1f32).unwrap()).unwrap();
    assert_eq!(back.to_bits(), 0.1f32.to_bits());
    assert_eq!(canonical(&f32::MAX), "3.4028235e+38");
}

#[test]
fn integers_keep_every_digit() {
    assert_eq!(
        canonical(&u128::MAX),
        "340282366920938463463374607431768211455"
    );
    assert_eq!(
        canonical(&i128::MIN),
        "-170141183460469231731687303715884105728"
    );
    assert_eq!(canonical(&(-0i8, u64::MAX)), "[0,18446744073709551615]");
    // A canon integer longer than 128 bits: the error of `Int`'s `Serialize`, as before.
    let long = parse(b"340282366920938463463374607431768211456").unwrap();
    assert_eq!(to_value(&long), via_text(&long));
    assert_eq!(
        to_value(&long).unwrap_err().to_string(),
        "serde conversion failed: an integer of 39 digits does not fit serde's 128-bit integers"
    );
}

#[test]
fn shapes_are_serde_jsons() {
    assert_eq!(canonical(&Shape::Unit), r#""Unit""#);
    assert_eq!(canonical(&Shape::Newtype(1.5)), r#"{"Newtype":1.5}"#);
    assert_eq!(canonical(&Shape::Tuple(-1, 0.5)), r#"{"Tuple":[-1,0.5]}"#);
    assert_eq!(
        canonical(&Shape::Struct { x: 1, y: None }),
        r#"{"Struct":{"x":1,"y":null}}"#
    );
    assert_eq!(canonical(&(UnitStruct, (), None::<u8>)), "[null,null,null]");
    assert_eq!(canonical(&Bytes(vec![0, 255])), "[0,255]");
    assert_eq!(canonical(&'é'), "\"é\"");
}

#[test]
fn map_keys_are_stringified_as_serde_json_does() {
    let pairs = Pairs(vec![
        (Key::I32(-7), 1),
        (Key::U64(u64::MAX), 2),
        (Key::I128(i128::MIN), 3),
        (Key::Char('c'), 4),
        (Key::Bool(true), 5),
        (Key::F32(0.5), 6),
        (Key::F64(1e16), 7),
        (Key::F64(1e-7), 7),
        (Key::UnitVariant, 8),
        (Key::Newtype("n".into()), 9),
        (Key::Some(2), 10),
    ]);
    let value = to_value(&pairs).unwrap();
    assert_eq!(Ok(value.clone()), via_text(&pairs));
    let keys: Vec<&str> = match &value {
        Value::Object(members) => members.iter().map(|(k, _)| k.as_str()).collect(),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        keys,
        [
            "-7",
            "18446744073709551615",
            "-170141183460469231731687303715884105728",
            "c",
            "true",
            "0.5",
            "1e+16",
            "1e-7",
            "Variant",
            "n",
            "2"
        ]
    );
    for bad in [
        Key::None,
        Key::Unit,
        Key::Bytes,
        Key::Seq,
        Key::NewtypeVariant,
    ] {
        let pairs = Pairs(vec![(bad, 1)]);
        assert_eq!(
            to_value(&pairs),
            Err(ValueError::Serde("key must be a string".into()))
        );
        assert_eq!(to_value(&pairs), via_text(&pairs));
    }
}

#[test]
fn duplicate_keys_are_errors_as_parse_makes_them() {
    let pairs = Pairs(vec![(Key::I32(1), 1), (Key::Str("1".into()), 2)]);
    assert!(via_text(&pairs).is_err());
    assert_eq!(
        to_value(&vec![pairs]),
        Err(ValueError::DuplicateKey {
            key: "1".into(),
            pointer: "/0".into()
        })
    );
    // Equal only after NFC.
    let nfc = Pairs(vec![
        (Key::Str("\u{e9}".into()), 1),
        (Key::Str("e\u{301}".into()), 2),
    ]);
    assert!(via_text(&nfc).is_err());
    assert!(matches!(
        to_value(&nfc),
        Err(ValueError::DuplicateKey { key, .. }) if key == "\u{e9}"
    ));
}

/// `depth` nested single-element arrays around `leaf`.
struct Nested<T>(usize, T);

impl<T: Serialize> Serialize for Nested<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Level(self.0, &self.1).serialize(s)
    }
}

/// One level of [`Nested`] (one type for every level).
struct Level<'a, T>(usize, &'a T);

impl<T: Serialize> Serialize for Level<'_, T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0 == 0 {
            self.1.serialize(s)
        } else {
            s.collect_seq([Level(self.0 - 1, self.1)])
        }
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Nested<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Nested({}, {:?})", self.0, self.1)
    }
}

#[test]
fn nesting_is_limited_as_parse_limits_it() {
    let check = |r: Result<(), TestCaseError>| r.unwrap();
    for depth in [MAX_DEPTH - 2, MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1] {
        check(same(&Nested(depth, 1u8)));
        check(same(&Nested(depth, Shape::Unit)));
        check(same(&Nested(depth, Shape::Newtype(1.0))));
        check(same(&Nested(depth, Shape::Tuple(1, 2.0))));
        check(same(&Nested(depth, Shape::Struct { x: 1, y: None })));
        check(same(&Nested(depth, Bytes(vec![1]))));
        check(same(&Nested(depth, BTreeMap::from([("k", 1)]))));
        check(same(&Nested(depth, Vec::<u8>::new())));
    }
    assert_eq!(
        to_value(&Nested(MAX_DEPTH + 1, 0u8)),
        Err(ValueError::TooDeep(MAX_DEPTH))
    );
}

/// A `Serialize` that breaks the map protocol: serde_json writes invalid JSON for it, which
/// `parse` refused; the serialiser refuses it too.
struct BrokenMap(u8);

impl Serialize for BrokenMap {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        match self.0 {
            0 => map.serialize_key("k")?,
            1 => map.serialize_value(&1)?,
            _ => {
                map.serialize_key("a")?;
                map.serialize_key("b")?;
                map.serialize_value(&1)?;
            }
        }
        map.end()
    }
}

#[test]
fn a_broken_map_protocol_is_an_error_both_ways() {
    for n in 0..3 {
        assert!(to_value(&BrokenMap(n)).is_err());
        assert!(via_text(&BrokenMap(n)).is_err());
    }
}

/// What the gate does with a Rust property's proptest input: `to_value` of a strategy's
/// draw. A strategy that can draw NaN now fails with the cause instead of pinning `null`.
#[test]
fn a_proptest_strategy_drawing_nan_gives_a_clear_error() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let strategy = prop::collection::vec(prop::num::f64::ANY, 3);
    let mut runner = TestRunner::deterministic();
    let mut saw_error = false;
    for _ in 0..256 {
        let input = strategy.new_tree(&mut runner).unwrap().current();
        match to_value(&input) {
            Ok(value) => assert!(input.iter().all(|x| x.is_finite()), "{value}"),
            Err(e) => {
                let at = input.iter().position(|x| !x.is_finite()).unwrap();
                let message = e.to_string();
                assert!(message.starts_with("non-finite float "), "{message}");
                assert!(message.contains(&format!("at \"/{at}\"")), "{message}");
                saw_error = true;
            }
        }
    }
    assert!(saw_error, "proptest's f64::ANY draws NaN and infinities");
}

#[test]
fn the_serializer_is_human_readable_like_serde_jsons() {
    // Types that serialize differently for human-readable formats (addresses, for one).
    let addr: std::net::SocketAddr = "127.0.0.1:8080".parse().unwrap();
    assert_eq!(canonical(&addr), "\"127.0.0.1:8080\"");
    assert_eq!(to_value(&addr), via_text(&addr));
}

/// serde_json's raw JSON text (its `raw_value` feature, on for these tests) becomes the value
/// that text holds, as serde_json writes it.
#[test]
fn serde_json_raw_text_is_read_as_json() {
    let raw =
        serde_json::value::RawValue::from_string(r#"[1, 2.50, {"a": null}]"#.to_owned()).unwrap();
    assert_eq!(
        to_value(&BTreeMap::from([("raw", &raw)])).unwrap(),
        parse(br#"{"raw": [1, 2.5, {"a": null}]}"#).unwrap()
    );
}

/// The `serde` that `to_value` takes is the crate's re-export: a bound written with it is the
/// one `to_value` asks for.
#[test]
fn the_serde_reexport_is_the_one_to_value_takes() {
    fn through<T: freezegate_canon::serde::Serialize>(value: &T) -> String {
        freezegate_canon::to_value(value)
            .map(|v| freezegate_canon::to_pretty_string(&v))
            .unwrap_or_default()
    }
    assert_eq!(through(&[1u8, 2]), "[\n  1,\n  2\n]\n");
}
