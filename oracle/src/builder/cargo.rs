//! From a recipe and an exported tree to one cargo command line, and running it in the sandbox.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::recipe::BuildRecipe;
use super::sandbox::{self, Job, PrepareError, Sandbox, SandboxError};

/// Version of the oracle's build procedure: the cargo arguments and environment here, the path
/// remaps ([`BuildRecipe::rustflags`]) and the sandbox's mount plan. Every cache key includes it,
/// so a binary built the old way is never reused: raise it when any of them changes.
pub const BUILD_PROCEDURE: &str = "2";

/// A toolchain located on this machine: rustup resolved once, outside the sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toolchain {
    /// The toolchain's sysroot (`rustc --print sysroot`); its `bin/` holds cargo and rustc.
    pub sysroot: PathBuf,
    /// First line of `rustc -vV`, e.g. `rustc 1.95.0 (59807616e 2026-04-14)`.
    pub version: String,
    /// The full `rustc -vV` output (commit hash, LLVM version): part of the cache key.
    pub verbose_version: String,
}

/// Why a build could not run or did not produce a binary.
#[derive(Debug, thiserror::Error)]
pub enum CargoError {
    /// rustup or rustc could not be run to locate the toolchain.
    #[error(
        "locating toolchain `{toolchain}` (is it installed? `rustup toolchain install {toolchain}`): {reason}"
    )]
    Toolchain {
        /// The recipe's toolchain.
        toolchain: String,
        /// What went wrong.
        reason: String,
    },
    /// Preparing the build directories failed.
    #[error(transparent)]
    Prepare(#[from] PrepareError),
    /// The sandbox could not run cargo.
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    /// cargo ran and failed, or a limit stopped it.
    #[error("build failed ({ending}); full log {}; last lines:\n{tail}", log.display())]
    Failed {
        /// How cargo ended.
        ending: String,
        /// The full build log.
        log: PathBuf,
        /// The last lines of the log.
        tail: String,
    },
    /// The lock file names crates the host's registry lacks, and downloading them failed.
    #[error(
        "the lock file of the tree to build names crates this machine has not downloaded, and \
         `cargo fetch --locked` could not fetch them (the build itself runs offline):\n{tail}"
    )]
    Fetch {
        /// The last lines of cargo's output.
        tail: String,
    },
    /// The sandbox user cannot reach the exported sources (a directory on the way is closed).
    #[error(
        "the sandbox runs the build as user {user}, who cannot enter {path} (mode {mode:o}); \
         choose a --cache-dir whose every parent directory others may enter (`chmod o+x`)"
    )]
    Unreachable {
        /// The sandbox's user id.
        user: u32,
        /// The directory it cannot enter.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// cargo succeeded but the binary is not where the recipe says.
    #[error("cargo succeeded but produced no binary at {path}")]
    NoBinary {
        /// Where the binary was expected.
        path: PathBuf,
    },
}

impl Toolchain {
    /// Finds the recipe's toolchain through rustup (`RUSTUP_TOOLCHAIN`), which overrides any
    /// `rust-toolchain.toml`; later builds call its binaries directly, so the sandbox needs no
    /// rustup proxy and no rustup state.
    pub fn locate(name: &str) -> Result<Self, CargoError> {
        let rustc = |args: &[&str]| -> Result<String, CargoError> {
            let fail = |reason: String| CargoError::Toolchain {
                toolchain: name.to_owned(),
                reason,
            };
            let output = Command::new("rustc")
                .args(args)
                .env("RUSTUP_TOOLCHAIN", name)
                .env("RUSTUP_AUTO_INSTALL", "0")
                .current_dir("/")
                .output()
                .map_err(|error| fail(error.to_string()))?;
            if !output.status.success() {
                return Err(fail(
                    String::from_utf8_lossy(&output.stderr).trim().to_owned(),
                ));
            }
            String::from_utf8(output.stdout).map_err(|error| fail(error.to_string()))
        };
        let sysroot = PathBuf::from(rustc(&["--print", "sysroot"])?.trim());
        let verbose_version = rustc(&["-vV"])?;
        let version = verbose_version
            .lines()
            .next()
            .unwrap_or_default()
            .to_owned();
        check_release(name, &verbose_version)?;
        Ok(Self {
            sysroot,
            version,
            verbose_version,
        })
    }
}

