//! End-to-end tests of `oracle sprt`: the real binary, its human and JSON output (insta
//! snapshots) and its exit status on bad input.

use std::process::Command;

use crate::support::{ORACLE, Run, oracle};

/// Runs a command that must succeed and returns its stdout.
fn ok(args: &[&str]) -> String {
    let Run {
        code,
        stdout,
        stderr,
    } = oracle(args);
    assert_eq!(code, 0, "{args:?} failed: {stderr}");
    stdout
}

/// Runs a command that must be refused as bad input and returns its stderr.
fn bad_input(args: &[&str]) -> String {
    let Run {
        code,
        stdout,
        stderr,
    } = oracle(args);
    assert_eq!(code, 2, "{args:?} should exit 2, stdout: {stdout}");
    assert!(stdout.is_empty(), "nothing on stdout on failure: {stdout}");
    stderr
}

/// The arguments `sprt COMMAND ARGS… --elo0 ELO0 --elo1 ELO1`.
fn sprt<'a>(command: &'a str, args: &[&'a str], [elo0, elo1]: [&'a str; 2]) -> Vec<&'a str> {
    let mut all = vec!["sprt", command];
    all.extend_from_slice(args);
    all.extend(["--elo0", elo0, "--elo1", elo1]);
    all
}

const EXAMPLE: &[&str] = &[
    "sprt",
    "status",
    "--penta",
    "120,2480,5300,2560,140",
    "--elo0",
    "0",
    "--elo1",
    "2",
];

#[test]
fn status_human() {
    insta::assert_snapshot!("status_penta_human", ok(EXAMPLE));
    insta::assert_snapshot!(
        "status_trinomial_human",
        ok(&sprt(
            "status",
            &[
                "--trinomial",
                "w=5019,l=5026,d=15699",
                "--model",
                "logistic"
            ],
            ["-3", "1"]
        ))
    );
}

#[test]
fn status_json() {
    let text = ok(&[EXAMPLE, &["--json"]].concat());
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let keys: Vec<&str> = value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let mut expected = vec![
        "model",
        "llr",
        "lower_bound",
        "upper_bound",
        "state",
        "pairs",
        "games",
        "nelo",
        "nelo_ci95",
        "elo",
        "elo_ci95",
        "los",
        "fixed_games_elo",
        "fixed_games_elo_ci95",
        "fixed_games_los",
    ];
    let mut sorted = keys.clone();
    sorted.sort_unstable();
    expected.sort_unstable();
    assert_eq!(sorted, expected);
    assert!((value["llr"].as_f64().unwrap() - 0.938_782_528_541_893_9).abs() < 1e-9);
    insta::assert_snapshot!("status_penta_json", text);
    insta::assert_snapshot!(
        "status_trinomial_json",
        ok(&sprt(
            "status",
            &[
                "--trinomial",
                "l=0,d=0,w=10",
                "--model",
                "logistic",
                "--json"
            ],
            ["-1500", "0"]
        ))
    );
}

/// 120 pairs leaning towards the candidate, written to a temporary file with spacing and newlines.
fn outcomes_file() -> tempfile::NamedTempFile {
    let mut text = String::new();
    for i in 0..120 {
        text.push(char::from(b"2324213242"[i % 10]));
        text.push(if i % 30 == 29 { '\n' } else { ' ' });
    }
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), text).unwrap();
    file
}

#[test]
fn replay_human_and_json() {
    let file = outcomes_file();
    let path = file.path().to_str().unwrap();
    let args = [
        "sprt",
        "replay",
        "--outcomes",
        path,
        "--batch",
        "10",
        "--elo0",
        "0",
        "--elo1",
        "40",
    ];
    insta::assert_snapshot!("replay_human", ok(&args));
    let text = ok(&[&args[..], &["--json"]].concat());
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let rows = value["trajectory"].as_array().unwrap();
    assert!(rows.iter().all(|row| row.as_array().unwrap().len() == 5));
    assert_eq!(value["final"]["state"], rows.last().unwrap()[4]);
    insta::assert_snapshot!("replay_json", text);
}

#[test]
fn calc_human_and_json() {
    let args = ["sprt", "calc", "--elo0", "0", "--elo1", "2", "--elo", "1"];
    insta::assert_snapshot!("calc_human", ok(&args));
    insta::assert_snapshot!("calc_json", ok(&[&args[..], &["--json"]].concat()));
    let text = ok(&sprt(
        "calc",
        &[
            "--elo",
            "-5",
            "--model",
            "logistic",
            "--draw-ratio",
            "0.6",
            "--bias",
            "0",
            "--json",
        ],
        ["-5", "0"],
    ));
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!((value["pass_probability"].as_f64().unwrap() - 0.05).abs() < 1e-9);
}

