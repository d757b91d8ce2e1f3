//! The engine's tuned tables as Rust source: the writer behind `texel tune --out/--apply` and
//! the reader that parses them back from the engine. Both walk one layout (`ITEMS`), so the text
//! the tool writes and the weights it reads back cannot drift apart.

use std::path::{Path, PathBuf};

use super::{
    BACKWARD, BISHOP_PAIR, BISHOP_PAWNS, CONNECTED, DOUBLED, HANGING, ISOLATED, KING_PAWN_DISTANCE,
    KNIGHT_ON_QUEEN, KNIGHT_PAWNS, LONG_DIAGONAL_BISHOP, MINOR_BEHIND_PAWN, MINOR_KING_DISTANCE,
    MOB, MOB_LEN, MOB_OFFSET, NF, OUTPOST_BISHOP, OUTPOST_KNIGHT, PASSED, PASSED_BLOCKED,
    PASSED_FREE_PATH, PASSED_KING_OWN, PASSED_KING_THEIRS, PASSED_SAFE_PUSH, PAWN_PUSH_THREAT,
    PAWN_STORM, PHALANX, PSQT, REACHABLE_OUTPOST, RESTRICTED, ROOK_ON_QUEEN_FILE, ROOK_ON_SEVENTH,
    ROOK_OPEN, ROOK_PAWNS, ROOK_SEMI_OPEN, SAFE_CHECK, SHELTER_FULLY_OPEN, SHELTER_OPEN,
    SHELTER_PAWN, SLIDER_ON_QUEEN, SPACE, THREAT_BY_KING, THREAT_BY_MINOR, THREAT_BY_PAWN,
    THREAT_BY_ROOK, THREAT_MINOR_BY_MINOR, TRAPPED_ROOK, UNOPPOSED, WEAK_UNOPPOSED,
    WEAK_ZONE_SQUARE, ZONE_ATTACK,
};
use coherent::chess::types::PAWN;

/// The engine's files (under `src/eval/`) that hold marked tables, in the order written.
pub const FILES: [&str; 3] = ["terms.rs", "pawns.rs", "king.rs"];

/// Start of a marked block (the engine's files say where the tables come from).
const BEGIN: &str = "// texel: begin. Fitted to Coherent's self-play games by tools/texel (`texel tune`,\n\
                     // docs/texel.md); regenerate them rather than edit by hand.\n";
const BEGIN_MARK: &str = "// texel: begin";
const END: &str = "// texel: end\n";

/// How one constant is laid out in the source.
#[derive(Clone, Copy, PartialEq)]
enum Shape {
    /// `const NAME: Score = s(mg, eg);`
    Scalar,
    /// `const NAME: [Score; 8]` by relative rank, on one line; ranks 1 and 8 always zero.
    Ranks,
    /// `pub const PSQT: [[Score; 64]; 6]`, eight squares a line; pawns zero on ranks 1 and 8.
    Psqt,
    /// `const MOBILITY: [Score; 66]`, each kind's row in lines of eight, then `MOBILITY_OFFSET`.
    Mobility,
}

/// One generated constant: the engine file it lives in, its name and doc comment, its shape and
/// the first of its features.
struct Item {
    file: &'static str,
    name: &'static str,
    doc: &'static str,
    shape: Shape,
    first: usize,
}

impl Item {
    fn len(&self) -> usize {
        match self.shape {
            Shape::Scalar => 1,
            Shape::Ranks => 8,
            Shape::Psqt => 384,
            Shape::Mobility => 66,
        }
    }
}

const fn item(
    file: &'static str,
    name: &'static str,
    doc: &'static str,
    shape: Shape,
    first: usize,
) -> Item {
    Item {
        file,
        name,
        doc,
        shape,
        first,
    }
}

