//! The textual specs of a match as the command line gives them: engines
//! (`cmd=PATH,name=N,tc=TC,arg=A,bind=P,option.X=V`), shared settings (`tc=TC,option.X=V`), the old
//! `elo0=X,elo1=Y,…` SPRT spec and the adjudication rules (`movenumber=M,movecount=K,score=S`,
//! `movecount=K,score=S[,twosided=true]`).

use std::path::PathBuf;

use super::clock::TimeControl;
use super::game::ResignRule;
use super::uci::EngineConfig;
use crate::stats::{Model, SprtParams};

/// Why a spec could not be read; the message quotes the spec and the bad item.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{spec}: {reason}")]
pub struct SpecError {
    /// The spec as given.
    pub spec: String,
    /// What is wrong with it.
    pub reason: String,
}

/// One `--engine` of a match: how to start and set up the engine, and the time control it
/// plays when it has its own (`tc=`, cutechess's and fastchess's per-engine key).
#[derive(Debug, Clone)]
pub struct EngineSpec {
    /// The engine process and its settings.
    pub config: EngineConfig,
    /// Its own time control (time odds), overriding the match's `--tc`.
    pub tc: Option<TimeControl>,
}

/// Builds an engine from `spec`, with the shared `each` settings applied first (the engine's
/// own settings win); the command must be an existing file.
pub fn parse_engine(spec: &str, each: &[String]) -> Result<EngineSpec, SpecError> {
    let error = |reason: String| SpecError {
        spec: format!("--engine {spec}"),
        reason,
    };
    let mut engine = EngineSpec {
        config: EngineConfig::new(PathBuf::new()),
        tc: None,
    };
    for shared in each {
        apply_settings(&mut engine, shared, false).map_err(|reason| SpecError {
            spec: format!("--each {shared}"),
            reason,
        })?;
    }
    let (mut has_cmd, mut has_name) = (false, false);
    for item in spec.split(',') {
        let (key, value) = item
            .split_once('=')
            .ok_or_else(|| error(format!("`{item}` is not KEY=VALUE")))?;
        match key {
            "cmd" => {
                engine.config.command = PathBuf::from(value);
                has_cmd = true;
            }
            "name" => {
                engine.config.name = value.to_string();
                has_name = true;
            }
            _ => apply_settings(&mut engine, item, true).map_err(error)?,
        }
    }
    let config = &mut engine.config;
    if !has_cmd {
        return Err(error("missing cmd=PATH".to_string()));
    }
    if !has_name {
        config.name = EngineConfig::new(config.command.clone()).name;
    }
    if !config.command.is_file() {
        return Err(error(format!("{} is not a file", config.command.display())));
    }
    Ok(engine)
}

/// Applies `option.X=V` and `tc=TC` (and, for engine specs, `arg=A` and `bind=P`) items to
/// `engine`.
fn apply_settings(engine: &mut EngineSpec, spec: &str, engine_spec: bool) -> Result<(), String> {
    let config = &mut engine.config;
    for item in spec.split(',') {
        let (key, value) = item
            .split_once('=')
            .ok_or_else(|| format!("`{item}` is not KEY=VALUE"))?;
        if let Some(option) = key.strip_prefix("option.") {
            config.set_option(option, value);
        } else if key == "tc" {
            engine.tc = Some(value.parse().map_err(|e| format!("tc: {e}"))?);
        } else if key == "arg" && engine_spec {
            config.args.push(value.to_string());
        } else if key == "bind" && engine_spec {
            // A wrapper engine's inner engine: visible read-only inside this engine's sandbox.
            let path = std::path::absolute(value)
                .map_err(|e| format!("bind={value}: not a usable path ({e})"))?;
            if !path.exists() {
                return Err(format!("bind={value}: {} does not exist", path.display()));
            }
            config.read_only.push(path);
        } else {
            return Err(format!(
                "unknown key `{key}` (expected option.NAME, tc{})",
                if engine_spec {
                    ", cmd, name, arg or bind"
                } else {
                    ""
                }
            ));
        }
    }
    Ok(())
}