#[test]
fn bad_input_names_the_argument() {
    let base = ["sprt", "status", "--elo0", "0", "--elo1", "2"];
    let cases: [(&[&str], &str); 6] = [
        (&["--penta", "1,2,-3,4,5"], "--penta"),
        (&["--penta", "1,2,3,4"], "--penta"),
        (&["--trinomial", "1,x,3"], "--trinomial"),
        (&["--penta", "1,2,3,4,5", "--alpha", "1.5"], "alpha"),
        (&["--penta", "1,2,3,4,5", "--beta", "0"], "beta"),
        (&["--penta", "1,2,3,4,5", "--elo1", "0"], "elo1"),
    ];
    for (extra, name) in cases {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        // A later --elo1 overrides nothing in clap: drop the default pair when a case sets it.
        if extra.contains(&"--elo1") {
            args.drain(4..6);
        }
        let stderr = bad_input(&args);
        assert!(stderr.contains(name), "{args:?}: {stderr}");
    }
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), "0123\n43x1\n").unwrap();
    let path = file.path().to_str().unwrap();
    let stderr = bad_input(&sprt(
        "replay",
        &["--outcomes", path, "--batch", "2"],
        ["0", "2"],
    ));
    assert!(
        stderr.contains("--outcomes") && stderr.contains(":2:3:"),
        "{stderr}"
    );
    let stderr = bad_input(&sprt(
        "replay",
        &["--outcomes", path, "--batch", "0"],
        ["0", "2"],
    ));
    assert!(stderr.contains("--batch"), "{stderr}");
    let stderr = bad_input(&sprt(
        "replay",
        &["--outcomes", "/nonexistent/pairs.txt", "--batch", "2"],
        ["0", "2"],
    ));
    assert!(stderr.contains("--outcomes"), "{stderr}");
    let stderr = bad_input(&sprt(
        "calc",
        &["--elo", "1", "--draw-ratio", "1.2"],
        ["0", "2"],
    ));
    assert!(stderr.contains("draw ratio"), "{stderr}");
    let stderr = bad_input(&sprt(
        "status",
        &["--penta", "3,40,100,40,3"],
        ["-1500", "0"],
    ));
    assert!(stderr.contains("elo0 = -1500"), "{stderr}");
}

#[test]
fn simulate_is_seeded() {
    let args = [
        "sprt", "simulate", "--elo0", "-40", "--elo1", "40", "--tests", "40", "--batch", "4",
        "--seed", "3", "--json",
    ];
    let first: serde_json::Value = serde_json::from_str(&ok(&args)).unwrap();
    let second: serde_json::Value = serde_json::from_str(&ok(&args)).unwrap();
    assert_eq!(first["runs"], second["runs"]);
    let runs = first["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert!((runs[0]["true_nelo"].as_f64().unwrap() + 40.0).abs() < 1e-9);
    assert!(runs[0]["pass_rate"].as_f64().unwrap() < runs[1]["pass_rate"].as_f64().unwrap());
}

/// Trinomial counts only by name: three bare numbers are refused (exit 2) with the reason.
#[test]
fn trinomial_counts_are_read_by_name_only() {
    let named = ok(&sprt(
        "status",
        &[
            "--trinomial",
            "d=15699,w=5019,l=5026",
            "--model",
            "logistic",
            "--json",
        ],
        ["-3", "1"],
    ));
    let value: serde_json::Value = serde_json::from_str(&named).unwrap();
    assert_eq!(value["games"], 25744);
    assert!(
        value["fixed_games_elo"].as_f64().unwrap() < 0.0,
        "W < L: {named}"
    );
    let stderr = bad_input(&sprt(
        "status",
        &["--trinomial", "5019,5026,15699"],
        ["-3", "1"],
    ));
    assert!(
        stderr.contains("--trinomial") && stderr.contains("name the counts"),
        "{stderr}"
    );
}

/// A Fishtest result block as pasted gives the same status as its pentanomial counts; bounds
/// in it that are not the command's are refused.
#[test]
fn fishtest_text_as_pasted() {
    let text = "LLR: 0.94 (-2.94,2.94) <0.00,2.00>\n\
                Total: 21200 W: 5420 L: 5300 D: 10480\n\
                Ptnml(0-2): 120, 2480, 5300, 2560, 140\n";
    let from_text = ok(&sprt("status", &["--fishtest", text], ["0", "2"]));
    assert_eq!(from_text, ok(EXAMPLE));
    let stderr = bad_input(&sprt("status", &["--fishtest", text], ["0", "5"]));
    assert!(
        stderr.contains("--fishtest") && stderr.contains("<0.00,2.00>"),
        "{stderr}"
    );
    let stderr = bad_input(&sprt(
        "status",
        &["--fishtest", "Total: 20 W: 5 L: 5 D: 9"],
        ["0", "2"],
    ));
    assert!(stderr.contains("Total: 20"), "{stderr}");
}

/// docs/cli.md: a test that ended in H0 exits 1, with its output; `--json` is global and an
/// error under it is one JSON object on standard output with the exit status.
#[test]
fn exit_statuses_and_json_errors() {
    let args = [
        "sprt",
        "status",
        "--penta",
        "300,400,500,300,100",
        "--elo0",
        "0",
        "--elo1",
        "2",
    ];
    let Run { code, stdout, .. } = oracle(&[&["--json"], &args[..]].concat());
    assert_eq!(code, 1);
    let value: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(value["state"], "accept_h0");
    let Run {
        code,
        stdout,
        stderr,
    } = oracle(&[
        "sprt", "status", "--penta", "1,2", "--elo0", "0", "--elo1", "2", "--json",
    ]);
    assert_eq!(code, 2);
    assert!(stderr.is_empty(), "{stderr}");
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    let value: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(value["exit_code"], 2);
    assert!(
        value["error"].as_str().unwrap().contains("--penta"),
        "{value}"
    );
    let Run { code, stdout, .. } = oracle(&sprt(
        "status",
        &["--penta", "1,2,3,4,5", "--json"],
        ["0", "-1"],
    ));
    assert_eq!(code, 2);
    let value: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!(value["error"].as_str().unwrap().contains("elo1"), "{value}");
}

#[test]
fn bench_reports_time_per_call() {
    let stdout = ok(&sprt(
        "bench",
        &[
            "--penta",
            "2000,20000,56000,20000,2000",
            "--iterations",
            "10",
        ],
        ["0", "2"],
    ));
    assert!(
        stdout.contains("us per call") && stdout.contains("pairs 100000"),
        "{stdout}"
    );
}

#[test]
fn bench_json() {
    let text = ok(&sprt(
        "bench",
        &[
            "--penta",
            "2000,20000,56000,20000,2000",
            "--iterations",
            "3",
            "--json",
        ],
        ["0", "2"],
    ));
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        (value["iterations"].as_u64(), value["pairs"].as_u64()),
        (Some(3), Some(100_000))
    );
    assert!(value["microseconds_per_call"].as_f64().unwrap() > 0.0);
}

