//! UCI process driver: one engine process, its handshake, and deadline-bounded searches.
//!
//! The driver is the only place that talks to engine processes. Every read has a deadline
//! (an engine that hangs must never hang the oracle); the engine's stdout is read by a small
//! thread that time-stamps each line as it arrives, so the moment `bestmove` was read is
//! exact even when the caller is busy with another game. Nothing here logs, and nothing on
//! the `go` → `bestmove` path allocates more than the lines themselves, each at most
//! [`MAX_LINE`] bytes.
//!
//! Typical use (the match runner, the proof runner and the tuner all do this):
//!
//! ```no_run
//! use std::time::Duration;
//! use oracle::play::uci::{Engine, EngineConfig, GoLimits};
//!
//! let config = EngineConfig::new("/usr/games/stockfish").with_option("Threads", "1");
//! let mut engine = Engine::start(&config, Duration::from_secs(10))?;
//! engine.new_game(Duration::from_secs(10))?;
//! let second = Duration::from_secs(10);
//! let search = engine.search(None, &["e2e4".to_string()], &GoLimits::nodes(5000), second, second)?;
//! println!("{} {:?}", search.bestmove, search.info.score);
//! engine.quit(Duration::from_secs(1));
//! # Ok::<(), oracle::play::uci::UciError>(())
//! ```

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, LineWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use super::option::OptionDeclaration;
use super::tree_cpu::tree_cpu_times;
use crate::builder::sandbox::cpu_account::CpuAccount;
use crate::builder::sandbox::engine::{EngineIsolation, EngineLimits};

/// How long the driver waits for `bestmove` after sending `stop` on an expired deadline.
pub const STOP_DRAIN: Duration = Duration::from_millis(1000);

/// Lines read ahead of the driver at most; a UCI search prints a few per iteration, so this
/// only ever binds an engine that floods its output.
const LINE_BACKLOG: usize = 4096;

/// The longest engine output line read, in bytes, its line end included; a longer one is a
/// malformed line, its engine's fault. Real UCI lines are at most a few KB (an `info … pv` of a
/// deep search, a `combo` option's declaration), so 16 KiB leaves ample room, and with
/// [`LINE_BACKLOG`] lines queued at most an engine's output holds the oracle's memory under
/// 64 MiB, whatever it writes.
pub const MAX_LINE: usize = 16 * 1024;

/// How much of an overlong line the fault quotes.
const OVERLONG_QUOTE: usize = 64;

/// How an engine is started and configured: the `--engine cmd=…,name=…,option.X=V` of a match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineConfig {
    /// Name used in PGN tags and reports (defaults to the file name of the command).
    pub name: String,
    /// Path of the engine executable.
    pub command: PathBuf,
    /// Command-line arguments passed to the engine.
    pub args: Vec<String>,
    /// UCI options in the order given; `Threads` is always sent first regardless.
    pub options: Vec<(String, String)>,
    /// How the process is confined (the strongest this machine offers unless changed).
    pub isolation: EngineIsolation,
    /// Paths mounted read-only into the sandbox at their own place (a wrapper engine's inner
    /// engine); the binary itself is always there.
    pub read_only: Vec<PathBuf>,
    /// Folder for a UCI traffic log per engine process (`--log`); `None` logs nothing.
    pub log_dir: Option<PathBuf>,
}

impl EngineConfig {
    /// A configuration for `command` with no arguments and no options, named after the file.
    pub fn new(command: impl Into<PathBuf>) -> EngineConfig {
        let command = command.into();
        let name = command
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| command.display().to_string());
        EngineConfig {
            name,
            command,
            args: Vec::new(),
            options: Vec::new(),
            isolation: EngineIsolation::detect(),
            read_only: Vec::new(),
            log_dir: None,
        }
    }

    /// Adds (or replaces) the UCI option `name` with `value`.
    #[must_use]
    pub fn with_option(mut self, name: &str, value: &str) -> EngineConfig {
        self.set_option(name, value);
        self
    }

    /// Sets the UCI option `name` to `value`, replacing an earlier value of the same option.
    pub fn set_option(&mut self, name: &str, value: &str) {
        match self
            .options
            .iter_mut()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
        {
            Some(slot) => slot.1 = value.to_string(),
            None => self.options.push((name.to_string(), value.to_string())),
        }
    }

    /// The options in the order they are sent: `Threads` first (engines size their
    /// hash tables and thread pools on it), then the rest as given.
    pub fn ordered_options(&self) -> Vec<(&str, &str)> {
        let is_threads = |n: &str| n.eq_ignore_ascii_case("Threads");
        let first = self.options.iter().filter(|(n, _)| is_threads(n));
        let rest = self.options.iter().filter(|(n, _)| !is_threads(n));
        first
            .chain(rest)
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect()
    }
}

