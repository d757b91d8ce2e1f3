//! How people write counts, read without guessing an order: pentanomial lists (`Ptnml(0-2)`,
//! always from the worst pair to the best), trinomial counts by name (`w=…,l=…,d=…`) and the
//! result text of a Fishtest test page, as pasted.
//!
//! Positional trinomial counts are refused: Fishtest, cutechess and fastchess print W, L, D
//! while the statistics (and Fishtest's own `results` lists) order them L, D, W, so three bare
//! numbers cannot be read without a guess.

use super::counts::{PentanomialCounts, TrinomialCounts};
use super::elo::Model;
use super::params::SprtParams;

/// Fishtest prints bounds with two decimals: closer than this they are the same bounds.
const PRINTED_BOUND_TOLERANCE: f64 = 0.005 + 1e-9;

/// Why a written count could not be read; every variant quotes what was at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NotationError {
    /// A list with the wrong number of counts.
    #[error("expected {expected} comma-separated counts, got {got}")]
    Arity {
        /// Counts the notation needs.
        expected: usize,
        /// Counts found.
        got: usize,
    },
    /// A field that is not a non-negative integer.
    #[error("count '{0}' is not a non-negative integer")]
    NotACount(String),
    /// A character in a list of pair outcomes that is neither a digit 0–4 nor white space.
    #[error(
        "{line}:{column}: unexpected character {character:?} (pair outcomes are the digits 0-4)"
    )]
    PairOutcome {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The character.
        character: char,
    },
    /// Trinomial counts given by position.
    #[error(
        "'{0}': name the counts, e.g. w=5019,l=5026,d=15699 (three bare numbers are ambiguous: \
         Fishtest, cutechess and fastchess print W, L, D; Fishtest's lists and this oracle's \
         older versions use L, D, W)"
    )]
    Positional(String),
    /// A named field whose name is not one of the outcomes.
    #[error("'{0}' is not one of w=, l=, d= (or wins=, losses=, draws=)")]
    UnknownName(String),
    /// The same outcome named twice.
    #[error("'{0}' is given twice")]
    Repeated(&'static str),
    /// An outcome left out.
    #[error("'{0}=' is missing")]
    Missing(&'static str),
    /// Fishtest text without the W/L/D counts that every result block has; `missing` names the
    /// labels not found.
    #[error(
        "the Fishtest text has no {missing} count: paste the whole block, with its 'Total: … W: … \
         L: … D: …' line (a 'Ptnml(0-2): …' line alone is not enough)"
    )]
    NoCounts {
        /// The labels not found, e.g. `'W:', 'L:', 'D:'`.
        missing: String,
    },
    /// Fishtest text whose total disagrees with its own counts (a mangled paste).
    #[error("the Fishtest text says Total: {total} but W + L + D = {sum}")]
    Total {
        /// The `Total:` field.
        total: u64,
        /// W + L + D.
        sum: u64,
    },
    /// Fishtest text whose SPRT is not the one asked for.
    #[error(
        "the Fishtest text's test has bounds {text} but the command asks for [{elo0}, {elo1}] \
         {model}; give the text's bounds (or remove its LLR line to use the counts alone)"
    )]
    OtherBounds {
        /// The text's bounds as Fishtest writes them.
        text: String,
        /// The command's H0.
        elo0: f64,
        /// The command's H1.
        elo1: f64,
        /// The command's model.
        model: Model,
    },
    /// Fishtest text with a field that does not read as its format prescribes.
    #[error("the Fishtest text's '{field}' does not read: '{text}'")]
    Field {
        /// The field's label (`W:`, `LLR:`, …).
        field: &'static str,
        /// What followed it.
        text: String,
    },
}

/// Reads one count.
fn count(field: &str) -> Result<u64, NotationError> {
    let field = field.trim();
    if field.starts_with('-') || field.starts_with('+') {
        return Err(NotationError::NotACount(field.to_owned()));
    }
    field
        .parse()
        .map_err(|_| NotationError::NotACount(field.to_owned()))
}

/// Reads pair outcomes, the candidate's half-points per pair as the digits 0–4 in play order;
/// white space is ignored.
///
/// # Errors
/// [`NotationError::PairOutcome`] at the first other character.
pub fn parse_pair_outcomes(text: &str) -> Result<Vec<usize>, NotationError> {
    let mut outcomes = Vec::new();
    for (line_index, line) in text.lines().enumerate() {
        for (column, character) in line.chars().enumerate() {
            match character {
                '0'..='4' => outcomes.push(character as usize - '0' as usize),
                c if c.is_whitespace() => {}
                character => {
                    return Err(NotationError::PairOutcome {
                        line: line_index + 1,
                        column: column + 1,
                        character,
                    });
                }
            }
        }
    }
    Ok(outcomes)
}

