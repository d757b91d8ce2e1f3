//! `oracle build` on fixture repositories: bit-identical rebuilds, the cache, "not
//! reproducible", refused trees and the sandbox (network, writes outside the build dir).

use std::path::PathBuf;

use crate::support::constitution_fixture::{QUICK_RECIPE, cargo_recipe};
use crate::support::fixture_repo::{self, FixtureRepo, shared_cache};
use crate::support::{Run, oracle};
use oracle::builder::Isolation;

const HELLO: &str = "fn main() {\n    println!(\"hello {}\", 6 * 7);\n}\n";

/// `oracle build`'s recipe file with the end-to-end tests' cheaper profile (no LTO): these tests
/// are about the mechanics of reproducibility, the gate tests build with the standard recipe.
fn recipe_file() -> PathBuf {
    // Written each time (the same bytes, renamed into place): a cache kept from a run with
    // another recipe never holds a stale file.
    let path = shared_cache().join("quick-recipe.yaml");
    let staging = shared_cache().join(format!(
        "quick-recipe.{}.{:?}.tmp",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::write(&staging, cargo_recipe(QUICK_RECIPE, false)).unwrap();
    std::fs::rename(&staging, &path).unwrap();
    path
}

fn quick_build(repo: &FixtureRepo, commit: &str) -> Run {
    fixture_repo::build_in(repo, commit, shared_cache(), Some(&recipe_file()))
}

#[test]
fn two_commits_each_build_bit_identically_and_the_second_request_is_cached() {
    let repo = FixtureRepo::new();
    let first = repo.commit_crate(HELLO, None, "first");
    let second = repo.commit_crate(&HELLO.replace("6 * 7", "6 * 9"), None, "second");

    let mut hashes = Vec::new();
    for commit in [first, second] {
        let run = quick_build(&repo, &commit.to_string());
        assert_eq!(run.code, 0, "{run:?}");
        let json = run.json();
        assert_eq!(json["commit"], commit.to_string());
        assert_eq!(json["reproduced"], true);
        assert_eq!(json["cached"], false);
        assert!(
            json["toolchain"]
                .as_str()
                .unwrap()
                .starts_with("rustc 1.95.0"),
            "{json}"
        );
        let sha = json["sha256"].as_str().unwrap().to_owned();
        let binary = PathBuf::from(json["binary"].as_str().unwrap());
        let bytes = std::fs::read(&binary).unwrap();
        assert_eq!(oracle::integrity::sha256_hex(&bytes), sha);
        let output = std::process::Command::new(&binary).output().unwrap();
        assert!(String::from_utf8_lossy(&output.stdout).starts_with("hello"));
        hashes.push((json["recipe_sha256"].clone(), sha));
    }
    assert_eq!(hashes[0].0, hashes[1].0, "same recipe");
    assert_ne!(
        hashes[0].1, hashes[1].1,
        "different sources, different binaries"
    );

    // By short id (unambiguous in a two-commit repository): the cache answers.
    let short = &second.to_string()[..10];
    let run = quick_build(&repo, short);
    assert_eq!(run.code, 0, "{run:?}");
    let json = run.json();
    assert_eq!(json["cached"], true);
    assert_eq!(
        json["commit"],
        second.to_string(),
        "short ids resolve to the full id"
    );
    assert_eq!(json["sha256"].as_str().unwrap(), hashes[1].1);
}

#[test]
fn a_build_script_that_embeds_the_build_time_is_not_reproducible() {
    let repo = FixtureRepo::new();
    let script = r#"use std::time::{SystemTime, UNIX_EPOCH};
fn main() {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos();
    let out = std::env::var("OUT_DIR").unwrap();
    std::fs::write(format!("{out}/stamp.rs"), format!("const BUILT: &str = \"{now}\";")).unwrap();
}
"#;
    let main = "include!(concat!(env!(\"OUT_DIR\"), \"/stamp.rs\"));\nfn main() {\n    println!(\"built {BUILT}\");\n}\n";
    let commit = repo.commit_crate(main, Some(script), "stamp the build time");
    let run = quick_build(&repo, &commit.to_string());
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("not reproducible"), "{run:?}");
    let json = run.json();
    assert_eq!(json["reproduced"], false);
    let sections: Vec<&str> = json["differing_sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|name| name.as_str().unwrap())
        .collect();
    assert!(sections.contains(&".rodata"), "{sections:?}");
    assert!(
        run.stderr.contains(".rodata"),
        "the message names the sections: {}",
        run.stderr
    );
}

#[test]
fn a_build_script_cannot_reach_the_network() {
    let repo = FixtureRepo::new();
    let script = r#"use std::net::{SocketAddr, TcpStream};
use std::time::Duration;
fn main() {
    let address: SocketAddr = "192.0.2.1:80".parse().unwrap();
    match TcpStream::connect_timeout(&address, Duration::from_secs(2)) {
        Ok(_) => println!("cargo:warning=connected"),
        Err(error) => panic!("network attempt failed: {error}"),
    }
}
"#;
    let commit = repo.commit_crate(HELLO, Some(script), "phone home");
    let run = quick_build(&repo, &commit.to_string());
    if Isolation::detect().cuts_network() {
        assert_eq!(run.code, 1, "{run:?}");
        assert!(run.stderr.contains("build failed"), "{run:?}");
        assert!(run.stderr.contains("network attempt failed"), "{run:?}");
        assert!(
            run.stderr.contains("unreachable"),
            "the sandbox has no route: {run:?}"
        );
    } else {
        // No namespace tool on this machine: the address is unroutable (TEST-NET-1) anyway,
        // and the oracle must say that it builds without isolation.
        assert!(run.stderr.contains("no namespace isolation"), "{run:?}");
    }
}

#[test]
fn a_build_script_cannot_write_outside_its_build_dirs() {
    let repo = FixtureRepo::new();
    let target = std::env::temp_dir().join(format!("coherent-escape-{}", std::process::id()));
    let script = format!(
        r#"fn main() {{
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").unwrap();
    for path in [format!("{{manifest_dir}}/planted.rs"), "{}".to_owned()] {{
        if let Err(error) = std::fs::write(&path, "escaped") {{
            panic!("write to {{path}} refused: {{error}}");
        }}
    }}
}}
"#,
        target.display()
    );
    let commit = repo.commit_crate(HELLO, Some(&script), "write outside");
    let run = quick_build(&repo, &commit.to_string());
    if Isolation::detect().confines_writes() {
        assert_eq!(run.code, 1, "{run:?}");
        assert!(run.stderr.contains("build failed"), "{run:?}");
        assert!(run.stderr.contains("planted.rs refused"), "{run:?}");
        assert!(!target.exists(), "nothing escaped to {}", target.display());
    } else {
        assert!(run.stderr.contains("bubblewrap is not usable"), "{run:?}");
        let _ = std::fs::remove_file(&target);
    }
}

