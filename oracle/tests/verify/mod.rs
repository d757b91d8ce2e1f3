//! End-to-end tests of `oracle verify` on fixture repositories built here: a copy of the real
//! engine (with a shallow bench so that signatures are quick) and the same engine with its
//! queen and rook values crippled, a fixture constitution with a small node-limited profile,
//! and two tiny books. The real `oracle` binary builds, binds, gates, benches and plays.
//!
//! Builds are cached in the test target directory (or, where the build sandbox's user could not
//! enter it, in the system's temporary directory), so only the first run pays for them.
//!
//! One module for each step of docs/architecture.md ("The seven steps of `oracle verify`") that
//! has tests of its own, and one each for sharded stages and for `--out` across runs. Step 5, the
//! Randfall proof, is judged in `verdict` (the Korrektur).

mod bind;
mod checks;
mod out_dir;
mod resolve;
mod shards;
mod stages;
mod trailers;
mod verdict;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use git2::{Oid, Repository, Signature};
use oracle::integrity::sha256_hex;
use serde_json::Value;

use crate::support::constitution_fixture::{
    ConstitutionFixture, ProfileFixture, QUICK_RECIPE, StageFixture, cargo_recipe,
};
use crate::support::fixture_repo::commit_tree_on_head;
use crate::support::{ORACLE, Run, enterable_by_the_sandbox, oracle, repository_root};

/// The games and builds of these tests share two cores: one scenario at a time.
static SERIAL: Mutex<()> = Mutex::new(());

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
        profile_overrides: QUICK_RECIPE,
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
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"));
    if enterable_by_the_sandbox(target) {
        return target.join("verify-build-cache");
    }
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    target.hash(&mut hasher);
    std::env::temp_dir().join(format!(
        "coherent-verify-build-cache-{:016x}",
        hasher.finish()
    ))
}

/// A fixture repository, the build cache shared by every test run, and the constitution's recipe
/// as a file for `oracle build` (in the cache, outside the repository).
struct Fixture {
    dir: tempfile::TempDir,
    repo: Repository,
    cache: PathBuf,
    recipe: PathBuf,
}