/// Every tuned constant, file by file in the order written; together they cover all features.
const ITEMS: &[Item] = &[
    item(
        "terms.rs",
        "PSQT",
        "Material plus piece-square value per kind and (white-relative) square, a1 first.",
        Shape::Psqt,
        PSQT,
    ),
    item(
        "terms.rs",
        "MOBILITY",
        "Mobility per kind (knight, bishop, rook, queen) and number of safe squares attacked.",
        Shape::Mobility,
        MOB,
    ),
    item(
        "terms.rs",
        "BISHOP_PAIR",
        "Bishop pair bonus.",
        Shape::Scalar,
        BISHOP_PAIR,
    ),
    item(
        "terms.rs",
        "ROOK_OPEN",
        "Rook on a file without pawns.",
        Shape::Scalar,
        ROOK_OPEN,
    ),
    item(
        "terms.rs",
        "ROOK_SEMI_OPEN",
        "Rook on a file without own pawns.",
        Shape::Scalar,
        ROOK_SEMI_OPEN,
    ),
    item(
        "terms.rs",
        "THREAT_BY_PAWN",
        "A minor or major piece attacked by a pawn.",
        Shape::Scalar,
        THREAT_BY_PAWN,
    ),
    item(
        "terms.rs",
        "THREAT_BY_MINOR",
        "A rook or queen attacked by a minor piece.",
        Shape::Scalar,
        THREAT_BY_MINOR,
    ),
    item(
        "terms.rs",
        "THREAT_BY_ROOK",
        "A queen attacked by a rook.",
        Shape::Scalar,
        THREAT_BY_ROOK,
    ),
    item(
        "terms.rs",
        "HANGING",
        "An enemy piece attacked and not defended at all.",
        Shape::Scalar,
        HANGING,
    ),
    item(
        "terms.rs",
        "OUTPOST_KNIGHT",
        "A knight on an outpost: relative rank 4 to 6, defended by an own pawn, out of reach of enemy pawns.",
        Shape::Scalar,
        OUTPOST_KNIGHT,
    ),
    item(
        "terms.rs",
        "OUTPOST_BISHOP",
        "A bishop on an outpost.",
        Shape::Scalar,
        OUTPOST_BISHOP,
    ),
    item(
        "terms.rs",
        "MINOR_BEHIND_PAWN",
        "A knight or bishop directly behind a pawn.",
        Shape::Scalar,
        MINOR_BEHIND_PAWN,
    ),
    item(
        "terms.rs",
        "BISHOP_PAWNS",
        "Per own pawn on the squares of a bishop's colour, per bishop.",
        Shape::Scalar,
        BISHOP_PAWNS,
    ),
    item(
        "terms.rs",
        "ZONE_ATTACK_KNIGHT",
        "Per square of the enemy king zone a knight attacks.",
        Shape::Scalar,
        ZONE_ATTACK,
    ),
    item(
        "terms.rs",
        "ZONE_ATTACK_BISHOP",
        "Per square of the enemy king zone a bishop attacks.",
        Shape::Scalar,
        ZONE_ATTACK + 1,
    ),
    item(
        "terms.rs",
        "ZONE_ATTACK_ROOK",
        "Per square of the enemy king zone a rook attacks.",
        Shape::Scalar,
        ZONE_ATTACK + 2,
    ),
    item(
        "terms.rs",
        "ZONE_ATTACK_QUEEN",
        "Per square of the enemy king zone a queen attacks.",
        Shape::Scalar,
        ZONE_ATTACK + 3,
    ),
    item(
        "terms.rs",
        "SPACE",
        "Per central square (files c to f, relative ranks 2 to 4) free of own pawns and enemy pawn attacks.",
        Shape::Scalar,
        SPACE,
    ),
    item(
        "terms.rs",
        "PAWN_PUSH_THREAT",
        "Per enemy piece (not a pawn or king) a safe pawn push would attack.",
        Shape::Scalar,
        PAWN_PUSH_THREAT,
    ),
    item(
        "terms.rs",
        "ROOK_ON_SEVENTH",
        "A rook on the relative seventh rank with the enemy king on the eighth or enemy pawns on the seventh.",
        Shape::Scalar,
        ROOK_ON_SEVENTH,
    ),
    item(
        "terms.rs",
        "THREAT_BY_KING",
        "An enemy piece (not the king) attacked by the king and not defended.",
        Shape::Scalar,
        THREAT_BY_KING,
    ),
    item(
        "terms.rs",
        "THREAT_MINOR_BY_MINOR",
        "An enemy knight or bishop attacked by a minor piece and not defended by a pawn.",
        Shape::Scalar,
        THREAT_MINOR_BY_MINOR,
    ),
    item(
        "terms.rs",
        "KNIGHT_PAWNS",
        "Per own pawn, per knight (the knight's worth by the pawns left).",
        Shape::Scalar,
        KNIGHT_PAWNS,
    ),
    item(
        "terms.rs",
        "ROOK_PAWNS",
        "Per own pawn, per rook (the rook's worth by the pawns left).",
        Shape::Scalar,
        ROOK_PAWNS,
    ),
    item(
        "terms.rs",
        "KNIGHT_KING_DISTANCE",
        "Per square of a knight's distance to its own king.",
        Shape::Scalar,
        MINOR_KING_DISTANCE,
    ),
    item(
        "terms.rs",
        "BISHOP_KING_DISTANCE",
        "Per square of a bishop's distance to its own king.",
        Shape::Scalar,
        MINOR_KING_DISTANCE + 1,
    ),
    item(
        "terms.rs",
        "LONG_DIAGONAL_BISHOP",
        "A bishop whose diagonals, blocked by pawns only, reach two centre squares (a long diagonal).",
        Shape::Scalar,
        LONG_DIAGONAL_BISHOP,
    ),
    item(
        "terms.rs",
        "RESTRICTED",
        "Per square both sides attack that no enemy pawn attacks.",
        Shape::Scalar,
        RESTRICTED,
    ),
    item(
        "terms.rs",
        "REACHABLE_OUTPOST",
        "A knight not on an outpost that attacks an outpost square free of own pieces.",
        Shape::Scalar,
        REACHABLE_OUTPOST,
    ),
    item(
        "terms.rs",
        "TRAPPED_ROOK",
        "A rook with at most three safe squares on the outer side of its own king's file.",
        Shape::Scalar,
        TRAPPED_ROOK,
    ),
    item(
        "terms.rs",
        "ROOK_ON_QUEEN_FILE",
        "A rook on a file with a queen of either colour.",
        Shape::Scalar,
        ROOK_ON_QUEEN_FILE,
    ),
    item(
        "terms.rs",
        "KNIGHT_ON_QUEEN",
        "Per safe square from which a knight would attack the lone enemy queen.",
        Shape::Scalar,
        KNIGHT_ON_QUEEN,
    ),
    item(
        "terms.rs",
        "SLIDER_ON_QUEEN",
        "Per safe square, held twice, from which a bishop or rook would attack the lone enemy queen.",
        Shape::Scalar,
        SLIDER_ON_QUEEN,
    ),
    item(
        "pawns.rs",
        "DOUBLED",
        "A pawn with an own pawn in front of it on the same file.",
        Shape::Scalar,
        DOUBLED,
    ),
    item(
        "pawns.rs",
        "ISOLATED",
        "A pawn without own pawns on the adjacent files.",
        Shape::Scalar,
        ISOLATED,
    ),
    item(
        "pawns.rs",
        "BACKWARD",
        "A pawn behind its neighbours whose stop square an enemy pawn controls.",
        Shape::Scalar,
        BACKWARD,
    ),
    item(
        "pawns.rs",
        "PASSED",
        "Passed pawn bonus by relative rank.",
        Shape::Ranks,
        PASSED,
    ),
    item(
        "pawns.rs",
        "PASSED_FREE_PATH",
        "Extra bonus for a passed pawn whose path to promotion is empty, by relative rank.",
        Shape::Ranks,
        PASSED_FREE_PATH,
    ),
    item(
        "pawns.rs",
        "PASSED_KING_THEIRS",
        "Per (relative rank - 1) x enemy king distance to a passed pawn's stop square.",
        Shape::Scalar,
        PASSED_KING_THEIRS,
    ),
    item(
        "pawns.rs",
        "PASSED_KING_OWN",
        "Per (relative rank - 1) x own king distance to a passed pawn's stop square.",
        Shape::Scalar,
        PASSED_KING_OWN,
    ),
    item(
        "pawns.rs",
        "CONNECTED",
        "A pawn defended by an own pawn or with an own pawn beside it, by relative rank.",
        Shape::Ranks,
        CONNECTED,
    ),
    item(
        "pawns.rs",
        "PASSED_BLOCKED",
        "A passed pawn whose stop square holds an enemy piece.",
        Shape::Scalar,
        PASSED_BLOCKED,
    ),
    item(
        "pawns.rs",
        "PASSED_SAFE_PUSH",
        "A passed pawn whose stop square is empty and not attacked by the enemy, by relative rank.",
        Shape::Ranks,
        PASSED_SAFE_PUSH,
    ),
    item(
        "pawns.rs",
        "UNOPPOSED",
        "A pawn, not doubled and not passed, with no enemy pawn ahead on its file, by relative rank.",
        Shape::Ranks,
        UNOPPOSED,
    ),
    item(
        "pawns.rs",
        "WEAK_UNOPPOSED",
        "An isolated or backward pawn with no enemy pawn ahead on its file.",
        Shape::Scalar,
        WEAK_UNOPPOSED,
    ),
    item(
        "pawns.rs",
        "PHALANX",
        "A pawn with an own pawn beside it, by relative rank (on top of `CONNECTED`).",
        Shape::Ranks,
        PHALANX,
    ),
    item(
        "king.rs",
        "SHELTER_PAWN",
        "Own pawn in front of the king on a file of its shelter.",
        Shape::Scalar,
        SHELTER_PAWN,
    ),
    item(
        "king.rs",
        "SHELTER_OPEN",
        "Shelter file without own pawns.",
        Shape::Scalar,
        SHELTER_OPEN,
    ),
    item(
        "king.rs",
        "SHELTER_FULLY_OPEN",
        "Shelter file without any pawns.",
        Shape::Scalar,
        SHELTER_FULLY_OPEN,
    ),
    item(
        "king.rs",
        "WEAK_ZONE_SQUARE",
        "King-zone square attacked by the enemy and defended only by the king.",
        Shape::Scalar,
        WEAK_ZONE_SQUARE,
    ),
    item(
        "king.rs",
        "SAFE_CHECK_KNIGHT",
        "Per square from which an enemy knight can give a safe check (not defended, not held by the enemy).",
        Shape::Scalar,
        SAFE_CHECK,
    ),
    item(
        "king.rs",
        "SAFE_CHECK_BISHOP",
        "Per square from which an enemy bishop can give a safe check.",
        Shape::Scalar,
        SAFE_CHECK + 1,
    ),
    item(
        "king.rs",
        "SAFE_CHECK_ROOK",
        "Per square from which an enemy rook can give a safe check.",
        Shape::Scalar,
        SAFE_CHECK + 2,
    ),
    item(
        "king.rs",
        "SAFE_CHECK_QUEEN",
        "Per square from which the enemy queen can give a safe check.",
        Shape::Scalar,
        SAFE_CHECK + 3,
    ),
    item(
        "king.rs",
        "KING_PAWN_DISTANCE",
        "Per square of king distance to the nearest own pawn (none with no pawns).",
        Shape::Scalar,
        KING_PAWN_DISTANCE,
    ),
    item(
        "king.rs",
        "PAWN_STORM",
        "An enemy pawn on a shelter file ahead of the king, by that pawn's relative rank.",
        Shape::Ranks,
        PAWN_STORM,
    ),
];