/// Why talking to an engine failed.
#[derive(Debug, thiserror::Error)]
pub enum UciError {
    /// The engine process could not be started (the runner's fault, not the engine's).
    #[error("cannot start engine `{command}`: {source}")]
    Spawn {
        /// The command that failed.
        command: String,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// The engine closed its output or its input pipe broke: it crashed or exited.
    #[error("engine `{engine}` disconnected while {during}")]
    Disconnected {
        /// The engine's name.
        engine: String,
        /// What the driver was doing.
        during: &'static str,
    },
    /// The engine did not answer within the deadline.
    #[error("engine `{engine}` did not send `{expected}` within {:.3} s", .after.as_secs_f64())]
    Deadline {
        /// The engine's name.
        engine: String,
        /// The reply that was awaited (`uciok`, `readyok`, `bestmove`).
        expected: &'static str,
        /// How long the driver waited.
        after: Duration,
        /// For `bestmove`: true when `stop` made the engine answer, so it is still usable.
        recovered: bool,
    },
    /// The engine sent a `bestmove` line without a move, or a line longer than [`MAX_LINE`].
    #[error("engine `{engine}` sent a malformed line: `{line}`")]
    Malformed {
        /// The engine's name.
        engine: String,
        /// The offending line.
        line: String,
    },
}

impl UciError {
    /// True when the engine is to blame (crash, hang, garbage), false when the runner is.
    pub fn is_engine_fault(&self) -> bool {
        !matches!(self, UciError::Spawn { .. })
    }
}

/// The limits of one `go` command; unset fields are not sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GoLimits {
    /// White's remaining time.
    pub wtime: Option<Duration>,
    /// Black's remaining time.
    pub btime: Option<Duration>,
    /// White's increment.
    pub winc: Option<Duration>,
    /// Black's increment.
    pub binc: Option<Duration>,
    /// Moves to the next time control.
    pub movestogo: Option<u32>,
    /// Node limit.
    pub nodes: Option<u64>,
    /// Depth limit.
    pub depth: Option<u32>,
    /// Fixed time per move.
    pub movetime: Option<Duration>,
    /// Search until `stop`.
    pub infinite: bool,
}

impl GoLimits {
    /// `go nodes n`.
    pub fn nodes(n: u64) -> GoLimits {
        GoLimits {
            nodes: Some(n),
            ..GoLimits::default()
        }
    }

    /// `go depth d`.
    pub fn depth(d: u32) -> GoLimits {
        GoLimits {
            depth: Some(d),
            ..GoLimits::default()
        }
    }

    /// `go movetime t`.
    pub fn movetime(t: Duration) -> GoLimits {
        GoLimits {
            movetime: Some(t),
            ..GoLimits::default()
        }
    }

    /// The `go …` command line.
    pub fn command(&self) -> String {
        use std::fmt::Write as _;
        let mut line = String::from("go");
        let ms = |d: Duration| d.as_millis();
        for (key, value) in [
            ("wtime", self.wtime),
            ("btime", self.btime),
            ("winc", self.winc),
            ("binc", self.binc),
        ] {
            if let Some(v) = value {
                let _ = write!(line, " {key} {}", ms(v));
            }
        }
        if let Some(n) = self.movestogo {
            let _ = write!(line, " movestogo {n}");
        }
        if let Some(n) = self.nodes {
            let _ = write!(line, " nodes {n}");
        }
        if let Some(d) = self.depth {
            let _ = write!(line, " depth {d}");
        }
        if let Some(t) = self.movetime {
            let _ = write!(line, " movetime {}", ms(t));
        }
        if self.infinite {
            line.push_str(" infinite");
        }
        line
    }
}

