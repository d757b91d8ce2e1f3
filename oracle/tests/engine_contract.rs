//! The engine contract on a C engine: the fixture in `fixtures/c-engine/` (a minimal UCI engine
//! with a Makefile that honours `EXE=`, a `bench` in three engines' formats and a POPCNT
//! evaluation), committed into real git repositories and judged by the real `oracle` binary:
//! `oracle build` with a make recipe, and `oracle verify` under a constitution whose `engine:`
//! section states the make build, the scope `src/`, the bench, the gate and the options.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use oracle::integrity::sha256_hex;
use serde_json::Value;

use crate::support::c_engine_fixture::{
    BOOK, ENGINE, MAKEFILE, bench_of, compile, grouped, stronger_engine,
};
use crate::support::constitution_fixture::{ConstitutionFixture, ProfileFixture, StageFixture};
use crate::support::fixture_repo::{FixtureRepo, build_in};
use crate::support::{Run, enterable_by_the_sandbox, oracle};

/// The evaluation's attribute that compiles its popcount to the POPCNT instruction.
const POPCNT_TARGET: &str = "__attribute__((noinline, target(\"popcnt\")))";

/// The same function compiled for baseline x86-64: its popcount is software.
const NO_POPCNT_TARGET: &str = "__attribute__((noinline))";

/// The make build of the tests: the fixture's Makefile, called with `EXE={out}`.
const MAKE_BUILD: &str = "kind: make\ncommand: make EXE={out}\ncompiler: cc\n";

/// `__DATE__ __TIME__` in every C and C++ build: `SOURCE_DATE_EPOCH` is fixed at 1980-01-01.
const BUILD_DATE: &str = "Jan  1 1980 00:00:00";

/// A build cache the sandbox's unprivileged user can enter (the tests may run as root, whose
/// temporary directories are closed to it): under the test target directory, else `/tmp`.
fn cache(name: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let base = if enterable_by_the_sandbox(target) {
        target.to_owned()
    } else {
        std::env::temp_dir()
    };
    let dir = base.join(format!(
        "engine-contract-{name}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    fs::create_dir_all(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// `oracle build COMMIT` of `repo` with the make recipe `recipe` into `cache`.
fn build(repo: &FixtureRepo, commit: &str, recipe: &str, cache: &Path) -> Run {
    let file = cache.join(format!("recipe-{}.yaml", sha256_hex(recipe.as_bytes())));
    fs::write(&file, recipe).unwrap();
    build_in(repo, commit, cache, Some(&file))
}

/// The fixture at the root of a repository: `engine.c` and `Makefile`.
fn commit_engine(repo: &FixtureRepo, engine: &str, makefile: &str) -> String {
    repo.commit(
        &[("engine.c", engine), ("Makefile", makefile)],
        "tiny: the C fixture",
    )
    .to_string()
}

#[test]
fn make_builds_bit_identically_with_one_fixed_date_in_the_binary() {
    let repo = FixtureRepo::new();
    let commit = commit_engine(&repo, ENGINE, MAKEFILE);
    let first_cache = cache("date-1");
    let run = build(&repo, &commit, MAKE_BUILD, &first_cache);
    assert_eq!(run.code, 0, "{run:?}");
    let json = run.json();
    assert_eq!(
        (json["reproduced"].as_bool(), json["cached"].as_bool()),
        (Some(true), Some(false))
    );
    let toolchain = json["toolchain"].as_str().unwrap();
    assert!(
        toolchain.contains(" sha256 "),
        "the compiler's identity: {toolchain}"
    );
    // The engine prints `__DATE__ __TIME__`. Without SOURCE_DATE_EPOCH they are the moment of
    // compilation, and a rebuild a second later (a replay, years later) is another binary. The
    // oracle sets SOURCE_DATE_EPOCH to one fixed time, so every build of the sources is the same,
    // whichever commit holds them.
    let binary = PathBuf::from(json["binary"].as_str().unwrap());
    let mut child = Command::new(&binary)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"uci\nquit\n")
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let id = String::from_utf8_lossy(&output.stdout);
    assert!(id.contains(BUILD_DATE), "{id}");
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let again = build(&repo, &commit, MAKE_BUILD, &cache("date-2"));
    assert_eq!(again.code, 0, "{again:?}");
    assert_eq!(again.json()["cached"], false, "a fresh cache builds again");
    assert_eq!(again.json()["sha256"], json["sha256"]);
}

#[test]
fn a_build_that_yields_a_script_is_refused() {
    // A script runs whatever the machine has: this one would hand every game to Stockfish.
    let repo = FixtureRepo::new();
    let makefile =
        "all:\n\tprintf '#!/bin/sh\\nexec /usr/games/stockfish\\n' > $(EXE)\n\tchmod +x $(EXE)\n";
    let commit = commit_engine(&repo, ENGINE, makefile);
    let run = build(&repo, &commit, MAKE_BUILD, &cache("script"));
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("not an ELF executable"), "{run:?}");
}

/// Round seven: the two copies of a build differed only in their directory, so a build that
/// read another ambient input (here the machine's name) reproduced on this machine and would
/// give another binary on the next: a time bomb for every later replay. Each copy now sees a
/// machine name of its own, and such a build is refused.
#[test]
fn a_build_that_embeds_the_machine_name_is_not_reproducible() {
    let repo = FixtureRepo::new();
    let main =
        "#include <stdio.h>\n#include \"host.h\"\nint main(void) { puts(HOST); return 0; }\n";
    let makefile = "all:\n\tprintf '#define HOST \"%s\"\\n' \"$$(cat /proc/sys/kernel/hostname)\" > host.h\n\tcc -O1 -o $(EXE) main.c\n";
    let commit = repo
        .commit(
            &[("main.c", main), ("Makefile", makefile)],
            "tiny: the machine's name",
        )
        .to_string();
    let run = build(&repo, &commit, MAKE_BUILD, &cache("hostname"));
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("not reproducible"), "{run:?}");
}

