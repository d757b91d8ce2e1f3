//! What `oracle init` can tell from a repository's files alone: how the engine is built (a Cargo
//! workspace with one binary, a Makefile that honours `EXE=`, or CMake) and what a candidate may
//! change. Where the files leave a choice, it says which flag makes it.

use std::collections::{BTreeMap, BTreeSet};

use toml::de::{DeTable, DeValue};

use crate::builder::native::{NativeBuild, OUT_PLACEHOLDER};
use crate::builder::{BuildRecipe, EngineBuild};

/// The files of the commit being set up: their paths, and their text on demand.
pub trait SourceTree {
    /// Every file's repository-relative path.
    fn paths(&self) -> &BTreeSet<String>;
    /// The file's text, if it is a file and UTF-8.
    fn text(&self, path: &str) -> Option<String>;
}

/// A tree held in memory (tests, and small trees).
impl SourceTree for (BTreeSet<String>, BTreeMap<String, String>) {
    fn paths(&self) -> &BTreeSet<String> {
        &self.0
    }

    fn text(&self, path: &str) -> Option<String> {
        self.1.get(path).cloned()
    }
}

/// What the maintainer said on the command line about the build.
#[derive(Debug, Clone, Default)]
pub struct BuildChoice {
    /// `--build 'COMMAND … {out}'`, or `cargo` for the workspace's Cargo build.
    pub command: Option<String>,
    /// `--binary NAME`: which binary of a Cargo workspace.
    pub binary: Option<String>,
    /// `--scope DIR` (repeatable).
    pub scope: Vec<String>,
    /// The Rust toolchain to pin when the repository pins none (the host's `rustc` version).
    pub host_toolchain: Option<String>,
}

/// The build and scope the contract will state, and how they were found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DetectedBuild {
    /// The contract's `engine.build`.
    pub build: EngineBuild,
    /// The contract's `engine.scope`.
    pub scope: Vec<String>,
    /// What was found, for the maintainer (`a Makefile honouring EXE= in src/`).
    pub found: String,
}

/// Why the files leave the choice to the maintainer; the message names the flag to pass.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CannotTell(pub String);

/// The word `--build` takes for the Cargo workspace's build.
pub const CARGO_WORD: &str = "cargo";

/// One way to build the engine that the files show.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Candidate {
    /// A Cargo package's binary; `dir` is the package's directory (empty at the root).
    Cargo {
        package: String,
        binary: String,
        dir: String,
    },
    /// A Makefile that honours `EXE=`, in `dir` (empty at the root).
    Make { dir: String },
    /// A root `CMakeLists.txt` with one executable.
    Cmake { executable: String },
}

impl Candidate {
    /// The candidate as the maintainer reads it.
    fn describe(&self) -> String {
        match self {
            Self::Cargo {
                package, binary, ..
            } => format!("the Cargo binary `{binary}` of package `{package}`"),
            Self::Make { dir } if dir.is_empty() => "a Makefile honouring EXE= at the root".into(),
            Self::Make { dir } => format!("a Makefile honouring EXE= in {dir}/"),
            Self::Cmake { executable } => format!("CMakeLists.txt with executable `{executable}`"),
        }
    }
}

