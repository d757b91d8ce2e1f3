//! The options an engine declares in its handshake (`option name … type …`), and the check
//! of a configured `option.X=V` against them, so that a misspelt name or a value the engine
//! would silently ignore stops the match before the first game.

use std::fmt;

/// The type of a UCI option with its constraints, as the engine declared it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OptionKind {
    /// `type check`: `true` or `false`.
    Check,
    /// `type spin`: an integer in `min..=max`.
    Spin {
        /// The smallest value accepted.
        min: i64,
        /// The largest value accepted.
        max: i64,
    },
    /// `type combo`: one of the `var` values (compared without regard to case).
    Combo(Vec<String>),
    /// `type button`: an action; any value is ignored.
    Button,
    /// `type string`: any text.
    Text,
    /// A type outside the UCI protocol: the value is passed on unchecked.
    Other(String),
}

/// One `option name … type …` line of an engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionDeclaration {
    /// The option's name as declared (matched without regard to case, as UCI asks).
    pub name: String,
    /// Its type and constraints.
    pub kind: OptionKind,
}

/// Why a configured option does not fit the engine's declarations.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("option.{name}={value}: {reason}")]
pub struct OptionMismatch {
    /// The option as configured.
    pub name: String,
    /// The value as configured.
    pub value: String,
    /// What is wrong, with what the engine accepts.
    pub reason: String,
}

impl OptionDeclaration {
    /// Parses an `option name <name> type <type> [default …] [min …] [max …] [var …]*` line;
    /// `None` for other lines and for declarations without a name or type.
    pub fn parse(line: &str) -> Option<OptionDeclaration> {
        let rest = line.strip_prefix("option ")?;
        let tokens: Vec<&str> = rest.split_ascii_whitespace().collect();
        let keyword = |t: &str| matches!(t, "name" | "type" | "default" | "min" | "max" | "var");
        // Each keyword's value runs to the next keyword: names and combo values may hold spaces.
        let mut fields: Vec<(&str, String)> = Vec::new();
        for token in tokens {
            match fields.last_mut() {
                Some((key, value)) if !keyword(token) || (*key == "name" && token != "type") => {
                    if !value.is_empty() {
                        value.push(' ');
                    }
                    value.push_str(token);
                }
                _ if keyword(token) => fields.push((token, String::new())),
                _ => return None,
            }
        }
        let field = |key: &str| fields.iter().find(|(k, _)| *k == key).map(|(_, v)| v);
        let name = field("name").filter(|n| !n.is_empty())?.clone();
        let number = |key: &str, fallback: i64| {
            field(key)
                .and_then(|v| v.parse::<i64>().ok())
                .unwrap_or(fallback)
        };
        let kind = match field("type")?.as_str() {
            "check" => OptionKind::Check,
            "spin" => OptionKind::Spin {
                min: number("min", i64::MIN),
                max: number("max", i64::MAX),
            },
            "combo" => OptionKind::Combo(
                fields
                    .iter()
                    .filter(|(k, _)| *k == "var")
                    .map(|(_, v)| v.clone())
                    .collect(),
            ),
            "button" => OptionKind::Button,
            "string" => OptionKind::Text,
            other => OptionKind::Other(other.to_string()),
        };
        Some(OptionDeclaration { name, kind })
    }

    /// Checks `value` against the declared type and range.
    fn accepts(&self, value: &str) -> Result<(), String> {
        match &self.kind {
            OptionKind::Check if value == "true" || value == "false" => Ok(()),
            OptionKind::Check => Err(format!("`{value}` is not true or false ({self})")),
            OptionKind::Spin { min, max } => match value.parse::<i64>() {
                Ok(v) if (*min..=*max).contains(&v) => Ok(()),
                Ok(_) => Err(format!("{value} is out of range ({self})")),
                Err(_) => Err(format!("`{value}` is not an integer ({self})")),
            },
            OptionKind::Combo(values) if values.iter().any(|v| v.eq_ignore_ascii_case(value)) => {
                Ok(())
            }
            OptionKind::Combo(_) => Err(format!("`{value}` is not one of the choices ({self})")),
            OptionKind::Button | OptionKind::Text | OptionKind::Other(_) => Ok(()),
        }
    }
}