/// An engine's evaluation as UCI reports it, from the side to move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Score {
    /// Centipawns.
    Cp(i32),
    /// Mate in this many moves (negative: the side to move is mated).
    Mate(i32),
}

/// The last `info` line with a score before `bestmove`, parsed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SearchInfo {
    /// `score cp|mate`.
    pub score: Option<Score>,
    /// `depth`.
    pub depth: Option<u32>,
    /// `seldepth`.
    pub seldepth: Option<u32>,
    /// `nodes`.
    pub nodes: Option<u64>,
    /// `time` in milliseconds, as the engine measured it.
    pub time_ms: Option<u64>,
    /// `pv`.
    pub pv: Vec<String>,
}

impl SearchInfo {
    /// Parses an `info …` line; fields that are absent stay `None`.
    pub fn parse(line: &str) -> SearchInfo {
        let mut info = SearchInfo::default();
        let mut tokens = line.split_ascii_whitespace().peekable();
        while let Some(token) = tokens.next() {
            match token {
                "depth" => info.depth = tokens.next().and_then(|t| t.parse().ok()),
                "seldepth" => info.seldepth = tokens.next().and_then(|t| t.parse().ok()),
                "nodes" => info.nodes = tokens.next().and_then(|t| t.parse().ok()),
                "time" => info.time_ms = tokens.next().and_then(|t| t.parse().ok()),
                "score" => {
                    let kind = tokens.next();
                    let value = tokens.next().and_then(|t| t.parse().ok());
                    info.score = match (kind, value) {
                        (Some("cp"), Some(v)) => Some(Score::Cp(v)),
                        (Some("mate"), Some(v)) => Some(Score::Mate(v)),
                        _ => None,
                    };
                }
                "pv" => {
                    info.pv = tokens.by_ref().map(str::to_string).collect();
                }
                // `string` swallows the rest of the line: it is free text.
                "string" => break,
                _ => {}
            }
        }
        info
    }
}

/// The result of one search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchOutcome {
    /// The move the engine played, as sent (UCI notation, not yet checked for legality).
    pub bestmove: String,
    /// The `ponder` move, if any.
    pub ponder: Option<String>,
    /// The last scored `info` line before `bestmove`.
    pub info: SearchInfo,
    /// Wall time from writing `go` to reading `bestmove` (monotonic clock): what the clock charges.
    pub elapsed: Duration,
    /// CPU the engine used while the runner waited for its `readyok`s before `go`, where its
    /// account can be read: work done off the clock about the game, which the clock charges
    /// too (an honest engine answers a ping in microseconds).
    pub synchronisation_cpu: Duration,
}

/// The UCI traffic of one engine process, as cutechess's debug output: `>` for lines sent,
/// `<` for lines read, each after the seconds since the process started.
#[derive(Debug, Clone)]
struct TrafficLog {
    file: Arc<Mutex<LineWriter<File>>>,
    started: Instant,
}

impl TrafficLog {
    /// Creates `DIR/NAME-PID.log` (the pid keeps a restarted engine's log apart).
    fn create(dir: &Path, name: &str, pid: u32) -> std::io::Result<TrafficLog> {
        let name: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let file = File::create(dir.join(format!("{name}-{pid}.log")))?;
        Ok(TrafficLog {
            file: Arc::new(Mutex::new(LineWriter::new(file))),
            started: Instant::now(),
        })
    }

    /// Appends one line; a failing log write is ignored because a debug log must never change
    /// how a game ends.
    fn record(&self, direction: char, line: &str) {
        if let Ok(mut file) = self.file.lock() {
            let seconds = self.started.elapsed().as_secs_f64();
            let _ = writeln!(file, "{seconds:10.3} {direction} {line}");
        }
    }
}

/// One line of engine output and the instant it was read.
type Line = (Instant, String);

