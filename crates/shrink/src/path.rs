//! The shrink path: every accepted step, precise enough to re-apply to the origin.
//!
//! # The JSON form of a step
//!
//! A path is a JSON array of steps; it goes into a fixture meta file as `shrink_path`. Each
//! step is an object with `pass` and `pointer` (RFC 6901, `""` for the whole value) first,
//! then the parameters of its kind, in this order and with nothing else:
//!
//! | `pass` | parameters | the step |
//! |---|---|---|
//! | `delete` | `start`, `count`, `reindex` | remove `count` array elements from index `start`; with `reindex`, every remaining integer element `>= start + count` then falls by `count` |
//! | `delete` | `keep` | keep only array element `keep` |
//! | `delete` | `keys` | remove the object members with these keys |
//! | `replace` | `by` | replace the container by its descendant at the relative pointer `by` |
//! | `string` | `start`, `count` | remove `count` characters (Unicode scalar values) from character `start` |
//! | `string` | `index`, `to` | replace character `index` by `to`, a one-character string |
//! | `integer` | `to` | set the integer to `to` |
//! | `integer` | `to`, `with`, `with_to` | set the integer to `to` and the one at pointer `with` to `with_to`, together |
//! | `float` | `to` | set the float to `to` |
//! | `merge` | `index` | in the array, append element `index + 1`'s elements to element `index` (both arrays) and remove element `index + 1` |
//!
//! Integers are written as JSON integers of any length, floats as JSON floats (Python's
//! `repr`, which reads back to the same `f64`).

use freezegate_canon::{Canonicalization, Float, Int, Value};

use crate::num::Num;

/// The shrinking pass a step belongs to, in the fixed order of SPEC §5.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Pass {
    /// (1) Drop object members or array elements.
    Delete,
    /// (2) Replace a container by one of its descendants.
    Replace,
    /// (3) Shorten a string, then move its characters toward `'0'`.
    String,
    /// (4) Move integers toward zero, one or two together.
    Integer,
    /// (5) Simplify a float toward zero or an integral value.
    Float,
    /// (6) Merge two adjacent sibling arrays.
    Merge,
}

impl Pass {
    /// The name used in the JSON form of a step.
    pub fn as_str(self) -> &'static str {
        match self {
            Pass::Delete => "delete",
            Pass::Replace => "replace",
            Pass::String => "string",
            Pass::Integer => "integer",
            Pass::Float => "float",
            Pass::Merge => "merge",
        }
    }
}

/// The name [`Pass::as_str`] gives.
impl std::fmt::Display for Pass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a step does at its pointer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Params {
    /// Remove `count` array elements from `start`; with `reindex`, every remaining integer
    /// element `>= start + count` falls by `count` (arrays that hold indices into themselves).
    Elements {
        /// First removed index.
        start: usize,
        /// How many elements.
        count: usize,
        /// Whether remaining integer elements past the gap fall by `count`.
        reindex: bool,
    },
    /// Keep only array element `index`: the array becomes a one-element array.
    Keep {
        /// The kept element.
        index: usize,
    },
    /// Remove the object members with these keys.
    Members {
        /// The removed keys, in canonical member order.
        keys: Vec<String>,
    },
    /// Replace the container by its descendant at this relative JSON pointer.
    Descendant {
        /// The descendant, relative to the step's pointer (e.g. `/1/0`).
        by: String,
    },
    /// Remove `count` characters from character `start` of a string.
    Chars {
        /// First removed character (Unicode scalar value) index.
        start: usize,
        /// How many characters.
        count: usize,
    },
    /// Replace character `index` of a string by `to` (a character nearer `'0'`).
    Char {
        /// The replaced character's (Unicode scalar value) index.
        index: usize,
        /// The character put in its place.
        to: char,
    },
    /// Set an integer.
    Int {
        /// The new value.
        to: Int,
    },
    /// Set two integers together.
    Ints {
        /// The new value of the integer at the step's pointer.
        to: Int,
        /// The pointer of the second integer.
        with: String,
        /// Its new value.
        with_to: Int,
    },
    /// Set a float.
    Float {
        /// The new value.
        to: Float,
    },
    /// Merge array element `index + 1` into element `index`.
    Merge {
        /// The first of the two adjacent arrays.
        index: usize,
    },
}

