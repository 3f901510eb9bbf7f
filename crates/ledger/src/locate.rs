//! Where in the ledger text each problem sits, so that a report can name line and column.
//!
//! Validation works on values, which carry no positions. After it, only when there are
//! problems, this module walks the text again, just far enough to find each problem's
//! place: the key of the field to blame (the element, for `replays[i]`), else the start of
//! the row, else the start of the document. The text has already parsed, so the walk skips
//! values without checking them; it never indexes past the text and gives up (no position)
//! on anything it does not expect.

use std::ops::Range;

use freezegate_canon::walk::string_end;
pub(crate) use freezegate_canon::walk::{skip_ws, value_end};
use freezegate_canon::{Position, Value, parse};

use crate::check::Problem;

/// Walks the members of the object starting at `pos`, calling `visit` with each key's
/// token (quotes included) and where its value starts, until `visit` returns `Some`: that
/// is `Some(Some(found))`; `Some(None)` when every member was visited; `None` when `pos` is
/// not an object or the walk broke off.
fn each_member<T>(
    text: &[u8],
    pos: usize,
    mut visit: impl FnMut(Range<usize>, usize) -> Option<T>,
) -> Option<Option<T>> {
    if text.get(pos) != Some(&b'{') {
        return None;
    }
    let mut i = skip_ws(text, pos + 1);
    if text.get(i) == Some(&b'}') {
        return Some(None);
    }
    loop {
        let key_end = string_end(text, i)?;
        let colon = skip_ws(text, key_end);
        if text.get(colon) != Some(&b':') {
            return None;
        }
        let value = skip_ws(text, colon + 1);
        if let Some(found) = visit(i..key_end, value) {
            return Some(Some(found));
        }
        let after = skip_ws(text, value_end(text, value)?);
        match *text.get(after)? {
            b',' => i = skip_ws(text, after + 1),
            b'}' => return Some(None),
            _ => return None,
        }
    }
}

/// Where each element of the array starting at `pos` starts. `None` when it is not an
/// array.
fn elements(text: &[u8], pos: usize) -> Option<Vec<usize>> {
    if text.get(pos) != Some(&b'[') {
        return None;
    }
    let mut out = Vec::new();
    let mut i = skip_ws(text, pos + 1);
    if text.get(i) == Some(&b']') {
        return Some(out);
    }
    loop {
        out.push(i);
        let after = skip_ws(text, value_end(text, i)?);
        match *text.get(after)? {
            b',' => i = skip_ws(text, after + 1),
            b']' => return Some(out),
            _ => return None,
        }
    }
}

/// Whether the key token (quotes included) spells `name`, escapes decoded the way the
/// parser decodes them.
fn key_is(text: &[u8], token: &Range<usize>, name: &str) -> bool {
    let Some(raw) = text.get(token.start + 1..token.end.saturating_sub(1)) else {
        return false;
    };
    if !raw.contains(&b'\\') {
        return raw == name.as_bytes();
    }
    matches!(parse(&text[token.clone()]), Ok(Value::String(s)) if s == name)
}

/// The member `name` of the object at `pos`: where its key and its value start. The walk
/// stops at that member.
fn member(text: &[u8], pos: usize, name: &str) -> Option<(usize, usize)> {
    each_member(text, pos, |key, value| {
        key_is(text, &key, name).then_some((key.start, value))
    })
    .flatten()
}

/// The place of `field` (`name` or `name[i]`) in the object at `pos`: the key, or for an
/// index the element. A field of the form `name[i]` is the element `i` of the array `name`
/// when there is one; otherwise (an unknown key that holds brackets itself, `note[x` or
/// `owner[0]`) the key spelled `field`, then the key `name`.
fn field_offset(text: &[u8], pos: usize, field: &str) -> Option<usize> {
    let indexed = field.strip_suffix(']').and_then(|rest| {
        let (name, index) = rest.rsplit_once('[')?;
        Some((name, index.parse::<usize>().ok()?))
    });
    let mut named = None;
    if let Some((name, index)) = indexed
        && let Some((key, value)) = member(text, pos, name)
    {
        if let Some(element) = elements(text, value).and_then(|e| e.get(index).copied()) {
            return Some(element);
        }
        named = Some(key);
    }
    member(text, pos, field).map(|(key, _)| key).or(named)
}