/// Reads `N` counts separated by commas and/or whitespace, optionally in square brackets
/// (`120,2480,5300,2560,140` or fastchess's `[120, 2480, 5300, 2560, 140]`).
///
/// # Errors
/// [`NotationError::Arity`] or [`NotationError::NotACount`].
pub fn parse_count_list<const N: usize>(text: &str) -> Result<[u64; N], NotationError> {
    let inner = text.trim();
    let inner = inner
        .strip_prefix('[')
        .and_then(|rest| rest.strip_suffix(']'))
        .unwrap_or(inner);
    let fields: Vec<&str> = inner
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|field| !field.is_empty())
        .collect();
    if fields.len() != N {
        return Err(NotationError::Arity {
            expected: N,
            got: fields.len(),
        });
    }
    let mut counts = [0; N];
    for (slot, field) in counts.iter_mut().zip(fields) {
        *slot = count(field)?;
    }
    Ok(counts)
}

/// Reads pentanomial counts `LL,LD,DD,WD,WW` (Fishtest's and fastchess's `Ptnml(0-2)` order).
///
/// # Errors
/// As [`parse_count_list`].
pub fn parse_pentanomial(text: &str) -> Result<PentanomialCounts, NotationError> {
    parse_count_list::<5>(text).map(PentanomialCounts)
}

/// Reads trinomial counts by name, in any order: `w=5019,l=5026,d=15699` (also `wins=`,
/// `losses=`, `draws=`, any case).
///
/// # Errors
/// [`NotationError::Positional`] for bare numbers; otherwise the name or count at fault.
pub fn parse_trinomial(text: &str) -> Result<TrinomialCounts, NotationError> {
    let fields: Vec<&str> = text
        .split(',')
        .map(str::trim)
        .filter(|field| !field.is_empty())
        .collect();
    if fields.iter().all(|field| !field.contains('=')) {
        return Err(NotationError::Positional(text.trim().to_owned()));
    }
    // Slots in the statistics' order [L, D, W].
    let mut slots: [Option<u64>; 3] = [None; 3];
    for field in fields {
        let Some((name, value)) = field.split_once('=') else {
            return Err(NotationError::UnknownName(field.to_owned()));
        };
        let (slot, short) = match name.trim().to_ascii_lowercase().as_str() {
            "l" | "losses" => (0, "l"),
            "d" | "draws" => (1, "d"),
            "w" | "wins" => (2, "w"),
            _ => return Err(NotationError::UnknownName(field.to_owned())),
        };
        if slots[slot].is_some() {
            return Err(NotationError::Repeated(short));
        }
        slots[slot] = Some(count(value)?);
    }
    let [losses, draws, wins] = slots;
    Ok(TrinomialCounts([
        losses.ok_or(NotationError::Missing("l"))?,
        draws.ok_or(NotationError::Missing("d"))?,
        wins.ok_or(NotationError::Missing("w"))?,
    ]))
}

/// The Elo scale of the bounds on a Fishtest page: `<…>` normalized, `{…}` logistic, `[…]`
/// BayesElo (Fishtest's `format_bounds`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FishtestModel {
    /// One of the two models the oracle computes.
    Model(Model),
    /// Fishtest's legacy BayesElo bounds, which the oracle does not compute.
    BayesElo,
}

/// The SPRT bounds a Fishtest page shows after the LLR: `LLR: 2.95 (-2.94,2.94) <0.00,2.00>`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FishtestBounds {
    /// H0.
    pub elo0: f64,
    /// H1.
    pub elo1: f64,
    /// Their Elo scale.
    pub model: FishtestModel,
}

/// What a Fishtest test page's result block says.
#[derive(Debug, Clone, PartialEq)]
pub struct FishtestResult {
    /// `W:`, `L:`, `D:` as [L, D, W].
    pub trinomial: TrinomialCounts,
    /// `Ptnml(0-2):`, present on every test since pentanomial workers.
    pub pentanomial: Option<PentanomialCounts>,
    /// The bounds of the `LLR:` line of an SPRT test.
    pub bounds: Option<FishtestBounds>,
}

