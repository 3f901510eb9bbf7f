//! Conversions between [`Value`] and serde types, for Rust properties' input types.
//!
//! They go through JSON text: serde_json writes the type, canon's own parser reads it back
//! (so integers of any size stay exact), and the other way round canon writes compact JSON
//! that serde_json reads into the type. serde_json's `float_roundtrip` feature is on, so a
//! float survives both directions bit for bit.

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::ValueError;
use crate::value::Value;
use crate::write::write_compact;

/// Turns any serializable value into a [`Value`].
///
/// Non-finite floats become `null` (as serde_json writes them); map keys must serialize as
/// strings.
pub fn to_value<T: Serialize + ?Sized>(input: &T) -> Result<Value, ValueError> {
    let text = serde_json::to_vec(input).map_err(|e| ValueError::Serde(e.to_string()))?;
    crate::read::parse(&text).map_err(|e| ValueError::Serde(e.to_string()))
}

/// Reads a [`Value`] into a deserializable type.
///
/// Fails when the value does not have the type's shape, e.g. a candidate the shrinker
/// produced that the property's input type cannot hold.
pub fn from_value<T: DeserializeOwned>(value: &Value) -> Result<T, ValueError> {
    let mut text = Vec::new();
    write_compact(&mut text, value);
    serde_json::from_slice(&text).map_err(|e| ValueError::Serde(e.to_string()))
}