/// A build is given the repository without the register's records, and one fixed time: a
/// Makefile that writes what it finds in `register/` and `evidence/` into the binary, and an
/// engine that prints `__DATE__`, build the same binary before and after an entry lands a day
/// later, and the commit that only adds the entry is served from the cache. Before, such an
/// engine changed when its own entry landed, so the next run's chain of custody (the predecessor
/// rebuilds to the registered sha256) could never hold again.
#[test]
fn a_build_never_sees_the_registers_records() {
    let repo = FixtureRepo::new();
    let main = "#include <stdio.h>\n#include \"records.h\"\nint main(void) { puts(RECORDS \" \" __DATE__); return 0; }\n";
    let makefile = "all:\n\tprintf '#define RECORDS \"%s\"\\n' \"$$(cat register/* evidence/*/* 2>/dev/null | wc -c)\" > records.h\n\tcc -O1 -o $(EXE) main.c\n";
    let engine = [("main.c", main), ("Makefile", makefile)];
    let genesis = [("register/T-0001.yaml", "id: T-0001\n")];
    let landed = [
        ("register/T-0002.yaml", "id: T-0002\n"),
        ("evidence/T-0002/report.md", "# T-0002\n"),
    ];
    let before = repo
        .commit(&[&engine[..], &genesis].concat(), "tiny: and its genesis")
        .to_string();
    let same_day = repo.commit(
        &[&engine[..], &genesis, &landed].concat(),
        "register: T-0002",
    );
    let same_day = repo.repo.find_commit(same_day).unwrap();
    let a_day_later = git2::Signature::new(
        "Fixture",
        "fixture@example.invalid",
        &git2::Time::new(1_700_000_000 + 86_400, 0),
    )
    .unwrap();
    let after = repo
        .repo
        .commit(
            None,
            &a_day_later,
            &a_day_later,
            "register: T-0002",
            &same_day.tree().unwrap(),
            &[&same_day.parent(0).unwrap()],
        )
        .unwrap()
        .to_string();
    let cache = cache("records");
    let [first, second] = [&before, &after].map(|commit| {
        let run = build(&repo, commit, MAKE_BUILD, &cache);
        assert_eq!(run.code, 0, "{run:?}");
        run.json()
    });
    assert_eq!(first["sha256"], second["sha256"]);
    assert_eq!(second["cached"], true, "the same sources: {second:#}");
    let printed = Command::new(first["binary"].as_str().unwrap())
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&printed.stdout),
        "0 Jan  1 1980\n",
        "the build read no record and the fixed date"
    );
}

