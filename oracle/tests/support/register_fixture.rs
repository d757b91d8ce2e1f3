//! Fixture repositories for the register tests: a small constitution with
//! pinned books, a git history of engine commits that carry it, and entries
//! whose statistics are computed by `oracle::stats` so that `register replay`
//! holds on them. [`FixtureRepo`] writes the commits.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use oracle::governance::confirmation::{ConfirmationRecord, Statements};
use oracle::governance::constitution::LossBooking;
use oracle::governance::entry::{
    BinaryRecord, Entry, EntryId, GateRecord, LossBudget, OracleCommit, OracleRecord, PathKind,
    ProofOutcome, ProofRecord, StageRecord, StageState, Verdict,
};
use oracle::governance::hash::{GitId, Sha256Hex};
use oracle::governance::register::audit::decide_recorded;
use oracle::governance::timestamp::Timestamp;
use oracle::stats::{Model, PentanomialCounts, SprtDecision, SprtParams, sprt_status};

use super::constitution_fixture::{ConstitutionFixture, ProfileFixture, StageFixture};
use super::fixture_repo::FixtureRepo;
use super::{ORACLE, Run};

/// The fixture's engine commits, oldest first, each a child of the one before: the digit that
/// names it in [`binary`] and the bench signature of its binary.
pub const ENGINES: [(char, u64); 5] = [('1', 695), ('3', 702), ('5', 710), ('7', 688), ('9', 699)];

/// Book A of the fixture (four EPD openings).
pub const BOOK_A: &str = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -\n\
rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq -\n\
rnbqkbnr/pppppppp/8/8/2P5/8/PP1PPPPP/RNBQKBNR b KQkq -\n\
rnbqkbnr/pppppppp/8/8/8/5N2/PPPPPPPP/RNBQKB1R b KQkq -\n";

/// Book B of the fixture (two EPD openings).
pub const BOOK_B: &str = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq -\n\
rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq -\n";

/// The fixture constitution: a binding profile `bound` and a non-binding `smoke`.
#[must_use]
pub fn constitution_text() -> String {
    let stage = |name, tc, book, text: &str| StageFixture {
        name,
        tc,
        book,
        book_sha256: Sha256Hex::of(text.as_bytes()).to_string(),
        min_games: 0,
        max_games: 20000,
        standard: [0.0, 10.0],
        randfall: [-10.0, 0.0],
    };
    let short = stage("short", "nodes=500", "books/book-a.epd", BOOK_A);
    let profile = |name, binding, description, stages| ProfileFixture {
        name,
        binding,
        description,
        error_rate: 0.05,
        batch_size: 4,
        adjudicated: false,
        stages,
    };
    ConstitutionFixture {
        version: 1,
        identical_binaries: false,
        profile_overrides: &["codegen-units: 1"],
        extra_rustflags: false,
        engine: None,
        profiles: vec![
            profile(
                "bound",
                true,
                "Fixture profile that may enter the register.",
                vec![
                    short.clone(),
                    stage("long", "\"10+0.1\"", "books/book-b.epd", BOOK_B),
                ],
            ),
            profile(
                "smoke",
                false,
                "Fixture profile that never enters the register.",
                vec![short],
            ),
        ],
    }
    .yaml()
}

/// A temporary git repository: the fixture history ([`ENGINES`], each commit holding the
/// constitution and books) and the same files in the work tree (no register yet).
pub struct Repo {
    /// The repository; keeps the directory alive.
    pub git: FixtureRepo,
}

impl Repo {
    /// Creates the repository.
    #[must_use]
    pub fn new() -> Self {
        let git = FixtureRepo::new();
        assert_eq!(
            &commit_history(&git),
            history(),
            "fixture commits are deterministic"
        );
        write_fixture(git.path());
        Self { git }
    }

    /// Its root.
    #[must_use]
    pub fn path(&self) -> &Path {
        self.git.path()
    }

    /// `register/NAME`.
    #[must_use]
    pub fn entry_path(&self, name: &str) -> PathBuf {
        self.path().join("register").join(name)
    }

    /// Runs `oracle ARGS… --repo <this repo>`.
    #[must_use]
    pub fn oracle(&self, args: &[&str]) -> Run {
        oracle_at(self.path(), args)
    }

    /// Writes `entries` as the register, chaining them and numbering them from T-0001.
    pub fn write_register(&self, entries: &[Entry]) {
        for (name, bytes) in chain(entries) {
            std::fs::create_dir_all(self.path().join("register")).unwrap();
            std::fs::write(self.entry_path(&name), bytes).unwrap();
        }
    }