/// The text after `label` up to the end of its line, if the label occurs.
fn after<'a>(text: &'a str, label: &str) -> Option<&'a str> {
    let start = text.find(label)? + label.len();
    let rest = &text[start..];
    Some(rest.lines().next().unwrap_or(""))
}

/// The whitespace-separated word after `label`, which must stand as a word of its own.
fn word_after<'a>(text: &'a str, label: &str) -> Option<&'a str> {
    let mut words = text.split_whitespace();
    while let Some(word) = words.next() {
        if word == label {
            return words.next();
        }
    }
    None
}

/// Reads the count after `label` (`W:`, `L:`, `D:`, `Total:`), if the label occurs.
fn labelled_count(text: &str, label: &'static str) -> Result<Option<u64>, NotationError> {
    word_after(text, label)
        .map(|word| {
            count(word).map_err(|_| NotationError::Field {
                field: label,
                text: word.to_owned(),
            })
        })
        .transpose()
}

/// Reads the bounds of an `LLR:` line: the bracketed pair after the parenthesized Wald bounds.
fn parse_llr_bounds(line: &str) -> Result<FishtestBounds, NotationError> {
    let bad = || NotationError::Field {
        field: "LLR:",
        text: line.trim().to_owned(),
    };
    let after_wald = line.find(')').map_or("", |at| &line[at + 1..]).trim();
    let mut chars = after_wald.chars();
    let (model, close) = match chars.next() {
        Some('<') => (FishtestModel::Model(Model::Normalized), '>'),
        Some('{') => (FishtestModel::Model(Model::Logistic), '}'),
        Some('[') => (FishtestModel::BayesElo, ']'),
        _ => return Err(bad()),
    };
    let inner = chars.as_str();
    let inner = &inner[..inner.find(close).ok_or_else(bad)?];
    let (elo0, elo1) = inner.split_once(',').ok_or_else(bad)?;
    let elo0: f64 = elo0.trim().parse().map_err(|_| bad())?;
    let elo1: f64 = elo1.trim().parse().map_err(|_| bad())?;
    Ok(FishtestBounds { elo0, elo1, model })
}

impl FishtestResult {
    /// Reads a Fishtest result block as pasted from a test page, e.g.
    ///
    /// ```text
    /// LLR: 2.94 (-2.94,2.94) <0.00,2.00>
    /// Total: 21200 W: 5420 L: 5300 D: 10480
    /// Ptnml(0-2): 120, 2480, 5300, 2560, 140
    /// ```
    ///
    /// Other lines (`Elo: …`, dates, tags) are ignored. Counts are read by their labels, so no
    /// order is assumed.
    ///
    /// # Errors
    /// [`NotationError::NoCounts`] without W/L/D counts, [`NotationError::Total`] when `Total:`
    /// is not W + L + D, [`NotationError::Field`] for a labelled field that does not read.
    pub fn parse(text: &str) -> Result<Self, NotationError> {
        let wins = labelled_count(text, "W:")?;
        let losses = labelled_count(text, "L:")?;
        let draws = labelled_count(text, "D:")?;
        let pentanomial = after(text, "Ptnml(0-2):")
            .map(|line| {
                parse_pentanomial(line).map_err(|_| NotationError::Field {
                    field: "Ptnml(0-2):",
                    text: line.trim().to_owned(),
                })
            })
            .transpose()?;
        let (Some(wins), Some(losses), Some(draws)) = (wins, losses, draws) else {
            let missing: Vec<String> = [("W:", wins), ("L:", losses), ("D:", draws)]
                .iter()
                .filter(|(_, count)| count.is_none())
                .map(|(label, _)| format!("'{label}'"))
                .collect();
            return Err(NotationError::NoCounts {
                missing: missing.join(", "),
            });
        };
        let sum = wins + losses + draws;
        if let Some(total) = labelled_count(text, "Total:")?
            && total != sum
        {
            return Err(NotationError::Total { total, sum });
        }
        let bounds = after(text, "LLR:").map(parse_llr_bounds).transpose()?;
        Ok(Self {
            trinomial: TrinomialCounts([losses, draws, wins]),
            pentanomial,
            bounds,
        })
    }
}

