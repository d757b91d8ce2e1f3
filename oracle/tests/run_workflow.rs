//! `scripts/run-workflow.py`, the local runner of the pull-request workflow (docs/scaling.md):
//! it must be able to run every job and step of `verify.yml` and the workflow it calls, and must
//! refuse, naming the step, what it cannot run. A step added to the workflow that the runner
//! cannot run fails here, so the workflow and the runner do not drift apart.
//!
//! And the workflow run here: in a throwaway repository of the C engine fixture, under a
//! throwaway profile, a run that is cancelled after its first round is continued by the next
//! run from its last `out-N` (found and downloaded by the workflow's own `gh` step), an `out-N`
//! the oracle refuses is discarded for a fresh start only when it holds no game (one with games
//! fails the run), and a commit that changes only the
//! message — the same two binaries — continues the pairs of the earlier commit's run instead of
//! starting afresh (docs/ci-trust.md, "Continuing an earlier run").

use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::support::c_engine_fixture::{BOOK, ENGINE, MAKEFILE, bench_of, stronger_engine};
use crate::support::{ORACLE, commit_work_tree, git_in, repository_root};

/// The throwaway profile the workflow plays instead of `official`.
const PROFILE: &str = "workflow";

/// Who makes the throwaway repository's commits.
const MAINTAINER: &[(&str, &str)] = &[
    ("GIT_AUTHOR_NAME", "Maintainer"),
    ("GIT_AUTHOR_EMAIL", "maintainer@example.invalid"),
    ("GIT_COMMITTER_NAME", "Maintainer"),
    ("GIT_COMMITTER_EMAIL", "maintainer@example.invalid"),
];

/// The shards of `verify-round.yml`'s matrix.
const SHARDS: u64 = 8;

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

/// A throwaway repository: the C engine fixture set up by `oracle init` (its genesis committed),
/// a throwaway profile committed on top (the predecessor), and a change to the engine (the
/// candidate). In a directory the sandbox's unprivileged user can enter, with the build cache.
struct Throwaway {
    dir: tempfile::TempDir,
    candidate: String,
    predecessor: String,
}