/// Round seven: a build that links its output to a program of the host, which its sandbox
/// cannot see but the oracle, reading the output on the host, could. Both copies make the same
/// link, so they "reproduce"; the oracle took the host's program as the candidate.
#[test]
fn a_build_whose_output_links_to_a_host_program_is_refused() {
    let cache = cache("linked");
    let source = cache.join("host-engine.c");
    fs::write(&source, stronger_engine()).unwrap();
    let host_program = cache.join("host-engine");
    compile("cc", &source, &host_program);
    let repo = FixtureRepo::new();
    let makefile = format!("all:\n\tln -sf {} $(EXE)\n", host_program.display());
    let commit = commit_engine(&repo, ENGINE, &makefile);
    let run = build(&repo, &commit, MAKE_BUILD, &cache);
    assert_eq!(run.code, 1, "the candidate's fault: {run:?}");
    assert!(
        run.stderr.contains("out/engine") && run.stderr.contains("symbolic link"),
        "names the link: {run:?}"
    );
}

#[test]
fn host_dependent_flags_are_refused_wherever_they_come_from() {
    let repo = FixtureRepo::new();
    let plain = commit_engine(&repo, ENGINE, MAKEFILE);
    let in_makefile = commit_engine(
        &repo,
        ENGINE,
        // An absolute compiler path too: the wrapper stands in the compiler's own place.
        &MAKEFILE
            .replace("CC ?= cc", "CC = /usr/bin/gcc")
            .replace("EXTRA =", "EXTRA = -mtune=native"),
    );
    let cases = [
        (
            &plain,
            "kind: make\ncommand: make EXE={out} EXTRA=-march=native\ncompiler: cc\n".to_owned(),
            "-march=native",
        ),
        (
            &plain,
            "kind: command\ncommand: cc -O2 -mcpu=native -o {out} engine.c\ncompiler: cc\n"
                .to_owned(),
            "-mcpu=native",
        ),
        (
            &plain,
            format!("{MAKE_BUILD}environment: {{CFLAGS: -O2 -march=native}}\n"),
            "-march=native",
        ),
        (&in_makefile, MAKE_BUILD.to_owned(), "-mtune=native"),
    ];
    let cache = cache("native");
    for (commit, recipe, flag) in cases {
        let run = build(&repo, commit, &recipe, &cache);
        assert_eq!(run.code, 2, "{recipe}: {run:?}");
        assert!(
            run.json()["error"]
                .as_str()
                .unwrap()
                .contains(&format!("the host-dependent flag `{flag}`")),
            "{recipe}: {run:?}"
        );
    }
    let run = build(&repo, &plain, MAKE_BUILD, &cache);
    assert_eq!(
        run.code, 0,
        "the same tree without the flag builds: {run:?}"
    );
}

/// A repository judged by a constitution with a make contract: `src/` holds the engine.
struct ContractRepo {
    repo: FixtureRepo,
    cache: PathBuf,
}

/// The parts of the contract a test varies.
struct Contract<'a> {
    bench_args: &'a str,
    output: &'a str,
    trailer: &'a str,
    gate: &'a str,
    options: &'a str,
}

impl Default for Contract<'_> {
    fn default() -> Self {
        Self {
            bench_args: "[bench]",
            output: "[\"{nodes} nodes {nps} nps\"]",
            trailer: "{key: Bench}",
            gate: "gate:\n    symbols: [evaluate]\n    callee_depth: 1\n",
            options: "  options: {Threads: 1, Hash: 16}\n",
        }
    }
}