/// Parses `k1=v1,k2=v2,…` with exactly the non-negative integer keys `keys`, in any order.
pub fn key_values(spec: &str, keys: &[&str]) -> Result<Vec<i64>, SpecError> {
    let error = |reason: String| SpecError {
        spec: spec.to_string(),
        reason,
    };
    let mut values = vec![None; keys.len()];
    for item in spec.split(',') {
        let (key, value) = item
            .split_once('=')
            .ok_or_else(|| error(format!("`{item}` is not KEY=VALUE")))?;
        let slot = keys.iter().position(|k| *k == key).ok_or_else(|| {
            error(format!(
                "unknown key `{key}` (expected {})",
                keys.join(", ")
            ))
        })?;
        values[slot] = Some(
            value
                .parse::<i64>()
                .ok()
                .filter(|v| *v >= 0)
                .ok_or_else(|| error(format!("{key}: `{value}` is not a non-negative integer")))?,
        );
    }
    keys.iter()
        .zip(values)
        .map(|(k, v)| v.ok_or_else(|| error(format!("missing {k}="))))
        .collect()
}

/// Parses the resign spec `movecount=K,score=S[,twosided=true|false]` (one-sided unless told).
pub fn parse_resign(spec: &str) -> Result<ResignRule, SpecError> {
    let error = |reason: String| SpecError {
        spec: spec.to_string(),
        reason,
    };
    let mut two_sided = false;
    let mut counts = Vec::new();
    for item in spec.split(',') {
        match item.split_once('=') {
            Some(("twosided", "true")) => two_sided = true,
            Some(("twosided", "false")) => two_sided = false,
            Some(("twosided", value)) => {
                return Err(error(format!("twosided: `{value}` is not true or false")));
            }
            _ => counts.push(item),
        }
    }
    let values = key_values(&counts.join(","), &["movecount", "score"])
        .map_err(|e| error(format!("{} (twosided=true|false is optional)", e.reason)))?;
    let too_large = |key: &str, value: i64| error(format!("{key}: {value} is too large"));
    Ok(ResignRule {
        move_count: u32::try_from(values[0]).map_err(|_| too_large("movecount", values[0]))?,
        score: i32::try_from(values[1]).map_err(|_| too_large("score", values[1]))?,
        two_sided,
    })
}

