//! The integrity primitives everything else binds by: sha256 digests in hex and atomic file writes.
//!
//! The oracle's evidence is only as good as these few functions, so there is exactly one of each:
//! a digest is always lower-case hex of sha256, and a file is always written whole or not at all.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// A file that could not be read or written, with the path it concerns.
#[derive(Debug, thiserror::Error)]
#[error("{}: {reason}", path.display())]
pub struct FileError {
    /// The file read or written.
    pub path: PathBuf,
    /// What the operating system said (in the message, so not a `source`: chains would repeat it).
    pub reason: io::Error,
}

/// Lower-case hexadecimal of a byte string (digests in records, cache keys and reports).
#[must_use]
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut text, byte| {
            let _ = write!(text, "{byte:02x}");
            text
        })
}

/// The sha256 of `bytes`, lower-case hex.
#[must_use]
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// The sha256 of a file's bytes, lower-case hex; the file is streamed, never held whole.
pub fn sha256_file(path: &Path) -> Result<String, FileError> {
    let mut hasher = Sha256::new();
    fs::File::open(path)
        .and_then(|mut file| io::copy(&mut file, &mut hasher))
        .map_err(|reason| FileError {
            path: path.to_owned(),
            reason,
        })?;
    Ok(hex(&hasher.finalize()))
}

/// Writes `bytes` to `path` so that readers see the old file or the new one, never a half-written one.
///
/// A temp file in the same directory (created with the parents if missing) is written, synced and
/// renamed over `path`, then the directory is synced so the rename survives a crash. The file is
/// readable by all (0644): evidence, state and tables are meant to be read, by auditors and sandboxes.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), FileError> {
    write_whole(path, bytes).map_err(|reason| FileError {
        path: path.to_owned(),
        reason,
    })
}

fn write_whole(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().filter(|dir| !dir.as_os_str().is_empty());
    let dir = dir.unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    temp.write_all(bytes)?;
    temp.as_file()
        .set_permissions(fs::Permissions::from_mode(0o644))?;
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|error| error.error)?;
    fs::File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_lower_case_hex_of_sha256() {
        assert_eq!(hex(&[0x00, 0xab, 0x7f]), "00ab7f");
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn atomic_write_replaces_the_whole_file_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("f.json");
        write_atomically(&path, b"first").unwrap();
        write_atomically(&path, b"second").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"second");
        assert_eq!(fs::read_dir(path.parent().unwrap()).unwrap().count(), 1);
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o644
        );
        assert_eq!(
            sha256_file(&path).unwrap(),
            "16367aacb67a4a017c8da8ab95682ccb390863780f7114dda0a0e0c55644c7c4"
        );
    }

    #[test]
    fn a_failed_write_leaves_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        write_atomically(&path, b"old").unwrap();
        // A directory where the file should go makes the rename fail.
        let blocked = dir.path().join("d");
        fs::create_dir(&blocked).unwrap();
        fs::write(blocked.join("x"), b"").unwrap();
        assert!(write_atomically(&blocked, b"new").is_err());
        assert_eq!(fs::read(&path).unwrap(), b"old");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 2);
    }
}
