//! End-to-end tests of `oracle verify` on fixture repositories built here: a copy of the real
//! engine (with a shallow bench so that signatures are quick) and the same engine with its
//! queen and rook values crippled, a fixture constitution with a small node-limited profile,
//! and two tiny books. The real `oracle` binary builds, binds, gates, benches and plays.
//!
//! Builds are cached in the test target directory (or, where the build sandbox's user could not
//! enter it, in the system's temporary directory), so only the first run pays for them.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

use git2::{Oid, Repository, Signature};
use oracle::integrity::sha256_hex;
use serde_json::Value;

use crate::support::constitution_fixture::{
    ConstitutionFixture, FULL_RECIPE, ProfileFixture, StageFixture,
};

/// The games and builds of these tests share two cores: one scenario at a time.
static SERIAL: Mutex<()> = Mutex::new(());

const ORACLE: &str = env!("CARGO_BIN_EXE_oracle");

const BOOK_A: &str = "\
rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -
rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq -
rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq -
rnbqkbnr/ppp1pppp/8/3p4/3P4/8/PPP1PPPP/RNBQKBNR w KQkq -
rnbqkb1r/pppppppp/5n2/8/3P4/8/PPP1PPPP/RNBQKBNR w KQkq -
rnbqkbnr/pppp1ppp/4p3/8/4P3/8/PPPP1PPP/RNBQKBNR w KQkq -
rnbqkbnr/pp1ppppp/2p5/8/4P3/8/PPPP1PPP/RNBQKBNR w KQkq -
rnbqkbnr/pppppppp/8/8/2P5/8/PP1PPPPP/RNBQKBNR b KQkq -
";

const BOOK_B: &str = "\
rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq -
rnbqkbnr/pppppppp/8/8/8/5N2/PPPPPPPP/RNBQKB1R b KQkq -
rnbqkbnr/pppp1ppp/8/4p3/2P5/8/PP1PPPPP/RNBQKBNR w KQkq -
rnbqkbnr/ppp1pppp/3p4/8/4P3/8/PPPP1PPP/RNBQKBNR w KQkq -
rnbqkbnr/pppppp1p/6p1/8/4P3/8/PPPP1PPP/RNBQKBNR w KQkq -
rnbqkbnr/pppppppp/8/8/8/6P1/PPPPPP1P/RNBQKBNR b KQkq -
rnbqkbnr/pppppppp/8/8/5P2/8/PPPPP1PP/RNBQKBNR b KQkq -
rnbqkbnr/pppppppp/8/8/1P6/8/P1PPPPPP/RNBQKBNR b KQkq -
";

/// The call in the engine's evaluation that reads the network's output.
const NETWORK_OUTPUT: &str = ".output(own, other, bucket)";

/// [`NETWORK_OUTPUT`] less 3000 cp a queen and 1500 cp a rook of the side to move's surplus, so
/// that queens and rooks are worth less than nothing whatever the network values them at (with
/// 1000 cp, the third network's value of a queen against a knight and pawn still kept the queen
/// off a pawn-defended knight at 2000 nodes).
const CRIPPLED_NETWORK_OUTPUT: &str = concat!(
    ".output(own, other, bucket).saturating_sub({ ",
    "let count = |color: Color, kind| popcnt::popcount(position.pieces(color, kind)); ",
    "let (us, them) = (position.side, position.side.flip()); ",
    "3000 * (count(us, crate::chess::types::QUEEN) - count(them, crate::chess::types::QUEEN)) ",
    "+ 1500 * (count(us, crate::chess::types::ROOK) - count(them, crate::chess::types::ROOK)) })"
);

/// The subject of the fixture's commit that cripples the engine ([`Fixture::cripple`]).
const CRIPPLE_SUBJECT: &str = "eval: value queens and rooks below nothing";

/// The line of the engine's time manager that budgets a move from the clock.
const MOVE_BUDGET: &str = "let base = usable / mtg + inc * params.tm_inc_pct as u64 / 100;";

/// [`MOVE_BUDGET`] cut to a fiftieth: the engine answers almost at once at a clock and searches
/// exactly as before at a node limit.
const CRIPPLED_MOVE_BUDGET: &str =
    "let base = (usable / mtg + inc * params.tm_inc_pct as u64 / 100) / 50;";

/// A Randfall proof the crippled engine fails: it takes a pawn-defended knight with its queen.
const PROOF: &str = "kind: bestmove\nnodes: 2000\npositions:\n  - '4k3/8/4p3/3n4/8/8/8/3QK3 w - - am Qxd5; id \"queen for knight\";'\n";

/// A fixture constitution: the real build recipe and gate, small node-limited profiles.
/// Their bounds are wide ([0, 150] nElo) so that a change worth hundreds of nElo is decided
/// within a few batches; the stages still follow the official shape (book A, then book B).
/// `smoke` does not bind, `fixture` does (entries can be appended and replayed),
/// `long-minimum` needs 40 games per stage, long enough to be interrupted, and `clock` adds a
/// third stage at 1+0.01 seconds, as the workstation profile does (Article 2.5).
fn constitution() -> String {
    let profile = |name, binding, description, min_games| ProfileFixture {
        name,
        binding,
        description,
        error_rate: 0.1,
        batch_size: 2,
        adjudicated: true,
        stages: [
            ("short", "nodes=600", "books/book-a.epd", BOOK_A),
            ("long", "nodes=900", "books/book-b.epd", BOOK_B),
        ]
        .into_iter()
        .map(|(name, tc, book, text)| StageFixture {
            name,
            tc,
            book,
            book_sha256: sha256_hex(text.as_bytes()),
            min_games,
            max_games: 80,
            standard: [0.0, 150.0],
            randfall: [-150.0, 0.0],
        })
        .collect(),
    };
    let mut clock = profile(
        "clock",
        true,
        "the fixture stages, then one at a clock, which sees time management",
        8,
    );
    clock.stages.push(StageFixture {
        name: "clock",
        tc: "\"1+0.01\"",
        book: "books/book-a.epd",
        book_sha256: sha256_hex(BOOK_A.as_bytes()),
        min_games: 8,
        max_games: 80,
        standard: [0.0, 150.0],
        randfall: [-150.0, 0.0],
    });
    ConstitutionFixture {
        version: 3,
        identical_binaries: true,
        profile_overrides: FULL_RECIPE,
        extra_rustflags: true,
        engine: None,
        profiles: vec![
            clock,
            profile(
                "smoke",
                false,
                "fixture profile for the end-to-end tests",
                8,
            ),
            profile(
                "long-minimum",
                false,
                "the smoke stages with a minimum of 40 games, long enough to be interrupted",
                40,
            ),
            profile(
                "fixture",
                true,
                "the same stages, binding, so that entries can be appended and replayed",
                8,
            ),
        ],
    }
    .yaml()
}

/// The workspace around the engine copy: engine only, no dependencies, the real profile.
const WORKSPACE: &str = r#"[workspace]
resolver = "3"
members = ["engine"]

[workspace.package]
version = "0.1.0"
edition = "2024"
license = "GPL-3.0-or-later"
rust-version = "1.95"

[profile.release]
lto = true
codegen-units = 1
panic = "abort"
debug = false
strip = false
incremental = false
"#;

const LOCKFILE: &str = "# This file is automatically @generated by Cargo.\n# It is not intended for manual editing.\nversion = 4\n\n[[package]]\nname = \"coherent\"\nversion = \"0.1.0\"\n";

/// The build cache shared by every test run: in the test target directory, unless the
/// sandbox's unprivileged build user could not enter it there (the clone lies under a private
/// directory such as `mktemp -d` or `/root`, and the tests run as root); then a folder of the
/// system's temporary directory named after the target directory, so reruns still reuse it.
fn build_cache() -> PathBuf {
    use std::hash::{Hash, Hasher};
    use std::os::unix::fs::PermissionsExt;
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let enterable = target.ancestors().all(|dir| {
        fs::metadata(dir).is_ok_and(|metadata| metadata.permissions().mode() & 0o001 != 0)
    });
    if enterable {
        return target.join("verify-build-cache");
    }
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    target.hash(&mut hasher);
    std::env::temp_dir().join(format!(
        "coherent-verify-build-cache-{:016x}",
        hasher.finish()
    ))
}

/// A fixture repository and the build cache shared by every test run.
struct Fixture {
    dir: tempfile::TempDir,
    repo: Repository,
    cache: PathBuf,
}

