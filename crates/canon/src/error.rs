//! Errors of canonical form v1.

use std::path::PathBuf;

/// Why a JSON text has no canonical form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// The input is not UTF-8.
    #[error("invalid UTF-8")]
    InvalidUtf8,
    /// The input starts with a UTF-8 byte-order mark.
    #[error("a byte-order mark is not allowed (canonical input is UTF-8 without BOM)")]
    ByteOrderMark,
    /// The input looks like UTF-16 or UTF-32.
    #[error("UTF-16 or UTF-32 input is not allowed (canonical input is UTF-8)")]
    Utf16,
    /// The input ended inside a value, or holds no value.
    #[error("unexpected end of input")]
    UnexpectedEnd,
    /// A character that cannot start or continue the JSON value here.
    #[error("unexpected character {0:?}")]
    UnexpectedChar(char),
    /// A value was complete but more than whitespace followed it.
    #[error("trailing data after the JSON value")]
    TrailingData,
    /// A key occurs twice in one object.
    #[error("duplicate key {0:?}")]
    DuplicateKey(String),
    /// Two keys of one object are equal after NFC normalisation.
    #[error("duplicate key {0:?} after NFC normalisation")]
    DuplicateKeyAfterNfc(String),
    /// `NaN`, `Infinity` or `-Infinity`.
    #[error("{0} is not allowed (canonical form has no non-finite numbers)")]
    NonFinite(&'static str),
    /// A float literal too large for a 64-bit float.
    #[error("float literal overflows to infinity")]
    FloatOverflow,
    /// A malformed number.
    #[error("invalid number")]
    InvalidNumber,
    /// A `\uD800`-`\uDFFF` escape that is not half of a surrogate pair.
    #[error("lone surrogate escape \\u{0:04x}")]
    LoneSurrogate(u16),
    /// An unknown backslash escape or a malformed `\u` escape.
    #[error("invalid escape sequence")]
    InvalidEscape,
    /// A raw control character (U+0000-U+001F) inside a string.
    #[error("raw control character U+{0:04X} in string (it must be escaped)")]
    ControlCharacter(u32),
    /// More nested arrays and objects than the limit.
    #[error("nesting deeper than {0} arrays/objects")]
    TooDeep(usize),
}

/// A JSON text that has no canonical form, with the place of the problem.
///
/// `line` and `column` are 1-based; the column counts characters (code points), as editors do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {kind}")]
pub struct ParseError {
    /// What is wrong.
    pub kind: ParseErrorKind,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// 0-based byte offset.
    pub offset: usize,
}

impl ParseError {
    pub(crate) fn at(input: &[u8], offset: usize, kind: ParseErrorKind) -> ParseError {
        let offset = offset.min(input.len());
        let Position { line, column } = Position::at(input, offset);
        ParseError {
            kind,
            line,
            column,
            offset,
        }
    }
}

/// A place in a text as an editor shows it: 1-based line, and 1-based column counted in
/// characters (code points), the way [`ParseError`] reports it. Other crates use it to point
/// at a place in a JSON file that parsed but breaks their own rules.
///
/// ```
/// use freezegate_canon::Position;
///
/// let text = "{\n  \"naïve\": 1,\n  \"b\": 2}".as_bytes();
/// let one = text.iter().position(|&c| c == b'1').unwrap();
/// // `ï` is two bytes but one character.
/// assert_eq!(Position::at(text, one), Position { line: 2, column: 12 });
/// let b = text.windows(3).position(|w| w == b"\"b\"").unwrap();
/// assert_eq!(Position::at_sorted(text, &[one, b])[1], Position { line: 3, column: 3 });
/// assert_eq!(Position::at(text, 0).to_string(), "line 1, column 1");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Position {
    /// 1-based line: one more than the `\n` bytes before the place.
    pub line: usize,
    /// 1-based column, in characters since the line's start.
    pub column: usize,
}

impl Position {
    /// The position of byte `offset` of `text` (an offset past the end counts as the end).
    /// Bytes that are not valid UTF-8 count one character per byte that could start one.
    pub fn at(text: &[u8], offset: usize) -> Position {
        let before = &text[..offset.min(text.len())];
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let line = 1 + newlines(before);
        Position {
            line,
            column: 1 + columns(&before[line_start..]),
        }
    }

