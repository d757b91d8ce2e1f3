//! What a candidate may change: the engine contract's scope (`engine/` for Coherent) and nothing
//! else (an allowlist), and inside a Cargo engine's scope nothing that changes how it is built.
//!
//! Everything outside the scope reaches the build or the judge: the root `Cargo.toml` (patches,
//! profiles, members), `Cargo.lock`, `rust-toolchain.toml`, scripts, CI, the oracle, the
//! constitution, the books, the register. A list of refused paths misses the next such file; an
//! allowlist does not. Inside the scope a Cargo engine stays std-only: its manifest may hold
//! only keys known to change nothing in how it is built (an allowlist too, so no dependencies, build
//! script, native links, proc-macro, patches or workspace by any name), and no build script or
//! Cargo configuration file may appear — each would run code or change flags at build time,
//! before anything is measured. A C or C++ engine's build files inside its scope
//! (its Makefile) are the engine's; what they could do to the binary's portability, the compiler
//! wrapper refuses (`builder::native`).

use serde::Serialize;
use toml::de::{DeTable, DeValue};

use crate::builder::EngineBuild;
use crate::governance::contract::EngineContract;

/// Tables whose entries bring code into the build: allowed only empty.
const DEPENDENCY_TABLES: [&str; 5] = [
    "dependencies",
    "dev-dependencies",
    "dev_dependencies",
    "build-dependencies",
    "build_dependencies",
];

/// Tables of build targets: `[lib]`, and arrays of `[[bin]]`, `[[test]]`, `[[bench]]` and
/// `[[example]]`, whose keys are checked against [`TARGET_KEYS`].
const TARGET_TABLES: [&str; 5] = ["lib", "bin", "test", "bench", "example"];

/// Top-level tables that change nothing in how the engine is built: what a std-only crate's
/// manifest needs besides its package, targets and (empty) dependency tables.
const INERT_ROOTS: [&str; 3] = ["features", "lints", "badges"];

/// `[package]` keys that describe the crate and change nothing in how it is built. `build`,
/// `links` and `workspace` are not among them, nor is any key a later Cargo adds.
const PACKAGE_KEYS: [&str; 25] = [
    "name",
    "version",
    "edition",
    "rust-version",
    "description",
    "license",
    "license-file",
    "authors",
    "readme",
    "repository",
    "homepage",
    "documentation",
    "keywords",
    "categories",
    "publish",
    "metadata",
    "default-run",
    "autolib",
    "autobins",
    "autoexamples",
    "autotests",
    "autobenches",
    "exclude",
    "include",
    "resolver",
];

/// Keys of a target table that change nothing but which file is compiled and whether it is
/// tested or documented. `proc-macro`, `plugin` and any key a later Cargo adds are not among
/// them; `crate-type` is, for the kinds in [`CRATE_TYPES`] only.
const TARGET_KEYS: [&str; 11] = [
    "name",
    "path",
    "test",
    "doctest",
    "bench",
    "doc",
    "harness",
    "edition",
    "required-features",
    "crate-type",
    "crate_type",
];

/// Crate kinds a target may declare: a Rust library or a program. A `proc-macro` crate runs
/// its code inside the compiler, a `cdylib` or `staticlib` is not what the engine builds.
const CRATE_TYPES: [&str; 3] = ["lib", "rlib", "bin"];

/// Why any other key is refused: the manifest is checked against what is known to be harmless,
/// so that a key Cargo reads as a build hook, by any name or spelling, is never let through.
const UNKNOWN: &str = "not a key the oracle knows to leave the build alone (patches, \
                       workspaces, platform tables, build scripts, native links and \
                       proc-macros change the build or run code in it)";

/// One reason a candidate's change is governance rather than an engine change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// The repository-relative path at fault.
    pub path: String,
    /// What is wrong with it.
    pub reason: String,
}

