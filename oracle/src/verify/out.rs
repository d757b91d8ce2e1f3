//! The `--out` directory: where every piece of evidence of one run lives, and how it is written.
//!
//! Files in it are written whole or not at all (`integrity::write_atomically`), so an interrupted
//! run leaves only complete files and can be resumed from them.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

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
