//! SHA-256 digests and git object ids as validated lowercase-hex newtypes.

use std::fmt;

use serde::Serialize;

use crate::governance::text::deserialize_via_try_from;

/// A SHA-256 digest written as 64 lowercase hexadecimal digits.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(into = "String")]
pub struct Sha256Hex(String);

impl Sha256Hex {
    /// The digest of `bytes`.
    #[must_use]
    pub fn of(bytes: &[u8]) -> Self {
        Self(crate::integrity::sha256_hex(bytes))
    }

    /// The all-zero digest that stands for "no previous entry" at genesis.
    #[must_use]
    pub fn zero() -> Self {
        Self("0".repeat(64))
    }

    /// The digest as text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for Sha256Hex {
    type Error = String;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        if is_lower_hex(&text, &[64]) {
            Ok(Self(text))
        } else {
            Err(format!(
                "`{text}` is not a sha256 (64 lowercase hex digits)"
            ))
        }
    }
}

impl From<Sha256Hex> for String {
    fn from(hash: Sha256Hex) -> Self {
        hash.0
    }
}

impl fmt::Display for Sha256Hex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A full git object id (SHA-1: 40 hex digits, SHA-256 repositories: 64), lowercase.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(into = "String")]
pub struct GitId(String);

impl GitId {
    /// The id as text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for GitId {
    type Error = String;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        if is_lower_hex(&text, &[40, 64]) {
            Ok(Self(text))
        } else {
            Err(format!(
                "`{text}` is not a full git object id (40 or 64 lowercase hex digits)"
            ))
        }
    }
}

impl From<GitId> for String {
    fn from(id: GitId) -> Self {
        id.0
    }
}

impl fmt::Display for GitId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Whether `text` has one of `lengths` and only the digits `0-9a-f`.
fn is_lower_hex(text: &str, lengths: &[usize]) -> bool {
    lengths.contains(&text.len())
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

deserialize_via_try_from!(Sha256Hex, GitId);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_of_empty_input_is_the_published_value() {
        assert_eq!(
            Sha256Hex::of(b"").as_str(),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn uppercase_and_short_digests_are_rejected() {
        assert!(Sha256Hex::try_from("E3B0".repeat(16)).is_err());
        assert!(Sha256Hex::try_from("ab".to_owned()).is_err());
        assert!(GitId::try_from("a".repeat(40)).is_ok());
        assert!(GitId::try_from("a".repeat(41)).is_err());
    }
}
