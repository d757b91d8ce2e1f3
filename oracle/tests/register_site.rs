//! `oracle register site`: its exit statuses, and the site it writes opened in a real headless
//! browser (Debian's `chromium`, driven by `chromedriver` over its plain HTTP JSON API).
//!
//! The browser is `$ORACLE_CHROMIUM` or the first of chromium, chromium-browser, google-chrome on
//! `PATH`; the driver `$ORACLE_CHROMEDRIVER`, chromedriver on `PATH` or in `$CHROMEWEBDRIVER`.
//! The browser test skips with a loud message when either is missing, and fails instead under
//! CI (`CI` set), where `.ci/run` installs them. With
//! `ORACLE_SITE_SCREENSHOTS=DIR` it also copies its screenshots there:
//! `ORACLE_SITE_SCREENSHOTS=$PWD/docs cargo test -p oracle --test integration register_site::`
//! refreshes `docs/site-index.png` and `docs/site-entry.png`.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use oracle::governance::entry::Entry;
use oracle::governance::hash::{GitId, Sha256Hex};
use oracle::governance::time_control;
use oracle::governance::timestamp::Timestamp;
use oracle::measurement::{Estimate, MEASUREMENTS_DIR, MeasuredEngine, Measurement, Runner};
use oracle::stats::PentanomialCounts;
use oracle::verify::provenance::this_oracle;
use serde_json::{Value, json};

use crate::support::Run;
use crate::support::register_fixture::{
    BOOK_A, BOOK_B, Repo, chain, constitution_text, oracle_at, sample_entries, write_fixture,
};

/// The Gewinn's commit subject: markup that must reach the page as text, never as markup.
const HOSTILE_SUBJECT: &str =
    "search: <script>alert(\"x\")</script> & <img src=x onerror=alert(1)> LMR";

/// The fixture's `origin`, whose web form commits link to.
const FORGE: &str = "https://github.com/coherent/engine";

/// A git repository with the fixture history, constitution and the five sample entries (genesis,
/// Gewinn, Korrektur, two Abgelehnt), the Gewinn's candidate a commit of its own on top (the
/// Korrektur judged against it); `tampered` turns T-0004's Abgelehnt into a Gewinn after it was
/// chained and adds an unreadable T-0006.
fn fixture(tampered: bool) -> (Repo, String) {
    let repo = Repo::new();
    let constitution = constitution_text();
    let commit = repo
        .git
        .commit(
            &[
                ("constitution/constitution.yaml", constitution.as_str()),
                ("books/book-a.epd", BOOK_A),
                ("books/book-b.epd", BOOK_B),
                ("README", "the engine\n"),
            ],
            HOSTILE_SUBJECT,
        )
        .to_string();
    repo.git
        .repo
        .remote("origin", "git@github.com:coherent/engine.git")
        .unwrap();
    let mut entries = sample_entries();
    let commit_id = GitId::try_from(commit.clone()).unwrap();
    entries[1].candidate.commit = commit_id.clone();
    entries[2].predecessor.as_mut().unwrap().commit = commit_id;
    let dir = repo.path().join("register");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, bytes) in chain(&entries) {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    if tampered {
        let file = dir.join("T-0004.yaml");
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.contains("verdict: abgelehnt\n"));
        std::fs::write(
            &file,
            text.replace("verdict: abgelehnt\n", "verdict: gewinn\n"),
        )
        .unwrap();
        std::fs::write(dir.join("T-0006.yaml"), "id: T-0006\nverdict: [<b>broken\n").unwrap();
    }
    (repo, commit)
}

/// `oracle register site --out OUT ARGS… --repo ROOT`.
fn site(root: &Path, out: &Path, args: &[&str]) -> Run {
    let mut all = vec!["register", "site", "--out", out.to_str().unwrap()];
    all.extend_from_slice(args);
    oracle_at(root, &all)
}