    /// The sorted names of the files in `register/`, hidden ones included.
    #[must_use]
    pub fn register_listing(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.path().join("register"))
            .unwrap()
            .map(|item| item.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// Runs `git ARGS…` in the repository as a fixed committer.
    pub fn git(&self, args: &[&str]) {
        let status = Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@example.invalid",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .current_dir(self.path())
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    }

    /// Commits everything in the work tree, as a hand-made change would be pushed.
    pub fn commit_all(&self, message: &str) {
        self.git(&["add", "-A", "."]);
        self.git(&["commit", "-qm", message, "--allow-empty"]);
    }
}

/// Commits [`ENGINES`] into `repo`, each on top of the one before; returns
/// (digit, commit, root tree) for each.
fn commit_history(repo: &FixtureRepo) -> Vec<(char, GitId, GitId)> {
    let constitution = constitution_text();
    ENGINES
        .iter()
        .map(|(digit, _)| {
            let engine = format!("//! The fixture engine, version {digit}.\n");
            let files = [
                ("constitution/constitution.yaml", constitution.as_str()),
                ("books/book-a.epd", BOOK_A),
                ("books/book-b.epd", BOOK_B),
                ("engine/src/lib.rs", engine.as_str()),
            ];
            let commit = repo.commit(&files, &format!("engine {digit}"));
            let tree = repo.repo.find_commit(commit).unwrap().tree_id();
            let id = |oid: git2::Oid| GitId::try_from(oid.to_string()).unwrap();
            (*digit, id(commit), id(tree))
        })
        .collect()
}

/// The fixture history's ids (the same in every repository: the commits are deterministic).
fn history() -> &'static Vec<(char, GitId, GitId)> {
    static HISTORY: OnceLock<Vec<(char, GitId, GitId)>> = OnceLock::new();
    HISTORY.get_or_init(|| commit_history(&FixtureRepo::new()))
}

/// Writes the fixture constitution and books under `root`.
pub fn write_fixture(root: &Path) {
    std::fs::create_dir_all(root.join("constitution")).unwrap();
    std::fs::create_dir_all(root.join("books")).unwrap();
    std::fs::write(
        root.join("constitution/constitution.yaml"),
        constitution_text(),
    )
    .unwrap();
    std::fs::write(root.join("books/book-a.epd"), BOOK_A).unwrap();
    std::fs::write(root.join("books/book-b.epd"), BOOK_B).unwrap();
}

/// Runs the oracle binary with `--repo root` appended.
#[must_use]
pub fn oracle_at(root: &Path, args: &[&str]) -> Run {
    Command::new(ORACLE)
        .args(args)
        .arg("--repo")
        .arg(root)
        .output()
        .expect("the oracle binary runs")
        .into()
}

/// Stdout of a finished command as text.
#[must_use]
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Numbers and hash-chains `entries` from T-0001 and returns (file name, canonical bytes).
#[must_use]
pub fn chain(entries: &[Entry]) -> Vec<(String, Vec<u8>)> {
    let mut prev = Sha256Hex::zero();
    let mut used = 0.0;
    let mut files = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        let mut entry = entry.clone();
        let id = EntryId::new(u32::try_from(index + 1).unwrap());
        entry.id = Some(id);
        entry.prev_sha256 = Some(prev);
        settle_budget(&mut entry, used);
        used = entry.loss_budget.used_after;
        let bytes = entry.to_canonical().unwrap().into_bytes();
        prev = Sha256Hex::of(&bytes);
        files.push((id.file_name(), bytes));
    }
    files
}

/// Sets the loss budget of `entry` to what its verdict books after `used_before`.
pub fn settle_budget(entry: &mut Entry, used_before: f64) {
    entry.loss_budget.used_before = used_before;
    let decision = decide_recorded(entry, used_before);
    entry.loss_budget.booked = decision.loss_booked;
    entry.loss_budget.used_after = decision.loss_used_after;
}

/// sha256 of the fixture constitution.
#[must_use]
pub fn constitution_sha256() -> Sha256Hex {
    Sha256Hex::of(constitution_text().as_bytes())
}

/// A git id made of one repeated hex digit (no commit of the fixture history has one).
#[must_use]
pub fn git_id(digit: char) -> GitId {
    GitId::try_from(digit.to_string().repeat(40)).unwrap()
}

/// A fixed timestamp on 2026-10-16 at `hour:minute`.
#[must_use]
pub fn at(hour: u32, minute: u32) -> Timestamp {
    Timestamp::try_from(format!("2026-10-16T{hour:02}:{minute:02}:00Z")).unwrap()
}

