//! Running untrusted code (a candidate's `build.rs`, proc-macros, the engine itself).
//!
//! Three levels, the strongest the machine offers is taken (docs/architecture.md):
//! - `bubblewrap`: new network, PID, IPC and UTS namespaces; of the host's files only the
//!   toolchain's parts of `/usr` (read-only; no `/usr/games`, no `/usr/local`) and the directories the caller names (the toolchain and the exported tree
//!   read-only, the build directories writable); and — when the oracle runs as root — the
//!   command itself runs as `nobody`, because the kernel never applies the process-count limit
//!   to root;
//! - `unshare -n`: only the network is cut;
//! - none: only the environment scrub and the limits below.
//!
//! Every level applies rlimits (CPU time per process, address space, file size, processes) and a
//! wall-time limit that kills the whole process group. Engines (players, `bench`) are confined
//! more tightly, one sandbox per process: [`engine`].

pub mod cpu_account;
pub mod engine;
pub mod libraries;

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;

/// The user id the sandboxed command runs as when the oracle itself runs as root.
pub const UNPRIVILEGED_ID: u32 = 65_534;

/// How strongly untrusted commands are isolated on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Isolation {
    /// bubblewrap: no network, read-only file system except named directories.
    Bubblewrap,
    /// `unshare -n`: no network, file system unrestricted.
    UnshareNet,
    /// Neither tool works here: environment scrub and rlimits only.
    None,
}

impl Isolation {
    /// Probes the levels in order of strength by running `/bin/true` exactly as a real job
    /// would run (same mounts, same user switch), and takes the first that works.
    #[must_use]
    pub fn detect() -> Self {
        let probe = |isolation: Self| {
            let sandbox = Sandbox {
                isolation,
                limits: Limits::engine(),
            };
            let job = Job {
                program: "/bin/true".into(),
                args: Vec::new(),
                env: Vec::new(),
                cwd: "/".into(),
                writable: Vec::new(),
                read_only: Vec::new(),
                log: "/dev/null".into(),
            };
            // A tool missing from the oracle's own PATH counts as missing, even where the
            // job's (default) PATH would find one.
            let installed = match isolation {
                Self::Bubblewrap => tool("bwrap").is_absolute(),
                Self::UnshareNet => tool("unshare").is_absolute(),
                Self::None => true,
            };
            installed && sandbox.run(&job).is_ok_and(|ending| ending.succeeded())
        };
        [Self::Bubblewrap, Self::UnshareNet]
            .into_iter()
            .find(|isolation| probe(*isolation))
            .unwrap_or(Self::None)
    }

    /// Whether the command cannot reach the network.
    #[must_use]
    pub fn cuts_network(self) -> bool {
        self != Self::None
    }

    /// Whether writes outside the named directories fail.
    #[must_use]
    pub fn confines_writes(self) -> bool {
        self == Self::Bubblewrap
    }

    /// What this level does, for `binding.json`, the entry and the report.
    #[must_use]
    pub fn describe(self) -> String {
        match self {
            Self::Bubblewrap => format!(
                "{}: pid, ipc, uts, net namespaces; only /usr without games and local \
                 programs, the toolchain and the tree read-only, writes only to the build directories; rlimits cpu, as, fsize, nproc",
                bubblewrap_version()
            ),
            Self::UnshareNet => "unshare -n (no sandbox): network cut only; rlimits".into(),
            Self::None => "none (no sandbox): environment scrub and rlimits only".into(),
        }
    }
}

/// `bubblewrap 0.x.y` as the installed tool reports it (`bubblewrap` when it does not say).
fn bubblewrap_version() -> String {
    Command::new(tool("bwrap"))
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()
        .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_owned())
        .filter(|version| !version.is_empty())
        .unwrap_or_else(|| "bubblewrap".into())
}

/// Resource limits for one sandboxed command and everything it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Limits {
    /// CPU seconds per process (`RLIMIT_CPU`).
    pub cpu_seconds: u64,
    /// Virtual memory per process in bytes (`RLIMIT_AS`).
    pub address_space_bytes: u64,
    /// Largest file a process may write, in bytes (`RLIMIT_FSIZE`).
    pub file_size_bytes: u64,
    /// Processes and threads of the sandbox user (`RLIMIT_NPROC`; ignored by the kernel for root).
    pub processes: u64,
    /// Wall-clock limit for the whole command.
    pub wall_time: Duration,
}

