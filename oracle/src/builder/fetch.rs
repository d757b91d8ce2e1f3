//! Files a build needs that its repository does not hold (an NNUE network that Stockfish's
//! `make net` downloads): the engine contract's `engine.fetch`, each file named by its URL,
//! pinned by its sha256 and placed at a repository path (docs/engine-contract.md).
//!
//! The build sandbox has no network, so the oracle fetches them itself, outside it, once:
//! into `<cache>/fetched/<sha256>`, re-hashed on every later use. A download is streamed into a
//! temporary file under the cache's work directory and enters `fetched/` only when its sha256
//! is the pinned one, so the cache never holds bytes the contract did not pin. Each build copy
//! then gets its own read-only copy at the pinned path, before the build command runs; a path
//! the tree already has is refused, never overwritten.

use std::fs;
use std::io::{self, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::cache::{Cache, CacheError};
use crate::governance::hash::Sha256Hex;
use crate::integrity::{self, FileError};

/// The largest file the oracle fetches; Stockfish's networks are 20 to 110 MB.
pub const MAX_FETCH_BYTES: u64 = 512 << 20;

/// The URL schemes a pin may use: the web's, and `file` for tests and offline mirrors.
const SCHEMES: [&str; 3] = ["https", "http", "file"];

/// The cache's directory of fetched files, each named by its sha256.
const FETCHED_DIR: &str = "fetched";

/// Seconds curl may take to connect.
const CONNECT_SECONDS: u32 = 60;

/// Seconds a whole download may take (512 MiB at 150 KiB/s).
const DOWNLOAD_SECONDS: u32 = 3600;

/// A file fetched outside the sandbox, pinned by sha256, placed in the tree before each build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PinnedFile {
    /// Where it is fetched from: an `https://`, `http://` or `file://` URL.
    pub url: String,
    /// The sha256 its bytes must have, 64 lowercase hex digits.
    pub sha256: String,
    /// Where the build finds it, relative to the repository's root (`src/nn-62ef826d1a6d.nnue`).
    pub path: String,
}

/// Why the pinned files could not be fetched or placed.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// A pin breaks a rule of the contract (checked on load too; here for any other caller).
    #[error("engine contract `engine.{field}`: {message}")]
    Invalid {
        /// The field at fault (`fetch[0].path`).
        field: String,
        /// What is wrong.
        message: String,
    },
    /// curl is not installed.
    #[error(
        "the engine contract's `fetch` files are downloaded with `curl`, which is not on the \
         PATH: install curl (nothing was fetched or built)"
    )]
    NoCurl,
    /// The download failed.
    #[error("fetching {url}: {reason}")]
    Download {
        /// The pin's URL.
        url: String,
        /// curl's message, or how it ended.
        reason: String,
    },
    /// The file is larger than [`MAX_FETCH_BYTES`].
    #[error("fetching {url}: larger than {MAX_FETCH_BYTES} bytes, the most the oracle fetches")]
    TooLarge {
        /// The pin's URL.
        url: String,
    },
    /// The file is not the one the contract pins.
    #[error(
        "fetching {url}: its sha256 is {actual}, but the engine contract pins sha256 {expected} \
         (nothing was cached or built)"
    )]
    Mismatch {
        /// The pin's URL.
        url: String,
        /// The contract's sha256.
        expected: String,
        /// The downloaded file's.
        actual: String,
    },
    /// The tree already has the pinned path.
    #[error(
        "the tree already has `{path}`, where the engine contract's `fetch` places {url}: a \
         fetched file never replaces the engine's own (nothing was built)"
    )]
    PathTaken {
        /// The pin's path.
        path: String,
        /// The pin's URL.
        url: String,
    },
    /// A file could not be read or written.
    #[error("fetched files: {0}")]
    File(#[from] FileError),
    /// The cache's work directory could not be made.
    #[error(transparent)]
    Cache(#[from] CacheError),
}

impl PinnedFile {
    /// The first field that breaks a rule, as `(field, message)`: the URL's scheme, the sha256's
    /// form, and a path that stays inside the tree and out of `.git`.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        let scheme = self.url.split_once("://").map(|(scheme, _)| scheme);
        if !scheme.is_some_and(|scheme| SCHEMES.contains(&scheme))
            || self.url.ends_with("://")
            || self
                .url
                .chars()
                .any(|c| c.is_whitespace() || c.is_control())
        {
            return Err((
                "url",
                format!("{:?} is not an https://, http:// or file:// URL", self.url),
            ));
        }
        Sha256Hex::try_from(self.sha256.clone()).map_err(|message| ("sha256", message))?;
        let parts: Vec<&str> = self.path.split('/').collect();
        if self.path.chars().any(char::is_control)
            || parts
                .iter()
                .any(|part| part.is_empty() || *part == "." || *part == "..")
        {
            return Err((
                "path",
                format!(
                    "{:?} is not a normalized path relative to the repository's root \
                     (`src/net.nnue`: no leading or doubled `/`, no `.` or `..`)",
                    self.path
                ),
            ));
        }
        if parts.contains(&".git") {
            return Err((
                "path",
                format!("{:?} is inside `.git`, which no build reads", self.path),
            ));
        }
        Ok(())
    }
}

