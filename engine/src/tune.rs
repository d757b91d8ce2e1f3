//! The one declaration site of the search's tunable parameters.
//!
//! `tunables!` turns each row (name, default, min, max, c_end, r_end) into: a field of `Tunables`
//! (owned by the searcher, read by search), its default, `setoption` handling, the UCI
//! `option name … type spin` line, and the Fishtest SPSA line `name, int, value, min, max, c_end, r_end`.

/// Why a `setoption` for a tunable was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TuneError {
    /// No tunable has this name.
    Unknown(String),
    /// The value is not an integer.
    NotANumber(String),
}

impl std::fmt::Display for TuneError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TuneError::Unknown(n) => write!(f, "no tunable named '{n}'"),
            TuneError::NotANumber(v) => write!(f, "tunable value '{v}' is not an integer"),
        }
    }
}

impl std::error::Error for TuneError {}

/// One row of the table, as data (for listings and the oracle's tuner).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TunableSpec {
    /// Parameter name, also the UCI option name.
    pub name: &'static str,
    /// Default value.
    pub default: i32,
    /// Smallest accepted value.
    pub min: i32,
    /// Largest accepted value.
    pub max: i32,
    /// SPSA perturbation at the end of a tuning run.
    pub c_end: f64,
    /// SPSA learning rate at the end of a tuning run.
    pub r_end: f64,
}

