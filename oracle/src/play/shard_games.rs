//! A shard's games against its claims (docs/architecture.md, "Scale"): the PGN next to a shard
//! result must be the file its `pgn_sha256` names and show exactly the pairs it claims, each
//! game with the claimed players, result, termination and plies, and a pair's two games alike
//! exactly when the shard flags them `identical_games`. Without this, a shard could carry a real
//! fingerprint and invented pairs.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use super::pgn::{ParsedGame, PgnError, PgnReader};
use super::shard::ShardResult;
use super::tally::{GameSummary, PairOutcome};
use crate::integrity::sha256_file;

/// The longest game the merge reads: the longest legal game (under 12,000 plies) at about 30
/// bytes a ply (SAN and its `{score/depth time}` comment) fits more than twice.
pub const MAX_GAME_BYTES: u64 = 1 << 20;

/// Where a shard run writes its games: the shard result's path with the extension `.pgn`
/// (`shard-3-of-8.json` → `shard-3-of-8.pgn`).
pub fn pgn_path(shard_file: &Path) -> PathBuf {
    shard_file.with_extension("pgn")
}

/// Why a shard's games do not bear out its pairs.
#[derive(Debug, thiserror::Error)]
pub enum GamesError {
    /// The shard names no PGN.
    #[error(
        "{}: no games recorded (its pgn_sha256 is null); a shard merges only with its PGN next to it, {}",
        shard.display(),
        pgn.display()
    )]
    NoPgn {
        /// The shard result.
        shard: PathBuf,
        /// Where its PGN belongs.
        pgn: PathBuf,
    },
    /// The PGN is missing, too large, or not in the form the runner writes.
    #[error("{}: {reason}", pgn.display())]
    Unreadable {
        /// The PGN.
        pgn: PathBuf,
        /// Why.
        reason: String,
    },
    /// The PGN is not the file the shard was written with.
    #[error("{}: its sha256 is {actual}, {} claims {claimed}", pgn.display(), shard.display())]
    Digest {
        /// The PGN.
        pgn: PathBuf,
        /// The shard result.
        shard: PathBuf,
        /// The PGN's digest.
        actual: String,
        /// The shard's `pgn_sha256`.
        claimed: String,
    },
    /// A pair or game of the PGN differs from the shard's claim.
    #[error("{}: {place}: {field}: the PGN says {pgn_says}, the shard claims {claims}", shard.display())]
    Mismatch {
        /// The shard result.
        shard: PathBuf,
        /// `pair P` or `pair P game G`, numbered as the PGN's `Round` tag (`P.G`).
        place: String,
        /// What differs.
        field: &'static str,
        /// The value in the PGN.
        pgn_says: String,
        /// The value the shard claims.
        claims: String,
    },
}

/// Holds the PGN next to `shard_file` against the shard's pairs (their indices, players,
/// results, terminations, plies and identical-game flags).
///
/// The runner writes a pair's two games together, game 1 first, once the pair is counted; the
/// file is read game by game, each at most [`MAX_GAME_BYTES`].
pub fn check(shard_file: &Path, shard: &ShardResult) -> Result<(), GamesError> {
    let pgn = pgn_path(shard_file);
    let Some(claimed) = &shard.pgn_sha256 else {
        return Err(GamesError::NoPgn {
            shard: shard_file.to_path_buf(),
            pgn,
        });
    };
    let names = [
        shard.fingerprint.engines[0].name.as_str(),
        shard.fingerprint.engines[1].name.as_str(),
    ];
    // The size before the digest: a file far too large for its claims is not read whole.
    check_size(&pgn, shard.pairs.len())?;
    let actual = sha256_file(&pgn).map_err(|e| GamesError::Unreadable {
        pgn: pgn.clone(),
        reason: e.reason.to_string(),
    })?;
    if actual != *claimed {
        return Err(GamesError::Digest {
            pgn: pgn.clone(),
            shard: shard_file.to_path_buf(),
            actual,
            claimed: claimed.clone(),
        });
    }
    let file = File::open(&pgn).map_err(|e| GamesError::Unreadable {
        pgn: pgn.clone(),
        reason: e.to_string(),
    })?;
    check_pairs(shard_file, &pgn, file, names, &shard.pairs)
}