/// Finds the build and the scope, or says which flag decides them.
pub fn detect(tree: &impl SourceTree, choice: &BuildChoice) -> Result<DetectedBuild, CannotTell> {
    let cargo = cargo_binaries(tree);
    let (build, found, default_scope) = match choice.command.as_deref() {
        Some(CARGO_WORD) => {
            let candidate = one_cargo_binary(&cargo, choice.binary.as_deref())?;
            cargo_build(tree, &candidate, choice)?
        }
        Some(command) => command_build(tree, command)?,
        None => {
            let mut candidates: Vec<Candidate> = Vec::new();
            if !cargo.is_empty() {
                candidates.push(one_cargo_binary(&cargo, choice.binary.as_deref())?);
            }
            candidates.extend(makefiles(tree));
            candidates.extend(cmake(tree)?);
            match candidates.as_slice() {
                [] => {
                    return Err(CannotTell(format!(
                        "no Cargo workspace with a binary, no Makefile honouring EXE= (at the root \
                         or one directory down) and no CMakeLists.txt at the root: pass --build \
                         'COMMAND … {OUT_PLACEHOLDER}', a shell command that writes the engine to \
                         {OUT_PLACEHOLDER}"
                    )));
                }
                [one] => match one {
                    Candidate::Cargo { .. } => cargo_build(tree, one, choice)?,
                    Candidate::Make { dir } => make_build(tree, dir),
                    Candidate::Cmake { executable } => cmake_build(tree, executable),
                },
                several => {
                    let found: Vec<String> = several.iter().map(Candidate::describe).collect();
                    return Err(CannotTell(format!(
                        "several ways to build the engine: {}; pass --build with the one to use \
                         (`--build cargo` for the Cargo binary, or --build 'COMMAND … \
                         {OUT_PLACEHOLDER}', e.g. {})",
                        found.join("; "),
                        suggestion(several)
                    )));
                }
            }
        }
    };
    let scope = if choice.scope.is_empty() {
        default_scope.ok_or_else(|| {
            CannotTell(format!(
                "cannot tell what a candidate may change ({found}): pass --scope DIR/ (repeatable; \
                 a directory ends in `/`, anything else is one file)"
            ))
        })?
    } else {
        choice.scope.clone()
    };
    Ok(DetectedBuild {
        build,
        scope,
        found,
    })
}

/// A `--build` suggestion for the first non-Cargo candidate.
fn suggestion(candidates: &[Candidate]) -> String {
    candidates
        .iter()
        .find_map(|candidate| match candidate {
            Candidate::Make { dir } => Some(format!("'{}'", make_command(dir))),
            Candidate::Cmake { executable } => Some(format!("'{}'", cmake_command(executable))),
            Candidate::Cargo { .. } => None,
        })
        .unwrap_or_else(|| "--build cargo".into())
}

