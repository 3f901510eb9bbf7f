//! `from_value`, the direct serde deserialiser out of `Value`: round trips with `to_value`
//! over types of every serde shape, agreement with serde_json reading the same canonical
//! text, errors that name the JSON pointer of the offending value, and the one limit serde
//! itself sets (128-bit integers inside buffered types).

use std::collections::BTreeMap;

use freezegate_canon::{
    MAX_DEPTH, Value, ValueError, from_value, parse, parse_str, to_canonical_bytes, to_value,
};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Item {
    qty: u8,
    note: Option<String>,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Meters(f64);

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Marker;

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
enum External {
    Unit,
    New(i128),
    Tup(u8, String),
    Fields { a: u128, b: Vec<bool> },
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(tag = "kind")]
enum Internal {
    Unit,
    Fields { a: i64, b: String },
    New(Item),
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(tag = "t", content = "c")]
enum Adjacent {
    Unit,
    New(i32),
    Tup(u8, u8),
    Fields { x: f64 },
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(untagged)]
enum Untagged {
    Num(i64),
    Float(f64),
    Text(String),
    Pair(bool, bool),
    Rec { u: u64 },
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Flat {
    #[serde(flatten)]
    item: Item,
    extra: i32,
}

/// One field of every shape the tests cover.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Record {
    id: u32,
    big: u128,
    neg: i128,
    ratio: f64,
    small: f32,
    c: char,
    flag: bool,
    nothing: (),
    marker: Marker,
    name: String,
    maybe: Option<i64>,
    nested: Option<Vec<u8>>,
    items: Vec<Item>,
    by_name: BTreeMap<String, i8>,
    by_num: BTreeMap<u32, String>,
    by_big: BTreeMap<i128, bool>,
    pair: (u16, Option<bool>, Meters),
    external: Vec<External>,
    internal: Internal,
    adjacent: Adjacent,
    untagged: Vec<Untagged>,
    flat: Flat,
}

fn finite_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        3 => any::<u64>().prop_map(f64::from_bits),
        1 => prop::sample::select(vec![0.0, -0.0, 1e16, 1e-5, 0.1, 5e-324, f64::MAX, 3.0]),
    ]
    .prop_map(|x| if x.is_finite() { x } else { 0.5 })
}

fn finite_f32() -> impl Strategy<Value = f32> {
    prop_oneof![
        3 => any::<u32>().prop_map(f32::from_bits),
        1 => prop::sample::select(vec![0.0f32, -0.0, 0.1, 16777216.0, f32::MAX, 1e-45]),
    ]
    .prop_map(|x| if x.is_finite() { x } else { 0.25 })
}

fn text() -> impl Strategy<Value = String> {
    "[a-z~/\"\\\\\u{0}\u{1f}\u{e9}\u{2028}\u{1F600}]{0,5}"
}

fn item() -> impl Strategy<Value = Item> {
    (any::<u8>(), prop::option::of(text())).prop_map(|(qty, note)| Item { qty, note })
}

fn external() -> impl Strategy<Value = External> {
    prop_oneof![
        Just(External::Unit),
        any::<i128>().prop_map(External::New),
        (any::<u8>(), text()).prop_map(|(a, b)| External::Tup(a, b)),
        (any::<u128>(), prop::collection::vec(any::<bool>(), 0..3))
            .prop_map(|(a, b)| External::Fields { a, b }),
    ]
}

fn internal() -> impl Strategy<Value = Internal> {
    prop_oneof![
        Just(Internal::Unit),
        (any::<i64>(), text()).prop_map(|(a, b)| Internal::Fields { a, b }),
        item().prop_map(Internal::New),
    ]
}

fn adjacent() -> impl Strategy<Value = Adjacent> {
    prop_oneof![
        Just(Adjacent::Unit),
        any::<i32>().prop_map(Adjacent::New),
        (any::<u8>(), any::<u8>()).prop_map(|(a, b)| Adjacent::Tup(a, b)),
        finite_f64().prop_map(|x| Adjacent::Fields { x }),
    ]
}

fn untagged() -> impl Strategy<Value = Untagged> {
    prop_oneof![
        any::<i64>().prop_map(Untagged::Num),
        finite_f64().prop_map(Untagged::Float),
        text().prop_map(Untagged::Text),
        (any::<bool>(), any::<bool>()).prop_map(|(a, b)| Untagged::Pair(a, b)),
        any::<u64>().prop_map(|u| Untagged::Rec { u }),
    ]
}

