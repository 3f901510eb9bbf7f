//! Walking JSON text that has already parsed, to find where a value sits: for errors that
//! name the line and column of a problem found on the value (which carries no positions).
//!
//! These functions check nothing: on text that is not valid JSON they return some position
//! or `None`, never panic and never index past the text. Parse first, walk only on failure.
//!
//! ```
//! use freezegate_canon::walk::{skip_ws, value_end};
//!
//! let text = br#"{"a": [1, {"b": "]"}], "c": 2}"#;
//! let start = skip_ws(text, 5);
//! assert_eq!(value_end(text, start), Some(21));
//! ```

/// Whether `b` is JSON whitespace.
pub fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// The first byte at or after `pos` that is not JSON whitespace (the end of the text at most).
pub fn skip_ws(text: &[u8], mut pos: usize) -> usize {
    while text.get(pos).copied().is_some_and(is_ws) {
        pos += 1;
    }
    pos
}

/// One past the closing quote of the string whose opening quote is at `pos`; `None` if the
/// text ends first.
pub fn string_end(text: &[u8], pos: usize) -> Option<usize> {
    let mut i = pos + 1;
    loop {
        match *text.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
}

/// One past the end of the value starting at `pos`: for an array or object, where its
/// brackets balance, strings skipped; for a scalar, the next whitespace, `,`, `]` or `}`.
/// `None` when `pos` is past the text or the brackets never balance.
pub fn value_end(text: &[u8], pos: usize) -> Option<usize> {
    match *text.get(pos)? {
        b'"' => string_end(text, pos),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = pos;
            loop {
                match *text.get(i)? {
                    b'"' => {
                        i = string_end(text, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.checked_sub(1)?;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        _ => {
            let len = text[pos..]
                .iter()
                .position(|&b| is_ws(b) || matches!(b, b',' | b']' | b'}'))
                .unwrap_or(text.len() - pos);
            Some(pos + len)
        }
    }
}
