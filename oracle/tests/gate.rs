//! The build-shape gate and the bench signature on real builds of fixture
//! engines (docs/architecture.md).

use crate::support::fixture_repo::{
    FixtureRepo, HELPER_INLINED, HELPER_OUT_OF_LINE, build_binary, engine_source,
};
use crate::support::{ORACLE, oracle};

fn gate_json(binary: &std::path::Path) -> (i32, serde_json::Value) {
    let run = oracle(&["gate", binary.to_str().unwrap(), "--json"]);
    (run.code, run.json())
}

#[test]
fn the_dispatched_popcnt_evaluation_passes_and_a_stripped_copy_fails_closed() {
    let repo = FixtureRepo::new();
    let commit = repo.commit_crate(
        &engine_source(3, HELPER_INLINED),
        None,
        "engine with POPCNT path\n\nBench: 300161\n",
    );
    let binary = build_binary(&repo, &commit.to_string());

    let (code, report) = gate_json(&binary);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["pass"], true);
    assert_eq!(
        report["symbols"],
        serde_json::json!(["coherent_evaluate_popcnt"])
    );
    assert!(report["popcnt"].as_u64().unwrap() >= 1, "{report:#}");
    assert_eq!(report["software_popcount"], 0);
    assert_eq!(report["vpopcnt"], 0);
    assert_eq!(
        report["functions_scanned"][0]["name"],
        "coherent_evaluate_popcnt"
    );

    // The generic fallback in the same binary carries the software popcount: the whole-binary
    // view would see both, which is why the gate reads only the fast variant and its callees.
    let run = oracle(&[
        "gate",
        binary.to_str().unwrap(),
        "--symbol",
        "coherent::coherent_evaluate_generic",
        "--json",
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.json()["software_popcount"].as_u64().unwrap() >= 1,
        "{run:?}"
    );

    let human = oracle(&["gate", binary.to_str().unwrap()]);
    assert_eq!(human.code, 0, "{human:?}");
    assert!(human.stdout.starts_with("gate: PASS"), "{}", human.stdout);

    let dir = tempfile::tempdir().unwrap();
    let stripped = dir.path().join("coherent-stripped");
    let status = std::process::Command::new("strip")
        .arg("-o")
        .arg(&stripped)
        .arg(&binary)
        .status()
        .unwrap();
    assert!(status.success());
    let (code, report) = gate_json(&stripped);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(report["pass"], false);
    assert!(
        report["failures"][0].as_str().unwrap().contains("stripped"),
        "{report:#}"
    );
    assert_eq!(report["functions_scanned"], serde_json::json!([]));

    let bench = oracle(&["bench", binary.to_str().unwrap(), "--json"]);
    assert_eq!(bench.code, 0, "{bench:?}");
    let signature = bench.json();
    assert_eq!(signature["deterministic"], true);
    assert_eq!(signature["runs"].as_array().unwrap().len(), 2);
    let trailer = oracle::builder::bench::bench_trailer(
        &repo.repo,
        commit,
        &oracle::builder::bench::TrailerForm::standard(),
    )
    .unwrap();
    assert_eq!(
        signature["nodes"].as_u64(),
        trailer,
        "bench signature equals the commit's `Bench:` trailer"
    );
}

#[test]
fn a_helper_moved_out_of_the_fast_path_fails_the_gate_by_name() {
    let repo = FixtureRepo::new();
    let commit = repo.commit_crate(
        &engine_source(3, HELPER_OUT_OF_LINE),
        None,
        "extra term out of line",
    );
    let binary = build_binary(&repo, &commit.to_string());
    let (code, report) = gate_json(&binary);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(report["pass"], false);
    assert!(
        report["software_popcount"].as_u64().unwrap() >= 1,
        "{report:#}"
    );
    let failures = report["failures"].to_string();
    assert!(failures.contains("coherent::extra_term"), "{failures}");
    let helper = report["functions_scanned"]
        .as_array()
        .unwrap()
        .iter()
        .find(|function| function["name"] == "coherent::extra_term")
        .unwrap_or_else(|| panic!("helper not scanned: {report:#}"));
    assert_eq!(helper["depth"], 1);
    assert_eq!(helper["called_from"], "coherent_evaluate_popcnt");
    assert_eq!(helper["software_popcount"], true);
}

#[test]
fn gate_errors_and_missing_symbols() {
    let missing = oracle(&["gate", "/nonexistent/coherent"]);
    assert_eq!(missing.code, 2, "{missing:?}");
    assert!(
        missing.stderr.contains("/nonexistent/coherent"),
        "{missing:?}"
    );

    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("not-elf");
    std::fs::write(&text, "#!/bin/sh\n").unwrap();
    let run = oracle(&["gate", text.to_str().unwrap()]);
    assert_eq!(run.code, 2, "{run:?}");

    let run = oracle(&[
        "gate",
        ORACLE,
        "--symbol",
        "coherent_evaluate_popcnt",
        "--json",
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.json()["failures"][0]
            .as_str()
            .unwrap()
            .contains("not in the binary's symbol table")
    );
}
