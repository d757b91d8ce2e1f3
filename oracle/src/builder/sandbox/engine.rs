//! Confining one engine process: a match game's player, `bench`, a proof player, a tuning duel.
//!
//! An engine is untrusted code that plays against another engine on the same machine, so
//! under bubblewrap each process gets its own user, PID, IPC, UTS and network namespaces: it
//! sees no other process (nothing to signal, stop or trace), no network, and a file system of
//! only an empty private `/tmp`, a private read-only copy of its binary at [`ENGINE_PATH`] (and
//! of each file a wrapper engine names with `bind=`) and, read-only, the dynamic loader and the
//! shared libraries those binaries name ([`super::libraries`]), and [`PRLIMIT`] with its own: no
//! other program of the host, so an engine cannot hand its games to a chess engine installed on
//! the machine. A script names its interpreter and runs what it likes, so it sees the system's
//! programs as a build does ([`super::system_mounts`]); `verify` plays only compiled engines.
//! `--out`, the oracle, the other engine, the cache and the repository are not mounted. The copy
//! is taken when the process starts, so replacing the file the caller named later changes nothing. When
//! the oracle runs as root the sandbox is entered as `nobody`, because the kernel never applies
//! the process-count limit to root.
//!
//! The process-count limit is set inside the sandbox (by `prlimit`), where the kernel counts
//! only the sandbox's own user namespace: one engine's threads never eat into another's.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::cpu_account::CpuAccount;
use super::libraries;
use super::{UNPRIVILEGED_ID, closed_to_sandbox_user, is_root, run_logged, tool};

/// Where the engine's binary appears inside the sandbox.
pub const ENGINE_PATH: &str = "/engine";

/// The `prlimit` that sets the process-count limit inside the sandbox, mounted into every
/// engine's sandbox with its libraries.
const PRLIMIT: &str = "/usr/bin/prlimit";

/// How engine processes are confined on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EngineIsolation {
    /// Each engine in its own bubblewrap sandbox (module documentation).
    Bubblewrap,
    /// A plain child process of the oracle with rlimits (no namespaces): bubblewrap is
    /// missing or cannot create the namespaces here.
    None,
}

/// Resource limits of one engine process (the core-file size is always 0).
///
/// Memory is bounded by what the engine keeps resident (its account's `memory.max`), never by
/// address space: an engine that reserves without touching, as Ethereal 12 does with the stack
/// of every search thread it never joins, runs out of address space within a few games, and
/// its next `go` goes unanswered (docs/runner-parity.md tells the case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct EngineLimits {
    /// Resident memory in bytes (cgroup `memory.max`), where the machine has the memory
    /// controller for the engine's account.
    pub memory_bytes: u64,
    /// Largest file it may write, in bytes (`RLIMIT_FSIZE`; only its private `/tmp` is writable).
    pub file_size_bytes: u64,
    /// Processes and threads inside the sandbox, its init process included (`RLIMIT_NPROC`).
    pub processes: u64,
    /// CPU seconds (`RLIMIT_CPU`); `None` for players, which live for a whole match.
    pub cpu_seconds: Option<u64>,
}

impl EngineLimits {
    /// A player: single-threaded UCI engines need a reader and a search thread; 16 leaves room
    /// for a wrapper process and stops a candidate from spawning threads by the hundred to
    /// starve its opponent's clock.
    pub const PLAY: EngineLimits = EngineLimits {
        memory_bytes: 4 << 30,
        file_size_bytes: 64 << 20,
        processes: 16,
        cpu_seconds: None,
    };

    /// `bench`: the player's limits and ten minutes of CPU.
    pub const BENCH: EngineLimits = EngineLimits {
        cpu_seconds: Some(600),
        ..EngineLimits::PLAY
    };
}

/// A confined engine command, ready to get its stdio and be spawned.
#[derive(Debug)]
pub struct Confined {
    /// The command (the sandbox tool, or the engine itself without a sandbox).
    pub command: Command,
    /// The directory holding the private copy of the binary; removed when dropped, so it must
    /// outlive the process.
    pub scratch: tempfile::TempDir,
    /// The process's CPU account, where the machine allows one; it must outlive the process.
    pub account: Option<CpuAccount>,
}

/// The isolation of this process's engines, decided once.
static DETECTED: OnceLock<EngineIsolation> = OnceLock::new();

impl EngineIsolation {
    /// Runs every engine of this process without a sandbox: an ad-hoc command's explicit
    /// choice, made before its first engine starts (`verify` never makes it).
    pub fn choose_none() {
        let _ = DETECTED.set(EngineIsolation::None);
    }

