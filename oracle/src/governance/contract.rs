//! The engine contract: everything the oracle must know about an engine to judge it, as data in
//! the constitution's `engine:` section (docs/engine-contract.md). How it is built, what a
//! candidate may change, how its bench is run and read, which symbols the gate inspects, and the
//! UCI options both engines get in every game, and the files fetched outside the sandbox that
//! its build needs, pinned by sha256.
//!
//! A constitution without `engine:` reads as the Cargo kind with the rules it always had: its
//! `build:` recipe, scope `engine/` with the std-only manifest scan, `bench` read in Coherent's
//! or Stockfish's form, the `Bench: N` trailer, its `gate:`, no options ([`EngineContract::cargo`]).

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::constitution::GateRules;
use crate::builder::bench::BenchRules;
use crate::builder::fetch::{self, PinnedFile};
use crate::builder::{BuildRecipe, EngineBuild};

/// The engine contract (the constitution's `engine:`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineContract {
    /// How both engines are built, bit-identically.
    pub build: EngineBuild,
    /// What a candidate may change: repository paths, a directory ending in `/`
    /// (`src/`) or one file. Everything else is governance.
    pub scope: Vec<String>,
    /// How the bench signature is measured and declared.
    pub bench: BenchRules,
    /// The build-shape gate, or `none`, stated explicitly.
    pub gate: GateContract,
    /// UCI options both engines get in every game of every stage (`Threads: 1`, `Hash: 16`),
    /// so that neither side's defaults are measured.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub options: BTreeMap<String, OptionValue>,
    /// Files the build needs that the repository does not hold (an NNUE network), fetched by the
    /// oracle outside the sandbox, pinned by sha256 and placed in the tree before each build.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fetch: Vec<PinnedFile>,
}

/// The build-shape gate of a contract.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateContract {
    /// The symbols whose code must use hardware POPCNT (Rust, C or C++ names; C++ as demangled
    /// or mangled).
    Symbols(GateRules),
    /// No gate: the contract says so (`gate: none`), it is never left out by accident.
    None,
}

/// The word that states that a contract has no gate.
const NO_GATE: &str = "none";

impl Serialize for GateContract {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Symbols(rules) => rules.serialize(serializer),
            Self::None => serializer.serialize_str(NO_GATE),
        }
    }
}

impl<'de> Deserialize<'de> for GateContract {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        /// Reads `none` or the gate's mapping, naming both in the error.
        struct Gate;

        impl<'de> Visitor<'de> for Gate {
            type Value = GateContract;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("`none` or a mapping with `symbols` and `callee_depth`")
            }

            fn visit_str<E: de::Error>(self, value: &str) -> Result<GateContract, E> {
                if value == NO_GATE {
                    Ok(GateContract::None)
                } else {
                    Err(E::invalid_value(de::Unexpected::Str(value), &self))
                }
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<GateContract, A::Error> {
                GateRules::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(GateContract::Symbols)
            }
        }

        deserializer.deserialize_any(Gate)
    }
}

/// A UCI option's value as the constitution writes it: `1`, `true` or a word.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OptionValue {
    /// `type check` options.
    Bool(bool),
    /// `type spin` options.
    Integer(i64),
    /// `type combo` and `type string` options.
    Text(String),
}

impl fmt::Display for OptionValue {
    /// The value as `setoption name … value …` sends it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Bool(value) => write!(f, "{value}"),
            Self::Integer(value) => write!(f, "{value}"),
            Self::Text(value) => f.write_str(value),
        }
    }
}

/// The scope of today's constitution: Coherent's `engine/`.
pub const CARGO_SCOPE: &str = "engine/";

impl EngineContract {
    /// The contract a constitution without `engine:` states: the Cargo kind with its `build:`
    /// recipe and `gate:`, scope `engine/`, `bench` read as before, `Bench: N`, no options.
    #[must_use]
    pub fn cargo(recipe: &BuildRecipe, gate: &GateRules) -> Self {
        Self {
            build: EngineBuild::Cargo(recipe.clone()),
            scope: vec![CARGO_SCOPE.to_owned()],
            bench: BenchRules::standard(),
            gate: GateContract::Symbols(gate.clone()),
            options: BTreeMap::new(),
            fetch: Vec::new(),
        }
    }

    /// Whether `path` (repository-relative) lies in the scope.
    #[must_use]
    pub fn in_scope(&self, path: &str) -> bool {
        self.scope.iter().any(|entry| {
            if entry.ends_with('/') {
                path.starts_with(entry.as_str())
            } else {
                path == entry
            }
        })
    }

    /// The scope as people read it: `engine/` or `src/, Makefile`.
    #[must_use]
    pub fn scope_text(&self) -> String {
        self.scope.join(", ")
    }

