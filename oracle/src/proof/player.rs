//! The engine under test as a player at a fixed node budget, over the play module's UCI driver.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::play::uci::{Engine, EngineConfig, GoLimits, SearchOutcome, UciError};

/// Time allowed for start-up, `isready` and each node-limited search before the engine is
/// judged hung (node budgets here take well under a second on a normal machine).
const DEADLINE: Duration = Duration::from_secs(120);

/// One engine binary searching a fixed number of nodes per move, a fresh process each game.
#[derive(Debug)]
pub struct EnginePlayer {
    config: EngineConfig,
    limits: GoLimits,
    engine: Option<Engine>,
}

impl EnginePlayer {
    /// A player for `binary` at `nodes` nodes per move, single-threaded (started lazily).
    #[must_use]
    pub fn new(binary: &Path, nodes: u64) -> EnginePlayer {
        EnginePlayer {
            config: EngineConfig::new(PathBuf::from(binary)).with_option("Threads", "1"),
            limits: GoLimits::nodes(nodes),
            engine: None,
        }
    }

    /// Starts a new game in a fresh process (then `ucinewgame`), as the oracle's matches do: a
    /// game's moves depend on that game alone, never on what the engine saw in an earlier one.
    pub fn new_game(&mut self) -> Result<(), UciError> {
        if let Some(earlier) = self.engine.take() {
            earlier.quit(Duration::from_millis(200));
        }
        let mut engine = Engine::start(&self.config, DEADLINE)?;
        engine.new_game(DEADLINE)?;
        self.engine = Some(engine);
        Ok(())
    }

    /// Searches the position after `moves` from `fen`; a failed engine is dropped so the next
    /// game starts a fresh process.
    pub fn search(&mut self, fen: &str, moves: &[String]) -> Result<SearchOutcome, UciError> {
        let Some(engine) = self.engine.as_mut() else {
            self.new_game()?;
            return self.search(fen, moves);
        };
        let result = engine.search(Some(fen), moves, &self.limits, DEADLINE, DEADLINE);
        if result.is_err()
            && let Some(engine) = self.engine.take()
        {
            engine.quit(Duration::from_millis(200));
        }
        result
    }

    /// Stops the engine process.
    pub fn quit(self) {
        if let Some(engine) = self.engine {
            engine.quit(Duration::from_secs(1));
        }
    }
}