/// One accepted shrinking step: its pass, where it applies, and what it does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// JSON pointer (RFC 6901) of the node the step changes; `""` is the whole value.
    pub pointer: String,
    /// What the step does there.
    pub params: Params,
}

/// A step that cannot be applied to a value, or a step's JSON form that is malformed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PathError {
    /// The pointer names no node of the value.
    #[error("step {index}: no node at pointer {pointer:?}")]
    NoNode {
        /// The step's position in the path.
        index: usize,
        /// The pointer.
        pointer: String,
    },
    /// The node has another kind than the step needs, or a range is out of bounds.
    #[error("step {index}: cannot apply to the node at {pointer:?}: {reason}")]
    Mismatch {
        /// The step's position in the path.
        index: usize,
        /// The pointer.
        pointer: String,
        /// What does not fit.
        reason: String,
    },
    /// The JSON form of a step is malformed.
    #[error("step {index}: {reason}")]
    Malformed {
        /// The step's position in the path.
        index: usize,
        /// What is wrong.
        reason: String,
    },
    /// The value before the first step, or after a step, has no canonical form (a pinned
    /// origin always has one).
    #[error("{}: the value has no canonical form: {reason}", index.map_or_else(|| "the origin".to_owned(), |i| format!("step {i}")))]
    NoCanonicalForm {
        /// The step after which (`None`: the origin itself).
        index: Option<usize>,
        /// Why.
        reason: String,
    },
    /// The step applies but does not make the value smaller (SPEC §5: every accepted step
    /// does).
    #[error("step {index} ({pass} at {pointer:?}): {reason}")]
    NotSmaller {
        /// The step's position in the path.
        index: usize,
        /// The step's pass.
        pass: &'static str,
        /// The pointer.
        pointer: String,
        /// How the value compares after the step.
        reason: String,
    },
}

impl Step {
    /// The pass this step belongs to.
    pub fn pass(&self) -> Pass {
        match self.params {
            Params::Elements { .. } | Params::Keep { .. } | Params::Members { .. } => Pass::Delete,
            Params::Descendant { .. } => Pass::Replace,
            Params::Chars { .. } | Params::Char { .. } => Pass::String,
            Params::Int { .. } | Params::Ints { .. } => Pass::Integer,
            Params::Float { .. } => Pass::Float,
            Params::Merge { .. } => Pass::Merge,
        }
    }