/// A toolchain pinned by version number (`1.95.0`) must report exactly that release, so a
/// machine without rustup cannot silently build with whatever `rustc` is on its `PATH`.
fn check_release(name: &str, verbose_version: &str) -> Result<(), CargoError> {
    if !name
        .bytes()
        .all(|byte| byte.is_ascii_digit() || byte == b'.')
    {
        return Ok(());
    }
    let release = verbose_version
        .lines()
        .find_map(|line| line.strip_prefix("release: "))
        .unwrap_or("");
    if release == name {
        Ok(())
    } else {
        Err(CargoError::Toolchain {
            toolchain: name.to_owned(),
            reason: format!("`rustc -vV` reports release {release:?}"),
        })
    }
}

/// The directories of one build copy; two copies live side by side so their paths differ.
#[derive(Debug, Clone)]
pub struct BuildDirs {
    /// The exported source tree (read-only inside the sandbox).
    pub source: PathBuf,
    /// The private, empty `CARGO_HOME`.
    pub cargo_home: PathBuf,
    /// The target directory.
    pub target: PathBuf,
    /// `HOME` and `TMPDIR` of the build.
    pub scratch: PathBuf,
    /// The build log.
    pub log: PathBuf,
}

impl BuildDirs {
    /// The layout under one copy's root directory.
    #[must_use]
    pub fn under(root: &Path) -> Self {
        Self {
            source: root.join("src"),
            cargo_home: root.join("cargo-home"),
            target: root.join("target"),
            scratch: root.join("scratch"),
            log: root.join("build.log"),
        }
    }
}

/// Makes the host's registry hold every crate that `source`'s lock file names, so that the
/// sandboxed `--offline` build resolves. Cargo resolves the whole workspace even for the engine,
/// which needs no crate, so an older commit's lock file can name crates (of the oracle) that this
/// machine never downloaded: a fresh machine could not rebuild an older entry's binaries.
///
/// Runs on the host, outside the sandbox, from `cwd` (not the tree, so no configuration of the
/// tree is read); it downloads only what the lock file pins by checksum and runs no build code.
/// Nothing is fetched when everything is already present.
pub fn fetch_locked(toolchain: &Toolchain, source: &Path, cwd: &Path) -> Result<(), CargoError> {
    let manifest = source.join("Cargo.toml");
    // Only the host's platform: the build is for it, and other platforms' crates (windows-sys)
    // would be downloaded for nothing.
    let host = toolchain
        .verbose_version
        .lines()
        .find_map(|line| line.strip_prefix("host: "))
        .unwrap_or_default();
    let fetch = |offline: bool| {
        let mut command = Command::new(toolchain.sysroot.join("bin/cargo"));
        command
            .args([
                "fetch",
                "--locked",
                "--quiet",
                "--target",
                host,
                "--manifest-path",
            ])
            .arg(&manifest)
            .current_dir(cwd)
            .env("RUSTC", toolchain.sysroot.join("bin/rustc"));
        if offline {
            command.arg("--offline");
        }
        command.output()
    };
    let failed = |error: String| CargoError::Fetch { tail: error };
    match fetch(true) {
        Ok(output) if output.status.success() => return Ok(()),
        Ok(_) => {}
        Err(error) => return Err(failed(error.to_string())),
    }
    let output = fetch(false).map_err(|error| failed(error.to_string()))?;
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    Err(failed(lines[lines.len().saturating_sub(12)..].join("\n")))
}

