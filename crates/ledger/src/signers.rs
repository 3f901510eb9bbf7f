//! The principals of an ssh `allowed_signers` file (`freeze/allowed_signers`).
//!
//! Each non-empty line that is not a `#` comment reads
//! `principals [options] keytype base64-key [comment]`, where `principals` is a
//! comma-separated list (optionally in double quotes). A ledger `owner` must equal exactly one
//! principal; patterns with `*`, `?` or a leading `!` match nobody here, since an owner is
//! one named human.
//!
//! Options do not change who is a principal: a literal principal of a `cert-authority` line
//! signs with a certificate that CA issued (git accepts it), and `valid-after`/`valid-before`
//! are judged against the signature's date, which the committer chooses; an owner is retired by
//! removing their line, not by a date.

use crate::error::Error;

/// The literal principals of an `allowed_signers` file, in file order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowedSigners {
    principals: Vec<String>,
}

/// Splits a line into whitespace-separated tokens; double quotes group spaces. An
/// unterminated quote is an error at the quote's character index.
fn tokens(line: &str) -> Result<Vec<String>, usize> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut in_token = false;
    let mut quoted = None;
    for (at, c) in line.chars().enumerate() {
        match c {
            '"' => {
                quoted = match quoted {
                    Some(_) => None,
                    None => Some(at),
                };
                in_token = true;
                current.push(c);
            }
            c if c.is_whitespace() && quoted.is_none() => {
                if in_token {
                    out.push(std::mem::take(&mut current));
                    in_token = false;
                }
            }
            c => {
                in_token = true;
                current.push(c);
            }
        }
    }
    if let Some(at) = quoted {
        return Err(at);
    }
    if in_token {
        out.push(current);
    }
    Ok(out)
}