#[test]
fn exit_status_is_0_for_a_sound_register_and_1_for_a_broken_one() {
    let (sound, commit) = fixture(false);
    let out = sound.path().join("public/site");
    let output = site(sound.path(), &out, &[]);
    assert_eq!(output.code, 0, "{}", output.stderr);
    assert!(output.stdout.contains("n=5"), "{}", output.stdout);
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(index.contains("data-verified=\"true\""));
    // The subject is text on the page: escaped, no element of its own.
    assert!(
        index.contains("search: &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;img"),
        "{index}"
    );
    assert!(!index.contains("<script") && !index.contains("<img"));
    assert!(index.contains(&format!("href=\"{FORGE}/commit/{commit}\"")));

    let (broken, _) = fixture(true);
    let out = broken.path().join("site");
    let output = site(broken.path(), &out, &["--json"]);
    assert_eq!(output.code, 1, "{}", output.stderr);
    let report: Value = serde_json::from_str(&output.stdout).unwrap();
    assert_eq!((&report["ok"], &report["n"]), (&json!(false), &json!(6)));
    let files: BTreeSet<&str> = report["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|finding| finding["file"].as_str().unwrap())
        .collect();
    assert_eq!(
        files,
        BTreeSet::from(["T-0004.yaml", "T-0005.yaml", "T-0006.yaml"])
    );
    let page = std::fs::read_to_string(out.join("T-0004.html")).unwrap();
    assert!(
        page.contains("Fails verification") && page.contains("does not follow from the evidence")
    );
    let unreadable = std::fs::read_to_string(out.join("T-0006.html")).unwrap();
    assert!(unreadable.contains("Cannot be read") && unreadable.contains("[&lt;b&gt;broken"));
}

#[test]
fn bad_arguments_exit_2_and_leave_out_untouched() {
    let (repo, _) = fixture(false);
    let missing_out = oracle_at(repo.path(), &["register", "site"]);
    assert_eq!(missing_out.code, 2);
    assert!(missing_out.stderr.contains("--out"));

    let plain = tempfile::tempdir().unwrap();
    write_fixture(plain.path());
    let output = site(plain.path(), &plain.path().join("site"), &[]);
    assert_eq!(output.code, 2);
    assert!(
        output.stderr.contains("not a git repository"),
        "{}",
        output.stderr
    );
    assert!(!plain.path().join("site").exists());

    // Under a regular file nothing can be created, even by root.
    let file = repo.path().join("constitution/constitution.yaml");
    let output = site(repo.path(), &file.join("site"), &[]);
    assert_eq!(output.code, 2);
    assert!(output.stderr.contains("--out"), "{}", output.stderr);

    let foreign = repo.path().join("notes");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("todo.txt"), "keep me").unwrap();
    let output = site(repo.path(), &foreign, &[]);
    assert_eq!(output.code, 2);
    assert!(output.stderr.contains("not a site"), "{}", output.stderr);
    assert_eq!(
        std::fs::read_to_string(foreign.join("todo.txt")).unwrap(),
        "keep me"
    );

    let output = site(
        repo.path(),
        &repo.path().join("site"),
        &["--base-url", "javascript:alert(1)"],
    );
    assert_eq!(output.code, 2);
    assert!(output.stderr.contains("--base-url"), "{}", output.stderr);
    assert!(!repo.path().join("site").exists());
}

/// The games of a measurement of T-0002 against T-0001 whose pairs end, in order, as `pairs`
/// (T-0002's results in game 1, where it has White, and game 2), one move each.
fn measurement_games(pairs: &[(&str, &str)]) -> String {
    let points = |result: &str, white: bool| match (result, white) {
        ("W", true) | ("L", false) => "1-0",
        ("D", _) => "1/2-1/2",
        _ => "0-1",
    };
    let mut pgn = String::new();
    for (index, (first, second)) in pairs.iter().enumerate() {
        for (number, (white, black, result)) in [
            ("T-0002", "T-0001", points(first, true)),
            ("T-0001", "T-0002", points(second, false)),
        ]
        .into_iter()
        .enumerate()
        {
            pgn.push_str(&format!(
                "[Round \"{}.{}\"]\n[White \"{white}\"]\n[Black \"{black}\"]\n[Result \"{result}\"]\n[TimeControl \"1+0.01\"]\n\n1. e4 {result}\n\n",
                index + 1,
                number + 1
            ));
        }
    }
    pgn
}

/// The pairs of the sound measurement: pentanomial [1, 3, 8, 5, 3], W-D-L 15-16-9.
const MEASURED_PAIRS: [(&str, &str); 20] = [
    ("L", "L"),
    ("L", "D"),
    ("D", "L"),
    ("L", "D"),
    ("D", "D"),
    ("D", "D"),
    ("D", "D"),
    ("D", "D"),
    ("W", "L"),
    ("L", "W"),
    ("W", "L"),
    ("L", "W"),
    ("W", "D"),
    ("D", "W"),
    ("W", "D"),
    ("W", "D"),
    ("D", "W"),
    ("W", "W"),
    ("W", "W"),
    ("W", "W"),
];

