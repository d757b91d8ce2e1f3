//! The integrity primitives everything else binds by: sha256 digests in hex, atomic file writes
//! and bounded file reads.
//!
//! The oracle's evidence is only as good as these few functions, so there is exactly one of each:
//! a digest is always lower-case hex of sha256, and a file is always written whole or not at all.

use std::fs;
use std::io::{self, Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
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

/// The largest record file the oracle reads whole: a match state, a shard, a register entry, a
/// confirmation. Today's are under 0.1 MB, and a state file of 100,000 pairs is some 10 MB; the
/// bound keeps a hostile file from growing the oracle's memory.
pub const MAX_RECORD_BYTES: u64 = 64 << 20;

/// Reads the whole file at `path` if it holds at most `limit` bytes; a larger one is refused,
/// naming it, after reading one byte past the bound, never the whole file.
pub fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, FileError> {
    let wrap = |reason| FileError {
        path: path.to_owned(),
        reason,
    };
    let mut bytes = Vec::new();
    fs::File::open(path)
        .and_then(|file| file.take(limit.saturating_add(1)).read_to_end(&mut bytes))
        .map_err(wrap)?;
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > limit {
        return Err(wrap(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("larger than {limit} bytes, the most the oracle reads of such a file"),
        )));
    }
    Ok(bytes)
}

/// The largest program the oracle takes from a build: an engine with its network embedded
/// (Stockfish's) is under 100 MB.
pub const MAX_BINARY_BYTES: u64 = 256 << 20;