fn sc(v: [f64; 2]) -> String {
    format!("s({}, {})", v[0].round() as i32, v[1].round() as i32)
}

fn cells(v: &[[f64; 2]]) -> String {
    v.iter().map(|x| sc(*x)).collect::<Vec<_>>().join(", ")
}

/// The weights as the engine gets them: whole centipawns, and zero where no piece can stand
/// (pawns on the first and last rank, passed pawns there), so the tables carry no dead values.
pub fn canonical(w: &[[f64; 2]]) -> Vec<[f64; 2]> {
    let mut w: Vec<[f64; 2]> = w.iter().map(|v| [v[0].round(), v[1].round()]).collect();
    for sq in (0..8).chain(56..64) {
        w[PSQT + PAWN * 64 + sq] = [0.0, 0.0];
    }
    for first in [PASSED, PASSED_FREE_PATH, PASSED_SAFE_PUSH, PAWN_STORM] {
        w[first] = [0.0, 0.0];
        w[first + 7] = [0.0, 0.0];
    }
    w
}

fn render_item(it: &Item, w: &[[f64; 2]]) -> String {
    let v = &w[it.first..it.first + it.len()];
    let (name, doc) = (it.name, it.doc);
    match it.shape {
        Shape::Scalar => format!("/// {doc}\nconst {name}: Score = {};\n", sc(v[0])),
        Shape::Ranks => {
            format!(
                "/// {doc}\n#[rustfmt::skip]\nconst {name}: [Score; 8] = [\n    {},\n];\n",
                cells(v)
            )
        }
        Shape::Psqt => {
            let mut o =
                format!("/// {doc}\n#[rustfmt::skip]\npub const {name}: [[Score; 64]; 6] = [\n");
            for kind in v.chunks(64) {
                o.push_str("    [\n");
                for row in kind.chunks(8) {
                    o.push_str(&format!("        {},\n", cells(row)));
                }
                o.push_str("    ],\n");
            }
            o + "];\n\n"
        }
        Shape::Mobility => {
            let mut o = format!("/// {doc}\n#[rustfmt::skip]\nconst {name}: [Score; 66] = [\n");
            for (offset, len) in MOB_OFFSET.iter().zip(MOB_LEN) {
                for chunk in v[*offset..offset + len].chunks(8) {
                    o.push_str(&format!("    {},\n", cells(chunk)));
                }
            }
            o + &format!(
                "];\n/// Where each kind's row starts in `MOBILITY` (0..=8, 0..=13, 0..=14, 0..=27 squares).\n\
                 const MOBILITY_OFFSET: [usize; 4] = [0, {}, {}, {}];\n",
                MOB_OFFSET[1], MOB_OFFSET[2], MOB_OFFSET[3]
            )
        }
    }
}