impl Fixture {
    /// A repository whose first commit holds the engine, the constitution, the books and an
    /// empty register.
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        let engine = Path::new(env!("CARGO_MANIFEST_DIR")).join("../engine");
        copy_tree(&engine.join("src"), &dir.path().join("engine/src"));
        fs::copy(
            engine.join("Cargo.toml"),
            dir.path().join("engine/Cargo.toml"),
        )
        .unwrap();
        let fixture = Fixture {
            dir,
            repo,
            cache: build_cache(),
        };
        // A shallow bench keeps the signature step fast; it is still the engine's own search.
        fixture.edit(
            "engine/src/bench.rs",
            "pub const BENCH_DEPTH: i32 = 10;",
            "pub const BENCH_DEPTH: i32 = 5;",
        );
        fixture.write("Cargo.toml", WORKSPACE);
        fixture.write("Cargo.lock", LOCKFILE);
        fixture.write(
            "rust-toolchain.toml",
            "[toolchain]\nchannel = \"1.95.0\"\nprofile = \"minimal\"\n",
        );
        fixture.write("constitution/constitution.yaml", &constitution());
        fixture.write("books/book-a.epd", BOOK_A);
        fixture.write("books/book-b.epd", BOOK_B);
        fixture.write("register/.keep", "");
        fixture.write("engine/proofs/hanging-queen.yaml", PROOF);
        fixture.commit("genesis: the engine as it stands");
        fixture
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn write(&self, file: &str, text: &str) {
        let path = self.path().join(file);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    fn edit(&self, file: &str, from: &str, to: &str) {
        let path = self.path().join(file);
        let text = fs::read_to_string(&path).unwrap();
        assert!(
            text.contains(from),
            "{file} no longer contains `{from}`: update the fixture"
        );
        fs::write(path, text.replacen(from, to, 1)).unwrap();
    }

    /// The engine's queen and rook worth less than nothing: it gives them away. The edit is to the
    /// code that reads the network's output, not to the (retrained, replaced) network file.
    fn cripple(&self) {
        self.edit(
            "engine/src/eval/mod.rs",
            NETWORK_OUTPUT,
            CRIPPLED_NETWORK_OUTPUT,
        );
    }

    /// The engine spends a fiftieth of its usual time per move at a clock; nothing else changes.
    fn cripple_clock(&self) {
        self.edit(
            "engine/src/search/time.rs",
            MOVE_BUDGET,
            CRIPPLED_MOVE_BUDGET,
        );
    }

    /// Undoes [`Fixture::cripple_clock`], byte for byte.
    fn restore_clock(&self) {
        self.edit(
            "engine/src/search/time.rs",
            CRIPPLED_MOVE_BUDGET,
            MOVE_BUDGET,
        );
    }

    /// Undoes [`Fixture::cripple`], byte for byte.
    fn restore(&self) {
        self.edit(
            "engine/src/eval/mod.rs",
            CRIPPLED_NETWORK_OUTPUT,
            NETWORK_OUTPUT,
        );
    }

    /// Registers HEAD as the genesis entry (its binary `binary_sha256`, its bench `bench`) and
    /// commits the entry; the commit's id.
    fn register_genesis(&self, binary_sha256: &str, bench: u64) -> Oid {
        let genesis = self.repo.head().unwrap().peel_to_commit().unwrap();
        self.oracle(&[
            "register",
            "genesis",
            "--commit",
            &genesis.id().to_string(),
            "--tree",
            &genesis.tree_id().to_string(),
            "--binary-sha256",
            binary_sha256,
            "--bench",
            &bench.to_string(),
            "--repo",
            &self.path().display().to_string(),
        ]);
        self.commit("register: genesis T-0001")
    }

    /// A genesis entry with a placeholder binary: enough for a binding run to pass step 1 in
    /// tests that end before anything is built.
    fn register_placeholder_genesis(&self) {
        self.register_genesis(&"a".repeat(64), 1);
    }

    /// Commits a crippled engine, then the candidate that restores it (both with their `Bench:`
    /// trailers): a candidate far stronger than its predecessor; its full commit id.
    fn stronger_than_its_predecessor(&self) -> String {
        self.cripple();
        let (crippled_bench, _) = self.bench_of_worktree();
        self.commit(&format!("{CRIPPLE_SUBJECT}\n\nBench: {crippled_bench}\n"));
        self.restore();
        let (normal_bench, _) = self.bench_of_worktree();
        self.commit(&format!(
            "eval: restore queen and rook values\n\nBench: {normal_bench}\n"
        ))
        .to_string()
    }

    /// A commit of `tree` on `parent` that no branch points to (a sibling of HEAD).
    fn commit_on(&self, parent: Oid, tree: Oid, message: &str) -> Oid {
        let signature = Signature::now("Fixture", "fixture@example.invalid").unwrap();
        let parent = self.repo.find_commit(parent).unwrap();
        let tree = self.repo.find_tree(tree).unwrap();
        self.repo
            .commit(None, &signature, &signature, message, &tree, &[&parent])
            .unwrap()
    }

    /// Commits the whole work tree on HEAD.
    fn commit(&self, message: &str) -> Oid {
        let mut index = self.repo.index().unwrap();
        index
            .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
            .unwrap();
        index.write().unwrap();
        let tree = self.repo.find_tree(index.write_tree().unwrap()).unwrap();
        let signature = Signature::now("Fixture", "fixture@example.invalid").unwrap();
        let parent = self.repo.head().ok().and_then(|h| h.peel_to_commit().ok());
        let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
        self.repo
            .commit(
                Some("HEAD"),
                &signature,
                &signature,
                message,
                &tree,
                &parents,
            )
            .unwrap()
    }

    /// The bench signature of the work tree as it would be committed (built by the oracle,
    /// through a scratch commit with the same tree; the build cache is keyed by tree).
    fn bench_of_worktree(&self) -> (u64, String) {
        let mut index = self.repo.index().unwrap();
        index
            .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
            .unwrap();
        let tree = self.repo.find_tree(index.write_tree().unwrap()).unwrap();
        let signature = Signature::now("Fixture", "fixture@example.invalid").unwrap();
        let scratch = self
            .repo
            .commit(None, &signature, &signature, "scratch", &tree, &[])
            .unwrap();
        let built = json(&self.oracle(&[
            "build",
            &scratch.to_string(),
            "--repo",
            &self.path().display().to_string(),
            "--cache-dir",
            &self.cache.display().to_string(),
            "--json",
        ]));
        let binary = built["binary"].as_str().unwrap().to_owned();
        let bench = json(&self.oracle(&["bench", &binary, "--json"]));
        (
            bench["nodes"].as_u64().unwrap(),
            built["sha256"].as_str().unwrap().to_owned(),
        )
    }

    fn oracle(&self, args: &[&str]) -> Output {
        let output = Command::new(ORACLE).args(args).output().unwrap();
        assert!(
            output.status.success(),
            "oracle {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        output
    }

    /// Runs `oracle verify REV --profile smoke --json` into `out`; returns (exit code, result).
    fn verify(&self, rev: &str, out: &Path) -> (i32, Value, String) {
        self.verify_with(rev, out, &["--profile", "smoke"])
    }

    /// Runs `oracle verify REV --profile smoke EXTRA… --json` into `out`.
    fn verify_smoke_with(&self, rev: &str, out: &Path, extra: &[&str]) -> (i32, Value, String) {
        self.verify_with(rev, out, &[&["--profile", "smoke"][..], extra].concat())
    }

    /// Plans `rev`'s smoke stages into `out` (`--no-play`) and plays stage 1 as the only shard
    /// (`--shard 1/1`), as a fleet's round does; both must succeed.
    fn play_one_shard(&self, rev: &str, out: &Path) {
        for extra in [&["--no-play"][..], &["--shard", "1/1"]] {
            let (code, _, stderr) = self.verify_smoke_with(rev, out, extra);
            assert_eq!(code, 0, "{stderr}");
        }
    }

    /// Runs `oracle verify REV ARGS… --json` into `out`.
    fn verify_with(&self, rev: &str, out: &Path, args: &[&str]) -> (i32, Value, String) {
        let output = Command::new(ORACLE)
            .args(["verify", rev, "--json"])
            .args(args)
            .arg("--repo")
            .arg(self.path())
            .arg("--out")
            .arg(out)
            .arg("--cache-dir")
            .arg(&self.cache)
            .env_remove("GITHUB_STEP_SUMMARY")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        eprintln!("oracle verify {rev}:\n{stderr}");
        assert_eq!(
            output.stdout.iter().filter(|&&b| b == b'\n').count(),
            1,
            "verify --json prints one line like every other command"
        );
        let result: Value = serde_json::from_slice(&output.stdout)
            .unwrap_or_else(|e| panic!("verify printed no JSON ({e}); stderr:\n{stderr}"));
        if result["report"].is_null() {
            // Refused at step 1, before --out was this run's: nothing of it is written there.
            assert_eq!(result["failure"]["step"], "resolve", "{result:#}");
        } else {
            let on_disk: Value =
                serde_json::from_slice(&fs::read(out.join("result.json")).unwrap()).unwrap();
            assert_eq!(result, on_disk, "--json and result.json must agree");
            assert!(Path::new(result["report"]["markdown"].as_str().unwrap()).exists());
        }
        (output.status.code().unwrap(), result, stderr)
    }
    /// Starts `oracle verify REV --profile long-minimum` into `out` and kills it (-9) once
    /// `pairs` pairs of stage 1 are on disk (the stage needs at least 20); returns them.
    fn verify_killed(&self, rev: &str, out: &Path, pairs: usize) -> Vec<Value> {
        let state = out.join("stage-1-short/state.json");
        let mut child = Command::new(ORACLE)
            .args([
                "verify",
                rev,
                "--profile",
                "long-minimum",
                "--json",
                "--repo",
            ])
            .arg(self.path())
            .arg("--out")
            .arg(out)
            .arg("--cache-dir")
            .arg(&self.cache)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while counted_pairs(&state).len() < pairs {
            assert!(
                std::time::Instant::now() < deadline,
                "no pairs recorded in time"
            );
            assert!(
                child.try_wait().unwrap().is_none(),
                "verify ended before it was killed"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        counted_pairs(&state)
    }
}

/// The pairs a runner state file has counted (none when it does not exist yet).
fn counted_pairs(path: &Path) -> Vec<Value> {
    fs::read(path)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
        .map(|s| s["pairs"].as_array().cloned().unwrap_or_default())
        .unwrap_or_default()
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Every game of every stage started after both binaries were bound.
fn assert_bound_before_games(result: &Value, out: &Path) {
    let bound = result["binding"]["bound_at_unix_ms"].as_u64().unwrap();
    let stages = result["stages"].as_array().unwrap();
    assert!(!stages.is_empty());
    for stage in stages {
        let started = stage["started_at_unix_ms"].as_u64().unwrap();
        assert!(
            bound < started,
            "bound at {bound}, stage started at {started}"
        );
    }
    for entry in fs::read_dir(out).unwrap() {
        let stage_dir = entry.unwrap().path();
        let pgn = stage_dir.join("games.pgn");
        if pgn.exists() {
            let written = fs::metadata(&pgn).unwrap().modified().unwrap();
            let ms = written
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_millis() as u64;
            assert!(bound <= ms, "{} written before the binding", pgn.display());
            assert!(fs::read_to_string(&pgn).unwrap().contains("[Result "));
        }
    }
}

fn step_names(result: &Value) -> Vec<(String, String)> {
    result["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let step = match &s["step"] {
                Value::String(name) => name.clone(),
                other => other.to_string(),
            };
            (step, s["status"].as_str().unwrap().to_owned())
        })
        .collect()
}

#[test]
fn much_stronger_candidate_is_a_gewinn_and_much_weaker_is_abgelehnt() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    fixture.cripple();
    let (crippled_bench, crippled_sha256) = fixture.bench_of_worktree();
    let weaker = fixture.commit(&format!("{CRIPPLE_SUBJECT}\n\nBench: {crippled_bench}\n"));
    let out = tempfile::tempdir().unwrap();
    let repo = fixture.path().display().to_string();
    // The crippled engine is the register's current engine (chain of custody: a binding run
    // judges a change against it), registered on main before the change that restores it.
    let registered = fixture.register_genesis(&crippled_sha256, crippled_bench);
    fixture.restore();
    let (normal_bench, _) = fixture.bench_of_worktree();
    let stronger = fixture.commit(&format!(
        "eval: restore queen and rook values\n\nBench: {normal_bench}\n"
    ));
    let restored_tree = fixture.repo.revparse_single("HEAD^{tree}").unwrap().id();

    // Much stronger than its predecessor (the crippled engine): Gewinn, exit 0, appended under
    // the binding fixture profile.
    let gewinn_out = out.path().join("gewinn");
    let (code, result, stderr) = fixture.verify_with(
        &stronger.to_string(),
        &gewinn_out,
        &["--profile", "fixture", "--append"],
    );
    assert_eq!(code, 0, "{stderr}\n{result:#}");
    assert_eq!(result["status"], "accepted");
    assert_eq!(result["verdict"], "gewinn");
    assert_eq!(result["predecessor"]["commit"], registered.to_string());
    assert_eq!(result["binding"]["predecessor"]["sha256"], crippled_sha256);
    let stages = result["stages"].as_array().unwrap();
    assert_eq!(stages.len(), 2);
    for stage in stages {
        assert_eq!(stage["record"]["state"], "accept_h1");
        assert!(stage["record"]["nelo"].as_f64().unwrap() > 150.0);
    }
    assert_bound_before_games(&result, &gewinn_out);
    let entry = fs::read_to_string(gewinn_out.join("entry.yaml")).unwrap();
    assert!(entry.contains("verdict: gewinn"), "{entry}");
    let report = fs::read_to_string(gewinn_out.join("report.md")).unwrap();
    assert!(report.starts_with("# oracle verify: Gewinn"), "{report}");
    assert!(
        fs::read_to_string(gewinn_out.join("report.svg"))
            .unwrap()
            .contains("<polyline")
    );
    for line in ["[1/7]", "[3/7]", "[4/7]", "[6/7]", "[7/7]"] {
        assert!(stderr.contains(line), "step {line} not reported:\n{stderr}");
    }
    assert_eq!(result["appended"], "T-0002");
    let verified = json(&fixture.oracle(&["register", "verify", "--repo", &repo, "--json"]));
    assert_eq!(verified["ok"], true, "{verified}");
    assert_eq!(verified["n"], 2);

    // The auditor's replay rebuilds both recorded commits, re-gates, re-benches and
    // recomputes every statistic: every check passes.
    let replay =
        json(&fixture.oracle(&["register", "replay", "T-0002", "--repo", &repo, "--json"]));
    assert_eq!(replay["ok"], true, "{replay:#}");
    let names: Vec<&str> = replay["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    for name in [
        "rebuild candidate",
        "rebuild predecessor",
        "gate",
        "bench candidate",
        "bench predecessor",
        "verdict",
    ] {
        assert!(names.contains(&name), "replay lacks `{name}`: {names:?}");
    }

    // Much weaker than its predecessor: stage 1 accepts H0, stage 2 is not run; Abgelehnt, exit 1.
    let abgelehnt_out = out.path().join("abgelehnt");
    let (code, result, stderr) = fixture.verify(&weaker.to_string(), &abgelehnt_out);
    assert_eq!(code, 1, "{stderr}\n{result:#}");
    assert_eq!(result["status"], "rejected");
    assert_eq!(result["verdict"], "abgelehnt");
    let stages = result["stages"].as_array().unwrap();
    assert_eq!(stages.len(), 1);
    assert_eq!(stages[0]["record"]["state"], "accept_h0");
    assert!(stages[0]["record"]["nelo"].as_f64().unwrap() < -150.0);
    assert_bound_before_games(&result, &abgelehnt_out);
    let entry = fs::read_to_string(abgelehnt_out.join("entry.yaml")).unwrap();
    assert!(
        entry.contains("verdict: abgelehnt") && entry.contains("state: not_run"),
        "{entry}"
    );

    // The same restoration declared as a Randfall: the proof fails on the crippled predecessor
    // and passes on the candidate, non-regression holds, the loss tolerance holds: Korrektur.
    let randfall = fixture.commit_on(
        registered,
        restored_tree,
        &format!(
            "eval: a queen is worth more than a knight\n\nBench: {normal_bench}\nOracle-Path: randfall\nOracle-Proof: engine/proofs/hanging-queen.yaml\n"
        ),
    );
    // A reviewer other than the author confirms it (Annex A3.3); the entry records it.
    let korrektur_out = out.path().join("korrektur");
    let confirmation = out.path().join("confirmation.yaml");
    fs::write(
        &confirmation,
        confirmation_text(
            &randfall.to_string(),
            &sha256_hex(PROOF.as_bytes()),
            REVIEWER,
        ),
    )
    .unwrap();
    let (code, korrektur, stderr) = fixture.verify_with(
        &randfall.to_string(),
        &korrektur_out,
        &[
            "--profile",
            "smoke",
            "--confirmation",
            confirmation.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{stderr}\n{korrektur:#}");
    assert_eq!(korrektur["verdict"], "korrektur");
    assert_eq!(korrektur["path"], "randfall");
    assert_eq!(korrektur["confirmation"]["confirmed_by"], REVIEWER);
    let entry = fs::read_to_string(korrektur_out.join("entry.yaml")).unwrap();
    assert!(
        entry.contains("predecessor: fail") && entry.contains("candidate: pass"),
        "{entry}"
    );
    let confirmation_bytes = fs::read(&confirmation).unwrap();
    let recorded = oracle::governance::entry::Entry::parse(entry.as_bytes())
        .unwrap()
        .confirmation
        .unwrap_or_else(|| panic!("no confirmation in the entry:\n{entry}"));
    assert_eq!(recorded.confirmed_by, REVIEWER);
    assert_eq!(recorded.proof_sha256.as_str(), sha256_hex(PROOF.as_bytes()));
    assert_eq!(
        recorded.file_sha256.as_str(),
        sha256_hex(&confirmation_bytes)
    );
    assert_eq!(
        recorded.statements.named().map(|(_, text)| text.to_owned()),
        [
            "The predecessor takes the knight with its queen; the candidate does not.",
            "Hanging-queen captures defended by a pawn.",
            "A documented bug: the queen was valued like a pawn.",
        ]
    );
    assert_eq!(
        fs::read(korrektur_out.join("inputs/confirmation.yaml")).unwrap(),
        confirmation_bytes
    );
    let report = fs::read_to_string(korrektur_out.join("report.md")).unwrap();
    assert!(
        report.contains("## Independent confirmation (Annex A3.3)"),
        "{report}"
    );
    assert!(entry.contains("claimed_gain_nelo: 0.0"), "{entry}");
    assert_bound_before_games(&korrektur, &korrektur_out);

    // Verifying again from the same --out replays nothing: the binding and the stage are kept.
    let (code, again, _) = fixture.verify(&weaker.to_string(), &abgelehnt_out);
    assert_eq!(code, 1);
    assert_eq!(again["binding"], result["binding"]);
    assert_eq!(again["stages"][0]["record"], result["stages"][0]["record"]);
}

#[test]
fn wrong_bench_trailer_is_an_error_before_any_game() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    fixture.cripple();
    let candidate = fixture.commit("eval: cheaper pieces\n\nBench: 12345\n");
    let out = tempfile::tempdir().unwrap();
    let (code, result, stderr) = fixture.verify(&candidate.to_string(), out.path());
    assert_eq!(code, 2, "{stderr}\n{result:#}");
    assert_eq!(result["status"], "error");
    assert_eq!(result["failure"]["step"], "bench");
    let why = result["failure"]["why"].as_str().unwrap();
    assert!(why.contains("`Bench: 12345`"), "{why}");
    assert!(
        result["reason"]
            .as_str()
            .unwrap()
            .contains("step 4 (bench) failed")
    );
    assert!(
        out.path().join("binding.json").exists(),
        "bound before the bench"
    );
    assert!(result["stages"].as_array().unwrap().is_empty());
    let played: Vec<_> = fs::read_dir(out.path())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("stage-"))
        .collect();
    assert!(played.is_empty(), "no stage may start after a bench error");
    assert!(!out.path().join("entry.yaml").exists());
    let steps = step_names(&result);
    assert_eq!(
        steps.last().unwrap(),
        &("bench".to_owned(), "failed".to_owned())
    );

    // Another candidate in the same --out is refused before anything of it is written there,
    // naming what differs; `--fresh` discards the first run's evidence and starts over.
    let report = fs::read(out.path().join("report.md")).unwrap();
    fixture.restore();
    let other = fixture.commit("eval: the pieces as they were\n\nBench: 54321\n");
    let (code, refused, stderr) = fixture.verify(&other.to_string(), out.path());
    assert_eq!(code, 2, "{stderr}\n{refused:#}");
    let why = refused["failure"]["why"].as_str().unwrap();
    assert!(
        why.contains("holds the evidence of another run")
            && why.contains(&format!("candidate is {candidate} there, {other} here"))
            && why.contains("--fresh"),
        "{why}"
    );
    assert!(refused["report"].is_null(), "{refused:#}");
    assert_eq!(fs::read(out.path().join("report.md")).unwrap(), report);
    let (code, fresh, stderr) = fixture.verify_with(
        &other.to_string(),
        out.path(),
        &["--profile", "smoke", "--fresh"],
    );
    assert_eq!(code, 2, "{stderr}\n{fresh:#}");
    assert_eq!(fresh["failure"]["step"], "bench", "{fresh:#}");
    assert_eq!(fresh["candidate"]["commit"], other.to_string());
    let binding: Value =
        serde_json::from_slice(&fs::read(out.path().join("binding.json")).unwrap()).unwrap();
    assert_eq!(binding["candidate"]["commit"], other.to_string());
}

/// `--checks-only` runs every check before the first game on a real change (both built twice and
/// bound, the gate, the bench against the trailer) and stops: no stage, no verdict, no entry;
/// with `--append` it is refused.
#[test]
fn checks_only_stops_before_the_first_game() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    fixture.cripple();
    let (bench, _) = fixture.bench_of_worktree();
    let candidate = fixture
        .commit(&format!("eval: cheaper pieces\n\nBench: {bench}\n"))
        .to_string();
    let out = tempfile::tempdir().unwrap();
    let (code, result, stderr) = fixture.verify_with(
        &candidate,
        out.path(),
        &["--profile", "fixture", "--checks-only"],
    );
    assert_eq!(code, 0, "{stderr}\n{result:#}");
    assert_eq!(result["status"], "checked", "{result:#}");
    assert!(result["verdict"].is_null(), "{result:#}");
    let reason = result["reason"].as_str().unwrap();
    assert!(
        reason.contains(&format!("bench ({bench} nodes")) && reason.contains("no game played"),
        "{reason}"
    );
    let steps = step_names(&result);
    assert!(
        steps.contains(&("bench".to_owned(), "ok".to_owned())),
        "{steps:?}"
    );
    assert!(
        !steps.iter().any(|(step, _)| step.starts_with("stage")),
        "{steps:?}"
    );
    assert!(out.path().join("binding.json").exists());
    assert!(!out.path().join("entry.yaml").exists());
    assert!(result["stages"].as_array().unwrap().is_empty());
    let stages = fs::read_dir(out.path())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("stage-"))
        .count();
    assert_eq!(stages, 0, "no stage may start under --checks-only");

    let refused = Command::new(ORACLE)
        .args([
            "verify",
            &candidate,
            "--profile",
            "fixture",
            "--checks-only",
            "--append",
        ])
        .arg("--repo")
        .arg(fixture.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--checks-only") && stderr.contains("--append"),
        "{stderr}"
    );
}

/// Article 2.4: a comment-only engine change builds to the predecessor's exact binary; it plays
/// no game, its verdict is Gleich (exit 0), and the register takes it: `register verify` and
/// `register replay` check that both recorded binaries are the same and rebuild to it.
#[test]
fn a_bit_identical_engine_change_is_gleich_without_games() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    let repo = fixture.path().display().to_string();
    let (bench, sha256) = fixture.bench_of_worktree();
    fixture.register_genesis(&sha256, bench);
    // At the end of the file: a comment that moved later lines would change the panic locations
    // compiled into the binary.
    let lib = fs::read_to_string(fixture.path().join("engine/src/lib.rs")).unwrap();
    fixture.write(
        "engine/src/lib.rs",
        &format!("{lib}\n// The engine's modules, as the crate root lists them.\n"),
    );
    let comment = fixture
        .commit(&format!("lib: a comment\n\nBench: {bench}\n"))
        .to_string();
    let dir = tempfile::tempdir().unwrap();
    for (profile, out) in [
        ("smoke", dir.path().join("smoke")),
        ("fixture", dir.path().join("fixture")),
    ] {
        let mut args = vec!["--profile", profile];
        if profile == "fixture" {
            args.push("--append");
        }
        let (code, result, stderr) = fixture.verify_with(&comment, &out, &args);
        assert_eq!(code, 0, "{stderr}\n{result:#}");
        assert_eq!(result["status"], "accepted");
        assert_eq!(result["verdict"], "gleich");
        assert!(
            result["reason"]
                .as_str()
                .unwrap()
                .starts_with("Gleich: the candidate's binary is bit-identical"),
            "{result:#}"
        );
        assert_eq!(result["binding"]["candidate"]["sha256"], sha256);
        assert_eq!(result["binding"]["predecessor"]["sha256"], sha256);
        assert!(result["stages"].as_array().unwrap().is_empty());
        let skipped: Vec<String> = step_names(&result)
            .into_iter()
            .filter(|(_, status)| status == "skipped")
            .map(|(step, _)| step)
            .collect();
        assert_eq!(skipped, ["proof", r#"{"stage":1}"#, r#"{"stage":2}"#]);
        assert!(
            stderr.contains("plan: no games, the binaries are bit-identical"),
            "{stderr}"
        );
        assert!(!out.join("stage-1-short").exists(), "no game was played");
        let entry =
            oracle::governance::entry::Entry::parse(&fs::read(out.join("entry.yaml")).unwrap())
                .unwrap();
        assert_eq!(entry.verdict.name(), "gleich");
        assert_eq!(entry.claimed_gain_nelo, 0.0);
        assert_eq!(entry.candidate.binary_sha256.as_str(), sha256);
        assert_eq!(
            entry.predecessor.as_ref().unwrap().binary_sha256.as_str(),
            sha256
        );
        assert!(
            entry
                .stages
                .iter()
                .all(|stage| stage.state.to_string() == "not_run" && stage.games == 0)
        );
        let report = fs::read_to_string(out.join("report.md")).unwrap();
        assert!(report.starts_with("# oracle verify: Gleich"), "{report}");
    }
    let verified = json(&fixture.oracle(&["register", "verify", "--repo", &repo, "--json"]));
    assert_eq!(
        (&verified["ok"], &verified["n"]),
        (&Value::from(true), &Value::from(2)),
        "{verified}"
    );
    let replay =
        json(&fixture.oracle(&["register", "replay", "T-0002", "--repo", &repo, "--json"]));
    assert_eq!(replay["ok"], true, "{replay:#}");
    let checks = replay["checks"].as_array().unwrap();
    let verdict = checks.iter().find(|c| c["name"] == "verdict").unwrap();
    assert!(
        verdict["detail"]
            .as_str()
            .unwrap()
            .starts_with("recorded gleich, recomputed gleich"),
        "{verdict}"
    );
    assert!(
        checks
            .iter()
            .any(|c| c["name"] == "rebuild candidate" && c["pass"] == true)
    );
}

/// Article 2.5: a change to time management plays the same games as its predecessor at every
/// node limit. Both node stages end `indistinguishable` at their first look, and the verdict
/// rests on the clock stage, which finds the gain: Gewinn, appended, and `register verify` and
/// `register replay` accept the new state. The same change under a profile of node stages only
/// is Abgelehnt: no stage could tell the engines apart.
#[test]
fn a_time_management_change_is_judged_at_the_clock() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !oracle::builder::sandbox::cpu_account::CpuAccount::available() {
        // A binding profile with a clock stage plays only with CPU accounts (Article 6.7).
        eprintln!("SKIPPED: no writable cgroup2 mount here (not root?): no CPU accounts");
        return;
    }
    let fixture = Fixture::new();
    let repo = fixture.path().display().to_string();
    fixture.cripple_clock();
    let (bench, crippled_sha256) = fixture.bench_of_worktree();
    fixture.commit(&format!(
        "time: a fiftieth of the budget\n\nBench: {bench}\n"
    ));
    fixture.register_genesis(&crippled_sha256, bench);
    fixture.restore_clock();
    let (restored_bench, restored_sha256) = fixture.bench_of_worktree();
    assert_eq!(
        restored_bench, bench,
        "a node-limited bench does not see the clock"
    );
    assert_ne!(restored_sha256, crippled_sha256);
    let restored = fixture
        .commit(&format!("time: the full budget again\n\nBench: {bench}\n"))
        .to_string();
    let dir = tempfile::tempdir().unwrap();

    let (code, result, stderr) = fixture.verify(&restored, &dir.path().join("nodes-only"));
    assert_eq!(code, 1, "{stderr}\n{result:#}");
    assert_eq!(result["verdict"], "abgelehnt");
    let states: Vec<&str> = result["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|stage| stage["record"]["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["indistinguishable", "indistinguishable"]);
    assert!(
        result["reason"]
            .as_str()
            .unwrap()
            .contains("no stage accepted H1"),
        "{result:#}"
    );

    let out = dir.path().join("clock");
    let (code, result, stderr) =
        fixture.verify_with(&restored, &out, &["--profile", "clock", "--append"]);
    assert_eq!(code, 0, "{stderr}\n{result:#}");
    assert_eq!(result["verdict"], "gewinn");
    let stages = result["stages"].as_array().unwrap();
    let states: Vec<&str> = stages
        .iter()
        .map(|stage| stage["record"]["state"].as_str().unwrap())
        .collect();
    assert_eq!(
        states,
        ["indistinguishable", "indistinguishable", "accept_h1"]
    );
    for stage in &stages[..2] {
        // Stopped at the first look from the minimum: 8 games, the same game twice per pair.
        assert_eq!(
            stage["record"]["pentanomial"],
            serde_json::json!([0, 0, 4, 0, 0])
        );
    }
    assert!(
        stages[2]["record"]["nelo"].as_f64().unwrap() > 150.0,
        "{result:#}"
    );
    assert_eq!(result["appended"], "T-0002");
    let verified = json(&fixture.oracle(&["register", "verify", "--repo", &repo, "--json"]));
    assert_eq!(verified["ok"], true, "{verified}");
    let replay =
        json(&fixture.oracle(&["register", "replay", "T-0002", "--repo", &repo, "--json"]));
    assert_eq!(replay["ok"], true, "{replay:#}");
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        report.contains("indistinguishable: the engines played alike"),
        "{report}"
    );
}