    /// The strongest isolation this machine offers, probed once per process by running
    /// `/bin/true` exactly as an engine would run (unless [`EngineIsolation::choose_none`]).
    pub fn detect() -> EngineIsolation {
        *DETECTED.get_or_init(|| {
            let probe = || -> std::io::Result<bool> {
                let mut confined = EngineIsolation::Bubblewrap.confine(
                    Path::new("/bin/true"),
                    &[],
                    &[],
                    EngineLimits::PLAY,
                )?;
                confined.command.stdin(Stdio::null());
                let ending = run_logged(
                    &mut confined.command,
                    Path::new("/dev/null"),
                    Duration::from_secs(30),
                )
                .map_err(std::io::Error::other)?;
                Ok(ending.succeeded())
            };
            let installed =
                tool("bwrap").is_absolute() && (!is_root() || tool("setpriv").is_absolute());
            if installed && matches!(probe(), Ok(true)) {
                EngineIsolation::Bubblewrap
            } else {
                EngineIsolation::None
            }
        })
    }

    /// What this isolation does, for `binding.json`, the entry and the report.
    pub fn describe(self) -> String {
        let limits = EngineLimits::PLAY;
        let memory = if CpuAccount::memory_limit_available() {
            format!("resident memory {} MiB (cgroup)", limits.memory_bytes >> 20)
        } else {
            "resident memory unbounded (no cgroup memory controller)".to_string()
        };
        let turn = if CpuAccount::freezer_available() {
            "frozen outside its turn (cgroup.freeze), CPU in pings charged to its clock"
        } else {
            "CPU outside its turn charged by the per-game CPU rule (no cgroup freezer)"
        };
        let rlimits = format!(
            "{turn}; {memory}; rlimits fsize {} MiB, core 0",
            limits.file_size_bytes >> 20
        );
        match self {
            EngineIsolation::Bubblewrap => format!(
                "{}: each engine in user, pid, ipc, uts, net namespaces; a read-only copy of its \
                 binary at {ENGINE_PATH}, read-only only the loader and the libraries it names \
                 (a script: the system's programs), private empty /tmp; {rlimits}, nproc {}",
                super::bubblewrap_version(),
                limits.processes
            ),
            EngineIsolation::None => {
                format!("none (no sandbox): engines run as plain child processes; {rlimits}")
            }
        }
    }

    /// The command that runs `binary` with `args` under this isolation: a private read-only
    /// copy of the binary, of the host only what it needs to start (a compiled binary: its
    /// loader and libraries), the environment emptied but for `PATH`, the limits applied.
    /// `read_only` files (a wrapper engine's inner engine; never the other player) appear as
    /// private read-only copies at their own paths, `read_only` directories read-only as they
    /// are; a directory the sandbox user cannot read is refused here, naming it.
    pub fn confine(
        self,
        binary: &Path,
        args: &[String],
        read_only: &[PathBuf],
        limits: EngineLimits,
    ) -> std::io::Result<Confined> {
        let (scratch, compiled) = private_copy(binary)?;
        let copy = scratch.path().join("engine");
        let (system, mounts) = match self {
            EngineIsolation::Bubblewrap => {
                let system = if compiled {
                    compiled_view(binary, read_only)?
                } else {
                    super::system_mounts()
                };
                (system, read_only_mounts(scratch.path(), read_only)?)
            }
            EngineIsolation::None => (Vec::new(), Vec::new()),
        };
        let mut command = match self {
            EngineIsolation::Bubblewrap => {
                let mut command = if is_root() {
                    let id = UNPRIVILEGED_ID.to_string();
                    let mut command = Command::new(tool("setpriv"));
                    command.args(["--reuid", &id, "--regid", &id, "--clear-groups"]);
                    command.args(["--no-new-privs", "--"]).arg(tool("bwrap"));
                    command
                } else {
                    Command::new(tool("bwrap"))
                };
                command.args(bubblewrap_args(&copy, system, &mounts));
                command
                    .arg(PRLIMIT)
                    .arg(format!("--nproc={}", limits.processes))
                    .arg("--")
                    .arg(ENGINE_PATH)
                    .args(args);
                command
            }
            EngineIsolation::None => {
                let mut command = Command::new(&copy);
                command.args(args).current_dir(scratch.path());
                command
            }
        };
        command
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .process_group(0);
        let account = CpuAccount::open()?;
        if let Some(account) = &account {
            account.limit_memory(limits.memory_bytes)?;
        }
        let entry = account.as_ref().map(CpuAccount::entry);
        // SAFETY: the closure runs between fork and exec and only calls setrlimit and the
        // account's open/write/close, which are async-signal-safe; it touches no memory shared
        // with other threads.
        unsafe {
            command.pre_exec(move || {
                if let Some(entry) = &entry {
                    entry.enter()?;
                }
                apply_limits(&limits)
            });
        }
        Ok(Confined {
            command,
            scratch,
            account,
        })
    }
}