impl ContractRepo {
    /// The first commit: the engine in `src/`, the constitution, the book, an empty register.
    fn new(contract: &Contract<'_>) -> Self {
        let engine = format!(
            "  build:\n    kind: make\n    command: make -C src EXE={{out}}\n    compiler: cc\n  \
             scope: [src/]\n  bench:\n    args: {}\n    output: {}\n    trailer: {}\n  {}{}",
            contract.bench_args, contract.output, contract.trailer, contract.gate, contract.options
        );
        let stage = StageFixture {
            name: "short",
            tc: "nodes=300",
            book: "books/book.epd",
            book_sha256: sha256_hex(BOOK.as_bytes()),
            min_games: 0,
            max_games: 8,
            standard: [0.0, 150.0],
            randfall: [-150.0, 0.0],
        };
        let constitution = ConstitutionFixture {
            version: 3,
            identical_binaries: true,
            profile_overrides: &[],
            extra_rustflags: false,
            engine: Some(engine),
            profiles: vec![ProfileFixture {
                name: "smoke",
                binding: false,
                description: "the C fixture's one short stage",
                error_rate: 0.1,
                batch_size: 2,
                adjudicated: true,
                stages: vec![stage],
            }],
        }
        .yaml();
        let repo = FixtureRepo::new();
        repo.commit(
            &[
                ("src/engine.c", ENGINE),
                ("src/Makefile", MAKEFILE),
                ("constitution/constitution.yaml", &constitution),
                ("books/book.epd", BOOK),
                ("register/.keep", ""),
            ],
            "genesis: the C fixture",
        );
        Self {
            repo,
            cache: cache("verify"),
        }
    }