    /// The value after this step; `index` only labels errors.
    pub(crate) fn apply_to(&self, value: &Value, index: usize) -> Result<Value, PathError> {
        let mut out = value.clone();
        let no_node = || PathError::NoNode {
            index,
            pointer: self.pointer.clone(),
        };
        let mismatch = |reason: &str| PathError::Mismatch {
            index,
            pointer: self.pointer.clone(),
            reason: reason.to_owned(),
        };
        if let Params::Ints { with, with_to, .. } = &self.params {
            match out.pointer_mut(with) {
                Some(Value::Int(n)) => *n = with_to.clone(),
                Some(_) => return Err(mismatch("the second node is not an integer")),
                None => {
                    return Err(PathError::NoNode {
                        index,
                        pointer: with.clone(),
                    });
                }
            }
        }
        let node = out.pointer_mut(&self.pointer).ok_or_else(no_node)?;
        match (&self.params, node) {
            (
                Params::Elements {
                    start,
                    count,
                    reindex,
                },
                Value::Array(items),
            ) => {
                let end = start
                    .checked_add(*count)
                    .filter(|&end| end <= items.len() && *count > 0)
                    .ok_or_else(|| mismatch("element range out of bounds"))?;
                items.drain(*start..end);
                if *reindex {
                    let gap_end = Num::from_int(&Int::from(end));
                    let by = Num::from_int(&Int::from(*count));
                    for item in items.iter_mut() {
                        if let Value::Int(n) = item {
                            let v = Num::from_int(n);
                            if !v.sub(&gap_end).is_negative() {
                                *n = v.sub(&by).to_int();
                            }
                        }
                    }
                }
            }
            (Params::Keep { index: at }, Value::Array(items)) => {
                if *at >= items.len() || items.len() < 2 {
                    return Err(mismatch("no such element, or nothing else to remove"));
                }
                let kept = items.swap_remove(*at);
                *items = vec![kept];
            }
            (Params::Members { keys }, Value::Object(members)) => {
                for key in keys {
                    let at = members
                        .iter()
                        .position(|(k, _)| k == key)
                        .ok_or_else(|| mismatch("no such member"))?;
                    members.remove(at);
                }
            }
            (Params::Descendant { by }, node @ (Value::Array(_) | Value::Object(_))) => {
                if by.is_empty() {
                    return Err(mismatch("a container cannot replace itself"));
                }
                let descendant = node
                    .pointer(by)
                    .cloned()
                    .ok_or_else(|| mismatch("no such descendant"))?;
                *node = descendant;
            }
            (Params::Chars { start, count }, Value::String(s)) => {
                let chars: Vec<char> = s.chars().collect();
                let end = start
                    .checked_add(*count)
                    .filter(|&end| end <= chars.len() && *count > 0)
                    .ok_or_else(|| mismatch("character range out of bounds"))?;
                *s = chars[..*start].iter().chain(&chars[end..]).collect();
            }
            (Params::Char { index: at, to }, Value::String(s)) => {
                let (start, old) = s
                    .char_indices()
                    .nth(*at)
                    .ok_or_else(|| mismatch("character index out of bounds"))?;
                s.replace_range(start..start + old.len_utf8(), to.encode_utf8(&mut [0; 4]));
            }
            (Params::Int { to } | Params::Ints { to, .. }, Value::Int(n)) => *n = to.clone(),
            (Params::Float { to }, Value::Float(x)) => *x = *to,
            (Params::Merge { index: at }, Value::Array(items)) => {
                let next = at
                    .checked_add(1)
                    .filter(|&next| next < items.len())
                    .ok_or_else(|| mismatch("no two arrays to merge"))?;
                let tail = match &items[next] {
                    Value::Array(tail) => tail.clone(),
                    _ => return Err(mismatch("element to merge is not an array")),
                };
                match &mut items[*at] {
                    Value::Array(head) => head.extend(tail),
                    _ => return Err(mismatch("element to merge into is not an array")),
                }
                items.remove(next);
            }
            (_, node) => {
                return Err(mismatch(&format!(
                    "a {} step does not apply to a {}",
                    self.pass().as_str(),
                    node.kind()
                )));
            }
        }
        Ok(out)
    }

    /// The JSON form of the step (see the module documentation).
    pub fn to_value(&self) -> Value {
        let mut members = vec![
            ("pass".to_owned(), Value::from(self.pass().as_str())),
            ("pointer".to_owned(), Value::from(self.pointer.as_str())),
        ];
        let int = |n: usize| Value::Int(Int::from(n));
        match &self.params {
            Params::Elements {
                start,
                count,
                reindex,
            } => {
                members.push(("start".to_owned(), int(*start)));
                members.push(("count".to_owned(), int(*count)));
                members.push(("reindex".to_owned(), Value::Bool(*reindex)));
            }
            Params::Keep { index } => members.push(("keep".to_owned(), int(*index))),
            Params::Members { keys } => {
                let keys = keys.iter().map(|k| Value::from(k.as_str())).collect();
                members.push(("keys".to_owned(), Value::Array(keys)));
            }
            Params::Descendant { by } => members.push(("by".to_owned(), Value::from(by.as_str()))),
            Params::Chars { start, count } => {
                members.push(("start".to_owned(), int(*start)));
                members.push(("count".to_owned(), int(*count)));
            }
            Params::Char { index, to } => {
                members.push(("index".to_owned(), int(*index)));
                members.push(("to".to_owned(), Value::String(to.to_string())));
            }
            Params::Int { to } => members.push(("to".to_owned(), Value::Int(to.clone()))),
            Params::Ints { to, with, with_to } => {
                members.push(("to".to_owned(), Value::Int(to.clone())));
                members.push(("with".to_owned(), Value::from(with.as_str())));
                members.push(("with_to".to_owned(), Value::Int(with_to.clone())));
            }
            Params::Float { to } => members.push(("to".to_owned(), Value::Float(*to))),
            Params::Merge { index } => members.push(("index".to_owned(), int(*index))),
        }
        Value::Object(members)
    }