/// A commit that changes nothing under `engine/` is not an engine change (exit 2, step 1), not a
/// candidate without a `Bench:` trailer; `--out` is not even created, and no report is named.
#[test]
fn a_readme_only_commit_is_not_an_engine_change() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    fixture.write("README.md", "Coherent, a chess engine.\n");
    let readme = fixture.commit("docs: a README").to_string();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let (code, result, stderr) = fixture.verify(&readme, &out);
    assert_eq!(code, 2, "{stderr}\n{result:#}");
    assert_eq!(result["failure"]["step"], "resolve");
    let why = result["failure"]["why"].as_str().unwrap();
    assert!(
        why.ends_with(&format!(
            "candidate {readme} is not an engine change: it changes nothing under engine/ \
             (it changes README.md); the oracle judges engine changes only"
        )),
        "{why}"
    );
    assert!(!why.contains("Bench"), "{why}");
    assert!(!out.exists(), "a step-1 failure leaves no half-made --out");
    assert!(result["report"].is_null());
    let output = Command::new(ORACLE)
        .args(["verify", &readme, "--profile", "smoke", "--repo"])
        .arg(fixture.path())
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    // An error goes to standard error as every command's does; standard output stays empty
    // (issue 49: it went to standard output).
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    assert!(
        stderr.contains("error: ") && stderr.contains("is not an engine change"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("report:"),
        "a report that does not exist is named: {stderr}"
    );
}

