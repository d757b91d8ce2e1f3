//! CPU time of whole process trees from `/proc`: what an engine used, counting the process the
//! oracle started and every process below it.
//!
//! One reading scans `/proc` once, maps every parent to its children and sums
//! utime + stime + cutime + cstime over each tree. A process's own times include all of its
//! threads; the children's times are those of descendants it has reaped. Inside a PID namespace
//! an orphan is re-parented to the namespace's init, which is the engine (bubblewrap's
//! `--as-pid-1`), so it stays in the tree. Without a sandbox an orphan is re-parented outside
//! the tree and leaves the reading. A child whose parent ignores `SIGCHLD` is reaped by the
//! kernel without adding its times anywhere: its CPU is seen only while it lives.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::Duration;

/// Why a process tree's CPU time could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TreeCpuError {
    /// `/proc` could not be listed (not Linux, or not mounted).
    #[error("cannot list /proc: {0}")]
    ProcUnreadable(String),
    /// The root process no longer exists (it exited, or was never there).
    #[error("process {0} is gone")]
    Vanished(u32),
}

/// The two fields of `/proc/<pid>/stat` a reading needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ProcStat {
    /// Parent process id.
    ppid: u32,
    /// utime + stime + cutime + cstime, in clock ticks.
    ticks: u64,
}

/// Parses one `/proc/<pid>/stat` line; `None` when it does not have the documented shape.
fn parse_stat(line: &str) -> Option<ProcStat> {
    // The command name (field 2) is in parentheses and may itself hold spaces and `)`: the
    // fields that follow start after the last `)`.
    let after_name = &line[line.rfind(')')? + 1..];
    // Fields 3 onwards: state, ppid, …; utime..cstime are fields 14..17 (proc(5)).
    let fields: Vec<&str> = after_name.split_ascii_whitespace().collect();
    let field = |number: usize| fields.get(number - 3).and_then(|f| f.parse::<u64>().ok());
    let ppid = u32::try_from(field(4)?).ok()?;
    let mut ticks = 0u64;
    for number in 14..=17 {
        ticks = ticks.checked_add(field(number)?)?;
    }
    Some(ProcStat { ppid, ticks })
}

/// One scan of `/proc`: every process's CPU ticks and its children.
#[derive(Debug, Default)]
struct ProcessTable {
    /// Ticks by pid.
    ticks: HashMap<u32, u64>,
    /// Children by parent pid.
    children: HashMap<u32, Vec<u32>>,
}

impl ProcessTable {
    /// Reads every process under `proc_dir`; processes that exit during the scan are left out.
    fn scan(proc_dir: &Path) -> Result<ProcessTable, TreeCpuError> {
        let entries =
            std::fs::read_dir(proc_dir).map_err(|e| TreeCpuError::ProcUnreadable(e.to_string()))?;
        let mut table = ProcessTable::default();
        for entry in entries.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
                continue;
            };
            let Ok(line) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            if let Some(stat) = parse_stat(&line) {
                table.insert(pid, stat);
            }
        }
        Ok(table)
    }

    /// Adds process `pid`.
    fn insert(&mut self, pid: u32, stat: ProcStat) {
        self.ticks.insert(pid, stat.ticks);
        self.children.entry(stat.ppid).or_default().push(pid);
    }

    /// The ticks of the tree rooted at `root`.
    fn tree_ticks(&self, root: u32) -> Result<u64, TreeCpuError> {
        let mut total = *self.ticks.get(&root).ok_or(TreeCpuError::Vanished(root))?;
        // A pid reused during the scan could close a loop of parents: each pid is walked once.
        let mut seen = HashSet::from([root]);
        let mut pending = vec![root];
        while let Some(pid) = pending.pop() {
            for &child in self.children.get(&pid).into_iter().flatten() {
                if seen.insert(child) {
                    total = total.saturating_add(self.ticks.get(&child).copied().unwrap_or(0));
                    pending.push(child);
                }
            }
        }
        Ok(total)
    }
}

/// Clock ticks per second (`sysconf(_SC_CLK_TCK)`), 100 when the system does not say.
fn ticks_per_second() -> u64 {
    // SAFETY: sysconf only reads a configuration value.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u64::try_from(ticks).ok().filter(|&t| t > 0).unwrap_or(100)
}

