//! Reproducible builds of C and C++ engines (`make`, `cmake` or any command), in the build sandbox.
//!
//! What makes two such builds equal, and the published binary a function of the tree alone:
//! - `SOURCE_DATE_EPOCH` is one fixed time (`source::SOURCE_EPOCH`), so `__DATE__` and
//!   `__TIME__` (which GCC and Clang take from it) are the same in every build of the sources,
//!   whichever commit holds them;
//! - every compiler the build can reach is replaced, inside the sandbox, by a wrapper the oracle
//!   writes: it refuses host-dependent flags (`-march=native`, `-mtune=native`, `-mcpu=native`,
//!   any `-m…=native`) wherever they come from — the command, the environment, the project's
//!   Makefile, a response file — and appends the prefix map and the contract's pinned flags to
//!   every call. The wrapper is mounted over the compiler's own file in `/usr`, so a Makefile
//!   that names `/usr/bin/gcc` meets it as surely as one that calls `cc`;
//! - the source path is mapped with `-ffile-prefix-map` to [`MAPPED_SOURCE`]. Prefix maps rather
//!   than one fixed mount point for both copies: the two copies still build in different
//!   directories, so a path that reaches the binary by another way than the compiler's own
//!   records (a Makefile that pastes `$(CURDIR)` into a string) shows as "not reproducible"
//!   instead of passing unseen, and the check keeps the meaning it has for Cargo builds.
//!
//! The compiler is identified as rustc is: its `--version` line, plus the sha256 of its binary
//! (symbolic links resolved), recorded in the outcome and part of the cache key.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

use super::sandbox::{self, Isolation, Job, PrepareError, Sandbox};
use super::source::SOURCE_EPOCH;

/// The version of this build procedure (the wrapper, the environment, the mounts). Part of every
/// native cache key: raise it whenever what is built from the same inputs could change.
pub const BUILD_PROCEDURE: &str = "native-3";

/// Where `-ffile-prefix-map` puts the build copy's source tree in the binary's recorded paths.
pub const MAPPED_SOURCE: &str = "/engine";

/// The placeholder in a build command for the path the binary must be written to.
pub const OUT_PLACEHOLDER: &str = "{out}";

/// The file name of the built binary inside the cache.
pub const BINARY_NAME: &str = "engine";

/// What the compiler wrapper prints, before the flag, when it refuses one; the builder reads it
/// back from the log to name the flag.
const REFUSAL: &str = "oracle: refused host-dependent flag ";

/// The compiler drivers a C or C++ build may call, looked up on the host's `PATH`; each one found
/// is wrapped.
const COMPILER_NAMES: [&str; 6] = ["cc", "c++", "gcc", "g++", "clang", "clang++"];

/// Where the real compilers are mounted inside the sandbox, one directory each.
const REAL_COMPILERS: &str = "/oracle/compiler";

/// Environment variables the oracle sets itself; a contract may not set them.
const OWN_VARIABLES: [&str; 6] = [
    "PATH",
    "HOME",
    "TMPDIR",
    "SOURCE_DATE_EPOCH",
    "LC_ALL",
    "TZ",
];

/// How a C or C++ engine is built; the constitution's `engine.build` for the kinds `make`,
/// `cmake` and `command`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NativeBuild {
    /// Shell command run by `/bin/sh -c` in the tree's root; `{out}` is replaced by the (quoted)
    /// path the binary must be written to, e.g. `make -C src build ARCH=x86-64 EXE={out}`.
    pub command: String,
    /// Variables added to the build's environment (e.g. `CXX: g++`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub environment: BTreeMap<String, String>,
    /// Flags the wrapper appends to every compiler call, after the project's own (so `-O2` here
    /// wins over the Makefile's `-O3`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
    /// The compiler whose identity is recorded: a name on the host's `PATH` (`cc`, `g++`).
    pub compiler: String,
}