/// A bare `oracle verify` names no profile: refused (exit 2) instead of starting `official`.
#[test]
fn verify_without_a_profile_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(ORACLE)
        .current_dir(dir.path())
        .args(["verify", "--out"])
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--profile <NAME>"), "{stderr}");
    assert!(!dir.path().join("out").exists());
}

/// A reviewer independent of the fixture's author.
const REVIEWER: &str = "Ada Reviewer <ada@reviewer.invalid>";

/// A confirmation file (docs/randfall.md) of the fixture's hanging-queen proof.
fn confirmation_text(candidate: &str, proof_sha256: &str, confirmed_by: &str) -> String {
    format!(
        "candidate: {candidate}\nproof: engine/proofs/hanging-queen.yaml\nproof_sha256: {proof_sha256}\n\
         confirmed_by: \"{confirmed_by}\"\nstatements:\n  \
         proof_meaningful: The predecessor takes the knight with its queen; the candidate does not.\n  \
         class_rare: Hanging-queen captures defended by a pawn.\n  \
         classification_right: \"A documented bug: the queen was valued like a pawn.\"\n"
    )
}

#[test]
fn randfall_confirmation_is_checked_before_any_build() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    // A binding profile: only there is a missing confirmation an error (smoke runs without).
    fixture.register_placeholder_genesis();
    fixture.cripple();
    let candidate = fixture
        .commit(
            "eval: cheaper pieces\n\nBench: 1\nOracle-Path: randfall\nOracle-Proof: engine/proofs/hanging-queen.yaml\n",
        )
        .to_string();
    let spec_sha256 = sha256_hex(PROOF.as_bytes());
    let dir = tempfile::tempdir().unwrap();
    let good = confirmation_text(&candidate, &spec_sha256, REVIEWER);
    let wrong_sha256 = format!("field `proof_sha256` is `{}`", sha256_hex(b"another spec"));
    let cases: Vec<(String, Option<String>, &str)> = vec![
        ("missing".into(), None, "needs `--confirmation FILE`"),
        (
            "by the author".into(),
            Some(confirmation_text(
                &candidate,
                &spec_sha256,
                "The Same Person <FIXTURE@example.invalid>",
            )),
            "field `confirmed_by` <FIXTURE@example.invalid> is the author of commit",
        ),
        (
            "wrong sha256".into(),
            Some(confirmation_text(
                &candidate,
                &sha256_hex(b"another spec"),
                REVIEWER,
            )),
            &wrong_sha256,
        ),
        (
            "another candidate".into(),
            Some(good.replace(&candidate, &"e".repeat(40))),
            "field `candidate` is `eeee",
        ),
        (
            "another proof".into(),
            Some(good.replace("hanging-queen.yaml", "kbnk.yaml")),
            "field `proof` is `engine/proofs/kbnk.yaml`",
        ),
        (
            "malformed confirmer".into(),
            Some(confirmation_text(
                &candidate,
                &spec_sha256,
                "ada@reviewer.invalid",
            )),
            "field `confirmed_by` is `ada@reviewer.invalid`, not `Name <email>`",
        ),
        (
            "empty statement".into(),
            Some(good.replace(
                "class_rare: Hanging-queen captures defended by a pawn.",
                "class_rare: \"\"",
            )),
            "field `statements.class_rare` is empty",
        ),
        (
            "unknown field".into(),
            Some(format!("{good}approved: yes\n")),
            "unknown field `approved`",
        ),
    ];
    for (name, text, message) in &cases {
        let out = dir.path().join(name.replace(' ', "-"));
        let file = dir.path().join(format!("{}.yaml", name.replace(' ', "-")));
        let mut args = vec!["--profile", "fixture"];
        if let Some(text) = text {
            fs::write(&file, text).unwrap();
            args.extend(["--confirmation", file.to_str().unwrap()]);
        }
        let (code, result, stderr) = fixture.verify_with(&candidate, &out, &args);
        assert_eq!(code, 2, "{name}: {stderr}\n{result:#}");
        assert_eq!(result["failure"]["step"], "trailers", "{name}");
        let why = result["failure"]["why"].as_str().unwrap();
        assert!(why.contains(message), "{name}: {why}");
        if text.is_some() {
            assert!(why.contains(file.to_str().unwrap()), "{name}: {why}");
        }
        assert!(!out.join("binding.json").exists(), "{name}: built");
    }

    // A Standard candidate has nothing to confirm: a confirmation is refused, not ignored.
    fixture.restore();
    let standard = fixture
        .commit("eval: the pieces as they were\n\nBench: 1\n")
        .to_string();
    let file = dir.path().join("standard.yaml");
    fs::write(&file, confirmation_text(&standard, &spec_sha256, REVIEWER)).unwrap();
    let out = dir.path().join("standard");
    let (code, result, _) = fixture.verify_with(
        &standard,
        &out,
        &[
            "--profile",
            "smoke",
            "--confirmation",
            file.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 2, "{result:#}");
    let why = result["failure"]["why"].as_str().unwrap();
    assert!(
        why.contains("takes the standard path; a confirmation only belongs to a Randfall change"),
        "{why}"
    );
    assert!(!out.join("binding.json").exists());
}

