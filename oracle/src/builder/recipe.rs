//! The build recipe that the constitution pins: every input that changes the binary.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::native::NativeBuild;

/// Where the oracle's path remaps put the source tree inside the binary's recorded paths.
pub const REMAPPED_SOURCE: &str = "/coherent/src";
/// Where the oracle's path remaps put the private `CARGO_HOME` (registry sources).
pub const REMAPPED_CARGO_HOME: &str = "/coherent/cargo-home";
/// Where the oracle's path remaps put the target directory (build-script `OUT_DIR`s).
pub const REMAPPED_TARGET: &str = "/coherent/target";

/// How the oracle builds an engine binary; pinned in `constitution.yaml` under `build:`.
///
/// The oracle owns the whole flag list (a candidate's `.cargo/config.toml` or
/// `rust-toolchain.toml` cannot change it): `RUSTUP_TOOLCHAIN` selects the
/// toolchain and `--config profile.release.KEY=VALUE` overrides the manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BuildRecipe {
    /// Rust toolchain, as `RUSTUP_TOOLCHAIN` takes it (e.g. `1.95.0`).
    pub toolchain: String,
    /// Cargo package that contains the engine.
    pub package: String,
    /// Name of the engine binary inside that package.
    pub binary: String,
    /// Target CPU for codegen; baseline `x86-64` keeps releases portable.
    pub target_cpu: String,
    /// Release-profile settings forced on the command line (`lto`, `codegen-units`, …).
    pub profile_overrides: BTreeMap<String, ProfileValue>,
    /// Further rustc flags, appended after the oracle's own (target CPU, path remaps).
    #[serde(default)]
    pub extra_rustflags: Vec<String>,
}

/// How the engine is built: the constitution's `engine.build`, its `kind` first. Without an
/// `engine:` section the constitution's `build:` recipe is the Cargo kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EngineBuild {
    /// `cargo build` of one binary of a workspace, with the oracle's flags.
    Cargo(BuildRecipe),
    /// A Makefile, called by the contract's command (usually `make … EXE={out}`).
    Make(NativeBuild),
    /// CMake, configured and built by the contract's command.
    Cmake(NativeBuild),
    /// Any other command that writes the binary to `{out}`.
    Command(NativeBuild),
}

impl EngineBuild {
    /// The kind as the constitution writes it (`cargo`, `make`, `cmake`, `command`).
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Cargo(_) => "cargo",
            Self::Make(_) => "make",
            Self::Cmake(_) => "cmake",
            Self::Command(_) => "command",
        }
    }

    /// The C or C++ build of the native kinds; `None` for Cargo.
    #[must_use]
    pub fn native(&self) -> Option<&NativeBuild> {
        match self {
            Self::Cargo(_) => None,
            Self::Make(build) | Self::Cmake(build) | Self::Command(build) => Some(build),
        }
    }

    /// sha256 of the canonical form: the Cargo recipe's own hash (unchanged from before the
    /// engine contract, so existing cache entries and records keep their keys), or the native
    /// build's with its kind.
    #[must_use]
    pub fn sha256(&self) -> String {
        match self {
            Self::Cargo(recipe) => recipe.sha256(),
            Self::Make(build) | Self::Cmake(build) | Self::Command(build) => {
                build.sha256(self.kind())
            }
        }
    }
}

/// One value of a Cargo profile setting, written in YAML as a plain scalar (`true`, `3`, `abort`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ProfileValue {
    /// A switch such as `lto: true` or `debug: false`.
    Bool(bool),
    /// A number such as `codegen-units: 1` or `opt-level: 3`.
    Integer(i64),
    /// A word such as `panic: abort` or `opt-level: s`.
    Text(String),
}

impl fmt::Display for ProfileValue {
    /// Renders the value as a TOML literal, the form `cargo --config` parses.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Bool(value) => write!(f, "{value}"),
            Self::Integer(value) => write!(f, "{value}"),
            Self::Text(value) => write!(f, "\"{}\"", value.escape_default()),
        }
    }
}

/// A recipe that cannot be turned into a safe command line.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RecipeError {
    /// A name field is empty or contains characters outside `[A-Za-z0-9._-]`.
    #[error(
        "build recipe field `{field}` = {value:?} must be a non-empty name of letters, digits, `.`, `_` or `-`"
    )]
    BadName {
        /// The recipe field at fault.
        field: &'static str,
        /// Its value.
        value: String,
    },
    /// A rustc flag contains the `CARGO_ENCODED_RUSTFLAGS` separator or is empty.
    #[error(
        "build recipe `extra_rustflags` entry {value:?} is empty or contains the 0x1f separator"
    )]
    BadFlag {
        /// The flag at fault.
        value: String,
    },
}

impl BuildRecipe {
    /// The standard recipe for tests and for `oracle build` without a constitution: toolchain
    /// 1.95.0, package and binary `coherent`, baseline `x86-64`, and the release profile of the
    /// workspace (`lto=true, codegen-units=1, panic=abort, opt-level=3, debug=false, strip=false,
    /// incremental=false`) forced so that a candidate's manifest cannot change it.
    #[must_use]
    pub fn standard() -> Self {
        let overrides = [
            ("lto", ProfileValue::Bool(true)),
            ("codegen-units", ProfileValue::Integer(1)),
            ("panic", ProfileValue::Text("abort".into())),
            ("opt-level", ProfileValue::Integer(3)),
            ("debug", ProfileValue::Bool(false)),
            ("strip", ProfileValue::Bool(false)),
            ("incremental", ProfileValue::Bool(false)),
        ];
        Self {
            toolchain: "1.95.0".into(),
            package: "coherent".into(),
            binary: "coherent".into(),
            target_cpu: "x86-64".into(),
            profile_overrides: overrides
                .into_iter()
                .map(|(key, value)| (key.to_owned(), value))
                .collect(),
            extra_rustflags: Vec::new(),
        }
    }