/// What the reader thread passes on: a line, or the quoted start of a line longer than
/// [`MAX_LINE`] (the last thing it reads from that engine).
type Received = (Instant, Result<String, String>);

/// A running UCI engine process.
#[derive(Debug)]
pub struct Engine {
    name: String,
    child: Child,
    /// The private copy of the binary the process runs; removed after the process.
    _scratch: tempfile::TempDir,
    /// The process's CPU account, where the machine allows one; removed after the process.
    account: Option<CpuAccount>,
    stdin: BufWriter<ChildStdin>,
    lines: Receiver<Received>,
    reader: Option<JoinHandle<()>>,
    log: Option<TrafficLog>,
    id_name: Option<String>,
    declared: Vec<OptionDeclaration>,
}

impl Engine {
    /// Spawns the engine, completes `uci`/`uciok` within `deadline`, sends the options
    /// (`Threads` first) and waits for `readyok` (again within `deadline`).
    ///
    /// The process gets an environment with only `PATH` (no tokens leak into engine code)
    /// and its stderr is discarded.
    pub fn start(config: &EngineConfig, deadline: Duration) -> Result<Engine, UciError> {
        let mut engine = Engine::handshake(config, deadline)?;
        engine.configure(config, deadline)?;
        Ok(engine)
    }