#[test]
fn candidate_editing_the_constitution_is_refused() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    fixture.cripple();
    fixture.edit(
        "constitution/constitution.yaml",
        "standard: [0.0, 150.0]",
        "standard: [-500.0, -400.0]",
    );
    let candidate = fixture.commit("eval: cheaper pieces, easier rules\n\nBench: 1\n");
    let out = tempfile::tempdir().unwrap();
    let (code, result, stderr) = fixture.verify(&candidate.to_string(), out.path());
    assert_eq!(code, 2, "{stderr}\n{result:#}");
    assert_eq!(result["failure"]["step"], "resolve");
    let why = result["failure"]["why"].as_str().unwrap();
    assert!(
        why.contains("is not an engine change")
            && why.contains("constitution/constitution.yaml (modified)")
            && why.contains("amendment"),
        "{why}"
    );
    assert!(
        !out.path().join("binding.json").exists(),
        "refused before any build"
    );
    assert_eq!(
        step_names(&result),
        [("resolve".to_owned(), "failed".to_owned())]
    );
}

#[test]
fn sharded_rounds_merged_between_rounds_reach_the_verdict() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    let stronger = fixture.stronger_than_its_predecessor();
    let out = tempfile::tempdir().unwrap();
    let smoke = ["--profile", "smoke"];

    // The prepare job: steps 1-5 and the binding, no game; the first stage asks for a round.
    let (code, first, stderr) = fixture.verify_with(
        &stronger,
        out.path(),
        &[&smoke[..], &["--no-play"]].concat(),
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(first["status"], "continue", "{first:#}");
    let mut rounds = 0;
    let last = loop {
        rounds += 1;
        assert!(rounds <= 10, "no decision after 10 rounds");
        // The matrix: two shards play their pairs of this round.
        for shard in ["1/2", "2/2"] {
            let (code, played, stderr) = fixture.verify_with(
                &stronger,
                out.path(),
                &[&smoke[..], &["--shard", shard]].concat(),
            );
            assert_eq!(code, 0, "{stderr}");
            assert!(
                ["shard_done", "continue"].contains(&played["status"].as_str().unwrap()),
                "{played:#}"
            );
        }
        // The merge job: combine the shard files, apply the SPRT at the round boundary.
        let (code, merged, stderr) = fixture.verify_with(
            &stronger,
            out.path(),
            &[&smoke[..], &["--no-play"]].concat(),
        );
        if merged["status"] != "continue" {
            assert_eq!(code, 0, "{stderr}");
            break merged;
        }
    };
    assert_eq!(last["status"], "accepted", "{last:#}");
    assert_eq!(last["verdict"], "gewinn");
    assert_eq!(
        last["binding"], first["binding"],
        "bound once, before the first round"
    );
    let stages = last["stages"].as_array().unwrap();
    assert_eq!(stages.len(), 2);
    for stage in stages {
        assert_eq!(stage["record"]["state"], "accept_h1");
    }
    assert_bound_before_games(&last, out.path());
    for shard in ["shard-1-of-2.json", "shard-2-of-2.json"] {
        assert!(out.path().join("shards/stage-1-short").join(shard).exists());
        assert!(out.path().join("shards/stage-2-long").join(shard).exists());
    }
}

