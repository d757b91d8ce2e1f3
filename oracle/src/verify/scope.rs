//! What a candidate may change: the engine contract's scope (`engine/` for Coherent) and nothing
//! else (an allowlist), and inside a Cargo engine's scope nothing that changes how it is built.
//!
//! Everything outside the scope reaches the build or the judge: the root `Cargo.toml` (patches,
//! profiles, members), `Cargo.lock`, `rust-toolchain.toml`, scripts, CI, the oracle, the
//! constitution, the books, the register. A list of refused paths misses the next such file; an
//! allowlist does not. Inside the scope a Cargo engine stays std-only: its manifest may not
//! declare dependencies, a build script, native links, a proc-macro, patches or a workspace, and
//! no build script or Cargo configuration file may appear — each would run code or change flags
//! at build time, before anything is measured. A C or C++ engine's build files inside its scope
//! (its Makefile) are the engine's; what they could do to the binary's portability, the compiler
//! wrapper refuses (`builder::native`).

use serde::Serialize;
use toml::de::DeTable;

use crate::builder::EngineBuild;
use crate::governance::contract::EngineContract;

/// Tables whose entries bring code into the build (`[target.…]` is refused as a whole).
const DEPENDENCY_TABLES: [&str; 5] = [
    "dependencies",
    "dev-dependencies",
    "dev_dependencies",
    "build-dependencies",
    "build_dependencies",
];

/// Top-level tables that redirect sources or the build: `[patch]`, `[replace]`, `[workspace]`,
/// `[target.…]` (platform dependencies), `cargo-features` (unstable manifest features).
const REFUSED_ROOTS: [&str; 5] = ["patch", "replace", "workspace", "target", "cargo-features"];

/// Keys, by table, that run or link foreign code: a build script, a native library, a
/// proc-macro crate, a workspace root elsewhere. Refused whatever their value (`build = false`
/// too: the engine has no build script to switch off).
const REFUSED_KEYS: [(&str, &[&str]); 2] = [
    ("package", &["build", "links", "workspace"]),
    ("lib", &["proc-macro", "proc_macro", "plugin"]),
];

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

/// The Cargo manifests of the scope whose keys are checked: `Cargo.toml` at the root of each
/// scope directory of a Cargo engine (`engine/Cargo.toml`); none for a C or C++ engine.
#[must_use]
pub fn manifests(contract: &EngineContract) -> Vec<String> {
    if !matches!(contract.build, EngineBuild::Cargo(_)) {
        return Vec::new();
    }
    contract
        .scope
        .iter()
        .filter(|entry| entry.ends_with('/'))
        .map(|dir| format!("{dir}Cargo.toml"))
        .collect()
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
        if REFUSED_ROOTS.contains(&name) {
            found.push(format!(
                "line {at}: `{name}`: patches, replacements, workspaces and platform tables change the build"
            ));
        } else if DEPENDENCY_TABLES.contains(&name) {
            let std_only = "the engine is std-only: no dependencies of any kind";
            match value.get_ref().as_table() {
                // An empty `[dependencies]` declares nothing; any entry in it does.
                Some(table) => found.extend(table.iter().map(|(dependency, _)| {
                    let at = line(dependency.span().start);
                    let dependency: &str = dependency.get_ref();
                    format!("line {at}: `{name}.{dependency}`: {std_only}")
                })),
                None => found.push(format!("line {at}: `{name}`: {std_only}")),
            }
        } else if let Some((_, refused)) = REFUSED_KEYS.iter().find(|(table, _)| *table == name)
            && let Some(table) = value.get_ref().as_table()
        {
            for (inner, _) in table {
                let inner_name: &str = inner.get_ref();
                if refused.contains(&inner_name) {
                    found.push(format!(
                        "line {}: `{name}.{inner_name}`: build scripts, native links and proc-macros run foreign code at build time",
                        line(inner.span().start)
                    ));
                }
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
        // A key that only looks like one: a root key named `package.build`, not `package.build`.
        assert!(manifest_violations("\"package.build\" = 1\n").is_empty());
    }
}
