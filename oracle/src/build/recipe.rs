//! The build recipe that the constitution pins: every input that changes the binary.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

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
    pub profile_overrides: BTreeMap<String, String>,
    /// Further rustc flags, appended after the oracle's own (target CPU, path remaps).
    #[serde(default)]
    pub extra_rustflags: Vec<String>,
}