/// What a compiled engine sees of the host: the loader and the libraries named by its binary,
/// by each compiled file bound with it and by [`PRLIMIT`], and `prlimit` itself; then its own
/// devices, `/proc` and `/tmp`.
fn compiled_view(binary: &Path, read_only: &[PathBuf]) -> std::io::Result<Vec<OsString>> {
    let mut executables = vec![binary, Path::new(PRLIMIT)];
    for path in read_only {
        if path.is_file() && libraries::is_elf_file(path)? {
            executables.push(path);
        }
    }
    let mut files = libraries::runtime_files(&executables)?;
    files.insert(PathBuf::from(PRLIMIT));
    let mut args = libraries::mounts(&files)?;
    args.extend(super::private_mounts());
    Ok(args)
}

/// The bubblewrap arguments for one engine whose private copy is `copy`: the host's `system`
/// mounts, then each `mounts` pair, a host path and where it appears read-only inside.
fn bubblewrap_args(
    copy: &Path,
    system: Vec<OsString>,
    mounts: &[(PathBuf, PathBuf)],
) -> Vec<OsString> {
    // `--as-pid-1`: the engine itself is the namespace's init, so bubblewrap waits for it
    // directly and its CPU time reaches the runner's `RUSAGE_CHILDREN` (behind bubblewrap's own
    // init it was lost, and the engine CPU share read 0); when it exits, everything it started
    // in the namespace dies with it.
    let mut args: Vec<OsString> = [
        "--die-with-parent",
        "--new-session",
        "--unshare-user",
        "--unshare-pid",
        "--as-pid-1",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-net",
        "--unshare-cgroup-try",
    ]
    .into_iter()
    .map(OsString::from)
    .collect();
    args.extend(system);
    args.extend([
        OsString::from("--ro-bind"),
        copy.as_os_str().to_owned(),
        OsString::from(ENGINE_PATH),
    ]);
    for (source, destination) in mounts {
        args.extend([
            OsString::from("--ro-bind"),
            source.as_os_str().to_owned(),
            destination.as_os_str().to_owned(),
        ]);
    }
    args.extend(["--chdir", "/tmp", "--"].map(OsString::from));
    args
}

/// A fresh directory (readable by the sandbox user) holding a read-only copy of `binary`, and
/// whether the binary is compiled (ELF) rather than a script.
///
/// A file that could not be executed directly is refused here, on the oracle's side: inside
/// the sandbox the failed `exec` would look like an engine that disconnected.
fn private_copy(binary: &Path) -> std::io::Result<(tempfile::TempDir, bool)> {
    use std::io::Read;
    use std::os::unix::fs::PermissionsExt;
    let mut file = std::fs::File::open(binary)?;
    if file.metadata()?.permissions().mode() & 0o111 == 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            "not executable",
        ));
    }
    let mut magic = [0_u8; 4];
    let read = file.read(&mut magic)?;
    let compiled = libraries::is_elf(&magic[..read]);
    if !(compiled || magic[..read].starts_with(b"#!")) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "neither an ELF executable nor a script",
        ));
    }
    let scratch = tempfile::Builder::new()
        .prefix("oracle-engine-")
        .tempdir()?;
    let copy = scratch.path().join("engine");
    std::fs::copy(binary, &copy)?;
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o555))?;
    std::fs::set_permissions(scratch.path(), std::fs::Permissions::from_mode(0o755))?;
    Ok((scratch, compiled))
}