impl fmt::Display for OptionDeclaration {
    /// `Hash: spin 1..=1024`, the way errors quote what the engine accepts.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.name)?;
        match &self.kind {
            OptionKind::Check => write!(f, "check true|false"),
            OptionKind::Spin { min, max } => write!(f, "spin {min}..={max}"),
            OptionKind::Combo(values) => write!(f, "combo {}", values.join("|")),
            OptionKind::Button => write!(f, "button"),
            OptionKind::Text => write!(f, "string"),
            OptionKind::Other(kind) => write!(f, "{kind}"),
        }
    }
}

/// Checks each configured `(name, value)` against `declared`: the name must be declared
/// (without regard to case) and the value must fit its type and range.
pub fn check_options<'a>(
    declared: &[OptionDeclaration],
    configured: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<(), OptionMismatch> {
    for (name, value) in configured {
        let mismatch = |reason: String| OptionMismatch {
            name: name.to_string(),
            value: value.to_string(),
            reason,
        };
        let Some(declaration) = declared.iter().find(|d| d.name.eq_ignore_ascii_case(name)) else {
            return Err(mismatch(format!(
                "the engine declares no option `{name}` ({})",
                declared_names(declared)
            )));
        };
        declaration.accepts(value).map_err(mismatch)?;
    }
    Ok(())
}

/// The first declared names for an error message: tuning builds declare dozens.
fn declared_names(declared: &[OptionDeclaration]) -> String {
    const SHOWN: usize = 8;
    let names: Vec<&str> = declared
        .iter()
        .take(SHOWN)
        .map(|d| d.name.as_str())
        .collect();
    match declared.len() {
        0 => "it declares none".to_string(),
        n if n <= SHOWN => format!("it declares: {}", names.join(", ")),
        n => format!("it declares {n}, among them: {}, …", names.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn declared() -> Vec<OptionDeclaration> {
        [
            "option name Hash type spin default 16 min 1 max 1024",
            "option name Clear Hash type button",
            "option name Ponder type check default false",
            "option name Style type combo default Normal var Solid var Normal var Risky Play",
            "option name SyzygyPath type string default <empty>",
        ]
        .iter()
        .map(|l| OptionDeclaration::parse(l).unwrap())
        .collect()
    }

    #[test]
    fn declarations_are_parsed_with_spaces_in_names_and_values() {
        let options = declared();
        assert_eq!(options[0].kind, OptionKind::Spin { min: 1, max: 1024 });
        assert_eq!(options[1].name, "Clear Hash");
        assert_eq!(
            options[3].kind,
            OptionKind::Combo(vec!["Solid".into(), "Normal".into(), "Risky Play".into()])
        );
        assert_eq!(OptionDeclaration::parse("id name X"), None);
        assert_eq!(OptionDeclaration::parse("option name type spin"), None);
    }

    #[test]
    fn configured_options_are_checked_by_name_type_and_range() {
        let options = declared();
        let check = |name: &str, value: &str| check_options(&options, [(name, value)]);
        assert!(check("hash", "64").is_ok());
        assert!(check("Ponder", "true").is_ok());
        assert!(check("style", "risky play").is_ok());
        assert!(check("SyzygyPath", "/tb").is_ok());
        assert!(check("Clear Hash", "x").is_ok());
        let error = check("NoSuchOpt", "3").unwrap_err().to_string();
        assert!(error.contains("option.NoSuchOpt=3") && error.contains("Hash, Clear Hash"));
        assert!(
            check("Hash", "abc")
                .unwrap_err()
                .reason
                .contains("not an integer")
        );
        assert!(
            check("Hash", "0")
                .unwrap_err()
                .reason
                .contains("spin 1..=1024")
        );
        assert!(check("Ponder", "yes").is_err());
        assert!(check("Style", "Wild").is_err());
    }
}
