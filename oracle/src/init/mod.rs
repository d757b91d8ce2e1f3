//! `oracle init`: puts the oracle on a repository that has no constitution (docs/init.md).
//!
//! [`run`] reads like its steps: detect the build and scope from HEAD's files ([`detect`]), build
//! HEAD once in the sandbox, run its bench to learn the node-count format, check the gate, take
//! or generate the books, compose the constitution and workflows ([`files`]), then commit them
//! as the setup commit, build that commit and record it as the register's genesis entry. The
//! genesis entry names the setup commit because the register reads each entry's rules from the
//! tree it was judged at; it is left in the work tree for the maintainer to commit.
//!
//! Nothing is written until everything has been computed; what lands, lands together, and a
//! failure while landing takes back what was written.

pub mod detect;
pub mod files;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use git2::{Oid, Repository};

use crate::book::{check, generate};
use crate::builder::bench::{self, BenchRules, TrailerForm};
use crate::builder::fetch::PinnedFile;
use crate::builder::sandbox::engine::EngineIsolation;
use crate::builder::source::add_to_index;
use crate::builder::{self, BuildError, BuildOutcome, BuildRequest, Limits, Sandbox};
use crate::governance::Constitution;
use crate::governance::constitution::{CONSTITUTION_PATH, ConstitutionError, GateRules};
use crate::governance::contract::{EngineContract, GateContract, OptionValue};
use crate::governance::entry::{BinaryRecord, OracleCommit};
use crate::governance::hash::{GitId, Sha256Hex};
use crate::governance::register::{self, AppendError, GenesisRecord};
use crate::governance::timestamp::Timestamp;
use crate::integrity::{FileError, write_atomically};
use detect::{BuildChoice, CannotTell, SourceTree};
use files::{PinnedBook, Setting};

/// The register's first entry, written by init.
const GENESIS_PATH: &str = "register/T-0001.yaml";

/// The generated books, as Coherent's were made (docs/architecture.md).
const BOOK_PATHS: [&str; 2] = ["books/book-a.epd", "books/book-b.epd"];

/// Positions per generated book unless `--book-positions` says otherwise: enough that a stage of
/// thousands of games rarely plays an opening twice.
pub const BOOK_POSITIONS: usize = 4000;

/// Random plies, window (cp) and nodes per scoring search of a generated book's positions.
const BOOK_SPEC: (usize, i32, u64) = (8, 50, 10_000);

/// Commits of HEAD's first-parent history read for the bench trailer's form.
const TRAILER_HISTORY: usize = 2000;

/// The options both engines get unless `--option` says otherwise (what Fishtest and OpenBench
/// set for both sides).
const DEFAULT_OPTIONS: [(&str, i64); 2] = [("Threads", 1), ("Hash", 16)];

/// The setup commit's message.
const SETUP_MESSAGE: &str = "oracle: constitution, books and workflows (oracle init)\n\n\
    The engine contract and profiles in constitution/, the books they pin, and the GitHub\n\
    workflows that judge pull requests and audit the register.\n";

/// The gate as the maintainer chose it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateChoice {
    /// Neither `--gate-symbol` nor `--no-gate`: init cannot tell and says so.
    Unstated,
    /// `--gate-symbol NAME…`.
    Symbols(Vec<String>),
    /// `--no-gate`.
    None,
}

/// What `oracle init` is asked.
#[derive(Debug, Clone)]
pub struct InitRequest {
    /// The repository (its work tree's root).
    pub repo: PathBuf,
    /// `--build`, `--binary`, `--scope` (the host toolchain is filled in here).
    pub build: BuildChoice,
    /// `--bench 'ARGS'` [default: `bench`].
    pub bench_args: Option<Vec<String>>,
    /// `--bench-output PATTERN` (repeatable) [default: the known format that reads the output].
    pub bench_output: Vec<String>,
    /// The gate.
    pub gate: GateChoice,
    /// `--option NAME=VALUE`, over Threads 1 and Hash 16.
    pub options: Vec<(String, String)>,
    /// `--book FILE`: the EPD every stage plays from; none: two books generated with the engine.
    pub book: Option<PathBuf>,
    /// `--book-positions N`: positions per generated book.
    pub book_positions: usize,
    /// `--fetch 'URL SHA256 PATH'`: files the build needs, fetched outside the sandbox.
    pub fetch: Vec<PinnedFile>,
    /// The build cache.
    pub cache_dir: PathBuf,
}