/// The workspace's one binary (or the one `--binary` names).
fn one_cargo_binary(found: &[Candidate], binary: Option<&str>) -> Result<Candidate, CannotTell> {
    let chosen: Vec<&Candidate> = found
        .iter()
        .filter(|candidate| {
            binary.is_none_or(
                |wanted| matches!(candidate, Candidate::Cargo { binary, .. } if binary == wanted),
            )
        })
        .collect();
    let names = || {
        found
            .iter()
            .filter_map(|candidate| match candidate {
                Candidate::Cargo { binary, .. } => Some(format!("`{binary}`")),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    match chosen.as_slice() {
        [one] => Ok((*one).clone()),
        [] if found.is_empty() => Err(CannotTell(
            "--build cargo: the repository has no Cargo package with a binary".into(),
        )),
        [] => Err(CannotTell(format!(
            "--binary {}: the Cargo workspace's binaries are {}",
            binary.unwrap_or_default(),
            names()
        ))),
        _ => Err(CannotTell(format!(
            "the Cargo workspace has several binaries ({}): pass --binary NAME",
            names()
        ))),
    }
}

/// Every binary of the root's Cargo package and workspace members.
fn cargo_binaries(tree: &impl SourceTree) -> Vec<Candidate> {
    let Some(text) = tree.text("Cargo.toml") else {
        return Vec::new();
    };
    let Ok(root) = DeTable::parse(&text) else {
        return Vec::new();
    };
    let root = root.into_inner();
    let mut dirs = vec![String::new()];
    let members: Vec<String> = lookup(&root, "workspace")
        .and_then(DeValue::as_table)
        .and_then(|workspace| lookup(workspace, "members"))
        .and_then(DeValue::as_array)
        .into_iter()
        .flatten()
        .filter_map(|member| member.get_ref().as_str().map(str::to_owned))
        .collect();
    for member in &members {
        let member = member.trim_end_matches('/');
        match member.strip_suffix("/*") {
            Some(parent) => dirs.extend(
                tree.paths()
                    .iter()
                    .filter_map(|path| path.strip_prefix(&format!("{parent}/")))
                    .filter_map(|rest| rest.strip_suffix("/Cargo.toml"))
                    .filter(|name| !name.contains('/'))
                    .map(|name| format!("{parent}/{name}")),
            ),
            None => dirs.push(member.to_owned()),
        }
    }
    dirs.dedup();
    dirs.iter()
        .flat_map(|dir| package_binaries(tree, dir))
        .collect()
}

/// The value of `key` in a TOML table.
fn lookup<'t, 'i>(table: &'t DeTable<'i>, key: &str) -> Option<&'t DeValue<'i>> {
    table
        .iter()
        .find(|(name, _)| name.get_ref().as_ref() == key)
        .map(|(_, value)| value.get_ref())
}

/// The binaries of the package in `dir`: its `[[bin]]` targets, `src/main.rs` and `src/bin/`.
fn package_binaries(tree: &impl SourceTree, dir: &str) -> Vec<Candidate> {
    let prefix = if dir.is_empty() {
        String::new()
    } else {
        format!("{dir}/")
    };
    let Some(text) = tree.text(&format!("{prefix}Cargo.toml")) else {
        return Vec::new();
    };
    let Ok(manifest) = DeTable::parse(&text) else {
        return Vec::new();
    };
    let manifest = manifest.into_inner();
    let Some(package) = lookup(&manifest, "package")
        .and_then(DeValue::as_table)
        .and_then(|package| lookup(package, "name"))
        .and_then(DeValue::as_str)
    else {
        return Vec::new();
    };
    let mut binaries: BTreeSet<String> = lookup(&manifest, "bin")
        .and_then(DeValue::as_array)
        .into_iter()
        .flatten()
        .filter_map(|bin| {
            bin.get_ref()
                .as_table()
                .and_then(|bin| lookup(bin, "name"))
                .and_then(DeValue::as_str)
        })
        .map(str::to_owned)
        .collect();
    if tree.paths().contains(&format!("{prefix}src/main.rs")) {
        binaries.insert(package.to_owned());
    }
    let bin_dir = format!("{prefix}src/bin/");
    for path in tree.paths() {
        if let Some(rest) = path.strip_prefix(&bin_dir) {
            if let Some(name) = rest.strip_suffix(".rs").filter(|name| !name.contains('/')) {
                binaries.insert(name.to_owned());
            } else if let Some(name) = rest.strip_suffix("/main.rs") {
                binaries.insert(name.to_owned());
            }
        }
    }
    binaries
        .into_iter()
        .map(|binary| Candidate::Cargo {
            package: package.to_owned(),
            binary,
            dir: dir.to_owned(),
        })
        .collect()
}

/// The Cargo kind: the workspace's release profile as Coherent's constitution pins it, the
/// repository's toolchain (else the host's); scope the package's directory, or at the root its
/// sources and manifests.
fn cargo_build(
    tree: &impl SourceTree,
    candidate: &Candidate,
    choice: &BuildChoice,
) -> Result<(EngineBuild, String, Option<Vec<String>>), CannotTell> {
    let Candidate::Cargo {
        package,
        binary,
        dir,
    } = candidate
    else {
        return Err(CannotTell("not a Cargo binary".into()));
    };
    let toolchain = pinned_toolchain(tree)
        .or_else(|| choice.host_toolchain.clone())
        .ok_or_else(|| {
            CannotTell(
                "no rust-toolchain.toml and no `rustc` on the PATH to pin the toolchain: add a \
                 rust-toolchain.toml with `channel = \"X.Y.Z\"`"
                    .into(),
            )
        })?;
    let recipe = BuildRecipe {
        toolchain,
        package: package.clone(),
        binary: binary.clone(),
        ..BuildRecipe::standard()
    };
    // A build script is never in scope: a candidate may not change one (`verify::scope`).
    let scope = if dir.is_empty() {
        ["src/", "Cargo.toml", "Cargo.lock"]
            .into_iter()
            .filter(|path| {
                path.ends_with('/') || tree.paths().contains(*path) || *path == "Cargo.lock"
            })
            .map(str::to_owned)
            .collect()
    } else {
        vec![format!("{dir}/")]
    };
    Ok((
        EngineBuild::Cargo(recipe),
        candidate.describe(),
        Some(scope),
    ))
}

/// The toolchain channel of `rust-toolchain.toml` or `rust-toolchain`, if pinned to a version.
fn pinned_toolchain(tree: &impl SourceTree) -> Option<String> {
    let channel = tree
        .text("rust-toolchain.toml")
        .and_then(|text| {
            let table = DeTable::parse(&text).ok()?.into_inner();
            lookup(&table, "toolchain")?
                .as_table()
                .and_then(|toolchain| lookup(toolchain, "channel"))?
                .as_str()
                .map(str::to_owned)
        })
        .or_else(|| {
            tree.text("rust-toolchain")
                .map(|text| text.trim().to_owned())
        })?;
    channel
        .starts_with(|c: char| c.is_ascii_digit())
        .then_some(channel)
}

/// Every Makefile at the root or one directory down that honours `EXE=`.
fn makefiles(tree: &impl SourceTree) -> Vec<Candidate> {
    let mut dirs = BTreeSet::new();
    for path in tree.paths() {
        let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
        if dir.contains('/') || !["Makefile", "makefile", "GNUmakefile"].contains(&name) {
            continue;
        }
        if tree.text(path).is_some_and(|text| honours_exe(&text)) {
            dirs.insert(dir.to_owned());
        }
    }
    dirs.into_iter()
        .map(|dir| Candidate::Make { dir })
        .collect()
}

/// Whether a Makefile names its binary by the variable `EXE` (so `make EXE=path` puts it there).
fn honours_exe(makefile: &str) -> bool {
    makefile.contains("$(EXE)") || makefile.contains("${EXE}")
}

/// `make EXE={out}` in `dir`.
fn make_command(dir: &str) -> String {
    if dir.is_empty() {
        format!("make EXE={OUT_PLACEHOLDER}")
    } else {
        format!("make -C {dir} EXE={OUT_PLACEHOLDER}")
    }
}

/// The make kind for the Makefile in `dir`; scope: that directory (at the root, cannot tell).
fn make_build(tree: &impl SourceTree, dir: &str) -> (EngineBuild, String, Option<Vec<String>>) {
    let build = NativeBuild {
        command: make_command(dir),
        environment: BTreeMap::new(),
        flags: Vec::new(),
        compiler: compiler(tree).to_owned(),
    };
    let scope = (!dir.is_empty()).then(|| vec![format!("{dir}/")]);
    (
        EngineBuild::Make(build),
        Candidate::Make { dir: dir.into() }.describe(),
        scope,
    )
}

/// The root `CMakeLists.txt`'s executable, if it has exactly one; several: cannot tell.
fn cmake(tree: &impl SourceTree) -> Result<Option<Candidate>, CannotTell> {
    let Some(text) = tree.text("CMakeLists.txt") else {
        return Ok(None);
    };
    let executables: Vec<String> = text
        .match_indices("add_executable(")
        .filter_map(|(at, call)| {
            text[at + call.len()..]
                .split(|c: char| c.is_whitespace() || c == ')')
                .find(|word| !word.is_empty())
                .map(str::to_owned)
        })
        .collect();
    match executables.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(Candidate::Cmake {
            executable: one.clone(),
        })),
        several => Err(CannotTell(format!(
            "CMakeLists.txt builds several executables ({}): pass --build '{}' with the engine's",
            several.join(", "),
            cmake_command(&several[0])
        ))),
    }
}

/// Configures and builds in `oracle-build/` inside the tree (so the prefix map covers it) and
/// copies the executable to `{out}`.
fn cmake_command(executable: &str) -> String {
    format!(
        "cmake -S . -B oracle-build -DCMAKE_BUILD_TYPE=Release \
         -DCMAKE_RUNTIME_OUTPUT_DIRECTORY=\"$PWD/oracle-build/bin\" && cmake --build oracle-build \
         && cp oracle-build/bin/{executable} {OUT_PLACEHOLDER}"
    )
}

/// The cmake kind; scope `CMakeLists.txt` and `src/` when the tree has one, else cannot tell.
fn cmake_build(
    tree: &impl SourceTree,
    executable: &str,
) -> (EngineBuild, String, Option<Vec<String>>) {
    let build = NativeBuild {
        command: cmake_command(executable),
        environment: BTreeMap::new(),
        flags: Vec::new(),
        compiler: compiler(tree).to_owned(),
    };
    let has_src = tree.paths().iter().any(|path| path.starts_with("src/"));
    let scope = has_src.then(|| vec!["CMakeLists.txt".to_owned(), "src/".to_owned()]);
    (
        EngineBuild::Cmake(build),
        Candidate::Cmake {
            executable: executable.into(),
        }
        .describe(),
        scope,
    )
}

/// The kind of a `--build` command by its first word (`make`, `cmake`, else `command`); scope
/// the directory of `make -C DIR`, else cannot tell.
fn command_build(
    tree: &impl SourceTree,
    command: &str,
) -> Result<(EngineBuild, String, Option<Vec<String>>), CannotTell> {
    let build = NativeBuild {
        command: command.to_owned(),
        environment: BTreeMap::new(),
        flags: Vec::new(),
        compiler: compiler(tree).to_owned(),
    };
    build
        .validate()
        .map_err(|error| CannotTell(format!("--build: {error}")))?;
    let words: Vec<&str> = command.split_whitespace().collect();
    let scope = words
        .windows(2)
        .find(|pair| words.first() == Some(&"make") && pair[0] == "-C")
        .map(|pair| vec![format!("{}/", pair[1].trim_end_matches('/'))]);
    let build = match words.first() {
        Some(&"make") => EngineBuild::Make(build),
        Some(&"cmake") => EngineBuild::Cmake(build),
        _ => EngineBuild::Command(build),
    };
    Ok((build, format!("--build '{command}'"), scope))
}

/// The compiler whose identity the record names: `c++` when the tree has C++ sources, else `cc`.
fn compiler(tree: &impl SourceTree) -> &'static str {
    let cpp = tree.paths().iter().any(|path| {
        [".cpp", ".cc", ".cxx", ".C"]
            .iter()
            .any(|ext| path.ends_with(ext))
    });
    if cpp { "c++" } else { "cc" }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> (BTreeSet<String>, BTreeMap<String, String>) {
        let map: BTreeMap<String, String> = files
            .iter()
            .map(|(path, text)| ((*path).to_owned(), (*text).to_owned()))
            .collect();
        (map.keys().cloned().collect(), map)
    }

    fn choice() -> BuildChoice {
        BuildChoice {
            host_toolchain: Some("1.95.0".into()),
            ..BuildChoice::default()
        }
    }

    const STOCKFISH_MAKEFILE: &str = "EXE = stockfish\nbuild:\n\t$(CXX) -o $(EXE) $(OBJS)\n";

    #[test]
    fn a_makefile_in_src_honouring_exe_is_the_make_kind_with_scope_src() {
        let files = tree(&[("src/Makefile", STOCKFISH_MAKEFILE), ("src/main.cpp", "")]);
        let found = detect(&files, &choice()).unwrap();
        assert_eq!(found.build.kind(), "make");
        let native = found.build.native().unwrap();
        assert_eq!(native.command, "make -C src EXE={out}");
        assert_eq!(native.compiler, "c++");
        assert_eq!(found.scope, ["src/"]);
        // Ethereal's lower-case makefile, C sources.
        let files = tree(&[
            ("src/makefile", "EXE = Ethereal\n\t$(CC) -o ${EXE}\n"),
            ("src/a.c", ""),
        ]);
        let found = detect(&files, &choice()).unwrap();
        assert_eq!(found.build.native().unwrap().compiler, "cc");
    }

    #[test]
    fn a_makefile_that_ignores_exe_is_no_candidate() {
        let files = tree(&[("Makefile", "all:\n\tcc -o engine a.c\n")]);
        let error = detect(&files, &choice()).unwrap_err().0;
        assert!(error.contains("pass --build 'COMMAND … {out}'"), "{error}");
    }

    #[test]
    fn a_root_makefile_leaves_the_scope_to_the_maintainer() {
        let files = tree(&[("Makefile", "EXE=e\n\tcc -o $(EXE) a.c\n")]);
        let error = detect(&files, &choice()).unwrap_err().0;
        assert!(error.contains("pass --scope DIR/"), "{error}");
        let chosen = BuildChoice {
            scope: vec!["a.c".into(), "Makefile".into()],
            ..choice()
        };
        assert_eq!(detect(&files, &chosen).unwrap().scope, ["a.c", "Makefile"]);
    }

    #[test]
    fn a_workspace_with_one_binary_is_the_cargo_kind() {
        let files = tree(&[
            (
                "Cargo.toml",
                "[workspace]\nmembers = [\"engine\", \"tools/*\"]\n",
            ),
            ("engine/Cargo.toml", "[package]\nname = \"coherent\"\n"),
            ("engine/src/main.rs", ""),
            ("tools/lib/Cargo.toml", "[package]\nname = \"lib\"\n"),
            ("tools/lib/src/lib.rs", ""),
            ("rust-toolchain.toml", "[toolchain]\nchannel = \"1.90.0\"\n"),
        ]);
        let found = detect(&files, &choice()).unwrap();
        let EngineBuild::Cargo(recipe) = &found.build else {
            panic!("{found:?}")
        };
        assert_eq!(
            (recipe.package.as_str(), recipe.binary.as_str()),
            ("coherent", "coherent")
        );
        assert_eq!(recipe.toolchain, "1.90.0");
        assert_eq!(found.scope, ["engine/"]);
    }

    #[test]
    fn several_binaries_or_builds_name_the_flag() {
        let files = tree(&[
            ("Cargo.toml", "[package]\nname = \"e\"\n"),
            ("src/main.rs", ""),
            ("src/bin/tune.rs", ""),
        ]);
        let error = detect(&files, &choice()).unwrap_err().0;
        assert!(
            error.contains("several binaries (`e`, `tune`): pass --binary NAME"),
            "{error}"
        );
        let chosen = BuildChoice {
            binary: Some("e".into()),
            ..choice()
        };
        let found = detect(&files, &chosen).unwrap();
        assert_eq!(found.scope, ["src/", "Cargo.toml", "Cargo.lock"]);
        let files = tree(&[
            ("Cargo.toml", "[package]\nname = \"e\"\n"),
            ("src/main.rs", ""),
            ("c/Makefile", "x:\n\tcc -o $(EXE)\n"),
        ]);
        let error = detect(&files, &choice()).unwrap_err().0;
        assert!(
            error.contains("several ways to build the engine")
                && error.contains("--build cargo")
                && error.contains("'make -C c EXE={out}'"),
            "{error}"
        );
        let chosen = BuildChoice {
            command: Some("cargo".into()),
            ..choice()
        };
        assert_eq!(detect(&files, &chosen).unwrap().build.kind(), "cargo");
    }

    #[test]
    fn cmake_with_one_executable_and_a_build_command() {
        let files = tree(&[
            (
                "CMakeLists.txt",
                "project(x)\nadd_executable(engine src/main.cpp)\n",
            ),
            ("src/main.cpp", ""),
        ]);
        let found = detect(&files, &choice()).unwrap();
        assert_eq!(found.build.kind(), "cmake");
        assert!(
            found
                .build
                .native()
                .unwrap()
                .command
                .ends_with("cp oracle-build/bin/engine {out}")
        );
        assert_eq!(found.scope, ["CMakeLists.txt", "src/"]);
        let two = tree(&[(
            "CMakeLists.txt",
            "add_executable(a a.c)\nadd_executable( b b.c)\n",
        )]);
        let error = detect(&two, &choice()).unwrap_err().0;
        assert!(error.contains("several executables (a, b)"), "{error}");
        let chosen = BuildChoice {
            command: Some("make -C src build ARCH=x86-64 EXE={out}".into()),
            ..choice()
        };
        let found = detect(&two, &chosen).unwrap();
        assert_eq!(
            (found.build.kind(), found.scope.as_slice()),
            ("make", &["src/".to_owned()][..])
        );
        let chosen = BuildChoice {
            command: Some("./build.sh".into()),
            ..choice()
        };
        let error = detect(&two, &chosen).unwrap_err().0;
        assert!(
            error.starts_with("--build: ") && error.contains("{out}"),
            "{error}"
        );
    }
}