/// The CPU time used so far by each process tree rooted at `roots` (user and system time of
/// every process in it and of the descendants it reaped), all from one scan of `/proc`.
pub fn tree_cpu_times<const N: usize>(roots: [u32; N]) -> [Result<Duration, TreeCpuError>; N] {
    trees_under(Path::new("/proc"), roots)
}

/// [`tree_cpu_times`] over the `/proc`-like directory `proc_dir`.
fn trees_under<const N: usize>(
    proc_dir: &Path,
    roots: [u32; N],
) -> [Result<Duration, TreeCpuError>; N] {
    let table = ProcessTable::scan(proc_dir);
    let per_second = ticks_per_second();
    roots.map(|root| {
        let ticks = table.as_ref().map_err(Clone::clone)?.tree_ticks(root)?;
        Ok(Duration::from_secs(ticks / per_second)
            + Duration::from_nanos((ticks % per_second) * 1_000_000_000 / per_second))
    })
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    use std::time::Instant;

    use super::*;

    #[test]
    fn stat_is_parsed_after_the_last_parenthesis() {
        let line = "4242 (a) b (c)) S 17 4242 4242 0 -1 4194304 100 0 0 0 \
                    250 30 7 3 20 0 1 0 100 1000 10 18446744073709551615";
        assert_eq!(
            parse_stat(line),
            Some(ProcStat {
                ppid: 17,
                ticks: 290
            })
        );
        assert_eq!(parse_stat("4242 (cut) S 17 4242"), None);
        assert_eq!(parse_stat("no parentheses"), None);
        assert_eq!(parse_stat(""), None);
    }

    #[test]
    fn a_tree_sums_its_descendants_and_nothing_else() {
        let mut table = ProcessTable::default();
        for (pid, ppid, ticks) in [
            (1, 0, 1000),
            (10, 1, 5),
            (11, 10, 7),
            (12, 11, 11),
            (20, 1, 500),
        ] {
            table.insert(pid, ProcStat { ppid, ticks });
        }
        assert_eq!(table.tree_ticks(10), Ok(23));
        assert_eq!(table.tree_ticks(12), Ok(11));
        assert_eq!(table.tree_ticks(99), Err(TreeCpuError::Vanished(99)));
        // A loop of parents (pids reused during a scan) ends the walk instead of hanging it.
        table.insert(
            1,
            ProcStat {
                ppid: 12,
                ticks: 1000,
            },
        );
        assert_eq!(table.tree_ticks(10), Ok(1523));
    }

    #[test]
    fn a_missing_proc_is_an_error_for_every_root() {
        let missing = Path::new("/nonexistent/proc");
        assert!(matches!(
            trees_under(missing, [1, 2]),
            [
                Err(TreeCpuError::ProcUnreadable(_)),
                Err(TreeCpuError::ProcUnreadable(_))
            ]
        ));
    }

    /// A real tree: `sh` whose child process (a second `sh`) spins; the reading of the outer
    /// `sh` must grow by about the child's CPU, which the outer one never uses itself.
    #[test]
    fn a_busy_child_counts_in_the_reading_of_its_parent() {
        let mut root = Command::new("sh")
            .args(["-c", "sh -c 'while :; do :; done' & wait"])
            .stdin(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        let pid = root.id();
        std::thread::sleep(Duration::from_millis(100));
        let [before] = tree_cpu_times([pid]);
        let started = Instant::now();
        std::thread::sleep(Duration::from_millis(2000));
        let [after] = tree_cpu_times([pid]);
        let wall = started.elapsed();
        let own = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|line| parse_stat(&line));
        // SAFETY: kill has no memory-safety preconditions; the group is the one spawned here.
        unsafe {
            libc::kill(-i32::try_from(pid).unwrap(), libc::SIGKILL);
        }
        let _ = root.wait();
        let grown = after.unwrap() - before.unwrap();
        // The spinner gets a share of a core even on a busy 2-core machine, and one thread
        // cannot use more than the wall time (plus a tick of rounding per reading).
        assert!(
            grown > Duration::from_millis(300) && grown <= wall + Duration::from_millis(20),
            "grew by {grown:?} in {wall:?}"
        );
        // The outer shell only waits: the growth is its child's.
        assert!(own.unwrap().ticks < 5, "the waiting shell: {own:?}");
        let [gone] = tree_cpu_times([pid]);
        assert_eq!(gone, Err(TreeCpuError::Vanished(pid)));
    }
}