impl Fixture {
    /// A repository whose first commit holds the engine, the constitution, the books and an
    /// empty register.
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        let engine = repository_root().join("engine");
        copy_tree(&engine.join("src"), &dir.path().join("engine/src"));
        fs::copy(
            engine.join("Cargo.toml"),
            dir.path().join("engine/Cargo.toml"),
        )
        .unwrap();
        let cache = build_cache();
        fs::create_dir_all(&cache).unwrap();
        let recipe = cache.join("verify-recipe.yaml");
        let staging = cache.join(format!("verify-recipe.{}.tmp", std::process::id()));
        fs::write(&staging, cargo_recipe(QUICK_RECIPE, true)).unwrap();
        fs::rename(&staging, &recipe).unwrap();
        let fixture = Fixture {
            dir,
            repo,
            cache,
            recipe,
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

    /// The crippled engine committed and registered as genesis, then the change that restores
    /// it: a candidate an `--append` run can judge against the register. (The candidate's commit
    /// id, the crippled binary's sha256.)
    fn stronger_than_the_registered_engine(&self) -> (Oid, String) {
        self.cripple();
        let (crippled_bench, crippled_sha256) = self.bench_of_worktree();
        self.commit(&format!("{CRIPPLE_SUBJECT}\n\nBench: {crippled_bench}\n"));
        self.register_genesis(&crippled_sha256, crippled_bench);
        self.restore();
        let (normal_bench, _) = self.bench_of_worktree();
        let stronger = self.commit(&format!(
            "eval: restore queen and rook values\n\nBench: {normal_bench}\n"
        ));
        (stronger, crippled_sha256)
    }

    /// Keeps the evidence of the run in `out` next to entry `id` (`scripts/keep-evidence.sh`).
    fn keep_evidence(&self, out: &Path, id: &str) {
        let kept = Command::new("bash")
            .arg(repository_root().join("scripts/keep-evidence.sh"))
            .arg(out)
            .arg(id)
            .current_dir(self.path())
            .output()
            .unwrap();
        assert!(kept.status.success(), "{kept:?}");
    }

    /// Runs `oracle register replay T-0002 --games 2 [--seed SEED] [--json]`; (exit code,
    /// stdout, stderr).
    fn replay_games(&self, json: bool, seed: Option<&str>) -> (i32, String, String) {
        let output = Command::new(ORACLE)
            .args(["register", "replay", "T-0002", "--games", "2", "--repo"])
            .arg(self.path())
            .args(seed.map(|seed| ["--seed", seed]).into_iter().flatten())
            .args(json.then_some("--json"))
            .arg("--cache-dir")
            .arg(&self.cache)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        eprintln!("oracle register replay T-0002 --games 2:\n{stdout}{stderr}");
        (output.status.code().unwrap(), stdout, stderr)
    }

    /// [`Fixture::stronger_than_its_predecessor`] and the same change committed again with
    /// another message (the same tree on the same parent, so the same two binaries): a change
    /// submitted again. Both commit ids.
    fn stronger_and_reworded(&self) -> (String, String) {
        let stronger = self.stronger_than_its_predecessor();
        let commit = self
            .repo
            .find_commit(Oid::from_str(&stronger).unwrap())
            .unwrap();
        let again = self.commit_on(
            commit.parent_id(0).unwrap(),
            commit.tree_id(),
            &format!("again: {}", commit.message().unwrap()),
        );
        (stronger, again.to_string())
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

    /// Commits the whole work tree on HEAD, removed files included.
    fn commit(&self, message: &str) -> Oid {
        let mut index = self.repo.index().unwrap();
        index
            .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
            .unwrap();
        index.update_all(["*"], None).unwrap();
        index.write().unwrap();
        let signature = Signature::now("Fixture", "fixture@example.invalid").unwrap();
        commit_tree_on_head(&self.repo, index.write_tree().unwrap(), &signature, message)
    }

    /// The bench signature of the work tree as it would be committed (built by the oracle,
    /// through a scratch commit with the same tree; the build cache is keyed by the sources).
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
        let built = self.build(&scratch.to_string(), &self.cache).json();
        let binary = built["binary"].as_str().unwrap().to_owned();
        let bench = self.oracle(&["bench", &binary, "--json"]).json();
        (
            bench["nodes"].as_u64().unwrap(),
            built["sha256"].as_str().unwrap().to_owned(),
        )
    }

    /// `oracle build REV --json` into `cache` with the constitution's recipe, as `verify` builds;
    /// it must succeed.
    fn build(&self, rev: &str, cache: &Path) -> Run {
        self.oracle(&[
            "build",
            rev,
            "--repo",
            &self.path().display().to_string(),
            "--cache-dir",
            &cache.display().to_string(),
            "--recipe",
            &self.recipe.display().to_string(),
            "--json",
        ])
    }

    /// Runs the oracle with `args`, which must succeed.
    fn oracle(&self, args: &[&str]) -> Run {
        let run = oracle(args);
        assert_eq!(run.code, 0, "oracle {args:?} failed: {}", run.stderr);
        run
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
        let (code, result, stderr) = self.verify_in(rev, out, &self.cache, args, &[]);
        if result["report"].is_null() {
            // Refused at step 1, before --out was this run's: nothing of it is written there.
            assert_eq!(result["failure"]["step"], "resolve", "{result:#}");
        } else {
            let on_disk: Value =
                serde_json::from_slice(&fs::read(out.join("result.json")).unwrap()).unwrap();
            assert_eq!(result, on_disk, "--json and result.json must agree");
            assert!(Path::new(result["report"]["markdown"].as_str().unwrap()).exists());
        }
        (code, result, stderr)
    }

    /// Runs `oracle verify REV ARGS… --json` into `out` with the build cache `cache` and `env`
    /// added to the oracle's environment; its exit code, the result it printed and its stderr.
    fn verify_in(
        &self,
        rev: &str,
        out: &Path,
        cache: &Path,
        args: &[&str],
        env: &[(&str, &Path)],
    ) -> (i32, Value, String) {
        let output = Command::new(ORACLE)
            .args(["verify", rev, "--json"])
            .args(args)
            .arg("--repo")
            .arg(self.path())
            .arg("--out")
            .arg(out)
            .arg("--cache-dir")
            .arg(cache)
            .envs(env.iter().copied())
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
