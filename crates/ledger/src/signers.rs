//! The principals of an ssh `allowed_signers` file (`freeze/allowed_signers`).
//!
//! Each non-empty line that is not a `#` comment reads
//! `principals [options] keytype base64-key [comment]`, where `principals` is a
//! comma-separated list (optionally in double quotes). A ledger `owner` must equal exactly one
//! principal; patterns with `*`, `?` or a leading `!` match nobody here, since an owner is
//! one named human.

use crate::error::Error;

/// The literal principals of an `allowed_signers` file, in file order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowedSigners {
    principals: Vec<String>,
}

/// Splits a line into whitespace-separated tokens; double quotes group spaces.
fn tokens(line: &str) -> Result<Vec<String>, &'static str> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut in_token = false;
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                in_token = true;
                current.push(c);
            }
            c if c.is_whitespace() && !quoted => {
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
    if quoted {
        return Err("unterminated double quote");
    }
    if in_token {
        out.push(current);
    }
    Ok(out)
}

impl AllowedSigners {
    /// Parses the text of an `allowed_signers` file. Errors name the 1-based line.
    pub fn parse(text: &str) -> Result<AllowedSigners, Error> {
        let mut principals = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line_no = i + 1;
            let trimmed = line.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let bad = |message: &str| Error::Signers {
                line: line_no,
                message: message.to_owned(),
            };
            let fields = tokens(trimmed).map_err(bad)?;
            // principals, then optional options, then key type and key.
            if fields.len() < 3 {
                return Err(bad("expected principals, a key type and a key"));
            }
            let field = &fields[0];
            let list = field
                .strip_prefix('"')
                .and_then(|f| f.strip_suffix('"'))
                .unwrap_or(field);
            for principal in list.split(',') {
                if principal.is_empty() {
                    return Err(bad("empty principal in the principals list"));
                }
                let pattern = principal.contains(['*', '?']) || principal.starts_with('!');
                if !pattern && !principals.iter().any(|p| p == principal) {
                    principals.push(principal.to_owned());
                }
            }
        }
        Ok(AllowedSigners { principals })
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
    fn names_the_line_of_a_broken_entry() {
        let err = AllowedSigners::parse("alice ssh-ed25519 AAAA\n\nbob\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "allowed signers, line 3: expected principals, a key type and a key"
        );
    }
}