    /// The options as `(name, value)` pairs for the match runner, in name order.
    #[must_use]
    pub fn option_pairs(&self) -> Vec<(String, String)> {
        self.options
            .iter()
            .map(|(name, value)| (name.clone(), value.to_string()))
            .collect()
    }

    /// Rules between fields; `Err((field path under engine, message))` for the first that fails.
    pub(super) fn check(&self) -> Result<(), (String, String)> {
        if self.scope.is_empty() {
            return Err(("scope".into(), "at least one path is required".into()));
        }
        if let Some(entry) = self.scope.iter().find(|entry| {
            entry.is_empty()
                || entry.starts_with('/')
                || entry.split('/').any(|part| part == ".." || part == ".")
        }) {
            return Err((
                "scope".into(),
                format!("{entry:?} is not a path inside the repository (`src/`, `Makefile`)"),
            ));
        }
        if let Some(native) = self.build.native() {
            native
                .validate()
                .map_err(|error| ("build".into(), error.to_string()))?;
        }
        if self.bench.output.is_empty() {
            return Err((
                "bench.output".into(),
                "at least one line pattern with `{nodes}` is required".into(),
            ));
        }
        if let Some(pattern) = self
            .bench
            .output
            .iter()
            .find(|pattern| !pattern.contains("{nodes}") && !pattern.contains("{nps}"))
        {
            return Err((
                "bench.output".into(),
                format!("{pattern:?} reads neither `{{nodes}}` nor `{{nps}}`"),
            ));
        }
        if self.bench.trailer.key.is_empty() || self.bench.trailer.key.contains([':', ' ']) {
            return Err((
                "bench.trailer.key".into(),
                format!("{:?} is not a trailer key", self.bench.trailer.key),
            ));
        }
        if let GateContract::Symbols(rules) = &self.gate
            && rules.symbols.is_empty()
        {
            return Err((
                "gate.symbols".into(),
                "at least one symbol, or `gate: none`".into(),
            ));
        }
        if let Some(name) = self
            .options
            .keys()
            .find(|name| name.is_empty() || name.contains('\n'))
        {
            return Err(("options".into(), format!("{name:?} is not an option name")));
        }
        fetch::check_all(&self.fetch)
    }
}