/// The body (between the markers) of each of `FILES`, for the given weights, leaving out the
/// constants whose features `absent` marks.
pub fn render(w: &[[f64; 2]], absent: &[bool]) -> [String; 3] {
    let w = canonical(w);
    FILES.map(|file| {
        ITEMS
            .iter()
            .filter(|it| it.file == file && !absent[it.first])
            .map(|it| render_item(it, &w))
            .collect()
    })
}

fn engine_file(dir: &Path, file: &str) -> PathBuf {
    dir.join("src").join("eval").join(file)
}

/// The byte range of a file's marked block, from the begin marker to the end marker line.
fn marked(text: &str, path: &Path) -> Result<(usize, usize), String> {
    let (begins, ends) = (text.matches(BEGIN_MARK).count(), text.matches(END).count());
    match (text.find(BEGIN_MARK), text.find(END)) {
        (Some(a), Some(b)) if a < b && begins == 1 && ends == 1 => Ok((a, b)),
        _ => Err(format!(
            "{}: want one `{BEGIN_MARK}` line followed by one `{}` line (found {begins} and {ends})",
            path.display(),
            END.trim()
        )),
    }
}

/// An engine file: its path, its text and the byte range of its marked block.
type Marked = (PathBuf, String, (usize, usize));

/// Each of `FILES` under `dir/src/eval/` with its text and marked range: fails, naming the file,
/// when one cannot be read or lacks the markers, before anything is written.
fn marked_files(dir: &Path) -> Result<Vec<Marked>, String> {
    FILES
        .iter()
        .map(|file| {
            let path = engine_file(dir, file);
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
            let range = marked(&text, &path)?;
            Ok((path, text, range))
        })
        .collect()
}