/// Why a changed path is outside what a candidate may change under `contract` (`None`: it may).
#[must_use]
pub fn path_violation(path: &str, contract: &EngineContract) -> Option<String> {
    if !contract.in_scope(path) {
        let scope = contract.scope_text();
        return Some(format!(
            "outside {scope} (an engine change may change {scope} only)"
        ));
    }
    if !matches!(contract.build, EngineBuild::Cargo(_)) {
        return None;
    }
    let inside = contract
        .scope
        .iter()
        .filter(|entry| entry.ends_with('/'))
        .find_map(|dir| path.strip_prefix(dir.as_str()))
        .unwrap_or(path);
    let name = inside.rsplit('/').next().unwrap_or(inside);
    let components: Vec<&str> = inside.split('/').collect();
    if inside == "build.rs" {
        return Some("a build script runs at build time; the engine has none".to_owned());
    }
    if components.contains(&".cargo") {
        return Some("Cargo configuration belongs to the oracle's build recipe".to_owned());
    }
    if matches!(name, "rust-toolchain" | "rust-toolchain.toml") {
        return Some("the toolchain is pinned by the constitution's build recipe".to_owned());
    }
    None
}

/// The Cargo manifests of the scope whose keys are checked when a candidate changes them: of a
/// Cargo engine, `Cargo.toml` at the root of each scope directory (`engine/Cargo.toml`) and each
/// scope file that is a manifest (a crate at the repository's root scopes `Cargo.toml` itself);
/// none for a C or C++ engine.
#[must_use]
pub fn manifests(contract: &EngineContract) -> Vec<String> {
    cargo_files(contract, "Cargo.toml")
}

/// The Cargo lock files of the scope whose pins are checked when a candidate changes them, found
/// as [`manifests`] finds manifests (a crate at the repository's root scopes `Cargo.lock`).
#[must_use]
pub fn lock_files(contract: &EngineContract) -> Vec<String> {
    cargo_files(contract, "Cargo.lock")
}

/// The files called `name` at the root of each scope directory and among the scope's files, for
/// a Cargo engine; none for a C or C++ engine.
fn cargo_files(contract: &EngineContract, name: &str) -> Vec<String> {
    if !matches!(contract.build, EngineBuild::Cargo(_)) {
        return Vec::new();
    }
    contract
        .scope
        .iter()
        .filter_map(|entry| {
            if entry.ends_with('/') {
                Some(format!("{entry}{name}"))
            } else {
                (entry.rsplit('/').next() == Some(name)).then(|| entry.clone())
            }
        })
        .collect()
}

/// What a candidate's lock file pins from outside the repository that its predecessor's did
/// not, or no longer pins: one line per such package (empty: only the repository's own crates,
/// which have no `source`, changed, as a version bump changes them).
///
/// A lock file names every dependency's exact code by source and checksum, so changing it
/// changes what is compiled into the engine without a line of its manifest changing. A lock
/// file that is not TOML is refused; an absent one (`""`) pins nothing.
#[must_use]
pub fn lock_violations(predecessor: &str, candidate: &str) -> Vec<String> {
    let new = match pinned_from_outside(candidate) {
        Ok(new) => new,
        Err(error) => return vec![format!("not TOML: {error}")],
    };
    let old = pinned_from_outside(predecessor).unwrap_or_default();
    let foreign = "a dependency's code is not the candidate's to change";
    new.difference(&old)
        .map(|package| format!("pins {package}: {foreign}"))
        .chain(
            old.difference(&new)
                .map(|package| format!("no longer pins {package}: {foreign}")),
        )
        .collect()
}

