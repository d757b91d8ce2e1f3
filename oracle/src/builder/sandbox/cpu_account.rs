//! An engine's CPU account: a cgroup (version 2) of its own, entered by the engine's first
//! process before it runs the engine, so that the kernel counts the CPU of every process and
//! thread the engine ever starts, including children that exit without being waited for.
//!
//! Summing the engine's process tree in `/proc` cannot see such children: a process whose
//! parent ignores `SIGCHLD` is released at exit, and its CPU time is added to nobody. A
//! candidate could burn CPU in short-lived children during its opponent's turn and leave no
//! trace there; in a cgroup it cannot, because `cpu.stat` keeps the CPU of processes that left.
//! Making a cgroup needs a writable cgroup2 mount (the oracle as root, as in CI); elsewhere
//! there is no account and the reading falls back to the `/proc` tree.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The cgroup of one engine process, removed (its processes killed first) when dropped.
#[derive(Debug)]
pub struct CpuAccount {
    dir: PathBuf,
    entry: AccountEntry,
}

/// What the engine's first process needs to enter its account between fork and exec.
#[derive(Debug, Clone)]
pub struct AccountEntry {
    /// The account's `cgroup.procs`, as a C path.
    procs: CString,
}

/// Where the accounts live: `coherent-oracle/` in the cgroup2 mount, when the oracle may write
/// there; decided once per process.
fn accounts_root() -> Option<&'static Path> {
    static ROOT: OnceLock<Option<PathBuf>> = OnceLock::new();
    ROOT.get_or_init(|| {
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
        let mount = cgroup2_mount(&mountinfo)?;
        let root = mount.join("coherent-oracle");
        std::fs::create_dir_all(&root).ok()?;
        remove_stale_accounts(&root);
        // The accounts get the memory controller where the machine delegates it (a pure
        // cgroup2 host); on a hybrid host it stays with cgroup v1 and this write fails.
        let _ = std::fs::write(root.join("cgroup.subtree_control"), "+memory");
        Some(root)
    })
    .as_deref()
}