/// A Slurm array task cancelled mid-round (SIGKILL, as a pre-empted task may get) and a second
/// copy of the same task: the copy is refused while the first plays, the rerun plays only what
/// the round lacks, a rerun of a finished task plays nothing, and the merge plans the next round
/// only once every shard has finished this one. No pair is counted twice.
#[test]
fn a_shard_killed_mid_round_is_rerun_without_a_pair_counted_twice() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    let stronger = fixture.stronger_than_its_predecessor();
    let out = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| fixture.verify_smoke_with(&stronger, out.path(), extra);
    // Planned to one minute a shard: at the fixture's node limit, all pairs of each half.
    let (code, planned, stderr) = run(&["--no-play", "--round-minutes", "1"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        planned["reason"]
            .as_str()
            .unwrap()
            .contains("round 1: every shard plays to its"),
        "{planned:#}"
    );
    let shards = out.path().join("shards/stage-1-short");
    let round = || fs::read(shards.join("round.json")).unwrap();
    let planned_round = round();
    let state = shards.join("shard-1-of-2.state.json");
    // A second copy of the task while the first holds the shard is refused.
    let held = oracle::verify::round::lock_shard(&shards.join("shard-1-of-2.lock")).unwrap();
    let (code, twice, stderr) = run(&["--shard", "1/2"]);
    assert_eq!(code, 2, "{stderr}\n{twice:#}");
    assert!(
        twice["reason"]
            .as_str()
            .unwrap()
            .contains("another process is playing this shard"),
        "{twice:#}"
    );
    drop(held);
    let mut child = Command::new(ORACLE)
        .args([
            "verify",
            &stronger,
            "--profile",
            "smoke",
            "--shard",
            "1/2",
            "--repo",
        ])
        .arg(fixture.path())
        .arg("--out")
        .arg(out.path())
        .arg("--cache-dir")
        .arg(&fixture.cache)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    while counted_pairs(&state).len() < 3 {
        assert!(std::time::Instant::now() < deadline, "no pairs in time");
        assert!(child.try_wait().unwrap().is_none(), "the shard ended early");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = counted_pairs(&state);
    assert!(
        !shards.join("shard-1-of-2.json").exists(),
        "a killed task publishes nothing"
    );

    // Shard 2 finishes; the merge sees shard 1 missing and plans the same round again.
    let (code, _, stderr) = run(&["--shard", "2/2"]);
    assert_eq!(code, 0, "{stderr}");
    let (code, merged, stderr) = run(&["--no-play", "--round-minutes", "1"]);
    assert_eq!(
        (code, merged["status"].as_str()),
        (0, Some("continue")),
        "{stderr}"
    );
    assert_eq!(
        round(),
        planned_round,
        "an unfinished round is played again"
    );

    // The rerun keeps the killed task's pairs and plays the rest once; another rerun plays none.
    let (code, _, stderr) = run(&["--shard", "1/2"]);
    assert_eq!(code, 0, "{stderr}");
    let after = counted_pairs(&state);
    assert_eq!(
        &after[..before.len()],
        &before[..],
        "finished pairs are kept"
    );
    let published = shards.join("shard-1-of-2.json");
    let first = fs::read(&published).unwrap();
    let (code, _, stderr) = run(&["--shard", "1/2"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        counted_pairs(&state),
        after,
        "a finished round plays nothing more"
    );
    let shard: Value = serde_json::from_slice(&fs::read(&published).unwrap()).unwrap();
    let first: Value = serde_json::from_slice(&first).unwrap();
    assert_eq!(shard["pairs"], first["pairs"]);
    let mut indices: Vec<u64> = shard["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["index"].as_u64().unwrap())
        .collect();
    let count = indices.len();
    indices.dedup();
    assert_eq!(indices.len(), count, "no pair twice");
    let stage_pairs = shard["fingerprint"]["pairs"].as_u64().unwrap();
    assert_eq!(
        indices,
        (0..stage_pairs).step_by(2).collect::<Vec<u64>>(),
        "all of shard 1's pairs, the round being longer than the stage"
    );

    // Now every shard has finished the round: the merge decides the stage or plans round 2.
    let (code, merged, stderr) = run(&["--no-play", "--round-minutes", "1"]);
    assert!(code == 0 || code == 1, "{stderr}");
    let stage = &merged["stages"][0]["record"];
    if !stage.is_null() {
        assert!(stage["pairs"].as_u64().unwrap() <= 200, "{merged:#}");
    }
}

#[test]
fn killed_verify_resumes_without_replaying_finished_pairs() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    fixture.cripple();
    fixture.commit(&format!("{CRIPPLE_SUBJECT}\n\nBench: 1\n"));
    fixture.restore();
    let (normal_bench, _) = fixture.bench_of_worktree();
    let stronger = fixture
        .commit(&format!(
            "eval: restore queen and rook values\n\nBench: {normal_bench}\n"
        ))
        .to_string();
    let out = tempfile::tempdir().unwrap();
    let state = out.path().join("stage-1-short/state.json");
    let before = fixture.verify_killed(&stronger, out.path(), 4);
    let binding: Value =
        serde_json::from_slice(&fs::read(out.path().join("binding.json")).unwrap()).unwrap();
    assert!(
        !out.path().join("result.json").exists(),
        "a killed run leaves no result"
    );

    let (code, result, stderr) =
        fixture.verify_with(&stronger, out.path(), &["--profile", "long-minimum"]);
    assert_eq!(code, 0, "{stderr}\n{result:#}");
    assert_eq!(result["verdict"], "gewinn");
    assert_eq!(
        result["binding"]["bound_at"], binding["bound_at"],
        "the binding is kept"
    );
    assert!(stderr.contains("resuming: the binding"), "{stderr}");
    let after = counted_pairs(&state);
    assert!(after.len() >= 20 && after.len() > before.len());
    assert_eq!(
        &after[..before.len()],
        &before[..],
        "finished pairs are kept, not replayed"
    );
    assert_eq!(
        result["stages"][0]["record"]["pairs"].as_u64().unwrap(),
        after.len() as u64
    );
    assert_bound_before_games(&result, out.path());
}

/// A change withdrawn from main and submitted again under a new commit has the same engine tree,
/// so the same binaries and the same match: `--games-from` takes over the games its first run
/// played instead of playing them again, and its entry names the run that played them. A state
/// file of another match (its seed edited), a binding of another constitution, --out itself and
/// a directory that is no verify --out are refused, naming why.
#[test]
fn games_of_the_same_match_are_taken_over_from_another_run() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    fixture.cripple();
    let crippled = fixture.commit(&format!("{CRIPPLE_SUBJECT}\n\nBench: 1\n"));
    fixture.restore();
    let (normal_bench, _) = fixture.bench_of_worktree();
    let message = format!("eval: restore queen and rook values\n\nBench: {normal_bench}\n");
    let first = fixture.commit(&message);
    let tree = fixture.repo.find_commit(first).unwrap().tree_id();
    let again = fixture
        .commit_on(crippled, tree, &format!("again: {message}"))
        .to_string();
    let dir = tempfile::tempdir().unwrap();
    let first_out = dir.path().join("first");
    let before = fixture.verify_killed(&first.to_string(), &first_out, 4);
    fn from(other: &Path) -> [&str; 4] {
        [
            "--profile",
            "long-minimum",
            "--games-from",
            other.to_str().unwrap(),
        ]
    }

    let (code, result, stderr) = fixture.verify_with(
        &again,
        &dir.path().join("nowhere"),
        &from(&dir.path().join("none")),
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        result["reason"]
            .as_str()
            .unwrap()
            .contains("no run.json there names the run"),
        "{result:#}"
    );

    let forged = dir.path().join("forged");
    copy_tree(&first_out, &forged);
    let forged_state = forged.join("stage-1-short/state.json");
    let mut state: Value = serde_json::from_slice(&fs::read(&forged_state).unwrap()).unwrap();
    state["fingerprint"]["seed"] = Value::from(state["fingerprint"]["seed"].as_u64().unwrap() ^ 1);
    fs::write(&forged_state, serde_json::to_vec(&state).unwrap()).unwrap();
    let refused = dir.path().join("refused");
    let (code, result, stderr) = fixture.verify_with(&again, &refused, &from(&forged));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        result["reason"]
            .as_str()
            .unwrap()
            .contains("its games are of another match (seed differs)"),
        "{result:#}"
    );
    assert!(
        !refused.join("stage-1-short/state.json").exists(),
        "nothing is taken over"
    );

    // A binding of another constitution is another match, even with the same binaries.
    let other_rules = dir.path().join("other-rules");
    copy_tree(&first_out, &other_rules);
    let binding_file = other_rules.join("binding.json");
    let mut binding: Value = serde_json::from_slice(&fs::read(&binding_file).unwrap()).unwrap();
    binding["constitution_sha256"] = Value::from("0".repeat(64));
    fs::write(&binding_file, serde_json::to_vec(&binding).unwrap()).unwrap();
    let (code, result, stderr) =
        fixture.verify_with(&again, &dir.path().join("other-out"), &from(&other_rules));
    assert_eq!(code, 2, "{stderr}");
    let reason = result["reason"].as_str().unwrap();
    assert!(
        reason.contains(&format!("constitution sha256 is {} there", "0".repeat(64))),
        "{reason}"
    );
    // --games-from naming --out itself is refused before anything is built (--fresh would empty it).
    let (code, result, stderr) = fixture.verify_with(
        &again,
        &first_out,
        &[&from(&first_out)[..], &["--fresh"]].concat(),
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        result["reason"]
            .as_str()
            .unwrap()
            .contains("it is this run's --out"),
        "{result:#}"
    );
    assert_eq!(
        counted_pairs(&first_out.join("stage-1-short/state.json")),
        before
    );

    let again_out = dir.path().join("again");
    let (code, result, stderr) = fixture.verify_with(&again, &again_out, &from(&first_out));
    assert_eq!(code, 0, "{stderr}\n{result:#}");
    assert_eq!(result["verdict"], "gewinn");
    assert!(
        stderr.contains(&format!("{} pairs", before.len())),
        "{stderr}"
    );
    let after = counted_pairs(&again_out.join("stage-1-short/state.json"));
    assert_eq!(
        &after[..before.len()],
        &before[..],
        "the first run's pairs are kept"
    );
    let adopted = &result["stages"][0]["record"]["adopted"];
    assert_eq!(adopted["pairs"], before.len() as u64, "{result:#}");
    let runs = adopted["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["candidate"], first.to_string());
    assert_eq!(runs[0]["pairs"], before.len() as u64);
    assert!(
        result["stages"][1]["record"].get("adopted").is_none(),
        "stage 2 was not reached before"
    );
    // This run's own games still start after its own binding; the entry names the adoption.
    assert_bound_before_games(&result, &again_out);
    let entry =
        oracle::governance::entry::Entry::parse(&fs::read(again_out.join("entry.yaml")).unwrap())
            .unwrap();
    let recorded = entry.stages[0]
        .adopted
        .as_ref()
        .expect("the entry names it");
    assert_eq!(recorded.runs[0].candidate.as_str(), first.to_string());

    // An adoption killed before its state was renamed into place leaves no record behind: the
    // next invocation without --games-from plays every pair and names no adoption.
    let stage_dir = refused.join("stage-1-short");
    fs::create_dir_all(&stage_dir).unwrap();
    fs::copy(
        again_out.join("stage-1-short/adopted.json"),
        stage_dir.join("adopted.json"),
    )
    .unwrap();
    let (code, result, stderr) =
        fixture.verify_with(&again, &refused, &["--profile", "long-minimum"]);
    assert_eq!(code, 0, "{stderr}\n{result:#}");
    assert!(
        result["stages"][0]["record"].get("adopted").is_none(),
        "{result:#}"
    );
    assert!(!stage_dir.join("adopted.json").exists());
}

/// Issue 12: a predecessor that disconnects (here it exits at its seventh `go`, as if killed)
/// makes the stage void: exit 2, the reason in the step line, result.json and the report, no
/// entry; the faults are counted by kind in stage.json.
#[test]
fn a_predecessor_disconnect_voids_the_stage() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    let (bench, _) = fixture.bench_of_worktree();
    fixture.edit(
        "engine/src/uci.rs",
        "        let limits = parse_go(args);",
        "        static GOES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);\n        \
         if GOES.fetch_add(1, Ordering::Relaxed) == 6 {\n            std::process::exit(0);\n        }\n        \
         let limits = parse_go(args);",
    );
    fixture.commit("uci: the predecessor dies at its seventh search");
    fixture.edit(
        "engine/src/uci.rs",
        "        static GOES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);\n        \
         if GOES.fetch_add(1, Ordering::Relaxed) == 6 {\n            std::process::exit(0);\n        }\n",
        "",
    );
    let candidate = fixture.commit(&format!("uci: search as before\n\nBench: {bench}\n"));
    let out = tempfile::tempdir().unwrap();
    let (code, result, stderr) = fixture.verify(&candidate.to_string(), out.path());
    assert_eq!(code, 2, "{stderr}\n{result:#}");
    assert_eq!(result["status"], "error");
    let why = result["failure"]["why"].as_str().unwrap();
    assert!(
        why.contains("stage void") && why.contains("the predecessor disconnected"),
        "{why}"
    );
    assert!(stderr.contains("stage void"), "{stderr}");
    let report = fs::read_to_string(out.path().join("report.md")).unwrap();
    assert!(report.contains("stage void"), "{report}");
    assert!(!out.path().join("entry.yaml").exists());
    let stage: Value =
        serde_json::from_slice(&fs::read(out.path().join("stage-1-short/stage.json")).unwrap())
            .unwrap();
    let faults = &stage["record"]["faults"];
    assert!(
        faults["predecessor"]["disconnect"].as_u64().unwrap() > 0,
        "{stage}"
    );
    assert_eq!(faults["candidate"]["disconnect"], 0, "{stage}");
}

/// Issue 46, void instead of Abgelehnt: a candidate that ends its own games (here it exits at its
/// seventh search of every game, as one that quits when it is losing would) fails its stage and
/// is Abgelehnt; before, its faults voided the stage and it could start over until lucky.
#[test]
fn a_candidate_that_faults_past_the_limit_is_abgelehnt_not_void() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    fixture.edit(
        "engine/src/uci.rs",
        "        let limits = parse_go(args);",
        "        static GOES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);\n        \
         if GOES.fetch_add(1, Ordering::Relaxed) == 6 {\n            std::process::exit(0);\n        }\n        \
         let limits = parse_go(args);",
    );
    let (bench, _) = fixture.bench_of_worktree();
    let candidate = fixture.commit(&format!(
        "uci: quit at the seventh search\n\nBench: {bench}\n"
    ));
    let out = tempfile::tempdir().unwrap();
    let (code, result, stderr) = fixture.verify(&candidate.to_string(), out.path());
    assert_eq!(code, 1, "{stderr}\n{result:#}");
    assert_eq!(result["verdict"], "abgelehnt", "{result:#}");
    let reason = result["reason"].as_str().unwrap();
    assert!(reason.contains("candidate_faulted"), "{reason}");
    let stage: Value =
        serde_json::from_slice(&fs::read(out.path().join("stage-1-short/stage.json")).unwrap())
            .unwrap();
    assert_eq!(stage["record"]["state"], "candidate_faulted", "{stage}");
    assert!(
        stage["record"]["faults"]["candidate"]["disconnect"]
            .as_u64()
            .unwrap()
            > 0,
        "{stage}"
    );
}

/// Issue 46, searching more than told: a candidate that searches a hundred times the nodes of
/// `go nodes N` (and says so in its `info`) is faulted by the CPU its own bench says those
/// nodes cost, loses those games, and is Abgelehnt.
#[test]
fn a_candidate_that_searches_more_than_told_is_faulted() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    fixture.edit(
        "engine/src/uci.rs",
        "        let limits = parse_go(args);",
        "        let mut limits = parse_go(args);\n        limits.nodes = limits.nodes.map(|n| n * 100);",
    );
    let (bench, _) = fixture.bench_of_worktree();
    let candidate = fixture.commit(&format!("uci: search deeper than told\n\nBench: {bench}\n"));
    let out = tempfile::tempdir().unwrap();
    let (code, result, stderr) = fixture.verify(&candidate.to_string(), out.path());
    assert_eq!(code, 1, "{stderr}\n{result:#}");
    assert_eq!(result["verdict"], "abgelehnt", "{result:#}");
    let stage: Value =
        serde_json::from_slice(&fs::read(out.path().join("stage-1-short/stage.json")).unwrap())
            .unwrap();
    let faults = &stage["record"]["faults"];
    assert!(
        faults["candidate"]["cpu_over_node_limit"]
            .as_u64()
            .unwrap_or(0)
            > 0,
        "{stage}"
    );
    assert_eq!(
        faults["predecessor"]["cpu_over_node_limit"]
            .as_u64()
            .unwrap_or(0),
        0,
        "{stage}"
    );
}