/// Builds the recipe's binary from `dirs.source`; returns the path of the produced binary.
///
/// `registry` is the host's crates.io registry (index and downloaded crates), mounted read-only
/// into the private `CARGO_HOME` so that a workspace whose other members have dependencies still
/// resolves `--offline`; the lock file's checksums pin what it serves. Nothing else of the host's
/// `CARGO_HOME` (configuration, credentials) is visible.
pub fn build(
    recipe: &BuildRecipe,
    toolchain: &Toolchain,
    dirs: &BuildDirs,
    registry: Option<&Path>,
    sandbox: &Sandbox,
) -> Result<PathBuf, CargoError> {
    for dir in [&dirs.cargo_home, &dirs.target, &dirs.scratch] {
        sandbox::create_build_dir(dir)?;
    }
    check_reachable(&dirs.source, sandbox)?;
    let mut read_only = vec![
        (toolchain.sysroot.clone(), toolchain.sysroot.clone()),
        (dirs.source.clone(), dirs.source.clone()),
    ];
    if let Some(registry) = registry {
        let mount_point = dirs.cargo_home.join("registry");
        sandbox::create_build_dir(&mount_point)?;
        if sandbox.isolation.confines_writes() {
            read_only.push((registry.to_owned(), mount_point));
        } else {
            // Without a mount namespace the registry can only be linked (and is then writable).
            fs::remove_dir(&mount_point)
                .and_then(|()| std::os::unix::fs::symlink(registry, &mount_point))
                .map_err(PrepareError::at(&mount_point))?;
        }
    }
    let job = Job {
        program: toolchain.sysroot.join("bin/cargo"),
        args: cargo_args(recipe, &dirs.target),
        env: environment(recipe, toolchain, dirs),
        cwd: dirs.source.clone(),
        writable: vec![
            dirs.cargo_home.clone(),
            dirs.target.clone(),
            dirs.scratch.clone(),
        ],
        read_only,
        log: dirs.log.clone(),
    };
    let ending = sandbox.run(&job)?;
    if !ending.succeeded() {
        return Err(CargoError::Failed {
            ending: sandbox::describe(&ending),
            log: dirs.log.clone(),
            tail: log_tail(&dirs.log, 25),
        });
    }
    let binary = dirs.target.join("release").join(&recipe.binary);
    if binary.is_file() {
        Ok(binary)
    } else {
        Err(CargoError::NoBinary { path: binary })
    }
}