/// What init did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Initialised {
    /// The contract written.
    pub contract: EngineContract,
    /// How the build was found.
    pub found: String,
    /// The known bench format that reads the output, or `--bench-output`.
    pub bench_format: String,
    /// The engine's node count (the genesis entry's signature).
    pub bench_nodes: u64,
    /// Commits of the history with a bench trailer in the contract's form.
    pub trailer_commits: usize,
    /// The setup commit, now HEAD.
    pub setup_commit: String,
    /// sha256 of its binary.
    pub binary_sha256: String,
    /// The files the setup commit added.
    pub committed: Vec<String>,
    /// The genesis entry, left for the maintainer to commit.
    pub genesis: String,
    /// The register's head after genesis.
    pub register_head: String,
}

/// Why init stopped; nothing was written unless it says so.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    /// The files leave a choice to the maintainer.
    #[error(transparent)]
    CannotTell(#[from] CannotTell),
    /// A file init would write is there.
    #[error(
        "{0} exists: `oracle init` sets up a repository that has no constitution and overwrites \
         nothing (nothing was written)"
    )]
    Exists(String),
    /// The repository cannot be set up.
    #[error("--repo {path}: {reason}")]
    Repository {
        /// The path given.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A git operation failed.
    #[error("git: {0}")]
    Git(#[from] git2::Error),
    /// The engine did not build.
    #[error("building {commit}: {source}{hint}")]
    Build {
        /// Which commit.
        commit: String,
        /// Why.
        source: Box<BuildError>,
        /// What to pass, when the build was detected rather than given.
        hint: String,
    },
    /// The bench did not run or could not be read.
    #[error("bench: {source}{hint}")]
    Bench {
        /// Why.
        source: bench::BenchError,
        /// What to pass.
        hint: String,
    },
    /// The gate fails on the engine as it stands, or could not read it.
    #[error("gate: {0}")]
    Gate(String),
    /// The given book is unusable.
    #[error("--book {path}: {reason}")]
    Book {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The books could not be generated.
    #[error("generating the books with the engine: {0} (or pass --book FILE)")]
    Generate(#[from] generate::GenerateError),
    /// A file could not be written.
    #[error(transparent)]
    File(#[from] FileError),
    /// The composed constitution does not load (a defect of init).
    #[error("the composed constitution does not load: {0}")]
    Constitution(#[from] Box<ConstitutionError>),
    /// The genesis entry was refused (everything init wrote was taken back).
    #[error("genesis: {0} (everything init wrote was taken back)")]
    Genesis(#[from] AppendError),
}

/// Sets the repository up; `step` hears each step as it starts.
pub fn run(request: &InitRequest, step: &mut dyn FnMut(&str)) -> Result<Initialised, InitError> {
    let repo = open(&request.repo)?;
    let workdir = repo
        .workdir()
        .ok_or_else(|| repository_error(&request.repo, "a bare repository has no work tree"))?
        .to_owned();
    let head = repo
        .head()
        .and_then(|head| head.peel_to_commit())
        .map_err(|_| repository_error(&request.repo, "HEAD has no commit"))?;
    let tree = HeadTree::read(&repo, &head)?;
    let messages = recent_messages(&repo, head.id());
    for path in [CONSTITUTION_PATH, files::PROSE_PATH, GENESIS_PATH] {
        refuse_existing(&workdir, &tree, path)?;
    }

    step("detecting the build");
    let mut choice = request.build.clone();
    choice.host_toolchain = host_toolchain();
    let detected = detect::detect(&tree, &choice)?;
    let mut contract = EngineContract {
        build: detected.build,
        scope: detected.scope,
        bench: BenchRules {
            args: request
                .bench_args
                .clone()
                .unwrap_or_else(|| BenchRules::standard().args),
            output: Vec::new(),
            trailer: trailer_form(&messages),
        },
        gate: GateContract::None,
        options: options(&request.options),
        fetch: request.fetch.clone(),
    };
    let hint = if request.build.command.is_some() || contract.build.native().is_none() {
        String::new()
    } else {
        format!(
            "\n(the build was detected as {}: pass --build 'COMMAND … {{out}}' with the command \
             that builds the engine)",
            detected.found
        )
    };

    step(&format!(
        "building HEAD ({}) in the sandbox",
        detected.found
    ));
    let sandbox = Sandbox::detect(Limits::build());
    let engine = build_commit(request, &contract, &sandbox, &head.id().to_string(), &hint)?;

    step("running the bench to learn its format");
    let isolation = EngineIsolation::detect();
    let bench_hint = format!(
        "\n(pass --bench 'ARGS' with the arguments that make the engine print its node count{})",
        if request.bench_output.is_empty() {
            ", and --bench-output 'PATTERN' with `{nodes}` where no known format reads it"
        } else {
            ""
        }
    );
    let bench_error = |source| InitError::Bench {
        source,
        hint: bench_hint.clone(),
    };
    let output =
        bench::run_output(&engine.binary, &contract.bench.args, isolation).map_err(bench_error)?;
    let bench_format =
        choose_output(&mut contract.bench, &request.bench_output, &output).map_err(bench_error)?;

    step("checking the gate");
    contract.gate = gate(&request.gate, &engine.binary)?;

    let books = books(request, &engine.binary, &contract, step)?;
    let pinned: Vec<PinnedBook> = books
        .iter()
        .map(|(path, bytes)| PinnedBook {
            path: path.clone(),
            sha256: Sha256Hex::of(bytes).to_string(),
        })
        .collect();
    let branch = repo
        .head()
        .ok()
        .filter(git2::Reference::is_branch)
        .and_then(|head| head.shorthand().map(str::to_owned))
        .unwrap_or_else(|| "main".to_owned());
    let name = workdir.file_name().map_or_else(
        || "the engine".into(),
        |name| name.to_string_lossy().into_owned(),
    );
    let now = Timestamp::now();
    let date = now.to_string();
    let oracle_rev = match crate::verify::provenance::built_from() {
        OracleCommit::Known(commit) => commit.to_string(),
        OracleCommit::Unknown => "main".to_owned(),
    };
    let setting = Setting {
        name: &name,
        date: date.get(..10).unwrap_or(&date),
        branch: &branch,
        oracle_git: env!("CARGO_PKG_REPOSITORY"),
        oracle_rev: &oracle_rev,
        books: [&pinned[0], pinned.last().unwrap_or(&pinned[0])],
    };
    let mut written = files::compose(&contract, &setting);
    written.extend(books);
    for (path, _) in &written {
        refuse_existing(&workdir, &tree, path)?;
    }
    let constitution_bytes = &written[0].1;
    let constitution =
        Constitution::parse(constitution_bytes, Path::new(CONSTITUTION_PATH)).map_err(Box::new)?;
    let constitution_sha256 = Sha256Hex::of(constitution_bytes);

    step("building the setup commit, which the genesis entry records");
    let setup = setup_commit(&repo, &head, &written)?;
    let genesis_engine = build_commit(request, &contract, &sandbox, &setup.to_string(), "")?;
    let signature = bench::measure(&genesis_engine.binary, &contract.bench, isolation, 2)
        .map_err(bench_error)?;

    step("writing the files, the setup commit and the genesis entry");
    let record = GenesisRecord {
        engine: BinaryRecord {
            commit: git_id(&genesis_engine.commit)?,
            tree: git_id(&genesis_engine.tree)?,
            binary_sha256: Sha256Hex::try_from(genesis_engine.sha256.clone())
                .map_err(|e| InitError::Gate(e.to_string()))?,
            bench_nodes: signature.nodes,
        },
        toolchain: genesis_engine.toolchain.clone(),
        oracle_commit: match crate::verify::provenance::built_from() {
            OracleCommit::Known(commit) => commit,
            OracleCommit::Unknown => git_id(&genesis_engine.commit)?,
        },
    };
    let landing = Landing {
        repo: &repo,
        workdir: &workdir,
        parent: head.id(),
        setup,
    };
    landing.land(&written, || {
        register::genesis(
            &workdir,
            record,
            &constitution,
            &constitution_sha256,
            now.clone(),
        )
        .map(|_| ())
    })?;
    let audit = register::verify(&workdir)?;
    let trailer_commits = count_declarations(&messages, &contract.bench.trailer);
    Ok(Initialised {
        contract,
        found: detected.found,
        bench_format,
        bench_nodes: signature.nodes,
        trailer_commits,
        setup_commit: setup.to_string(),
        binary_sha256: genesis_engine.sha256,
        committed: written.into_iter().map(|(path, _)| path).collect(),
        genesis: GENESIS_PATH.to_owned(),
        register_head: audit.head.to_string(),
    })
}

/// The repository at `path`.
fn open(path: &Path) -> Result<Repository, InitError> {
    Repository::open(path).map_err(|error| repository_error(path, error.message()))
}

/// A [`InitError::Repository`].
fn repository_error(path: &Path, reason: &str) -> InitError {
    InitError::Repository {
        path: path.to_owned(),
        reason: reason.to_owned(),
    }
}

/// A commit or tree id from the build's outcome.
fn git_id(text: &str) -> Result<GitId, InitError> {
    GitId::try_from(text.to_owned()).map_err(|error| InitError::Gate(error.to_string()))
}

/// HEAD's files: their paths, and blobs read on demand.
struct HeadTree<'r> {
    repo: &'r Repository,
    paths: std::collections::BTreeSet<String>,
    blobs: BTreeMap<String, Oid>,
}

impl<'r> HeadTree<'r> {
    /// Lists every file of `commit`'s tree.
    fn read(repo: &'r Repository, commit: &git2::Commit<'_>) -> Result<Self, InitError> {
        let mut blobs = BTreeMap::new();
        commit
            .tree()?
            .walk(git2::TreeWalkMode::PreOrder, |dir, item| {
                if item.kind() == Some(git2::ObjectType::Blob)
                    && let Some(name) = item.name()
                {
                    blobs.insert(format!("{dir}{name}"), item.id());
                }
                git2::TreeWalkResult::Ok
            })?;
        Ok(Self {
            repo,
            paths: blobs.keys().cloned().collect(),
            blobs,
        })
    }
}

impl SourceTree for HeadTree<'_> {
    fn paths(&self) -> &std::collections::BTreeSet<String> {
        &self.paths
    }

    fn text(&self, path: &str) -> Option<String> {
        let blob = self.repo.find_blob(*self.blobs.get(path)?).ok()?;
        String::from_utf8(blob.content().to_vec()).ok()
    }
}

/// Refuses a path that HEAD or the work tree already has.
fn refuse_existing(workdir: &Path, tree: &HeadTree<'_>, path: &str) -> Result<(), InitError> {
    if tree.paths.contains(path) || workdir.join(path).exists() {
        Err(InitError::Exists(path.to_owned()))
    } else {
        Ok(())
    }
}

/// The host's `rustc` version (`1.95.0`), pinned when the repository pins no toolchain.
fn host_toolchain() -> Option<String> {
    let output = std::process::Command::new("rustc")
        .arg("--version")
        .output()
        .ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    text.split_whitespace().nth(1).map(str::to_owned)
}

/// The trailer form HEAD's history uses: key `Bench`; digit groups when any commit groups them;
/// `anywhere` when some commit declares its bench only on a line outside its trailer block.
fn trailer_form(messages: &[String]) -> TrailerForm {
    let mut form = TrailerForm::standard();
    form.digit_groups = messages.iter().any(|message| {
        message.lines().any(|line| {
            line.split_once(':').is_some_and(|(key, value)| {
                key.trim_end().eq_ignore_ascii_case(&form.key) && value.contains(',')
            })
        })
    });
    let anywhere = TrailerForm {
        anywhere: true,
        ..form.clone()
    };
    form.anywhere = messages.iter().any(|message| {
        bench::declared_bench(message, &form) == Ok(None)
            && matches!(bench::declared_bench(message, &anywhere), Ok(Some(_)))
    });
    form
}

/// The messages of HEAD's recent first-parent history, newest first.
fn recent_messages(repo: &Repository, head: Oid) -> Vec<String> {
    let Ok(mut walk) = repo.revwalk() else {
        return Vec::new();
    };
    if walk.push(head).is_err() || walk.simplify_first_parent().is_err() {
        return Vec::new();
    }
    walk.take(TRAILER_HISTORY)
        .filter_map(Result::ok)
        .filter_map(|id| repo.find_commit(id).ok())
        .map(|commit| String::from_utf8_lossy(commit.message_bytes()).into_owned())
        .collect()
}

/// How many of `messages` declare a bench in `form`.
fn count_declarations(messages: &[String], form: &TrailerForm) -> usize {
    messages
        .iter()
        .filter(|message| matches!(bench::declared_bench(message, form), Ok(Some(_))))
        .count()
}

/// The contract's options: Threads 1 and Hash 16, then `--option` (numbers and `true`/`false`
/// as such, anything else as text).
fn options(given: &[(String, String)]) -> BTreeMap<String, OptionValue> {
    let mut options: BTreeMap<String, OptionValue> = DEFAULT_OPTIONS
        .iter()
        .map(|(name, value)| ((*name).to_owned(), OptionValue::Integer(*value)))
        .collect();
    for (name, value) in given {
        let value = match (value.parse::<i64>(), value.as_str()) {
            (Ok(number), _) => OptionValue::Integer(number),
            (_, "true") => OptionValue::Bool(true),
            (_, "false") => OptionValue::Bool(false),
            _ => OptionValue::Text(value.clone()),
        };
        options.insert(name.clone(), value);
    }
    options
}

/// Builds `commit` as the contract says, through the cache.
fn build_commit(
    request: &InitRequest,
    contract: &EngineContract,
    sandbox: &Sandbox,
    commit: &str,
    hint: &str,
) -> Result<BuildOutcome, InitError> {
    let build = BuildRequest {
        repo: request.repo.clone(),
        rev: commit.to_owned(),
        build: contract.build.clone(),
        fetch: contract.fetch.clone(),
        cache_dir: request.cache_dir.clone(),
        registry: builder::host_registry(),
        sandbox: *sandbox,
        fresh: false,
    };
    builder::build_commit(&build).map_err(|source| InitError::Build {
        commit: commit.get(..12).unwrap_or(commit).to_owned(),
        source: Box::new(source),
        hint: hint.to_owned(),
    })
}

/// Sets `bench.output` to the given patterns, or to the first known format that reads `output`;
/// the format's name.
fn choose_output(
    bench: &mut BenchRules,
    given: &[String],
    output: &str,
) -> Result<String, bench::BenchError> {
    if !given.is_empty() {
        bench.output = given.to_vec();
        bench.read(output)?;
        return Ok("--bench-output".into());
    }
    let mut last = None;
    for (engine, patterns) in bench::KNOWN_OUTPUTS {
        let rules = BenchRules {
            output: patterns.iter().map(|p| (*p).to_owned()).collect(),
            ..bench.clone()
        };
        match rules.read(output) {
            Ok(_) => {
                bench.output = rules.output;
                return Ok(engine.to_owned());
            }
            Err(error) => last = Some(error),
        }
    }
    Err(last.unwrap_or(bench::BenchError::Unparsable {
        line: String::new(),
    }))
}

/// The contract's gate, checked on the engine as it stands.
fn gate(choice: &GateChoice, binary: &Path) -> Result<GateContract, InitError> {
    let bytes = std::fs::read(binary)
        .map_err(|error| InitError::Gate(format!("{}: {error}", binary.display())))?;
    match choice {
        GateChoice::None => Ok(GateContract::None),
        GateChoice::Unstated => {
            let found = crate::gate::evaluation_functions(&bytes).unwrap_or_default();
            let offered = if found.is_empty() {
                String::new()
            } else {
                format!(
                    "; functions of the engine named like an evaluation: {}",
                    found
                        .iter()
                        .map(|name| format!("`{name}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            Err(CannotTell(format!(
                "cannot tell which function the gate should hold to hardware POPCNT: pass \
                 --gate-symbol NAME (repeatable; C++ names demangled or mangled) or --no-gate{offered}"
            ))
            .into())
        }
        GateChoice::Symbols(symbols) => {
            let rules = GateRules {
                symbols: symbols.clone(),
                callee_depth: crate::gate::DEFAULT_CALLEE_DEPTH,
            };
            let report = crate::gate::inspect(&bytes, &rules.symbols, rules.callee_depth)
                .map_err(|error| InitError::Gate(error.to_string()))?;
            if report.pass {
                Ok(GateContract::Symbols(rules))
            } else {
                Err(InitError::Gate(format!(
                    "the engine as it stands fails the gate the contract would state, so every \
                     candidate would be refused: {}; pass other --gate-symbol names or --no-gate",
                    report.failures.join("; ")
                )))
            }
        }
    }
}

/// The books as (path, bytes): `--book FILE` for every stage, or two generated with the engine.
fn books(
    request: &InitRequest,
    binary: &Path,
    contract: &EngineContract,
    step: &mut dyn FnMut(&str),
) -> Result<Vec<(String, Vec<u8>)>, InitError> {
    if let Some(path) = &request.book {
        let fail = |reason: String| InitError::Book {
            path: path.clone(),
            reason,
        };
        let report = check::check(path, usize::MAX).map_err(|e| fail(e.to_string()))?;
        if !report.is_valid() {
            return Err(fail(report.error.unwrap_or_else(|| {
                format!("{} repeated positions", report.duplicates.len())
            })));
        }
        let bytes = std::fs::read(path).map_err(|e| fail(e.to_string()))?;
        let name = path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .ok_or_else(|| fail("not a file".into()))?;
        return Ok(vec![(format!("books/{name}"), bytes)]);
    }
    let count = request.book_positions;
    let (plies, window_cp, nodes) = BOOK_SPEC;
    let mut generated: Vec<(String, Vec<u8>)> = Vec::new();
    let mut exclude = HashSet::new();
    for (seed, path) in (1u64..).zip(BOOK_PATHS) {
        step(&format!(
            "generating {path} with the engine ({count} positions, {plies} random plies, within \
             ±{window_cp} cp at {nodes} nodes)"
        ));
        let mut scorers = (0..2)
            .map(|_| {
                generate::UciScorer::start(&binary.to_owned(), &contract.option_pairs(), nodes)
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(generate::GenerateError::from)?;
        let spec = generate::Spec {
            count,
            plies,
            window_cp,
            seed,
        };
        let positions = generate::generate(&spec, &exclude, &mut scorers, |_, _| {})?;
        exclude.extend(positions.iter().cloned());
        let mut text = positions.join("\n");
        text.push('\n');
        generated.push((path.to_owned(), text.into_bytes()));
    }
    Ok(generated)
}

/// The setup commit: HEAD's tree plus `written`, HEAD as its parent; no reference moves yet.
fn setup_commit(
    repo: &Repository,
    head: &git2::Commit<'_>,
    written: &[(String, Vec<u8>)],
) -> Result<Oid, InitError> {
    let mut index = git2::Index::new()?;
    index.read_tree(&head.tree()?)?;
    for (path, bytes) in written {
        add_to_index(repo, &mut index, path, bytes, 0o100_644)?;
    }
    let tree = repo.find_tree(index.write_tree_to(repo)?)?;
    let signature = repo.signature().map_err(|error| InitError::Repository {
        path: repo.workdir().unwrap_or(repo.path()).to_owned(),
        reason: format!(
            "the setup commit needs an author: set git's user.name and user.email ({})",
            error.message()
        ),
    })?;
    Ok(repo.commit(None, &signature, &signature, SETUP_MESSAGE, &tree, &[head])?)
}

/// Where the setup lands: the work tree's files, the index, HEAD's reference.
struct Landing<'a> {
    repo: &'a Repository,
    workdir: &'a Path,
    parent: Oid,
    setup: Oid,
}

impl Landing<'_> {
    /// Writes the files, stages them, moves HEAD to the setup commit, then runs `genesis`; on any
    /// failure takes all of it back.
    fn land(
        &self,
        written: &[(String, Vec<u8>)],
        genesis: impl FnOnce() -> Result<(), AppendError>,
    ) -> Result<(), InitError> {
        let mut landed = Vec::new();
        let result = self.write(written, &mut landed).and_then(|()| {
            self.move_head(self.parent, self.setup)?;
            genesis().map_err(|error| {
                let _ = self.move_head(self.setup, self.parent);
                InitError::from(error)
            })
        });
        if result.is_err() {
            self.take_back(&landed);
        }
        result
    }

    /// Writes and stages each file, recording what landed.
    fn write(
        &self,
        written: &[(String, Vec<u8>)],
        landed: &mut Vec<String>,
    ) -> Result<(), InitError> {
        let mut index = self.repo.index()?;
        for (path, bytes) in written {
            write_atomically(&self.workdir.join(path), bytes)?;
            landed.push(path.clone());
            index.add_path(Path::new(path))?;
        }
        index.write()?;
        Ok(())
    }

    /// Moves HEAD (its branch, or HEAD itself when detached) from `from` to `to`.
    fn move_head(&self, from: Oid, to: Oid) -> Result<(), InitError> {
        let head = self.repo.head()?;
        match head.name().filter(|_| head.is_branch()) {
            Some(name) => {
                self.repo
                    .reference_matching(name, to, true, from, "oracle init")?;
            }
            None => self.repo.set_head_detached(to)?,
        }
        Ok(())
    }

    /// Removes the files that landed and unstages them (best effort: this is the failure path).
    fn take_back(&self, landed: &[String]) {
        if let Ok(mut index) = self.repo.index() {
            for path in landed {
                let _ = index.remove_path(Path::new(path));
            }
            let _ = index.write();
        }
        for path in landed {
            let _ = std::fs::remove_file(self.workdir.join(path));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trailer_form_follows_the_history() {
        let plain = |messages: &[&str]| {
            trailer_form(&messages.iter().map(|m| (*m).to_owned()).collect::<Vec<_>>())
        };
        assert_eq!(plain(&["a\n\nBench: 953905\n"]), TrailerForm::standard());
        let grouped = plain(&["a\n\nBench: 953905\n", "b\n\nBENCH : 5,089,147\n"]);
        assert!(grouped.digit_groups && !grouped.anywhere);
        // Stockfish's habit: the declaration above a closing paragraph.
        let history = [
            "a\n\nBench: 953905\n",
            "b\n\nBench: 4256440\n\n==========\n\nHow to continue from there?\n",
        ];
        let anywhere = plain(&history);
        assert!(anywhere.anywhere && !anywhere.digit_groups);
        let messages: Vec<String> = history.iter().map(|m| (*m).to_owned()).collect();
        assert_eq!(count_declarations(&messages, &anywhere), 2);
        assert_eq!(count_declarations(&messages, &TrailerForm::standard()), 1);
    }

    #[test]
    fn each_known_bench_format_is_chosen_by_its_output() {
        for (output, format, nodes) in [
            ("total 3\n953905 nodes 1000 nps\n", "Coherent", 953_905),
            (
                "===\nTotal time (ms) : 1\nNodes searched  : 5156767\nNodes/second    : 9\n",
                "Stockfish",
                5_156_767,
            ),
            (
                "OVERALL:   5080279 nodes   1234 nps\n",
                "Ethereal",
                5_080_279,
            ),
        ] {
            let mut rules = BenchRules::standard();
            assert_eq!(choose_output(&mut rules, &[], output).unwrap(), format);
            assert_eq!(rules.read(output).unwrap().nodes, nodes);
        }
        let mut rules = BenchRules::standard();
        assert!(choose_output(&mut rules, &[], "searched 12 positions\n").is_err());
        let given = vec!["searched {nodes} positions".to_owned()];
        assert_eq!(
            choose_output(&mut rules, &given, "searched 12 positions\n").unwrap(),
            "--bench-output"
        );
    }

    #[test]
    fn options_default_to_one_thread_and_16_mib_and_are_overridden() {
        let options = options(&[
            ("Hash".into(), "64".into()),
            ("Ponder".into(), "false".into()),
        ]);
        assert_eq!(options["Hash"], OptionValue::Integer(64));
        assert_eq!(options["Threads"], OptionValue::Integer(1));
        assert_eq!(options["Ponder"], OptionValue::Bool(false));
    }
}
