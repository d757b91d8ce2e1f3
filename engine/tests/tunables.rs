//! The tunables table as the outside sees it: listing format and its effect on search.

mod common;

use common::{Engine, bench_in_session, run};

#[test]
fn listing_is_fishtest_spsa_format() {
    let out = run(&["tunables"]);
    let lines: Vec<&str> = out.lines().collect();
    assert!((30..=90).contains(&lines.len()), "{} tunables", lines.len());
    for line in lines {
        let f: Vec<&str> = line.split(", ").collect();
        assert_eq!(f.len(), 7, "{line}");
        assert_eq!(f[1], "int", "{line}");
        let (v, lo, hi): (i32, i32, i32) = (
            f[2].parse().unwrap(),
            f[3].parse().unwrap(),
            f[4].parse().unwrap(),
        );
        assert!(lo <= v && v <= hi, "{line}");
        assert!(
            f[5].parse::<f64>().unwrap() > 0.0 && f[6].parse::<f64>().unwrap() > 0.0,
            "{line}"
        );
    }
}

#[test]
fn setting_a_tunable_changes_search() {
    // The default moves with every tuning, so it is read from the listing, not written here.
    let default_value = run(&["tunables"])
        .lines()
        .find_map(|l| l.strip_prefix("rfp_margin, int, "))
        .and_then(|rest| rest.split(", ").next())
        .expect("rfp_margin is listed")
        .to_string();
    assert_ne!(default_value, "140", "the test moves rfp_margin to 140");
    let mut e = Engine::start();
    let default = bench_in_session(&mut e, 6);
    e.send("setoption name rfp_margin value 140");
    e.send("tunables");
    let listing = e.read_until("rfp_margin");
    assert_eq!(
        listing.last().unwrap(),
        "rfp_margin, int, 140, 30, 160, 8, 0.002"
    );
    let changed = bench_in_session(&mut e, 6);
    assert_ne!(default, changed, "rfp_margin must reach the search");
    e.send(&format!("setoption name rfp_margin value {default_value}"));
    let back = bench_in_session(&mut e, 6);
    assert_eq!(default, back, "restoring the default restores the count");
    e.send("setoption name no_such_knob value 3");
    e.read_until("info string error");
    e.quit();
}
