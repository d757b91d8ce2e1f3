//! The engine's tunables listing (`name, int, value, min, max, c_end, r_end`), one
//! parameter per line, as `coherent tunables` prints it and `--params FILE` holds it.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use thiserror::Error;

use super::schedule::{Kind, Param};

/// Deadline for `ENGINE tunables` to print its listing.
pub const TUNABLES_DEADLINE: Duration = Duration::from_secs(10);

/// A line of a tunables listing that cannot be read.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("{source_name}:{line}: {reason}")]
pub struct ParamsError {
    /// Where the listing came from (a file name or `engine tunables`).
    pub source_name: String,
    /// 1-based line number.
    pub line: usize,
    /// What is wrong, naming the field.
    pub reason: String,
}

/// Why the parameters of a run could not be had.
#[derive(Debug, Error)]
pub enum LoadError {
    /// The listing file could not be read.
    #[error("--params {}: {source}", path.display())]
    File {
        /// The listing file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The engine could not be started, or its output not read.
    #[error("--engine {}: cannot start: {source}", engine.display())]
    Start {
        /// The engine binary.
        engine: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// `ENGINE tunables` ran past [`TUNABLES_DEADLINE`] and was killed.
    #[error("--engine {}: `tunables` did not finish within {} s", engine.display(), TUNABLES_DEADLINE.as_secs())]
    Deadline {
        /// The engine binary.
        engine: PathBuf,
    },
    /// `ENGINE tunables` failed.
    #[error("--engine {}: `tunables` exited with {status}", engine.display())]
    Exit {
        /// The engine binary.
        engine: PathBuf,
        /// How it ended.
        status: ExitStatus,
    },
    /// The listing is malformed.
    #[error(transparent)]
    Listing(#[from] ParamsError),
}

/// The parameters of a run: the listing file `listing` when given, else `engine`'s own
/// `tunables` listing.
pub fn load(listing: Option<&Path>, engine: &Path) -> Result<Vec<Param>, LoadError> {
    match listing {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|source| LoadError::File {
                path: path.to_owned(),
                source,
            })?;
            Ok(parse(&text, &path.display().to_string())?)
        }
        None => {
            let text = engine_listing(engine)?;
            Ok(parse(&text, &format!("{} tunables", engine.display()))?)
        }
    }
}

/// Runs `ENGINE tunables` with a scrubbed environment; killed after [`TUNABLES_DEADLINE`].
fn engine_listing(engine: &Path) -> Result<String, LoadError> {
    let start_error = |source| LoadError::Start {
        engine: engine.to_owned(),
        source,
    };
    let mut child = Command::new(engine)
        .arg("tunables")
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(start_error)?;
    let mut stdout = child.stdout.take().expect("piped stdout");
    // Read on a thread: a listing larger than the pipe's buffer would otherwise block the
    // engine, and the deadline below could not tell that from a hang.
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        stdout.read_to_string(&mut text).map(|_| text)
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(start_error)? {
            break status;
        }
        if started.elapsed() > TUNABLES_DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            return Err(LoadError::Deadline {
                engine: engine.to_owned(),
            });
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let text = reader
        .join()
        .expect("reader thread does not panic")
        .map_err(start_error)?;
    if !status.success() {
        return Err(LoadError::Exit {
            engine: engine.to_owned(),
            status,
        });
    }
    Ok(text)
}

/// Field names in listing order, for error messages.
const FIELDS: [&str; 7] = ["name", "type", "value", "min", "max", "c_end", "r_end"];

/// Parses a listing; blank lines and `#` comments are skipped. `source_name` names it in errors.
pub fn parse(text: &str, source_name: &str) -> Result<Vec<Param>, ParamsError> {
    let mut params: Vec<Param> = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fail = |reason: String| ParamsError {
            source_name: source_name.to_string(),
            line: index + 1,
            reason,
        };
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() != FIELDS.len() {
            return Err(fail(format!(
                "expected 7 comma-separated fields ({}), found {}",
                FIELDS.join(", "),
                fields.len()
            )));
        }
        let name = fields[0];
        if name.is_empty() || name.contains(char::is_whitespace) {
            return Err(fail(format!("name `{name}` must be one word")));
        }
        if params.iter().any(|p| p.name == name) {
            return Err(fail(format!("parameter {name} is listed twice")));
        }
        let kind = match fields[1] {
            "int" => Kind::Int,
            "float" => Kind::Float,
            other => return Err(fail(format!("type `{other}` is neither int nor float"))),
        };
        let mut numbers = [0.0; 5];
        for (slot, (text, field)) in numbers.iter_mut().zip(fields[2..].iter().zip(&FIELDS[2..])) {
            *slot = text
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| fail(format!("{field} `{text}` is not a number")))?;
        }
        let [start, min, max, c_end, r_end] = numbers;
        if kind == Kind::Int
            && let Some((v, field)) = [(start, "value"), (min, "min"), (max, "max")]
                .into_iter()
                .find(|(v, _)| v.fract() != 0.0)
        {
            return Err(fail(format!(
                "{field} {v} of an int parameter is not an integer"
            )));
        }
        let param = Param {
            name: name.to_string(),
            kind,
            start,
            min,
            max,
            c_end,
            r_end,
        };
        super::schedule::Schedule::new(2, std::slice::from_ref(&param))
            .map_err(|e| fail(e.to_string()))?;
        params.push(param);
    }
    if params.is_empty() {
        return Err(ParamsError {
            source_name: source_name.to_string(),
            line: 0,
            reason: "no parameters listed".into(),
        });
    }
    Ok(params)
}

