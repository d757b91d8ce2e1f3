//! Reproducible builds of the engine from pinned commits (docs/architecture.md).
//!
//! [`build_commit`] reads like its steps: resolve the revision, look in the cache, export the
//! sources (the tree less the register's records, [`source::sources_id`]) twice into two
//! different directories, build both copies side by side in the sandbox
//! (with Cargo, [`cargo`], or a C or C++ build command, [`native`]), require equal sha256,
//! store the binary.

pub mod bench;
pub mod cache;
pub mod cargo;
pub mod compare;
pub mod fetch;
pub mod native;
pub mod recipe;
pub mod sandbox;
pub mod source;

use std::path::{Path, PathBuf};

use serde::Serialize;

pub use cache::Cache;
pub use recipe::{BuildRecipe, EngineBuild};
pub use sandbox::{Isolation, Limits, Sandbox};

/// What `oracle build` asks for.
#[derive(Debug, Clone)]
pub struct BuildRequest {
    /// The repository (any directory inside it).
    pub repo: PathBuf,
    /// The revision to build.
    pub rev: String,
    /// How to build: the engine contract's build (the Cargo kind: [`BuildRecipe::standard`]
    /// where nothing else is given).
    pub build: EngineBuild,
    /// The cache root.
    pub cache_dir: PathBuf,
    /// Files fetched outside the sandbox and placed in the tree before the build (the engine
    /// contract's `fetch`).
    pub fetch: Vec<fetch::PinnedFile>,
    /// The host's crates.io registry to expose read-only (see [`cargo::build`]).
    pub registry: Option<PathBuf>,
    /// The sandbox for the untrusted build.
    pub sandbox: Sandbox,
    /// Build twice now even when the cache has this build: a cached binary and its record may
    /// have been written by code the candidate controls (a build script of an earlier build), so
    /// a binding run trusts only a fresh double build or a register record.
    pub fresh: bool,
}

/// A reproduced (or cached) build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BuildOutcome {
    /// Full commit id.
    pub commit: String,
    /// Its tree id.
    pub tree: String,
    /// First line of `rustc -vV`; for a C or C++ build the compiler's `--version` line with the
    /// path and sha256 of its binary.
    pub toolchain: String,
    /// sha256 of the recipe's canonical form.
    pub recipe_sha256: String,
    /// The binary, inside the cache.
    pub binary: PathBuf,
    /// sha256 of the binary.
    pub sha256: String,
    /// Two builds in different directories were byte-identical (now or when cached).
    pub reproduced: bool,
    /// The result came from the cache.
    pub cached: bool,
    /// The isolation the builds ran under (`null` for a cache hit).
    pub isolation: Option<Isolation>,
}

