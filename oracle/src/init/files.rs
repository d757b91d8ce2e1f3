//! The files `oracle init` writes, composed from the templates embedded in the oracle and the
//! engine contract: the constitution (its `engine:` section and profiles shaped like Coherent's,
//! books bound by sha256), its short prose, and the GitHub workflows. No I/O here.

use crate::builder::EngineBuild;
use crate::governance::constitution::CONSTITUTION_PATH;
use crate::governance::contract::{EngineContract, GateContract};

/// The constitution's prose, beside the data.
pub const PROSE_PATH: &str = "constitution/CONSTITUTION.md";

/// The workflows, by file name under `.github/workflows/`.
pub const WORKFLOWS: [(&str, &str); 3] = [
    ("oracle-pr.yml", include_str!("templates/oracle-pr.yml")),
    (
        "oracle-verify.yml",
        include_str!("templates/oracle-verify.yml"),
    ),
    (
        "oracle-register.yml",
        include_str!("templates/oracle-register.yml"),
    ),
];

/// The directory of the workflows in a repository.
pub const WORKFLOW_DIR: &str = ".github/workflows";

/// The profile a pull request is judged under by the written workflow: binding, and within one
/// runner's reach.
pub const WORKFLOW_PROFILE: &str = "workstation";

/// A pinned book: where it goes and its sha256.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinnedBook {
    /// Repository-relative path (`books/book-a.epd`).
    pub path: String,
    /// sha256 of its bytes.
    pub sha256: String,
}

/// What the texts say besides the contract.
#[derive(Debug, Clone)]
pub struct Setting<'a> {
    /// The repository's name (its directory's).
    pub name: &'a str,
    /// Today, `YYYY-MM-DD`.
    pub date: &'a str,
    /// The branch pull requests target.
    pub branch: &'a str,
    /// The oracle's repository, for `cargo install --git`.
    pub oracle_git: &'a str,
    /// The oracle's commit, for `--rev`.
    pub oracle_rev: &'a str,
    /// Book A (short stages) and book B (long stages); the same book twice when one was given.
    pub books: [&'a PinnedBook; 2],
}

/// Every file as (repository-relative path, bytes), the constitution first.
#[must_use]
pub fn compose(contract: &EngineContract, setting: &Setting<'_>) -> Vec<(String, Vec<u8>)> {
    let mut files = vec![
        (
            CONSTITUTION_PATH.to_owned(),
            constitution(contract, setting).into_bytes(),
        ),
        (PROSE_PATH.to_owned(), prose(contract, setting).into_bytes()),
    ];
    for (name, template) in WORKFLOWS {
        files.push((
            format!("{WORKFLOW_DIR}/{name}"),
            workflow(template, contract, setting).into_bytes(),
        ));
    }
    files
}

/// `constitution.yaml`: the template with the contract under `engine:` and the books.
#[must_use]
pub fn constitution(contract: &EngineContract, setting: &Setting<'_>) -> String {
    let engine = serde_norway::to_string(contract).unwrap_or_default();
    let indented: String = engine.lines().map(|line| format!("  {line}\n")).collect();
    let [a, b] = setting.books;
    include_str!("templates/constitution.yaml")
        .replace("@NAME@", setting.name)
        .replace("@ENGINE@\n", &indented)
        .replace("@BOOK_A@", &a.path)
        .replace("@BOOK_A_SHA256@", &a.sha256)
        .replace("@BOOK_B@", &b.path)
        .replace("@BOOK_B_SHA256@", &b.sha256)
}

