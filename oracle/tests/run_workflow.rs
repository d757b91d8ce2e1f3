//! `scripts/run-workflow.py`, the local runner of the pull-request workflow (docs/scaling.md):
//! it must be able to run every job and step of `verify.yml` and the workflow it calls, and must
//! refuse, naming the step, what it cannot run. A step added to the workflow that the runner
//! cannot run fails here, so the workflow and the runner do not drift apart.

use std::path::Path;
use std::process::{Command, Output};

use crate::support::repository_root;

fn check(workflow: &Path) -> Output {
    Command::new("python3")
        .arg(repository_root().join("scripts/run-workflow.py"))
        .arg("--check")
        .arg(workflow)
        .current_dir(repository_root())
        .output()
        .expect("python3 runs (with PyYAML, as .ci/run installs it)")
}

#[test]
fn every_step_of_the_pull_request_workflow_can_be_run_locally() {
    let output = check(Path::new(".github/workflows/verify.yml"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("verify.yml: every job and step can be run"),
        "{stdout}"
    );
}

#[test]
fn a_step_the_local_runner_cannot_run_fails_the_check_naming_it() {
    // The register's workflow is one: it reads the push event and deploys to GitHub Pages.
    let output = check(Path::new(".github/workflows/register.yml"));
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("cannot run: .github/workflows/register.yml: job "),
        "{stderr}"
    );

    // A new step in a copy of the workflow: an action, a context, a key the runner does not know.
    let workflow =
        std::fs::read_to_string(repository_root().join(".github/workflows/verify.yml")).unwrap();
    let cases = [
        (
            "      - uses: actions/checkout@",
            "      - uses: actions/setup-node@49933ea5288caeca8642d1e84afbd3f7d6820020 # v4.4.0\n      - uses: actions/checkout@",
            "action actions/setup-node is not one this script can run",
        ),
        (
            "  BASE_SHA: ${{ github.sha }}",
            "  BASE_SHA: ${{ github.ref }}",
            "`github.ref` is not a context this script knows",
        ),
        (
            "    runs-on: ubuntu-latest\n",
            "    runs-on: ubuntu-latest\n    container: debian:12\n",
            "key container is not one this script runs",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (from, to, why) in cases {
        assert!(workflow.contains(from), "{from}");
        let changed = dir.path().join("verify.yml");
        std::fs::write(&changed, workflow.replacen(from, to, 1)).unwrap();
        let output = check(&changed);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{why}: {stderr}");
        assert!(stderr.contains(why), "{why}: {stderr}");
    }
}