/// The binary record of the fixture's engine commit `digit` (one of [`ENGINES`]), with bench
/// signature `bench`.
#[must_use]
pub fn binary(digit: char, bench: u64) -> BinaryRecord {
    let (_, commit, tree) = history()
        .iter()
        .find(|(known, _, _)| *known == digit)
        .unwrap_or_else(|| panic!("no fixture engine commit {digit}"));
    BinaryRecord {
        commit: commit.clone(),
        tree: tree.clone(),
        binary_sha256: Sha256Hex::of(digit.to_string().as_bytes()),
        bench_nodes: bench,
    }
}

/// The binary record of the fixture's engine `digit` with its own bench signature.
#[must_use]
pub fn engine(digit: char) -> BinaryRecord {
    let (_, bench) = ENGINES
        .iter()
        .find(|(known, _)| *known == digit)
        .unwrap_or_else(|| panic!("no fixture engine {digit}"));
    binary(digit, *bench)
}

/// The genesis entry of the fixture register.
#[must_use]
pub fn genesis_entry() -> Entry {
    Entry {
        id: None,
        prev_sha256: None,
        recorded_at: Some(at(9, 0)),
        profile: None,
        path: PathKind::Genesis,
        verdict: Verdict::Genesis,
        claimed_gain_nelo: 0.0,
        constitution_sha256: constitution_sha256(),
        oracle: OracleRecord {
            version: "0.1.0".into(),
            commit: OracleCommit::Known(git_id('a')),
            dirty: None,
            binary_sha256: None,
        },
        toolchain: "rustc 1.95.0 (59807616e 2026-04-14)".into(),
        candidate: engine('1'),
        predecessor: None,
        bound_at: at(9, 0),
        gate: None,
        proof: None,
        confirmation: None,
        stages: Vec::new(),
        loss_budget: LossBudget {
            booking: LossBooking::FinalStageNeloDeficit,
            booked: 0.0,
            used_before: 0.0,
            used_after: 0.0,
            limit: 10.0,
        },
        isolation: None,
    }
}

/// A stage of profile `bound` (index 0 `short`, 1 `long`) measured with `penta` on `path`,
/// or not run when `penta` is `None`.
#[must_use]
pub fn stage(index: usize, path: PathKind, penta: Option<[u64; 5]>) -> StageRecord {
    let (name, tc, book, text) = if index == 0 {
        ("short", "nodes=500", "books/book-a.epd", BOOK_A)
    } else {
        ("long", "10+0.1", "books/book-b.epd", BOOK_B)
    };
    let (elo0, elo1) = if path == PathKind::Randfall {
        (-10.0, 0.0)
    } else {
        (0.0, 10.0)
    };
    let params = SprtParams::new(elo0, elo1, 0.05, 0.05, Model::Normalized).unwrap();
    let record = StageRecord::not_run(
        name.into(),
        oracle::governance::time_control::parse(tc).unwrap(),
        book.into(),
        Sha256Hex::of(text.as_bytes()),
        &params,
        4,
        20000,
    );
    match penta {
        Some(penta) => measure(record, penta),
        None => record,
    }
}

/// `record` measured with `penta` under its own bounds, α and β: every statistic and the state
/// recomputed, so that only a rule outside the statistics can tell a forged stage from an honest one.
#[must_use]
pub fn measure(mut record: StageRecord, penta: [u64; 5]) -> StageRecord {
    let params = SprtParams::new(
        record.elo0,
        record.elo1,
        record.alpha,
        record.beta,
        Model::Normalized,
    )
    .unwrap();
    let status = sprt_status(&PentanomialCounts(penta), &params).unwrap();
    record.pentanomial = penta;
    record.pairs = status.pairs;
    record.games = status.games;
    record.llr = status.llr;
    record.nelo = status.nelo;
    record.nelo_ci95 = status.nelo_ci95;
    record.lower = params.lower_bound();
    record.upper = params.upper_bound();
    record.pgn_sha256 = Some(Sha256Hex::of(
        format!("{} {penta:?}", record.name).as_bytes(),
    ));
    record.state = match status.state {
        SprtDecision::AcceptH1 => StageState::AcceptH1,
        SprtDecision::AcceptH0 => StageState::AcceptH0,
        SprtDecision::Continue => StageState::Undecided,
    };
    record
}