    /// The positions of many offsets in one pass over `text`: `offsets` must be sorted
    /// ascending (unsorted input gives wrong lines, never a panic).
    pub fn at_sorted(text: &[u8], offsets: &[usize]) -> Vec<Position> {
        let mut out = Vec::with_capacity(offsets.len());
        let (mut scanned, mut line, mut line_start) = (0usize, 1usize, 0usize);
        for &offset in offsets {
            let offset = offset.min(text.len()).max(scanned);
            let gap = &text[scanned..offset];
            line += newlines(gap);
            if let Some(i) = gap.iter().rposition(|&b| b == b'\n') {
                line_start = scanned + i + 1;
            }
            scanned = offset;
            out.push(Position {
                line,
                column: 1 + columns(&text[line_start..offset]),
            });
        }
        out
    }
}

/// The `\n` bytes in `bytes`. Counting 32 bytes at a time into a byte-sized sum lets the
/// compiler use vector instructions: several times faster than one count per byte, which
/// matters when a report places problems all over a large file.
fn newlines(bytes: &[u8]) -> usize {
    let chunks = bytes.chunks_exact(32);
    let tail = chunks.remainder();
    let counted: usize = chunks
        .map(|c| usize::from(c.iter().map(|&b| u8::from(b == b'\n')).sum::<u8>()))
        .sum();
    counted + tail.iter().filter(|&&b| b == b'\n').count()
}

/// Characters in a line's bytes: UTF-8 continuation bytes do not start a character.
fn columns(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| (b & 0xC0) != 0x80).count()
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// A [`crate::Value`] that has no canonical form, or an invalid scalar.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ValueError {
    /// An object holds the same key twice (after NFC, for canonical bytes).
    #[error("duplicate key {key:?} in the object at {pointer:?}")]
    DuplicateKey {
        /// The repeated key (NFC).
        key: String,
        /// JSON pointer of the object.
        pointer: String,
    },
    /// A float that is NaN or infinite.
    #[error("NaN and infinities have no canonical form")]
    NonFinite,
    /// A NaN or infinite `f32`/`f64` in a serde value ([`crate::to_value`]), where serde_json
    /// would have written `null`.
    #[error("non-finite float {float} at {pointer:?} (canonical form has no NaN or infinities)")]
    NonFiniteAt {
        /// `NaN`, `inf` or `-inf`.
        float: &'static str,
        /// JSON pointer of the place in the value where the float sat (`""`: the whole
        /// value); for a map key, the pointer of the map.
        pointer: String,
    },
    /// Text that is not a decimal integer.
    #[error("{0:?} is not a decimal integer")]
    InvalidInteger(String),
    /// More nested arrays and objects than the limit.
    #[error("nesting deeper than {0} arrays/objects")]
    TooDeep(usize),
    /// A serde type could not be turned into a value ([`crate::to_value`]), or serde failed
    /// with a message of its own.
    #[error("serde conversion failed: {0}")]
    Serde(String),
    /// A value does not have the shape of the type [`crate::from_value`] reads it into.
    #[error("serde conversion failed at {pointer:?}: {message}")]
    Deserialize {
        /// JSON pointer of the offending value (`""`: the whole value).
        pointer: String,
        /// What is wrong with it, e.g. `expected u8, found 300`.
        message: String,
    },
}

impl ValueError {
    /// The error with one more reference token in front of its JSON pointer (for the
    /// variants that carry one), as it unwinds out of an array or object: so the success path
    /// never builds a pointer.
    pub(crate) fn within(self, token: &str) -> ValueError {
        let prefix =
            |pointer: String| format!("/{}{pointer}", crate::value::escape_pointer_token(token));
        match self {
            ValueError::DuplicateKey { key, pointer } => ValueError::DuplicateKey {
                key,
                pointer: prefix(pointer),
            },
            ValueError::NonFiniteAt { float, pointer } => ValueError::NonFiniteAt {
                float,
                pointer: prefix(pointer),
            },
            ValueError::Deserialize { pointer, message } => ValueError::Deserialize {
                pointer: prefix(pointer),
                message,
            },
            other => other,
        }
    }
}

/// A text that is not a UTC time `YYYY-MM-DDTHH:MM:SSZ` on the calendar
/// ([`check_utc_timestamp`](crate::fixture::check_utc_timestamp)).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TimestampError {
    /// The text does not have the form `YYYY-MM-DDTHH:MM:SSZ` (ASCII digits, `T`, `Z`).
    #[error("{0:?} is not a UTC time of the form YYYY-MM-DDTHH:MM:SSZ")]
    Form(String),
    /// The form is right but no such time exists (month 13, 31 April, 29 February of a
    /// common year, hour 24, a leap second).
    #[error("{0:?} is not a valid date and time")]
    NotOnCalendar(String),
}