fn record() -> impl Strategy<Value = Record> {
    let scalars = (
        any::<u32>(),
        any::<u128>(),
        any::<i128>(),
        finite_f64(),
        finite_f32(),
        any::<char>(),
        any::<bool>(),
        text(),
        any::<Option<i64>>(),
        any::<Option<Vec<u8>>>(),
    );
    let containers = (
        prop::collection::vec(item(), 0..4),
        prop::collection::btree_map(text(), any::<i8>(), 0..4),
        prop::collection::btree_map(any::<u32>(), text(), 0..4),
        prop::collection::btree_map(any::<i128>(), any::<bool>(), 0..3),
        (
            any::<u16>(),
            any::<Option<bool>>(),
            finite_f64().prop_map(Meters),
        ),
    );
    let enums = (
        prop::collection::vec(external(), 0..4),
        internal(),
        adjacent(),
        prop::collection::vec(untagged(), 0..4),
        (item(), any::<i32>()).prop_map(|(item, extra)| Flat { item, extra }),
    );
    (scalars, containers, enums).prop_map(
        |(
            (id, big, neg, ratio, small, c, flag, name, maybe, nested),
            (items, by_name, by_num, by_big, pair),
            (external, internal, adjacent, untagged, flat),
        )| Record {
            id,
            big,
            neg,
            ratio,
            small,
            c,
            flag,
            nothing: (),
            marker: Marker,
            name,
            maybe,
            nested,
            items,
            by_name,
            by_num,
            by_big,
            pair,
            external,
            internal,
            adjacent,
            untagged,
            flat,
        },
    )
}

/// `Debug` text tells `0.0` from `-0.0`, which `PartialEq` on floats does not.
fn same<T: std::fmt::Debug>(a: &T, b: &T) -> bool {
    format!("{a:?}") == format!("{b:?}")
}

/// `x` goes to a value and back unchanged; and read from the value's canonical text, canon
/// and serde_json agree (serde_json, without `arbitrary_precision`, reads every type tested
/// here).
fn round_trip<T>(x: &T) -> Result<(), TestCaseError>
where
    T: Serialize + DeserializeOwned + std::fmt::Debug,
{
    let value = to_value(x).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let back: T = from_value(&value).map_err(|e| TestCaseError::fail(format!("{e}")))?;
    prop_assert!(same(&back, x), "{:?} came back as {:?}", x, back);

    let text = to_canonical_bytes(&value).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let canonical = parse(&text).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let by_serde_json = serde_json::from_slice::<T>(&text);
    prop_assert!(by_serde_json.is_ok(), "serde_json: {:?}", by_serde_json);
    if let Ok(by_serde_json) = by_serde_json {
        match from_value::<T>(&canonical) {
            Ok(by_canon) => prop_assert!(
                same(&by_canon, &by_serde_json),
                "canon read {:?}, serde_json {:?}",
                by_canon,
                by_serde_json
            ),
            Err(e) => prop_assert!(
                false,
                "serde_json read {:?}, canon failed: {}",
                by_serde_json,
                e
            ),
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512, failure_persistence: None, ..ProptestConfig::default()
    })]

    #[test]
    fn records_round_trip_and_read_as_serde_json_reads_them(r in record()) {
        round_trip(&r)?;
    }

    #[test]
    fn scalars_round_trip(
        a in any::<u128>(), b in any::<i128>(), x in finite_f32(), y in finite_f64(),
        c in any::<char>(), t in any::<(bool, (), Option<u64>, i8)>(),
    ) {
        round_trip(&a)?;
        round_trip(&b)?;
        round_trip(&x)?;
        round_trip(&y)?;
        round_trip(&c)?;
        round_trip(&t)?;
        round_trip(&(a, vec![b], [x], (y, c)))?;
    }

    #[test]
    fn each_enum_representation_round_trips(
        e in external(), i in internal(), a in adjacent(), u in untagged(),
    ) {
        round_trip(&e)?;
        round_trip(&i)?;
        round_trip(&a)?;
        round_trip(&u)?;
    }

    /// Integers arrive as the type asks when they fit, and as an error naming the type and
    /// the number when they do not; never wrapped or rounded.
    #[test]
    fn integers_fit_or_fail(n in any::<i128>()) {
        let value = Value::Int(n.into());
        let check = |fits: bool, got: Result<String, ValueError>, ty: &str| {
            match got {
                Ok(s) => prop_assert!(fits && s == n.to_string(), "{} as {}: {}", n, ty, s),
                Err(e) => prop_assert!(
                    !fits && e.to_string().ends_with(&format!("expected {ty}, found {n}")),
                    "{} as {}: {}", n, ty, e
                ),
            }
            Ok(())
        };
        check(u8::try_from(n).is_ok(), from_value::<u8>(&value).map(|v| v.to_string()), "u8")?;
        check(i16::try_from(n).is_ok(), from_value::<i16>(&value).map(|v| v.to_string()), "i16")?;
        check(u64::try_from(n).is_ok(), from_value::<u64>(&value).map(|v| v.to_string()), "u64")?;
        check(i64::try_from(n).is_ok(), from_value::<i64>(&value).map(|v| v.to_string()), "i64")?;
        check(u128::try_from(n).is_ok(), from_value::<u128>(&value).map(|v| v.to_string()), "u128")?;
        check(true, from_value::<i128>(&value).map(|v| v.to_string()), "i128")?;
    }
}

