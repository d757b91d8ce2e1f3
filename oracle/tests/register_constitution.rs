//! The constitution: the repository's own file holds the seed's rules, and
//! every error names the file, line, column and field.

use oracle::governance::Constitution;
use oracle::governance::constitution::{ConstitutionError, NeloBounds};
use oracle::play::clock::TimeControl;

use crate::support::{oracle, register_fixture, repository_root};

/// The repository's constitution.
fn repository_constitution() -> Constitution {
    Constitution::load(&repository_root()).unwrap().0
}

/// `[elo0, elo1]` of a bounds value.
fn pair(bounds: NeloBounds) -> [f64; 2] {
    [bounds.elo0, bounds.elo1]
}

#[test]
fn official_profile_has_the_seed_stages_and_bounds() {
    let constitution = repository_constitution();
    let official = constitution.profile("official").unwrap();
    assert!(official.binding);
    assert_eq!((official.alpha.get(), official.beta.get()), (0.05, 0.05));
    let stages: Vec<(String, String, String)> = official
        .stages
        .iter()
        .map(|s| {
            (
                s.name.clone(),
                s.tc.to_string(),
                s.book.display().to_string(),
            )
        })
        .collect();
    assert_eq!(
        stages,
        [
            ("short".into(), "8+0.08".into(), "books/book-a.epd".into()),
            ("long".into(), "40+0.4".into(), "books/book-b.epd".into())
        ]
    );
    assert_eq!(pair(official.stages[0].bounds.standard), [0.0, 2.0]);
    assert_eq!(pair(official.stages[1].bounds.standard), [0.5, 2.5]);
    for stage in &official.stages {
        assert_eq!(pair(stage.bounds.randfall), [-5.0, 0.0]);
    }
    let gate = constitution
        .gate
        .as_ref()
        .expect("today's constitution states its gate");
    assert_eq!(gate.symbols, ["coherent_evaluate_popcnt"]);
    assert_eq!(gate.callee_depth, 2);
    let recipe = constitution.build.as_ref().expect("and its Cargo recipe");
    assert_eq!(recipe.toolchain, "1.95.0");
    assert_eq!(constitution.loss_tolerance.limit_nelo, 10.0);
}

#[test]
fn workstation_is_fixed_nodes_then_a_clock_and_smoke_never_binds() {
    let constitution = repository_constitution();
    let workstation = constitution.profile("workstation").unwrap();
    assert!(
        workstation.binding,
        "the project has no fleet and declares workstation binding"
    );
    // Article 2.5: node stages first, then the stage at a clock that sees time and speed.
    let (clock, nodes) = workstation.stages.split_last().unwrap();
    assert!(nodes.iter().all(|s| matches!(s.tc, TimeControl::Nodes(_))));
    assert_eq!(
        (clock.name.as_str(), clock.tc.to_string()),
        ("clock", "1+0.01".to_string())
    );
    assert_eq!(clock.book_sha256, nodes[0].book_sha256, "book A");
    let smoke = constitution.profile("smoke").unwrap();
    assert!(!smoke.binding);
    assert!(
        smoke
            .stages
            .iter()
            .all(|s| matches!(s.tc, TimeControl::Nodes(_)) && s.max_games.get() <= 1000)
    );
}

/// Runs `oracle constitution check FILE` on `text` and returns (exit code, stderr).
fn check(text: &str) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("constitution.yaml");
    std::fs::write(&file, text).unwrap();
    let file = file.to_str().unwrap();
    let output = oracle(&["constitution", "check", file]);
    (output.code, output.stderr.replace(file, "FILE"))
}

#[test]
fn errors_name_file_line_column_and_field() {
    let good = register_fixture::constitution_text();
    assert_eq!(check(&good).0, 0);
    let cases = [
        (
            "    batch_size: 4\n",
            "    batch_size: 4\n    batchsize: 4\n",
            "error: FILE:22:5: profiles.bound: unknown field `batchsize`",
        ),
        (
            "standard: [0.0, 10.0]",
            "standard: [10.0, 0.0]",
            "error: FILE:34:21: profiles.bound.stages[0].bounds.standard: bounds [10, 0] must be finite with elo0 < elo1",
        ),
        (
            "tc: \"10+0.1\"",
            "tc: 10+x",
            "error: FILE:37:13: profiles.bound.stages[1].tc: `10+x` is not a time control",
        ),
        (
            "limit_nelo: 10.0",
            "limit_nelo: ten",
            "error: FILE:14:15: loss_tolerance.limit_nelo: invalid type: string \"ten\", expected f64",
        ),
        (
            "version: 1\n",
            "",
            "error: FILE:1:1: missing field `version`",
        ),
        (
            "alpha: 0.05",
            "alpha: 1",
            "error: FILE:19:12: profiles.bound.alpha: 1 is not a probability strictly between 0 and 1",
        ),
        (
            "max_games: 20000\n",
            "max_games: 20001\n",
            "error: FILE: field `profiles.bound.stages[0]`: min_games and max_games must be even",
        ),
    ];
    for (from, to, expected) in cases {
        assert!(good.contains(from), "{from}");
        let (code, error) = check(&good.replacen(from, to, 1));
        assert_eq!(code, 2, "{error}");
        assert!(
            error.starts_with(expected),
            "expected `{expected}`, got `{error}`"
        );
    }
}

#[test]
fn books_are_checked_against_their_pins_when_a_stage_runs() {
    let repo = register_fixture::Repo::new();
    let (constitution, _) = Constitution::load(repo.path()).unwrap();
    let stage = &constitution.profile("bound").unwrap().stages[0];
    assert!(stage.check_book(repo.path(), "bound").is_ok());
    std::fs::write(
        repo.path().join("books/book-a.epd"),
        "8/8/8/8/8/8/8/K6k w - -\n",
    )
    .unwrap();
    let error = stage.check_book(repo.path(), "bound").unwrap_err();
    assert!(matches!(error, ConstitutionError::Book { .. }));
    assert!(
        error
            .to_string()
            .starts_with("profile `bound`, stage `short`: book books/book-a.epd: sha256 is "),
        "{error}"
    );

    let unpinned = repository_constitution();
    let official = &unpinned.profile("official").unwrap().stages[0];
    if official.book_sha256.is_none() {
        let error = official.check_book(repo.path(), "official").unwrap_err();
        assert!(
            error
                .to_string()
                .ends_with("book_sha256 is not pinned in the constitution yet"),
            "{error}"
        );
    }
}