    /// sha256 (hex) of the canonical form: compact JSON with fields in declaration order and
    /// overrides sorted by key, so equal recipes hash equally whatever their YAML layout.
    #[must_use]
    pub fn sha256(&self) -> String {
        let canonical = serde_json::to_vec(self).expect("a recipe always serialises to JSON");
        crate::integrity::sha256_hex(&canonical)
    }

    /// Checks that every name is a plain word, so none can smuggle extra arguments or TOML.
    pub fn validate(&self) -> Result<(), RecipeError> {
        let names = [
            ("toolchain", &self.toolchain),
            ("package", &self.package),
            ("binary", &self.binary),
            ("target_cpu", &self.target_cpu),
        ];
        for (field, value) in names {
            check_name(field, value)?;
        }
        for key in self.profile_overrides.keys() {
            check_name("profile_overrides", key)?;
        }
        if let Some(flag) = self
            .extra_rustflags
            .iter()
            .find(|flag| flag.is_empty() || flag.contains('\x1f'))
        {
            return Err(RecipeError::BadFlag {
                value: flag.clone(),
            });
        }
        Ok(())
    }

    /// The complete rustc flag list for one build: target CPU, the three path remaps, then the
    /// recipe's extra flags. Every flag changes the binary, so the oracle owns all of them.
    #[must_use]
    pub fn rustflags(&self, source: &Path, cargo_home: &Path, target: &Path) -> Vec<String> {
        let remap = |from: &Path, to: &str| format!("--remap-path-prefix={}={to}", from.display());
        let mut flags = vec![
            format!("-Ctarget-cpu={}", self.target_cpu),
            remap(source, REMAPPED_SOURCE),
            remap(cargo_home, REMAPPED_CARGO_HOME),
            remap(target, REMAPPED_TARGET),
        ];
        flags.extend(self.extra_rustflags.iter().cloned());
        flags
    }

    /// The `--config profile.release.KEY=VALUE` arguments that override the candidate's manifest.
    #[must_use]
    pub fn profile_config_args(&self) -> Vec<String> {
        self.profile_overrides
            .iter()
            .flat_map(|(key, value)| {
                [
                    "--config".to_owned(),
                    format!("profile.release.{key}={value}"),
                ]
            })
            .collect()
    }
}

fn check_name(field: &'static str, value: &str) -> Result<(), RecipeError> {
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if value.is_empty() || !value.chars().all(plain) {
        return Err(RecipeError::BadName {
            field,
            value: value.to_owned(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_recipe_round_trips_through_yaml_with_plain_scalars() {
        let recipe = BuildRecipe::standard();
        let yaml = serde_norway::to_string(&recipe).unwrap();
        assert!(yaml.contains("lto: true"), "{yaml}");
        assert!(yaml.contains("codegen-units: 1"), "{yaml}");
        assert!(yaml.contains("panic: abort"), "{yaml}");
        let back: BuildRecipe = serde_norway::from_str(&yaml).unwrap();
        assert_eq!(back, recipe);
        assert_eq!(back.sha256(), recipe.sha256());
    }

    #[test]
    fn standard_recipe_as_the_constitution_writes_it() {
        let yaml = serde_norway::to_string(&BuildRecipe::standard()).unwrap();
        insta::assert_snapshot!("standard_recipe_yaml", yaml);
        insta::assert_snapshot!("standard_recipe_sha256", BuildRecipe::standard().sha256());
    }

    #[test]
    fn any_change_changes_the_hash() {
        let base = BuildRecipe::standard();
        let mut cpu = base.clone();
        cpu.target_cpu = "x86-64-v2".into();
        let mut flag = base.clone();
        flag.extra_rustflags.push("-Cdebug-assertions".into());
        let mut profile = base.clone();
        profile
            .profile_overrides
            .insert("lto".into(), ProfileValue::Text("thin".into()));
        for changed in [cpu, flag, profile] {
            assert_ne!(changed.sha256(), base.sha256());
        }
    }

    #[test]
    fn config_arguments_are_toml_literals() {
        let args = BuildRecipe::standard().profile_config_args();
        assert!(args.contains(&"profile.release.panic=\"abort\"".to_owned()));
        assert!(args.contains(&"profile.release.codegen-units=1".to_owned()));
        assert!(args.contains(&"profile.release.lto=true".to_owned()));
        assert_eq!(args.iter().filter(|arg| *arg == "--config").count(), 7);
    }

    #[test]
    fn names_that_could_inject_arguments_are_refused() {
        let mut recipe = BuildRecipe::standard();
        recipe.package = "coherent --bin other".into();
        assert!(matches!(
            recipe.validate(),
            Err(RecipeError::BadName {
                field: "package",
                ..
            })
        ));
        let mut recipe = BuildRecipe::standard();
        recipe
            .profile_overrides
            .insert("lto=false\nx".into(), ProfileValue::Bool(true));
        assert!(recipe.validate().is_err());
        assert_eq!(BuildRecipe::standard().validate(), Ok(()));
    }
}