/// Fails early, and says why, when bubblewrap will run the build as the unprivileged user and
/// a directory on the way to the sources is closed to others: cargo would only report that it
/// "could not find `Cargo.toml`". Directories under `$HOME` are exempt: the sandbox hides the
/// home and recreates the way to its mounts open.
fn check_reachable(source: &Path, sandbox: &Sandbox) -> Result<(), CargoError> {
    if sandbox.isolation != sandbox::Isolation::Bubblewrap || !sandbox::is_root() {
        return Ok(());
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let under_home = |dir: &Path| home.as_ref().is_some_and(|home| dir.starts_with(home));
    let closed = sandbox::closed_to_sandbox_user(source, 0o001, under_home)
        .map_err(PrepareError::at(source))?;
    match closed {
        Some((path, mode)) => Err(CargoError::Unreachable {
            user: sandbox::UNPRIVILEGED_ID,
            path,
            mode,
        }),
        None => Ok(()),
    }
}

/// `cargo build` arguments: locked, offline, the recipe's package and binary, profile overrides.
#[must_use]
pub fn cargo_args(recipe: &BuildRecipe, target: &Path) -> Vec<OsString> {
    let mut args: Vec<OsString> = [
        "build",
        "--release",
        "--locked",
        "--offline",
        "--color",
        "never",
    ]
    .into_iter()
    .map(OsString::from)
    .collect();
    args.extend(["--package", &recipe.package, "--bin", &recipe.binary].map(OsString::from));
    args.extend(["--target-dir".into(), target.as_os_str().to_owned()]);
    args.extend(recipe.profile_config_args().into_iter().map(OsString::from));
    args
}

/// The complete environment of the build: nothing of the caller's (no tokens, no `RUSTFLAGS`,
/// no `CARGO_*`) except what is set here.
#[must_use]
pub fn environment(
    recipe: &BuildRecipe,
    toolchain: &Toolchain,
    dirs: &BuildDirs,
) -> Vec<(OsString, OsString)> {
    let bin = toolchain.sysroot.join("bin");
    let flags = recipe
        .rustflags(&dirs.source, &dirs.cargo_home, &dirs.target)
        .join("\x1f");
    let mut path = bin.clone().into_os_string();
    path.push(":/usr/local/bin:/usr/bin:/bin");
    [
        ("PATH", path),
        ("HOME", dirs.scratch.clone().into_os_string()),
        ("TMPDIR", dirs.scratch.clone().into_os_string()),
        ("CARGO_HOME", dirs.cargo_home.clone().into_os_string()),
        ("RUSTC", bin.join("rustc").into_os_string()),
        ("RUSTDOC", bin.join("rustdoc").into_os_string()),
        ("RUSTUP_TOOLCHAIN", recipe.toolchain.clone().into()),
        ("RUSTUP_AUTO_INSTALL", "0".into()),
        ("CARGO_ENCODED_RUSTFLAGS", flags.into()),
        ("CARGO_INCREMENTAL", "0".into()),
        ("CARGO_TERM_COLOR", "never".into()),
        ("LC_ALL", "C".into()),
        ("TZ", "UTC".into()),
    ]
    .into_iter()
    .map(|(key, value)| (OsString::from(key), value))
    .collect()
}

/// The last `lines` lines of a log, for error messages.
#[must_use]
pub fn log_tail(log: &Path, lines: usize) -> String {
    let text = fs::read_to_string(log).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs() -> BuildDirs {
        BuildDirs::under(Path::new("/w/a"))
    }

    fn toolchain() -> Toolchain {
        Toolchain {
            sysroot: "/tc".into(),
            version: "rustc 1.95.0".into(),
            verbose_version: "rustc 1.95.0".into(),
        }
    }

    /// The snapshot is named by [`BUILD_PROCEDURE`]: when the arguments or the environment
    /// change, it fails until the version is raised (a new snapshot), which changes every cache
    /// key. Never accept a changed snapshot under the old version's name.
    #[test]
    fn the_build_procedure_is_pinned_by_its_version() {
        let recipe = BuildRecipe::standard();
        let mut text = String::from("cargo arguments:\n");
        for arg in cargo_args(&recipe, &dirs().target) {
            text.push_str(&format!("  {}\n", arg.to_string_lossy()));
        }
        text.push_str("environment:\n");
        for (key, value) in environment(&recipe, &toolchain(), &dirs()) {
            let value = value.to_string_lossy().escape_debug().to_string();
            text.push_str(&format!("  {}={value}\n", key.to_string_lossy()));
        }
        insta::assert_snapshot!(format!("build_procedure_v{BUILD_PROCEDURE}"), text);
    }

    #[test]
    fn a_pinned_version_must_match_the_compiler() {
        let verbose = "rustc 1.95.0 (59807616e 2026-04-14)\nrelease: 1.95.0\n";
        assert!(check_release("1.95.0", verbose).is_ok());
        assert!(check_release("1.94.0", verbose).is_err());
        assert!(check_release("stable", verbose).is_ok());
    }

    #[test]
    fn cargo_is_locked_offline_and_overrides_the_profile() {
        let args = cargo_args(&BuildRecipe::standard(), &dirs().target);
        let text: Vec<String> = args
            .iter()
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect();
        for expected in [
            "--locked",
            "--offline",
            "--release",
            "profile.release.lto=true",
        ] {
            assert!(
                text.iter().any(|arg| arg == expected),
                "{expected} missing in {text:?}"
            );
        }
        let package = text.iter().position(|arg| arg == "--package").unwrap();
        assert_eq!(text[package + 1], "coherent");
        let target = text.iter().position(|arg| arg == "--target-dir").unwrap();
        assert_eq!(text[target + 1], "/w/a/target");
    }

    #[test]
    fn environment_is_complete_and_owns_the_flags() {
        let env = environment(&BuildRecipe::standard(), &toolchain(), &dirs());
        let get = |key: &str| {
            env.iter()
                .find(|(name, _)| name == key)
                .map(|(_, value)| value.to_string_lossy().into_owned())
                .unwrap()
        };
        assert_eq!(
            get("CARGO_ENCODED_RUSTFLAGS"),
            [
                "-Ctarget-cpu=x86-64",
                "--remap-path-prefix=/w/a/src=/coherent/src",
                "--remap-path-prefix=/w/a/cargo-home=/coherent/cargo-home",
                "--remap-path-prefix=/w/a/target=/coherent/target",
            ]
            .join("\x1f")
        );
        assert_eq!(get("CARGO_INCREMENTAL"), "0");
        assert_eq!(get("RUSTC"), "/tc/bin/rustc");
        assert!(env.iter().all(|(name, _)| name != "RUSTFLAGS"));
    }
}