impl FromStr for PinnedFile {
    type Err = String;

    /// `URL SHA256 PATH`, separated by blanks, as `oracle init --fetch` takes a pin.
    fn from_str(text: &str) -> Result<Self, String> {
        let words: Vec<&str> = text.split_whitespace().collect();
        let [url, sha256, path] = words[..] else {
            return Err(format!("{text:?} is not 'URL SHA256 PATH'"));
        };
        let pin = Self {
            url: url.to_owned(),
            sha256: sha256.to_owned(),
            path: path.to_owned(),
        };
        pin.check()
            .map_err(|(field, message)| format!("{field}: {message}"))?;
        Ok(pin)
    }
}

/// Checks every pin and that no two place a file at the same path or one inside the other;
/// `Err((field path under engine, message))` for the first that fails (`fetch[1].path`).
pub fn check_all(pins: &[PinnedFile]) -> Result<(), (String, String)> {
    for (index, pin) in pins.iter().enumerate() {
        pin.check()
            .map_err(|(field, message)| (format!("fetch[{index}].{field}"), message))?;
        if let Some(earlier) = pins[..index].iter().position(|other| {
            let (a, b) = (other.path.as_str(), pin.path.as_str());
            a == b || b.starts_with(&format!("{a}/")) || a.starts_with(&format!("{b}/"))
        }) {
            return Err((
                format!("fetch[{index}].path"),
                format!(
                    "{:?} collides with `fetch[{earlier}].path` {:?}",
                    pin.path, pins[earlier].path
                ),
            ));
        }
    }
    Ok(())
}

/// What the pins add to a build's cache key: each sha256 and path, so that a changed pin never
/// reuses a binary; empty without pins, so that other builds keep the keys they had.
#[must_use]
pub fn key_part(pins: &[PinnedFile]) -> String {
    pins.iter()
        .map(|pin| format!("\nfetch {} {}", pin.sha256, pin.path))
        .collect()
}

/// The pinned files, fetched and checked, ready to be placed in build trees.
#[derive(Debug)]
pub struct Fetched<'a> {
    files: Vec<(&'a PinnedFile, PathBuf)>,
}

/// Fetches each pin into the cache (or takes it from there once it hashes right).
pub fn fetch_all<'a>(pins: &'a [PinnedFile], cache: &Cache) -> Result<Fetched<'a>, FetchError> {
    check_all(pins).map_err(|(field, message)| FetchError::Invalid { field, message })?;
    let files = pins
        .iter()
        .map(|pin| Ok((pin, cached(pin, cache)?)))
        .collect::<Result<_, FetchError>>()?;
    Ok(Fetched { files })
}

impl Fetched<'_> {
    /// Copies each file, read-only, to its path in `tree` (an exported tree's root).
    pub fn place(&self, tree: &Path) -> Result<(), FetchError> {
        for (pin, file) in &self.files {
            let target = tree.join(&pin.path);
            if target.symlink_metadata().is_ok()
                || target
                    .ancestors()
                    .skip(1)
                    .take_while(|dir| *dir != tree)
                    .any(|dir| dir.symlink_metadata().is_ok_and(|meta| !meta.is_dir()))
            {
                return Err(FetchError::PathTaken {
                    path: pin.path.clone(),
                    url: pin.url.clone(),
                });
            }
            let file_error = |path: &Path| {
                let path = path.to_owned();
                move |reason| FileError { path, reason }
            };
            if let Some(dir) = target.parent() {
                fs::create_dir_all(dir).map_err(file_error(dir))?;
            }
            fs::copy(file, &target).map_err(file_error(&target))?;
            fs::set_permissions(&target, fs::Permissions::from_mode(0o444))
                .map_err(file_error(&target))?;
        }
        Ok(())
    }
}