#[cfg(test)]
impl EngineContract {
    /// Coherent's own contract, for the library's tests: the Cargo kind with the standard recipe
    /// and gate.
    pub(crate) fn coherent() -> Self {
        Self::cargo(&BuildRecipe::standard(), &GateRules::standard())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAKE: &str = r#"
build:
  kind: make
  command: make -C src build ARCH=x86-64-modern EXE={out}
  flags: [-O2]
  compiler: g++
scope: [src/]
bench:
  args: [bench, "16", "1", "13"]
  output: ["Nodes searched : {nodes}", "Nodes/second : {nps}"]
  trailer: {key: Bench, digit_groups: true}
gate:
  symbols: ["Eval::evaluate(Position const&)"]
  callee_depth: 2
options: {Threads: 1, Hash: 16}
"#;

    #[test]
    fn a_make_contract_reads_with_every_field() {
        let contract: EngineContract = serde_norway::from_str(MAKE).unwrap();
        assert_eq!(contract.build.kind(), "make");
        assert!(contract.in_scope("src/search.cpp"));
        assert!(!contract.in_scope("README.md") && !contract.in_scope("srcx/a"));
        assert_eq!(
            contract.option_pairs(),
            [("Hash".into(), "16".into()), ("Threads".into(), "1".into())]
        );
        assert_eq!(contract.bench.args[1], "16");
        assert!(contract.bench.trailer.digit_groups);
        assert!(contract.check().is_ok());
        let back: EngineContract =
            serde_norway::from_str(&serde_norway::to_string(&contract).unwrap()).unwrap();
        assert_eq!(back, contract);
    }

    #[test]
    fn no_gate_is_said_in_words_and_unknown_fields_are_refused() {
        let none = MAKE.replace(
            "gate:\n  symbols: [\"Eval::evaluate(Position const&)\"]\n  callee_depth: 2\n",
            "gate: none\n",
        );
        let contract: EngineContract = serde_norway::from_str(&none).unwrap();
        assert_eq!(contract.gate, GateContract::None);
        for (text, expected) in [
            (
                MAKE.replace("gate:\n  symbols", "gate:\n  symbolz"),
                "symbolz",
            ),
            (MAKE.replace("  flags:", "  flagz:"), "flagz"),
            (MAKE.replace("kind: make", "kind: ninja"), "ninja"),
            (MAKE.replace("  trailer:", "  trailers:"), "trailers"),
            (none.replace("gate: none", "gate: off"), "none"),
        ] {
            let error = serde_norway::from_str::<EngineContract>(&text)
                .unwrap_err()
                .to_string();
            assert!(error.contains(expected), "{expected}: {error}");
        }
    }

    #[test]
    fn checks_name_the_field() {
        let contract: EngineContract = serde_norway::from_str(MAKE).unwrap();
        let mut bad = contract.clone();
        bad.scope = vec!["../x/".into()];
        assert_eq!(bad.check().unwrap_err().0, "scope");
        let mut bad = contract.clone();
        bad.bench.output = vec!["Nodes".into()];
        assert_eq!(bad.check().unwrap_err().0, "bench.output");
        let mut bad = contract;
        bad.build = serde_norway::from_str("kind: make\ncommand: make\ncompiler: cc\n").unwrap();
        let (field, message) = bad.check().unwrap_err();
        assert_eq!(field, "build");
        assert!(message.contains("{out}"), "{message}");
    }

    /// A pin as the constitution writes it, under `fetch:`.
    fn with_fetch(pins: &str) -> String {
        format!("{MAKE}fetch:\n{pins}")
    }

    const NET_SHA256: &str = "62ef826d1a6d1f1f2d1d2c9d1a4a8b3e2e4f0a9b8c7d6e5f4a3b2c1d0e9f8a7b";

    #[test]
    fn fetch_is_absent_unless_given_and_reads_its_pins() {
        let contract: EngineContract = serde_norway::from_str(MAKE).unwrap();
        assert!(contract.fetch.is_empty());
        let text = serde_norway::to_string(&contract).unwrap();
        assert!(!text.contains("fetch"), "an empty list is left out: {text}");
        let pinned = with_fetch(&format!(
            "- url: https://tests.stockfishchess.org/api/nn/nn-62ef826d1a6d.nnue\n  \
             sha256: {NET_SHA256}\n  path: src/nn-62ef826d1a6d.nnue\n"
        ));
        let contract: EngineContract = serde_norway::from_str(&pinned).unwrap();
        assert_eq!(contract.fetch.len(), 1);
        assert_eq!(contract.fetch[0].path, "src/nn-62ef826d1a6d.nnue");
        assert!(contract.check().is_ok());
        let back: EngineContract =
            serde_norway::from_str(&serde_norway::to_string(&contract).unwrap()).unwrap();
        assert_eq!(back, contract);
        let unknown = pinned.replace("  path:", "  place:");
        let error = serde_norway::from_str::<EngineContract>(&unknown)
            .unwrap_err()
            .to_string();
        assert!(error.contains("place"), "{error}");
    }

    #[test]
    fn fetch_checks_name_the_field() {
        let pin = |url: &str, sha256: &str, path: &str| {
            format!("- {{url: '{url}', sha256: '{sha256}', path: '{path}'}}\n")
        };
        let good = pin("file:///srv/nets/a.nnue", NET_SHA256, "src/a.nnue");
        let cases = [
            (pin("ftp://x/a", NET_SHA256, "a"), "fetch[0].url"),
            (pin("https://", NET_SHA256, "a"), "fetch[0].url"),
            (pin("https://x/a b", NET_SHA256, "a"), "fetch[0].url"),
            (
                pin("https://x/a", &NET_SHA256.to_uppercase(), "a"),
                "fetch[0].sha256",
            ),
            (pin("https://x/a", &NET_SHA256[1..], "a"), "fetch[0].sha256"),
            (pin("https://x/a", NET_SHA256, "/etc/a"), "fetch[0].path"),
            (
                pin("https://x/a", NET_SHA256, "src/../../a"),
                "fetch[0].path",
            ),
            (pin("https://x/a", NET_SHA256, "./a"), "fetch[0].path"),
            (pin("https://x/a", NET_SHA256, "src//a"), "fetch[0].path"),
            (pin("https://x/a", NET_SHA256, "src/"), "fetch[0].path"),
            (pin("https://x/a", NET_SHA256, ""), "fetch[0].path"),
            (
                pin("https://x/a", NET_SHA256, ".git/hooks/pre-commit"),
                "fetch[0].path",
            ),
            (
                pin("https://x/a", NET_SHA256, "src/.git/a"),
                "fetch[0].path",
            ),
            (format!("{good}{good}"), "fetch[1].path"),
            (
                format!("{good}{}", pin("https://x/b", NET_SHA256, "src/a.nnue/b")),
                "fetch[1].path",
            ),
        ];
        for (pins, field) in cases {
            let contract: EngineContract = serde_norway::from_str(&with_fetch(&pins)).unwrap();
            let (found, message) = contract.check().unwrap_err();
            assert_eq!(found, field, "{pins}: {message}");
        }
        let contract: EngineContract = serde_norway::from_str(&with_fetch(&good)).unwrap();
        assert!(contract.check().is_ok());
    }
}