/// Issue 46: the build sandbox showed the host's `/` read-only, so a candidate could compile a
/// world-readable host file into the binary that the run copies to `--out` and CI publishes.
#[test]
fn a_build_cannot_compile_a_host_file_into_the_binary() {
    let repo = FixtureRepo::new();
    let secret = std::env::temp_dir().join(format!("coherent-host-file-{}", std::process::id()));
    std::fs::write(&secret, "host data").unwrap();
    let main = format!(
        "const HOST: &str = include_str!(\"{}\");\nfn main() {{\n    println!(\"{{HOST}}\");\n}}\n",
        secret.display()
    );
    let commit = repo.commit_crate(&main, None, "include a host file");
    let run = quick_build(&repo, &commit.to_string());
    let _ = std::fs::remove_file(&secret);
    if Isolation::detect().confines_writes() {
        assert_eq!(run.code, 1, "{run:?}");
        assert!(run.stderr.contains("build failed"), "{run:?}");
        assert!(
            run.stderr.contains("coherent-host-file"),
            "the log names the file it could not read: {run:?}"
        );
    } else {
        assert!(run.stderr.contains("bubblewrap is not usable"), "{run:?}");
    }
}

#[test]
fn a_build_cannot_compile_a_program_installed_on_the_host() {
    // Debian installs its chess engines in /usr/games; /usr/local holds programs installed by
    // hand. A candidate that compiled one in could write it to /tmp and play its moves.
    let installed = ["/usr/games", "/usr/local/bin"]
        .iter()
        .filter_map(|dir| std::fs::read_dir(dir).ok())
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.is_file())
        .min_by_key(|path| path.metadata().map(|m| m.len()).unwrap_or(u64::MAX));
    let Some(program) = installed else {
        eprintln!("SKIPPED: nothing is installed in /usr/games or /usr/local/bin here");
        return;
    };
    let repo = FixtureRepo::new();
    let main = format!(
        "const HOST: &[u8] = include_bytes!(\"{}\");\nfn main() {{\n    println!(\"{{}}\", HOST.len());\n}}\n",
        program.display()
    );
    let commit = repo.commit_crate(&main, None, "include a program of the host");
    let run = quick_build(&repo, &commit.to_string());
    if Isolation::detect().confines_writes() {
        assert_eq!(run.code, 1, "{run:?}");
        assert!(run.stderr.contains("build failed"), "{run:?}");
        assert!(
            run.stderr.contains(&program.display().to_string()),
            "the log names the file it could not read: {run:?}"
        );
    } else {
        assert!(run.stderr.contains("bubblewrap is not usable"), "{run:?}");
    }
}