impl Limits {
    /// Limits for a release build with LTO of a crate the size of the engine on 2 cores.
    #[must_use]
    pub fn build() -> Self {
        Self {
            cpu_seconds: 1_800,
            address_space_bytes: 8 << 30,
            file_size_bytes: 1 << 30,
            processes: 512,
            wall_time: Duration::from_secs(1_800),
        }
    }

    /// Limits for a short command such as the isolation probe.
    #[must_use]
    pub fn engine() -> Self {
        Self {
            cpu_seconds: 600,
            address_space_bytes: 4 << 30,
            file_size_bytes: 64 << 20,
            processes: 64,
            wall_time: Duration::from_secs(600),
        }
    }
}

/// One command to run in the sandbox.
#[derive(Debug, Clone)]
pub struct Job {
    /// Program to run (absolute path: the sandbox's `PATH` is the caller's choice).
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// The complete environment: nothing of the oracle's own is inherited.
    pub env: Vec<(OsString, OsString)>,
    /// Working directory.
    pub cwd: PathBuf,
    /// Directories the command may write (made writable for the unprivileged user).
    pub writable: Vec<PathBuf>,
    /// Directories mounted read-only at `(source, destination)`, after the writable ones.
    pub read_only: Vec<(PathBuf, PathBuf)>,
    /// File that receives stdout and stderr.
    pub log: PathBuf,
}

/// How a sandboxed command ended.
#[derive(Debug)]
pub enum ProcessEnding {
    /// It exited by itself with this status.
    Exited(ExitStatus),
    /// The wall-time limit killed it.
    TimedOut(Duration),
}

impl ProcessEnding {
    /// Whether the command exited by itself with status 0.
    #[must_use]
    pub fn succeeded(&self) -> bool {
        matches!(self, Self::Exited(status) if status.success())
    }
}