/// The pin's file in the cache: the one there if it still hashes to its name, else downloaded.
fn cached(pin: &PinnedFile, cache: &Cache) -> Result<PathBuf, FetchError> {
    let path = cache.root().join(FETCHED_DIR).join(&pin.sha256);
    if path.is_file() {
        if integrity::sha256_file(&path)? == pin.sha256 {
            return Ok(path);
        }
        // Damaged or changed by hand: it is fetched again, never used.
        fs::remove_file(&path).map_err(|reason| FileError {
            path: path.clone(),
            reason,
        })?;
    }
    let work = cache.work_dir()?;
    let download = work.path().join("download");
    let actual = download_to(&pin.url, &download)?;
    if actual != pin.sha256 {
        return Err(FetchError::Mismatch {
            url: pin.url.clone(),
            expected: pin.sha256.clone(),
            actual,
        });
    }
    integrity::copy_atomically(&download, &path)?;
    Ok(path)
}

/// Downloads `url` into `file`, at most [`MAX_FETCH_BYTES`]; returns its sha256.
///
/// The bytes pass through the oracle, which counts and hashes them: curl's own
/// `--max-filesize` only refuses a size the server announces.
fn download_to(url: &str, file: &Path) -> Result<String, FetchError> {
    let failed = |reason: String| FetchError::Download {
        url: url.to_owned(),
        reason,
    };
    // The curl binary rather than an HTTP crate: TLS, proxies and redirects without a TLS stack
    // in the oracle's build, and every machine that builds engines has it.
    let mut child = Command::new("curl")
        .args(["-q", "--fail", "--location", "--silent", "--show-error"])
        .args([
            "--proto",
            "=https,http,file",
            "--proto-redir",
            "=https,http",
        ])
        .args(["--max-filesize", &MAX_FETCH_BYTES.to_string()])
        .args(["--connect-timeout", &CONNECT_SECONDS.to_string()])
        .args(["--max-time", &DOWNLOAD_SECONDS.to_string()])
        .args(["--url", url])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| match error.kind() {
            io::ErrorKind::NotFound => FetchError::NoCurl,
            _ => failed(format!("running curl: {error}")),
        })?;
    let written = child
        .stdout
        .take()
        .ok_or_else(|| failed("curl gave no output".into()))
        .and_then(|stdout| copy_bounded(stdout, file, url));
    if written.is_err() {
        // The download is abandoned: curl is stopped, its ending is of no interest.
        let _ = child.kill();
    }
    let ended = child
        .wait_with_output()
        .map_err(|error| failed(format!("waiting for curl: {error}")))?;
    let sha256 = written?;
    if !ended.status.success() {
        let said = String::from_utf8_lossy(&ended.stderr).trim().to_owned();
        return Err(failed(if said.is_empty() {
            format!("curl {}", ended.status)
        } else {
            said
        }));
    }
    Ok(sha256)
}