/// Why a native build produced no binary.
#[derive(Debug, thiserror::Error)]
pub enum NativeError {
    /// The contract cannot be turned into a build.
    #[error("engine contract `engine.build.{field}`: {reason}")]
    Contract {
        /// The field at fault.
        field: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// Native builds need bubblewrap to put the compiler wrapper in the compilers' place.
    #[error(
        "a {kind} build needs the bubblewrap sandbox (the compiler wrapper that refuses \
         host-dependent flags is mounted over the compilers), but builds here would run under \
         `{isolation}`; install bubblewrap (nothing was built)"
    )]
    NeedsBubblewrap {
        /// The contract's build kind.
        kind: String,
        /// The isolation the machine offers.
        isolation: String,
    },
    /// The named compiler is missing or cannot be identified.
    #[error("compiler `{name}`: {reason}")]
    Compiler {
        /// The name as the contract gives it.
        name: String,
        /// What went wrong.
        reason: String,
    },
    /// A build directory could not be prepared.
    #[error(transparent)]
    Prepare(#[from] PrepareError),
    /// The sandbox could not run the build.
    #[error(transparent)]
    Sandbox(#[from] sandbox::SandboxError),
    /// The build passed a host-dependent flag to a compiler.
    #[error(
        "the build passed the host-dependent flag `{flag}` to a compiler: a binary built for this \
         machine's processor is not the one another machine rebuilds (log: {log})"
    )]
    HostDependentFlag {
        /// The flag as the compiler received it.
        flag: String,
        /// The build log.
        log: PathBuf,
    },
    /// The command failed or a limit stopped it.
    #[error("the build command failed ({ending}); log: {log}; last lines:\n{tail}")]
    Failed {
        /// How it ended.
        ending: String,
        /// The full log.
        log: PathBuf,
        /// Its last lines.
        tail: String,
    },
    /// The command succeeded but wrote no binary to `{out}`.
    #[error("the build command succeeded but wrote no binary to {path} (`{{out}}`)")]
    NoBinary {
        /// Where the binary was expected.
        path: PathBuf,
    },
}

impl NativeBuild {
    /// sha256 of the canonical form (compact JSON, fields in declaration order, the environment
    /// sorted by name), with the kind, so that the same command under another kind differs.
    #[must_use]
    pub fn sha256(&self, kind: &str) -> String {
        let canonical = serde_json::to_vec(&(kind, self)).expect("a build always serialises");
        crate::integrity::sha256_hex(&canonical)
    }

    /// Checks the fields that would make the build unsafe or unfaithful to its own record.
    pub fn validate(&self) -> Result<(), NativeError> {
        let bad = |field, reason: String| Err(NativeError::Contract { field, reason });
        if !self.command.contains(OUT_PLACEHOLDER) {
            return bad(
                "command",
                format!("must write the binary to `{OUT_PLACEHOLDER}`"),
            );
        }
        if let Some(name) = self
            .environment
            .keys()
            .find(|name| OWN_VARIABLES.contains(&name.as_str()))
        {
            return bad(
                "environment",
                format!(
                    "`{name}` is set by the oracle ({})",
                    OWN_VARIABLES.join(", ")
                ),
            );
        }
        if let Some(name) = self
            .environment
            .keys()
            .find(|name| name.is_empty() || name.contains(['=', '\0']))
        {
            return bad("environment", format!("`{name}` is not a variable name"));
        }
        if let Some(flag) = self
            .flags
            .iter()
            .find(|flag| flag.is_empty() || flag.contains('\0'))
        {
            return bad("flags", format!("{flag:?} is not a flag"));
        }
        if self.compiler.is_empty() || self.compiler.contains('/') {
            return bad(
                "compiler",
                format!("{:?} must be a name on the PATH", self.compiler),
            );
        }
        Ok(())
    }
}

/// One compiler driver on the host: where its binary is and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compiler {
    /// The driver's real file (symbolic links resolved), under `/usr`.
    pub binary: PathBuf,
    /// sha256 of that file.
    pub sha256: String,
    /// The first line of `--version`.
    pub version: String,
}

impl Compiler {
    /// Identifies the driver called `name` on the host's `PATH`.
    pub fn locate(name: &str) -> Result<Self, NativeError> {
        let fail = |reason: String| NativeError::Compiler {
            name: name.to_owned(),
            reason,
        };
        let found = find_on_path(name).ok_or_else(|| fail("not found on PATH".into()))?;
        let binary =
            fs::canonicalize(&found).map_err(|e| fail(format!("{}: {e}", found.display())))?;
        let sha256 = crate::integrity::sha256_file(&binary).map_err(|e| fail(e.to_string()))?;
        let output = Command::new(&binary)
            .arg("--version")
            .env_clear()
            .env("LC_ALL", "C")
            .current_dir("/")
            .output()
            .map_err(|e| fail(format!("{}: {e}", binary.display())))?;
        if !output.status.success() {
            return Err(fail(format!("`{} --version` failed", binary.display())));
        }
        let version = String::from_utf8_lossy(&output.stdout)
            .lines()
            .next()
            .unwrap_or_default()
            .trim()
            .to_owned();
        Ok(Self {
            binary,
            sha256,
            version,
        })
    }