/// Each `[[package]]` of the lock file `text` that has a `source`, as `NAME VERSION from SOURCE
/// (checksum C)`.
fn pinned_from_outside(text: &str) -> Result<std::collections::BTreeSet<String>, String> {
    let root = DeTable::parse(text)
        .map_err(|error| error.message().to_owned())?
        .into_inner();
    let mut pinned = std::collections::BTreeSet::new();
    for (key, value) in &root {
        let key: &str = key.get_ref();
        if key != "package" {
            continue;
        }
        let packages = value
            .get_ref()
            .as_array()
            .ok_or("`package` is not an array")?;
        for package in packages.iter() {
            let table = package
                .get_ref()
                .as_table()
                .ok_or("a `package` is not a table")?;
            let field = |wanted: &str| {
                table.iter().find_map(|(name, value)| {
                    let name: &str = name.get_ref();
                    (name == wanted).then(|| value.get_ref().as_str().unwrap_or("?").to_owned())
                })
            };
            if let Some(source) = field("source") {
                pinned.insert(format!(
                    "`{} {}` from {source} (checksum {})",
                    field("name").unwrap_or_default(),
                    field("version").unwrap_or_default(),
                    field("checksum").unwrap_or_else(|| "none".to_owned())
                ));
            }
        }
    }
    Ok(pinned)
}

/// What is wrong with the engine's manifest, one line per refused table or key (empty: nothing).
///
/// The manifest is read by a TOML parser, as Cargo reads it: quoted keys, escapes in them
/// (`"bui\u006cd"` is `build`), dotted keys and inline tables all name the key they spell. A
/// manifest that is not TOML is refused (Cargo would refuse it too).
#[must_use]
pub fn manifest_violations(text: &str) -> Vec<String> {
    let line = |offset: usize| text.get(..offset).unwrap_or(text).matches('\n').count() + 1;
    let root = match DeTable::parse(text) {
        Ok(root) => root.into_inner(),
        Err(error) => {
            let at = error.span().map_or(1, |span| line(span.start));
            return vec![format!("line {at}: not TOML: {}", error.message())];
        }
    };
    let mut found = Vec::new();
    for (key, value) in &root {
        let name: &str = key.get_ref();
        let at = line(key.span().start);
        let value = value.get_ref();
        if DEPENDENCY_TABLES.contains(&name) {
            let std_only = "the engine is std-only: no dependencies of any kind";
            match value.as_table() {
                // An empty `[dependencies]` declares nothing; any entry in it does.
                Some(table) => found.extend(table.iter().map(|(dependency, _)| {
                    let at = line(dependency.span().start);
                    let dependency: &str = dependency.get_ref();
                    format!("line {at}: `{name}.{dependency}`: {std_only}")
                })),
                None => found.push(format!("line {at}: `{name}`: {std_only}")),
            }
        } else if name == "package" {
            found.extend(table_violations(name, at, value, &PACKAGE_KEYS, &line));
        } else if TARGET_TABLES.contains(&name) {
            // `[lib]` is a table, `[[bin]]` and the others arrays of tables.
            let targets: Vec<(usize, &DeValue)> = match value.as_array() {
                Some(array) => array
                    .iter()
                    .map(|item| (line(item.span().start), item.get_ref()))
                    .collect(),
                None => vec![(at, value)],
            };
            for (at, target) in targets {
                found.extend(table_violations(name, at, target, &TARGET_KEYS, &line));
                found.extend(crate_type_violations(name, target, &line));
            }
        } else if !INERT_ROOTS.contains(&name) {
            found.push(format!("line {at}: `{name}`: {UNKNOWN}"));
        }
    }
    found
}

/// The keys of the table `name` (at line `at`) that are not among `allowed`; a value that is
/// not a table at all is refused whole.
fn table_violations(
    name: &str,
    at: usize,
    value: &DeValue,
    allowed: &[&str],
    line: &dyn Fn(usize) -> usize,
) -> Vec<String> {
    let Some(table) = value.as_table() else {
        return vec![format!("line {at}: `{name}`: not a table")];
    };
    table
        .iter()
        .filter_map(|(inner, _)| {
            let inner_name: &str = inner.get_ref();
            (!allowed.contains(&inner_name)).then_some(inner)
        })
        .map(|inner| {
            let inner_name: &str = inner.get_ref();
            let at = line(inner.span().start);
            match inner_name {
                "build" | "links" | "proc-macro" | "proc_macro" | "plugin" => format!(
                    "line {at}: `{name}.{inner_name}`: build scripts, native links and proc-macros run foreign code at build time"
                ),
                _ => format!("line {at}: `{name}.{inner_name}`: {UNKNOWN}"),
            }
        })
        .collect()
}