    /// Commits a candidate whose engine is `engine` (the rest as the first commit).
    fn candidate(&self, engine: &str, message: &str) {
        let head = self.repo.repo.head().unwrap().peel_to_tree().unwrap();
        let mut files: Vec<(String, String)> = Vec::new();
        head.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
            if let Some(git2::ObjectType::Blob) = entry.kind() {
                let blob = self.repo.repo.find_blob(entry.id()).unwrap();
                let path = format!("{dir}{}", entry.name().unwrap());
                let text = String::from_utf8(blob.content().to_vec()).unwrap();
                files.push((path, text));
            }
            git2::TreeWalkResult::Ok
        })
        .unwrap();
        for (path, text) in &mut files {
            if path == "src/engine.c" {
                *text = engine.to_owned();
            }
        }
        let files: Vec<(&str, &str)> = files
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        self.repo.commit(&files, message);
    }

    /// `oracle verify HEAD --profile smoke EXTRA… --json`: exit code, result and stderr.
    fn verify(&self, extra: &[&str]) -> (i32, Value, String) {
        let out = self.repo.path().join("out");
        let _ = fs::remove_dir_all(&out);
        let mut args = vec![
            "verify",
            "HEAD",
            "--repo",
            self.repo.path().to_str().unwrap(),
            "--profile",
            "smoke",
            "--cache-dir",
            self.cache.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--json",
        ];
        args.extend_from_slice(extra);
        let run = oracle(&args);
        let result = serde_json::from_str(&run.stdout).unwrap_or(Value::Null);
        (run.code, result, run.stderr)
    }

    /// The run's `bench.json`.
    fn bench_file(&self) -> Value {
        let text = fs::read_to_string(self.repo.path().join("out/bench.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    }
}

/// One bench format: arguments, output patterns, trailer form, trailer key, number form.
type FormatCase = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    fn(u64) -> String,
);

#[test]
fn each_bench_and_trailer_format_is_read_and_held_to_the_measurement() {
    let engine = stronger_engine();
    let nodes = bench_of(&engine);
    assert!(nodes >= 1000, "a grouped trailer needs a comma: {nodes}");
    let plain = |n: u64| n.to_string();
    let cases: [FormatCase; 3] = [
        (
            "[bench]",
            "[\"{nodes} nodes {nps} nps\"]",
            "{key: Bench}",
            "Bench: ",
            plain,
        ),
        (
            "[bench, stockfish]",
            "[\"Nodes searched : {nodes}\", \"Nodes/second : {nps}\"]",
            "{key: Bench, digit_groups: true}",
            "BENCH : ",
            grouped,
        ),
        (
            "[bench, ethereal]",
            "[\"OVERALL: {nodes} nodes {nps} nps\"]",
            "{key: Bench}",
            "bench: ",
            plain,
        ),
    ];
    for (bench_args, output, trailer, key, number) in cases {
        let contract = Contract {
            bench_args,
            output,
            trailer,
            ..Contract::default()
        };
        let repo = ContractRepo::new(&contract);
        let declared = format!("{key}{}", number(nodes));
        repo.candidate(
            &engine,
            &format!("eval: weigh the centre more\n\n{declared}\n"),
        );
        let (code, result, stderr) = repo.verify(&["--no-play"]);
        assert_eq!(code, 0, "{declared}: {result}\n{stderr}");
        assert_eq!(repo.bench_file()["candidate"], nodes, "{declared}");
        // One node more in the same form, judged against the same predecessor, is refused
        // before any game.
        let wrong = format!("{key}{}", number(nodes + 1));
        repo.candidate(ENGINE, "withdraw");
        repo.candidate(&engine, &format!("eval: off by one\n\n{wrong}\n"));
        let (code, result, stderr) = repo.verify(&["--no-play", "--base", "HEAD~3"]);
        assert_eq!(code, 2, "{wrong}: {result}\n{stderr}");
        assert!(stderr.contains("but its commit says"), "{wrong}: {stderr}");
    }
    // A pattern that matches no line of the engine's output is an error naming the pattern.
    let contract = Contract {
        bench_args: "[bench, ethereal]",
        output: "[\"Nodes searched : {nodes}\"]",
        ..Contract::default()
    };
    let repo = ContractRepo::new(&contract);
    repo.candidate(
        &engine,
        &format!("eval: weigh the centre more\n\nBench: {nodes}\n"),
    );
    let (code, _, stderr) = repo.verify(&["--no-play"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("Nodes searched : {nodes}"), "{stderr}");
}

#[test]
fn the_gate_reads_a_c_function_with_and_without_popcnt() {
    let repo = ContractRepo::new(&Contract::default());
    let engine = stronger_engine();
    repo.candidate(
        &engine,
        &format!("eval: centre\n\nBench: {}\n", bench_of(&engine)),
    );
    let (code, result, stderr) = repo.verify(&["--no-play"]);
    assert_eq!(code, 0, "{result}\n{stderr}");
    assert!(stderr.contains("PASS:"), "{stderr}");
    let software = engine.replace(POPCNT_TARGET, NO_POPCNT_TARGET);
    assert_ne!(software, engine);
    repo.candidate(
        &software,
        &format!("eval: baseline x86-64\n\nBench: {}\n", bench_of(&software)),
    );
    let (code, result, stderr) = repo.verify(&["--no-play"]);
    assert_eq!(code, 1, "{result}\n{stderr}");
    assert!(stderr.contains("step 4 (gate) failed"), "{stderr}");
    assert!(stderr.contains("`evaluate`"), "{stderr}");
}

#[test]
fn both_engines_get_the_contracts_options_in_every_game() {
    // The fixture exits instead of searching until Threads and Hash are set: every game it
    // finishes was played with the contract's options on both sides.
    let engine = stronger_engine();
    let message = format!("eval: centre\n\nBench: {}\n", bench_of(&engine));
    let repo = ContractRepo::new(&Contract::default());
    repo.candidate(&engine, &message);
    let (code, result, stderr) = repo.verify(&[]);
    assert!(
        code == 0 || code == 1,
        "a verdict, not an error: {result}\n{stderr}"
    );
    let stage = &result["stages"][0]["record"];
    assert!(stage["games"].as_u64().unwrap() > 0, "{result}");
    assert_eq!(stage["faults"]["candidate"]["disconnect"], 0, "{result}");
    assert_eq!(stage["faults"]["predecessor"]["disconnect"], 0, "{result}");
    let without = ContractRepo::new(&Contract {
        options: "",
        ..Contract::default()
    });
    without.candidate(&engine, &message);
    let (code, result, stderr) = without.verify(&[]);
    assert_eq!(code, 2, "{result}\n{stderr}");
    assert!(stderr.contains("predecessor disconnected"), "{stderr}");
}

/// A C++ evaluation, as an engine contract names it: demangled, with its parameter list.
const CPP_ENGINE: &str = r#"
#include <cstdint>
struct Position { std::uint64_t white, black; };
namespace Eval {
__attribute__((noinline, target("popcnt"))) int evaluate(const Position& pos) {
    return __builtin_popcountll(pos.white) - __builtin_popcountll(pos.black);
}
}
int main(int argc, char**) {
    Position pos{0xffffULL * static_cast<std::uint64_t>(argc), 0xff00ULL};
    return Eval::evaluate(pos) == 99;
}
"#;

#[test]
fn the_gate_reads_a_cpp_function_by_its_demangled_name() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("engine.cpp");
    let binary = dir.path().join("engine");
    for (name, text) in [
        ("popcnt", CPP_ENGINE.to_owned()),
        ("software", CPP_ENGINE.replace(", target(\"popcnt\")", "")),
    ] {
        fs::write(&source, text).unwrap();
        compile("g++", &source, &binary);
        let run = oracle(&[
            "gate",
            binary.to_str().unwrap(),
            "--symbol",
            "Eval::evaluate(Position const&)",
            "--json",
        ]);
        let report = run.json();
        let entry = &report["functions_scanned"][0];
        assert_eq!(
            entry["symbol"], "_ZN4Eval8evaluateERK8Position",
            "{name}: {report}"
        );
        assert_eq!(
            entry["name"], "Eval::evaluate(Position const&)",
            "{name}: {report}"
        );
        match name {
            "popcnt" => assert_eq!(
                (run.code, report["pass"].as_bool()),
                (0, Some(true)),
                "{report}"
            ),
            _ => assert_eq!(
                (run.code, report["pass"].as_bool()),
                (1, Some(false)),
                "{report}"
            ),
        }
    }
}

// Files fetched outside the sandbox and pinned by sha256 (`engine.fetch`): the engine below
// reads its evaluation weight from `src/net.h`, which no commit holds, as Stockfish's reads its
// network from a file `make net` downloads.

/// The fixture with its evaluation weight `weight` (an expression) read through `net.h`.
fn needs_net(weight: &str) -> String {
    let engine = ENGINE.replace(
        "int score = material + 4 * presence;",
        &format!("int score = material + {weight} * presence;"),
    );
    assert_ne!(engine, ENGINE, "the fixture's evaluation line moved");
    format!("#include \"net.h\"\n{engine}")
}

/// The bench of the fixture with the evaluation weight `weight`, measured outside the oracle.
fn bench_at(weight: u32) -> u64 {
    bench_of(&ENGINE.replace("4 * presence", &format!("{weight} * presence")))
}

/// `net.h` setting the weight, served from `dir` as a `file://` URL; (URL, its sha256).
fn serve_net(dir: &Path, weight: u32) -> (String, String) {
    let file = dir.join(format!("net-{weight}.h"));
    let text = format!("#define NET_WEIGHT {weight}\n");
    fs::write(&file, &text).unwrap();
    (
        format!("file://{}", file.display()),
        sha256_hex(text.as_bytes()),
    )
}

/// The default contract's options, then `fetch:` with one pin.
fn options_and_fetch(url: &str, sha256: &str, path: &str) -> String {
    format!(
        "{}  fetch:\n  - {{url: '{url}', sha256: '{sha256}', path: '{path}'}}\n",
        Contract::default().options
    )
}

#[test]
fn a_pinned_file_is_fetched_once_and_placed_in_every_build() {
    let served = tempfile::tempdir().unwrap();
    let (url, sha256) = serve_net(served.path(), 9);
    let options = options_and_fetch(&url, &sha256, "src/net.h");
    let repo = ContractRepo::new(&Contract {
        options: &options,
        ..Contract::default()
    });
    // Both sides need the file: the predecessor and the candidate each read their weight from it.
    let (nine, ten) = (bench_at(9), bench_at(10));
    assert_ne!(nine, ten, "the weight moves the bench");
    repo.candidate(
        &needs_net("NET_WEIGHT"),
        &format!("eval: the weight from the network\n\nBench: {nine}\n"),
    );
    repo.candidate(
        &needs_net("(NET_WEIGHT + 1)"),
        &format!("eval: one more than the network says\n\nBench: {ten}\n"),
    );
    let (code, result, stderr) = repo.verify(&["--no-play"]);
    assert_eq!(code, 0, "{result}\n{stderr}");
    assert_eq!(repo.bench_file()["candidate"], ten, "{stderr}");
    assert_eq!(repo.bench_file()["predecessor"], nine, "{stderr}");
    let cached = repo.cache.join("fetched").join(&sha256);
    assert_eq!(sha256_hex(&fs::read(&cached).unwrap()), sha256);
}

#[test]
fn a_wrong_pin_or_a_path_the_tree_has_stops_the_build_naming_it() {
    let served = tempfile::tempdir().unwrap();
    let (url, sha256) = serve_net(served.path(), 9);
    let engine = stronger_engine();
    let message = format!("eval: centre\n\nBench: {}\n", bench_of(&engine));
    let verify_with = |options: &str| {
        let repo = ContractRepo::new(&Contract {
            options,
            ..Contract::default()
        });
        repo.candidate(&engine, &message);
        let (code, _, stderr) = repo.verify(&["--no-play"]);
        (repo, code, stderr)
    };

    let wrong = "0".repeat(64);
    let (repo, code, stderr) = verify_with(&options_and_fetch(&url, &wrong, "src/net.h"));
    assert_eq!(code, 2, "{stderr}");
    for part in [&url, &wrong, &sha256] {
        assert!(stderr.contains(part.as_str()), "{part} in {stderr}");
    }
    assert!(
        !repo.cache.join("fetched").exists(),
        "a file that is not the pinned one is never cached"
    );
    assert_eq!(fs::read_dir(repo.cache.join("work")).unwrap().count(), 0);

    let (_, code, stderr) = verify_with(&options_and_fetch(&url, &sha256, "src/Makefile"));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("the tree already has `src/Makefile`"),
        "{stderr}"
    );

    let upper = sha256.to_uppercase();
    let (_, code, stderr) = verify_with(&options_and_fetch(&url, &upper, "src/net.h"));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("engine.fetch[0].sha256"), "{stderr}");
}

