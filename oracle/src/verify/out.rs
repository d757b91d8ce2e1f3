//! The `--out` directory: where every piece of evidence of one run lives, and how it is written.
//!
//! Files are written whole or not at all (temp file, fsync, rename), so an interrupted run
//! leaves only complete files and can be resumed from them.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;
use thiserror::Error;

use super::resolve::ResolvedCommit;
use crate::integrity::write_atomically;

/// The layout of one run's `--out` directory.
#[derive(Debug, Clone)]
pub struct OutDir {
    root: PathBuf,
}

/// Which run a `--out` directory holds the evidence of (`run.json`, written when it is claimed).
#[derive(Debug, Clone, Serialize)]
pub struct RunIdentity<'a> {
    /// The constitution profile.
    pub profile: &'a str,
    /// The candidate commit.
    pub candidate: &'a ResolvedCommit,
    /// The predecessor commit.
    pub predecessor: &'a ResolvedCommit,
}

/// Files and directories `oracle verify` writes at the top of `--out`; `stage-*` directories too.
const LAYOUT: [&str; 12] = [
    "run.json",
    "binding.json",
    "result.json",
    "entry.yaml",
    "report.md",
    "report.svg",
    "gate.json",
    "bench.json",
    "proof.json",
    "engines",
    "inputs",
    "shards",
];

/// Files that name the run they belong to, newest layout first (older oracles wrote no
/// `run.json`; their binding record and result name the same fields).
const IDENTITY_FILES: [&str; 3] = ["run.json", "binding.json", "result.json"];

/// Why a `--out` directory cannot be used for this run.
#[derive(Debug, Error)]
pub enum OutError {
    /// It holds another run's evidence.
    #[error(
        "--out {dir} holds the evidence of another run ({}); pass --fresh to discard it, or choose another --out",
        .differences.join("; ")
    )]
    Foreign {
        /// The directory.
        dir: PathBuf,
        /// `field is X there, Y here`, per differing field.
        differences: Vec<String>,
    },
    /// It holds a run's files but nothing says which run.
    #[error(
        "--out {dir} holds an earlier run's files but no record of which run they belong to; \
         pass --fresh to discard them, or choose another --out"
    )]
    Unrecorded {
        /// The directory.
        dir: PathBuf,
    },
    /// It holds files `oracle verify` does not write: it is not a verify directory at all.
    #[error(
        "--out {dir} holds files oracle verify does not write ({}); choose an empty or new directory \
         (--fresh only removes a verify run's own files)",
        .names.join(", ")
    )]
    Strangers {
        /// The directory.
        dir: PathBuf,
        /// The foreign entries' names.
        names: Vec<String>,
    },
    /// Reading, removing or creating failed.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The path at fault.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
}

impl From<crate::integrity::FileError> for OutError {
    fn from(error: crate::integrity::FileError) -> Self {
        Self::Io {
            path: error.path,
            source: error.reason,
        }
    }
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> OutError + '_ {
    move |source| OutError::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl OutDir {
    /// The layout at `root`; nothing is created until [`OutDir::claim`].
    #[must_use]
    pub fn at(root: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
        }
    }

    /// Makes the directory this run's: refuses one that holds another run's evidence (unless
    /// `fresh`, which first removes that run's files) or files `oracle verify` never writes;
    /// then creates the layout and records the run in `run.json`. The same run's directory is
    /// kept as it is, so that an interrupted run resumes from it.
    ///
    /// # Errors
    /// [`OutError`] naming the directory and what is wrong with it.
    pub fn claim(&self, identity: &RunIdentity<'_>, fresh: bool) -> Result<(), OutError> {
        let names = match fs::read_dir(&self.root) {
            Ok(entries) => entries
                .map(|entry| entry.map(|e| e.file_name().to_string_lossy().into_owned()))
                .collect::<io::Result<Vec<String>>>()
                .map_err(io_error(&self.root))?,
            Err(error) if error.kind() == io::ErrorKind::NotFound => Vec::new(),
            Err(error) => return Err(io_error(&self.root)(error)),
        };
        if !names.is_empty() {
            let mut strangers: Vec<String> = names
                .iter()
                .filter(|name| !LAYOUT.contains(&name.as_str()) && !name.starts_with("stage-"))
                .cloned()
                .collect();
            if !strangers.is_empty() {
                strangers.sort();
                return Err(OutError::Strangers {
                    dir: self.root.clone(),
                    names: strangers,
                });
            }
            let differences = match self.recorded_identity() {
                Some(recorded) => differences(&recorded, identity),
                None if fresh => Vec::new(),
                None => {
                    return Err(OutError::Unrecorded {
                        dir: self.root.clone(),
                    });
                }
            };
            if !differences.is_empty() && !fresh {
                return Err(OutError::Foreign {
                    dir: self.root.clone(),
                    differences,
                });
            }
            if fresh {
                for name in &names {
                    let path = self.root.join(name);
                    let removed = if path.is_dir() {
                        fs::remove_dir_all(&path)
                    } else {
                        fs::remove_file(&path)
                    };
                    removed.map_err(io_error(&path))?;
                }
            }
        }
        for dir in ["engines", "inputs"] {
            let path = self.root.join(dir);
            fs::create_dir_all(&path).map_err(io_error(&path))?;
        }
        let json = serde_json::to_vec_pretty(identity).expect("the identity serializes");
        let file = self.identity();
        Ok(write_atomically(&file, &json)?)
    }