/// Checks that `dir` is an engine directory whose files all carry the markers.
pub fn check(dir: &Path) -> Result<(), String> {
    marked_files(dir).map(|_| ())
}

/// Writes the tables (all but the `absent` ones) to `out` and, with `apply`, replaces the marked
/// blocks of the engine there.
pub fn write(
    out: &Path,
    apply: Option<&Path>,
    w: &[[f64; 2]],
    absent: &[bool],
) -> Result<(), String> {
    let bodies = render(w, absent);
    let all = format!(
        "// terms.rs\n{}\n// pawns.rs\n{}\n// king.rs\n{}",
        bodies[0], bodies[1], bodies[2]
    );
    std::fs::write(out, all).map_err(|e| format!("{}: cannot write: {e}", out.display()))?;
    eprintln!("tables written to {}", out.display());
    if let Some(dir) = apply {
        for ((path, text, (a, b)), body) in marked_files(dir)?.into_iter().zip(&bodies) {
            let new = format!("{}{BEGIN}{body}{}", &text[..a], &text[b..]);
            std::fs::write(&path, new)
                .map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
            eprintln!("replaced the tables in {}", path.display());
        }
    }
    Ok(())
}

/// Every `s(mg, eg)` in `text`, in order.
fn parse_scores(text: &str) -> Result<Vec<[f64; 2]>, String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("s(") {
        let after = &rest[i + 2..];
        let close = after.find(')').ok_or("unclosed `s(`")?;
        let pair: Vec<&str> = after[..close].split(',').map(str::trim).collect();
        let [mg, eg] = pair[..] else {
            return Err(format!("`s({})` is not a pair", &after[..close]));
        };
        let num = |x: &str| {
            x.parse::<i32>()
                .map_err(|_| format!("`{x}` in `s({})` is not an integer", &after[..close]))
        };
        out.push([f64::from(num(mg)?), f64::from(num(eg)?)]);
        rest = &after[close + 1..];
    }
    Ok(out)
}