#[test]
fn refused_trees_and_bad_revisions() {
    let repo = FixtureRepo::new();
    let commit = repo.commit(
        &[
            ("Cargo.toml", fixture_repo::MANIFEST),
            ("Cargo.lock", fixture_repo::LOCK),
            ("src/main.rs", HELLO),
            (
                ".cargo/config.toml",
                "[build]\nrustflags = [\"-Ctarget-cpu=native\"]\n",
            ),
        ],
        "own build flags",
    );
    let run = quick_build(&repo, &commit.to_string());
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains(".cargo/config.toml"), "{run:?}");
    assert!(
        run.stderr.contains("owns the build configuration"),
        "{run:?}"
    );

    // Under --json the error is the JSON object on stdout (docs/cli.md).
    let run = quick_build(&repo, "no-such-branch");
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stdout
            .contains("`no-such-branch` does not name a commit"),
        "{run:?}"
    );

    let elsewhere = tempfile::tempdir().unwrap();
    let run = oracle(&[
        "build",
        "HEAD",
        "--repo",
        elsewhere.path().to_str().unwrap(),
    ]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("cannot open git repository"), "{run:?}");

    let bad_recipe = elsewhere.path().join("recipe.yaml");
    std::fs::write(
        &bad_recipe,
        cargo_recipe(QUICK_RECIPE, false).replace("target_cpu", "target_cpus"),
    )
    .unwrap();
    let run = oracle(&[
        "build",
        "HEAD",
        "--repo",
        repo.path().to_str().unwrap(),
        "--recipe",
        bad_recipe.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("target_cpus"),
        "the unknown field is named: {run:?}"
    );
}

/// Issue 46: an object of some 80 KB that inflates to 80 MiB is refused by the size in its header (the
/// oracle used to inflate every blob whole into its memory, outside any sandbox).
#[test]
fn a_blob_past_the_file_bound_is_refused_before_it_is_inflated() {
    let repo = FixtureRepo::new();
    let zeros = "0".repeat(80 << 20);
    let commit = repo.commit(
        &[
            ("Cargo.toml", fixture_repo::MANIFEST),
            ("Cargo.lock", fixture_repo::LOCK),
            ("src/main.rs", HELLO),
            ("src/net.bin", &zeros),
        ],
        "a network of zeros",
    );
    let run = quick_build(&repo, &commit.to_string());
    assert_eq!(run.code, 1, "{run:?}");
    let size = (80u64 << 20).to_string();
    assert!(
        run.stderr.contains("src/net.bin") && run.stderr.contains(&size),
        "names the path and the size: {run:?}"
    );
}

#[test]
fn an_ambiguous_short_id_is_refused() {
    // Blobs are objects too: write blobs until two ids share a 4-digit prefix.
    let repo = FixtureRepo::new();
    repo.commit_crate(HELLO, None, "base");
    let mut seen = std::collections::HashMap::new();
    let prefix = (0u32..)
        .find_map(|n| {
            let id = repo
                .repo
                .blob(format!("blob {n}").as_bytes())
                .unwrap()
                .to_string();
            seen.insert(id[..4].to_owned(), n)
                .map(|_| id[..4].to_owned())
        })
        .unwrap();
    let run = quick_build(&repo, &prefix);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stdout.contains("is ambiguous"), "{run:?}");
    assert!(
        run.stdout.contains("full 40-character commit id"),
        "{run:?}"
    );
}
