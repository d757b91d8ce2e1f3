//! What the integration tests share: the real `oracle` binary and what one run of it returned,
//! the repository the tests live in, and the fixtures, one module each.

pub mod c_engine_fixture;
pub mod constitution_fixture;
pub mod fixture_repo;
pub mod register_fixture;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `oracle` binary Cargo built for these tests.
pub const ORACLE: &str = env!("CARGO_BIN_EXE_oracle");

/// What one `oracle` invocation returned.
#[derive(Debug)]
pub struct Run {
    /// Exit code.
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Run {
    /// stdout parsed as the one JSON object `--json` prints.
    #[must_use]
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|error| panic!("{error}: {self:?}"))
    }
}

impl From<Output> for Run {
    /// The output of an oracle that exited by itself (a signal is a failure of the test) and
    /// wrote text.
    fn from(output: Output) -> Self {
        Self {
            code: output
                .status
                .code()
                .unwrap_or_else(|| panic!("the oracle was ended by a signal: {}", output.status)),
            stdout: String::from_utf8(output.stdout).expect("the oracle's stdout is UTF-8"),
            stderr: String::from_utf8(output.stderr).expect("the oracle's stderr is UTF-8"),
        }
    }
}

/// Runs the real `oracle` binary with `args` and waits for it.
pub fn oracle(args: &[&str]) -> Run {
    Command::new(ORACLE)
        .args(args)
        .output()
        .expect("the oracle binary runs")
        .into()
}
/// Runs `git args…` in `dir` with `env` added to its environment and asserts that it succeeded;
/// its trimmed standard output.
pub fn git_in(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> String {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {output:?}");
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// Writes `files` (path, text) into the work tree at `dir`, with their directories, and commits
/// everything there with [`git_in`].
pub fn commit_work_tree(dir: &Path, env: &[(&str, &str)], files: &[(&str, &str)], message: &str) {
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    git_in(dir, env, &["add", "-A"]);
    git_in(dir, env, &["commit", "-q", "-m", message]);
}

/// The root of the repository these tests belong to (its scripts, workflows and engine).
#[must_use]
pub fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Whether the build sandbox's unprivileged user can enter `dir`: every directory above it lets
/// others through. The tests may run as root, whose private directories are closed to that user.
#[must_use]
pub fn enterable_by_the_sandbox(dir: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    dir.ancestors().all(|dir| {
        std::fs::metadata(dir).is_ok_and(|metadata| metadata.permissions().mode() & 0o001 != 0)
    })
}