    /// The identity recorded for the binary, as rustc's version is for a Cargo build:
    /// `VERSION (PATH sha256 HEX)`.
    #[must_use]
    pub fn identity(&self) -> String {
        format!(
            "{} ({} sha256 {})",
            self.version,
            self.binary.display(),
            self.sha256
        )
    }
}

/// The compilers of one native build: the contract's (identified in the record) and every
/// driver a build may reach (wrapped).
#[derive(Debug, Clone)]
pub struct Compilers {
    /// The contract's compiler.
    pub named: Compiler,
    /// Every distinct driver found on the host, the named one included.
    pub wrapped: Vec<Compiler>,
}

impl Compilers {
    /// Locates the contract's compiler and every usual driver; only drivers under `/usr` can be
    /// seen in the sandbox, so only those are wrapped.
    pub fn locate(build: &NativeBuild) -> Result<Self, NativeError> {
        let named = Compiler::locate(&build.compiler)?;
        if !named.binary.starts_with("/usr") {
            return Err(NativeError::Compiler {
                name: build.compiler.clone(),
                reason: format!(
                    "{} is outside /usr, which is all of the host a build sees",
                    named.binary.display()
                ),
            });
        }
        let mut wrapped = vec![named.clone()];
        for name in COMPILER_NAMES {
            if let Ok(found) = Compiler::locate(name)
                && found.binary.starts_with("/usr")
                && !wrapped.iter().any(|known| known.binary == found.binary)
            {
                wrapped.push(found);
            }
        }
        Ok(Self { named, wrapped })
    }

    /// Everything about the compilers that can change the binary, for the cache key.
    #[must_use]
    pub fn key(&self) -> String {
        let mut key = self.named.identity();
        for compiler in &self.wrapped {
            key.push('\n');
            key.push_str(&compiler.identity());
        }
        key
    }
}

/// A binary's path on the host's `PATH`, if any.
fn find_on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(name))
        .find(|path| path.is_file())
}

/// The directories of one native build copy.
#[derive(Debug, Clone)]
pub struct NativeDirs {
    /// The exported tree, where the command runs (writable: make puts objects beside sources).
    pub source: PathBuf,
    /// Where `{out}` points.
    pub out: PathBuf,
    /// `HOME` and `TMPDIR`.
    pub scratch: PathBuf,
    /// The compiler wrappers of this copy.
    pub wrappers: PathBuf,
    /// The build log.
    pub log: PathBuf,
}

impl NativeDirs {
    /// The layout under one copy's root directory.
    #[must_use]
    pub fn under(root: &Path) -> Self {
        Self {
            source: root.join("src"),
            out: root.join("out"),
            scratch: root.join("scratch"),
            wrappers: root.join("wrappers"),
            log: root.join("build.log"),
        }
    }

    /// The path `{out}` stands for.
    #[must_use]
    pub fn binary(&self) -> PathBuf {
        self.out.join(BINARY_NAME)
    }
}

/// Quotes `text` for `/bin/sh`: one word, whatever it holds.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The wrapper that stands in for `real` (mounted at `mounted`): refuses host-dependent flags in
/// its arguments, in response files and in the pinned flags, then runs the real compiler with the
/// fixed epoch ([`SOURCE_EPOCH`]), the prefix map and the pinned flags.
#[must_use]
pub fn wrapper_script(mounted: &Path, source: &Path, flags: &[String]) -> String {
    let appended: Vec<String> = std::iter::once(format!(
        "-ffile-prefix-map={}={MAPPED_SOURCE}",
        source.display()
    ))
    .chain(flags.iter().cloned())
    .map(|flag| shell_quote(&flag))
    .collect();
    let appended = appended.join(" ");
    format!(
        r#"#!/bin/sh
# Written by the oracle (docs/engine-contract.md): a compiler call with a host-dependent flag is
# refused; every other call gets the fixed epoch, the prefix map and the pinned flags.
refuse() {{ echo "{REFUSAL}$1" >&2; exit 97; }}
for arg in "$@" {appended}; do
  case "$arg" in
    -m*=native) refuse "$arg" ;;
    @*) if [ -f "${{arg#@}}" ]; then
          found=$(grep -o -e '-m[A-Za-z0-9_-]*=native' "${{arg#@}}" | head -n 1)
          [ -n "$found" ] && refuse "$found"
        fi ;;
  esac
