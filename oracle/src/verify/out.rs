//! The `--out` directory: where every piece of evidence of one run lives, and how it is written.
//!
//! Files are written whole or not at all (temp file, fsync, rename), so an interrupted run
//! leaves only complete files and can be resumed from them.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::governance::hash::Sha256Hex;

/// The layout of one run's `--out` directory.
#[derive(Debug, Clone)]
pub struct OutDir {
    root: PathBuf,
}

impl OutDir {
    /// Creates (if needed) the directory and its subdirectories.
    pub fn create(root: &Path) -> io::Result<Self> {
        fs::create_dir_all(root.join("engines"))?;
        fs::create_dir_all(root.join("inputs"))?;
        Ok(Self {
            root: root.to_path_buf(),
        })
    }

    /// The directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The binding record, written before any measurement.
    pub fn binding(&self) -> PathBuf {
        self.root.join("binding.json")
    }

    /// Where a bound engine binary is kept for the whole run (`candidate` or `predecessor`).
    pub fn engine(&self, role: &str) -> PathBuf {
        self.root.join("engines").join(role)
    }

    /// A file read from the predecessor's tree (constitution, books, register), by its repository path.
    pub fn input(&self, repo_path: &str) -> PathBuf {
        self.root.join("inputs").join(repo_path)
    }

    /// A step's own result file (`gate.json`, `bench.json`, `proof.json`, …).
    pub fn step_file(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    /// The working directory of stage `index` (1-based): runner state, PGN, shard files.
    pub fn stage_dir(&self, index: usize, name: &str) -> PathBuf {
        self.root.join(format!("stage-{index}-{name}"))
    }

    /// The register entry this run proposes.
    pub fn entry(&self) -> PathBuf {
        self.root.join("entry.yaml")
    }

    /// The Markdown report.
    pub fn report_markdown(&self) -> PathBuf {
        self.root.join("report.md")
    }

    /// The SVG figures the Markdown report shows.
    pub fn report_svg(&self) -> PathBuf {
        self.root.join("report.svg")
    }

    /// The final machine-readable result (the `--json` object).
    pub fn result(&self) -> PathBuf {
        self.root.join("result.json")
    }
}

/// Writes `bytes` to `path` atomically: a temp file in the same directory, fsync, rename, fsync dir.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    temp.write_all(bytes)?;
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|e| e.error)?;
    fs::File::open(dir)?.sync_all()
}

/// The sha256 of a file's bytes, lower-case hex.
pub fn sha256_file(path: &Path) -> io::Result<String> {
    Ok(Sha256Hex::of(&fs::read(path)?).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("f.json");
        write_atomic(&path, b"first").unwrap();
        write_atomic(&path, b"second").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"second");
        assert_eq!(fs::read_dir(path.parent().unwrap()).unwrap().count(), 1);
        assert_eq!(
            sha256_file(&path).unwrap(),
            "16367aacb67a4a017c8da8ab95682ccb390863780f7114dda0a0e0c55644c7c4"
        );
    }
}