/// Where the declaration of `it` starts in `block` (a marked block), if the engine has it.
fn declaration(block: &str, it: &Item) -> Option<usize> {
    block.find(&format!("const {}:", it.name))
}

/// Per feature, whether the engine in `dir` lacks the constant that holds its weight.
pub fn absent(dir: &Path) -> Result<Vec<bool>, String> {
    let mut absent = vec![false; NF];
    for (path, text, (a, b)) in marked_files(dir)? {
        for it in ITEMS.iter().filter(|it| path.ends_with(it.file)) {
            if declaration(&text[a..b], it).is_none() {
                absent[it.first..it.first + it.len()].fill(true);
            }
        }
    }
    Ok(absent)
}

/// Parses the tables back from the marked blocks of the engine in `dir` (the inverse of
/// `write`): the weights the engine has now, one per feature; zero for a constant the engine
/// does not have yet (a new term lands in the tool before the engine gets its fitted weights).
pub fn read(dir: &Path) -> Result<Vec<[f64; 2]>, String> {
    let mut w = vec![[0.0; 2]; NF];
    let mut covered = vec![false; NF];
    for (path, text, (a, b)) in marked_files(dir)? {
        let file = path
            .file_name()
            .and_then(|f| f.to_str())
            .unwrap_or_default();
        for it in ITEMS.iter().filter(|it| it.file == file) {
            let line = |at: usize| text[..at].lines().count() + 1;
            let decl = format!("const {}:", it.name);
            // A term the tool knows before the engine has it weighs nothing there yet.
            let Some(start) = declaration(&text[a..b], it).map(|i| a + i) else {
                covered[it.first..it.first + it.len()].fill(true);
                continue;
            };
            // The value runs from `=` to the first `;` after it (the type's `;` comes before).
            let value = text[start..b].find('=').and_then(|eq| {
                text[start + eq..b]
                    .find(';')
                    .map(|semi| (start + eq, start + eq + semi))
            });
            let Some((eq, semi)) = value else {
                return Err(format!(
                    "{}:{}: `{decl}` has no `= …;`",
                    path.display(),
                    line(start)
                ));
            };
            let scores = parse_scores(&text[eq..semi])
                .map_err(|e| format!("{}:{}: {}: {e}", path.display(), line(start), it.name))?;
            if scores.len() != it.len() {
                return Err(format!(
                    "{}:{}: {} has {} scores, want {}",
                    path.display(),
                    line(start),
                    it.name,
                    scores.len(),
                    it.len()
                ));
            }
            w[it.first..it.first + it.len()].copy_from_slice(&scores);
            covered[it.first..it.first + it.len()].fill(true);
        }
    }
    debug_assert!(covered.iter().all(|&c| c), "ITEMS cover every feature");
    Ok(w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::selfplay::Rng;

    fn engine_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../engine")
    }

    /// A scratch engine directory with the three files, unique per test.
    fn scratch(name: &str, bodies: Option<&[String; 3]>) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("texel-test-{}-{name}", std::process::id()));
        let eval = dir.join("src").join("eval");
        std::fs::create_dir_all(&eval).unwrap();
        for (i, file) in FILES.iter().enumerate() {
            let text = match bodies {
                Some(b) => format!("use x;\n{BEGIN}{}{END}fn after() {{}}\n", b[i]),
                None => "use x;\nconst A: Score = s(1, 2);\n".to_string(),
            };
            std::fs::write(eval.join(file), text).unwrap();
        }
        dir
    }

    #[test]
    fn layout_covers_every_feature_once() {
        let mut seen = vec![0; NF];
        for it in ITEMS {
            seen[it.first..it.first + it.len()]
                .iter_mut()
                .for_each(|s| *s += 1);
        }
        assert!(seen.iter().all(|&s| s == 1), "{seen:?}");
    }

    #[test]
    fn written_tables_read_back_to_the_same_weights() {
        let mut rng = Rng::new(3);
        let w: Vec<[f64; 2]> = (0..NF)
            .map(|_| {
                let mut r = || (rng.below(200_001) as f64 - 100_000.0) / 100.0;
                [r(), r()]
            })
            .collect();
        let dir = scratch("roundtrip", Some(&render(&[[0.0; 2]; NF], &[false; NF])));
        let out = dir.join("tables.rs");
        write(&out, Some(&dir), &w, &[false; NF]).unwrap();
        let back = read(&dir).unwrap();
        assert_eq!(back, canonical(&w));
        assert!(
            std::fs::read_to_string(engine_file(&dir, "king.rs"))
                .unwrap()
                .ends_with("fn after() {}\n")
        );
        // Writing what was read changes nothing.
        assert_eq!(render(&back, &[false; NF]), render(&w, &[false; NF]));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn the_engines_blocks_are_exactly_what_the_writer_writes_for_them() {
        let dir = engine_dir();
        let w = canonical(&read(&dir).unwrap());
        for (path, text, (a, b)) in marked_files(&dir).unwrap() {
            let block = &text[a..b];
            // The constants the engine has, in the writer's order and form.
            let body: String = ITEMS
                .iter()
                .filter(|it| path.ends_with(it.file))
                .filter(|it| declaration(block, it).is_some())
                .map(|it| render_item(it, &w))
                .collect();
            assert_eq!(block, format!("{BEGIN}{body}"), "{}", path.display());
        }
    }

    #[test]
    fn a_constant_the_engine_does_not_have_yet_reads_as_zero() {
        let mut bodies = render(&[[1.0; 2]; NF], &[false; NF]);
        let connected = ITEMS.iter().find(|it| it.name == "CONNECTED").unwrap();
        bodies[1] = bodies[1].replace(&render_item(connected, &[[1.0; 2]; NF]), "");
        let dir = scratch("missing", Some(&bodies));
        let w = read(&dir).unwrap();
        let first = connected.first;
        assert_eq!(w[first + 3], [0.0, 0.0]);
        assert_eq!(w[first - 1], [1.0, 1.0], "the constant before it is read");
        // It is absent, and a writer told so leaves it out again: the engine's blocks then
        // stay exactly as they were.
        let absent = absent(&dir).unwrap();
        let marked: Vec<usize> = (0..NF).filter(|&i| absent[i]).collect();
        assert_eq!(marked, (first..first + 8).collect::<Vec<_>>());
        assert_eq!(render(&[[1.0; 2]; NF], &absent), bodies);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_directory_without_markers_is_refused_before_anything_is_written() {
        let dir = scratch("nomarkers", None);
        let out = dir.join("tables.rs");
        let e = check(&dir).unwrap_err();
        assert!(e.contains("terms.rs") && e.contains("texel: begin"), "{e}");
        assert!(write(&out, Some(&dir), &[[0.0; 2]; NF], &[false; NF]).is_err());
        let missing = check(&dir.join("nowhere")).unwrap_err();
        assert!(
            missing.contains("nowhere") && missing.contains("cannot read"),
            "{missing}"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_malformed_table_names_file_line_and_constant() {
        let mut bodies = render(&[[0.0; 2]; NF], &[false; NF]);
        bodies[2] = bodies[2].replace(
            "SHELTER_OPEN: Score = s(0, 0)",
            "SHELTER_OPEN: Score = s(0, x)",
        );
        let dir = scratch("malformed", Some(&bodies));
        let e = read(&dir).unwrap_err();
        assert!(
            e.contains("king.rs:") && e.contains("SHELTER_OPEN") && e.contains("`x`"),
            "{e}"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
}