/// Issue 12: a binding profile without a working sandbox stops before building, exit 2,
/// saying what is missing (here bubblewrap is not on `PATH`).
#[test]
fn a_binding_profile_without_a_sandbox_stops_before_building() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    fixture.register_placeholder_genesis();
    // An engine change (anything else is refused at step 1, before the sandbox matters).
    fixture.cripple();
    let candidate = fixture.commit("eval: cheaper pieces\n\nBench: 1\n");
    let out = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let output = Command::new(ORACLE)
        .args([
            "verify",
            &candidate.to_string(),
            "--json",
            "--profile",
            "fixture",
        ])
        .arg("--repo")
        .arg(fixture.path())
        .arg("--out")
        .arg(out.path())
        .arg("--cache-dir")
        .arg(empty.path())
        .env("PATH", empty.path())
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(result["failure"]["step"], "build");
    let why = result["failure"]["why"].as_str().unwrap();
    assert!(
        why.contains("needs a working bubblewrap sandbox") && why.contains("nothing was built"),
        "{why}"
    );
    assert!(!out.path().join("binding.json").exists());
    assert_eq!(
        fs::read_dir(empty.path()).unwrap().count(),
        0,
        "the cache was touched"
    );
}

#[test]
fn root_build_files_and_engine_build_hooks_are_refused_at_step_1() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    let genesis = fixture.repo.head().unwrap().peel_to_commit().unwrap();
    let candidates: [(&str, &str, &[&str]); 4] = [
        (
            "rust-toolchain.toml",
            "[toolchain]\npath = \"/tmp/evil-toolchain\"\n",
            &["rust-toolchain.toml (modified)"],
        ),
        (
            "Cargo.toml",
            "[workspace]\nmembers = [\"engine\"]\n\n[patch.crates-io]\nlibc = { path = \"vendor/libc\" }\n",
            &["Cargo.toml (modified)"],
        ),
        (
            "engine/Cargo.toml",
            "[package]\nname = \"coherent\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[dependencies]\nlibc = \"0.2\"\n",
            &["engine/Cargo.toml (content)", "`dependencies.libc`"],
        ),
        (
            "engine/build.rs",
            "fn main() {}\n",
            &["engine/build.rs (added)", "a build script"],
        ),
    ];
    // Each rides along with a real engine change: a commit with nothing under engine/ is refused
    // before its paths are weighed (not an engine change at all).
    let lib = fs::read_to_string(fixture.path().join("engine/src/lib.rs")).unwrap();
    let engine_change = fixture
        .repo
        .blob(format!("{lib}\n// faster\n").as_bytes())
        .unwrap();
    for (path, text, expected) in candidates {
        let mut update = git2::build::TreeUpdateBuilder::new();
        let blob = fixture.repo.blob(text.as_bytes()).unwrap();
        update.upsert("engine/src/lib.rs", engine_change, git2::FileMode::Blob);
        update.upsert(path, blob, git2::FileMode::Blob);
        let tree = update
            .create_updated(&fixture.repo, &genesis.tree().unwrap())
            .unwrap();
        let candidate = fixture.commit_on(genesis.id(), tree, "engine: faster\n\nBench: 1\n");
        let out = tempfile::tempdir().unwrap();
        let (code, result, stderr) = fixture.verify(&candidate.to_string(), out.path());
        assert_eq!(code, 2, "{stderr}\n{result:#}");
        assert_eq!(result["failure"]["step"], "resolve");
        let why = result["failure"]["why"].as_str().unwrap();
        assert!(why.contains("is not an engine change"), "{why}");
        for text in expected {
            assert!(why.contains(text), "`{text}` missing: {why}");
        }
        assert!(
            !out.path().join("binding.json").exists(),
            "refused before any build"
        );
    }
}

/// Issue 46: `"bui\u006cd"` is `package.build` to Cargo; a line scan read it as another key.
#[test]
fn a_build_script_key_spelled_with_an_escape_is_refused_at_step_1() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    let genesis = fixture.repo.head().unwrap().peel_to_commit().unwrap();
    let manifest = fs::read_to_string(fixture.path().join("engine/Cargo.toml")).unwrap();
    let hooked = manifest.replacen(
        "[package]\n",
        "[package]\n\"bui\\u006cd\" = \"src/hook.rs\"\n",
        1,
    );
    assert_ne!(
        hooked, manifest,
        "the fixture's manifest has a [package] table"
    );
    let mut update = git2::build::TreeUpdateBuilder::new();
    let manifest_blob = fixture.repo.blob(hooked.as_bytes()).unwrap();
    let hook = fixture.repo.blob(b"fn main() {}\n").unwrap();
    update.upsert("engine/Cargo.toml", manifest_blob, git2::FileMode::Blob);
    update.upsert("engine/src/hook.rs", hook, git2::FileMode::Blob);
    let tree = update
        .create_updated(&fixture.repo, &genesis.tree().unwrap())
        .unwrap();
    let candidate = fixture.commit_on(genesis.id(), tree, "engine: faster\n\nBench: 1\n");
    let out = tempfile::tempdir().unwrap();
    let (code, result, stderr) = fixture.verify(&candidate.to_string(), out.path());
    assert_eq!(code, 2, "{stderr}\n{result:#}");
    assert_eq!(result["failure"]["step"], "resolve", "{result:#}");
    let why = result["failure"]["why"].as_str().unwrap();
    assert!(why.contains("`package.build`"), "{why}");
    assert!(
        !out.path().join("binding.json").exists(),
        "refused before any build"
    );
}

#[test]
fn an_out_dir_that_is_not_utf8_is_refused_before_any_build() {
    use std::os::unix::ffi::OsStrExt;
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    fixture.cripple();
    let candidate = fixture.commit("eval: cheaper pieces\n\nBench: 1\n");
    let parent = tempfile::tempdir().unwrap();
    let out = parent.path().join(std::ffi::OsStr::from_bytes(b"out-\xff"));
    let output = Command::new(ORACLE)
        .args([
            "verify",
            &candidate.to_string(),
            "--profile",
            "smoke",
            "--json",
        ])
        .arg("--repo")
        .arg(fixture.path())
        .arg("--out")
        .arg(&out)
        .arg("--cache-dir")
        .arg(&fixture.cache)
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    let why = result["failure"]["why"].as_str().unwrap();
    assert!(why.contains("is not valid UTF-8"), "{why}");
    assert!(!out.exists(), "nothing is written, nothing is built");
}

#[test]
fn a_forged_shard_is_refused_naming_file_and_field() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    let stronger = fixture.stronger_than_its_predecessor();
    let out = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| fixture.verify_smoke_with(&stronger, out.path(), extra);
    fixture.play_one_shard(&stronger, out.path());
    // Another match's shard, consistent in itself (its tally recomputes from its pairs): other
    // book, other seed. The merge used to check shards only against each other.
    let file = out.path().join("shards/stage-1-short/shard-1-of-1.json");
    let mut shard: Value = serde_json::from_slice(&fs::read(&file).unwrap()).unwrap();
    shard["fingerprint"]["book_sha256"] = Value::from("0".repeat(64));
    shard["fingerprint"]["seed"] = Value::from(4);
    fs::write(&file, serde_json::to_vec_pretty(&shard).unwrap()).unwrap();
    let (code, result, stderr) = run(&["--no-play"]);
    assert_eq!(code, 2, "{stderr}\n{result:#}");
    let why = result["failure"]["why"].as_str().unwrap();
    assert!(
        why.contains("shard-1-of-1.json was not played under the plan: its book differs"),
        "{why}"
    );
}

/// Issue 46, "a forged shard": the plan's real fingerprint (the shard's own), invented double wins
/// in every pair of the stage and the tally recomputed from them. It used to decide the stage (exit 0, accept H1); the
/// shard's PGN, with the pairs really played, refuses it, naming the file, pair and field.
#[test]
fn a_shard_claiming_pairs_its_pgn_does_not_show_is_refused() {
    use oracle::play::game::{GameResult, Termination};
    use oracle::play::shard::ShardResult;
    use oracle::play::tally::{PairOutcome, Tally};

    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    let stronger = fixture.stronger_than_its_predecessor();
    let out = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| fixture.verify_smoke_with(&stronger, out.path(), extra);
    fixture.play_one_shard(&stronger, out.path());
    let file = out.path().join("shards/stage-1-short/shard-1-of-1.json");
    let mut shard: ShardResult = serde_json::from_slice(&fs::read(&file).unwrap()).unwrap();
    let mut won = shard.pairs[0];
    won.games[0].result = GameResult::WhiteWins;
    won.games[1].result = GameResult::BlackWins;
    for game in &mut won.games {
        (game.termination, game.faulted_engine) = (Termination::Normal, None);
    }
    won.identical_games = false;
    // As many as the stage may count (the attack on the smoke profile claimed 200).
    shard.pairs = (0..shard.fingerprint.pairs)
        .map(|index| PairOutcome { index, ..won })
        .collect();
    shard.tally = Tally::of(&shard.pairs);
    shard.games_played = 2 * shard.fingerprint.pairs;
    fs::write(&file, serde_json::to_vec_pretty(&shard).unwrap()).unwrap();
    let (code, result, stderr) = run(&["--no-play"]);
    assert_eq!(code, 2, "{stderr}\n{result:#}");
    let why = result["failure"]["why"].as_str().unwrap();
    assert!(
        why.contains("shard-1-of-1.json: pair ") && why.contains("the shard claims"),
        "{why}"
    );
}

/// A directory for `PATH` with the toolchain and `unshare`, and a `bwrap` that does not work
/// (leaving it out is not enough: a bare program name is still found in `/usr/bin` by `execvp`'s
/// default search path when a job's environment is cleared).
fn path_without_bubblewrap() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("bwrap");
    fs::write(&broken, "#!/bin/sh\nexit 1\n").unwrap();
    fs::set_permissions(&broken, fs::Permissions::from_mode(0o755)).unwrap();
    for tool in ["rustc", "cargo", "rustup", "unshare", "setpriv"] {
        let found = std::env::split_paths(&std::env::var_os("PATH").unwrap())
            .map(|d| d.join(tool))
            .find(|p| p.is_file())
            .unwrap_or_else(|| panic!("{tool} is not installed"));
        std::os::unix::fs::symlink(found, dir.path().join(tool)).unwrap();
    }
    dir
}

/// A build script that rewrites every cached binary under `builds` into a wrapper and its
/// `entry.json` to the wrapper's sha256, so that the cache's own check still passes.
fn poisoning_build_script(builds: &Path) -> String {
    r##"use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::process::Command;

fn main() {
    let wrapper = "#!/bin/sh\nwhile read line; do case $line in uci) echo uciok;; isready) echo readyok;; go*) echo 'bestmove 0000';; quit) exit 0;; esac; done\n";
    for dir in fs::read_dir("BUILDS").into_iter().flatten().flatten() {
        let binary = dir.path().join("coherent");
        let record = dir.path().join("entry.json");
        let Ok(text) = fs::read_to_string(&record) else { continue };
        let _ = fs::set_permissions(&binary, fs::Permissions::from_mode(0o755));
        if fs::write(&binary, wrapper).is_err() {
            continue;
        }
        let sum = Command::new("sha256sum").arg(&binary).output().unwrap();
        let sha = String::from_utf8_lossy(&sum.stdout)[..64].to_owned();
        let key = "\"sha256\": \"";
        if let Some(at) = text.find(key) {
            let start = at + key.len();
            let forged = format!("{}{}{}", &text[..start], sha, &text[start + 64..]);
            let _ = fs::write(&record, forged);
        }
    }
    panic!("the build script has done its work");
}
"##
    .replace("BUILDS", &builds.display().to_string())
}