impl AllowedSigners {
    /// Parses the text of an `allowed_signers` file. Errors name the 1-based line and
    /// column (characters) of the broken entry, or of its unterminated quote.
    ///
    /// A byte order mark at the start is an error at line 1, column 1: `ssh-keygen`, which
    /// git asks to verify signatures with this file, would read it as part of the first
    /// principal, so that signer's commits would never verify.
    pub fn parse(text: &str) -> Result<AllowedSigners, Error> {
        if text.starts_with('\u{feff}') {
            return Err(Error::Signers {
                line: 1,
                column: 1,
                message: "the file starts with a byte order mark, which ssh-keygen reads as part of the first principal: save it without one".to_owned(),
            });
        }
        let mut principals = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let trimmed = line.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            // Columns count from the line's start; the entry starts after its indent.
            let indent = line.chars().take_while(|c| c.is_whitespace()).count();
            let bad = |at: usize, message: &str| Error::Signers {
                line: i + 1,
                column: indent + at + 1,
                message: message.to_owned(),
            };
            if let Some(at) = line.chars().position(|c| c == '\0') {
                return Err(Error::Signers {
                    line: i + 1,
                    column: at + 1,
                    message: "a NUL character (is the file UTF-16? save it as UTF-8)".to_owned(),
                });
            }
            let fields = tokens(trimmed).map_err(|at| bad(at, "unterminated double quote"))?;
            // principals, then optional options, then key type and key.
            if fields.len() < 3 {
                return Err(bad(0, "expected principals, a key type and a key"));
            }
            let field = &fields[0];
            let list = field
                .strip_prefix('"')
                .and_then(|f| f.strip_suffix('"'))
                .unwrap_or(field);
            for principal in list.split(',') {
                if principal.is_empty() {
                    return Err(bad(0, "empty principal in the principals list"));
                }
                let pattern = principal.contains(['*', '?']) || principal.starts_with('!');
                if !pattern && !principals.iter().any(|p| p == principal) {
                    principals.push(principal.to_owned());
                }
            }
        }
        Ok(AllowedSigners { principals })
    }

    /// Parses the bytes of an `allowed_signers` file: [`AllowedSigners::parse`], after a
    /// check that they are UTF-8, whose error names the line and column (characters) of the
    /// first byte that is not.
    pub fn from_bytes(bytes: &[u8]) -> Result<AllowedSigners, Error> {
        match std::str::from_utf8(bytes) {
            Ok(text) => AllowedSigners::parse(text),
            Err(e) => {
                let valid = bytes.get(..e.valid_up_to()).unwrap_or_default();
                let line_start = valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
                let column = std::str::from_utf8(valid.get(line_start..).unwrap_or_default())
                    .map_or(1, |s| s.chars().count() + 1);
                Err(Error::Signers {
                    line: valid.iter().filter(|&&b| b == b'\n').count() + 1,
                    column,
                    message:
                        "not UTF-8 text (an allowed signers file in UTF-16 or another encoding?)"
                            .to_owned(),
                })
            }
        }
    }

    /// Whether `owner` is exactly one literal principal of the file.
    pub fn allows(&self, owner: &str) -> bool {
        self.principals.iter().any(|p| p == owner)
    }

    /// The literal principals, in file order, without repeats.
    pub fn principals(&self) -> &[String] {
        &self.principals
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_principals_and_skips_patterns() {
        let text = "# signers\n\
            alice@example.com ssh-ed25519 AAAAC3Nza alice\n\
            bob@example.com,carol@example.com namespaces=\"git\" ssh-ed25519 AAAAC3Nzb\n\
            *@example.com ssh-ed25519 AAAAC3Nzc\n\
            \"dave@example.com\" ssh-ed25519 AAAAC3Nzd\n";
        let s = AllowedSigners::parse(text).unwrap();
        assert_eq!(
            s.principals(),
            [
                "alice@example.com",
                "bob@example.com",
                "carol@example.com",
                "dave@example.com"
            ]
        );
        assert!(s.allows("carol@example.com"));
        assert!(!s.allows("bob@example.com,carol@example.com"));
        assert!(!s.allows("eve@example.com"));
        assert!(!s.allows("*@example.com"));
    }

    #[test]
    fn every_pattern_form_is_skipped_not_only_the_star() {
        // ssh-keygen reads `?` as one character and a leading `!` as a negation: neither
        // names one human, so neither may own a row, even spelled back literally.
        let text = "al?ce@example.com ssh-ed25519 AAAAC3Nza\n\
            !bob@example.com,carol@example.com ssh-ed25519 AAAAC3Nzb\n";
        let s = AllowedSigners::parse(text).unwrap();
        assert_eq!(s.principals(), ["carol@example.com"]);
        assert!(!s.allows("al?ce@example.com"));
        assert!(!s.allows("!bob@example.com"));
    }

    #[test]
    fn options_do_not_change_who_is_a_principal() {
        let text = "alice@example.com cert-authority ssh-ed25519 AAAAC3Nza\n\
            bob@example.com valid-before=\"20200101\" ssh-ed25519 AAAAC3Nzb\n";
        let s = AllowedSigners::parse(text).unwrap();
        assert_eq!(s.principals(), ["alice@example.com", "bob@example.com"]);
    }

    /// A byte order mark, and bytes that are not UTF-8, are errors with their place, not a
    /// principal nobody can match or an error without one.
    #[test]
    fn a_byte_order_mark_and_bytes_not_utf8_are_named_where_they_are() {
        let place = |e: Error| match e {
            Error::Signers { line, column, .. } => (line, column),
            other => panic!("{other}"),
        };
        let bom = "\u{feff}alice@example.com ssh-ed25519 AAAA\n";
        let err = AllowedSigners::parse(bom).unwrap_err();
        assert!(err.to_string().contains("byte order mark"), "{err}");
        assert_eq!(place(err), (1, 1));
        let bytes = b"alice@example.com ssh-ed25519 AAAA\n# caf\xc3\xa9 \xff\n";
        let err = AllowedSigners::from_bytes(bytes).unwrap_err();
        assert!(err.to_string().contains("not UTF-8"), "{err}");
        assert_eq!(place(err), (2, 8));
        // UTF-16, as some editors save it: the first byte is already not UTF-8.
        let utf16: Vec<u8> = "alice".encode_utf16().flat_map(u16::to_le_bytes).collect();
        let mut with_bom = vec![0xff, 0xfe];
        with_bom.extend(utf16);
        assert_eq!(
            place(AllowedSigners::from_bytes(&with_bom).unwrap_err()),
            (1, 1)
        );
        // Without its mark, UTF-16 of ASCII is UTF-8 with NULs between the letters.
        let bare: Vec<u8> = "alice@example.com ssh-ed25519 AAAA\n"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        let err = AllowedSigners::from_bytes(&bare).unwrap_err();
        assert!(err.to_string().contains("UTF-16"), "{err}");
        assert_eq!(place(err), (1, 2));
        let fine = AllowedSigners::from_bytes(b"alice@example.com ssh-ed25519 AAAA\n").unwrap();
        assert!(fine.allows("alice@example.com"));
    }

    #[test]
    fn names_the_line_and_column_of_a_broken_entry() {
        for (text, shown) in [
            (
                "alice ssh-ed25519 AAAA\n\nbob\n",
                "line 3, column 1: expected principals, a key type and a key",
            ),
            (
                "# signers\n  \t bob ssh-ed25519\n",
                "line 2, column 5: expected principals, a key type and a key",
            ),
            (
                "alice ssh-ed25519 AAAA\n  \"bob, carol ssh-ed25519 AAAB\n",
                "line 2, column 3: unterminated double quote",
            ),
            (
                "bob ssh-ed25519 AAAA \"comment\" and \"rest\n",
                "line 1, column 36: unterminated double quote",
            ),
            (
                "  é,,bob ssh-ed25519 AAAA\n",
                "line 1, column 3: empty principal in the principals list",
            ),
        ] {
            let err = AllowedSigners::parse(text).unwrap_err();
            assert_eq!(err.to_string(), shown, "{text:?}");
        }
    }
}