fn read<T: DeserializeOwned>(json: &str) -> Result<T, ValueError> {
    from_value(&parse_str(json).unwrap())
}

fn err<T: DeserializeOwned + std::fmt::Debug>(json: &str) -> String {
    read::<T>(json).unwrap_err().to_string()
}

#[derive(Deserialize, Debug)]
#[allow(dead_code)]
struct Order {
    items: Vec<Item>,
    tags: BTreeMap<u32, External>,
}

#[test]
fn errors_name_the_json_pointer_of_the_offending_value() {
    let items = r#"[{"qty": 1}, {"qty": 2}, {"qty": 3}"#;
    assert_eq!(
        err::<Order>(&format!(
            r#"{{"items": {items}, {{"qty": 300}}], "tags": {{}}}}"#
        )),
        r#"serde conversion failed at "/items/3/qty": expected u8, found 300"#
    );
    assert_eq!(
        err::<Order>(&format!(
            r#"{{"items": {items}, {{"qty": "x"}}], "tags": {{}}}}"#
        )),
        r#"serde conversion failed at "/items/3/qty": expected u8, found string "x""#
    );
    assert_eq!(
        err::<Order>(&format!(r#"{{"items": {items}, {{}}], "tags": {{}}}}"#)),
        r#"serde conversion failed at "/items/3": missing field `qty`"#
    );
    assert_eq!(
        err::<Order>(r#"{"items": [], "tags": {"7": {"Tup": [256, "x"]}}}"#),
        r#"serde conversion failed at "/tags/7/Tup/0": expected u8, found 256"#
    );
    assert_eq!(
        err::<Order>(r#"{"items": [], "tags": {"7": {"Nope": 1}}}"#),
        "serde conversion failed at \"/tags/7\": unknown variant `Nope`, expected one of \
         `Unit`, `New`, `Tup`, `Fields`"
    );
    assert_eq!(
        err::<Order>(r#"{"items": [], "tags": {"a/b~": "Unit"}}"#),
        r#"serde conversion failed at "/tags/a~1b~0": expected u32 key, found "a/b~""#
    );
    assert_eq!(
        err::<Order>("7"),
        r#"serde conversion failed at "": expected struct Order, found integer `7`"#
    );
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Wide {
    u: u128,
    i: i128,
    keys: BTreeMap<u128, i128>,
    e: External,
}

#[test]
fn integers_of_128_bits_read_exactly_outside_buffered_types() {
    let wide: Wide = read(
        r#"{"u": 340282366920938463463374607431768211455,
            "i": -170141183460469231731687303715884105728,
            "keys": {"18446744073709551616": -18446744073709551617},
            "e": {"New": 170141183460469231731687303715884105727}}"#,
    )
    .unwrap();
    assert_eq!(
        wide,
        Wide {
            u: u128::MAX,
            i: i128::MIN,
            keys: BTreeMap::from([(1 << 64, -(1 << 64) - 1)]),
            e: External::New(i128::MAX),
        }
    );
    // Small values into 128-bit types, and wider values where no type is asked for: the
    // nearest f64, as serde_json gives them.
    assert_eq!(read::<(u128, i128)>("[5, -5]").unwrap(), (5, -5));
    let kinds: Vec<Offered> = read(
        "[0, 18446744073709551615, -1, -9223372036854775808, 18446744073709551616, \
         -9223372036854775809, 340282366920938463463374607431768211455, \
         -170141183460469231731687303715884105728, 0.5]",
    )
    .unwrap();
    let kinds: Vec<&str> = kinds.iter().map(|k| k.0).collect();
    assert_eq!(
        kinds,
        [
            "u64", "u64", "i64", "i64", "f64", "f64", "f64", "f64", "f64"
        ]
    );
}

/// A property typed `serde_json::Value` reads an integer wider than 64 bits as serde_json
/// reads its text: the nearest float, not an error that would make the input untestable.
#[test]
fn a_wide_integer_reads_into_serde_json_value_as_serde_json_reads_it() {
    for text in [
        "[18446744073709551616, -9223372036854775809]",
        "{\"n\": 1234567890123456789012345, \"m\": -340282366920938463463374607431768211456}",
        "[123456789012345678901234567890123456789012345678901234567890]",
    ] {
        let ours: serde_json::Value = read(text).unwrap();
        let theirs: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(ours, theirs, "{text}");
    }
}

/// The type `deserialize_any` offered a number as.
#[derive(Debug)]
struct Offered(&'static str);

impl<'de> Deserialize<'de> for Offered {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Offered, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Offered;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a number")
            }
            fn visit_u64<E>(self, _: u64) -> Result<Offered, E> {
                Ok(Offered("u64"))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Offered, E> {
                Ok(Offered("i64"))
            }
            fn visit_u128<E>(self, _: u128) -> Result<Offered, E> {
                Ok(Offered("u128"))
            }
            fn visit_i128<E>(self, _: i128) -> Result<Offered, E> {
                Ok(Offered("i128"))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Offered, E> {
                Ok(Offered("f64"))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize, Debug)]
#[serde(tag = "kind")]
#[allow(dead_code)]
enum TaggedWide {
    Small { n: i128 },
}

#[derive(Deserialize, Debug)]
#[allow(dead_code)]
struct FlatWide {
    #[serde(flatten)]
    inner: Wide,
}

/// serde (the version this workspace locks) buffers untagged and internally tagged enums
/// and `flatten` fields in a `Content` that has no 128-bit integers, so a 128-bit field in
/// them fails whatever the deserialiser, even with a small value. The crate docs say so;
/// when serde lifts the limit this test fails, and the docs must change with it.
#[test]
fn serde_cannot_buffer_128_bit_integers() {
    assert_eq!(
        err::<TaggedWide>(r#"{"kind": "Small", "n": 1}"#),
        r#"serde conversion failed at "": i128 is not supported"#
    );
    assert!(serde_json::from_str::<TaggedWide>(r#"{"kind": "Small", "n": 1}"#).is_err());
    assert!(
        err::<FlatWide>(r#"{"u": 1, "i": 2, "keys": {}, "e": "Unit"}"#)
            .ends_with("u128 is not supported")
    );
}

#[test]
fn integers_beyond_128_bits_are_floats_unless_an_integer_is_asked_for() {
    let long = "1234567890123456789012345678901234567890";
    assert_eq!(read::<f64>(long).unwrap(), 1.2345678901234568e39);
    assert_eq!(read::<f32>("16777217").unwrap(), 16777216.0);
    assert_eq!(
        err::<u128>(long),
        format!(r#"serde conversion failed at "": expected u128, found {long}"#)
    );
    assert_eq!(
        read::<serde_json::Value>(&format!("[{long}]")).unwrap(),
        serde_json::json!([1.2345678901234568e39])
    );
    assert_eq!(
        err::<f64>(&format!("1{}", "0".repeat(309))),
        format!(
            r#"serde conversion failed at "": expected f64, found 1{}"#,
            "0".repeat(309)
        )
    );
    // A float is never an integer.
    assert_eq!(
        err::<u8>("1.0"),
        r#"serde conversion failed at "": expected u8, found floating point `1.0`"#
    );
}

#[test]
fn floats_read_back_bit_for_bit() {
    for x in [0.1, -0.0, 5e-324, f64::MAX, 1e16, 0.30000000000000004] {
        let back: f64 = from_value(&to_value(&x).unwrap()).unwrap();
        assert_eq!(back.to_bits(), x.to_bits());
    }
    for x in [0.1f32, -0.0, 1e-45, f32::MAX, 16777216.0, 3.4028233e38] {
        let back: f32 = from_value(&to_value(&x).unwrap()).unwrap();
        assert_eq!(back.to_bits(), x.to_bits());
    }
}

#[test]
fn nesting_is_limited_as_parse_limits_it() {
    let nest = |levels: usize| {
        let mut value = Value::Array(vec![]);
        for _ in 1..levels {
            value = Value::Array(vec![value]);
        }
        value
    };
    assert!(from_value::<serde_json::Value>(&nest(MAX_DEPTH)).is_ok());
    assert_eq!(
        from_value::<serde_json::Value>(&nest(MAX_DEPTH + 1)),
        Err(ValueError::TooDeep(MAX_DEPTH))
    );
    // A hand-built value far deeper than any parse gives is an error, not a stack overflow.
    assert_eq!(
        from_value::<serde_json::Value>(&nest(10_000)),
        Err(ValueError::TooDeep(MAX_DEPTH))
    );
}

/// A float map key, ordered by `total_cmp` so that it can key a `BTreeMap`.
#[derive(Deserialize, Debug, Clone, Copy)]
struct FloatKey<F>(F);

macro_rules! float_key_order {
    ($($f:ty)*) => {$(
        impl PartialEq for FloatKey<$f> {
            fn eq(&self, other: &Self) -> bool {
                self.0.total_cmp(&other.0).is_eq()
            }
        }
        impl Eq for FloatKey<$f> {}
        impl PartialOrd for FloatKey<$f> {
            fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
                Some(self.cmp(other))
            }
        }
        impl Ord for FloatKey<$f> {
            fn cmp(&self, other: &Self) -> std::cmp::Ordering {
                self.0.total_cmp(&other.0)
            }
        }
    )*};
}
float_key_order!(f32 f64);

/// canon and serde_json read the object `{key: 0}` into a map with keys of type `K` alike:
/// the same map, or both an error (canon's naming the key's pointer).
fn key_agrees<K>(key: &str) -> Result<(), TestCaseError>
where
    K: DeserializeOwned + Ord + std::fmt::Debug,
{
    let json = serde_json::to_string(&BTreeMap::from([(key, 0u8)]))
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let by_serde_json = serde_json::from_str::<BTreeMap<K, u8>>(&json);
    let by_canon = read::<BTreeMap<K, u8>>(&json);
    match (&by_canon, &by_serde_json) {
        (Ok(a), Ok(b)) => prop_assert!(same(a, b), "{}: canon {:?}, serde_json {:?}", json, a, b),
        (Err(e), Err(_)) => {
            let pointer = format!("at \"/{}\": ", key.replace('~', "~0").replace('/', "~1"));
            prop_assert!(e.to_string().contains(&pointer), "{}: {}", json, e);
        }
        _ => prop_assert!(
            false,
            "{}: canon {:?}, serde_json {:?}",
            json,
            by_canon,
            by_serde_json
        ),
    }
    Ok(())
}

/// `key_agrees` for every integer and float key type.
fn key_agrees_for_every_type(key: &str) -> Result<(), TestCaseError> {
    key_agrees::<u8>(key)?;
    key_agrees::<i8>(key)?;
    key_agrees::<u32>(key)?;
    key_agrees::<i32>(key)?;
    key_agrees::<u64>(key)?;
    key_agrees::<i64>(key)?;
    key_agrees::<u128>(key)?;
    // serde_json's `i128` keys (alone of its integer keys) take `-0`; canon's do not, so
    // that `"0"` and `"-0"` cannot both stand for the key 0.
    if key != "-0" {
        key_agrees::<i128>(key)?;
    }
    key_agrees::<FloatKey<f32>>(key)?;
    key_agrees::<FloatKey<f64>>(key)?;
    Ok(())
}

/// Key texts near the JSON number grammar: signs, leading zeros, bare points, exponents,
/// spaces and the like, around digits.
fn number_like_key() -> impl Strategy<Value = String> {
    prop_oneof![
        "[-+ ]?[0-9]{0,4}(\\.[0-9]{0,3})?([eE][-+]?[0-9]{0,3})? ?",
        "[-+]?(0|[1-9][0-9]{0,40})",
        any::<i128>().prop_map(|n| n.to_string()),
        any::<u128>().prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|x| x.to_string()),
        any::<f32>().prop_map(|x| format!("{x:e}")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 2048, failure_persistence: None, ..ProptestConfig::default()
    })]

    /// Numeric keys are read as serde_json reads them: only JSON number text, so no two key
    /// texts read as the same integer.
    #[test]
    fn numeric_keys_read_as_serde_json_reads_them(key in number_like_key()) {
        key_agrees_for_every_type(&key)?;
    }

    /// An `f32` is the nearest `f32` of the value's float, or an error naming the pointer
    /// when that is beyond the `f32` range; never an infinity.
    #[test]
    fn f32_is_the_nearest_or_out_of_range(x in finite_f64()) {
        let value = Value::Array(vec![to_value(&x).unwrap()]);
        let near = x as f32;
        match from_value::<Vec<f32>>(&value) {
            Ok(got) => prop_assert!(near.is_finite() && same(&got, &vec![near]), "{} read as {:?}", x, got),
            Err(e) => prop_assert!(
                near.is_infinite() && e.to_string().starts_with("serde conversion failed at \"/0\": expected f32"),
                "{}: {}", x, e
            ),
        }
    }
}

#[test]
fn numeric_keys_that_are_not_json_numbers_are_errors() {
    for key in [
        "1",
        "01",
        "+1",
        "-0",
        "00",
        "-01",
        "0",
        "-1",
        "1.0",
        "1e2",
        ".5",
        "5.",
        "+1.5",
        "1.5",
        "-0.0",
        "1E+2",
        "1e",
        "1e+",
        "1.e2",
        "-",
        "",
        " 1",
        "1 ",
        "0x1",
        "1_0",
        "NaN",
        "inf",
        "infinity",
        "-inf",
        "1e400",
        "1e-400",
        "1e39",
        "3.4028235e38",
        "3.4028236e38",
        "18446744073709551616",
        "-9223372036854775809",
        "340282366920938463463374607431768211456",
    ] {
        key_agrees_for_every_type(key).unwrap_or_else(|e| panic!("{key:?}: {e}"));
    }
    // Texts that `str::parse` takes and JSON does not are errors, not the same key again.
    assert_eq!(
        err::<BTreeMap<u32, u8>>(r#"{"1": 1, "01": 2, "+1": 3}"#),
        r#"serde conversion failed at "/01": expected u32 key, found "01""#
    );
    assert_eq!(
        err::<BTreeMap<i128, u8>>(r#"{"0": 1, "-0": 2}"#),
        r#"serde conversion failed at "/-0": expected i128 key, found "-0""#
    );
    assert_eq!(
        err::<BTreeMap<FloatKey<f64>, u8>>(r#"{".5": 1}"#),
        r#"serde conversion failed at "/.5": expected f64 key, found ".5""#
    );
    assert_eq!(
        read::<BTreeMap<i64, u8>>(r#"{"-9223372036854775808": 1, "0": 2}"#).unwrap(),
        BTreeMap::from([(i64::MIN, 1), (0, 2)])
    );
}

#[test]
fn f32_beyond_its_range_is_an_error_not_infinity() {
    let u128_max = u128::MAX.to_string();
    let ten_to_51 = format!("1{}", "0".repeat(51));
    for (json, found) in [
        ("1e300", "1e+300"),
        ("-1e51", "-1e+51"),
        (u128_max.as_str(), u128_max.as_str()),
        (ten_to_51.as_str(), ten_to_51.as_str()),
    ] {
        assert_eq!(
            err::<Vec<f32>>(&format!("[{json}]")),
            format!(r#"serde conversion failed at "/0": expected f32, found {found}"#),
        );
        assert!(serde_json::from_str::<f32>(json).is_err(), "{json}");
    }
    // The float halfway between f32::MAX and 2^128 rounds to infinity. (serde_json, reading
    // the text straight to f32, takes its decimal for a hair below and gives f32::MAX; canon
    // holds the f64, which is exactly halfway.)
    assert_eq!(
        err::<Vec<f32>>("[3.4028235677973366e38]"),
        r#"serde conversion failed at "/0": expected f32, found 3.4028235677973366e+38"#
    );
    // Just below the rounding threshold an f32 is f32::MAX, as serde_json reads it too.
    for json in [
        "3.4028235e38",
        "3.40282356e38",
        "340282356779733661637539395458142568447",
    ] {
        assert_eq!(read::<f32>(json).unwrap(), f32::MAX, "{json}");
        assert_eq!(
            serde_json::from_str::<f32>(json).unwrap(),
            f32::MAX,
            "{json}"
        );
    }
    assert_eq!(
        read::<f32>("-1e-50").unwrap().to_bits(),
        (-0.0f32).to_bits()
    );
}
