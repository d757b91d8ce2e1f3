//! The labelled positions `texel gen` writes, one per line: `FEN;result;score` (result 1, 0.5
//! or 0 and search score in cp, both from White's side). Texel tuning and NNUE training read them
//! through [`load`].

use std::io::BufRead;
use std::path::Path;

use coherent::chess::position::Position;

/// One data line's position and labels (White's side).
pub struct Labelled {
    /// The position.
    pub position: Position,
    /// The game's result: 1, 0.5 or 0.
    pub result: f64,
    /// The search score in cp.
    pub score: f64,
}

/// One data line, or why it is not one.
fn parse_line(line: &str) -> Result<Labelled, String> {
    let parts: Vec<&str> = line.split(';').collect();
    let [fen, result, score] = parts[..] else {
        return Err(format!(
            "want `FEN;result;score`, found {} field(s)",
            parts.len()
        ));
    };
    let position = Position::from_fen(fen).map_err(|e| format!("`{fen}`: {e}"))?;
    let result = match result.trim() {
        "1" => 1.0,
        "0.5" => 0.5,
        "0" => 0.0,
        r => return Err(format!("result `{r}` is not 1, 0.5 or 0")),
    };
    let score: i32 = score.trim().parse().map_err(|_| {
        format!(
            "score `{}` is not a whole number of centipawns",
            score.trim()
        )
    })?;
    Ok(Labelled {
        position,
        result,
        score: f64::from(score),
    })
}

/// Reads a data file, turning each line into a sample with `sample`; a line that is not a
/// labelled position stops the run, naming the file and line, rather than quietly shrinking the
/// data. Fewer than `at_least` positions is an error too (`what` says what needs them).
pub fn load<T>(
    path: &Path,
    at_least: usize,
    what: &str,
    mut sample: impl FnMut(Labelled) -> T,
) -> Result<Vec<T>, String> {
    let file =
        std::fs::File::open(path).map_err(|e| format!("{}: cannot open: {e}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| format!("{}:{}: cannot read: {e}", path.display(), i + 1))?;
        if line.trim().is_empty() {
            continue;
        }
        let labelled =
            parse_line(&line).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?;
        out.push(sample(labelled));
    }
    if out.len() < at_least {
        return Err(format!(
            "{}: {} position(s); {what} needs at least {at_least}",
            path.display(),
            out.len()
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_data_file_names_file_and_line() {
        coherent::chess::attacks::init();
        let dir = std::env::temp_dir().join(format!("texel-test-{}-data", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let read = |name: &str| load(&dir.join(name), 10, "tuning", |l| l.result);
        let good = "8/8/4k3/3p4/3P4/4K3/8/8 w - - 0 1;0.5;0";
        for (line, want) in [
            ("8/8/4k3/3p4/3P4/4K3/8/8 w - - 0 1;0.5", "found 2 field(s)"),
            ("8/8/4k3/3p4/3P4/4K3/8 w - - 0 1;0.5;0", "FEN"),
            ("8/8/4k3/3p4/3P4/4K3/8/8 w - - 0 1;2;0", "result `2`"),
            ("8/8/4k3/3p4/3P4/4K3/8/8 w - - 0 1;1;1.5", "score `1.5`"),
        ] {
            let text = [good; 11].join("\n") + "\n" + line + "\n";
            std::fs::write(dir.join("bad.txt"), text).unwrap();
            let e = read("bad.txt").err().unwrap();
            assert!(e.contains("bad.txt:12:") && e.contains(want), "{e}");
        }
        let e = read("missing.txt").err().unwrap();
        assert!(
            e.contains("missing.txt") && e.contains("cannot open"),
            "{e}"
        );
        std::fs::write(dir.join("short.txt"), good).unwrap();
        let e = read("short.txt").err().unwrap();
        assert!(
            e.contains("short.txt") && e.contains("tuning needs at least 10"),
            "{e}"
        );
        std::fs::write(dir.join("ok.txt"), [good; 10].join("\n")).unwrap();
        assert_eq!(read("ok.txt").unwrap(), vec![0.5; 10]);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