/// Streams `from` into a new `file`, refusing more than [`MAX_FETCH_BYTES`]; the bytes' sha256.
fn copy_bounded(mut from: impl Read, file: &Path, url: &str) -> Result<String, FetchError> {
    let file_error = |reason| FileError {
        path: file.to_owned(),
        reason,
    };
    let mut out = fs::File::create(file).map_err(file_error)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0; 1 << 16];
    let mut total: u64 = 0;
    loop {
        let read = from.read(&mut buffer).map_err(file_error)?;
        if read == 0 {
            break;
        }
        total += read as u64;
        if total > MAX_FETCH_BYTES {
            return Err(FetchError::TooLarge {
                url: url.to_owned(),
            });
        }
        hasher.update(&buffer[..read]);
        out.write_all(&buffer[..read]).map_err(file_error)?;
    }
    Ok(integrity::hex(&hasher.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pin(url: &str, sha256: &str, path: &str) -> PinnedFile {
        PinnedFile {
            url: url.into(),
            sha256: sha256.into(),
            path: path.into(),
        }
    }

    /// A file in `dir` and its pin as a `file://` URL placed at `path`.
    fn served(dir: &Path, bytes: &[u8], path: &str) -> PinnedFile {
        let file = dir.join("served.bin");
        fs::write(&file, bytes).unwrap();
        pin(
            &format!("file://{}", file.display()),
            &integrity::sha256_hex(bytes),
            path,
        )
    }

    #[test]
    fn a_pin_is_read_from_three_words_and_checked() {
        let sha = "a".repeat(64);
        let read: PinnedFile = format!("https://x.org/nn.nnue {sha}  src/nn.nnue")
            .parse()
            .unwrap();
        assert_eq!(read, pin("https://x.org/nn.nnue", &sha, "src/nn.nnue"));
        let error = "https://x.org/nn.nnue src/nn.nnue"
            .parse::<PinnedFile>()
            .unwrap_err();
        assert!(error.contains("URL SHA256 PATH"), "{error}");
        let error = format!("ftp://x.org/nn {sha} nn")
            .parse::<PinnedFile>()
            .unwrap_err();
        assert!(error.starts_with("url: "), "{error}");
    }

    #[test]
    fn the_cache_key_part_is_empty_without_pins_and_follows_each_pin() {
        let sha = "b".repeat(64);
        assert_eq!(key_part(&[]), "");
        let one = key_part(&[pin("file:///a", &sha, "src/nn")]);
        assert_ne!(
            one,
            key_part(&[pin("file:///a", &"c".repeat(64), "src/nn")])
        );
        assert_ne!(one, key_part(&[pin("file:///a", &sha, "nn")]));
        assert_eq!(
            one,
            key_part(&[pin("https://mirror/a", &sha, "src/nn")]),
            "where a file comes from does not change the binary"
        );
    }

    #[test]
    fn a_fetched_file_is_cached_by_sha256_and_placed_read_only() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(&dir.path().join("cache")).unwrap();
        let pins = [served(dir.path(), b"network weights", "src/nets/nn.bin")];
        let tree = dir.path().join("tree");
        fs::create_dir_all(tree.join("src")).unwrap();
        fetch_all(&pins, &cache).unwrap().place(&tree).unwrap();
        let placed = tree.join("src/nets/nn.bin");
        assert_eq!(fs::read(&placed).unwrap(), b"network weights");
        assert_eq!(
            fs::metadata(&placed).unwrap().permissions().mode() & 0o777,
            0o444
        );
        let cached = dir.path().join("cache/fetched").join(&pins[0].sha256);
        assert_eq!(fs::read(&cached).unwrap(), b"network weights");
        // Fetched once: the cached file serves when the source is gone, and a damaged one is
        // fetched again rather than used.
        fs::remove_file(dir.path().join("served.bin")).unwrap();
        let again = dir.path().join("again");
        fetch_all(&pins, &cache).unwrap().place(&again).unwrap();
        assert_eq!(
            fs::read(again.join("src/nets/nn.bin")).unwrap(),
            b"network weights"
        );
        fs::write(&cached, b"damaged").unwrap();
        let error = fetch_all(&pins, &cache).unwrap_err().to_string();
        assert!(error.contains(&pins[0].url), "{error}");
        assert!(!cached.exists(), "the damaged file is gone");
    }

    #[test]
    fn a_wrong_sha256_names_both_and_caches_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(&dir.path().join("cache")).unwrap();
        let mut wrong = served(dir.path(), b"weights", "nn.bin");
        let actual = std::mem::replace(&mut wrong.sha256, "0".repeat(64));
        let error = fetch_all(std::slice::from_ref(&wrong), &cache).unwrap_err();
        let text = error.to_string();
        assert!(matches!(error, FetchError::Mismatch { .. }), "{text}");
        for part in [&wrong.url, &wrong.sha256, &actual] {
            assert!(text.contains(part.as_str()), "{part} in {text}");
        }
        assert!(!dir.path().join("cache/fetched").exists());
        assert_eq!(
            fs::read_dir(dir.path().join("cache/work")).unwrap().count(),
            0
        );
    }

    #[test]
    fn a_path_the_tree_has_is_refused_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(&dir.path().join("cache")).unwrap();
        let tree = dir.path().join("tree");
        fs::create_dir_all(tree.join("src")).unwrap();
        fs::write(tree.join("src/engine.c"), b"int main;").unwrap();
        for path in ["src/engine.c", "src", "src/engine.c/nn.bin"] {
            let pins = [served(dir.path(), b"weights", path)];
            let error = fetch_all(&pins, &cache).unwrap().place(&tree).unwrap_err();
            assert!(
                error.to_string().contains(&format!("already has `{path}`")),
                "{error}"
            );
        }
        assert_eq!(fs::read(tree.join("src/engine.c")).unwrap(), b"int main;");
    }

    #[test]
    fn a_missing_file_is_a_download_error_naming_the_url() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(&dir.path().join("cache")).unwrap();
        let url = format!("file://{}/absent.bin", dir.path().display());
        let pins = [pin(&url, &"d".repeat(64), "nn.bin")];
        let error = fetch_all(&pins, &cache).unwrap_err();
        assert!(matches!(error, FetchError::Download { .. }), "{error}");
        assert!(error.to_string().contains(&url), "{error}");
    }
}