/// The listing line of `p` with `value` as its default: the engine's tunables format.
#[must_use]
pub fn line(p: &Param, value: f64) -> String {
    let kind = match p.kind {
        Kind::Int => "int",
        Kind::Float => "float",
    };
    format!(
        "{}, {kind}, {}, {}, {}, {}, {}",
        p.name,
        format_value(p, value),
        format_value(p, p.min),
        format_value(p, p.max),
        p.c_end,
        p.r_end
    )
}

/// A value as the engine's `setoption` takes it: integers without a fraction.
#[must_use]
pub fn format_value(p: &Param, value: f64) -> String {
    match p.kind {
        Kind::Int => format!("{}", value.round() as i64),
        Kind::Float => format!("{value}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_engine_listing() {
        let text = "# Coherent tunables\nRfpMargin, int, 80, 20, 200, 8, 0.0020\n\n\
                    LmrBase, float, 0.75, 0.25, 1.5, 0.05, 0.002\n";
        let p = parse(text, "t").unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].name, "RfpMargin");
        assert_eq!((p[0].kind, p[0].start, p[0].c_end), (Kind::Int, 80.0, 8.0));
        assert_eq!((p[1].kind, p[1].max, p[1].r_end), (Kind::Float, 1.5, 0.002));
        assert_eq!(line(&p[0], 83.4), "RfpMargin, int, 83, 20, 200, 8, 0.002");
        assert_eq!(parse(&line(&p[1], 0.8), "t").unwrap()[0].start, 0.8);
    }

    #[test]
    fn errors_name_the_line_and_field() {
        let cases = [
            ("A, int, 1, 0, 2, 1\n", ":1: expected 7"),
            (
                "A, int, 1, 0, 2, 1, 0.002\nB, long, 1, 0, 2, 1, 0.002\n",
                ":2: type `long`",
            ),
            ("A, int, x, 0, 2, 1, 0.002\n", "value `x`"),
            ("A, int, 1, 0, 2, 0, 0.002\n", "c_end must be positive"),
            ("A, int, 1.5, 0, 2, 1, 0.002\n", "value 1.5 of an int"),
            ("A, int, 5, 0, 2, 1, 0.002\n", "outside [min, max]"),
            (
                "A, int, 1, 0, 2, 1, 0.002\nA, int, 1, 0, 2, 1, 0.002\n",
                ":2: parameter A is listed twice",
            ),
            ("\n# nothing\n", "no parameters"),
        ];
        for (text, want) in cases {
            let err = parse(text, "file.txt").unwrap_err().to_string();
            assert!(err.contains(want), "{err} lacks {want}");
            assert!(err.starts_with("file.txt:"), "{err}");
        }
    }

    #[test]
    fn the_engine_listing_is_read_and_its_failures_named() {
        // `echo tunables` prints one line that is not a listing: read, then refused by line.
        let error = load(None, Path::new("/bin/echo")).unwrap_err().to_string();
        assert!(
            error.starts_with("/bin/echo tunables:1: expected 7"),
            "{error}"
        );
        let error = load(None, Path::new("/bin/false")).unwrap_err().to_string();
        assert_eq!(
            error,
            "--engine /bin/false: `tunables` exited with exit status: 1"
        );
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing");
        let error = load(None, &missing).unwrap_err().to_string();
        assert!(error.contains(": cannot start: "), "{error}");
        let error = load(Some(&missing), Path::new("/bin/echo"))
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("--params "), "{error}");
    }
}