/// A fixture meta file that does not have the shape of SPEC §3.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MetaError {
    /// The document is not a JSON object.
    #[error("a fixture meta file must be a JSON object, not {0}")]
    NotAnObject(&'static str),
    /// A field of SPEC §3 is absent.
    #[error("missing field {0:?}")]
    MissingField(&'static str),
    /// A field SPEC §3 does not name.
    #[error("unknown field {0:?}")]
    UnknownField(String),
    /// A field holds a value of the wrong type or an invalid value.
    #[error("field {field:?}: {problem}")]
    InvalidField {
        /// The field's name.
        field: &'static str,
        /// What is wrong with its value.
        problem: String,
    },
    /// The file holds a valid meta but not in its rendered layout (key order, indent, line
    /// ends, trailing newline): an excerpt of each from where they first differ, escaped so
    /// that it stays on one line (`\r`, `\n`).
    #[error(
        "not in the rendered layout (fixed key order, two-space indent, LF line ends, trailing newline): found `{found}` where the layout has `{expected}`"
    )]
    Layout {
        /// The file's text from the first difference.
        found: String,
        /// The rendered text from there.
        expected: String,
    },
}

/// Any error of this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// JSON text without a canonical form.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// A value without a canonical form.
    #[error(transparent)]
    Value(#[from] ValueError),
    /// A fixture meta value without the shape of SPEC §3.
    #[error(transparent)]
    Meta(#[from] MetaError),
    /// A fixture meta file's text that parses as JSON but breaks SPEC §3, with the place of
    /// the offending value (a wrong or invalid value), key (an unknown field) or object (a
    /// missing field).
    #[error("{at}: {error}")]
    MetaAt {
        /// Where in the text.
        at: Position,
        /// What is wrong.
        error: MetaError,
    },
    /// A malformed digest, fixture id, property id or canonicalization name.
    #[error("{0}")]
    Name(String),
    /// JSON text in a file has no canonical form (or is not the expected document).
    #[error("{}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        #[source]
        source: Box<Error>,
    },
    /// Reading or writing a file failed.
    #[error("{}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A fixture folder breaks an integrity rule of SPEC §3.
    #[error("{}: {problem}", path.display())]
    Integrity {
        /// The offending file.
        path: PathBuf,
        /// Which rule it breaks.
        problem: String,
    },
    /// A fixture or origin file whose text parses but is not its canonical bytes (SPEC §3):
    /// where they first differ, with the line and column in the file.
    #[error("{}: its bytes are not canonical ({form}): {difference}", path.display())]
    NotCanonical {
        /// The offending file.
        path: PathBuf,
        /// The form its bytes should be in.
        form: crate::Canonicalization,
        /// Where the file first differs from its canonical bytes (boxed: it holds two
        /// excerpts, and every `Result` of the crate carries this enum).
        difference: Box<crate::fixture::Difference>,
    },
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn in_file(path: impl Into<PathBuf>, source: impl Into<Error>) -> Error {
        Error::File {
            path: path.into(),
            source: Box::new(source.into()),
        }
    }
}

/// An error with all its causes on one line, `error: cause: cause of the cause`: the way to
/// print an error of any freezegate crate for a person.
///
/// Every error of these crates follows one convention: its message does not repeat its
/// cause, which [`std::error::Error::source`] gives instead. So `{error}` alone prints only
/// the outermost message (`freeze/ledger.json: the ledger is not valid JSON`) and drops the
/// line and column of the cause; `ErrorChain(&error)` prints the whole chain, each message
/// joined to the next by `": "`, as freezegate's own xtask does. For a `Box<dyn Error>` or an
/// `anyhow::Error`, pass `&*error`.
///
/// # Example
///
/// ```
/// use freezegate_canon::{Error, ErrorChain, parse};
///
/// let cause = parse(b"{\n  \"rows\": [").unwrap_err();
/// let error = Error::File { path: "freeze/ledger.json".into(), source: Box::new(cause.into()) };
/// // The message names the file; its cause holds the line and column.
/// assert_eq!(error.to_string(), "freeze/ledger.json");
/// assert_eq!(
///     ErrorChain(&error).to_string(),
///     "freeze/ledger.json: line 2, column 12: unexpected end of input"
/// );
///
/// // In a binary's `main`:
/// # fn run() -> Result<(), Box<dyn std::error::Error>> { Ok(()) }
/// if let Err(error) = run() {
///     eprintln!("error: {}", ErrorChain(&*error));
/// }
/// ```
#[derive(Clone, Copy)]
pub struct ErrorChain<'a>(pub &'a (dyn std::error::Error + 'a));

impl std::fmt::Display for ErrorChain<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)?;
        let mut cause = self.0.source();
        while let Some(error) = cause {
            write!(f, ": {error}")?;
            cause = error.source();
        }
        Ok(())
    }
}

impl std::fmt::Debug for ErrorChain<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.0, f)
    }
}
