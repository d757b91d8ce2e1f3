//! `oracle init` on real git repositories, driven through the real `oracle` binary: the C engine
//! fixture (`fixtures/c-engine/`, a Makefile that honours `EXE=`, benches in several engines'
//! formats, and no search before `Threads` and `Hash` are set) and a small Cargo engine
//! (`support::fixture_repo`). Each detection path, each "cannot tell" message, the refusal to
//! overwrite, and that `oracle register verify` and `oracle verify --profile smoke` then work.

use std::fs;
use std::path::{Path, PathBuf};

use crate::support::c_engine_fixture::{
    BOOK, ENGINE, MAKEFILE, bench_of, grouped, stronger_engine,
};
use crate::support::fixture_repo::{self, engine_source};
use crate::support::{Run, commit_work_tree, git_in, oracle};

/// The fixture's commits are dated 2023-11-14 22:13:20 UTC, so that they are the same every run.
const FIXED_DATES: &[(&str, &str)] = &[
    ("GIT_AUTHOR_DATE", "1700000000 +0000"),
    ("GIT_COMMITTER_DATE", "1700000000 +0000"),
];

/// A build cache the sandbox's unprivileged user can enter (the tests may run as root, whose
/// temporary directories are closed to it), outside any Cargo workspace (a Cargo build there
/// would take the workspace for its own).
fn cache() -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join("oracle-init-tests-cache");
    fs::create_dir_all(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// A git repository with a work tree, committed to with the git command line.
struct Repo {
    dir: tempfile::TempDir,
}

impl Repo {
    /// A repository holding `files` in one commit.
    fn with(files: &[(&str, &str)]) -> Self {
        let repo = Self {
            dir: tempfile::tempdir().unwrap(),
        };
        repo.git(&["init", "-q", "-b", "main"]);
        repo.git(&["config", "user.name", "Maintainer"]);
        repo.git(&["config", "user.email", "maintainer@example.invalid"]);
        repo.commit(files, "engine\n\nBench: 1,000\n");
        repo
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn text(&self) -> &str {
        self.path().to_str().unwrap()
    }

    /// Runs git in the repository; its trimmed standard output.
    fn git(&self, args: &[&str]) -> String {
        git_in(self.path(), FIXED_DATES, args)
    }

    /// Writes `files` and commits everything.
    fn commit(&self, files: &[(&str, &str)], message: &str) {
        commit_work_tree(self.path(), FIXED_DATES, files, message);
    }

    fn read(&self, path: &str) -> String {
        fs::read_to_string(self.path().join(path)).unwrap_or_default()
    }

    /// `oracle init --repo <this> --cache-dir <shared> ARGS…`.
    fn init(&self, args: &[&str]) -> Run {
        let cache = cache();
        let mut all = vec![
            "init",
            "--repo",
            self.text(),
            "--cache-dir",
            cache.to_str().unwrap(),
        ];
        all.extend_from_slice(args);
        oracle(&all)
    }

    /// Writes the book outside the repository and returns its path.
    fn book(&self) -> PathBuf {
        let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("init-openings.epd");
        fs::write(&path, BOOK).unwrap();
        path
    }
}

/// The C engine fixture's files, the engine in `src/` as in Stockfish's and Ethereal's trees.
fn c_engine() -> Vec<(&'static str, &'static str)> {
    vec![
        ("src/Makefile", MAKEFILE),
        ("src/engine.c", ENGINE),
        ("README.md", "A fixture engine.\n"),
    ]
}

#[test]
fn a_c_engine_is_set_up_and_then_verified() {
    let repo = Repo::with(&c_engine());
    let engine_commit = repo.git(&["rev-parse", "HEAD"]);
    let book = repo.book();
    let run = repo.init(&[
        "--bench",
        "bench ethereal",
        "--gate-symbol",
        "evaluate",
        "--option",
        "Hash=8",
        "--book",
        book.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .contains("build      make (a Makefile honouring EXE= in src/)"),
        "{run:?}"
    );
    assert!(
        run.stdout.contains(&format!(
            "bench ethereal → {} nodes (Ethereal format",
            bench_of(ENGINE)
        )),
        "{run:?}"
    );
    let constitution = repo.read("constitution/constitution.yaml");
    for expected in [
        "    kind: make\n    command: make -C src EXE={out}\n    compiler: cc\n",
        "  scope:\n  - src/\n",
        "    args:\n    - bench\n    - ethereal\n",
        "    - 'OVERALL: {nodes} nodes {nps} nps'\n",
        "      digit_groups: true\n",
        "    symbols:\n    - evaluate\n",
        "    Hash: 8\n    Threads: 1\n",
        "book: books/init-openings.epd",
    ] {
        assert!(
            constitution.contains(expected),
            "{expected:?} in:\n{constitution}"
        );
    }
    assert!(
        repo.read("constitution/CONSTITUTION.md")
            .contains("`make -C src EXE={out}`")
    );
    assert!(
        repo.read(".github/workflows/oracle-verify.yml")
            .contains("bubblewrap make g++")
    );
    assert_eq!(repo.read("books/init-openings.epd"), BOOK);
    // The setup commit is HEAD, on top of the engine; the genesis entry names it and waits.
    let setup = repo.git(&["rev-parse", "HEAD"]);
    assert_eq!(repo.git(&["rev-parse", "HEAD~1"]), engine_commit);
    assert_eq!(repo.git(&["status", "--porcelain"]), "?? register/");
    let genesis = repo.read("register/T-0001.yaml");
    let entry: serde_norway::Value = serde_norway::from_str(&genesis).unwrap();
    assert_eq!(
        entry["candidate"]["commit"].as_str(),
        Some(setup.as_str()),
        "{genesis}"
    );
    let audit = oracle(&["register", "verify", "--repo", repo.text()]);
    assert_eq!(audit.code, 0, "{audit:?}");

    // The maintainer commits the entry; a change to the engine, with its new bench in the
    // history's grouped form, is then verified.
    repo.commit(&[], "register: genesis");
    let changed = stronger_engine();
    let nodes = bench_of(&changed);
    assert_ne!(nodes, bench_of(ENGINE), "the change moves the bench");
    repo.commit(
        &[("src/engine.c", &changed)],
        &format!("eval: weigh the centre more\n\nBench: {}\n", grouped(nodes)),
    );
    let out = tempfile::tempdir().unwrap();
    let cache = cache();
    let verify = oracle(&[
        "verify",
        "--profile",
        "smoke",
        "--repo",
        repo.text(),
        "--out",
        out.path().to_str().unwrap(),
        "--cache-dir",
        cache.to_str().unwrap(),
    ]);
    for step in ["(build and bind):", "(gate):", "(bench):"] {
        let after = verify.stderr.split(step).nth(1).unwrap_or_default();
        let outcome = after
            .lines()
            .find(|line| line.starts_with("      ok") || line.starts_with("      failed"));
        assert!(
            outcome.is_some_and(|line| line.starts_with("      ok")),
            "{step} {verify:?}"
        );
    }
}

#[test]
fn each_cannot_tell_names_the_flag_and_writes_nothing() {
    let nothing = Repo::with(&[("README.md", "no engine here\n")]);
    let run = nothing.init(&[]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("pass --build 'COMMAND … {out}'"),
        "{run:?}"
    );

    let mut both = c_engine();
    both.push(("Cargo.toml", "[package]\nname = \"tool\"\n"));
    both.push(("src/main.rs", "fn main() {}\n"));
    let several = Repo::with(&both);
    let run = several.init(&[]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("several ways to build the engine")
            && run.stderr.contains("--build cargo")
            && run.stderr.contains("'make -C src EXE={out}'"),
        "{run:?}"
    );

    let repo = Repo::with(&c_engine());
    let head = repo.git(&["rev-parse", "HEAD"]);
    let run = repo.init(&[]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("pass --gate-symbol NAME") && run.stderr.contains("or --no-gate"),
        "{run:?}"
    );

    // `bench plain` prints its count in a form no known format reads.
    let odd = Repo::with(&c_engine());
    let run = odd.init(&["--no-gate", "--bench", "bench plain"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("--bench-output 'PATTERN'"), "{run:?}");
    let run = odd.init(&[
        "--no-gate",
        "--bench",
        "bench plain",
        "--bench-output",
        "searched {nodes} positions at {nps} per second",
        "--book",
        odd.book().to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        odd.read("constitution/constitution.yaml")
            .contains("  gate: none\n")
    );

    for repo in [&nothing, &several, &repo] {
        assert_eq!(
            repo.git(&["status", "--porcelain"]),
            "",
            "nothing was written"
        );
    }
    assert_eq!(repo.git(&["rev-parse", "HEAD"]), head);
}

#[test]
fn an_existing_constitution_is_never_overwritten() {
    let mut files = c_engine();
    files.push(("constitution/constitution.yaml", "version: 1\n"));
    let repo = Repo::with(&files);
    let run = repo.init(&["--no-gate"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("constitution/constitution.yaml exists")
            && run.stderr.contains("nothing was written"),
        "{run:?}"
    );
    assert_eq!(repo.read("constitution/constitution.yaml"), "version: 1\n");
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
}

#[test]
fn the_books_are_generated_with_the_engine_when_none_is_given() {
    // The fixture searches only once `Threads` and `Hash` are set: the scoring engines got the
    // contract's options.
    let repo = Repo::with(&c_engine());
    let run = repo.init(&["--no-gate", "--book-positions", "300"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stderr.contains("(300 positions"), "{run:?}");
    let (a, b) = (repo.read("books/book-a.epd"), repo.read("books/book-b.epd"));
    assert_eq!((a.lines().count(), b.lines().count()), (300, 300));
    assert!(
        !a.lines().any(|line| b.lines().any(|other| other == line)),
        "B excludes A"
    );
    let check = oracle(&[
        "book",
        "check",
        repo.path().join("books/book-b.epd").to_str().unwrap(),
    ]);
    assert_eq!(check.code, 0, "{check:?}");
}

#[test]
fn a_cargo_engine_is_the_cargo_kind() {
    let repo = Repo::with(&[
        ("Cargo.toml", fixture_repo::MANIFEST),
        ("Cargo.lock", fixture_repo::LOCK),
        (
            "src/main.rs",
            &engine_source(3, fixture_repo::HELPER_INLINED),
        ),
        ("rust-toolchain.toml", "[toolchain]\nchannel = \"1.95.0\"\n"),
    ]);
    let run = repo.init(&[
        "--gate-symbol",
        "coherent_evaluate_popcnt",
        "--book",
        repo.book().to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("Coherent format"), "{run:?}");
    let constitution = repo.read("constitution/constitution.yaml");
    for expected in [
        "    kind: cargo\n    toolchain: 1.95.0\n    package: coherent\n    binary: coherent\n",
        "  scope:\n  - src/\n  - Cargo.toml\n  - Cargo.lock\n",
    ] {
        assert!(
            constitution.contains(expected),
            "{expected:?} in:\n{constitution}"
        );
    }
    let register_workflow = repo.read(".github/workflows/oracle-register.yml");
    assert!(register_workflow.contains("rustup toolchain install 1.95.0"));
    // What a push to the main branch landed is judged there, as in this repository.
    assert!(
        register_workflow
            .contains("/judge/bin/oracle\" register landing --before \"$BEFORE\" --repo ."),
        "{register_workflow}"
    );
    // The judge is built before the push is checked out, so no configuration of the push
    // reaches its build.
    let position = |text: &str| register_workflow.find(text).unwrap();
    assert!(position("cargo install") < position("actions/checkout"));
    let audit = oracle(&["register", "verify", "--repo", repo.text()]);
    assert_eq!(audit.code, 0, "{audit:?}");

    // Round seven: the crate's manifest is a scope *file*, and only manifests at the root of
    // scope directories were read. A candidate that gives the engine a build script through
    // it is refused before anything is built.
    repo.commit(&[], "register: genesis");
    let verify_step_1 = || {
        let out = tempfile::tempdir().unwrap();
        let run = oracle(&[
            "verify",
            "--profile",
            "smoke",
            "--checks-only",
            "--repo",
            repo.text(),
            "--out",
            out.path().to_str().unwrap(),
            "--cache-dir",
            cache().to_str().unwrap(),
        ]);
        (run, out.path().join("binding.json").exists())
    };
    // A change to the engine's code alone passes step 1: the manifest it leaves as it was (with
    // its `[profile.release]`, which the scan would refuse in a changed one) is not judged again.
    repo.commit(
        &[(
            "src/main.rs",
            &engine_source(4, fixture_repo::HELPER_INLINED),
        )],
        "eval: weigh mobility more\n\nBench: 1\n",
    );
    let (harmless, _) = verify_step_1();
    let step_1 = harmless
        .stderr
        .split("(resolve):")
        .nth(1)
        .and_then(|after| after.lines().nth(1))
        .unwrap_or_default();
    assert!(step_1.starts_with("      ok"), "{harmless:?}");
    let hooked =
        fixture_repo::MANIFEST.replacen("[package]\n", "[package]\nbuild = \"src/gen.rs\"\n", 1);
    repo.commit(
        &[("Cargo.toml", &hooked), ("src/gen.rs", "fn main() {}\n")],
        "build: generate tables\n\nBench: 1\n",
    );
    let (verify, bound) = verify_step_1();
    assert_eq!(verify.code, 2, "{verify:?}");
    assert!(
        verify.stderr.contains("Cargo.toml") && verify.stderr.contains("`package.build`"),
        "{verify:?}"
    );
    assert!(!bound, "refused before any build");
}