/// A sound measurement of the fixture's T-0002 against its genesis, with its games, in
/// `measurements/`; returns the file.
fn write_measurement(root: &Path) -> PathBuf {
    let engine = |id: &str| {
        let bytes = std::fs::read(root.join("register").join(format!("{id}.yaml"))).unwrap();
        MeasuredEngine::of(&Entry::parse(&bytes).unwrap()).unwrap()
    };
    let pentanomial = PentanomialCounts([1, 3, 8, 5, 3]);
    let (nelo, nelo_ci95) = match Estimate::of(&pentanomial) {
        Estimate::Interval { nelo, ci95 } => (nelo, ci95),
        other => panic!("{other:?}"),
    };
    let measurement = Measurement {
        measured: engine("T-0002"),
        baseline: engine("T-0001"),
        tc: time_control::parse("1+0.01").unwrap(),
        book: "books/book-a.epd".into(),
        book_sha256: Sha256Hex::of(BOOK_A.as_bytes()),
        seed: 0,
        games: 40,
        wins: 3 * 2 + 5 + 4,
        draws: 3 + 4 * 2 + 5,
        losses: 2 + 3 + 4,
        pentanomial,
        nelo: Some(nelo),
        nelo_ci95: Some(nelo_ci95),
        nelo_at_least: None,
        nelo_at_most: None,
        runner: Runner::OracleMatch,
        oracle: this_oracle(),
        date: Timestamp::from_unix(1_796_000_000),
        pgn_sha256: Sha256Hex::of(measurement_games(&MEASURED_PAIRS).as_bytes()),
    };
    let dir = root.join(MEASUREMENTS_DIR);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(measurement.file_name());
    std::fs::write(&file, measurement.to_yaml(&file).unwrap()).unwrap();
    std::fs::write(
        file.with_extension("pgn"),
        measurement_games(&MEASURED_PAIRS),
    )
    .unwrap();
    file
}

