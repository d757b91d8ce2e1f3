//! The constitution's form of a profile's adjudication (`#[serde(with = "adjudication")]`):
//!
//! ```yaml
//! adjudication:
//!   resign: {move_count: 3, score_cp: 400}          # absent or null: no resign rule
//!   draw: {move_number: 34, move_count: 8, score_cp: 20}
//! ```
//!
//! Counts are at least 1 and scores whole centipawns. The value is the runner's own
//! [`Adjudication`], whose derived serde form (state files, shard fingerprints) is another and
//! stays as it is. A constitution's resign rule is one-sided, and a constitution sets no
//! maximum game length: a value with either cannot be written in this form.

use std::num::NonZeroU32;

use serde::{Deserialize, Deserializer, Serialize, Serializer, de::Error as _, ser::Error as _};

use crate::play::game::{Adjudication, DrawRule, ResignRule};

/// The YAML mapping as the constitution spells it.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Form {
    /// A game is lost for a side that scores itself far behind for long enough.
    resign: Option<ResignForm>,
    /// A game is drawn once both engines score it level for long enough.
    draw: Option<DrawForm>,
}

/// `resign:`: `move_count` consecutive moves of the losing side at ≤ −`score_cp`.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ResignForm {
    move_count: NonZeroU32,
    score_cp: NonZeroU32,
}

/// `draw:`: from move `move_number` on, `move_count` moves of each side with |score| ≤ `score_cp`.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct DrawForm {
    move_number: NonZeroU32,
    move_count: NonZeroU32,
    score_cp: u32,
}

/// A centipawn bound as the runner holds it; a bound beyond `i32` is no bound a score can reach
/// and is refused rather than clamped.
fn centipawns(field: &str, value: u32) -> Result<i32, String> {
    i32::try_from(value).map_err(|_| format!("{field}: {value} is beyond {}", i32::MAX))
}

/// Reads the constitution's form.
///
/// # Errors
/// An unknown field, a count of 0 or a score beyond `i32` (naming the field).
pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Adjudication, D::Error> {
    let form = Form::deserialize(deserializer)?;
    let resign = form
        .resign
        .map(|r| {
            Ok::<_, String>(ResignRule {
                move_count: r.move_count.get(),
                score: centipawns("resign.score_cp", r.score_cp.get())?,
                two_sided: false,
            })
        })
        .transpose()
        .map_err(D::Error::custom)?;
    let draw = form
        .draw
        .map(|d| {
            Ok::<_, String>(DrawRule {
                move_number: d.move_number.get(),
                move_count: d.move_count.get(),
                score: centipawns("draw.score_cp", d.score_cp)?,
            })
        })
        .transpose()
        .map_err(D::Error::custom)?;
    Ok(Adjudication {
        draw,
        resign,
        max_moves: None,
    })
}

/// Writes `rules` in the constitution's form.
///
/// # Errors
/// Rules the form cannot hold (a two-sided resign rule, a maximum length, a count of 0, a
/// negative score): they never came from a constitution.
pub fn serialize<S: Serializer>(rules: &Adjudication, serializer: S) -> Result<S::Ok, S::Error> {
    let refuse = || S::Error::custom(format!("the constitution cannot hold {rules:?}"));
    if rules.max_moves.is_some() || rules.resign.is_some_and(|r| r.two_sided) {
        return Err(refuse());
    }
    let count = |n: u32| NonZeroU32::new(n).ok_or_else(refuse);
    let cp = |score: i32| u32::try_from(score).map_err(|_| refuse());
    let form = Form {
        resign: rules
            .resign
            .map(|r| {
                Ok(ResignForm {
                    move_count: count(r.move_count)?,
                    score_cp: count(cp(r.score)?)?,
                })
            })
            .transpose()?,
        draw: rules
            .draw
            .map(|d| {
                Ok(DrawForm {
                    move_number: count(d.move_number)?,
                    move_count: count(d.move_count)?,
                    score_cp: cp(d.score)?,
                })
            })
            .transpose()?,
    };
    form.serialize(serializer)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A profile's field as the constitution holds it.
    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Profile {
        #[serde(with = "super")]
        adjudication: Adjudication,
    }

    fn read(yaml: &str) -> Result<Adjudication, String> {
        serde_norway::from_str::<Profile>(yaml)
            .map(|p| p.adjudication)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn reads_the_constitutions_rules_as_the_runners() {
        // Version 4: a draw rule, no resign rule.
        let v4 = read(
            "adjudication:\n  draw:\n    move_number: 34\n    move_count: 8\n    score_cp: 20\n",
        );
        assert_eq!(
            v4,
            Ok(Adjudication {
                draw: Some(DrawRule {
                    move_number: 34,
                    move_count: 8,
                    score: 20
                }),
                resign: None,
                max_moves: None,
            })
        );
        // Earlier versions had a (one-sided) resign rule; they must still load.
        let v3 =
            read("adjudication:\n  resign:\n    move_count: 3\n    score_cp: 400\n  draw: null\n")
                .unwrap();
        assert_eq!(
            v3.resign,
            Some(ResignRule {
                move_count: 3,
                score: 400,
                two_sided: false
            })
        );
        assert_eq!(v3.draw, None);
        // Written back, the form reads as the same rules.
        let yaml = serde_norway::to_string(&Profile { adjudication: v3 }).unwrap();
        assert_eq!(read(&yaml), Ok(v3));
    }

    #[test]
    fn refuses_what_the_constitution_does_not_admit() {
        let error = read("adjudication:\n  draw: {move_number: 34, move_count: 8, score: 20}\n");
        assert!(error.unwrap_err().contains("unknown field `score`"));
        let error = read("adjudication:\n  resign: {move_count: 0, score_cp: 400}\n");
        assert!(error.is_err());
        let error = read("adjudication:\n  resign: {move_count: 3, score_cp: 3000000000}\n");
        assert!(
            error
                .unwrap_err()
                .contains("resign.score_cp: 3000000000 is beyond"),
            "beyond i32"
        );
        let two_sided = Adjudication {
            resign: Some(ResignRule {
                move_count: 3,
                score: 400,
                two_sided: true,
            }),
            ..Adjudication::default()
        };
        assert!(
            serde_norway::to_string(&Profile {
                adjudication: two_sided
            })
            .is_err()
        );
    }
}