/// `CONSTITUTION.md`: the articles in a few lines, with the contract's particulars.
#[must_use]
pub fn prose(contract: &EngineContract, setting: &Setting<'_>) -> String {
    let build = match &contract.build {
        EngineBuild::Cargo(recipe) => format!(
            "`cargo build` of `{}` with Rust {}",
            recipe.binary, recipe.toolchain
        ),
        other => format!(
            "`{}`",
            other.native().map_or("", |native| native.command.as_str())
        ),
    };
    let gate = match &contract.gate {
        GateContract::Symbols(rules) => format!(
            "hardware POPCNT in {} and its callees to depth {}",
            rules
                .symbols
                .iter()
                .map(|symbol| format!("`{symbol}`"))
                .collect::<Vec<_>>()
                .join(", "),
            rules.callee_depth
        ),
        GateContract::None => "none: the contract says `gate: none`".into(),
    };
    let options = if contract.options.is_empty() {
        "none".to_owned()
    } else {
        contract
            .option_pairs()
            .iter()
            .map(|(name, value)| format!("`{name}` {value}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    include_str!("templates/CONSTITUTION.md")
        .replace("@NAME@", setting.name)
        .replace("@DATE@", setting.date)
        .replace("@SCOPE@", &format!("`{}`", contract.scope.join("`, `")))
        .replace("@BUILD@", &build)
        .replace("@GATE@", &gate)
        .replace("@BENCH@", &contract.bench.args.join(" "))
        .replace("@TRAILER@", &contract.bench.trailer.key)
        .replace("@OPTIONS@", &options)
}

/// One workflow: the oracle pinned, the packages and toolchain the build needs, the branch.
fn workflow(template: &str, contract: &EngineContract, setting: &Setting<'_>) -> String {
    let (packages, toolchain_step) = match &contract.build {
        EngineBuild::Cargo(recipe) => (
            "bubblewrap".to_owned(),
            format!(
                "      - name: the engine's Rust toolchain\n        run: rustup toolchain install {} --profile minimal\n",
                recipe.toolchain
            ),
        ),
        EngineBuild::Cmake(_) => ("bubblewrap cmake make g++".to_owned(), String::new()),
        EngineBuild::Make(_) | EngineBuild::Command(_) => {
            ("bubblewrap make g++".to_owned(), String::new())
        }
    };
    template
        .replace("@BRANCH@", setting.branch)
        .replace("@PROFILE@", WORKFLOW_PROFILE)
        .replace("@ORACLE_GIT@", setting.oracle_git)
        .replace("@ORACLE_REV@", setting.oracle_rev)
        .replace("@PACKAGES@", &packages)
        .replace("@TOOLCHAIN_STEP@", &toolchain_step)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::governance::Constitution;

    const CONTRACT: &str = "build:\n  kind: make\n  command: make -C src EXE={out}\n  \
                            compiler: cc\nscope: [src/]\nbench:\n  args: [bench]\n  \
                            output: [\"OVERALL: {nodes} nodes {nps} nps\"]\n  \
                            trailer: {key: Bench, digit_groups: true}\ngate: none\n\
                            options: {Hash: 16, Threads: 1}\n";

    fn book(name: &str) -> PinnedBook {
        PinnedBook {
            path: format!("books/{name}.epd"),
            sha256: "ab".repeat(32),
        }
    }

    #[test]
    fn the_composed_constitution_loads_with_the_contract_and_the_books() {
        let contract: EngineContract = serde_norway::from_str(CONTRACT).unwrap();
        let (a, b) = (book("book-a"), book("book-b"));
        let setting = Setting {
            name: "ethereal",
            date: "2026-12-01",
            branch: "master",
            oracle_git: "https://example.invalid/coherent",
            oracle_rev: "0123",
            books: [&a, &b],
        };
        let files = compose(&contract, &setting);
        let text = String::from_utf8(files[0].1.clone()).unwrap();
        let constitution = Constitution::parse(text.as_bytes(), Path::new("c.yaml")).unwrap();
        assert_eq!(constitution.contract(), contract);
        assert_eq!(
            constitution.profiles["workstation"].stages[1]
                .book
                .to_str()
                .unwrap(),
            "books/book-b.epd"
        );
        let prose = String::from_utf8(files[1].1.clone()).unwrap();
        assert!(prose.contains("`make -C src EXE={out}`") && prose.contains("`Hash` 16"));
        for (path, bytes) in &files[2..] {
            let text = String::from_utf8(bytes.clone()).unwrap();
            for placeholder in [
                "@BRANCH@",
                "@PROFILE@",
                "@ORACLE_GIT@",
                "@PACKAGES@",
                "@TOOLCHAIN_STEP@",
            ] {
                assert!(!text.contains(placeholder), "{path}: {placeholder} is left");
            }
            let _: serde_norway::Value = serde_norway::from_str(&text).unwrap();
        }
        let verify = String::from_utf8(files[3].1.clone()).unwrap();
        assert!(verify.contains("PROFILE: workstation") && verify.contains("bubblewrap make g++"));
    }
}