#[test]
fn a_measurement_is_drawn_beside_the_claimed_line() {
    let (repo, _) = fixture(false);
    let file = write_measurement(repo.path());
    // measurements/ is outside the hash chain: the register still verifies.
    let verify = oracle_at(repo.path(), &["register", "verify"]);
    assert_eq!(verify.code, 0, "{}{}", verify.stdout, verify.stderr);

    let out = repo.path().join("site");
    let output = site(repo.path(), &out, &[]);
    assert_eq!(output.code, 0, "{}", output.stderr);
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(index.contains("claimed: sum of SPRT estimates"), "{index}");
    assert!(index.contains("measured: fixed-length match vs T-0001"));
    assert!(index.contains(r#"class="marker diamond""#));
    assert!(index.contains("T-0002 vs T-0001: +"));
    assert!(index.contains("1+0.01, 40 games (+15 =16 -9), oracle match"));

    // A count that disagrees with the others: exit 2, the file and the field named, no site.
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace("games: 40\n", "games: 42\n")).unwrap();
    let broken = repo.path().join("broken-site");
    let output = site(repo.path(), &broken, &[]);
    assert_eq!(output.code, 2, "{}{}", output.stdout, output.stderr);
    let name = file.file_name().unwrap().to_str().unwrap();
    assert!(
        output.stderr.contains(&format!("measurements/{name}"))
            && output.stderr.contains("field `games`"),
        "{}",
        output.stderr
    );
    assert!(!broken.exists());

    // Round seven: counts that agree with each other but not with the games beside them. The
    // games are changed (one pair lost twice instead of won twice) and the digest with them.
    std::fs::write(&file, &text).unwrap();
    let mut other_pairs = MEASURED_PAIRS;
    other_pairs[19] = ("L", "L");
    let other_games = measurement_games(&other_pairs);
    std::fs::write(file.with_extension("pgn"), &other_games).unwrap();
    let digest = Sha256Hex::of(measurement_games(&MEASURED_PAIRS).as_bytes()).to_string();
    let other_digest = Sha256Hex::of(other_games.as_bytes()).to_string();
    let output = site(repo.path(), &broken, &[]);
    assert_eq!(output.code, 2, "{}{}", output.stdout, output.stderr);
    assert!(
        output.stderr.contains("field `pgn_sha256`"),
        "{}",
        output.stderr
    );
    std::fs::write(&file, text.replace(&digest, &other_digest)).unwrap();
    let output = site(repo.path(), &broken, &[]);
    assert_eq!(output.code, 2, "{}{}", output.stdout, output.stderr);
    assert!(
        output.stderr.contains("field `pentanomial`")
            && output.stderr.contains("its games give [2, 3, 8, 5, 2]"),
        "{}",
        output.stderr
    );
    std::fs::remove_file(file.with_extension("pgn")).unwrap();
    let output = site(repo.path(), &broken, &[]);
    assert_eq!(output.code, 2, "{}{}", output.stdout, output.stderr);
    assert!(
        output.stderr.contains("no games beside it"),
        "{}",
        output.stderr
    );
    assert!(!broken.exists());
    std::fs::write(
        file.with_extension("pgn"),
        measurement_games(&MEASURED_PAIRS),
    )
    .unwrap();

    // A field of the wrong form, and a baseline the register records otherwise.
    std::fs::write(
        &file,
        text.replace("pgn_sha256: ", "pgn_sha256: \"not a digest\"\nx: "),
    )
    .unwrap();
    let output = site(repo.path(), &broken, &["--json"]);
    assert_eq!(output.code, 2);
    assert!(output.stdout.contains("pgn_sha256"), "{}", output.stdout);
    let genesis_sha = engine_sha(repo.path(), "T-0001");
    std::fs::write(&file, text.replacen(&genesis_sha, &"0".repeat(64), 1)).unwrap();
    let output = site(repo.path(), &broken, &[]);
    assert_eq!(output.code, 2);
    assert!(
        output.stderr.contains("field `baseline.binary_sha256`"),
        "{}",
        output.stderr
    );
}

/// The candidate binary sha256 entry `id` of the register at `root` records.
fn engine_sha(root: &Path, id: &str) -> String {
    let bytes = std::fs::read(root.join("register").join(format!("{id}.yaml"))).unwrap();
    Entry::parse(&bytes)
        .unwrap()
        .candidate
        .binary_sha256
        .to_string()
}

#[test]
fn the_site_works_in_a_real_browser() {
    let Some(driver) = Driver::start() else {
        return;
    };
    let (repo, _) = fixture(true);
    let out = repo.path().join("site");
    let output = site(
        repo.path(),
        &out,
        &["--base-url", "https://coherent.example/register"],
    );
    assert_eq!(output.code, 1, "{}", output.stderr);
    let out = out.canonicalize().unwrap();

    // Crawl every page reachable from the index; each must load without a console error and
    // every link must resolve to a file of the site (with its anchor) or to the forge.
    let mut queue = vec![out.join("index.html")];
    let mut visited = BTreeSet::new();
    let mut anchors: BTreeMap<PathBuf, BTreeSet<String>> = BTreeMap::new();
    let mut wanted: Vec<(PathBuf, String, PathBuf)> = Vec::new();
    while let Some(page) = queue.pop() {
        if !visited.insert(page.clone()) {
            continue;
        }
        driver.open(&page);
        let errors: Vec<Value> = driver
            .logs()
            .into_iter()
            .filter(|entry| entry["level"] == "SEVERE")
            .collect();
        assert!(errors.is_empty(), "{}: {errors:?}", page.display());
        assert_eq!(
            driver.script("return document.scripts.length"),
            json!(0),
            "{}: the site has no scripts",
            page.display()
        );
        let ids = driver.script("return Array.from(document.querySelectorAll('[id]'), e => e.id)");
        anchors.insert(
            page.clone(),
            strings(&ids).into_iter().collect::<BTreeSet<_>>(),
        );
        let links = driver.script(
            "return Array.from(document.querySelectorAll('[href],[src]'), e => e.href || e.src)",
        );
        for link in strings(&links) {
            if let Some(local) = link.strip_prefix("file://") {
                let (path, fragment) = local.split_once('#').unwrap_or((local, ""));
                let target = PathBuf::from(path);
                assert!(target.is_file(), "{}: broken link {link}", page.display());
                assert!(
                    target.starts_with(&out),
                    "{}: link out of the site {link}",
                    page.display()
                );
                if !fragment.is_empty() {
                    wanted.push((target.clone(), fragment.to_owned(), page.clone()));
                }
                if target.extension().is_some_and(|ext| ext == "html") {
                    queue.push(target);
                }
            } else {
                let known = link.starts_with(FORGE)
                    || link.starts_with("https://coherent.example/register/")
                    || link == "data:,";
                assert!(known, "{}: unexpected link {link}", page.display());
            }
        }
    }
    for (target, fragment, from) in wanted {
        assert!(
            anchors[&target].contains(&fragment),
            "{}: no #{fragment} in {}",
            from.display(),
            target.display()
        );
    }
    let pages: BTreeSet<String> = visited
        .iter()
        .map(|page| page.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    let expected: BTreeSet<String> = [
        "index", "T-0001", "T-0002", "T-0003", "T-0004", "T-0005", "T-0006",
    ]
    .iter()
    .map(|name| format!("{name}.html"))
    .collect();
    assert_eq!(pages, expected);

    // The index: every entry newest first, the tampered ones marked, the subject as text.
    driver.open(&out.join("index.html"));
    let rows = driver.script(
        "return Array.from(document.querySelectorAll('tr[data-entry]'), r => [r.dataset.entry, r.dataset.verified])",
    );
    assert_eq!(
        rows,
        json!([
            ["T-0006", "false"],
            ["T-0005", "false"],
            ["T-0004", "false"],
            ["T-0003", "true"],
            ["T-0002", "true"],
            ["T-0001", "true"]
        ])
    );
    assert_eq!(
        driver.script("return document.getElementById('status').dataset.verified"),
        json!("false")
    );
    assert_eq!(
        driver.script("return document.querySelector('#row-T-0002 .subject').textContent"),
        json!(HOSTILE_SUBJECT)
    );
    assert_nonzero(&driver, "svg.progress", 1);
    let index_png = driver.screenshot_page(1280);

    // An entry page: one figure per stage, drawn with a real size.
    driver.open(&out.join("T-0002.html"));
    assert_nonzero(&driver, "figure.chart svg", 2);
    assert_eq!(
        driver.script(
            "return document.querySelector('pre.yaml').textContent.startsWith('id: T-0002')"
        ),
        json!(true)
    );
    let entry_png = driver.screenshot_page(1000);

    driver.open(&out.join("T-0004.html"));
    assert_eq!(
        driver.script("return document.querySelector('h1').dataset.verified"),
        json!("false")
    );
    let problems = driver.script("return document.getElementById('problems').textContent");
    assert!(
        problems
            .as_str()
            .unwrap()
            .contains("does not follow from the evidence"),
        "{problems}"
    );

    if let Some(dir) = std::env::var_os("ORACLE_SITE_SCREENSHOTS") {
        let dir = PathBuf::from(dir);
        std::fs::write(dir.join("site-index.png"), &index_png).unwrap();
        std::fs::write(dir.join("site-entry.png"), &entry_png).unwrap();
    }
}

/// Asserts that `count` elements match `selector` and each is laid out with a non-zero size.
fn assert_nonzero(driver: &Driver, selector: &str, count: usize) {
    let sizes = driver.script(&format!(
        "return Array.from(document.querySelectorAll('{selector}'), e => {{ const r = e.getBoundingClientRect(); return [r.width, r.height]; }})"
    ));
    let sizes = sizes.as_array().unwrap();
    assert_eq!(sizes.len(), count, "{selector}: {sizes:?}");
    for size in sizes {
        assert!(
            size[0].as_f64().unwrap() > 50.0 && size[1].as_f64().unwrap() > 50.0,
            "{selector}: {size}"
        );
    }
}

/// The strings of a JSON array.
fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item.as_str().unwrap().to_owned())
        .collect()
}