/// Sets `at` on every problem whose place in `text` can be found. `rows` are the offsets
/// where the rows start, when the reader already knows them.
pub(crate) fn locate(text: &[u8], rows: Option<&[usize]>, problems: &mut [Problem]) {
    if problems.is_empty() {
        return;
    }
    let root = skip_ws(text, 0);
    let found;
    let rows = match rows {
        Some(rows) => rows,
        None => {
            found = member(text, root, "rows")
                .and_then(|(_, value)| elements(text, value))
                .unwrap_or_default();
            &found
        }
    };
    let mut anchors: Vec<(usize, usize)> = Vec::with_capacity(problems.len());
    for (i, problem) in problems.iter().enumerate() {
        let offset = match (problem.row, problem.field.as_deref()) {
            (None, None) => Some(root),
            (None, Some(field)) => field_offset(text, root, field).or(Some(root)),
            (Some(row), field) => rows.get(row).map(|&start| {
                field
                    .and_then(|f| field_offset(text, start, f))
                    .unwrap_or(start)
            }),
        };
        if let Some(offset) = offset {
            anchors.push((offset, i));
        }
    }
    anchors.sort_unstable();
    let offsets: Vec<usize> = anchors.iter().map(|&(offset, _)| offset).collect();
    for (&(_, i), position) in anchors.iter().zip(Position::at_sorted(text, &offsets)) {
        problems[i].at = Some(position);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every member of the object at `pos`, or `None` when the walk breaks off.
    fn members(text: &[u8], pos: usize) -> Option<Vec<(Range<usize>, usize)>> {
        let mut all = Vec::new();
        each_member(text, pos, |key, value| {
            all.push((key, value));
            None::<()>
        })
        .map(|_| all)
    }

    #[test]
    fn the_walk_finds_members_and_elements_over_any_spacing() {
        let text = br#" { "a" : [1, "x]", {"b": [2]} ] ,"c\u0064":-1.5e3, "e":{} }"#;
        let m = members(text, 1).unwrap();
        let keys: Vec<&[u8]> = m.iter().map(|(k, _)| &text[k.clone()]).collect();
        assert_eq!(keys, [&br#""a""#[..], br#""c\u0064""#, br#""e""#]);
        assert!(key_is(text, &m[1].0, "cd"));
        assert!(!key_is(text, &m[1].0, "c\\u0064"));
        let items = elements(text, m[0].1).unwrap();
        let starts: Vec<u8> = items.iter().map(|&i| text[i]).collect();
        assert_eq!(starts, b"1\"{");
        assert_eq!(text[m[1].1], b'-');
        assert_eq!(members(text, m[2].1).unwrap(), []);
        assert_eq!(field_offset(text, 1, "a[2]"), Some(items[2]));
        // An index past the end falls back to the key.
        assert_eq!(field_offset(text, 1, "a[9]"), Some(m[0].0.start));
        assert_eq!(field_offset(text, 1, "zz"), None);
        // A key that holds brackets is found by its whole name.
        let odd = br#"{"a": 1, "b[1]": 2}"#;
        assert_eq!(field_offset(odd, 0, "b[1]"), Some(9));
    }

    #[test]
    fn the_walk_gives_up_on_broken_text_without_panicking() {
        for text in [
            &b"{"[..],
            b"{\"a\"",
            b"{\"a\":",
            b"{\"a\": [1,",
            b"{\"a\": \"\\",
            b"[",
            b"",
            b"{\"a\" 1}",
            b"{\"a\": 1 2}",
        ] {
            let shown = String::from_utf8_lossy(text);
            assert_eq!(members(text, 0), None, "{shown}");
            assert_eq!(elements(text, 0), None, "{shown}");
            // The walk stops at the member it looks for, so a key before the break is found.
            let found = field_offset(text, 0, "a[0]");
            assert!(found.is_none_or(|at| text[at] == b'"'), "{shown}");
            assert_eq!(value_end(text, text.len()), None, "{shown}");
        }
    }
}
