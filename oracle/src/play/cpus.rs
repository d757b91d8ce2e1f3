//! The one concurrency policy of the oracle's matches (`oracle match`, the stages of
//! `oracle verify`): by default one game per physical core; timed games at most one per
//! physical core, because two SMT siblings share one core's execution units and each
//! engine's clock would run against half a core; untimed games (nodes, depth) may use every
//! logical CPU, since their results do not depend on speed.

/// The processors of this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cpus {
    /// Distinct (package, core) pairs in `/proc/cpuinfo`, at most `logical`.
    pub physical: usize,
    /// The logical CPUs this process may run on.
    pub logical: usize,
}

impl Cpus {
    /// Reads this machine's processors; without `/proc/cpuinfo` core ids, physical = logical.
    pub fn detect() -> Cpus {
        let logical = std::thread::available_parallelism().map_or(1, usize::from);
        let physical = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .map_or(0, |info| physical_cores(&info));
        Cpus {
            physical: if physical == 0 {
                logical
            } else {
                physical.min(logical)
            },
            logical,
        }
    }

    /// Games at once when none are asked for: one per physical core.
    pub fn default_games(&self) -> usize {
        self.physical
    }

    /// The most games at once the policy allows: physical cores for timed games, logical
    /// CPUs for untimed ones.
    pub fn max_games(&self, timed: bool) -> usize {
        if timed { self.physical } else { self.logical }
    }
}

/// The distinct `(physical id, core id)` pairs of a `/proc/cpuinfo` text (0 when it has none).
fn physical_cores(cpuinfo: &str) -> usize {
    let mut cores = std::collections::HashSet::new();
    let mut package = "";
    for line in cpuinfo.lines() {
        if let Some((key, value)) = line.split_once(':') {
            match key.trim() {
                "physical id" => package = value.trim(),
                "core id" => {
                    cores.insert((package, value.trim()));
                }
                _ => {}
            }
        }
    }
    cores.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smt_siblings_count_as_one_core() {
        let info = "processor : 0\nphysical id : 0\ncore id : 0\n\nprocessor : 1\nphysical id : 0\ncore id : 0\n\nprocessor : 2\nphysical id : 1\ncore id : 0\n";
        assert_eq!(physical_cores(info), 2);
        assert_eq!(physical_cores("processor : 0\n"), 0);
        let cpus = Cpus {
            physical: 2,
            logical: 4,
        };
        assert_eq!(
            (
                cpus.default_games(),
                cpus.max_games(true),
                cpus.max_games(false)
            ),
            (2, 2, 4)
        );
        let here = Cpus::detect();
        assert!(here.physical >= 1 && here.physical <= here.logical);
    }
}
