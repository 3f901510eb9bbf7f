//! Reading the rows of a ledger text one at a time, so that a large ledger never exists as
//! one JSON tree in memory.
//!
//! The fast path accepts only the plain envelope `{"schema": "freezegate-ledger-v1",
//! "rows": [{...}, ...]}` (keys in either order, JSON whitespace between tokens) and hands
//! each row's bytes to canon's parser. Anything else — a syntax error anywhere, another
//! schema, extra or repeated envelope keys, a row that is not an object, nesting near the
//! limit — falls back to parsing the whole text with canon's parser, so both paths accept,
//! reject and report exactly the same documents.

use std::ops::Range;

use freezegate_canon::{MAX_DEPTH, ParseError, Value, parse};

use crate::check::{Problem, RawRow, map_row, map_value, row_sink};
use crate::locate::{skip_ws, value_end};
use crate::row::SCHEMA;

struct Cursor<'a> {
    text: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn skip_ws(&mut self) {
        self.pos = skip_ws(self.text, self.pos);
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        self.skip_ws();
        (self.text.get(self.pos) == Some(&byte)).then(|| self.pos += 1)
    }

    /// A string without escapes, returned raw.
    fn plain_string(&mut self) -> Option<&'a [u8]> {
        self.eat(b'"')?;
        let start = self.pos;
        let len = self.text[start..]
            .iter()
            .position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
        if self.text[start + len] != b'"' {
            return None;
        }
        self.pos = start + len + 1;
        Some(&self.text[start..start + len])
    }

    /// The span of one object value: brackets balanced, strings skipped. Syntax inside is
    /// left to the parser.
    fn object_span(&mut self) -> Option<Range<usize>> {
        self.skip_ws();
        let start = self.pos;
        if self.text.get(start) != Some(&b'{') {
            return None;
        }
        let end = value_end(self.text, start)?;
        self.pos = end;
        Some(start..end)
    }
}

/// The row spans of a plain envelope, or `None` when the text is anything else.
fn row_spans(text: &[u8]) -> Option<Vec<Range<usize>>> {
    let mut c = Cursor { text, pos: 0 };
    c.eat(b'{')?;
    let (mut schema, mut rows) = (false, None);
    for i in 0..2 {
        if i > 0 {
            c.eat(b',')?;
        }
        let key = c.plain_string()?;
        c.eat(b':')?;
        match key {
            b"schema" if !schema => {
                if c.plain_string()? != SCHEMA.as_bytes() {
                    return None;
                }
                schema = true;
            }
            b"rows" if rows.is_none() => {
                c.eat(b'[')?;
                let mut spans = Vec::new();
                c.skip_ws();
                if c.eat(b']').is_none() {
                    loop {
                        spans.push(c.object_span()?);
                        if c.eat(b']').is_some() {
                            break;
                        }
                        c.eat(b',')?;
                    }
                }
                rows = Some(spans);
            }
            _ => return None,
        }
    }
    c.eat(b'}')?;
    c.skip_ws();
    (c.pos == text.len()).then_some(())?;
    rows
}

fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(members) => 1 + members.iter().map(|(_, v)| depth(v)).max().unwrap_or(0),
        _ => 0,
    }
}

/// The rows of a ledger text, as far as they could be read.
pub(crate) struct Rows {
    /// The rows, in file order.
    pub raws: Vec<RawRow>,
    /// Where each row starts in the text, when the fast path found out.
    pub starts: Option<Vec<usize>>,
}

/// Stage one and the schema half of stage two: the rows of `text` as far as they can be
/// read, with every envelope and schema problem, or the first syntax error.
pub(crate) fn read_rows(text: &[u8], problems: &mut Vec<Problem>) -> Result<Rows, ParseError> {
    if let Some(spans) = row_spans(text) {
        let starts: Vec<usize> = spans.iter().map(|span| span.start).collect();
        let mut rows = Vec::with_capacity(spans.len());
        let mut row_problems = Vec::new();
        let mut fast = true;
        for (index, span) in spans.into_iter().enumerate() {
            // The row sits two levels deep in the document.
            match parse(&text[span]) {
                Ok(value) if depth(&value) + 2 <= MAX_DEPTH => {
                    rows.push(map_row(index, value, &mut row_sink(&mut row_problems)));
                }
                _ => {
                    fast = false;
                    break;
                }
            }
        }
        if fast {
            problems.append(&mut row_problems);
            return Ok(Rows {
                raws: rows,
                starts: Some(starts),
            });
        }
    }
    Ok(Rows {
        raws: map_value(parse(text)?, problems),
        starts: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested_row(levels: usize) -> String {
        format!(
            "{{\"schema\": \"freezegate-ledger-v1\", \"rows\": [{{\"x\": {}{}}}]}}",
            "[".repeat(levels),
            "]".repeat(levels)
        )
    }

    #[test]
    fn nesting_counts_from_the_document_root() {
        // envelope, rows array, row object: 3 levels before the member's arrays.
        let ok = nested_row(MAX_DEPTH - 3);
        let mut problems = Vec::new();
        assert!(read_rows(ok.as_bytes(), &mut problems).is_ok());
        let deep = nested_row(MAX_DEPTH - 2);
        let streamed = read_rows(deep.as_bytes(), &mut problems).err();
        assert_eq!(streamed, parse(deep.as_bytes()).err());
        assert!(streamed.is_some());
    }

    #[test]
    fn only_the_plain_envelope_takes_the_fast_path() {
        assert!(
            row_spans(
                b" {\"rows\": [ {}, {\"a\": \"}\"} ], \"schema\": \"freezegate-ledger-v1\"}\n"
            )
            .is_some()
        );
        for other in [
            &b"{\"schema\": \"freezegate-ledger-v2\", \"rows\": []}"[..],
            b"{\"schema\": \"freezegate-ledger-v1\", \"rows\": [], \"x\": 1}",
            b"{\"schema\": \"freezegate-ledger-v1\", \"schema\": \"freezegate-ledger-v1\"}",
            b"{\"schema\": \"freezegate-ledger-v1\", \"rows\": [1]}",
            b"{\"schema\": \"freezegate-ledger-v1\", \"rows\": []} x",
            b"\xef\xbb\xbf{\"schema\": \"freezegate-ledger-v1\", \"rows\": []}",
        ] {
            assert!(
                row_spans(other).is_none(),
                "{}",
                String::from_utf8_lossy(other)
            );
        }
    }
}