/// A target's `crate-type` entries that are not in [`CRATE_TYPES`] (a `proc-macro` crate runs
/// code inside the compiler however the key is spelled).
fn crate_type_violations(
    name: &str,
    target: &DeValue,
    line: &dyn Fn(usize) -> usize,
) -> Vec<String> {
    let Some(table) = target.as_table() else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for (key, value) in table {
        let key_name: &str = key.get_ref();
        if key_name != "crate-type" && key_name != "crate_type" {
            continue;
        }
        let at = line(key.span().start);
        let Some(kinds) = value.get_ref().as_array() else {
            found.push(format!(
                "line {at}: `{name}.{key_name}`: not a list of crate kinds"
            ));
            continue;
        };
        for kind in kinds.iter() {
            let kind = kind.get_ref().as_str();
            if !kind.is_some_and(|kind| CRATE_TYPES.contains(&kind)) {
                found.push(format!(
                    "line {at}: `{name}.{key_name}`: `{}` is not a Rust library or a program (only {} are built; a proc-macro runs its code inside the compiler)",
                    kind.unwrap_or("?"),
                    CRATE_TYPES.join(", ")
                ));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_engine_paths_without_build_hooks_are_engine_changes() {
        for allowed in [
            "engine/src/lib.rs",
            "engine/Cargo.toml",
            "engine/proofs/x.yaml",
            "engine/src/build.rs",
        ] {
            assert_eq!(
                path_violation(allowed, &EngineContract::coherent()),
                None,
                "{allowed}"
            );
        }
        for refused in [
            "Cargo.toml",
            "Cargo.lock",
            "rust-toolchain.toml",
            ".ci/run",
            "scripts/x.sh",
            ".github/workflows/verify.yml",
            "oracle/src/main.rs",
            "constitution/constitution.yaml",
            "books/a.epd",
            "register/T-0002.yaml",
            "README.md",
            "engine/build.rs",
            "engine/.cargo/config.toml",
            "engine/src/.cargo/config",
            "engine/rust-toolchain.toml",
            "engineer/x",
        ] {
            assert!(
                path_violation(refused, &EngineContract::coherent()).is_some(),
                "{refused}"
            );
        }
    }

    #[test]
    fn a_native_scope_allows_its_build_files_and_nothing_outside() {
        let mut contract = EngineContract::coherent();
        contract.build =
            serde_norway::from_str("kind: make\ncommand: make -C src EXE={out}\ncompiler: cc\n")
                .unwrap();
        contract.scope = vec!["src/".into(), "Makefile".into()];
        for allowed in [
            "src/Makefile",
            "src/build.rs",
            "src/.cargo/config",
            "Makefile",
        ] {
            assert_eq!(path_violation(allowed, &contract), None, "{allowed}");
        }
        let outside = path_violation("README.md", &contract).unwrap();
        assert_eq!(
            outside,
            "outside src/, Makefile (an engine change may change src/, Makefile only)"
        );
        assert!(manifests(&contract).is_empty());
        assert_eq!(
            manifests(&EngineContract::coherent()),
            ["engine/Cargo.toml"]
        );
        // Round seven: a crate at the repository's root scopes its manifest as a file, which
        // was never read.
        let root_crate = EngineContract {
            scope: ["src/", "Cargo.toml", "Cargo.lock"]
                .map(str::to_owned)
                .to_vec(),
            ..EngineContract::coherent()
        };
        assert_eq!(manifests(&root_crate), ["src/Cargo.toml", "Cargo.toml"]);
    }

    /// Round seven's review: a lock file pins dependencies' code; a candidate may bump its own
    /// crate's version, not add, drop or repin a package from outside the repository.
    #[test]
    fn a_lock_file_may_change_only_the_repository_s_own_crates() {
        let lock = |version: &str, rand: &str| {
            format!(
                "version = 4\n\n[[package]]\nname = \"engine\"\nversion = \"{version}\"\n{rand}"
            )
        };
        let rand = |version: &str, checksum: &str| {
            format!(
                "\n[[package]]\nname = \"rand\"\nversion = \"{version}\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\nchecksum = \"{checksum}\"\n"
            )
        };
        let before = lock("0.1.0", &rand("0.8.5", "aa"));
        assert!(lock_violations(&before, &lock("0.2.0", &rand("0.8.5", "aa"))).is_empty());
        let repinned = lock_violations(&before, &lock("0.1.0", &rand("0.8.5", "bb")));
        assert_eq!(repinned.len(), 2, "{repinned:?}");
        assert!(
            repinned[0].starts_with("pins `rand 0.8.5`") && repinned[0].contains("checksum bb")
        );
        assert!(repinned[1].starts_with("no longer pins `rand 0.8.5`"));
        let added = lock_violations(&lock("0.1.0", ""), &before);
        assert_eq!(added.len(), 1, "{added:?}");
        assert!(
            lock_violations("", &lock("0.1.0", "")).is_empty(),
            "a new lock of the crate alone"
        );
        assert!(lock_violations(&before, "[[package]\n")[0].starts_with("not TOML"));
        let locks = lock_files(&EngineContract {
            scope: ["src/", "Cargo.toml", "Cargo.lock"]
                .map(str::to_owned)
                .to_vec(),
            ..EngineContract::coherent()
        });
        assert_eq!(locks, ["src/Cargo.lock", "Cargo.lock"]);
    }

    #[test]
    fn the_real_engine_manifest_passes() {
        let real = include_str!("../../../engine/Cargo.toml");
        assert_eq!(manifest_violations(real), Vec::<String>::new());
    }

    #[test]
    fn dependencies_build_scripts_and_redirections_are_refused() {
        let base = "[package]\nname = \"coherent\"\nversion.workspace = true\n\n[dependencies]\n";
        for (addition, expected) in [
            ("libc = \"0.2\"\n", "line 6: `dependencies.libc`"),
            ("[dev-dependencies]\nx = \"1\"\n", "`dev-dependencies.x`"),
            (
                "[build-dependencies.cc]\nversion = \"1\"\n",
                "`build-dependencies.cc`",
            ),
            ("[target.'cfg(unix)'.dependencies]\n", "`target`"),
            ("[patch.crates-io]\nlibc = { path = \"v\" }\n", "`patch`"),
            ("[replace]\n", "`replace`"),
            ("[workspace]\n", "`workspace`"),
            ("[lib]\nproc-macro = true\n", "`lib.proc-macro`"),
            ("[lib]\n\"proc-macro\" = true\n", "`lib.proc-macro`"),
            ("[lib]\nproc_macro = true\n", "`lib.proc_macro`"),
        ] {
            let found = manifest_violations(&format!("{base}{addition}"));
            assert!(
                found.iter().any(|line| line.contains(expected)),
                "{addition:?}: {found:?}"
            );
        }
        let comment = "[package]\nname = \"a#b\" # build = \"x\"\n";
        assert!(manifest_violations(comment).is_empty());
        let metadata = "[package]\nname = \"a\"\nmetadata = { x = { a = 1 } }\n";
        assert!(manifest_violations(metadata).is_empty());
    }

    /// Review of issue 46's fixes: Cargo also makes a proc-macro of `crate-type =
    /// ["proc-macro"]`, which a list of refused keys did not name. What is not known to be
    /// harmless is refused, whatever Cargo makes of it.
    #[test]
    fn only_keys_known_to_be_harmless_pass() {
        let package = "[package]\nname = \"coherent\"\n";
        for (addition, expected) in [
            (
                "[lib]\ncrate-type = [\"proc-macro\"]\n",
                "`proc-macro` is not a Rust library",
            ),
            (
                "[lib]\ncrate_type = [\"rlib\", \"proc-macro\"]\n",
                "`lib.crate_type`",
            ),
            (
                "[[bin]]\nname = \"x\"\ncrate-type = [\"cdylib\"]\n",
                "`cdylib`",
            ),
            (
                "[lib]\ncrate-type = \"proc-macro\"\n",
                "not a list of crate kinds",
            ),
            (
                "[[test]]\nname = \"t\"\nproc-macro = true\n",
                "`test.proc-macro`",
            ),
            (
                "[[bin]]\nname = \"x\"\nfilename = \"y\"\n",
                "`bin.filename`: not a key",
            ),
            ("[profile.release]\nopt-level = 0\n", "`profile`: not a key"),
            ("im-a-teapot = true\n", "`package.im-a-teapot`"),
            (
                "[package.metadata.x]\n[hints]\nx = 1\n",
                "`hints`: not a key",
            ),
        ] {
            let found = manifest_violations(&format!("{package}{addition}"));
            assert!(
                found.iter().any(|line| line.contains(expected)),
                "{addition:?}: {found:?}"
            );
        }
        let found = manifest_violations("bin = 3\n[package]\nname = \"coherent\"\n");
        assert!(
            found.iter().any(|line| line.contains("`bin`: not a table")),
            "{found:?}"
        );
        let fine = format!(
            "{package}[lib]\ncrate-type = [\"rlib\"]\ndoctest = false\n\n[[bin]]\nname = \"c\"\npath = \"src/main.rs\"\n\n[features]\nfast = []\n\n[lints.rust]\nunsafe_code = \"forbid\"\n"
        );
        assert_eq!(manifest_violations(&fine), Vec::<String>::new());
    }

    /// Each spelling Cargo reads as a refused key, one manifest per spelling.
    #[test]
    fn refused_keys_are_found_however_they_are_spelled() {
        let package = "[package]\nname = \"coherent\"\n";
        for (manifest, expected) in [
            (
                format!("{package}\"bui\\u006cd\" = \"src/hook.rs\"\n"),
                "line 3: `package.build`",
            ),
            (
                format!("{package}'build' = \"src/hook.rs\"\n"),
                "`package.build`",
            ),
            (
                "package = { name = \"coherent\", build = \"x.rs\" }\n".to_owned(),
                "`package.build`",
            ),
            (
                "\"package\".\"links\" = \"z\"\n".to_owned(),
                "`package.links`",
            ),
            (
                format!("{package}[lib]\n\"proc\\u002dmacro\" = true\n"),
                "`lib.proc-macro`",
            ),
            ("lib.proc-macro = true\n".to_owned(), "`lib.proc-macro`"),
            (
                "dependencies = { libc = \"0.2\" }\n".to_owned(),
                "`dependencies.libc`",
            ),
            (
                "\"depend\\u0065ncies\".libc.workspace = true\n".to_owned(),
                "`dependencies.libc`",
            ),
            (
                "[\"target\".\"cfg(unix)\".dependencies]\nlibc = \"0.2\"\n".to_owned(),
                "`target`",
            ),
            ("\"p\\u0061tch\" = {}\n".to_owned(), "`patch`"),
            ("[package\n".to_owned(), "line 1: not TOML"),
        ] {
            let found = manifest_violations(&manifest);
            assert!(
                found.iter().any(|line| line.contains(expected)),
                "{manifest:?}: {found:?}"
            );
        }
        // A root key named `package.build` is not `package.build`, and not known either.
        let found = manifest_violations("\"package.build\" = 1\n");
        assert!(
            found.len() == 1 && found[0].contains("`package.build`: not a key the oracle knows"),
            "{found:?}"
        );
    }
}