/// Removes the accounts of oracle processes that are gone: one killed before it could drop its
/// accounts leaves their directories behind, and a later process that gets the same pid would
/// find its account's name taken. A directory that still holds a process is not removed (the
/// kernel refuses); nor is one whose process lives.
fn remove_stale_accounts(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let owner = name
            .to_str()
            .and_then(|name| name.split_once('-'))
            .map(|(pid, _)| pid);
        let gone = owner.is_some_and(|pid| !Path::new("/proc").join(pid).exists());
        if gone {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

/// The mount point of the cgroup2 file system in a `/proc/self/mountinfo` text.
fn cgroup2_mount(mountinfo: &str) -> Option<PathBuf> {
    mountinfo.lines().find_map(|line| {
        let (fields, filesystem) = line.split_once(" - ")?;
        (filesystem.split(' ').next() == Some("cgroup2"))
            .then(|| fields.split(' ').nth(4).map(PathBuf::from))
            .flatten()
    })
}

impl CpuAccount {
    /// Whether this machine lets the oracle open accounts (a writable cgroup2 mount): one is
    /// opened and removed again.
    #[must_use]
    pub fn available() -> bool {
        matches!(CpuAccount::open(), Ok(Some(_)))
    }

    /// A fresh, empty account; `Ok(None)` where this machine lets the oracle make none at all.
    /// Where it does, failing to make this one is an error, not a quiet fall-back to the
    /// `/proc` reading, which a candidate's unreaped children escape.
    pub fn open() -> std::io::Result<Option<CpuAccount>> {
        accounts_root().map(CpuAccount::open_in).transpose()
    }

    /// A fresh, empty account under the accounts' directory `root`.
    fn open_in(root: &Path) -> std::io::Result<CpuAccount> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let dir = root.join(name);
        // A directory of this name is left from a killed process that had this pid: empty, it
        // goes; one that cannot go is an error below.
        if dir.exists() {
            let _ = std::fs::remove_dir(&dir);
        }
        std::fs::create_dir(&dir).map_err(|error| {
            std::io::Error::new(
                error.kind(),
                format!("cannot make the CPU account {}: {error}", dir.display()),
            )
        })?;
        let procs = CString::new(dir.join("cgroup.procs").as_os_str().as_bytes())
            .map_err(std::io::Error::other)?;
        Ok(CpuAccount {
            dir,
            entry: AccountEntry { procs },
        })
    }

    /// Whether accounts can bound resident memory (`memory.max`): one is opened and removed.
    #[must_use]
    pub fn memory_limit_available() -> bool {
        matches!(CpuAccount::open(), Ok(Some(account)) if account.dir.join("memory.max").exists())
    }

    /// Bounds the resident memory of everything in the account to `bytes`, where the memory
    /// controller is there (else nothing: address space is never the measure, see
    /// `EngineLimits`); the kernel reclaims, then kills the engine, past the bound.
    pub fn limit_memory(&self, bytes: u64) -> std::io::Result<()> {
        let file = self.dir.join("memory.max");
        if !file.exists() {
            return Ok(());
        }
        std::fs::write(&file, bytes.to_string()).map_err(|error| {
            std::io::Error::new(
                error.kind(),
                format!("cannot bound memory in {}: {error}", file.display()),
            )
        })
    }

    /// Whether accounts can be frozen (`cgroup.freeze`, cgroup2 on Linux 5.2 or later): one is
    /// opened and removed.
    #[must_use]
    pub fn freezer_available() -> bool {
        matches!(CpuAccount::open(), Ok(Some(account)) if account.can_freeze())
    }

    /// Whether this account has the freezer.
    #[must_use]
    pub fn can_freeze(&self) -> bool {
        self.dir.join("cgroup.freeze").exists()
    }

    /// Freezes (`true`) or thaws every process in the account. The kernel stops each task at
    /// its next return to user space, so a spinning thread is stopped too; nothing the engine
    /// does can keep it running or see the freeze but as lost time.
    pub fn set_frozen(&self, frozen: bool) -> std::io::Result<()> {
        std::fs::write(
            self.dir.join("cgroup.freeze"),
            if frozen { "1" } else { "0" },
        )
    }

    /// The handle the engine's first process enters the account with.
    #[must_use]
    pub fn entry(&self) -> AccountEntry {
        self.entry.clone()
    }

    /// The CPU (user and system) used so far by every process that was ever in the account.
    #[must_use]
    pub fn cpu_time(&self) -> Option<Duration> {
        let stat = std::fs::read_to_string(self.dir.join("cpu.stat")).ok()?;
        let usec = stat
            .lines()
            .find_map(|line| line.strip_prefix("usage_usec "))?
            .trim()
            .parse()
            .ok()?;
        Some(Duration::from_micros(usec))
    }
}

impl AccountEntry {
    /// Moves the calling process into the account. Called between fork and exec, so it only
    /// opens, writes and closes (all async-signal-safe).
    pub fn enter(&self) -> std::io::Result<()> {
        // SAFETY: `procs` is a valid NUL-terminated path; the buffer outlives the write.
        unsafe {
            let fd = libc::open(self.procs.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            // "0" is the writing process itself.
            let written = libc::write(fd, b"0".as_ptr().cast(), 1);
            let error = std::io::Error::last_os_error();
            libc::close(fd);
            if written != 1 {
                return Err(error);
            }
        }
        Ok(())
    }
}

impl Drop for CpuAccount {
    fn drop(&mut self) {
        // A cgroup is removable only once empty: kill what the engine left behind (a frozen
        // task dies of SIGKILL too), then give the kernel a moment to release it.
        let _ = std::fs::write(self.dir.join("cgroup.kill"), "1");
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};

    use super::*;

    #[test]
    fn the_cgroup2_mount_is_found_among_the_mounts() {
        let mountinfo = "\
25 1 0:22 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";
        assert_eq!(
            cgroup2_mount(mountinfo),
            Some(PathBuf::from("/sys/fs/cgroup/unified"))
        );
        assert_eq!(
            cgroup2_mount("25 1 0:22 / /x rw - ext4 /dev/sda rw\n"),
            None
        );
    }

    /// A killed oracle leaves its accounts behind; a later process with its pid found their
    /// names taken (`File exists`) and could not start an engine.
    #[test]
    fn accounts_left_by_a_gone_process_do_not_block_new_ones() {
        let root = tempfile::tempdir().unwrap();
        // Every name this process could give its next account is taken already.
        for next in 0..1000 {
            std::fs::create_dir(root.path().join(format!("{}-{next}", std::process::id())))
                .unwrap();
        }
        // `4194304` is past the kernel's largest pid: no such process lives.
        std::fs::create_dir(root.path().join("4194304-3")).unwrap();
        std::fs::create_dir(root.path().join("1-5")).unwrap();
        remove_stale_accounts(root.path());
        assert!(!root.path().join("4194304-3").exists());
        assert!(root.path().join("1-5").exists(), "pid 1 lives");
        let account = CpuAccount::open_in(root.path());
        assert!(account.is_ok(), "{account:?}");
    }

    #[test]
    fn an_account_that_cannot_be_made_is_an_error_naming_it() {
        let gone = tempfile::tempdir().unwrap().path().join("no-such-mount");
        let error = CpuAccount::open_in(&gone).unwrap_err();
        assert!(
            error.to_string().contains("cannot make the CPU account")
                && error.to_string().contains("no-such-mount"),
            "{error}"
        );
    }

    /// Issue 46, pondering in the slack: an engine that keeps searching after its answer gets
    /// nothing done while it is frozen, and carries on only once thawed (in its own next turn).
    #[test]
    fn a_frozen_account_runs_nothing_until_thawed() {
        let Ok(Some(account)) = CpuAccount::open() else {
            eprintln!("no writable cgroup2 mount here (not root?): nothing to test");
            return;
        };
        if !account.can_freeze() {
            eprintln!("no cgroup freezer here: nothing to test");
            return;
        }
        let entry = account.entry();
        // An engine that keeps searching after its answer: a spinner that never stops.
        let mut command = Command::new("sh");
        command
            .args(["-c", "while :; do :; done"])
            .stdin(Stdio::null());
        // SAFETY: the closure only opens, writes and closes (CpuAccount::enter).
        unsafe {
            command.pre_exec(move || entry.enter());
        }
        let mut spinner = command.spawn().unwrap();
        std::thread::sleep(Duration::from_millis(200));
        account.set_frozen(true).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        let frozen_at = account.cpu_time().unwrap();
        std::thread::sleep(Duration::from_millis(500));
        let still = account.cpu_time().unwrap();
        account.set_frozen(false).unwrap();
        std::thread::sleep(Duration::from_millis(300));
        let thawed = account.cpu_time().unwrap();
        let _ = spinner.kill();
        let _ = spinner.wait();
        assert!(
            still.saturating_sub(frozen_at) < Duration::from_millis(20),
            "frozen, it ran {:?}",
            still.saturating_sub(frozen_at)
        );
        assert!(
            thawed.saturating_sub(still) > Duration::from_millis(50),
            "thawed, it runs again"
        );
    }

    /// A child that ignores `SIGCHLD` and starts a spinner that exits on its own leaves nothing
    /// in `/proc`; the account still holds the spinner's CPU. The spinner does a fixed amount of
    /// work (600,000 shell loop turns, about a second of CPU here) rather than spinning for a
    /// fixed time, so a busy machine cannot starve it below the bound.
    #[test]
    fn an_unreaped_child_that_exited_still_counts() {
        let Ok(Some(account)) = CpuAccount::open() else {
            eprintln!("no writable cgroup2 mount here (not root?): nothing to test");
            return;
        };
        let entry = account.entry();
        let done = tempfile::tempdir().unwrap();
        let marker = done.path().join("spun");
        let mut command = Command::new("sh");
        command
            .args([
                "-c",
                "trap '' CHLD; \
                 sh -c 'i=0; while [ $i -lt 600000 ]; do i=$((i+1)); done; : > \"$1\"' spin \"$1\" & \
                 while [ ! -e \"$1\" ]; do sleep 0.05; done",
                "parent",
            ])
            .arg(&marker)
            .stdin(Stdio::null());
        // SAFETY: the closure only opens, writes and closes (CpuAccount::enter).
        unsafe {
            command.pre_exec(move || entry.enter());
        }
        let status = command.status().unwrap();
        assert!(status.success());
        let cpu = account.cpu_time().expect("cpu.stat reads");
        assert!(cpu > Duration::from_millis(300), "{cpu:?}");
    }
}