/// A tested entry of profile `bound`; its verdict is what the evidence gives.
#[must_use]
pub fn tested_entry(
    path: PathKind,
    stages: Vec<StageRecord>,
    proof: Option<(ProofOutcome, ProofOutcome, Vec<String>)>,
    recorded: Timestamp,
) -> Entry {
    let mut entry = genesis_entry();
    entry.recorded_at = Some(recorded.clone());
    entry.bound_at = recorded;
    entry.profile = Some("bound".into());
    entry.path = path;
    entry.candidate = engine('3');
    entry.predecessor = Some(engine('1'));
    entry.gate = Some(GateRecord {
        popcnt_in_eval: true,
        software_popcount_in_eval: false,
    });
    entry.proof = proof.map(|(predecessor, candidate, detail)| ProofRecord {
        spec: "engine/proofs/klsk.yaml".into(),
        spec_sha256: Sha256Hex::of(b"klsk"),
        predecessor,
        candidate,
        detail,
    });
    entry.confirmation = entry
        .proof
        .as_ref()
        .map(|proof| confirmation(&proof.spec_sha256));
    entry.stages = stages;
    redecide(&mut entry);
    entry
}

/// Sets the verdict and claimed gain of `entry` (first after genesis) to what its stages give.
pub fn redecide(entry: &mut Entry) {
    let decision = decide_recorded(entry, 0.0);
    entry.verdict = decision.verdict;
    entry.claimed_gain_nelo = decision.claimed_gain_nelo;
}

/// An independent confirmation (Annex A3.3) of the proof spec with sha256 `proof_sha256`.
#[must_use]
pub fn confirmation(proof_sha256: &Sha256Hex) -> ConfirmationRecord {
    ConfirmationRecord {
        confirmed_by: "Ada Reviewer <ada@reviewer.invalid>".into(),
        proof_sha256: proof_sha256.clone(),
        statements: Statements {
            proof_meaningful: "KLSK: the predecessor fails to mate in 3/3, the candidate mates."
                .into(),
            class_rare: "yes".into(),
            classification_right: "A delimited class: king, bishop, knight vs. king.".into(),
        },
        file_sha256: Sha256Hex::of(b"confirmation"),
    }
}

/// Strings a YAML 1.1 reader would take for something else if they were not quoted.
#[must_use]
pub fn tricky_strings() -> Vec<String> {
    [
        "yes",
        "No",
        "ON",
        "off",
        "y",
        "n",
        "~",
        "null",
        "Null",
        "true",
        "FALSE",
        "",
        "0123",
        "0x1F",
        "0o17",
        "1e5",
        "1_000",
        "12:30:45",
        "2026-10-16",
        "2026-10-16T17:19:00Z",
        ".inf",
        "-.5",
        "+1",
        ".NaN",
        "=",
        "<<",
        "- dash",
        "key: value",
        "#comment",
        "&anchor",
        "*alias",
        "!tag",
        "%TAG",
        "@at",
        "`tick`",
        " leading",
        "trailing ",
        "quote \" and \\ backslash",
        "tab\there",
        "line\nbreak",
        "L\u{e4}ufer und Springer",
        "\u{1f600}",
        "[1, 2]",
        "{a: 1}",
        "a, b",
        "KLSK 3/3 mated in 31 (proof: pass)",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect()
}

/// Five entries: genesis, a Gewinn, a Korrektur, a rejected Standard change, a rejected Randfall;
/// each judged against the engine that landed last (engine 1, 3, 5, then 5 again: a rejected
/// change leaves the engine as it was).
#[must_use]
pub fn sample_entries() -> Vec<Entry> {
    use PathKind::{Randfall, Standard};
    use ProofOutcome::{Fail, Pass};
    let mut entries = vec![
        genesis_entry(),
        tested_entry(
            Standard,
            vec![
                stage(0, Standard, Some([80, 240, 720, 400, 160])),
                stage(1, Standard, Some([72, 256, 704, 408, 160])),
            ],
            None,
            at(11, 5),
        ),
        tested_entry(
            Randfall,
            vec![
                stage(0, Randfall, Some([300, 1200, 3000, 1190, 290])),
                stage(1, Randfall, Some([320, 1260, 3200, 1250, 300])),
            ],
            Some((
                Fail,
                Pass,
                vec!["KLSK 1/3 converted".into(), "KLSK 2/3 converted".into()],
            )),
            at(17, 19),
        ),
        tested_entry(
            Standard,
            vec![
                stage(0, Standard, Some([40, 100, 180, 60, 20])),
                stage(1, Standard, None),
            ],
            None,
            at(18, 0),
        ),
        tested_entry(
            Randfall,
            vec![stage(0, Randfall, None), stage(1, Randfall, None)],
            Some((Pass, Pass, tricky_strings())),
            at(18, 30),
        ),
    ];
    let judged = [('1', '3'), ('3', '5'), ('5', '7'), ('5', '9')];
    for (entry, (predecessor, candidate)) in entries[1..].iter_mut().zip(judged) {
        entry.predecessor = Some(engine(predecessor));
        entry.candidate = engine(candidate);
    }
    entries
}
