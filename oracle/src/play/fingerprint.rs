//! What identifies a match: the engines (by the sha256 of their executables and their
//! settings), the rules, the book and the opening order. Two results (a state file and the
//! run resuming it, or shards being merged) combine only when their fingerprints are equal.

use serde::{Deserialize, Serialize};

use super::book::{BookFormat, BookOrder};
use super::clock::ClockRules;
use super::game::Adjudication;
use super::runner::{MatchConfig, RunError};
use super::uci::EngineConfig;

/// What identifies an engine in a result: its name, the sha256 of its executable and its settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineIdentity {
    /// The configured name.
    pub name: String,
    /// sha256 of the executable's bytes.
    pub sha256: String,
    /// Command-line arguments.
    pub args: Vec<String>,
    /// UCI options in the order sent.
    pub options: Vec<(String, String)>,
}

impl EngineIdentity {
    /// Hashes the executable of `config`.
    pub fn of(config: &EngineConfig) -> Result<EngineIdentity, RunError> {
        let bytes = std::fs::read(&config.command).map_err(|source| RunError::Io {
            path: config.command.clone(),
            source,
        })?;
        Ok(EngineIdentity {
            name: config.name.clone(),
            sha256: crate::integrity::sha256_hex(&bytes),
            args: config.args.clone(),
            options: config
                .ordered_options()
                .into_iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
        })
    }
}

/// Everything that determines which games are played; two results can be combined only
/// when their fingerprints are equal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// The first and second engine.
    pub engines: [EngineIdentity; 2],
    /// Clock rules.
    pub clock: ClockRules,
    /// Adjudication rules.
    pub adjudication: Adjudication,
    /// sha256 of the book file.
    pub book_sha256: String,
    /// Book format.
    pub book_format: BookFormat,
    /// The order the book is read in (absent in files written before the choice existed).
    #[serde(default)]
    pub book_order: BookOrder,
    /// Plies taken from PGN games.
    pub plies: usize,
    /// Seed of the opening order.
    pub seed: u64,
    /// Offset into the opening order.
    pub opening_offset: usize,
    /// Pairs in the whole match (all shards).
    pub pairs: u64,
    /// Number of shards the match is cut into.
    pub shards: u32,
}

impl Fingerprint {
    /// The fingerprint of the match `config` plays with a book whose bytes hash to `book_sha256`
    /// (the engines' executables are hashed now).
    pub fn of(config: &MatchConfig, book_sha256: String) -> Result<Fingerprint, RunError> {
        Ok(Fingerprint {
            engines: [
                EngineIdentity::of(&config.engines[0])?,
                EngineIdentity::of(&config.engines[1])?,
            ],
            clock: config.clock,
            adjudication: config.adjudication,
            book_sha256,
            book_format: config.book_format,
            book_order: config.book_order,
            plies: config.plies,
            seed: config.seed,
            opening_offset: config.opening_offset,
            pairs: config.pairs,
            shards: config.shard.count,
        })
    }
}

/// The first field in which two fingerprints differ, named for error messages.
pub fn fingerprint_difference(a: &Fingerprint, b: &Fingerprint) -> Option<&'static str> {
    let fields: [(&'static str, bool); 11] = [
        ("engines", a.engines == b.engines),
        ("clock", a.clock == b.clock),
        ("adjudication", a.adjudication == b.adjudication),
        ("book", a.book_sha256 == b.book_sha256),
        ("book format", a.book_format == b.book_format),
        ("book order", a.book_order == b.book_order),
        ("plies", a.plies == b.plies),
        ("seed", a.seed == b.seed),
        ("opening offset", a.opening_offset == b.opening_offset),
        ("pairs", a.pairs == b.pairs),
        ("shard count", a.shards == b.shards),
    ];
    fields
        .into_iter()
        .find(|(_, equal)| !equal)
        .map(|(name, _)| name)
}

/// A fingerprint of a small match between two identical engines, for tests.
#[cfg(test)]
pub(crate) fn example() -> Fingerprint {
    let engine = EngineIdentity {
        name: "e".into(),
        sha256: "00".into(),
        args: Vec::new(),
        options: Vec::new(),
    };
    Fingerprint {
        engines: [engine.clone(), engine],
        clock: ClockRules {
            tc: super::clock::TimeControl::Nodes(std::num::NonZeroU64::new(1000).unwrap()),
            second_engine_tc: None,
            margin: std::time::Duration::from_millis(100),
            slack: std::time::Duration::from_millis(200),
            move_timeout: std::time::Duration::from_secs(60),
        },
        adjudication: Adjudication::default(),
        book_sha256: "ab".into(),
        book_format: BookFormat::Epd,
        book_order: BookOrder::Random,
        plies: 8,
        seed: 1,
        opening_offset: 0,
        pairs: 10,
        shards: 2,
    }
}

#[cfg(test)]
mod tests {
    use super::super::game::ResignRule;
    use super::*;

    #[test]
    fn fingerprints_name_the_first_difference() {
        let a = example();
        assert_eq!(fingerprint_difference(&a, &a.clone()), None);
        let mut b = a.clone();
        b.seed = 2;
        b.pairs = 11;
        assert_eq!(fingerprint_difference(&a, &b), Some("seed"));
        let mut c = a.clone();
        c.engines[1].sha256 = "01".into();
        assert_eq!(fingerprint_difference(&a, &c), Some("engines"));
        let mut d = a.clone();
        d.book_sha256 = "cd".into();
        assert_eq!(fingerprint_difference(&a, &d), Some("book"));
        let mut odds = a.clone();
        odds.clock.second_engine_tc = Some(super::super::clock::TimeControl::Depth(3));
        assert_eq!(fingerprint_difference(&a, &odds), Some("clock"));

        // One-sided and two-sided resign are different matches; a file written before the
        // choice existed reads as one-sided.
        let resign = |two_sided| {
            let mut f = a.clone();
            f.adjudication.resign = Some(ResignRule {
                move_count: 3,
                score: 400,
                two_sided,
            });
            f
        };
        let (one_sided, two_sided) = (resign(false), resign(true));
        assert_eq!(
            fingerprint_difference(&one_sided, &two_sided),
            Some("adjudication")
        );
        let mut old = serde_json::to_value(&one_sided).unwrap();
        old["adjudication"]["resign"]
            .as_object_mut()
            .unwrap()
            .remove("two_sided");
        let old: Fingerprint = serde_json::from_value(old).unwrap();
        assert_eq!(fingerprint_difference(&old, &one_sided), None);
    }
}