/// `sprt calc` without --elo: the table over Fishtest calculator's axis, its JSON and the SVG.
#[test]
fn calc_over_a_range() {
    let args = ["sprt", "calc", "--elo0", "0", "--elo1", "2"];
    let text = ok(&args);
    let rows: Vec<&str> = text.lines().skip(3).collect();
    assert_eq!(rows.len(), 62, "{text}");
    assert!(
        rows.iter()
            .any(|row| row.contains("5.00 %") && row.ends_with("159942  elo0")),
        "{text}"
    );
    let value: serde_json::Value =
        serde_json::from_str(&ok(&[&args[..], &["--json"]].concat())).unwrap();
    let curve = value["curve"].as_array().unwrap();
    assert_eq!(curve.len(), 62);
    assert_eq!(curve[0]["elo"], -1.0);
    assert!(
        (value["design"]["logistic_elo1"].as_f64().unwrap() - 1.019_165_185_944_726_8).abs()
            < 1e-12
    );
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("calc.svg");
    let text = ok(&[
        &args[..],
        &[
            "--range",
            "-2,3",
            "--step",
            "0.5",
            "--svg",
            svg.to_str().unwrap(),
        ],
    ]
    .concat());
    assert_eq!(text.lines().count(), 3 + 11 + 1, "{text}");
    let figure = std::fs::read_to_string(&svg).unwrap();
    assert_eq!(figure.matches("<polyline").count(), 2, "{figure}");
    assert!(figure.contains("elo1 1.02"), "{figure}");
    let stderr = bad_input(&[&args[..], &["--range", "3,-2"]].concat());
    assert!(stderr.contains("--range"), "{stderr}");
}

/// Runs the oracle with standard output going to `stdout`; returns (exit code, stderr).
fn oracle_into(args: &[&str], stdout: std::process::Stdio) -> (i32, String) {
    let Run { code, stderr, .. } = Command::new(ORACLE)
        .args(args)
        .stdout(stdout)
        .output()
        .expect("the oracle binary runs")
        .into();
    (code, stderr)
}

#[test]
fn a_closed_standard_output_ends_the_command_quietly() {
    let json = [EXAMPLE, &["--json"]].concat();
    let json_error = [
        "sprt", "status", "--penta", "1,2", "--elo0", "0", "--elo1", "2", "--json",
    ];
    for args in [EXAMPLE, &json[..], &json_error[..]] {
        // The reader is gone before the first write (`| head -c0`): no panic, no message, 141.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let (code, stderr) = oracle_into(args, writer.into());
        assert_eq!(code, 141, "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
    }
    // Any other failure to write is an error that names standard output.
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let (code, stderr) = oracle_into(EXAMPLE, full.into());
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(
        stderr.trim(),
        "error: standard output: No space left on device (os error 28)"
    );
}

#[test]
fn a_closed_standard_error_loses_only_the_message() {
    // `2>&1 | head -c0` on a refused command: the message has nowhere to go, the status stays.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let status = Command::new(ORACLE)
        .args([
            "sprt", "status", "--penta", "1,2", "--elo0", "0", "--elo1", "2",
        ])
        .stderr(writer)
        .status()
        .expect("the oracle binary runs");
    assert_eq!(status.code(), Some(2), "{status}");
}