impl Throwaway {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
        let throwaway = Self {
            dir,
            candidate: String::new(),
            predecessor: String::new(),
        };
        fs::create_dir_all(throwaway.repo().join("src")).unwrap();
        fs::create_dir(throwaway.cache()).unwrap();
        throwaway.git(&["init", "-q", "-b", "main"]);
        throwaway.commit(
            &[
                ("src/Makefile", MAKEFILE),
                ("src/engine.c", ENGINE),
                ("README.md", "A fixture engine.\n"),
            ],
            "engine\n\nBench: 1,000\n",
        );
        let book = throwaway.dir.path().join("openings.epd");
        fs::write(&book, BOOK).unwrap();
        let init = Command::new(ORACLE)
            .args(["init", "--repo"])
            .arg(throwaway.repo())
            .arg("--cache-dir")
            .arg(throwaway.cache())
            .args(["--bench", "bench ethereal", "--gate-symbol", "evaluate"])
            .args(["--option", "Hash=8", "--book"])
            .arg(&book)
            .output()
            .unwrap();
        assert!(init.status.success(), "{init:?}");
        throwaway.commit(&[], "register: genesis");
        let constitution = throwaway.with_profile();
        throwaway.commit(
            &[("constitution/constitution.yaml", &constitution)],
            "governance: a throwaway profile",
        );
        let changed = stronger_engine();
        throwaway.commit(
            &[("src/engine.c", &changed)],
            &format!(
                "eval: weigh the centre more\n\nBench: {}\n",
                bench_of(&changed)
            ),
        );
        Self {
            candidate: throwaway.git(&["rev-parse", "HEAD"]),
            predecessor: throwaway.git(&["rev-parse", "HEAD~1"]),
            ..throwaway
        }
    }

    fn repo(&self) -> PathBuf {
        self.dir.path().join("repo")
    }

    fn cache(&self) -> PathBuf {
        self.dir.path().join("cache")
    }

    /// The `--work` directory of the run called `name`.
    fn work(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn git(&self, args: &[&str]) -> String {
        git_in(&self.repo(), MAINTAINER, args)
    }

    fn commit(&self, files: &[(&str, &str)], message: &str) {
        commit_work_tree(&self.repo(), MAINTAINER, files, message);
    }

    /// The constitution `oracle init` wrote, with [`PROFILE`]: `smoke`'s first stage at one
    /// game at a time, a pair a shard a round (`batch_size` 1, the workflow's ROUND_MINUTES
    /// empty), narrow bounds and a minimum of 400 games, so that it stays undecided for as long
    /// as this test plays.
    fn with_profile(&self) -> String {
        let path = self.repo().join("constitution/constitution.yaml");
        let mut constitution: serde_norway::Value =
            serde_norway::from_str(&fs::read_to_string(path).unwrap()).unwrap();
        let mut profile = constitution["profiles"]["smoke"].clone();
        let stage = profile["stages"][0].clone();
        let stage_text = format!(
            "name: short\ntc: nodes=1000\nbook: {}\nbook_sha256: {}\nconcurrency: 1\n\
             min_games: 400\nmax_games: 1000\nbounds:\n  standard: [0.0, 2.0]\n  \
             randfall: [-2.0, 0.0]\n",
            stage["book"].as_str().unwrap(),
            stage["book_sha256"].as_str().unwrap()
        );
        profile["stages"] =
            serde_norway::Value::Sequence(vec![serde_norway::from_str(&stage_text).unwrap()]);
        profile["batch_size"] = 1.into();
        profile["description"] = "A throwaway profile for the workflow test.".into();
        constitution["profiles"]
            .as_mapping_mut()
            .unwrap()
            .insert(PROFILE.into(), profile);
        serde_norway::to_string(&constitution).unwrap()
    }

    /// `verify.yml` run here as `name` on the candidate, after the runs `previous` (oldest
    /// first), cancelled after its first round; its log (standard output and error).
    fn run(&self, name: &str, previous: &[&str]) -> String {
        self.run_head(name, &self.candidate, previous)
    }

    /// A commit of the candidate's tree on the candidate's parent whose message differs in its
    /// subject (its `Bench:` trailer kept): what a push that changes only the message makes.
    /// With the candidate's commit time, as `git commit --amend` keeps it (a build takes one fixed
    /// time whatever the commit's, so the binaries would be the same either way). On a branch of its own, as
    /// the earlier commit stays on `main`: both can be fetched.
    fn reworded(&self, subject: &str) -> String {
        let message = self.git(&["log", "-1", "--format=%B", &self.candidate]);
        let message = message.replacen("eval: weigh the centre more", subject, 1);
        let time = self.git(&["log", "-1", "--format=%cI", &self.candidate]);
        let same_time = [
            MAINTAINER,
            &[
                ("GIT_AUTHOR_DATE", time.as_str()),
                ("GIT_COMMITTER_DATE", time.as_str()),
            ],
        ]
        .concat();
        let tree = format!("{}^{{tree}}", self.candidate);
        let parent = format!("{}~1", self.candidate);
        let commit = git_in(
            &self.repo(),
            &same_time,
            &["commit-tree", &tree, "-p", &parent, "-m", &message],
        );
        self.git(&["branch", &format!("reworded-{}", &commit[..12]), &commit]);
        commit
    }

    /// `verify.yml` run here as `name` on the pull request's head `head`, as [`Self::run`].
    fn run_head(&self, name: &str, head: &str, previous: &[&str]) -> String {
        let (success, log) = self.run_head_ending(name, head, previous);
        assert!(success, "{name}: {log}");
        log
    }

    /// [`Self::run_head`], whether or not the run succeeds: whether it did, and its log.
    fn run_head_ending(&self, name: &str, head: &str, previous: &[&str]) -> (bool, String) {
        let mut command = Command::new("python3");
        command
            .arg(repository_root().join("scripts/run-workflow.py"))
            .arg(".github/workflows/verify.yml")
            .arg("--repo")
            .arg(self.repo())
            .args(["--head", head, "--base", &self.predecessor])
            .arg("--work")
            .arg(self.work(name))
            .args([
                "--env",
                &format!("PROFILE={PROFILE}"),
                "--env",
                "ROUND_MINUTES=",
            ])
            .arg("--env")
            .arg(format!("XDG_CACHE_HOME={}", self.cache().display()))
            .args(["--oracle", ORACLE, "--cancel-after", "round-1"])
            // This machine has bubblewrap; the action would install it with apt-get.
            .args(["--skip-action", "./.github/actions/sandbox"])
            .current_dir(repository_root());
        for run in previous {
            command.arg("--previous-run").arg(self.work(run));
        }
        let output = command.output().unwrap();
        let log = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        (output.status.success(), log)
    }

    /// The shard files of the run's artifact `out-1`: (shard, its result, its PGN).
    fn shards(&self, name: &str) -> Vec<(u64, Value, Vec<u8>)> {
        let dir = self.work(name).join("artifacts/out-1/shards/stage-1-short");
        (1..=SHARDS)
            .map(|shard| {
                let file = dir.join(format!("shard-{shard}-of-{SHARDS}.json"));
                let result = serde_json::from_slice(&fs::read(&file).unwrap()).unwrap();
                let pgn = fs::read(file.with_extension("pgn")).unwrap();
                (shard, result, pgn)
            })
            .collect()
    }

    /// Every pair index the run's `out-1` counts, in the shards' order.
    fn pairs(&self, name: &str) -> Vec<u64> {
        self.shards(name)
            .iter()
            .flat_map(|(_, result, _)| {
                let pairs = result["pairs"].as_array().unwrap();
                pairs.iter().map(|pair| pair["index"].as_u64().unwrap())
            })
            .collect()
    }

    /// A JSON file of the stage directory in the run's artifact `out-1`.
    fn stage_file(&self, name: &str, file: &str) -> Value {
        let path = self
            .work(name)
            .join("artifacts/out-1/stage-1-short")
            .join(file);
        serde_json::from_slice(&fs::read(&path).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// The pair indices the stage's state in the run's `out-1` counts: those taken over.
    fn taken(&self, name: &str) -> Vec<u64> {
        self.stage_file(name, "state.json")["pairs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|pair| pair["index"].as_u64().unwrap())
            .collect()
    }
}

/// The pairs `0..count`, each once.
fn each_once(pairs: &[u64], count: u64) -> bool {
    pairs.len() as u64 == count
        && pairs.iter().copied().collect::<BTreeSet<_>>().len() as u64 == count
        && pairs.iter().all(|&pair| pair < count)
}

#[test]
fn a_run_continues_from_the_last_out_of_the_previous_run_and_a_refused_one_without_games_starts_afresh()
 {
    // The shard jobs run the oracle with `sudo -E`, which the script runs as the command it
    // prefixes when it runs as root (as .ci/run does on this machine); under another user it
    // would be that user's real sudo, which this test does not assume.
    if fs::metadata("/proc/self").unwrap().uid() != 0 {
        eprintln!("skipped: the workflow's `sudo -E` steps run here as root only");
        return;
    }
    let throwaway = Throwaway::new();
    let (candidate, predecessor) = (&throwaway.candidate, &throwaway.predecessor);

    // Run 1 finds no earlier run, plays round 1 (a pair a shard) and is cancelled undecided.
    let log = throwaway.run("run-1", &[]);
    for expected in [
        format!("::: run 1: verify {candidate}"),
        format!(
            "no earlier run of this workflow on main {predecessor} bound the same two binaries"
        ),
        "and left an out-N: starting afresh".to_owned(),
        "8 contiguous pairs".to_owned(),
        "::: round-2: cancelled (--cancel-after round-1)".to_owned(),
    ] {
        assert!(log.contains(&expected), "{expected}: {log}");
    }
    assert!(each_once(&throwaway.pairs("run-1"), SHARDS), "{log}");

    // Run 2 continues from run 1's out-1: its round 1 is the stage's round 2, and none of run
    // 1's games is played again (each shard's PGN goes on from run 1's, whose games carry their
    // start times, and each shard has played two games a pair, no more).
    let log = throwaway.run("run-2", &["run-1"]);
    for expected in [
        format!("::: run 2: verify {candidate}"),
        "continuing from out-1 of run 1".to_owned(),
        "resuming: the binding of".to_owned(),
        "16 contiguous pairs".to_owned(),
    ] {
        assert!(log.contains(&expected), "{expected}: {log}");
    }
    assert!(each_once(&throwaway.pairs("run-2"), 2 * SHARDS), "{log}");
    for ((shard, _, first), (_, result, second)) in throwaway
        .shards("run-1")
        .into_iter()
        .zip(throwaway.shards("run-2"))
    {
        assert!(
            second.len() > first.len() && second.starts_with(&first),
            "shard {shard}: run 2's PGN does not go on from run 1's"
        );
        assert_eq!(result["games_played"], 4, "shard {shard}: {result}");
    }

    // A refused out without a game: run 2's out-1 with its games gone and its binding forged
    // (another predecessor tree). Run 3 takes the newest run's out, the oracle refuses it, and,
    // since no game of the measurement is lost, run 3 starts afresh from round 1. (A refused out
    // that holds games fails the run: the next test.)
    let forged = throwaway.work("run-2").join("artifacts/out-1");
    fs::remove_dir_all(forged.join("shards")).unwrap();
    if forged.join("stage-1-short").exists() {
        fs::remove_dir_all(forged.join("stage-1-short")).unwrap();
    }
    let binding_file = forged.join("binding.json");
    let mut binding: Value = serde_json::from_slice(&fs::read(&binding_file).unwrap()).unwrap();
    binding["predecessor"]["tree"] = "0".repeat(40).into();
    fs::write(&binding_file, serde_json::to_vec_pretty(&binding).unwrap()).unwrap();
    let log = throwaway.run("run-3", &["run-1", "run-2"]);
    for expected in [
        "::: run 3: verify",
        "continuing from out-1 of run 2",
        "::warning::the oracle refused out-1 of run 2, which holds no game: ",
        "predecessor.tree is 0000000000000000000000000000000000000000",
        "starting afresh",
        "8 contiguous pairs",
    ] {
        assert!(log.contains(expected), "{expected}: {log}");
    }
    assert!(each_once(&throwaway.pairs("run-3"), SHARDS), "{log}");
    // Every run names the measurement: runs 1 and 2 held every pair they found, and run 3,
    // which discarded a source without a game, lost nothing. A later run of the same binaries
    // goes on from run 3's pairs; had run 3 stayed unnamed, every later run would meet run 2's
    // refusal again and start afresh again.
    let measurements = |run: &str| -> Vec<String> {
        fs::read_dir(throwaway.work(run).join("artifacts"))
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with("measurement-"))
            .collect()
    };
    assert_eq!(measurements("run-1").len(), 1, "{log}");
    assert_eq!(measurements("run-1"), measurements("run-2"));
    assert_eq!(measurements("run-3"), measurements("run-2"), "{log}");
}

/// The review's finding: a push that changes only the commit message makes a new candidate
/// commit, and its run used to start the measurement from nothing. A measurement is named by its
/// two bound binaries: the run of the reworded commit takes over the pairs of the earlier
/// commit's run (which a push cancelled after its first round) and plays on from the first pair
/// not taken over, none of them twice; a third wording continues both, naming both runs.
#[test]
fn a_message_only_commit_continues_the_measurement_of_the_same_binaries() {
    if fs::metadata("/proc/self").unwrap().uid() != 0 {
        eprintln!("skipped: the workflow's `sudo -E` steps run here as root only");
        return;
    }
    let throwaway = Throwaway::new();
    let first = throwaway.candidate.clone();
    let log = throwaway.run("run-1", &[]);
    assert!(log.contains("8 contiguous pairs"), "{log}");
    assert!(each_once(&throwaway.pairs("run-1"), SHARDS), "{log}");

    let second = throwaway.reworded("eval: weigh the centre of the board more");
    assert_ne!(second, first);
    let log = throwaway.run_head("run-2", &second, &["run-1"]);
    for expected in [
        format!("::: run 2: verify {second}"),
        format!("taking over the pairs of out-1 of run 1 (verify {first}): the same two binaries"),
        format!(
            "8 pairs (16 games) of the same match: 8 by the run of {}",
            &first[..12]
        ),
        "round 1: every shard plays to its 1 pairs after the 8 pairs taken over".to_owned(),
        "16 contiguous pairs (8 taken over)".to_owned(),
    ] {
        assert!(log.contains(&expected), "{expected}: {log}");
    }
    assert!(!log.contains("::warning::"), "{log}");
    // The first run's pairs are this stage's state; the shards played only the pairs after them,
    // one each, so no pair was played twice.
    let taken = throwaway.taken("run-2");
    assert!(each_once(&taken, SHARDS), "{taken:?}");
    let played = throwaway.pairs("run-2");
    assert!(played.iter().all(|&pair| pair >= SHARDS), "{played:?}");
    assert!(each_once(&[taken, played].concat(), 2 * SHARDS), "{log}");
    for (shard, result, _) in throwaway.shards("run-2") {
        assert_eq!(result["games_played"], 2, "shard {shard}: {result}");
    }
    let adopted = throwaway.stage_file("run-2", "adopted.json");
    assert_eq!(adopted["pairs"], SHARDS, "{adopted}");
    assert_eq!(adopted["runs"][0]["candidate"], first.as_str(), "{adopted}");
    assert_eq!(adopted["runs"][0]["pairs"], SHARDS, "{adopted}");

    // A third wording continues the newest run of the same binaries, the second: the pairs of
    // both runs, each named with those it played.
    let third = throwaway.reworded("eval: weigh the central squares more");
    let log = throwaway.run_head("run-3", &third, &["run-1", "run-2"]);
    for expected in [
        format!("taking over the pairs of out-1 of run 2 (verify {second})"),
        "24 contiguous pairs (16 taken over)".to_owned(),
    ] {
        assert!(log.contains(&expected), "{expected}: {log}");
    }
    let taken = throwaway.taken("run-3");
    let played = throwaway.pairs("run-3");
    assert!(each_once(&[taken, played].concat(), 3 * SHARDS), "{log}");
    let adopted = throwaway.stage_file("run-3", "adopted.json");
    let runs: Vec<(&str, u64)> = adopted["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|run| {
            (
                run["candidate"].as_str().unwrap(),
                run["pairs"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        runs,
        [(first.as_str(), SHARDS), (second.as_str(), SHARDS)],
        "{adopted}"
    );

    // A measurement of the same binaries never starts afresh once it has games, nor when the
    // earlier run cannot be checked. Here the third run's stage, undecided, holds its pairs in
    // a state the oracle refuses (what a declared path changed between the two commits also
    // gives), so the refusal fails the run...
    let previous = ["run-1", "run-2", "run-3"];
    let state = throwaway
        .work("run-3")
        .join("artifacts/out-1/stage-1-short/state.json");
    let counted = fs::read(&state).unwrap();
    fs::write(&state, br#"{"forged": true}"#).unwrap();
    let fourth = throwaway.reworded("eval: weigh the middle of the board more");
    let (success, log) = throwaway.run_head_ending("run-4", &fourth, &previous);
    assert!(!success, "{log}");
    assert!(
        log.contains("which holds games of these two binaries (")
            && log.contains("stage-1-short/state.json"),
        "{log}"
    );
    assert!(!log.contains("starting afresh"), "{log}");
    fs::write(&state, counted).unwrap();
    // ... and so does an earlier candidate commit that can no longer be fetched (its branch
    // deleted, its objects pruned), whose declared path the oracle cannot read.
    throwaway.git(&["branch", "-D", &format!("reworded-{}", &third[..12])]);
    throwaway.git(&["reflog", "expire", "--expire=now", "--all"]);
    throwaway.git(&["gc", "--quiet", "--prune=now"]);
    let (success, log) = throwaway.run_head_ending("run-5", &fourth, &previous);
    assert!(!success, "{log}");
    assert!(
        log.contains(&format!("verify {third}, which cannot be fetched")),
        "{log}"
    );
    assert!(!log.contains("starting afresh"), "{log}");
}
