//! `oracle tune model` through the real binary: JSON shape, determinism, bad input.

use crate::support::oracle;

#[test]
fn json_has_the_issue_shape_and_is_deterministic() {
    let args = [
        "tune", "model", "--s", "1.0", "--f", "0,0.9", "--reps", "24", "--seed", "3", "--json",
    ];
    let out = oracle(&args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for (row, f) in rows.iter().zip([0.0, 0.9]) {
        assert_eq!(row["s"], 1.0);
        assert_eq!(row["f"], f);
        assert!(row["available"].as_f64().unwrap() > 0.0);
        for rule in ["filter", "seed_mean", "seed_mean_t1"] {
            let r = &row["rules"][rule];
            assert!(r["gain"].is_f64() && r["gain_se"].as_f64().unwrap() > 0.0);
            let share = r["loss_fraction"].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&share));
        }
    }
    let again: serde_json::Value = serde_json::from_str(&oracle(&args).stdout).unwrap();
    assert_eq!(v["rows"], again["rows"]);
}

#[test]
fn rejects_a_share_outside_zero_one() {
    let out = oracle(&["tune", "model", "--f", "1.5"]);
    assert_eq!(out.code, 2);
    let err = &out.stderr;
    assert!(err.contains("--f"), "{err}");
}