/// Why a build produced no trustworthy binary.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The recipe is unusable.
    #[error(transparent)]
    Recipe(#[from] recipe::RecipeError),
    /// The revision or its tree was refused.
    #[error(transparent)]
    Source(#[from] source::SourceError),
    /// The toolchain is missing, or cargo failed.
    #[error(transparent)]
    Cargo(#[from] cargo::CargoError),
    /// The C or C++ build could not run, failed or was refused.
    #[error(transparent)]
    Native(#[from] native::NativeError),
    /// The cache could not be used.
    #[error(transparent)]
    Cache(#[from] cache::CacheError),
    /// A pinned file could not be fetched or placed.
    #[error(transparent)]
    Fetch(#[from] fetch::FetchError),
    /// The two builds differ.
    #[error(
        "not reproducible: commit {commit} built to {first_sha256} in one directory and {second_sha256} in another; differing ELF sections: {}",
        sections.join(", ")
    )]
    NotReproducible {
        /// Full commit id.
        commit: String,
        /// sha256 of the first build.
        first_sha256: String,
        /// sha256 of the second build.
        second_sha256: String,
        /// Names of the differing sections.
        sections: Vec<String>,
    },
    /// What the build left as its binary is not a file it made there: a link (to a file of
    /// the host, say), not a regular file, or past the size bound.
    #[error("commit {commit}: the build's output is refused: {reason}")]
    OutputRefused {
        /// Full commit id.
        commit: String,
        /// What was refused, and why.
        reason: String,
    },
    /// What the build wrote cannot run in the engine sandbox: not a compiled program, or one
    /// that asks for files the sandbox does not show.
    #[error("commit {commit} built `{binary}`, which cannot run in the engine sandbox: {reason}")]
    NotRunnable {
        /// Full commit id.
        commit: String,
        /// The binary's name.
        binary: String,
        /// Why.
        reason: String,
    },
}

impl BuildError {
    /// Whether the candidate itself is at fault (its tree, its build, its reproducibility), as
    /// opposed to the request or the machine: the CLI exits 1 for these, 2 for the rest. A
    /// host-dependent flag is bad input (exit 2), named as such.
    #[must_use]
    pub fn rejects_candidate(&self) -> bool {
        use source::SourceError as S;
        match self {
            Self::NotReproducible { .. }
            | Self::NotRunnable { .. }
            | Self::OutputRefused { .. } => true,
            Self::Cargo(error) => matches!(
                error,
                cargo::CargoError::Failed { .. } | cargo::CargoError::NoBinary { .. }
            ),
            Self::Native(error) => matches!(
                error,
                native::NativeError::Failed { .. } | native::NativeError::NoBinary { .. }
            ),
            Self::Source(error) => matches!(
                error,
                S::Symlink { .. }
                    | S::Submodule { .. }
                    | S::CargoConfig { .. }
                    | S::BadName { .. }
                    | S::FileTooLarge { .. }
                    | S::TreeTooLarge { .. }
            ),
            Self::Recipe(_) | Self::Cache(_) | Self::Fetch(_) => false,
        }
    }

    /// The same error with its build log copied into the cache (the work directory is removed).
    fn with_kept_log(self, cache: &Cache, label: &str) -> Self {
        use cargo::CargoError;
        use native::NativeError;
        match self {
            Self::Cargo(CargoError::Failed { ending, log, tail }) => {
                let log = cache.keep_log(&log, label);
                Self::Cargo(CargoError::Failed { ending, log, tail })
            }
            Self::Native(NativeError::Failed { ending, log, tail }) => {
                let log = cache.keep_log(&log, label);
                Self::Native(NativeError::Failed { ending, log, tail })
            }
            Self::Native(NativeError::HostDependentFlag { flag, log }) => {
                let log = cache.keep_log(&log, label);
                Self::Native(NativeError::HostDependentFlag { flag, log })
            }
            other => other,
        }
    }
}

/// The build of one kind, ready to run on a copy of the tree.
enum Builder<'a> {
    /// A Cargo build with its located toolchain.
    Cargo {
        recipe: &'a BuildRecipe,
        toolchain: cargo::Toolchain,
    },
    /// A C or C++ build with its compilers.
    Native {
        kind: &'static str,
        build: &'a native::NativeBuild,
        compilers: native::Compilers,
    },
}

impl<'a> Builder<'a> {
    /// Checks the build and locates its toolchain.
    fn prepare(build: &'a EngineBuild) -> Result<Self, BuildError> {
        Ok(match build {
            EngineBuild::Cargo(recipe) => {
                recipe.validate()?;
                Self::Cargo {
                    recipe,
                    toolchain: cargo::Toolchain::locate(&recipe.toolchain)?,
                }
            }
            EngineBuild::Make(native)
            | EngineBuild::Cmake(native)
            | EngineBuild::Command(native) => {
                native.validate()?;
                Self::Native {
                    kind: build.kind(),
                    build: native,
                    compilers: native::Compilers::locate(native)?,
                }
            }
        })
    }

    /// What the outcome records as the toolchain.
    fn toolchain(&self) -> String {
        match self {
            Self::Cargo { toolchain, .. } => toolchain.version.clone(),
            Self::Native { compilers, .. } => compilers.named.identity(),
        }
    }

    /// The cache key: the sources (`source::sources_id`) and everything else that determines
    /// the binary.
    fn key(&self, sources: &str, recipe_sha256: &str) -> String {
        match self {
            Self::Cargo { toolchain, .. } => Cache::key(
                cargo::BUILD_PROCEDURE,
                sources,
                &toolchain.verbose_version,
                recipe_sha256,
            ),
            Self::Native { compilers, .. } => Cache::key(
                native::BUILD_PROCEDURE,
                sources,
                &compilers.key(),
                recipe_sha256,
            ),
        }
    }

    /// The binary's file name in the cache.
    fn binary_name(&self) -> &str {
        match self {
            Self::Cargo { recipe, .. } => &recipe.binary,
            Self::Native { .. } => native::BINARY_NAME,
        }
    }

    /// Where a copy rooted at `root` holds the exported tree.
    fn source_dir(&self, root: &Path) -> PathBuf {
        match self {
            Self::Cargo { .. } => cargo::BuildDirs::under(root).source,
            Self::Native { .. } => native::NativeDirs::under(root).source,
        }
    }

    /// Runs the build of the copy rooted at `root`; the binary it produced.
    fn build(&self, root: &Path, request: &BuildRequest) -> Result<PathBuf, BuildError> {
        Ok(match self {
            Self::Cargo { recipe, toolchain } => cargo::build(
                recipe,
                toolchain,
                &cargo::BuildDirs::under(root),
                request.registry.as_deref(),
                &request.sandbox,
            )?,
            Self::Native {
                kind,
                build,
                compilers,
            } => native::build(
                kind,
                build,
                compilers,
                &native::NativeDirs::under(root),
                &request.sandbox,
            )?,
        })
    }
}

/// The host's crates.io registry: `$CARGO_HOME/registry`, else `~/.cargo/registry`, if present.
#[must_use]
pub fn host_registry() -> Option<PathBuf> {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")))?;
    let registry = cargo_home.join("registry");
    registry.is_dir().then_some(registry)
}

/// Builds `request.rev` twice in two directories and returns the reproduced binary.
pub fn build_commit(request: &BuildRequest) -> Result<BuildOutcome, BuildError> {
    let repo = source::open_repository(&request.repo)?;
    let resolved = source::resolve(&repo, &request.rev)?;
    let builder = Builder::prepare(&request.build)?;
    let recipe_sha256 = request.build.sha256();
    let tree = resolved.tree.to_string();
    let commit = resolved.commit.to_string();
    let cache = Cache::open(&request.cache_dir)?;
    let key = builder.key(
        &source::sources_id(&repo, resolved.tree)?,
        &format!("{recipe_sha256}{}", fetch::key_part(&request.fetch)),
    );
    let toolchain = builder.toolchain();
    let outcome = |binary: PathBuf, sha256: String, cached: bool| BuildOutcome {
        commit: commit.clone(),
        tree: tree.clone(),
        toolchain: toolchain.clone(),
        recipe_sha256: recipe_sha256.clone(),
        binary,
        sha256,
        reproduced: true,
        cached,
        isolation: (!cached).then_some(request.sandbox.isolation),
    };
    // A cached binary is held to `runnable` by its user (`verify`'s binding): the cache may
    // have been filled by an older oracle, or poisoned.
    if !request.fresh
        && let Some((binary, entry)) = cache.lookup(&key, builder.binary_name())?
    {
        return Ok(outcome(binary, entry.sha256, true));
    }
    let fetched = fetch::fetch_all(&request.fetch, &cache)?;
    let work = cache.work_dir()?;
    let copies = ["a", "copy-b"].map(|name| (name, work.path().join(name)));
    for (_, root) in &copies {
        source::export_tree(&repo, resolved.tree, &builder.source_dir(root))?;
        fetched.place(&builder.source_dir(root))?;
    }
    if let (Builder::Cargo { toolchain, .. }, Some(_)) = (&builder, &request.registry) {
        cargo::fetch_locked(toolchain, &builder.source_dir(&copies[0].1), work.path())?;
    }
    let build_copy = |(name, root): &(&str, PathBuf)| -> Result<(PathBuf, String), BuildError> {
        let built = builder
            .build(root, request)
            .map_err(|error| error.with_kept_log(&cache, &format!("{commit}-{name}")))?;
        // The build ran the candidate's code, which could have left a link to any file of the
        // host where its binary belongs: the binary is taken as the file the build made, into a
        // place no build can write, and only that copy is read from here on.
        let binary = work.path().join(format!("{name}.binary"));
        let refused = |reason: String| BuildError::OutputRefused {
            commit: commit.clone(),
            reason,
        };
        let relative = built.strip_prefix(root).map_err(|_| {
            refused(format!(
                "{} is outside the build's directory {}",
                built.display(),
                root.display()
            ))
        })?;
        crate::integrity::take_untrusted_file(
            root,
            relative,
            &binary,
            crate::integrity::MAX_BINARY_BYTES,
        )
        .map_err(|error| match error {
            crate::integrity::TakeError::Refused { .. } => refused(error.to_string()),
            crate::integrity::TakeError::File(error) => cache::CacheError::from(error).into(),
        })?;
        let sha256 = crate::integrity::sha256_file(&binary).map_err(cache::CacheError::from)?;
        Ok((binary, sha256))
    };
    // Each copy is essentially one compiler process (one codegen unit, LTO), so building the
    // two side by side halves the wall time on two cores.
    let (first, second) = std::thread::scope(|scope| {
        let second = scope.spawn(|| build_copy(&copies[1]));
        let first = build_copy(&copies[0]);
        (first, second.join().expect("a build thread never panics"))
    });
    let ((first, first_sha256), (second, second_sha256)) = (first?, second?);
    if first_sha256 != second_sha256 {
        return Err(BuildError::NotReproducible {
            commit,
            first_sha256,
            second_sha256,
            sections: differing_sections_of(&first, &second),
        });
    }
    runnable(&first).map_err(|reason| BuildError::NotRunnable {
        commit: commit.clone(),
        binary: builder.binary_name().to_string(),
        reason,
    })?;
    let entry = cache::CacheEntry {
        commit: commit.clone(),
        tree: tree.clone(),
        toolchain: toolchain.clone(),
        recipe_sha256: recipe_sha256.clone(),
        sha256: first_sha256.clone(),
    };
    let binary = cache.store(&key, builder.binary_name(), &first, &entry)?;
    let stored = crate::integrity::sha256_file(&binary).map_err(cache::CacheError::from)?;
    if stored != first_sha256 {
        return Err(cache::CacheError::Corrupt {
            path: binary,
            reason: format!("holds {stored} after storing the fresh build {first_sha256}"),
        }
        .into());
    }
    Ok(outcome(binary, first_sha256, false))
}

/// Whether `binary` can run in the engine sandbox: an ELF executable (a script could run any
/// program of the machine) whose loader and libraries the sandbox can show; why not, if not.
pub fn runnable(binary: &Path) -> Result<(), String> {
    let compiled = sandbox::libraries::is_elf_file(binary).map_err(|e| e.to_string())?;
    if !compiled {
        return Err(
            "it is not an ELF executable; an engine the oracle judges is compiled, and \
             sees of the machine only the libraries it links"
                .into(),
        );
    }
    sandbox::libraries::runtime_files(&[binary])
        .map(drop)
        .map_err(|e| e.to_string())
}

fn differing_sections_of(first: &Path, second: &Path) -> Vec<String> {
    match (std::fs::read(first), std::fs::read(second)) {
        (Ok(a), Ok(b)) => compare::differing_sections(&a, &b),
        (Err(error), _) | (_, Err(error)) => vec![format!("<unreadable: {error}>")],
    }
}