/// The read-only mounts of `read_only`: each file copied into `scratch` (its mode kept, made
/// read-only) and mounted from there at its own path, each directory mounted as it is.
///
/// The copy is what makes a file reachable when the oracle runs as root: bubblewrap then runs
/// as `nobody`, which cannot open a path under a private directory (a clone in a `mktemp -d`
/// folder, or under `/root`), and the inner engine would die silently before `uciok`.
fn read_only_mounts(
    scratch: &Path,
    read_only: &[PathBuf],
) -> std::io::Result<Vec<(PathBuf, PathBuf)>> {
    use std::os::unix::fs::PermissionsExt;
    let mut mounts = Vec::with_capacity(read_only.len());
    for (index, path) in read_only.iter().enumerate() {
        let metadata = std::fs::metadata(path)?;
        if metadata.is_dir() {
            let closed = if is_root() {
                closed_to_sandbox_user(path, 0o005, |_| false)?
            } else {
                None
            };
            if let Some((closed, mode)) = closed {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::PermissionDenied,
                    format!(
                        "bind={}: the sandbox user (uid {UNPRIVILEGED_ID}) cannot read it: {} \
                         has mode {mode:o}; make it world-readable or bind files",
                        path.display(),
                        closed.display()
                    ),
                ));
            }
            mounts.push((path.clone(), path.clone()));
        } else {
            let copy = scratch.join(format!("bound-{index}"));
            std::fs::copy(path, &copy)?;
            let mode = metadata.permissions().mode() & 0o555 | 0o444;
            std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(mode))?;
            mounts.push((copy, path.clone()));
        }
    }
    Ok(mounts)
}