    /// Reads the JSON form of a step; `index` labels errors.
    pub fn from_value(value: &Value, index: usize) -> Result<Step, PathError> {
        let bad = |reason: String| PathError::Malformed { index, reason };
        let Value::Object(members) = value else {
            return Err(bad(format!("a step is an object, not a {}", value.kind())));
        };
        let field = |name: &str| {
            value
                .get(name)
                .ok_or_else(|| bad(format!("missing field {name:?}")))
        };
        let text = |name: &str| match field(name)? {
            Value::String(s) => Ok(s.clone()),
            other => Err(bad(format!(
                "{name:?} must be a string, not a {}",
                other.kind()
            ))),
        };
        let count = |name: &str| match field(name)? {
            Value::Int(n) => n
                .to_u64()
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| bad(format!("{name:?} must be a non-negative index"))),
            other => Err(bad(format!(
                "{name:?} must be an integer, not a {}",
                other.kind()
            ))),
        };
        let integer = |name: &str| match field(name)? {
            Value::Int(n) => Ok(n.clone()),
            other => Err(bad(format!(
                "{name:?} must be an integer, not a {}",
                other.kind()
            ))),
        };
        let pass = text("pass")?;
        let has = |name: &str| value.get(name).is_some();
        let (params, fields): (Params, &[&str]) = match pass.as_str() {
            "delete" if has("keys") => {
                let keys = match field("keys")? {
                    Value::Array(items) => items
                        .iter()
                        .map(|k| match k {
                            Value::String(s) => Ok(s.clone()),
                            _ => Err(bad("\"keys\" must hold strings".to_owned())),
                        })
                        .collect::<Result<Vec<_>, _>>()?,
                    other => {
                        return Err(bad(format!(
                            "\"keys\" must be an array, not a {}",
                            other.kind()
                        )));
                    }
                };
                (Params::Members { keys }, &["keys"])
            }
            "delete" if has("keep") => (
                Params::Keep {
                    index: count("keep")?,
                },
                &["keep"],
            ),
            "delete" => {
                let reindex = match field("reindex")? {
                    Value::Bool(b) => *b,
                    other => {
                        return Err(bad(format!(
                            "\"reindex\" must be a bool, not a {}",
                            other.kind()
                        )));
                    }
                };
                (
                    Params::Elements {
                        start: count("start")?,
                        count: count("count")?,
                        reindex,
                    },
                    &["start", "count", "reindex"],
                )
            }
            "replace" => (Params::Descendant { by: text("by")? }, &["by"]),
            "string" if has("to") => {
                let to = text("to")?;
                let mut chars = to.chars();
                let (Some(to), None) = (chars.next(), chars.next()) else {
                    return Err(bad(format!("\"to\" must be one character, not {to:?}")));
                };
                (
                    Params::Char {
                        index: count("index")?,
                        to,
                    },
                    &["index", "to"],
                )
            }
            "string" => (
                Params::Chars {
                    start: count("start")?,
                    count: count("count")?,
                },
                &["start", "count"],
            ),
            "integer" if has("with") => (
                Params::Ints {
                    to: integer("to")?,
                    with: text("with")?,
                    with_to: integer("with_to")?,
                },
                &["to", "with", "with_to"],
            ),
            "integer" => (Params::Int { to: integer("to")? }, &["to"]),
            "float" => match field("to")? {
                Value::Float(x) => (Params::Float { to: *x }, &["to"]),
                other => {
                    return Err(bad(format!(
                        "\"to\" must be a float, not a {}",
                        other.kind()
                    )));
                }
            },
            "merge" => (
                Params::Merge {
                    index: count("index")?,
                },
                &["index"],
            ),
            other => return Err(bad(format!("unknown pass {other:?}"))),
        };
        if let Some((unknown, _)) = members
            .iter()
            .find(|(k, _)| k != "pass" && k != "pointer" && !fields.contains(&k.as_str()))
        {
            return Err(bad(format!("unknown field {unknown:?} in a {pass} step")));
        }
        Ok(Step {
            pointer: text("pointer")?,
            params,
        })
    }
}