    /// Spawns the engine and completes `uci`/`uciok` within `deadline`, recording the options
    /// it declares; nothing is configured yet (see [`Engine::configure`]).
    pub fn handshake(config: &EngineConfig, deadline: Duration) -> Result<Engine, UciError> {
        let spawn_error = |source| UciError::Spawn {
            command: config.command.display().to_string(),
            source,
        };
        let confined = config
            .isolation
            .confine(
                &config.command,
                &config.args,
                &config.read_only,
                EngineLimits::PLAY,
            )
            .map_err(spawn_error)?;
        let mut command = confined.command;
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = command.spawn().map_err(spawn_error)?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(spawn_error(std::io::Error::other("no stdio pipes")));
        };
        let log = match &config.log_dir {
            Some(dir) => match TrafficLog::create(dir, &config.name, child.id()) {
                Ok(log) => Some(log),
                Err(error) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(spawn_error(error));
                }
            },
            None => None,
        };
        let reader_log = log.clone();
        // Bounded: an engine that floods its output outside its turn blocks on its own pipe
        // instead of keeping the oracle's reader busy (and its memory growing) in the
        // opponent's turn.
        let (sender, lines) = mpsc::sync_channel(LINE_BACKLOG);
        let reader = thread::Builder::new()
            .name(format!("uci-{}", config.name))
            .spawn(move || {
                let mut stdout = BufReader::new(stdout);
                loop {
                    match read_bounded_line(&mut stdout) {
                        // Invalid UTF-8 ends the reading as a closed pipe does.
                        Ok(None) | Err(_) => return,
                        Ok(Some(line)) => {
                            let read_at = Instant::now();
                            if let Some(log) = &reader_log {
                                let text = line.as_ref().unwrap_or_else(|quoted| quoted);
                                log.record('<', text);
                            }
                            let overlong = line.is_err();
                            // After an overlong line nothing more is read: the engine has lost.
                            if sender.send((read_at, line)).is_err() || overlong {
                                return;
                            }
                        }
                    }
                }
            })
            .map_err(spawn_error);
        let reader = match reader {
            Ok(handle) => handle,
            Err(error) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(error);
            }
        };
        let mut engine = Engine {
            name: config.name.clone(),
            child,
            _scratch: confined.scratch,
            account: confined.account,
            stdin: BufWriter::new(stdin),
            lines,
            reader: Some(reader),
            log,
            id_name: None,
            declared: Vec::new(),
        };
        engine.send("uci", "sending uci")?;
        let started = Instant::now();
        loop {
            let (_, line) = engine.next_line(started, deadline, "uciok", "waiting for uciok")?;
            if line == "uciok" {
                break;
            }
            // A program that repeats its input (`cat`) is no engine: say so now rather than
            // after the whole start-up deadline.
            if line == "uci" {
                return Err(UciError::Malformed {
                    engine: engine.name.clone(),
                    line: "uci (it repeats its input: not a UCI engine)".to_string(),
                });
            }
            if let Some(name) = line.strip_prefix("id name ") {
                engine.id_name = Some(name.trim().to_string());
            } else if let Some(declaration) = OptionDeclaration::parse(&line) {
                engine.declared.push(declaration);
            }
        }
        Ok(engine)
    }

    /// Sends the options of `config` (`Threads` first) and waits for `readyok` within `deadline`.
    pub fn configure(&mut self, config: &EngineConfig, deadline: Duration) -> Result<(), UciError> {
        for (name, value) in config.ordered_options() {
            self.send(
                &format!("setoption name {name} value {value}"),
                "sending options",
            )?;
        }
        self.is_ready(deadline)
    }

    /// Freezes the engine's processes (`cgroup.freeze`) until its next search, where its account
    /// has the freezer: outside its turn it then cannot think, nor take CPU from the game
    /// beside. Returns whether it is frozen.
    pub fn freeze(&self) -> bool {
        self.set_frozen(true)
    }

    /// Freezes or thaws the account; false where there is no freezer or the write failed.
    fn set_frozen(&self, frozen: bool) -> bool {
        self.account
            .as_ref()
            .filter(|account| account.can_freeze())
            .is_some_and(|account| account.set_frozen(frozen).is_ok())
    }

    /// The options the engine declared in its handshake (`option name … type …`).
    pub fn declared_options(&self) -> &[OptionDeclaration] {
        &self.declared
    }

    /// The configured name of this engine.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The name the engine announced with `id name`, if it did.
    pub fn id_name(&self) -> Option<&str> {
        self.id_name.as_deref()
    }

    /// The operating-system process id of the process the oracle started: the sandbox's
    /// outermost process (bubblewrap), or the engine itself without a sandbox.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The CPU used so far by everything the engine's process started: from its CPU account
    /// where there is one (every process ever in it, exited ones too), else summed over its
    /// process tree in `/proc`, which misses children that exited unreaped; `None` when
    /// neither can be read.
    pub fn cpu_time(&self) -> Option<Duration> {
        match &self.account {
            Some(account) => account.cpu_time(),
            None => {
                let [reading] = tree_cpu_times([self.pid()]);
                reading.ok()
            }
        }
    }

    /// Sends `setoption name … value …` (use between games; follow with [`Engine::is_ready`]).
    pub fn set_option(&mut self, name: &str, value: &str) -> Result<(), UciError> {
        self.send(
            &format!("setoption name {name} value {value}"),
            "sending setoption",
        )
    }

    /// Sends `isready` and waits for `readyok` within `deadline`, discarding other output.
    pub fn is_ready(&mut self, deadline: Duration) -> Result<(), UciError> {
        self.send("isready", "sending isready")?;
        let started = Instant::now();
        loop {
            let (_, line) = self.next_line(started, deadline, "readyok", "waiting for readyok")?;
            if line == "readyok" {
                return Ok(());
            }
        }
    }

    /// Sends `ucinewgame` then `isready`, and waits for `readyok` within `deadline`.
    pub fn new_game(&mut self, deadline: Duration) -> Result<(), UciError> {
        self.set_frozen(false);
        self.send("ucinewgame", "sending ucinewgame")?;
        self.is_ready(deadline)
    }

    /// One search, synchronised as fastchess and cutechess do: `isready` before `position` and
    /// again before `go`, each answered within `ping` and off the clock, then `go` with `limits`
    /// and `bestmove` within `deadline` after its write. An engine that finished its previous
    /// search late, or is slow to set up a position, is waited for before its clock starts;
    /// one that does not answer a ping is stalled (a `readyok` deadline), not out of time.
    /// A frozen engine is thawed first and frozen again after its answer, and the CPU it used
    /// in the pings, where it may think about the game off the clock, is reported for the
    /// clock to charge.
    pub fn search(
        &mut self,
        fen: Option<&str>,
        moves: &[String],
        limits: &GoLimits,
        deadline: Duration,
        ping: Duration,
    ) -> Result<SearchOutcome, UciError> {
        let frozen = self.set_frozen(false);
        let result = self.synchronised_search(fen, moves, limits, deadline, ping);
        if frozen {
            self.set_frozen(true);
        }
        result
    }

    /// [`Engine::search`] without the freezer.
    fn synchronised_search(
        &mut self,
        fen: Option<&str>,
        moves: &[String],
        limits: &GoLimits,
        deadline: Duration,
        ping: Duration,
    ) -> Result<SearchOutcome, UciError> {
        let before = self.account.as_ref().and_then(CpuAccount::cpu_time);
        self.is_ready(ping)?;
        self.position(fen, moves)?;
        self.is_ready(ping)?;
        let after = self.account.as_ref().and_then(CpuAccount::cpu_time);
        let mut outcome = self.go(limits, deadline)?;
        if let (Some(before), Some(after)) = (before, after) {
            outcome.synchronisation_cpu = after.saturating_sub(before);
        }
        Ok(outcome)
    }

    /// Sends `position startpos|fen FEN [moves …]`.
    fn position(&mut self, fen: Option<&str>, moves: &[String]) -> Result<(), UciError> {
        let mut line = match fen {
            Some(fen) => format!("position fen {fen}"),
            None => String::from("position startpos"),
        };
        if !moves.is_empty() {
            line.push_str(" moves");
            for m in moves {
                line.push(' ');
                line.push_str(m);
            }
        }
        self.send(&line, "sending position")
    }

    /// Sends `go` with `limits` and waits for `bestmove` until `deadline` after the write.
    ///
    /// On expiry the driver sends `stop` and waits up to [`STOP_DRAIN`] for the `bestmove`
    /// that must follow, so the engine is in a known state; the error says whether it came
    /// (`recovered`). Either way the search counts as not answered in time.
    fn go(&mut self, limits: &GoLimits, deadline: Duration) -> Result<SearchOutcome, UciError> {
        // Lines written before this search (late `info`, or a `bestmove` sent ahead of time to
        // be charged nothing) are no answer to it; an overlong one is a fault all the same.
        while let Ok((_, line)) = self.lines.try_recv() {
            if let Err(quoted) = line {
                return Err(self.overlong(quoted));
            }
        }
        self.send(&limits.command(), "sending go")?;
        let started = Instant::now();
        let mut last_scored: Option<String> = None;
        let mut last_timed: Option<String> = None;
        loop {
            let (read_at, line) = match self.next_line(started, deadline, "bestmove", "searching") {
                Ok(line) => line,
                Err(UciError::Deadline { .. }) => return Err(self.stop_and_drain(started)),
                Err(error) => return Err(error),
            };
            if let Some(rest) = line.strip_prefix("bestmove") {
                let mut tokens = rest.split_ascii_whitespace();
                let Some(bestmove) = tokens.next() else {
                    return Err(UciError::Malformed {
                        engine: self.name.clone(),
                        line,
                    });
                };
                let ponder = match (tokens.next(), tokens.next()) {
                    (Some("ponder"), Some(p)) => Some(p.to_string()),
                    _ => None,
                };
                let mut info = last_scored
                    .as_deref()
                    .map(SearchInfo::parse)
                    .unwrap_or_default();
                // Some engines end with an unscored `info nodes … time …`: it has the final figures.
                if let Some(timed) = last_timed.as_deref().map(SearchInfo::parse) {
                    info.time_ms = timed.time_ms.or(info.time_ms);
                    info.nodes = timed.nodes.or(info.nodes);
                }
                return Ok(SearchOutcome {
                    bestmove: bestmove.to_string(),
                    ponder,
                    info,
                    elapsed: read_at.saturating_duration_since(started),
                    synchronisation_cpu: Duration::ZERO,
                });
            }
            // Parsing waits for `bestmove`: only the lines are kept while the engine searches.
            if line.starts_with("info") {
                if line.contains(" score ") {
                    last_scored = Some(line);
                    last_timed = None;
                } else if line.contains(" time ") {
                    last_timed = Some(line);
                }
            }
        }
    }

    /// Sends `quit`, waits up to `grace` for the process to exit, then kills it.
    pub fn quit(mut self, grace: Duration) {
        self.set_frozen(false);
        let _ = self.send("quit", "sending quit");
        let until = Instant::now() + grace;
        while Instant::now() < until {
            match self.child.try_wait() {
                Ok(Some(_)) | Err(_) => break,
                Ok(None) => thread::sleep(Duration::from_millis(5)),
            }
        }
        // Drop kills (if still running), reaps and joins the reader.
    }

    /// After a missed deadline: `stop`, then wait briefly for the `bestmove` that must follow.
    fn stop_and_drain(&mut self, started: Instant) -> UciError {
        let after = started.elapsed();
        let mut recovered = false;
        if self.send("stop", "sending stop").is_ok() {
            let drain_start = Instant::now();
            while let Ok((_, line)) =
                self.next_line(drain_start, STOP_DRAIN, "bestmove", "draining")
            {
                if line.starts_with("bestmove") {
                    recovered = true;
                    break;
                }
            }
        }
        UciError::Deadline {
            engine: self.name.clone(),
            expected: "bestmove",
            after,
            recovered,
        }
    }

    /// Writes one command line and flushes it.
    fn send(&mut self, line: &str, during: &'static str) -> Result<(), UciError> {
        if let Some(log) = &self.log {
            log.record('>', line);
        }
        let written = self
            .stdin
            .write_all(line.as_bytes())
            .and_then(|()| self.stdin.write_all(b"\n"))
            .and_then(|()| self.stdin.flush());
        written.map_err(|_| UciError::Disconnected {
            engine: self.name.clone(),
            during,
        })
    }

    /// The next output line, or an error when `deadline` after `started` passes or the engine exits.
    fn next_line(
        &mut self,
        started: Instant,
        deadline: Duration,
        expected: &'static str,
        during: &'static str,
    ) -> Result<Line, UciError> {
        // Checked before receiving: an engine that floods output must still hit the deadline.
        let remaining = deadline.saturating_sub(started.elapsed());
        let received = if remaining.is_zero() {
            Err(RecvTimeoutError::Timeout)
        } else {
            self.lines.recv_timeout(remaining)
        };
        match received {
            Ok((read_at, Ok(line))) => Ok((read_at, line)),
            Ok((_, Err(quoted))) => Err(self.overlong(quoted)),
            Err(RecvTimeoutError::Timeout) => Err(UciError::Deadline {
                engine: self.name.clone(),
                expected,
                after: started.elapsed(),
                recovered: false,
            }),
            Err(RecvTimeoutError::Disconnected) => Err(UciError::Disconnected {
                engine: self.name.clone(),
                during,
            }),
        }
    }

    /// The fault of a line longer than [`MAX_LINE`], quoting its start.
    fn overlong(&self, quoted: String) -> UciError {
        UciError::Malformed {
            engine: self.name.clone(),
            line: quoted,
        }
    }
}