    /// The first identity file that names profile and commits, as JSON.
    fn recorded_identity(&self) -> Option<Value> {
        IDENTITY_FILES.iter().find_map(|name| {
            let value: Value =
                serde_json::from_slice(&fs::read(self.root.join(name)).ok()?).ok()?;
            value.pointer("/candidate/commit")?.as_str()?;
            Some(value)
        })
    }

    /// The candidate and predecessor commits of the run the directory holds, if it names one.
    pub fn recorded_commits(&self) -> Option<(String, String)> {
        let recorded = self.recorded_identity()?;
        let commit = |pointer: &str| Some(recorded.pointer(pointer)?.as_str()?.to_owned());
        Some((commit("/candidate/commit")?, commit("/predecessor/commit")?))
    }

    /// Which run the directory holds (`run.json`).
    pub fn identity(&self) -> PathBuf {
        self.root.join("run.json")
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

/// How the recorded run differs from this one: `field is X there, Y here` per field.
fn differences(recorded: &Value, identity: &RunIdentity<'_>) -> Vec<String> {
    [
        ("profile", "/profile", identity.profile),
        ("candidate", "/candidate/commit", &identity.candidate.commit),
        (
            "predecessor",
            "/predecessor/commit",
            &identity.predecessor.commit,
        ),
    ]
    .into_iter()
    .filter_map(|(field, pointer, here)| {
        let there = recorded
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or("absent");
        (there != here).then(|| format!("{field} is {there} there, {here} here"))
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commit(id: char) -> ResolvedCommit {
        ResolvedCommit {
            commit: id.to_string().repeat(40),
            tree: "f".repeat(40),
            summary: String::new(),
            message: String::new(),
        }
    }

    #[test]
    fn an_out_of_another_run_is_refused_unless_fresh() {
        let dir = tempfile::tempdir().unwrap();
        let out = OutDir::at(&dir.path().join("out"));
        let (a, b, c) = (commit('a'), commit('b'), commit('c'));
        let run = |candidate, profile| RunIdentity {
            profile,
            candidate,
            predecessor: &b,
        };
        out.claim(&run(&a, "smoke"), false).unwrap();
        write_atomically(&out.entry(), b"the first run's entry").unwrap();
        out.claim(&run(&a, "smoke"), false)
            .expect("the same run resumes in its directory");
        assert!(out.entry().exists());
        let error = out.claim(&run(&c, "workstation"), false).unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains(&format!(
                "profile is smoke there, workstation here; candidate is {} there, {} here",
                a.commit, c.commit
            )),
            "{text}"
        );
        assert!(out.entry().exists(), "a refusal removes nothing");
        out.claim(&run(&c, "workstation"), true).unwrap();
        assert!(
            !out.entry().exists(),
            "--fresh discards the other run's evidence"
        );
        assert!(out.root().join("engines").is_dir());

        fs::write(out.root().join("notes.txt"), "mine").unwrap();
        for fresh in [false, true] {
            let error = out.claim(&run(&c, "workstation"), fresh).unwrap_err();
            assert!(
                matches!(&error, OutError::Strangers { names, .. } if names == &["notes.txt"]),
                "{error}"
            );
        }
        fs::remove_file(out.root().join("notes.txt")).unwrap();
        fs::remove_file(out.identity()).unwrap();
        write_atomically(&out.result(), b"{\"candidate\": null}").unwrap();
        assert!(matches!(
            out.claim(&run(&c, "workstation"), false),
            Err(OutError::Unrecorded { .. })
        ));
    }
}
