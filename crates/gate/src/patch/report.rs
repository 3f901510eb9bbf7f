//! The judgement of a patch: what the gate prints and serializes.
//!
//! Serialized (JSON through serde), a [`PatchReport`] is an object with the members below in this
//! order; lists are in a fixed order (commits parents-first as `git rev-list --topo-order
//! --reverse` gives them; violations and findings by commit, then path, then line, then rule), so
//! two runs on the same repository give the same bytes.
//!
//! | member | meaning |
//! |---|---|
//! | `base`, `head` | full commit ids of REV and HEAD |
//! | `allowed_signers_at_base` | whether `freeze/allowed_signers` existed at REV |
//! | `commits` | one [`CommitReport`] per commit of `REV..HEAD` |
//! | `violations` | protected-path changes without an allowed signature ([`Violation`]) |
//! | `findings` | gaming moves ([`Finding`]), each `blocking` unless its commit is allowed |
//! | `warnings` | non-blocking notes ([`Warning`]) |
//!
//! What the patch changed in the freeze ledger and in `freezegate.toml` is not part of this
//! judgement: [`crate::diffs::ledger_diff`] and [`crate::diffs::settings_diff`] compute it, and
//! the gate's report shows both beside it.

use serde::Serialize;

use super::diff::ChangeKind;

/// The signature check of one commit, against `freeze/allowed_signers` as it stands at REV.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SignatureStatus {
    /// A good SSH signature by a key the base revision's allowed signers list (`%G?` = `G`).
    Allowed,
    /// No signature (`N`).
    Unsigned,
    /// A signature by a key the base revision does not list (`U`), or no allowed signers at REV.
    UnknownKey,
    /// A signature that does not verify (`B`).
    Bad,
    /// The signature or its key has expired (`X`, `Y`), or the key is not valid at commit time.
    Expired,
    /// The key was revoked (`R`).
    Revoked,
    /// The signature could not be checked (`E`), e.g. no `ssh-keygen`.
    Unverifiable,
    /// Git said good, but the signature is not an SSH signature (OpenPGP, X.509): not accepted.
    NotSsh,
}

impl SignatureStatus {
    /// Maps git's `%G?` letter.
    pub fn from_git(code: char) -> SignatureStatus {
        match code {
            'G' => SignatureStatus::Allowed,
            'N' => SignatureStatus::Unsigned,
            'U' => SignatureStatus::UnknownKey,
            'B' => SignatureStatus::Bad,
            'X' | 'Y' => SignatureStatus::Expired,
            'R' => SignatureStatus::Revoked,
            _ => SignatureStatus::Unverifiable,
        }
    }

    /// Whether this signature lets the commit touch protected paths and waives its findings.
    pub fn is_allowed(self) -> bool {
        self == SignatureStatus::Allowed
    }
}

/// The signature of one commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Signature {
    /// The verdict.
    pub status: SignatureStatus,
    /// The principal `freeze/allowed_signers` (at REV) names for the key, when it does.
    pub signer: Option<String>,
    /// The key's fingerprint, when signed.
    pub key: Option<String>,
}

/// One commit of `REV..HEAD`, judged on its own change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct CommitReport {
    /// Full commit id.
    pub commit: String,
    /// Its parents (several for a merge).
    pub parents: Vec<String>,
    /// The first line of its message.
    pub subject: String,
    /// Its signature.
    pub signature: Signature,
    /// Protected paths its own change touches, sorted.
    pub protected_paths: Vec<String>,
    /// Property files (`property_paths` at REV) its own change touches, sorted.
    pub property_files: Vec<String>,
}

/// A protected path changed by a commit without an allowed signature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Violation {
    /// Full commit id.
    pub commit: String,
    /// The path (for a rename, each side that is protected is its own violation).
    pub path: String,
    /// How the commit changed it.
    pub change: ChangeKind,
    /// The glob that protects it (`fixtures/**` for an existing fixture file), or for a file
    /// a property's command names at REV, which one: `the oracle of property tax.total at
    /// main`, `the generator of property …` (REV as the caller named it).
    pub protected_by: String,
    /// Why the commit's signature did not allow it.
    pub signature: SignatureStatus,
}

/// A gaming move found in a commit's own change to a property file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Finding {
    /// Full commit id.
    pub commit: String,
    /// The file (for a removed line, the path before the commit).
    pub file: String,
    /// 1-based line: in the new file for an added line, in the old file for a removed one;
    /// `0` for a finding about the whole file (`opaque-code`, `module-shadowed`).
    pub line: u32,
    /// The rule id (see `patch::RULES`).
    pub rule: String,
    /// One line saying what moved.
    pub explanation: String,
    /// False when the commit carries an allowed signature (a human did it on purpose).
    pub blocking: bool,
}

/// What a warning is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum WarningKind {
    /// One commit changes property code and the code it checks: review the predicate diff alone.
    PropertyAndCode,
    /// No `freeze/allowed_signers` at REV: no protected change can pass.
    NoAllowedSigners,
    /// No `property_paths` at REV: gaming moves are not looked for.
    NoPropertyPaths,
    /// An `oracle` or `generate` command at REV names no file of REV's tree: what it runs is
    /// not protected by being named.
    UnprotectedCommand,
    /// An `oracle` or `generate` command at REV runs a script in a language whose loads the
    /// gate does not follow (JavaScript, shell, Ruby, …), in a folder no `policy.protected` glob
    /// covers: the script is protected by being named, the files it loads are not.
    UnfollowedScript,
}

/// A non-blocking note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Warning {
    /// The commit it concerns, if one.
    pub commit: Option<String>,
    /// What it is about.
    pub kind: WarningKind,
    /// One line for humans.
    pub message: String,
}

/// The patch-integrity judgement of `REV..HEAD`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PatchReport {
    /// Full commit id of the base revision.
    pub base: String,
    /// Full commit id of the head.
    pub head: String,
    /// Whether `freeze/allowed_signers` existed at the base revision.
    pub allowed_signers_at_base: bool,
    /// Every commit of `base..head`, parents first.
    pub commits: Vec<CommitReport>,
    /// Protected changes without an allowed signature: each blocks.
    pub violations: Vec<Violation>,
    /// Gaming moves; those of commits without an allowed signature block.
    pub findings: Vec<Finding>,
    /// Non-blocking notes.
    pub warnings: Vec<Warning>,
}

impl PatchReport {
    /// Whether the patch is blocked: a violation, or a finding in a commit without an allowed
    /// signature.
    pub fn blocking(&self) -> bool {
        !self.violations.is_empty() || self.findings.iter().any(|f| f.blocking)
    }
}