/// Reads one line of at most [`MAX_LINE`] bytes, its line end trimmed: `None` at the end of the
/// output, `Err(quote)` for a longer line, of which no more than the bound is read (so an engine
/// that withholds the newline cannot grow the oracle's memory).
fn read_bounded_line(input: &mut impl BufRead) -> std::io::Result<Option<Result<String, String>>> {
    let mut bytes = Vec::new();
    let bound = u64::try_from(MAX_LINE).unwrap_or(u64::MAX);
    if input.by_ref().take(bound).read_until(b'\n', &mut bytes)? == 0 {
        return Ok(None);
    }
    if bytes.len() == MAX_LINE && bytes.last() != Some(&b'\n') {
        let start = String::from_utf8_lossy(&bytes[..OVERLONG_QUOTE]);
        return Ok(Some(Err(format!(
            "{start}… (longer than {MAX_LINE} bytes)"
        ))));
    }
    let mut line = String::from_utf8(bytes)
        .map_err(|error| std::io::Error::new(std::io::ErrorKind::InvalidData, error))?;
    line.truncate(line.trim_end().len());
    Ok(Some(Ok(line)))
}

impl Drop for Engine {
    fn drop(&mut self) {
        if !matches!(self.child.try_wait(), Ok(Some(_))) {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_is_sent_first() {
        let config = EngineConfig::new("/bin/engine")
            .with_option("Hash", "16")
            .with_option("threads", "1")
            .with_option("Hash", "32");
        assert_eq!(
            config.ordered_options(),
            vec![("threads", "1"), ("Hash", "32")]
        );
        assert_eq!(config.name, "engine");
    }

    #[test]
    fn go_command_lists_only_set_limits() {
        let clock = GoLimits {
            wtime: Some(Duration::from_millis(1010)),
            btime: Some(Duration::from_millis(990)),
            winc: Some(Duration::from_millis(10)),
            binc: Some(Duration::from_millis(10)),
            movestogo: Some(40),
            ..GoLimits::default()
        };
        assert_eq!(
            clock.command(),
            "go wtime 1010 btime 990 winc 10 binc 10 movestogo 40"
        );
        assert_eq!(GoLimits::nodes(5000).command(), "go nodes 5000");
        assert_eq!(GoLimits::depth(7).command(), "go depth 7");
        assert_eq!(
            GoLimits::movetime(Duration::from_millis(250)).command(),
            "go movetime 250"
        );
    }

    #[test]
    fn info_line_is_parsed() {
        let info = SearchInfo::parse(
            "info depth 12 seldepth 17 multipv 1 score cp -34 upperbound nodes 52311 nps 900000 time 58 pv e7e5 g1f3",
        );
        assert_eq!(info.depth, Some(12));
        assert_eq!(info.seldepth, Some(17));
        assert_eq!(info.score, Some(Score::Cp(-34)));
        assert_eq!(info.nodes, Some(52311));
        assert_eq!(info.time_ms, Some(58));
        assert_eq!(info.pv, vec!["e7e5", "g1f3"]);
        assert_eq!(
            SearchInfo::parse("info depth 3 score mate -2").score,
            Some(Score::Mate(-2))
        );
        assert_eq!(SearchInfo::parse("info string depth 9").depth, None);
    }

    #[test]
    fn a_program_that_repeats_its_input_is_refused_at_once() {
        let config = EngineConfig::new("/bin/cat");
        let started = Instant::now();
        let error = Engine::start(&config, Duration::from_secs(30)).unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5), "{error}");
        assert!(error.to_string().contains("not a UCI engine"), "{error}");
    }

