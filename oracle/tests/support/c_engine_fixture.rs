//! The C engine fixture of `fixtures/c-engine/` (a minimal UCI engine whose Makefile honours
//! `EXE=`), shared by the engine contract's tests and `oracle init`'s: its files, a candidate
//! made from it, and its bench signature measured outside the oracle.

use std::fs;
use std::path::Path;
use std::process::Command;

/// The engine's one source file.
pub const ENGINE: &str = include_str!("../fixtures/c-engine/engine.c");

/// Its Makefile: `make EXE=path` writes the engine there.
pub const MAKEFILE: &str = include_str!("../fixtures/c-engine/Makefile");

/// Four openings for the fixture's matches.
pub const BOOK: &str = "\
rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -
rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq -
rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq -
rnbqkbnr/ppp1pppp/8/3p4/3P4/8/PPP1PPPP/RNBQKBNR w KQkq -
";

/// The fixture with its evaluation weighted differently: another engine, another signature.
pub fn stronger_engine() -> String {
    let stronger = ENGINE.replace(
        "int score = material + 4 * presence;",
        "int score = material + 9 * presence;",
    );
    assert_ne!(stronger, ENGINE, "the fixture's evaluation line moved");
    stronger
}

/// Compiles one source file with the host's `compiler` at `-O2`, outside the oracle.
pub fn compile(compiler: &str, source: &Path, binary: &Path) {
    let status = Command::new(compiler)
        .args(["-O2", "-o"])
        .arg(binary)
        .arg(source)
        .status()
        .unwrap();
    assert!(status.success(), "{compiler} {}", source.display());
}

/// The fixture's bench signature, measured on a build with the host's `cc` (the search, and so
/// the count, does not depend on how it is compiled).
pub fn bench_of(engine: &str) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("engine.c");
    fs::write(&source, engine).unwrap();
    let binary = dir.path().join("tiny");
    compile("cc", &source, &binary);
    let output = Command::new(&binary).arg("bench").output().unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    text.split_whitespace().next().unwrap().parse().unwrap()
}

/// `5089147` as `5,089,147`, as Stockfish's trailers write it.
pub fn grouped(nodes: u64) -> String {
    let digits = nodes.to_string();
    let mut out = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}