/// Why a file that untrusted code left behind was not taken.
#[derive(Debug, thiserror::Error)]
pub enum TakeError {
    /// The file is not one that code made in place: a link, not a regular file, or too large.
    #[error("{}: {reason}", path.display())]
    Refused {
        /// The path refused (the link itself, when one is on the way).
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// Reading or copying it failed.
    #[error(transparent)]
    File(#[from] FileError),
}

/// Copies the file at `relative` below the directory `within`, where untrusted code ran (a
/// build), to `to` as [`copy_atomically`] writes one, taking it only as it lies there: no
/// symbolic link is followed anywhere below `within`, and only a regular file of at most
/// `limit` bytes is taken. So a build cannot present a file of the host as its output, and the
/// oracle, which may run as root, reads nothing a link points to. Call it only once every
/// untrusted process has ended: the checks and the copy are not one step.
pub fn take_untrusted_file(
    within: &Path,
    relative: &Path,
    to: &Path,
    limit: u64,
) -> Result<(), TakeError> {
    let refused = |path: &Path, reason: &str| TakeError::Refused {
        path: path.to_owned(),
        reason: reason.to_owned(),
    };
    let file_error = |path: &Path| {
        let path = path.to_owned();
        move |reason| FileError { path, reason }
    };
    let mut path = within.to_path_buf();
    let mut kind = None;
    for component in relative.components() {
        let std::path::Component::Normal(name) = component else {
            return Err(refused(
                &within.join(relative),
                "not a plain path below the directory",
            ));
        };
        path.push(name);
        let metadata = fs::symlink_metadata(&path).map_err(file_error(&path))?;
        if metadata.file_type().is_symlink() {
            return Err(refused(
                &path,
                "a symbolic link; the oracle takes only a file the build made itself, never what a link points to",
            ));
        }
        kind = Some(metadata.file_type());
    }
    // Checked before opening: opening a FIFO would wait for a writer that never comes.
    if !kind.is_some_and(|kind| kind.is_file()) {
        return Err(refused(&path, "not a regular file"));
    }
    let source = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&path)
        .map_err(file_error(&path))?;
    let metadata = source.metadata().map_err(file_error(&path))?;
    if !metadata.is_file() {
        return Err(refused(&path, "not a regular file"));
    }
    if metadata.len() > limit {
        return Err(refused(
            &path,
            &format!(
                "{} bytes, more than the {limit} the oracle takes of such a file",
                metadata.len()
            ),
        ));
    }
    replace_whole(to, |temp| io::copy(&mut source.take(limit), temp).map(drop))
        .map_err(file_error(to))?;
    Ok(())
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

/// Copies the file `from` to `to` as [`write_atomically`] writes one, streamed, never held whole.
pub fn copy_atomically(from: &Path, to: &Path) -> Result<(), FileError> {
    let mut source = fs::File::open(from).map_err(|reason| FileError {
        path: from.to_owned(),
        reason,
    })?;
    replace_whole(to, |temp| io::copy(&mut source, temp).map(drop)).map_err(|reason| FileError {
        path: to.to_owned(),
        reason,
    })
}

fn write_whole(path: &Path, bytes: &[u8]) -> io::Result<()> {
    replace_whole(path, |temp| temp.write_all(bytes))
}

/// Replaces `path` with a temp file in its directory that `fill` writes.
fn replace_whole(
    path: &Path,
    fill: impl FnOnce(&mut fs::File) -> io::Result<()>,
) -> io::Result<()> {
    let dir = path.parent().filter(|dir| !dir.as_os_str().is_empty());
    let dir = dir.unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    fill(temp.as_file_mut())?;
    temp.as_file()
        .set_permissions(fs::Permissions::from_mode(0o644))?;
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|error| error.error)?;
    fs::File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A build's output is taken only as a regular file made in place: a link to a host file,
    /// at the end of the path or on the way, a directory, a file past the bound and a path
    /// that leaves the directory are refused, naming what was refused, and nothing is written.
    #[test]
    fn only_a_regular_file_made_in_place_is_taken() {
        let dir = tempfile::tempdir().unwrap();
        let within = dir.path().join("build");
        let out = within.join("out");
        fs::create_dir_all(&out).unwrap();
        fs::write(out.join("engine"), b"ELF of the build").unwrap();
        let host = dir.path().join("host-engine");
        fs::write(&host, b"ELF of the host").unwrap();
        std::os::unix::fs::symlink(&host, out.join("linked")).unwrap();
        std::os::unix::fs::symlink(&out, within.join("via")).unwrap();
        fs::create_dir(out.join("folder")).unwrap();
        let fifo =
            std::ffi::CString::new(out.join("fifo").into_os_string().into_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo only creates a file.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        let to = dir.path().join("taken");

        take_untrusted_file(&within, Path::new("out/engine"), &to, 100).unwrap();
        assert_eq!(fs::read(&to).unwrap(), b"ELF of the build");
        fs::remove_file(&to).unwrap();

        let cases = [
            ("out/linked", "out/linked", "symbolic link"),
            ("via/engine", "via", "symbolic link"),
            ("out/folder", "out/folder", "not a regular file"),
            ("out/fifo", "out/fifo", "not a regular file"),
            ("", "", "not a regular file"),
            ("../host-engine", "../host-engine", "not a plain path"),
        ];
        for (relative, named, why) in cases {
            let error = take_untrusted_file(&within, Path::new(relative), &to, 100).unwrap_err();
            let TakeError::Refused { path, reason } = &error else {
                panic!("{relative}: {error}");
            };
            assert_eq!(path, &within.join(named), "{relative}");
            assert!(reason.contains(why), "{relative}: {reason}");
            assert!(!to.exists(), "{relative}: nothing is written");
        }
        let error = take_untrusted_file(&within, Path::new("out/engine"), &to, 4).unwrap_err();
        assert!(error.to_string().contains("more than the 4"), "{error}");
        assert!(!to.exists());
    }

    #[test]
    fn a_file_past_the_bound_is_refused_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shard.json");
        fs::write(&path, b"12345").unwrap();
        assert_eq!(read_bounded(&path, 5).unwrap(), b"12345");
        let error = read_bounded(&path, 4).unwrap_err();
        assert_eq!(error.reason.kind(), io::ErrorKind::FileTooLarge);
        assert!(
            error
                .to_string()
                .contains("shard.json: larger than 4 bytes"),
            "{error}"
        );
        assert!(read_bounded(&dir.path().join("missing"), 4).is_err());
    }

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
        let copy = dir.path().join("sub").join("copy.json");
        copy_atomically(&path, &copy).unwrap();
        assert_eq!(fs::read(&copy).unwrap(), b"second");
        fs::remove_file(&copy).unwrap();
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
        assert!(copy_atomically(&path, &blocked).is_err());
        assert_eq!(fs::read(&path).unwrap(), b"old");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 2);
    }
}