macro_rules! tunables {
    ($( $(#[doc = $doc:literal])+ $name:ident: $default:expr, $min:expr, $max:expr, $c_end:expr, $r_end:expr; )+) => {
        /// Every tunable search parameter; search reads these fields.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct Tunables {
            $( $(#[doc = $doc])+ pub $name: i32, )+
        }

        impl Default for Tunables {
            fn default() -> Self {
                Tunables { $( $name: $default, )+ }
            }
        }

        impl Tunables {
            /// The table rows in declaration order.
            pub const SPECS: &'static [TunableSpec] = &[
                $( TunableSpec { name: stringify!($name), default: $default, min: $min, max: $max, c_end: $c_end, r_end: $r_end }, )+
            ];

            /// Current value of the tunable `name` (case-insensitive).
            #[must_use]
            pub fn get(&self, name: &str) -> Option<i32> {
                $( if name.eq_ignore_ascii_case(stringify!($name)) { return Some(self.$name); } )+
                None
            }

            /// Set the tunable `name` (case-insensitive), clamped to its range; returns the value set.
            pub fn set(&mut self, name: &str, value: &str) -> Result<i32, TuneError> {
                let v: i64 = value.trim().parse().map_err(|_| TuneError::NotANumber(value.to_string()))?;
                $( if name.eq_ignore_ascii_case(stringify!($name)) {
                    self.$name = v.clamp($min as i64, $max as i64) as i32;
                    return Ok(self.$name);
                } )+
                Err(TuneError::Unknown(name.to_string()))
            }
        }
    };
}

impl Tunables {
    /// UCI `option` lines, one per tunable.
    #[must_use]
    pub fn uci_options() -> String {
        Self::SPECS
            .iter()
            .map(|t| {
                format!(
                    "option name {} type spin default {} min {} max {}\n",
                    t.name, t.default, t.min, t.max
                )
            })
            .collect()
    }

    /// Fishtest SPSA input lines with the current values: `name, int, value, min, max, c_end, r_end`.
    #[must_use]
    pub fn spsa_lines(&self) -> String {
        Self::SPECS
            .iter()
            .map(|t| {
                let v = self.get(t.name).unwrap_or(t.default);
                format!(
                    "{}, int, {}, {}, {}, {}, {}\n",
                    t.name, v, t.min, t.max, t.c_end, t.r_end
                )
            })
            .collect()
    }
}

tunables! {
    /// Initial half-width of the aspiration window (cp).
    asp_delta: 17, 5, 60, 3.0, 0.002;
    /// First depth that uses an aspiration window.
    asp_min_depth: 5, 2, 10, 1.0, 0.002;
    /// Aspiration widening in percent of the current delta.
    asp_growth_pct: 50, 20, 200, 10.0, 0.002;
    /// Maximum depth for reverse futility pruning.
    rfp_depth: 8, 2, 14, 1.0, 0.002;
    /// Reverse futility margin per depth (cp).
    rfp_margin: 76, 30, 160, 8.0, 0.002;
    /// Reverse futility margin reduction when improving (cp).
    rfp_improving: 60, 0, 140, 8.0, 0.002;
    /// Maximum depth for razoring.
    razor_depth: 3, 1, 6, 1.0, 0.002;
    /// Razoring base margin (cp).
    razor_base: 299, 100, 600, 30.0, 0.002;
    /// Razoring margin per depth (cp).
    razor_mult: 240, 80, 450, 25.0, 0.002;
    /// Minimum depth for null-move pruning.
    nmp_min_depth: 3, 1, 6, 1.0, 0.002;
    /// Null-move base reduction.
    nmp_base: 3, 1, 6, 1.0, 0.002;
    /// Null-move reduction: one more ply every this many plies of depth.
    nmp_depth_div: 4, 2, 8, 1.0, 0.002;
    /// Null-move reduction: one more ply per this many cp above beta.
    nmp_eval_div: 203, 80, 400, 20.0, 0.002;
    /// Null-move reduction: most extra plies from the eval margin.
    nmp_eval_max: 3, 0, 6, 1.0, 0.002;
    /// Maximum depth for futility pruning of quiet moves.
    fp_depth: 7, 1, 12, 1.0, 0.002;
    /// Futility base margin (cp).
    fp_base: 85, 0, 250, 12.0, 0.002;
    /// Futility margin per depth (cp).
    fp_mult: 87, 30, 200, 10.0, 0.002;
    /// Maximum depth for late-move pruning.
    lmp_depth: 8, 2, 14, 1.0, 0.002;
    /// Late-move pruning: base number of quiets.
    lmp_base: 3, 0, 10, 1.0, 0.002;
    /// Late-move pruning: quiets per depth squared, in percent.
    lmp_mult_pct: 109, 40, 250, 12.0, 0.002;
    /// Maximum depth for SEE pruning of quiet moves.
    see_quiet_depth: 8, 2, 14, 1.0, 0.002;
    /// SEE threshold for quiets, cp per depth.
    see_quiet_margin: 59, 10, 150, 8.0, 0.002;
    /// Maximum depth for SEE pruning of captures.
    see_noisy_depth: 6, 2, 12, 1.0, 0.002;
    /// SEE threshold for captures, cp per depth squared.
    see_noisy_margin: 24, 5, 80, 4.0, 0.002;
    /// Quiescence SEE threshold (cp).
    qs_see_margin: 0, -150, 150, 15.0, 0.002;
    /// Quiescence delta-pruning margin (cp).
    qs_delta_margin: 162, 0, 400, 20.0, 0.002;
    /// Check extension in plies.
    check_ext: 1, 0, 2, 0.5, 0.002;
    /// Minimum depth for singular extensions.
    se_depth: 7, 4, 12, 1.0, 0.002;
    /// Singular extensions: the table entry may be this many plies shallower than the node.
    se_tt_depth_margin: 3, 1, 6, 1.0, 0.002;
    /// Singular extensions: the other moves must stay this far below the table score, cp per depth.
    se_margin: 2, 1, 8, 0.5, 0.002;
    /// Minimum depth for internal iterative reduction.
    iir_depth: 4, 2, 10, 1.0, 0.002;
    /// LMR table base, in hundredths of a ply.
    lmr_base: 76, 0, 200, 10.0, 0.002;
    /// LMR table divisor, in hundredths.
    lmr_div: 223, 120, 400, 15.0, 0.002;
    /// Minimum depth for late-move reductions.
    lmr_min_depth: 3, 1, 6, 1.0, 0.002;
    /// Moves searched before reductions start (non-PV; PV adds one).
    lmr_move_start: 2, 1, 6, 1.0, 0.002;
    /// Extra reduction at non-PV nodes, 1024ths of a ply.
    lmr_non_pv: 1024, 0, 2048, 128.0, 0.002;
    /// Reduction bonus when improving, 1024ths of a ply.
    lmr_improving: 512, 0, 2048, 128.0, 0.002;
    /// Extra reduction at expected cut nodes, 1024ths of a ply.
    lmr_cut_node: 1024, 0, 2048, 128.0, 0.002;
    /// Less reduction for killers and the countermove, 1024ths of a ply.
    lmr_refutation: 1024, 0, 2048, 128.0, 0.002;
    /// History divisor for reductions: history / this = plies (in 1024ths scaled).
    lmr_history_div: 7924, 2048, 32768, 1024.0, 0.002;
    /// History bonus per depth squared.
    hist_bonus_mult: 16, 4, 64, 3.0, 0.002;
    /// History bonus per depth.
    hist_bonus_linear: 32, 0, 256, 16.0, 0.002;
    /// Largest single history bonus.
    hist_bonus_max: 1600, 400, 4000, 150.0, 0.002;
    /// History malus in percent of the bonus.
    hist_malus_pct: 100, 25, 200, 12.0, 0.002;
    /// Time: expected moves to go when the GUI gives none.
    tm_moves_to_go: 22, 10, 60, 3.0, 0.002;
    /// Time: share of the increment added to the base budget, percent.
    tm_inc_pct: 75, 0, 100, 8.0, 0.002;
    /// Time: soft limit in percent of the base budget, before stability and node share scale it.
    tm_soft_pct: 75, 20, 150, 8.0, 0.002;
    /// Time: soft limit scale in percent when the best move just changed.
    tm_unstable_pct: 140, 100, 250, 10.0, 0.002;
    /// Time: percent taken off that scale per iteration the best move held (up to eight).
    tm_stable_step_pct: 7, 0, 15, 1.0, 0.002;
    /// Time: node-share scale is (this − best move's share of the nodes in percent) × mult.
    tm_node_base_pct: 150, 100, 250, 10.0, 0.002;
    /// Time: multiplier of the node-share scale, percent.
    tm_node_mult_pct: 135, 50, 250, 10.0, 0.002;
    /// Time: hard limit in percent of the base budget.
    tm_hard_pct: 300, 100, 600, 30.0, 0.002;
    /// Time: hard limit never above this percent of the remaining clock.
    tm_max_pct: 40, 10, 80, 4.0, 0.002;
}

/// The search formulas, next to the numbers they combine.
impl Tunables {
    /// Reverse futility margin: grows with depth, shrinks when the position is improving.
    #[must_use]
    #[inline]
    pub fn reverse_futility_margin(&self, depth: i32, improving: bool) -> i32 {
        self.rfp_margin * depth - if improving { self.rfp_improving } else { 0 }
    }

    /// Razoring margin below alpha.
    #[must_use]
    #[inline]
    pub fn razoring_margin(&self, depth: i32) -> i32 {
        self.razor_base + self.razor_mult * depth
    }

    /// Null-move depth reduction from depth and the eval's margin over beta.
    #[must_use]
    #[inline]
    pub fn null_move_reduction(&self, depth: i32, eval_over_beta: i32) -> i32 {
        self.nmp_base
            + depth / self.nmp_depth_div
            + (eval_over_beta / self.nmp_eval_div).min(self.nmp_eval_max)
    }

    /// How far, in percent, to stretch the soft time limit after an iteration: further when the
    /// best move just changed or took a small share of the nodes (the search is still deciding),
    /// less when it has held for several iterations and took most of them.
    #[must_use]
    pub fn soft_limit_scale_pct(&self, stable_iterations: u32, best_nodes: u64, nodes: u64) -> u64 {
        let held = stable_iterations.min(8) as i32;
        let stability = (self.tm_unstable_pct - self.tm_stable_step_pct * held).max(10) as u64;
        let best_share = (best_nodes * 100 / nodes.max(1)).min(100) as i32;
        let node_share =
            ((self.tm_node_base_pct - best_share) * self.tm_node_mult_pct / 100).max(10) as u64;
        stability * node_share / 100
    }

    /// Quiet moves searched before late-move pruning skips the rest (halved when not improving).
    #[must_use]
    #[inline]
    pub fn late_move_limit(&self, depth: i32, improving: bool) -> i32 {
        self.lmp_base + depth * depth * self.lmp_mult_pct / if improving { 100 } else { 200 }
    }

    /// Futility margin above the eval for quiet moves.
    #[must_use]
    #[inline]
    pub fn futility_margin(&self, depth: i32) -> i32 {
        self.fp_base + self.fp_mult * depth
    }

    /// SEE threshold below which a quiet move is pruned.
    #[must_use]
    #[inline]
    pub fn see_quiet_threshold(&self, depth: i32) -> i32 {
        -self.see_quiet_margin * depth
    }

    /// SEE threshold below which a capture is pruned.
    #[must_use]
    #[inline]
    pub fn see_noisy_threshold(&self, depth: i32) -> i32 {
        -self.see_noisy_margin * depth * depth
    }

    /// How far below the table score a singular-extension search sets its beta.
    #[must_use]
    #[inline]
    pub fn singular_margin(&self, depth: i32) -> i32 {
        self.se_margin * depth
    }

    /// History bonus for the move that caused a cutoff.
    #[must_use]
    #[inline]
    pub fn history_bonus(&self, depth: i32) -> i32 {
        (self.hist_bonus_mult * depth * depth + self.hist_bonus_linear * depth)
            .min(self.hist_bonus_max)
    }

    /// History malus for the quiet moves tried before the cutoff.
    #[must_use]
    #[inline]
    pub fn history_malus(&self, depth: i32) -> i32 {
        self.history_bonus(depth) * self.hist_malus_pct / 100
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_round_trips() {
        let n = Tunables::SPECS.len();
        assert!((30..=90).contains(&n), "{n} tunables");
        let mut t = Tunables::default();
        for spec in Tunables::SPECS {
            assert!(
                spec.min <= spec.default && spec.default <= spec.max,
                "{}",
                spec.name
            );
            assert_eq!(t.get(spec.name), Some(spec.default));
        }
        assert_eq!(t.set("RFP_MARGIN", "100"), Ok(100));
        assert_eq!(t.rfp_margin, 100);
        assert_eq!(t.set("rfp_margin", "100000"), Ok(160), "clamped to max");
        assert!(matches!(t.set("nope", "1"), Err(TuneError::Unknown(_))));
        assert!(matches!(
            t.set("rfp_margin", "x"),
            Err(TuneError::NotANumber(_))
        ));
        assert_eq!(Tunables::uci_options().lines().count(), n);
        // The default is whatever the last tuning set; the line's shape is what is tested.
        let first = format!(
            "asp_delta, int, {}, 5, 60, 3, 0.002\n",
            Tunables::default().asp_delta
        );
        assert!(t.spsa_lines().starts_with(&first));
    }

    #[test]
    fn the_soft_limit_stretches_while_the_search_is_undecided() {
        let t = Tunables::default();
        let settled = t.soft_limit_scale_pct(8, 90, 100);
        let just_changed = t.soft_limit_scale_pct(0, 90, 100);
        let contested = t.soft_limit_scale_pct(8, 30, 100);
        assert!(settled < 100, "a settled search stops early: {settled}%");
        assert!(just_changed > settled && contested > settled);
        assert!(
            t.soft_limit_scale_pct(0, 0, 100) > 200,
            "both: more than twice the budget"
        );
        assert!(
            t.soft_limit_scale_pct(0, 0, 0) > 0,
            "no nodes yet is not a division by zero"
        );
    }
}