/// Holds `games`, the games of the PGN `pgn`, against `pairs`, the pairs `claimant` counts of a
/// match between the engines `names` (the first has White in game 1): every claimed pair shows
/// there, once, as claimed, and no other pair. Also for pairs counted outside any shard (a
/// stage's pairs taken over from earlier runs, in its state file).
pub fn check_pairs(
    claimant: &Path,
    pgn: &Path,
    games: impl Read,
    names: [&str; 2],
    pairs: &[PairOutcome],
) -> Result<(), GamesError> {
    let unreadable = |reason: String| GamesError::Unreadable {
        pgn: pgn.to_path_buf(),
        reason,
    };
    let mut reader = PgnReader::new(BufReader::new(games), MAX_GAME_BYTES);
    let mut next_game = || {
        reader
            .next()
            .transpose()
            .map_err(|e: PgnError| unreadable(e.to_string()))
    };
    let pairs: BTreeMap<u64, &PairOutcome> = pairs.iter().map(|p| (p.index, p)).collect();
    let mut seen = BTreeSet::new();
    let check = Check {
        shard: claimant,
        pgn,
        names,
    };
    while let Some(first) = next_game()? {
        let second = next_game()?
            .ok_or_else(|| unreadable("its last game has no second game of its pair".into()))?;
        let index = pair_index(&first, &second).map_err(unreadable)?;
        let place = format!("pair {}", index + 1);
        let Some(claim) = pairs.get(&index) else {
            return Err(check.mismatch(place, "games", "2", "none"));
        };
        if !seen.insert(index) {
            return Err(check.mismatch(place, "games", "4 or more", "2"));
        }
        for (number, (game, summary)) in [&first, &second].into_iter().zip(&claim.games).enumerate()
        {
            check.game(index, number, game, summary)?;
        }
        let identical = first.moves == second.moves
            && ["FEN", "Result", "Termination"]
                .iter()
                .all(|tag| first.tag(tag) == second.tag(tag));
        if identical != claim.identical_games {
            let says = |same: bool| if same { "yes" } else { "no" };
            return Err(check.mismatch(
                place,
                "identical games",
                says(identical),
                says(claim.identical_games),
            ));
        }
    }
    match pairs.keys().find(|index| !seen.contains(index)) {
        Some(index) => Err(check.mismatch(format!("pair {}", index + 1), "games", "none", "2")),
        None => Ok(()),
    }
}

/// Refuses a PGN larger than the games of `pairs` pairs can be.
fn check_size(pgn: &Path, pairs: usize) -> Result<(), GamesError> {
    let unreadable = |reason: String| GamesError::Unreadable {
        pgn: pgn.to_path_buf(),
        reason,
    };
    let games = 2 * pairs as u64;
    let limit = MAX_GAME_BYTES.saturating_mul(games);
    let size = std::fs::metadata(pgn)
        .map_err(|e| unreadable(e.to_string()))?
        .len();
    if size > limit {
        return Err(unreadable(format!(
            "{size} bytes, more than {limit} for the {games} games the shard claims"
        )));
    }
    Ok(())
}

/// The global index of the pair whose game 1 is `first` and game 2 is `second` (by their
/// `Round` tags, `P.1` and `P.2` with P = index + 1).
fn pair_index(first: &ParsedGame, second: &ParsedGame) -> Result<u64, String> {
    let (pair, number) = round(first)?;
    let (other, other_number) = round(second)?;
    if number != "1" || other_number != "2" || other != pair {
        return Err(format!(
            "Round {pair}.{number} is followed by Round {other}.{other_number}, not by game 2 of its pair"
        ));
    }
    Ok(pair - 1)
}

/// The games of the pairs `keep` in `pgn` (written by the runner: a pair's two games together),
/// byte for byte and in file order; games of other pairs are left out.
///
/// # Errors
/// A message when the text is not the runner's PGN (a game unreadable, a pair's games apart).
pub fn games_of_pairs(pgn: &[u8], keep: &BTreeSet<u64>) -> Result<Vec<u8>, String> {
    let read = std::cell::Cell::new(0usize);
    let mut reader = PgnReader::new(
        CountingReader {
            inner: pgn,
            read: &read,
        },
        MAX_GAME_BYTES,
    );
    let mut kept = Vec::new();
    let mut start = 0;
    loop {
        let Some(first) = reader.next().transpose().map_err(|e| e.to_string())? else {
            return Ok(kept);
        };
        let second = reader
            .next()
            .transpose()
            .map_err(|e| e.to_string())?
            .ok_or("its last game has no second game of its pair")?;
        // The blank lines after a pair's second game go with it.
        let mut end = read.get();
        while pgn.get(end).is_some_and(|b| matches!(b, b'\n' | b'\r')) {
            end += 1;
        }
        if keep.contains(&pair_index(&first, &second)?) {
            kept.extend_from_slice(&pgn[start..end]);
        }
        start = end;
    }
}

