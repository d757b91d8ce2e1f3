//! The one builder of the test constitutions: the register tests' small one and the verify tests'
//! node-limited one are written from the same parts, so that a new rule (a new field, a new
//! version) is added to every fixture in one place.

use std::fmt::Write as _;

/// A constitution to write as YAML, field by field in the order the real one uses.
#[derive(Debug, Clone)]
pub struct ConstitutionFixture {
    /// `version:`.
    pub version: u32,
    /// `identical_binaries: gleich` (Article 2.4, version 3 on).
    pub identical_binaries: bool,
    /// `build.profile_overrides:` as `key: value` lines ([`QUICK_RECIPE`]).
    pub profile_overrides: &'static [&'static str],
    /// `build.extra_rustflags: []` is written.
    pub extra_rustflags: bool,
    /// The profiles, in order.
    pub profiles: Vec<ProfileFixture>,
    /// The `engine:` contract as YAML lines indented by two spaces; when given, it states the
    /// build and the gate, and `build:` and `gate:` are left out.
    pub engine: Option<String>,
}

/// The real constitution's `profile_overrides` but link-time optimization: the end-to-end tests
/// build a dozen engines on a cold cache, each twice, and LTO doubles each build (18 s against 9 s
/// for the engine) while changing nothing they look at. The gate's and the build's own tests build
/// with the real constitution's recipe.
pub const QUICK_RECIPE: &[&str] = &[
    "codegen-units: 1",
    "debug: false",
    "incremental: false",
    "lto: false",
    "opt-level: 3",
    "panic: abort",
    "strip: false",
];

/// The fixture engine's Cargo recipe with `profile_overrides` (and `extra_rustflags: []` if
/// asked): the constitution's `build:` mapping, and the file `oracle build --recipe` reads.
#[must_use]
pub fn cargo_recipe(profile_overrides: &[&str], extra_rustflags: bool) -> String {
    let mut y = String::from(
        "toolchain: \"1.95.0\"\npackage: coherent\nbinary: coherent\ntarget_cpu: x86-64\nprofile_overrides:\n",
    );
    for line in profile_overrides {
        let _ = writeln!(y, "  {line}");
    }
    if extra_rustflags {
        y.push_str("extra_rustflags: []\n");
    }
    y
}

/// One profile.
#[derive(Debug, Clone)]
pub struct ProfileFixture {
    /// Its name.
    pub name: &'static str,
    /// `binding:`.
    pub binding: bool,
    /// `description:`.
    pub description: &'static str,
    /// `alpha:` and `beta:`.
    pub error_rate: f64,
    /// `batch_size:`.
    pub batch_size: u32,
    /// Fishtest-like adjudication (resign after 3 moves beyond 600 cp, draw from move 30 after 6
    /// moves within 5 cp) and the constitution's fault limits; `false`: no adjudication, no limits.
    pub adjudicated: bool,
    /// The stages, in order.
    pub stages: Vec<StageFixture>,
}

/// One stage.
#[derive(Debug, Clone)]
pub struct StageFixture {
    /// Its name.
    pub name: &'static str,
    /// `tc:` as written (quoted where YAML needs it).
    pub tc: &'static str,
    /// The book's path.
    pub book: &'static str,
    /// The book's pinned sha256.
    pub book_sha256: String,
    /// `min_games:`.
    pub min_games: u64,
    /// `max_games:`.
    pub max_games: u64,
    /// `bounds.standard:`.
    pub standard: [f64; 2],
    /// `bounds.randfall:`.
    pub randfall: [f64; 2],
}

impl ConstitutionFixture {
    /// The YAML text.
    #[must_use]
    pub fn yaml(&self) -> String {
        let mut y = format!("version: {}\n", self.version);
        if self.identical_binaries {
            y.push_str("identical_binaries: gleich\n");
        }
        if let Some(engine) = &self.engine {
            let _ = write!(y, "engine:\n{engine}");
        } else {
            y.push_str("build:\n");
            for line in cargo_recipe(self.profile_overrides, self.extra_rustflags).lines() {
                let _ = writeln!(y, "  {line}");
            }
            y.push_str("gate:\n  symbols: [coherent_evaluate_popcnt]\n  callee_depth: 2\n");
        }
        y.push_str(
            "loss_tolerance:\n  booking: final_stage_nelo_deficit\n  limit_nelo: 10.0\nprofiles:\n",
        );
        for profile in &self.profiles {
            profile.write(&mut y);
        }
        y
    }
}

impl ProfileFixture {
    fn write(&self, y: &mut String) {
        let _ = write!(
            y,
            "  {}:\n    binding: {}\n    description: {}\n    alpha: {:?}\n    beta: {:?}\n    batch_size: {}\n",
            self.name,
            self.binding,
            self.description,
            self.error_rate,
            self.error_rate,
            self.batch_size
        );
        if self.adjudicated {
            y.push_str(
                "    adjudication:\n      resign:\n        move_count: 3\n        score_cp: 600\n      \
                 draw:\n        move_number: 30\n        move_count: 6\n        score_cp: 5\n    \
                 fault_limits:\n      predecessor_crashes: 0\n      predecessor_per_mille: 5\n      \
                 candidate_per_mille: 50\n",
            );
        } else {
            y.push_str("    adjudication:\n      resign: null\n      draw: null\n");
        }
        y.push_str("    stages:\n");
        for stage in &self.stages {
            let _ = write!(
                y,
                "      - name: {}\n        tc: {}\n        book: {}\n        book_sha256: {}\n        \
                 concurrency: 2\n        min_games: {}\n        max_games: {}\n        bounds:\n          \
                 standard: [{:?}, {:?}]\n          randfall: [{:?}, {:?}]\n",
                stage.name,
                stage.tc,
                stage.book,
                stage.book_sha256,
                stage.min_games,
                stage.max_games,
                stage.standard[0],
                stage.standard[1],
                stage.randfall[0],
                stage.randfall[1]
            );
        }
    }
}