/// A chromedriver process with one headless chromium session.
struct Driver {
    process: Child,
    port: u16,
    session: String,
}

impl Driver {
    /// Starts chromedriver and a session, or explains loudly why the browser test is skipped
    /// (and fails under CI, which installs both).
    fn start() -> Option<Self> {
        let chromium = program(
            "ORACLE_CHROMIUM",
            &["chromium", "chromium-browser", "google-chrome"],
        );
        // GitHub's runner images keep their driver in $CHROMEWEBDRIVER.
        let chromedriver = program("ORACLE_CHROMEDRIVER", &["chromedriver"]).or_else(|| {
            std::env::var_os("CHROMEWEBDRIVER")
                .map(|dir| PathBuf::from(dir).join("chromedriver"))
                .filter(|path| path.is_file())
        });
        let (Some(chromium), Some(chromedriver)) = (chromium, chromedriver) else {
            let message = "chromium and chromedriver are needed for the browser test of the \
                           register site (apt-get install chromium chromium-driver)";
            assert!(std::env::var_os("CI").is_none(), "{message}");
            // Written to the stream itself: the test harness captures `eprintln!`.
            let _ = writeln!(
                std::io::stderr(),
                "\n*** SKIPPED the_site_works_in_a_real_browser: {message} ***\n"
            );
            return None;
        };
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let process = Command::new(&chromedriver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut driver = Self {
            process,
            port,
            session: String::new(),
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "chromedriver did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
        let created = driver.call(
            "POST",
            "/session",
            &json!({ "capabilities": { "alwaysMatch": {
                "goog:chromeOptions": {
                    "binary": chromium,
                    // Tests run as root in CI containers, where chromium refuses to start
                    // with its sandbox: --no-sandbox is required there.
                    "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                             "--disable-dev-shm-usage", "--hide-scrollbars",
                             "--force-color-profile=srgb", "--window-size=1280,900"]
                },
                "goog:loggingPrefs": { "browser": "ALL" }
            }}}),
        );
        driver.session = created["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no chromium session: {created}"))
            .to_owned();
        Some(driver)
    }