done
SOURCE_DATE_EPOCH={SOURCE_EPOCH}
export SOURCE_DATE_EPOCH
exec {real} "$@" {appended}
"#,
        real = shell_quote(&mounted.to_string_lossy()),
    )
}

/// The first flag a wrapper refused, read from the build log.
fn refused_flag(log: &Path) -> Option<String> {
    let text = fs::read_to_string(log).ok()?;
    text.lines()
        .find_map(|line| line.strip_prefix(REFUSAL))
        .map(|flag| flag.trim().to_owned())
}

/// Runs `kind`'s command for one copy in the sandbox; returns the binary it wrote.
pub fn build(
    kind: &str,
    build: &NativeBuild,
    compilers: &Compilers,
    dirs: &NativeDirs,
    sandbox: &Sandbox,
) -> Result<PathBuf, NativeError> {
    if sandbox.isolation != Isolation::Bubblewrap {
        return Err(NativeError::NeedsBubblewrap {
            kind: kind.to_owned(),
            isolation: sandbox.isolation.describe(),
        });
    }
    for dir in [&dirs.out, &dirs.scratch, &dirs.wrappers] {
        sandbox::create_build_dir(dir)?;
    }
    let mut read_only = Vec::new();
    for (index, compiler) in compilers.wrapped.iter().enumerate() {
        let file_name = compiler
            .binary
            .file_name()
            .unwrap_or_else(|| std::ffi::OsStr::new("cc"));
        let home = Path::new(REAL_COMPILERS).join(index.to_string());
        let mounted = home.join("bin").join(file_name);
        // A driver finds its programs (cc1, as) and the C++ headers (`../include/c++/N`)
        // relative to its own directory: `../lib`, `../libexec` and `../include` beside the
        // mounted driver are the real ones.
        if let Some(prefix) = compiler.binary.parent().and_then(Path::parent) {
            for dir in ["lib", "libexec", "include"] {
                if prefix.join(dir).is_dir() {
                    read_only.push((prefix.join(dir), home.join(dir)));
                }
            }
        }
        read_only.push((compiler.binary.clone(), mounted.clone()));
        let wrapper = dirs.wrappers.join(index.to_string());
        let script = wrapper_script(&mounted, &dirs.source, &build.flags);
        fs::write(&wrapper, script)
            .and_then(|()| fs::set_permissions(&wrapper, fs::Permissions::from_mode(0o755)))
            .map_err(PrepareError::at(&wrapper))?;
        read_only.push((wrapper, compiler.binary.clone()));
    }
    hand_over(&dirs.source)?;
    let command = build.command.replace(
        OUT_PLACEHOLDER,
        &shell_quote(&dirs.binary().to_string_lossy()),
    );
    let job = Job {
        program: "/bin/sh".into(),
        args: vec!["-c".into(), command.into()],
        env: environment(build, dirs),
        cwd: dirs.source.clone(),
        writable: vec![dirs.source.clone(), dirs.out.clone(), dirs.scratch.clone()],
        read_only,
        log: dirs.log.clone(),
    };
    let ending = sandbox.run(&job)?;
    if let Some(flag) = refused_flag(&dirs.log) {
        return Err(NativeError::HostDependentFlag {
            flag,
            log: dirs.log.clone(),
        });
    }
    if !ending.succeeded() {
        return Err(NativeError::Failed {
            ending: sandbox::describe(&ending),
            log: dirs.log.clone(),
            tail: super::cargo::log_tail(&dirs.log, 25),
        });
    }
    let binary = dirs.binary();
    if binary.is_file() {
        Ok(binary)
    } else {
        Err(NativeError::NoBinary { path: binary })
    }
}

/// The build's environment: the oracle's own variables, then the contract's.
fn environment(build: &NativeBuild, dirs: &NativeDirs) -> Vec<(OsString, OsString)> {
    let own = [
        ("PATH", OsString::from("/usr/local/bin:/usr/bin:/bin")),
        ("HOME", dirs.scratch.clone().into_os_string()),
        ("TMPDIR", dirs.scratch.clone().into_os_string()),
        ("SOURCE_DATE_EPOCH", SOURCE_EPOCH.to_string().into()),
        ("LC_ALL", "C".into()),
        ("TZ", "UTC".into()),
    ];
    own.into_iter()
        .map(|(key, value)| (OsString::from(key), value))
        .chain(
            build
                .environment
                .iter()
                .map(|(key, value)| (OsString::from(key), OsString::from(value))),
        )
        .collect()
}

