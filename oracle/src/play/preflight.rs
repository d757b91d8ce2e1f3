//! The start-up check before the first game of a match: each engine must complete the UCI
//! handshake (`uciok`), accept its configured options by the engine's own declarations and
//! answer `readyok`, all within the start-up deadline. A setup that fails it is refused, never
//! scored: an engine that cannot start would otherwise lose every game and the match would
//! measure the setup, not the engines (cutechess and fastchess abort the same way).

use std::time::Duration;

use super::option::{OptionMismatch, check_options};
use super::uci::{Engine, EngineConfig, UciError};

/// Why an engine failed the start-up check.
#[derive(Debug, thiserror::Error)]
pub enum PreflightError {
    /// No `uciok` or `readyok` in time, a crash, or a binary that cannot be started.
    #[error("start-up check failed: {0}")]
    Handshake(UciError),
    /// A configured option the engine does not declare, or a value outside its type or range.
    #[error("start-up check failed: engine `{engine}`: {mismatch}")]
    Option {
        /// The engine's configured name.
        engine: String,
        /// The option and what is wrong with it.
        mismatch: OptionMismatch,
    },
}

/// Starts each engine once, checks its options against its declarations, waits for
/// `readyok` after they are set, and stops it again; the first failure names its engine.
pub fn check_engines(engines: &[EngineConfig], deadline: Duration) -> Result<(), PreflightError> {
    for config in engines {
        let mut engine = Engine::handshake(config, deadline).map_err(PreflightError::Handshake)?;
        check_options(engine.declared_options(), config.ordered_options()).map_err(|mismatch| {
            PreflightError::Option {
                engine: config.name.clone(),
                mismatch,
            }
        })?;
        engine
            .configure(config, deadline)
            .map_err(PreflightError::Handshake)?;
        engine.quit(Duration::from_millis(500));
    }
    Ok(())
}