/// A reader of bytes that counts how many the reader above it consumed.
struct CountingReader<'a> {
    inner: &'a [u8],
    read: &'a std::cell::Cell<usize>,
}

impl Read for CountingReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.set(self.read.get() + n);
        Ok(n)
    }
}

impl std::io::BufRead for CountingReader<'_> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        Ok(self.inner)
    }

    fn consume(&mut self, amount: usize) {
        self.inner.consume(amount);
        self.read.set(self.read.get() + amount);
    }
}

/// A game's `Round` tag `P.G` as the pair number P (from 1) and the game number G.
pub(crate) fn round(game: &ParsedGame) -> Result<(u64, &str), String> {
    let round = game.tag("Round").ok_or("a game has no Round tag")?;
    round
        .split_once('.')
        .and_then(|(pair, number)| Some((pair.parse::<u64>().ok()?, number)))
        .filter(|(pair, _)| *pair > 0)
        .ok_or_else(|| format!("Round `{round}` is not PAIR.GAME"))
}

/// The comparison of one shard's games with its claims.
struct Check<'a> {
    shard: &'a Path,
    pgn: &'a Path,
    /// The first and second engine's names (the first has White in game 1).
    names: [&'a str; 2],
}

impl Check<'_> {
    fn unreadable(&self, reason: String) -> GamesError {
        GamesError::Unreadable {
            pgn: self.pgn.to_path_buf(),
            reason,
        }
    }

    fn mismatch(
        &self,
        place: String,
        field: &'static str,
        pgn_says: &str,
        claims: &str,
    ) -> GamesError {
        GamesError::Mismatch {
            shard: self.shard.to_path_buf(),
            place,
            field,
            pgn_says: pgn_says.to_string(),
            claims: claims.to_string(),
        }
    }

    /// Game `number` (0 or 1) of pair `index` against its claim.
    fn game(
        &self,
        index: u64,
        number: usize,
        game: &ParsedGame,
        claim: &GameSummary,
    ) -> Result<(), GamesError> {
        let place = || format!("pair {} game {}", index + 1, number + 1);
        let tag = |name: &str| {
            game.tag(name)
                .ok_or_else(|| self.unreadable(format!("{}: no {name} tag", place())))
        };
        let plies = tag("PlyCount")?
            .parse::<usize>()
            .ok()
            .filter(|&plies| plies == game.moves.len())
            .ok_or_else(|| {
                self.unreadable(format!(
                    "{}: its PlyCount is not its {} moves",
                    place(),
                    game.moves.len()
                ))
            })?;
        let played = (plies - game.book_moves).to_string();
        let claimed_plies = claim.plies.to_string();
        let expected = [
            ("White", self.names[number], tag("White")?),
            ("Black", self.names[1 - number], tag("Black")?),
            ("result", claim.result.pgn(), tag("Result")?),
            (
                "termination",
                claim.termination.pgn_tag(),
                tag("Termination")?,
            ),
            ("plies", claimed_plies.as_str(), played.as_str()),
        ];
        match expected
            .into_iter()
            .find(|(_, claims, says)| claims != says)
        {
            Some((field, claims, says)) => Err(self.mismatch(place(), field, says, claims)),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A game as the runner writes it, reduced to what the reader needs.
    fn game(round: &str, result: &str) -> String {
        format!("[Round \"{round}\"]\n[Result \"{result}\"]\n\n1. e4 e5 {result}\n\n")
    }

    #[test]
    fn games_of_pairs_keeps_the_named_pairs_byte_for_byte() {
        let pairs: Vec<String> = [("3", "1-0"), ("1", "1/2-1/2"), ("2", "0-1")]
            .iter()
            .map(|(pair, result)| {
                game(&format!("{pair}.1"), result) + &game(&format!("{pair}.2"), result)
            })
            .collect();
        let pgn = pairs.concat();
        let keep = |indices: &[u64]| {
            games_of_pairs(pgn.as_bytes(), &indices.iter().copied().collect()).unwrap()
        };
        assert_eq!(keep(&[0, 1, 2]), pgn.as_bytes());
        assert_eq!(keep(&[2, 0]), (pairs[0].clone() + &pairs[1]).as_bytes());
        assert_eq!(keep(&[1]), pairs[2].as_bytes());
        assert!(keep(&[]).is_empty());

        let apart = game("1.1", "1-0") + &game("2.1", "1-0");
        let refused = games_of_pairs(apart.as_bytes(), &BTreeSet::new());
        assert!(
            refused.unwrap_err().contains("not by game 2 of its pair"),
            "a pair's games apart"
        );
    }
}
