//! What a candidate may change: `engine/` and nothing else (an allowlist), and inside it nothing
//! that changes how the engine is built.
//!
//! Everything outside `engine/` reaches the build or the judge: the root `Cargo.toml` (patches,
//! profiles, members), `Cargo.lock`, `rust-toolchain.toml`, scripts, CI, the oracle, the
//! constitution, the books, the register. A list of refused paths misses the next such file; an
//! allowlist does not. Inside `engine/` the engine stays std-only: its manifest may not declare
//! dependencies, a build script, native links, a proc-macro, patches or a workspace, and no build
//! script or Cargo configuration file may appear — each would run code or change flags at build
//! time, before anything is measured.

use serde::Serialize;

/// The only directory a candidate may change.
pub const ENGINE_PREFIX: &str = "engine/";

/// The engine's manifest, checked key by key.
pub const ENGINE_MANIFEST: &str = "engine/Cargo.toml";

/// Tables whose entries bring code into the build (any `[target.…]` table is refused as well).
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

/// Keys that run or link foreign code: a build script, a native library, a proc-macro crate, a
/// workspace root elsewhere.
const REFUSED_KEYS: [&str; 6] = [
    "package.build",
    "package.links",
    "package.workspace",
    "lib.proc-macro",
    "lib.proc_macro",
    "lib.plugin",
];

/// One reason a candidate's change is governance rather than an engine change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// The repository-relative path at fault.
    pub path: String,
    /// What is wrong with it.
    pub reason: String,
}

/// Why a changed path is outside what a candidate may change (`None`: it may).
#[must_use]
pub fn path_violation(path: &str) -> Option<String> {
    let Some(inside) = path.strip_prefix(ENGINE_PREFIX) else {
        return Some("outside engine/ (an engine change may change engine/ only)".to_owned());
    };
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

/// What is wrong with the engine's manifest, one line per refused table or key (empty: nothing).
///
/// A line scan, not a TOML parser (the oracle takes no TOML dependency): table headers and
/// `key = value` lines are read as written, dotted keys are joined with their table, and an
/// inline table is refused outright because its keys cannot be seen. The scan errs towards
/// refusing: a manifest it cannot read as plain tables and keys is not an engine change.
#[must_use]
pub fn manifest_violations(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut table: Vec<String> = Vec::new();
    for (number, raw) in text.lines().enumerate() {
        let line = strip_comment(raw).trim();
        if line.is_empty() {
            continue;
        }
        let at = number + 1;
        if let Some(header) = line.strip_prefix('[') {
            let header = header.trim_start_matches('[');
            let name = header.trim_end().trim_end_matches(']');
            table = split_key(name);
            if let Some(why) = refused_path(&table, true) {
                found.push(format!("line {at}: [{name}]: {why}"));
            }
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let mut path = table.clone();
        path.extend(split_key(key));
        let joined = path.join(".");
        if value.trim_start().starts_with('{') {
            found.push(format!(
                "line {at}: `{joined}` is an inline table; write it as a [table] the oracle can check"
            ));
        } else if let Some(why) = refused_path(&path, false) {
            found.push(format!("line {at}: `{joined}`: {why}"));
        }
    }
    found
}

/// Why a table (`header`) or key path is refused in the engine's manifest.
fn refused_path(path: &[String], header: bool) -> Option<&'static str> {
    let first = path.first().map(String::as_str).unwrap_or_default();
    if REFUSED_ROOTS.contains(&first) {
        return Some("patches, replacements, workspaces and platform tables change the build");
    }
    let in_dependencies = path
        .iter()
        .any(|part| DEPENDENCY_TABLES.contains(&part.as_str()));
    // An empty `[dependencies]` header declares nothing; any entry in it does.
    let is_bare_table = header && path.len() == 1;
    if in_dependencies && !is_bare_table {
        return Some("the engine is std-only: no dependencies of any kind");
    }
    let joined = path.join(".");
    REFUSED_KEYS
        .contains(&joined.as_str())
        .then_some("build scripts, native links and proc-macros run foreign code at build time")
}

/// A dotted TOML key split into its parts, quotes removed.
fn split_key(key: &str) -> Vec<String> {
    key.split('.')
        .map(|part| part.trim().trim_matches('"').trim_matches('\'').to_owned())
        .filter(|part| !part.is_empty())
        .collect()
}

/// The line without a trailing `# comment` (a `#` inside a quoted string is kept).
fn strip_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '#') => return &line[..i],
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            _ => {}
        }
    }
    line
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
            assert_eq!(path_violation(allowed), None, "{allowed}");
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
            assert!(path_violation(refused).is_some(), "{refused}");
        }
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
            ("libc = \"0.2\"\n", "`dependencies.libc`"),
            ("[dev-dependencies]\nx = \"1\"\n", "`dev-dependencies.x`"),
            (
                "[build-dependencies.cc]\nversion = \"1\"\n",
                "[build-dependencies.cc]",
            ),
            ("[target.'cfg(unix)'.dependencies]\n", "[target."),
            (
                "[patch.crates-io]\nlibc = { path = \"v\" }\n",
                "[patch.crates-io]",
            ),
            ("[replace]\n", "[replace]"),
            ("[workspace]\n", "[workspace]"),
            (
                "[package]\nbuild = \"gen.rs\" # generated\n",
                "`package.build`",
            ),
            ("[package]\nlinks = \"z\"\n", "`package.links`"),
            ("[lib]\nproc-macro = true\n", "`lib.proc-macro`"),
            ("[lib]\n\"proc-macro\" = true\n", "`lib.proc-macro`"),
            ("[package.metadata]\nx = { a = 1 }\n", "inline table"),
        ] {
            let found = manifest_violations(&format!("{base}{addition}"));
            assert!(
                found.iter().any(|line| line.contains(expected)),
                "{addition:?}: {found:?}"
            );
        }
        let build_key_at_top = "package.build = \"x.rs\"\n";
        assert_eq!(manifest_violations(build_key_at_top).len(), 1);
        let comment = "[package]\nname = \"a#b\" # build = \"x\"\n";
        assert!(manifest_violations(comment).is_empty());
    }
}