fn apply_limits(limits: &EngineLimits) -> std::io::Result<()> {
    let mut pairs = vec![
        (libc::RLIMIT_FSIZE, limits.file_size_bytes),
        (libc::RLIMIT_CORE, 0),
    ];
    if let Some(seconds) = limits.cpu_seconds {
        pairs.push((libc::RLIMIT_CPU, seconds));
    }
    super::set_rlimits(&pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_compiled_engine_is_shown_only_its_copy_prlimit_and_their_libraries() {
        let system = compiled_view(Path::new("/bin/true"), &[]).unwrap();
        let args: Vec<String> = bubblewrap_args(Path::new("/s/engine"), system, &[])
            .iter()
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect();
        for flag in [
            "--unshare-user",
            "--unshare-pid",
            "--as-pid-1",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-net",
            "--die-with-parent",
            "--new-session",
        ] {
            assert!(args.iter().any(|arg| arg == flag), "{flag} missing");
        }
        let bound: Vec<&str> = args
            .windows(2)
            .filter(|pair| pair[0] == "--ro-bind" || pair[0] == "--bind")
            .map(|pair| pair[1].as_str())
            .collect();
        let library = |path: &str| {
            let name = Path::new(path).file_name().unwrap().to_string_lossy();
            path.starts_with("/usr/lib") && name.contains(".so")
        };
        assert!(
            bound.contains(&"/s/engine") && bound.contains(&PRLIMIT),
            "{bound:?}"
        );
        assert!(
            bound
                .iter()
                .all(|path| *path == "/s/engine" || *path == PRLIMIT || library(path)),
            "{bound:?}"
        );
        assert!(
            !args.iter().any(|arg| arg == "--bind"),
            "nothing is writable: {args:?}"
        );
    }

    /// Runs `script` with `/bin/sh` as a sandboxed engine; how it ended and what it printed, or
    /// `None` (said on stderr) where bubblewrap cannot create the namespaces.
    fn run_confined_script(script: &str) -> Option<(super::super::ProcessEnding, String)> {
        run_confined_script_with(script, &[]).map(|result| result.unwrap())
    }

    /// [`run_confined_script`] with `read_only` mounted; `Err` if the sandbox refused them.
    fn run_confined_script_with(
        script: &str,
        read_only: &[PathBuf],
    ) -> Option<std::io::Result<(super::super::ProcessEnding, String)>> {
        run_confined(
            Path::new("/bin/sh"),
            &["-c".to_string(), script.to_string()],
            read_only,
        )
    }

    /// Runs `binary` with `args` as a sandboxed engine, `read_only` mounted; how it ended and
    /// what it printed, `Err` if the sandbox refused, `None` where bubblewrap cannot run.
    fn run_confined(
        binary: &Path,
        args: &[String],
        read_only: &[PathBuf],
    ) -> Option<std::io::Result<(super::super::ProcessEnding, String)>> {
        if EngineIsolation::detect() != EngineIsolation::Bubblewrap {
            eprintln!("SKIPPED: bubblewrap cannot create the namespaces on this machine");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        let confined =
            EngineIsolation::Bubblewrap.confine(binary, args, read_only, EngineLimits::PLAY);
        let mut confined = match confined {
            Ok(confined) => confined,
            Err(error) => return Some(Err(error)),
        };
        confined.command.stdin(Stdio::null());
        let ending = run_logged(&mut confined.command, &log, Duration::from_secs(30)).unwrap();
        Some(Ok((ending, std::fs::read_to_string(&log).unwrap())))
    }

    /// A temporary directory only its owner can enter, as `mktemp -d` makes it.
    fn private_tempdir() -> tempfile::TempDir {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        dir
    }

    #[test]
    fn a_bound_file_under_a_private_directory_is_readable_inside() {
        // As root, the sandbox user could not open a file under a 0700 directory (`mktemp -d`),
        // and a wrapper's inner engine died before `uciok`.
        let private = private_tempdir();
        let inner = private.path().join("inner.sh");
        std::fs::write(&inner, "echo inner engine answered\n").unwrap();
        // `.`: the shell's builtin, for the sandbox holds no other shell.
        let script = format!(". {}", inner.display());
        let Some(result) = run_confined_script_with(&script, std::slice::from_ref(&inner)) else {
            return;
        };
        let (ending, output) = result.unwrap();
        assert!(ending.succeeded(), "{ending:?}: {output}");
        assert_eq!(output.trim(), "inner engine answered");
    }

    #[test]
    fn a_bound_directory_the_sandbox_user_cannot_read_is_refused_by_name() {
        let private = private_tempdir();
        let dir = private.path().join("tables");
        std::fs::create_dir(&dir).unwrap();
        let Some(result) = run_confined_script_with("true", std::slice::from_ref(&dir)) else {
            return;
        };
        if is_root() {
            let error = result.unwrap_err().to_string();
            assert!(error.contains(&dir.display().to_string()), "{error}");
            assert!(error.contains("cannot read"), "{error}");
        } else {
            assert!(
                result.is_ok(),
                "the caller's own directory is readable by the caller"
            );
        }
    }

    #[test]
    fn an_engine_in_the_sandbox_sees_no_other_process_and_no_oracle_file() {
        // Shell builtins only: a compiled engine's sandbox holds no `ls`, `grep` or `id`.
        let script = "n=0; for p in /proc/[0-9]*; do n=$((n+1)); done; echo $n; \
                      for f in /* /tmp/*; do echo ${f#/}; done; \
                      while read key value rest; do [ $key = Uid: ] && echo uid $value; \
                      done < /proc/self/status; true";
        let Some((ending, output)) = run_confined_script(script) else {
            return;
        };
        assert!(ending.succeeded(), "{ending:?}");
        let lines: Vec<&str> = output.lines().collect();
        // The shell alone, the namespace's init.
        let processes: u32 = lines[0].parse().unwrap();
        assert!(processes <= 2, "{output}");
        assert!(
            !output.contains("work") && !output.contains("root"),
            "{output}"
        );
        assert!(
            lines.contains(&"engine") && lines.contains(&"usr"),
            "{output}"
        );
        assert!(lines.contains(&"tmp/*"), "/tmp is empty: {output}");
        assert!(!lines.contains(&"uid 0"), "{output}");
    }

    #[test]
    fn a_compiled_engine_can_start_no_program_of_the_host() {
        // Before, the host's whole `/usr` was there: a candidate could start an engine
        // installed on the machine (Debian's `/usr/games/stockfish`) and play its moves.
        let script = "for p in /usr/bin/* /usr/games/* /usr/local/bin/* /bin/*; do echo $p; done; \
                      /usr/games/stockfish; echo status $?";
        let Some((ending, output)) = run_confined_script(script) else {
            return;
        };
        assert!(ending.succeeded(), "{ending:?}: {output}");
        let lines: Vec<&str> = output.lines().collect();
        assert_eq!(
            lines[..4],
            [PRLIMIT, "/usr/games/*", "/usr/local/bin/*", "/bin/*"],
            "{output}"
        );
        assert!(lines.contains(&"status 127"), "{output}");
    }

    #[test]
    fn a_script_engine_names_its_interpreter_and_so_sees_the_system() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("wrapper");
        std::fs::write(
            &script,
            "#!/bin/sh\ntest -x /usr/bin/env && echo env is there\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let Some(result) = run_confined(&script, &[], &[]) else {
            return;
        };
        let (ending, output) = result.unwrap();
        assert!(ending.succeeded(), "{ending:?}: {output}");
        assert_eq!(output.trim(), "env is there");
    }

    #[test]
    fn the_process_limit_stops_a_thread_storm() {
        // `sleep`, bound as a wrapper's inner engine would be, brings its own libraries.
        let script = "i=0; while [ $i -lt 40 ]; do sleep 5 & i=$((i+1)); done; echo started";
        let sleep = PathBuf::from("/usr/bin/sleep");
        let Some(result) = run_confined_script_with(script, std::slice::from_ref(&sleep)) else {
            return;
        };
        let (ending, output) = result.unwrap();
        assert!(
            !ending.succeeded() || !output.contains("started"),
            "40 background processes were allowed: {output}"
        );
    }
}