    /// One WebDriver command; returns its `value`.
    fn call(&self, method: &str, path: &str, body: &Value) -> Value {
        let body = if method == "GET" || method == "DELETE" {
            String::new()
        } else {
            body.to_string()
        };
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(120)))
            .unwrap();
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.port,
            body.len()
        )
        .unwrap();
        // chromedriver keeps the connection open: read exactly Content-Length bytes.
        let mut reader = BufReader::new(stream);
        let mut length = 0;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap();
            }
        }
        let mut payload = vec![0; length];
        reader.read_exact(&mut payload).unwrap();
        let reply: Value = serde_json::from_slice(&payload).unwrap();
        assert!(
            reply["value"]["error"].is_null(),
            "{method} {path}: {reply}"
        );
        reply["value"].clone()
    }

    /// A session command.
    fn session_call(&self, method: &str, path: &str, body: &Value) -> Value {
        self.call(method, &format!("/session/{}{path}", self.session), body)
    }

    /// Loads a local file.
    fn open(&self, file: &Path) {
        self.session_call(
            "POST",
            "/url",
            &json!({ "url": format!("file://{}", file.display()) }),
        );
    }

    /// Runs `script` in the page and returns its result.
    fn script(&self, script: &str) -> Value {
        self.session_call(
            "POST",
            "/execute/sync",
            &json!({ "script": script, "args": [] }),
        )
    }

    /// The browser log since the last call (console messages and failed loads).
    fn logs(&self) -> Vec<Value> {
        self.session_call("POST", "/se/log", &json!({ "type": "browser" }))
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// A PNG of the whole page at `width` pixels.
    fn screenshot_page(&self, width: u64) -> Vec<u8> {
        self.session_call(
            "POST",
            "/window/rect",
            &json!({ "width": width, "height": 900 }),
        );
        let height = self
            .script("return document.documentElement.scrollHeight")
            .as_u64()
            .unwrap();
        self.session_call(
            "POST",
            "/window/rect",
            &json!({ "width": width, "height": height + 20 }),
        );
        let encoded = self.session_call("GET", "/screenshot", &Value::Null);
        let png = base64_decode(encoded.as_str().unwrap());
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 10_000);
        png
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.call(
                    "DELETE",
                    &format!("/session/{}", self.session),
                    &Value::Null,
                )
            }));
        }
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

/// The program named by environment variable `variable`, else the first of `names` on `PATH`.
fn program(variable: &str, names: &[&str]) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(variable) {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    names.iter().find_map(|name| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|candidate| candidate.is_file())
    })
}

/// Decodes standard base64 (as WebDriver returns screenshots).
fn base64_decode(text: &str) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(text.len() / 4 * 3);
    let (mut buffer, mut bits) = (0_u32, 0);
    for c in text
        .bytes()
        .filter(|&c| c != b'=' && !c.is_ascii_whitespace())
    {
        let value = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("not base64: {c}"),
        };
        buffer = (buffer << 6) | u32::from(value);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            bytes.push((buffer >> bits) as u8);
        }
    }
    bytes
}