/// The JSON form of a whole path: an array of steps.
pub fn path_to_value(path: &[Step]) -> Value {
    Value::Array(path.iter().map(Step::to_value).collect())
}

/// Reads the JSON form of a whole path.
pub fn path_from_value(value: &Value) -> Result<Vec<Step>, PathError> {
    match value {
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, v)| Step::from_value(v, i))
            .collect(),
        other => Err(PathError::Malformed {
            index: 0,
            reason: format!("a shrink path is an array, not a {}", other.kind()),
        }),
    }
}

/// Re-applies a shrink path to the origin it was recorded on; the result is the shrunk value,
/// member order and all, so its canonical bytes are the fixture's.
pub fn apply_path(origin: &Value, path: &[Step]) -> Result<Value, PathError> {
    path.iter()
        .enumerate()
        .try_fold(origin.clone(), |value, (i, step)| step.apply_to(&value, i))
}

/// [`apply_path`], checking that every step makes the value strictly smaller in the order of
/// SPEC §5 (canonical bytes in `form` shorter, or as long and lower by the tie-break), as the
/// shrinker's own steps do: a path that leads to the fixture through a larger value was not
/// written by the shrinker. The origin must be in canonical form's text (NFC strings), as a
/// pinned origin is.
pub fn apply_path_checked(
    origin: &Value,
    path: &[Step],
    form: Canonicalization,
) -> Result<Value, PathError> {
    let bytes = |value: &Value, index: Option<usize>| {
        freezegate_canon::value_bytes(value, form).map_err(|e| PathError::NoCanonicalForm {
            index,
            reason: e.to_string(),
        })
    };
    let mut value = origin.clone();
    let mut before = bytes(&value, None)?;
    for (i, step) in path.iter().enumerate() {
        let next = step.apply_to(&value, i)?;
        let after = bytes(&next, Some(i))?;
        if !crate::order::smaller(&next, &after, &value, &before, form) {
            return Err(PathError::NotSmaller {
                index: i,
                pass: step.pass().as_str(),
                pointer: step.pointer.clone(),
                reason: format!(
                    "the value after it ({} bytes) is not smaller than before ({} bytes)",
                    after.len(),
                    before.len()
                ),
            });
        }
        value = next;
        before = after;
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use freezegate_canon::{parse_str, to_canonical_bytes, to_pretty_string};

    fn step(pointer: &str, params: Params) -> Step {
        Step {
            pointer: pointer.to_owned(),
            params,
        }
    }

    #[test]
    fn a_checked_path_refuses_a_step_that_does_not_shrink_and_an_origin_without_bytes() {
        let form = Canonicalization::V1;
        let origin = parse_str(r#"{"a":[7,8],"b":3}"#).unwrap();
        let shrink = step(
            "/a",
            Params::Elements {
                start: 1,
                count: 1,
                reindex: false,
            },
        );
        let grow = step("/b", Params::Int { to: Int::from(30) });
        assert_eq!(
            apply_path_checked(&origin, std::slice::from_ref(&shrink), form),
            apply_path(&origin, std::slice::from_ref(&shrink))
        );
        let err = apply_path_checked(&origin, &[shrink.clone(), grow.clone()], form).unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"step 1 (integer at "/b"): the value after it (16 bytes) is not smaller than before (15 bytes)"#
        );
        // The unchecked path takes it.
        assert!(apply_path(&origin, &[shrink, grow]).is_ok());
        // An object with a key twice has no canonical bytes.
        let twice = Value::Object(vec![("k".into(), Value::Null), ("k".into(), Value::Null)]);
        let err = apply_path_checked(&twice, &[], form).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("the origin: the value has no canonical form"),
            "{err}"
        );
    }

    #[test]
    fn every_kind_of_step_applies_and_round_trips_through_json() {
        let origin =
            parse_str(r#"{"a":[5,[1,2],[3],"héllo"],"b":{"c":-7,"d":2.5},"e":[0,3,1,2]}"#).unwrap();
        let path = vec![
            step("/a/3", Params::Chars { start: 1, count: 3 }),
            step("/a", Params::Merge { index: 1 }),
            step("/b/c", Params::Int { to: Int::from(-3) }),
            step(
                "/b/d",
                Params::Float {
                    to: Float::new(2.0).unwrap(),
                },
            ),
            step(
                "/e",
                Params::Elements {
                    start: 0,
                    count: 2,
                    reindex: true,
                },
            ),
            step(
                "/a/0",
                Params::Ints {
                    to: Int::from(4),
                    with: "/b/c".to_owned(),
                    with_to: Int::from(-2),
                },
            ),
            step(
                "/b",
                Params::Members {
                    keys: vec!["d".to_owned()],
                },
            ),
            step("/a", Params::Keep { index: 1 }),
            step(
                "",
                Params::Descendant {
                    by: "/a".to_owned(),
                },
            ),
        ];
        let shrunk = apply_path(&origin, &path).unwrap();
        assert_eq!(to_canonical_bytes(&shrunk).unwrap(), br#"[[1,2,3]]"#);
        let mut partial = apply_path(&origin, &path[..8]).unwrap();
        assert_eq!(
            String::from_utf8(to_canonical_bytes(&partial).unwrap()).unwrap(),
            r#"{"a":[[1,2,3]],"b":{"c":-2},"e":[1,0]}"#
        );
        partial = apply_path(&origin, &path[..5]).unwrap();
        assert_eq!(partial.pointer("/e"), parse_str("[1,0]").ok().as_ref());

        let json = path_to_value(&path);
        assert_eq!(path_from_value(&json).unwrap(), path);
        let rendered = to_pretty_string(&Value::Array(vec![json.pointer("/4").unwrap().clone()]));
        assert_eq!(
            rendered,
            "[\n  {\n    \"pass\": \"delete\",\n    \"pointer\": \"/e\",\n    \"start\": 0,\n    \"count\": 2,\n    \"reindex\": true\n  }\n]\n"
        );
    }

    #[test]
    fn malformed_steps_and_steps_that_do_not_fit_are_errors() {
        let bad = parse_str(r#"[{"pass":"integer","pointer":"/0","to":1,"extra":2}]"#).unwrap();
        assert_eq!(
            path_from_value(&bad).unwrap_err().to_string(),
            "step 0: unknown field \"extra\" in a integer step"
        );
        let bad = parse_str(r#"[{"pass":"shuffle","pointer":""}]"#).unwrap();
        assert!(path_from_value(&bad).is_err());
        let value = parse_str("[1]").unwrap();
        let err = apply_path(&value, &[step("/3", Params::Int { to: Int::from(0) })]).unwrap_err();
        assert_eq!(err.to_string(), "step 0: no node at pointer \"/3\"");
        let err = apply_path(
            &value,
            &[step(
                "",
                Params::Elements {
                    start: 0,
                    count: 2,
                    reindex: false,
                },
            )],
        )
        .unwrap_err();
        assert!(err.to_string().contains("out of bounds"), "{err}");
        let err =
            apply_path(&value, &[step("", Params::Chars { start: 0, count: 1 })]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "step 0: cannot apply to the node at \"\": a string step does not apply to a array"
        );
    }
}
