//! Drive the real `coherent` binary over UCI from integration tests.
// Each integration-test crate compiles this module and uses only part of it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

/// Path of the binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_coherent");

/// A running engine with a line reader that times out instead of hanging a test.
pub struct Engine {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Engine {
    /// Start the engine in UCI mode.
    pub fn start() -> Engine {
        let mut child = Command::new(BIN)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("coherent starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout: ChildStdout = child.stdout.take().expect("stdout");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Engine {
            child,
            stdin,
            lines: rx,
        }
    }

    /// Send one command line.
    pub fn send(&mut self, cmd: &str) {
        writeln!(self.stdin, "{cmd}").expect("engine reads its input");
        self.stdin.flush().expect("flush");
    }

    /// Read lines until one starts with `prefix`; returns all lines read (the match last).
    pub fn read_until(&mut self, prefix: &str) -> Vec<String> {
        let mut seen = Vec::new();
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(60))
                .unwrap_or_else(|_| panic!("no line starting with '{prefix}' after {seen:?}"));
            let done = line.starts_with(prefix);
            seen.push(line);
            if done {
                return seen;
            }
        }
    }

    /// Quit and wait; the engine must exit cleanly.
    pub fn quit(mut self) {
        self.send("quit");
        let status = self.child.wait().expect("engine exits");
        assert!(status.success(), "engine exit status {status}");
    }
}

/// Run the binary with arguments and return stdout.
pub fn run(args: &[&str]) -> String {
    let out = Command::new(BIN)
        .args(args)
        .output()
        .expect("coherent runs");
    assert!(out.status.success(), "coherent {args:?} failed");
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// The `<N> nodes <M> nps` bench line's N.
pub fn bench_nodes(output: &str) -> u64 {
    let last = output.lines().last().expect("bench prints lines");
    let words: Vec<&str> = last.split_whitespace().collect();
    assert!(
        words.len() == 4 && words[1] == "nodes" && words[3] == "nps",
        "bad bench line '{last}'"
    );
    words[0].parse().expect("node count")
}

/// Run `bench <depth>` in a UCI session and return its node count.
pub fn bench_in_session(e: &mut Engine, depth: u32) -> u64 {
    e.send(&format!("bench {depth}"));
    e.read_until("bench:");
    let line = e.read_until("").pop().expect("bench summary line");
    bench_nodes(&line)
}