#[test]
fn init_writes_the_pin_and_a_changed_pin_never_reuses_a_binary() {
    let served = tempfile::tempdir().unwrap();
    let repo = FixtureRepo::new();
    repo.commit(
        &[
            ("src/Makefile", MAKEFILE),
            ("src/engine.c", &needs_net("NET_WEIGHT")),
        ],
        "tiny: the weight from the network\n\nBench: 1000\n",
    );
    let mut config = repo.repo.config().unwrap();
    config.set_str("user.name", "Maintainer").unwrap();
    config
        .set_str("user.email", "maintainer@example.invalid")
        .unwrap();
    let mut checkout = git2::build::CheckoutBuilder::new();
    repo.repo.checkout_head(Some(checkout.force())).unwrap();
    let book = served.path().join("openings.epd");
    fs::write(&book, BOOK).unwrap();
    let cache = cache("init-fetch");
    let init = |weight: u32, extra: &[&str]| {
        let (url, sha256) = serve_net(served.path(), weight);
        let pin = format!("{url} {sha256} src/net.h");
        let mut args = vec![
            "init",
            "--repo",
            repo.path().to_str().unwrap(),
            "--cache-dir",
            cache.to_str().unwrap(),
            "--build",
            "make -C src EXE={out}",
            "--scope",
            "src/",
            "--fetch",
            &pin,
        ];
        args.extend_from_slice(extra);
        (oracle(&args), sha256)
    };
    let builds = || fs::read_dir(cache.join("builds")).unwrap().count();
    // Without a gate stated, init stops after building HEAD with the weight-9 file: the cache
    // then holds that binary of this very tree.
    let (first, _) = init(9, &[]);
    assert_eq!(first.code, 2, "{first:?}");
    assert!(
        first.stderr.contains("init: checking the gate"),
        "{first:?}"
    );
    assert_eq!(builds(), 1);
    // The same tree under another pin is another build, and so is the setup commit.
    let (second, sha256) = init(4, &["--no-gate", "--book", book.to_str().unwrap()]);
    assert_eq!(second.code, 0, "{second:?}");
    assert_eq!(builds(), 3, "HEAD is built again with the other file");
    assert!(
        second.stdout.contains(&format!("→ {} nodes", bench_at(4))),
        "{second:?}"
    );
    assert!(second.stdout.contains("fetch      file://"), "{second:?}");
    let constitution =
        fs::read_to_string(repo.path().join("constitution/constitution.yaml")).unwrap();
    assert!(
        constitution.contains(&format!("sha256: {sha256}\n    path: src/net.h\n")),
        "{constitution}"
    );
}