#[test]
fn a_poisoned_build_cache_is_detected_and_never_used() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    let repo = fixture.path().display().to_string();
    let (bench, registered_sha256) = fixture.bench_of_worktree();
    let registered = fixture.register_genesis(&registered_sha256, bench);
    // The predecessor's build, taken from the shared cache into a private one that may be poisoned.
    let built = json(&fixture.oracle(&[
        "build",
        &registered.to_string(),
        "--repo",
        &repo,
        "--cache-dir",
        &fixture.cache.display().to_string(),
        "--json",
    ]));
    let shared_entry = Path::new(built["binary"].as_str().unwrap())
        .parent()
        .unwrap();
    let attacker_tree = |builds: &Path| {
        let script = poisoning_build_script(builds);
        let blob = fixture.repo.blob(script.as_bytes()).unwrap();
        let mut update = git2::build::TreeUpdateBuilder::new();
        update.upsert("engine/build.rs", blob, git2::FileMode::Blob);
        update
            .create_updated(
                &fixture.repo,
                &fixture
                    .repo
                    .find_commit(registered)
                    .unwrap()
                    .tree()
                    .unwrap(),
            )
            .unwrap()
    };
    let no_bwrap = path_without_bubblewrap();
    for bubblewrap in [true, false] {
        let cache = tempfile::tempdir().unwrap();
        let cached = cache
            .path()
            .join("builds")
            .join(shared_entry.file_name().unwrap());
        copy_tree(shared_entry, &cached);
        let attacker = fixture.commit_on(
            registered,
            attacker_tree(&cache.path().join("builds")),
            "engine: a build script",
        );
        // Any build of the attacker's commit (here `oracle build`, not refused: it judges nothing).
        let mut build = Command::new(ORACLE);
        build
            .args([
                "build",
                &attacker.to_string(),
                "--repo",
                &repo,
                "--cache-dir",
            ])
            .arg(cache.path());
        if !bubblewrap {
            build.env("PATH", no_bwrap.path());
        }
        let output = build.output().unwrap();
        assert!(!output.status.success(), "the build script fails the build");
        let cached_sha256 = sha256_hex(&fs::read(cached.join("coherent")).unwrap());
        if bubblewrap {
            assert_eq!(
                cached_sha256, registered_sha256,
                "under bubblewrap the build script cannot write to the cache"
            );
            continue;
        }
        assert_ne!(
            cached_sha256,
            registered_sha256,
            "without bubblewrap the build script rewrote the cached predecessor: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        // A binding run on an honest candidate: the poisoned predecessor is detected (its sha256
        // is not the register's), rebuilt, and the binding holds the register's binary.
        fixture.write(
            "engine/src/lib.rs",
            &format!(
                "{}\n// A comment: the binary stays the same.\n",
                fs::read_to_string(fixture.path().join("engine/src/lib.rs")).unwrap()
            ),
        );
        let candidate = fixture.commit(&format!("engine: a comment\n\nBench: {bench}\n"));
        let out = tempfile::tempdir().unwrap();
        let output = Command::new(ORACLE)
            .args(["verify", &candidate.to_string(), "--json", "--no-play"])
            .args(["--profile", "fixture", "--repo", &repo])
            .arg("--out")
            .arg(out.path())
            .arg("--cache-dir")
            .arg(cache.path())
            .env_remove("GITHUB_STEP_SUMMARY")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        let result: Value = serde_json::from_slice(&output.stdout)
            .unwrap_or_else(|e| panic!("no JSON ({e}): {stderr}"));
        assert_eq!(
            result["binding"]["predecessor"]["sha256"], registered_sha256,
            "{stderr}\n{result:#}"
        );
        assert!(
            stderr.contains("is not the register's") && stderr.contains("rebuilding it"),
            "{stderr}"
        );
        assert_eq!(output.status.code(), Some(0), "{stderr}\n{result:#}");
        assert_eq!(
            sha256_hex(&fs::read(cached.join("coherent")).unwrap()),
            registered_sha256,
            "the fresh build replaced the poisoned cache entry"
        );
    }
}

/// Runs `oracle register replay T-0002 --games 2 [--seed 7]` in the fixture; (exit code, stdout,
/// stderr).
fn replay_games(fixture: &Fixture, json: bool, seeded: bool) -> (i32, String, String) {
    let output = Command::new(ORACLE)
        .args(["register", "replay", "T-0002", "--games", "2", "--repo"])
        .arg(fixture.path())
        .args(if seeded { &["--seed", "7"][..] } else { &[] })
        .args(json.then_some("--json"))
        .arg("--cache-dir")
        .arg(&fixture.cache)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    eprintln!("oracle register replay T-0002 --games 2:\n{stdout}{stderr}");
    (output.status.code().unwrap(), stdout, stderr)
}

/// Runs gzip with `args` on `input`; its output.
fn gzip(args: &[&str], input: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut child = Command::new("gzip")
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    output.stdout
}

/// The games of an appended entry, kept by `scripts/keep-evidence.sh`, are played again by
/// `oracle register replay --games` with the rebuilt binaries and match move for move; a PGN
/// that is not the entry's is named by its hash, one with a move changed (and the entry's
/// `pgn_sha256` changed with it) by the ply, and a missing one by its file name.
#[test]
fn an_entrys_games_replay_move_for_move_and_a_changed_move_is_named() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    fixture.cripple();
    let (crippled_bench, crippled_sha256) = fixture.bench_of_worktree();
    fixture.commit(&format!("{CRIPPLE_SUBJECT}\n\nBench: {crippled_bench}\n"));
    fixture.register_genesis(&crippled_sha256, crippled_bench);
    let stronger = {
        fixture.restore();
        let (normal_bench, _) = fixture.bench_of_worktree();
        fixture.commit(&format!(
            "eval: restore queen and rook values\n\nBench: {normal_bench}\n"
        ))
    };
    let out = tempfile::tempdir().unwrap();
    let (code, result, stderr) = fixture.verify_with(
        &stronger.to_string(),
        out.path(),
        &["--profile", "fixture", "--append"],
    );
    assert_eq!(code, 0, "{stderr}\n{result:#}");
    assert_eq!(result["appended"], "T-0002");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/keep-evidence.sh");
    let kept = Command::new("bash")
        .arg(script)
        .arg(out.path())
        .arg("T-0002")
        .current_dir(fixture.path())
        .output()
        .unwrap();
    assert!(kept.status.success(), "{kept:?}");

    // Faithful evidence: both node stages, two pairs each, every game identical.
    let (code, stdout, _) = replay_games(&fixture, true, true);
    assert_eq!(code, 0, "{stdout}");
    let replay: Value = serde_json::from_str(&stdout).unwrap();
    let stages = replay["replay"]["stages"].as_array().unwrap();
    assert_eq!(stages.len(), 2);
    for stage in stages {
        assert_eq!(stage["status"], "replayed", "{stage:#}");
        assert_eq!(stage["pairs"].as_array().unwrap().len(), 2);
        let games = stage["games"].as_array().unwrap();
        assert_eq!(games.len(), 4);
        assert!(games.iter().all(|g| g["difference"].is_null()), "{stage:#}");
    }
    // Without --seed the choice is the entry's: the same for every auditor.
    let (code, text, _) = replay_games(&fixture, false, false);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("replay T-0002 --games: 8 of 8 games identical\n"),
        "{text}"
    );
    let pairs = |text: &str| {
        text.lines()
            .filter(|l| l.starts_with("stage "))
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        pairs(&text),
        pairs(&replay_games(&fixture, false, false).1),
        "the same choice"
    );

    // One engine move changed: the last move of the first chosen game of stage 1.
    let evidence = fixture.path().join("evidence/T-0002/stage-1-short.pgn.gz");
    let original = fs::read(&evidence).unwrap();
    let pgn = String::from_utf8(gzip(&["-dc"], &original)).unwrap();
    let pair = stages[0]["pairs"][0].as_u64().unwrap();
    let games = oracle::verify::recorded::parse_games(&pgn, &evidence).unwrap();
    let game = games
        .iter()
        .find(|g| g.pair == pair && g.game == 0)
        .unwrap();
    let ply = game.moves.len();
    let mut pos = match &game.fen {
        Some(fen) => oracle::play::book::parse_fen(fen).unwrap(),
        None => shakmaty::Chess::default(),
    };
    pos = oracle::play::book::play_uci_moves(pos, &game.moves[..ply - 1]).unwrap();
    use shakmaty::Position;
    let other = pos
        .legal_moves()
        .into_iter()
        .map(|m| shakmaty::san::SanPlus::from_move(pos.clone(), m).to_string())
        .find(|san| *san != game.san[ply - 1])
        .expect("another legal move");
    let round = format!("[Round \"{}.1\"]", pair + 1);
    let start = pgn.find(&round).unwrap();
    let end = pgn[start..].find("\n\n[").map_or(pgn.len(), |e| start + e);
    let block = &pgn[start..end];
    let last = &game.san[ply - 1];
    let at = block
        .match_indices(last.as_str())
        .map(|(i, _)| i)
        .filter(|&i| {
            let before = block[..i].chars().last().unwrap();
            let after = block[i + last.len()..].chars().next().unwrap();
            (before.is_whitespace() || before == '.') && after.is_whitespace()
        })
        .last()
        .unwrap();
    let tampered = format!(
        "{}{other}{}",
        &pgn[..start + at],
        &pgn[start + at + last.len()..]
    );
    fs::write(&evidence, gzip(&["-9", "-n", "-c"], tampered.as_bytes())).unwrap();

    // Under the entry's pgn_sha256 the file is not the recorded one: named by its hash.
    let (code, text, _) = replay_games(&fixture, false, true);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("stage short (nodes=600): FAIL")
            && text.contains("stage-1-short.pgn.gz hashes to")
            && text.contains("the entry records pgn_sha256"),
        "{text}"
    );

    // The entry's pgn_sha256 changed with it: the game is played again and the ply is named.
    let file = fixture.path().join("register/T-0002.yaml");
    let mut entry = oracle::governance::entry::Entry::parse(&fs::read(&file).unwrap()).unwrap();
    entry.stages[0].pgn_sha256 = Some(sha256_hex(tampered.as_bytes()).try_into().unwrap());
    fs::write(&file, entry.to_canonical().unwrap()).unwrap();
    let (code, text, _) = replay_games(&fixture, false, true);
    assert!(
        text.starts_with("pass register: "),
        "the edited entry still chains: {text}"
    );
    assert_eq!(code, 1, "{text}");
    let expected = format!(
        "  round {}.1: DIFFERS at ply {ply}: expected {other}, played {last}\n",
        pair + 1
    );
    assert!(text.contains(&expected), "{expected}\n{text}");

    // Missing evidence is bad input: exit 2, naming the file, before anything is built.
    fs::remove_file(&evidence).unwrap();
    let (code, _, stderr) = replay_games(&fixture, false, true);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("evidence/T-0002/stage-1-short.pgn.gz: missing"),
        "{stderr}"
    );
}