    #[test]
    fn a_line_past_the_bound_is_refused_without_reading_on() {
        let exact = format!("{}\r\n", "a".repeat(MAX_LINE - 2));
        let mut input = std::io::Cursor::new(format!("{exact}bestmove e2e4\n"));
        assert_eq!(
            read_bounded_line(&mut input).unwrap(),
            Some(Ok("a".repeat(MAX_LINE - 2)))
        );
        assert_eq!(
            read_bounded_line(&mut input).unwrap(),
            Some(Ok("bestmove e2e4".to_owned()))
        );
        assert_eq!(read_bounded_line(&mut input).unwrap(), None);
        let flood = format!("info string {}\nbestmove e2e4\n", "x".repeat(4 * MAX_LINE));
        let mut input = std::io::Cursor::new(flood);
        let Some(Err(quoted)) = read_bounded_line(&mut input).unwrap() else {
            panic!("an overlong line is refused");
        };
        assert!(quoted.starts_with("info string xxx"), "{quoted}");
        assert!(quoted.ends_with(&format!("(longer than {MAX_LINE} bytes)")));
        assert_eq!(input.position(), MAX_LINE as u64, "read no further");
    }

    #[test]
    fn missing_binary_is_a_runner_fault() {
        let config = EngineConfig::new("/nonexistent/engine");
        let error = Engine::start(&config, Duration::from_secs(1)).unwrap_err();
        assert!(matches!(error, UciError::Spawn { .. }));
        assert!(!error.is_engine_fault());
    }
}