/// Why a sandboxed command could not be run at all.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The log file could not be created.
    #[error("creating log {path}: {source}")]
    Log {
        /// The log path.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Handing a writable directory to the unprivileged user failed.
    #[error("making {path} writable for the sandbox user: {source}")]
    Chown {
        /// The directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The process could not be started or waited for.
    #[error("running {program}: {source}")]
    Spawn {
        /// The program (the sandbox tool or the command itself).
        program: String,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// A directory or file a sandboxed build needs could not be prepared.
#[derive(Debug, thiserror::Error)]
#[error("preparing {path}: {source}")]
pub struct PrepareError {
    /// The path at fault.
    pub path: PathBuf,
    /// The I/O error.
    pub source: std::io::Error,
}

impl PrepareError {
    /// The error that preparing `path` failed with `source`, for `map_err`.
    pub fn at(path: &Path) -> impl FnOnce(std::io::Error) -> Self + '_ {
        move |source| Self {
            path: path.to_owned(),
            source,
        }
    }
}

/// Creates `dir` and its parents for a build; a failure names it.
pub fn create_build_dir(dir: &Path) -> Result<(), PrepareError> {
    std::fs::create_dir_all(dir).map_err(PrepareError::at(dir))
}

/// Runs commands at one isolation level with one set of limits.
#[derive(Debug, Clone, Copy)]
pub struct Sandbox {
    /// The isolation level in use.
    pub isolation: Isolation,
    /// The limits applied to every command.
    pub limits: Limits,
}

impl Sandbox {
    /// A sandbox at the strongest level this machine offers.
    #[must_use]
    pub fn detect(limits: Limits) -> Self {
        Self {
            isolation: Isolation::detect(),
            limits,
        }
    }

    /// Runs `job` to completion or until the wall-time limit, stdout and stderr into its log.
    pub fn run(&self, job: &Job) -> Result<ProcessEnding, SandboxError> {
        let drop_root = self.isolation == Isolation::Bubblewrap && is_root();
        if drop_root {
            for dir in &job.writable {
                std::os::unix::fs::chown(dir, Some(UNPRIVILEGED_ID), Some(UNPRIVILEGED_ID))
                    .map_err(|source| SandboxError::Chown {
                        path: dir.clone(),
                        source,
                    })?;
            }
        }
        let mut command = self.command(job, drop_root);
        command
            .env_clear()
            .envs(job.env.iter().map(|(key, value)| (key, value)))
            .current_dir(&job.cwd)
            .stdin(Stdio::null())
            .process_group(0);
        let limits = self.limits;
        // SAFETY: the closure runs between fork and exec and only calls setrlimit, which is
        // async-signal-safe; it touches no memory shared with other threads.
        unsafe {
            command.pre_exec(move || apply_limits(&limits));
        }
        run_logged(&mut command, &job.log, self.limits.wall_time)
    }

    fn command(&self, job: &Job, drop_root: bool) -> Command {
        match self.isolation {
            Isolation::Bubblewrap => {
                let mut command = Command::new(tool("bwrap"));
                command.args(bubblewrap_args(job));
                if drop_root {
                    let id = UNPRIVILEGED_ID.to_string();
                    command.arg(tool("setpriv"));
                    command.args(["--reuid", &id, "--regid", &id, "--clear-groups"]);
                    command.args(["--no-new-privs", "--"]);
                }
                command.arg(&job.program).args(&job.args);
                command
            }
            Isolation::UnshareNet => {
                let mut command = Command::new(tool("unshare"));
                command.args(["-n", "--"]).arg(&job.program).args(&job.args);
                command
            }
            Isolation::None => {
                let mut command = Command::new(&job.program);
                command.args(&job.args);
                command
            }
        }
    }
}

/// The parts of `/usr` a build sees: the system's compilers, tools, libraries and headers.
/// Not `/usr/games` (where Debian installs its chess engines) or `/usr/local` (programs
/// installed by hand): no toolchain needs them, and a build could compile an engine from there
/// into the candidate (`include_bytes!`), whose games would then depend on a file no record names.
const BUILD_USR: [&str; 8] = [
    "bin", "include", "lib", "lib32", "lib64", "libexec", "sbin", "share",
];

/// Directories inside [`BUILD_USR`] that hold games' data, shown empty.
const HIDDEN_USR: [&str; 2] = ["/usr/lib/games", "/usr/share/games"];

/// The host a build sees of the system: the toolchain's parts of `/usr` read-only
/// ([`BUILD_USR`]) and the merged-/usr links through which the loader and the libraries are
/// reached; nothing of `/etc`, `/home`, `/root` or any other host file. A compiled engine sees
/// far less ([`engine`]: its own libraries only).
pub(crate) fn system_mounts() -> Vec<OsString> {
    // bubblewrap would create `/usr` as the mount point of its parts with mode 0700, which the
    // unprivileged user cannot cross.
    let mut args: Vec<OsString> = ["--perms", "0755", "--dir", "/usr"]
        .map(OsString::from)
        .to_vec();
    for dir in BUILD_USR {
        let host = Path::new("/usr").join(dir);
        if host.is_dir() {
            args.extend([OsString::from("--ro-bind"), host.clone().into_os_string()]);
            args.push(host.into_os_string());
        }
    }
    for dir in HIDDEN_USR {
        if Path::new(dir).is_dir() {
            args.extend(["--tmpfs", dir].map(OsString::from));
        }
    }
    for dir in ["bin", "lib", "lib32", "lib64", "sbin"] {
        let host = Path::new("/").join(dir);
        if let Ok(target) = std::fs::read_link(&host) {
            args.extend([OsString::from("--symlink"), target.into_os_string()]);
            args.push(host.into_os_string());
        } else if host.is_dir() {
            args.extend([OsString::from("--ro-bind"), host.clone().into_os_string()]);
            args.push(host.into_os_string());
        }
    }
    args.extend(private_mounts());
    args
}

/// Whether `dir` is `/usr` or inside a part of it that [`system_mounts`] shows: there, every
/// directory already exists; elsewhere under `/usr` (a toolchain in `/usr/local`) the way to a
/// mount must be made.
fn shown_of_usr(dir: &Path) -> bool {
    dir == Path::new("/usr")
        || BUILD_USR
            .iter()
            .any(|part| dir.starts_with(Path::new("/usr").join(part)))
}

/// What every sandbox gets of its own: devices, its own `/proc` and an empty private `/tmp`.
pub(crate) fn private_mounts() -> Vec<OsString> {
    ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
        .map(OsString::from)
        .to_vec()
}

/// The machine name a build sees: one of its own for each build directory. A build whose
/// output depends on the machine's name then differs between the two copies and is refused as
/// not reproducible, instead of reproducing here and failing on every other machine.
fn build_host_name(cwd: &Path) -> String {
    use std::os::unix::ffi::OsStrExt as _;
    let digest = crate::integrity::sha256_hex(cwd.as_os_str().as_bytes());
    format!("build-{}", &digest[..12])
}

/// Where the system's compiler driver (`cc`, the linker rustc calls) is chosen on Debian:
/// symbolic links only, no data.
const COMPILER_ALTERNATIVES: &str = "/etc/alternatives";

/// The bubblewrap mount plan: the system ([`system_mounts`]) and the compiler's alternatives,
/// then the job's read-only directories (the toolchain, the exported tree) and its writable
/// ones (its build directories). No other host file is there: a build cannot compile
/// `include_str!("/some/host/file")` into the binary that the run then publishes.
fn bubblewrap_args(job: &Job) -> Vec<OsString> {
    let mut args: Vec<OsString> = [
        "--die-with-parent",
        "--unshare-net",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--new-session",
    ]
    .into_iter()
    .map(OsString::from)
    .collect();
    args.extend([
        OsString::from("--hostname"),
        build_host_name(&job.cwd).into(),
    ]);
    args.extend(system_mounts());
    let mut bind = |flag: &str, from: &OsStr, to: &Path| {
        // bubblewrap creates missing mount points with mode 0700, which `nobody` cannot cross:
        // every directory on the way is made first, open to all.
        let mut ancestors: Vec<&Path> = to
            .ancestors()
            .skip(1)
            .take_while(|dir| dir.parent().is_some() && !shown_of_usr(dir))
            .filter(|dir| *dir != Path::new("/tmp"))
            .collect();
        ancestors.reverse();
        for dir in ancestors {
            args.extend(["--perms", "0755", "--dir"].map(OsString::from));
            args.push(dir.as_os_str().to_owned());
        }
        args.extend([
            OsString::from(flag),
            from.to_owned(),
            to.as_os_str().to_owned(),
        ]);
    };
    let alternatives = Path::new(COMPILER_ALTERNATIVES);
    if alternatives.is_dir() {
        bind("--ro-bind", alternatives.as_os_str(), alternatives);
    }
    for (source, destination) in &job.read_only {
        if !job.writable.iter().any(|dir| destination.starts_with(dir)) {
            bind("--ro-bind", source.as_os_str(), destination);
        }
    }
    for dir in &job.writable {
        bind("--bind", dir.as_os_str(), dir);
    }
    for (source, destination) in &job.read_only {
        if job.writable.iter().any(|dir| destination.starts_with(dir)) {
            bind("--ro-bind", source.as_os_str(), destination);
        }
    }
    args.push("--".into());
    args
}

/// A tool's absolute path from the oracle's own `PATH` (the job's environment is the
/// candidate's and must not decide which sandbox binary runs); the bare name if not found.
fn tool(name: &str) -> PathBuf {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(name))
        .find(|path| path.is_file())
        .unwrap_or_else(|| PathBuf::from(name))
}

/// Whether the oracle runs as root, which makes bubblewrap run its jobs as [`UNPRIVILEGED_ID`].
pub(crate) fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// The first directory on the way to `dir` that the unprivileged sandbox user cannot pass, with
/// its permission bits: `dir` itself needs the "others" bits in `own` (search, and read where
/// the sandbox lists it), every directory above it the search bit. Directories for which
/// `exempt` holds are not checked. Root runs as that user inside bubblewrap, so a path under a
/// private folder (a `mktemp -d` clone, `/root`) fails there with no useful message. A relative
/// `dir` is taken from the working directory; an error names the directory it is about.
pub(crate) fn closed_to_sandbox_user(
    dir: &Path,
    own: u32,
    exempt: impl Fn(&Path) -> bool,
) -> std::io::Result<Option<(PathBuf, u32)>> {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::path::absolute(dir)?;
    for (depth, up) in dir.ancestors().enumerate() {
        if exempt(up) {
            continue;
        }
        let needed = if depth == 0 { own } else { 0o001 };
        let mode = std::fs::metadata(up)
            .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", up.display())))?
            .permissions()
            .mode();
        if mode & needed != needed {
            return Ok(Some((up.to_owned(), mode & 0o7777)));
        }
    }
    Ok(None)
}

/// Runs `command` (stdio other than stdin redirected into `log`, its own process group) to
/// completion or until `wall_time`, when its whole group is killed.
pub(crate) fn run_logged(
    command: &mut Command,
    log: &Path,
    wall_time: Duration,
) -> Result<ProcessEnding, SandboxError> {
    let log_error = |source| SandboxError::Log {
        path: log.to_owned(),
        source,
    };
    let out = File::create(log).map_err(log_error)?;
    let err = out.try_clone().map_err(log_error)?;
    command.stdout(out).stderr(err);
    let program = command.get_program().to_string_lossy().into_owned();
    let spawn_error = |source| SandboxError::Spawn {
        program: program.clone(),
        source,
    };
    let mut child = command.spawn().map_err(spawn_error)?;
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().map_err(spawn_error)? {
            return Ok(ProcessEnding::Exited(status));
        }
        if started.elapsed() >= wall_time {
            kill_group(child.id());
            child.wait().map_err(spawn_error)?;
            return Ok(ProcessEnding::TimedOut(wall_time));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn apply_limits(limits: &Limits) -> std::io::Result<()> {
    set_rlimits(&[
        (libc::RLIMIT_CPU, limits.cpu_seconds),
        (libc::RLIMIT_AS, limits.address_space_bytes),
        (libc::RLIMIT_FSIZE, limits.file_size_bytes),
        (libc::RLIMIT_NPROC, limits.processes),
    ])
}

/// Sets each `(resource, value)` as soft and hard limit (between fork and exec: setrlimit only).
fn set_rlimits(pairs: &[(libc::__rlimit_resource_t, u64)]) -> std::io::Result<()> {
    for &(resource, value) in pairs {
        let limit = libc::rlimit {
            rlim_cur: value,
            rlim_max: value,
        };
        // SAFETY: `limit` is a valid rlimit that lives across the call.
        if unsafe { libc::setrlimit(resource, &limit) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

fn kill_group(pid: u32) {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return;
    };
    // SAFETY: signals the process group we created for this child (process_group(0)); an
    // already-gone group only yields ESRCH.
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
    }
}

/// A human reading of how a command ended: exit code or the signal and the limit it stands for.
#[must_use]
pub fn describe(ending: &ProcessEnding) -> String {
    use std::os::unix::process::ExitStatusExt;
    match ending {
        ProcessEnding::TimedOut(limit) => {
            format!("killed after the wall-time limit of {} s", limit.as_secs())
        }
        ProcessEnding::Exited(status) => match (status.code(), status.signal()) {
            (Some(code), _) => format!("exit status {code}"),
            (None, Some(libc::SIGXCPU)) => "killed by SIGXCPU (CPU-time limit)".into(),
            (None, Some(libc::SIGXFSZ)) => "killed by SIGXFSZ (file-size limit)".into(),
            (None, Some(signal)) => format!("killed by signal {signal}"),
            (None, None) => "ended without a status".into(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell_job(dir: &Path, script: &str) -> Job {
        Job {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
            env: vec![("PATH".into(), "/usr/bin:/bin".into())],
            cwd: dir.to_owned(),
            writable: vec![dir.to_owned()],
            read_only: Vec::new(),
            log: dir.join("log"),
        }
    }

    #[test]
    fn the_first_closed_directory_on_the_way_is_named_with_its_mode() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let private = root.path().join("private");
        let inner = private.join("inner");
        std::fs::create_dir_all(&inner).unwrap();
        let set = |path: &Path, mode| {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        set(root.path(), 0o755);
        set(&inner, 0o755);
        set(&private, 0o700);
        let closed = |own| closed_to_sandbox_user(&inner, own, |_| false).unwrap();
        assert_eq!(closed(0o005), Some((private.clone(), 0o700)));
        let exempt = |dir: &Path| dir == private;
        assert_eq!(closed_to_sandbox_user(&inner, 0o005, exempt).unwrap(), None);
        set(&private, 0o711);
        assert_eq!(closed(0o005), None);
        set(&inner, 0o711);
        assert_eq!(closed(0o001), None);
        assert_eq!(closed(0o005), Some((inner.clone(), 0o711)));
    }

    #[test]
    fn environment_is_scrubbed_and_output_logged() {
        let dir = tempfile::tempdir().unwrap();
        let sandbox = Sandbox::detect(Limits::engine());
        let job = shell_job(
            dir.path(),
            "echo \"token=${GITHUB_TOKEN:-none} path=$PATH\"",
        );
        let ending = sandbox.run(&job).unwrap();
        assert!(ending.succeeded(), "{ending:?}");
        let log = std::fs::read_to_string(dir.path().join("log")).unwrap();
        assert_eq!(log.trim(), "token=none path=/usr/bin:/bin");
    }

    #[test]
    fn read_only_mounts_inside_writable_dirs_come_after_them() {
        let job = Job {
            program: "/bin/true".into(),
            args: Vec::new(),
            env: Vec::new(),
            cwd: "/".into(),
            writable: vec!["/w/cargo-home".into()],
            read_only: vec![
                ("/host/registry".into(), "/w/cargo-home/registry".into()),
                ("/w/src".into(), "/w/src".into()),
            ],
            log: "/dev/null".into(),
        };
        let args: Vec<String> = bubblewrap_args(&job)
            .iter()
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect();
        let at = |value: &str| args.iter().position(|arg| arg == value).unwrap();
        assert!(
            at("/usr/bin") < at("/w/src"),
            "the system is mounted first: {args:?}"
        );
        assert!(
            !args
                .windows(2)
                .any(|pair| pair[0] == "--ro-bind" && pair[1] == "/"),
            "the host's root is never shown: {args:?}"
        );
        assert!(at("/w/src") < at("/w/cargo-home"), "{args:?}");
        assert!(at("/w/cargo-home") < at("/host/registry"), "{args:?}");
        assert_eq!(args[at("/host/registry") - 1], "--ro-bind");
        assert_eq!(args.last().map(String::as_str), Some("--"));
        for flag in [
            "--unshare-net",
            "--unshare-pid",
            "--die-with-parent",
            "--new-session",
        ] {
            assert!(args.iter().any(|arg| arg == flag), "{flag} missing");
        }
    }

    #[test]
    fn wall_time_limit_kills_the_command() {
        let dir = tempfile::tempdir().unwrap();
        let mut limits = Limits::engine();
        limits.wall_time = Duration::from_millis(300);
        let sandbox = Sandbox::detect(limits);
        let started = Instant::now();
        let ending = sandbox.run(&shell_job(dir.path(), "sleep 30")).unwrap();
        assert!(matches!(ending, ProcessEnding::TimedOut(_)), "{ending:?}");
        assert!(started.elapsed() < Duration::from_secs(10));
        assert!(describe(&ending).contains("wall-time"));
    }

    #[test]
    fn file_size_limit_stops_a_large_write() {
        let dir = tempfile::tempdir().unwrap();
        let mut limits = Limits::engine();
        limits.file_size_bytes = 4096;
        let sandbox = Sandbox::detect(limits);
        let job = shell_job(dir.path(), "head -c 100000 /dev/zero > big");
        let ending = sandbox.run(&job).unwrap();
        assert!(
            matches!(ending, ProcessEnding::Exited(status) if !status.success()),
            "{ending:?}"
        );
        assert!(std::fs::metadata(dir.path().join("big")).unwrap().len() <= 4096);
    }
}
