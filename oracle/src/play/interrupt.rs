//! SIGINT and SIGTERM as a request to stop a match cleanly: the handler only sets a flag; the
//! match runner polls it, abandons the games in flight (their pairs are not counted), writes
//! its state and returns, so the caller can print the partial result and the command that
//! resumes. Engines never see the terminal's SIGINT: each runs in its own session or process
//! group (`builder::sandbox::engine`), so none dies before the state is written.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the signal handler; read by the runner between moves and between pairs.
static REQUESTED: AtomicBool = AtomicBool::new(false);

/// The handler: an atomic store is async-signal-safe, and it is all the handler does.
extern "C" fn request_stop(_signal: libc::c_int) {
    request();
}

/// Routes SIGINT and SIGTERM to the stop flag for the rest of the process's life.
pub fn install() {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: `request_stop` has the C signature `signal` expects and only performs an
        // atomic store, which is async-signal-safe; installing a handler has no other effect
        // on memory this program owns.
        unsafe {
            libc::signal(
                signal,
                request_stop as extern "C" fn(libc::c_int) as *const () as libc::sighandler_t,
            );
        }
    }
}

/// Asks the runner to stop as SIGINT does: for a caller whose standard output was closed, so
/// that nobody reads the log of the games still to come.
pub fn request() {
    REQUESTED.store(true, Ordering::SeqCst);
}

/// True once SIGINT or SIGTERM arrived (after [`install`]), or [`request`] was called.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// The exit status of a run stopped by a signal, as shells report SIGINT (128 + 2).
pub const EXIT_INTERRUPTED: u8 = 130;

/// The command line that resumes an interrupted run: `args` (program first) as given, with
/// `--state STATE` added when the run had no state file of its own, quoted for a POSIX shell.
pub fn resume_command(args: &[String], state: &Path) -> String {
    let has_state = args
        .iter()
        .any(|a| a == "--state" || a.starts_with("--state="));
    let mut words: Vec<String> = args.to_vec();
    if !has_state {
        words.push("--state".to_string());
        words.push(state.display().to_string());
    }
    words
        .iter()
        .map(|w| shell_quote(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `word` as a POSIX shell reads it back: bare when it holds only safe characters, else in
/// single quotes (a single quote inside becomes `'\''`).
fn shell_quote(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./=,:+@%".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn resume_command_adds_the_state_file_once_and_quotes_for_the_shell() {
        let args = strings(&[
            "oracle",
            "match",
            "--engine",
            "cmd=/a b,name=x's",
            "--tc",
            "8+0.08",
        ]);
        assert_eq!(
            resume_command(&args, Path::new("s.json")),
            r"oracle match --engine 'cmd=/a b,name=x'\''s' --tc 8+0.08 --state s.json"
        );
        let with_state = strings(&["oracle", "match", "--state", "run.json"]);
        assert_eq!(
            resume_command(&with_state, Path::new("run.json")),
            "oracle match --state run.json"
        );
        assert_eq!(shell_quote(""), "''");
    }
}