impl FishtestBounds {
    /// The bounds as Fishtest writes them (`<0.00,2.00>` normalized, `{…}` logistic, `[…]`
    /// BayesElo).
    #[must_use]
    pub fn fishtest_text(&self) -> String {
        let (open, close) = match self.model {
            FishtestModel::Model(Model::Normalized) => ('<', '>'),
            FishtestModel::Model(Model::Logistic) => ('{', '}'),
            FishtestModel::BayesElo => ('[', ']'),
        };
        format!("{open}{:.2},{:.2}{close}", self.elo0, self.elo1)
    }
}

impl FishtestResult {
    /// Checks that the text's SPRT, if it shows one, is the test `params` describes (bounds to
    /// Fishtest's two printed decimals, same model), so that a paste is never judged against
    /// bounds it was not run with by mistake.
    ///
    /// # Errors
    /// [`NotationError::OtherBounds`] when they differ (BayesElo bounds always differ: the
    /// oracle does not compute that model).
    pub fn check_bounds(&self, params: &SprtParams) -> Result<(), NotationError> {
        let Some(bounds) = self.bounds else {
            return Ok(());
        };
        let same = bounds.model == FishtestModel::Model(params.model)
            && (bounds.elo0 - params.elo0).abs() <= PRINTED_BOUND_TOLERANCE
            && (bounds.elo1 - params.elo1).abs() <= PRINTED_BOUND_TOLERANCE;
        if same {
            Ok(())
        } else {
            Err(NotationError::OtherBounds {
                text: bounds.fishtest_text(),
                elo0: params.elo0,
                elo1: params.elo1,
                model: params.model,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pair_outcomes_skip_white_space_and_name_line_and_column_of_anything_else() {
        assert_eq!(
            parse_pair_outcomes("0 4\n 2\t31\n"),
            Ok(vec![0, 4, 2, 3, 1])
        );
        assert_eq!(
            parse_pair_outcomes("012\n34 5").map_err(|e| e.to_string()),
            Err("2:4: unexpected character '5' (pair outcomes are the digits 0-4)".to_owned())
        );
    }

    #[test]
    fn pentanomial_lists_in_both_spellings() {
        let want = PentanomialCounts([120, 2480, 5300, 2560, 140]);
        assert_eq!(parse_pentanomial("120,2480,5300,2560,140"), Ok(want));
        assert_eq!(parse_pentanomial("[120, 2480, 5300, 2560, 140]"), Ok(want));
        assert_eq!(parse_pentanomial(" 120 2480 5300 2560 140 "), Ok(want));
        assert_eq!(
            parse_pentanomial("1,2,3,4"),
            Err(NotationError::Arity {
                expected: 5,
                got: 4
            })
        );
        assert_eq!(
            parse_pentanomial("1,2,-3,4,5"),
            Err(NotationError::NotACount("-3".into()))
        );
    }

    #[test]
    fn trinomial_counts_by_name_in_any_order() {
        let want = TrinomialCounts([5026, 15699, 5019]);
        assert_eq!(parse_trinomial("w=5019,l=5026,d=15699"), Ok(want));
        assert_eq!(parse_trinomial("D=15699, Losses=5026, wins=5019"), Ok(want));
        assert_eq!(
            parse_trinomial("5026,15699,5019"),
            Err(NotationError::Positional("5026,15699,5019".into()))
        );
        assert_eq!(parse_trinomial("w=1,l=2"), Err(NotationError::Missing("d")));
        assert_eq!(
            parse_trinomial("w=1,w=2,l=1,d=1"),
            Err(NotationError::Repeated("w"))
        );
        assert_eq!(
            parse_trinomial("w=1,x=2,d=1"),
            Err(NotationError::UnknownName("x=2".into()))
        );
        assert_eq!(
            parse_trinomial("w=1,l=2,3"),
            Err(NotationError::UnknownName("3".into()))
        );
        assert_eq!(
            parse_trinomial("w=1,l=x,d=1"),
            Err(NotationError::NotACount("x".into()))
        );
    }

    #[test]
    fn fishtest_sprt_block() {
        let text = "LLR: 2.94 (-2.94,2.94) <0.00,2.00>\n\
                    Total: 21200 W: 5420 L: 5300 D: 10480\n\
                    Ptnml(0-2): 120, 2480, 5300, 2560, 140\n";
        let r = FishtestResult::parse(text).unwrap();
        assert_eq!(r.trinomial, TrinomialCounts([5300, 10480, 5420]));
        assert_eq!(
            r.pentanomial,
            Some(PentanomialCounts([120, 2480, 5300, 2560, 140]))
        );
        assert_eq!(
            r.bounds,
            Some(FishtestBounds {
                elo0: 0.0,
                elo1: 2.0,
                model: FishtestModel::Model(Model::Normalized)
            })
        );
    }

    #[test]
    fn fishtest_fixed_games_and_legacy_blocks() {
        let fixed = "Elo: 1.97 ± 2.5 (95%) LOS: 93.8%\n\
                     Total: 20000 W: 5000 L: 4900 D: 10100\n";
        let r = FishtestResult::parse(fixed).unwrap();
        assert_eq!(r.trinomial, TrinomialCounts([4900, 10100, 5000]));
        assert_eq!((r.pentanomial, r.bounds), (None, None));
        let logistic = "LLR: -2.95 (-2.94,2.94) {-3.00,1.00}\nTotal: 10 W: 3 L: 4 D: 3";
        let bounds = FishtestResult::parse(logistic).unwrap().bounds.unwrap();
        assert_eq!(bounds.model, FishtestModel::Model(Model::Logistic));
        assert_eq!((bounds.elo0, bounds.elo1), (-3.0, 1.0));
        let legacy = "LLR: 2.96 (-2.94,2.94) [0.00,5.00]\nTotal: 10 W: 3 L: 4 D: 3";
        let bounds = FishtestResult::parse(legacy).unwrap().bounds.unwrap();
        assert_eq!(bounds.model, FishtestModel::BayesElo);
    }

    #[test]
    fn fishtest_bounds_must_be_the_tests() {
        let text = "LLR: 0.94 (-2.94,2.94) <0.00,2.00>\nTotal: 20 W: 5 L: 5 D: 10";
        let r = FishtestResult::parse(text).unwrap();
        let params = |elo0, elo1, model| SprtParams::new(elo0, elo1, 0.05, 0.05, model).unwrap();
        assert_eq!(r.check_bounds(&params(0.0, 2.0, Model::Normalized)), Ok(()));
        assert_eq!(
            r.check_bounds(&params(0.004, 2.0, Model::Normalized)),
            Ok(())
        );
        let e = r
            .check_bounds(&params(0.0, 2.0, Model::Logistic))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("<0.00,2.00>") && e.contains("[0, 2] logistic"),
            "{e}"
        );
        assert!(
            r.check_bounds(&params(0.0, 5.0, Model::Normalized))
                .is_err()
        );
        let legacy = FishtestResult::parse("LLR: 1 (-2.94,2.94) [0.00,5.00]\nW: 1 L: 1 D: 1");
        assert!(
            legacy
                .unwrap()
                .check_bounds(&params(0.0, 5.0, Model::Logistic))
                .is_err()
        );
        let no_llr = FishtestResult::parse("W: 1 L: 1 D: 1").unwrap();
        assert_eq!(
            no_llr.check_bounds(&params(0.0, 5.0, Model::Logistic)),
            Ok(())
        );
    }

    #[test]
    fn fishtest_errors_name_the_field() {
        // Issue 49: the message said "no 'Ptnml(0-2): …' line" when that line was there.
        let e = FishtestResult::parse("Ptnml(0-2): 1, 2, 3, 4, 5").unwrap_err();
        assert_eq!(
            e,
            NotationError::NoCounts {
                missing: "'W:', 'L:', 'D:'".into()
            }
        );
        assert!(!e.to_string().contains("no 'Ptnml"), "{e}");
        assert!(
            FishtestResult::parse("W: 3 L: 4")
                .unwrap_err()
                .to_string()
                .contains("no 'D:' count"),
        );
        assert_eq!(
            FishtestResult::parse("Total: 11 W: 3 L: 4 D: 3"),
            Err(NotationError::Total { total: 11, sum: 10 })
        );
        let e = FishtestResult::parse("Total: 10 W: 3 L: 4 D: 3\nPtnml(0-2): 1, 2, 3").unwrap_err();
        assert!(e.to_string().contains("Ptnml(0-2):"), "{e}");
        let e = FishtestResult::parse("W: x L: 4 D: 3").unwrap_err();
        assert!(e.to_string().contains("'W:'"), "{e}");
        let e = FishtestResult::parse("LLR: 1.0 (-2.94,2.94)\nW: 3 L: 4 D: 3").unwrap_err();
        assert!(e.to_string().contains("LLR:"), "{e}");
    }
}