/// Makes the exported tree the sandbox user's when the oracle runs as root: make writes objects
/// into the tree's own directories, which bubblewrap's `nobody` could not otherwise enter.
fn hand_over(tree: &Path) -> Result<(), NativeError> {
    if !sandbox::is_root() {
        return Ok(());
    }
    let id = Some(sandbox::UNPRIVILEGED_ID);
    std::os::unix::fs::lchown(tree, id, id).map_err(PrepareError::at(tree))?;
    if tree.is_dir() && !tree.is_symlink() {
        for entry in fs::read_dir(tree).map_err(PrepareError::at(tree))? {
            hand_over(&entry.map_err(PrepareError::at(tree))?.path())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn make() -> NativeBuild {
        NativeBuild {
            command: "make EXE={out}".into(),
            environment: BTreeMap::new(),
            flags: vec!["-O2".into()],
            compiler: "cc".into(),
        }
    }

    #[test]
    fn a_command_must_write_to_out_and_leave_the_oracles_variables_alone() {
        assert!(make().validate().is_ok());
        let mut build = make();
        build.command = "make".into();
        assert!(build.validate().unwrap_err().to_string().contains("{out}"));
        let mut build = make();
        build
            .environment
            .insert("SOURCE_DATE_EPOCH".into(), "0".into());
        let error = build.validate().unwrap_err().to_string();
        assert!(error.contains("engine.build.environment") && error.contains("SOURCE_DATE_EPOCH"));
        let mut build = make();
        build.compiler = "/usr/bin/gcc".into();
        assert!(build.validate().is_err());
    }

    #[test]
    fn the_kind_is_part_of_the_hash() {
        assert_ne!(make().sha256("make"), make().sha256("command"));
        let mut other = make();
        other.flags.push("-g".into());
        assert_ne!(make().sha256("make"), other.sha256("make"));
    }

    /// Runs a wrapper written for `/bin/echo` and returns (status, stdout, stderr).
    fn run_wrapper(args: &[&str], flags: &[String]) -> (i32, String, String) {
        let dir = tempfile::tempdir().unwrap();
        let script = wrapper_script(Path::new("/bin/echo"), Path::new("/w/a/src"), flags);
        let wrapper = dir.path().join("cc");
        fs::write(&wrapper, script).unwrap();
        fs::set_permissions(&wrapper, fs::Permissions::from_mode(0o755)).unwrap();
        let output = Command::new(&wrapper).args(args).output().unwrap();
        (
            output.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    }

    #[test]
    fn the_wrapper_appends_the_map_and_the_pinned_flags() {
        let (status, stdout, _) = run_wrapper(&["-c", "a b.c"], &["-O2".into()]);
        assert_eq!(status, 0);
        assert_eq!(stdout, "-c a b.c -ffile-prefix-map=/w/a/src=/engine -O2\n");
    }

    #[test]
    fn the_wrapper_refuses_native_flags_from_anywhere() {
        for (args, flags, flag) in [
            (vec!["-O2", "-march=native"], vec![], "-march=native"),
            (vec!["-mtune=native"], vec![], "-mtune=native"),
            (vec!["-c"], vec!["-mcpu=native".to_owned()], "-mcpu=native"),
        ] {
            let (status, stdout, stderr) = run_wrapper(&args, &flags);
            assert_eq!(status, 97, "{args:?}");
            assert!(stdout.is_empty(), "the compiler never ran: {stdout}");
            assert_eq!(stderr.trim(), format!("{REFUSAL}{flag}"));
        }
        let dir = tempfile::tempdir().unwrap();
        let response = dir.path().join("flags.rsp");
        fs::write(&response, "-O3 -march=native\n").unwrap();
        let at = format!("@{}", response.display());
        let (status, _, stderr) = run_wrapper(&[&at], &[]);
        assert_eq!(
            (status, stderr.trim()),
            (97, &*format!("{REFUSAL}-march=native"))
        );
        let (status, _, _) = run_wrapper(&["-march=x86-64-v2"], &[]);
        assert_eq!(
            status, 0,
            "a named architecture is the same on every machine"
        );
    }

    #[test]
    fn the_refused_flag_is_read_back_from_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("build.log");
        fs::write(
            &log,
            format!("cc -c a.c\n{REFUSAL}-march=native\nmake: *** Error 97\n"),
        )
        .unwrap();
        assert_eq!(refused_flag(&log).as_deref(), Some("-march=native"));
        fs::write(&log, "all fine\n").unwrap();
        assert_eq!(refused_flag(&log), None);
    }
}