/// Parses the old SPRT spec `elo0=X,elo1=Y[,alpha=A][,beta=B][,model=normalized|logistic]`
/// (α = β = 0.05, normalized by default), kept as an alias of `--elo0 X --elo1 Y …`.
pub fn parse_sprt(spec: &str) -> Result<SprtParams, SpecError> {
    let error = |reason: String| SpecError {
        spec: format!("--sprt {spec}"),
        reason,
    };
    let (mut elo0, mut elo1, mut alpha, mut beta, mut model) =
        (None, None, 0.05, 0.05, Model::Normalized);
    for item in spec.split(',') {
        let (key, value) = item
            .split_once('=')
            .ok_or_else(|| error(format!("`{item}` is not KEY=VALUE")))?;
        let number = || {
            value
                .parse::<f64>()
                .map_err(|_| error(format!("{key}: `{value}` is not a number")))
        };
        match key {
            "elo0" => elo0 = Some(number()?),
            "elo1" => elo1 = Some(number()?),
            "alpha" => alpha = number()?,
            "beta" => beta = number()?,
            "model" => {
                model = match value {
                    "normalized" => Model::Normalized,
                    "logistic" => Model::Logistic,
                    _ => {
                        return Err(error(format!(
                            "model: `{value}` is not normalized or logistic"
                        )));
                    }
                }
            }
            _ => {
                return Err(error(format!(
                    "unknown key `{key}` (expected elo0, elo1, alpha, beta, model)"
                )));
            }
        }
    }
    let (Some(elo0), Some(elo1)) = (elo0, elo1) else {
        return Err(error("elo0= and elo1= are required".to_string()));
    };
    SprtParams::new(elo0, elo1, alpha, beta, model).map_err(|e| error(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sprt_spec_defaults_and_errors() {
        let p = parse_sprt("elo0=0,elo1=2").unwrap();
        assert_eq!(
            (p.elo0, p.elo1, p.alpha, p.beta, p.model),
            (0.0, 2.0, 0.05, 0.05, Model::Normalized)
        );
        let p = parse_sprt("elo1=5,elo0=-1,alpha=0.1,model=logistic").unwrap();
        assert_eq!((p.elo0, p.alpha, p.model), (-1.0, 0.1, Model::Logistic));
        assert!(parse_sprt("elo0=2,elo1=0").is_err());
        assert!(parse_sprt("elo0=0").is_err());
        assert!(
            parse_sprt("elo0=0,elo1=2,gamma=1")
                .unwrap_err()
                .to_string()
                .contains("gamma")
        );
    }

    #[test]
    fn adjudication_specs() {
        assert_eq!(
            key_values(
                "score=20,movenumber=34,movecount=8",
                &["movenumber", "movecount", "score"]
            )
            .unwrap(),
            vec![34, 8, 20]
        );
        assert!(
            key_values("movecount=3", &["movecount", "score"])
                .unwrap_err()
                .to_string()
                .contains("score")
        );
    }

    #[test]
    fn resign_specs() {
        let rule = |two_sided| ResignRule {
            move_count: 3,
            score: 400,
            two_sided,
        };
        assert_eq!(parse_resign("movecount=3,score=400"), Ok(rule(false)));
        assert_eq!(
            parse_resign("movecount=3,score=400,twosided=true"),
            Ok(rule(true))
        );
        assert_eq!(
            parse_resign("twosided=false,score=400,movecount=3"),
            Ok(rule(false))
        );
        let error = parse_resign("movecount=3,score=400,twosided=yes").unwrap_err();
        assert_eq!(error.spec, "movecount=3,score=400,twosided=yes");
        assert!(error.reason.contains("`yes`"), "{error}");
        let error = parse_resign("movecount=3,twosided=true").unwrap_err();
        assert_eq!(error.spec, "movecount=3,twosided=true");
        assert!(error.reason.contains("missing score="), "{error}");
        assert!(parse_resign("movecount=3,score=9999999999").is_err());
    }

    #[test]
    fn engine_specs_name_their_bad_item() {
        let error = parse_engine("cmd=/bin/sh,colour=red", &[]).unwrap_err();
        assert!(
            error.to_string().contains("unknown key `colour`"),
            "{error}"
        );
        assert!(
            parse_engine("name=x", &[])
                .unwrap_err()
                .reason
                .contains("missing cmd")
        );
        let each = ["option.Hash=8".to_string()];
        let engine = parse_engine("cmd=/bin/sh,option.Hash=16,arg=-x", &each).unwrap();
        let config = &engine.config;
        assert_eq!(config.options, vec![("Hash".to_string(), "16".to_string())]);
        assert_eq!((config.name.as_str(), config.args.len()), ("sh", 1));
        assert_eq!(engine.tc, None);
    }

    #[test]
    fn an_engines_own_time_control_wins_over_the_shared_one() {
        let tc = |text: &str| Some(text.parse::<TimeControl>().unwrap());
        let each = ["tc=8+0.08".to_string()];
        assert_eq!(parse_engine("cmd=/bin/sh", &each).unwrap().tc, tc("8+0.08"));
        let own = parse_engine("cmd=/bin/sh,tc=40/4+0.04", &each).unwrap();
        assert_eq!(own.tc, tc("40/4+0.04"));
        let error = parse_engine("cmd=/bin/sh,tc=fast", &[]).unwrap_err();
        assert_eq!(error.spec, "--engine cmd=/bin/sh,tc=fast");
        assert!(
            error.reason.starts_with("tc: invalid time control `fast`"),
            "{error}"
        );
    }
}
