//! Step 4: the build-shape gate on the candidate, the bench signatures of both, and the plan
//! printed before any game.

use std::fs;
use std::io::Write as _;

use crate::builder;
use crate::builder::bench::BenchRules;
use crate::builder::sandbox::engine::EngineIsolation;
use crate::errln;
use crate::gate;
use crate::governance::contract::GateContract;
use crate::report::{BenchReport, GateSummary};

use super::binding::{BindingRecord, BoundBinary};
use super::measure::skips_games;
use super::trailers::Trailers;
use super::{Rules, Run, Step, StepFailure, plan, rehash, write_json};

impl Run<'_> {
    /// Step 4a: the build-shape gate on the candidate.
    pub(super) fn gate(
        &mut self,
        rules: &Rules,
        binding: &BindingRecord,
    ) -> Result<(), StepFailure> {
        let step = Step::Gate;
        let GateContract::Symbols(gate_rules) = &rules.contract.gate else {
            self.reporter
                .skip(step, "the engine contract states no gate (`gate: none`)");
            return Ok(());
        };
        self.reporter.begin(
            step,
            "build-shape gate on the candidate (POPCNT in the evaluation)",
        );
        let file = self.out.step_file("gate.json");
        let result = (|| {
            rehash(step, binding, &self.out)?;
            let bytes = fs::read(&binding.candidate.path).map_err(|e| {
                StepFailure::error(step, format!("{}: {e}", binding.candidate.path.display()))
            })?;
            let found = gate::inspect(&bytes, &gate_rules.symbols, gate_rules.callee_depth)
                .map_err(|e| StepFailure::error(step, format!("candidate binary: {e}")))?;
            write_json(step, &file, &found)?;
            self.report.gate = Some(GateSummary {
                pass: found.pass,
                symbols: found.symbols.clone(),
                functions_scanned: found.functions_scanned.len(),
                popcnt: found.popcnt as usize,
                software_popcount: found.software_popcount as usize,
            });
            if !found.pass {
                return Err(StepFailure::rejected(step, found.failures.join("; ")).evidence(&file));
            }
            Ok(found)
        })();
        self.close(result, |g| {
            format!(
                "PASS: {} POPCNT, no software popcount in {} functions",
                g.popcnt,
                g.functions_scanned.len()
            )
        })
        .map(|_| ())
    }

    /// Step 4b: bench signatures of both; the candidate's must equal its trailer.
    pub(super) fn bench(
        &mut self,
        bench: &BenchRules,
        binding: &BindingRecord,
        trailers: &Trailers,
    ) -> Result<(BenchReport, u64), StepFailure> {
        let step = Step::Bench;
        self.reporter.begin(
            step,
            &format!(
                "bench signatures (the candidate's equals its {}: trailer)",
                bench.trailer.key
            ),
        );
        let file = self.out.step_file("bench.json");
        let result = (|| {
            rehash(step, binding, &self.out)?;
            let isolation = EngineIsolation::detect();
            let measure = |role: &str, bound: &BoundBinary| {
                builder::bench::measure(&bound.path, bench, isolation, 2)
                    .map_err(|e| StepFailure::error(step, format!("{role}: {e}")))
            };
            let (candidate, predecessor) = (
                measure("candidate", &binding.candidate)?,
                measure("predecessor", &binding.predecessor)?,
            );
            // The pace bounds every search of a node limit (Article 6.9); a bench that searched
            // nothing gives none, and nothing would hold the engine to its limit.
            let pace = |role: &str, signature: &builder::bench::BenchSignature| {
                signature.node_pace().ok_or_else(|| {
                    StepFailure::error(
                        step,
                        format!(
                            "{role}: its bench reports {} nodes, so the CPU a search of a node \
                             limit may cost cannot be measured",
                            signature.nodes
                        ),
                    )
                })
            };
            let reference = pace("predecessor", &predecessor)?;
            self.node_pace = [
                Some(pace("candidate", &candidate)?.at_most(reference)),
                Some(reference),
            ];
            // The slower engine's best run: the plan's time estimate should not be optimistic.
            let nodes_per_second = [&candidate, &predecessor]
                .iter()
                .map(|bench| bench.runs.iter().map(|run| run.nps).max().unwrap_or(0))
                .min()
                .unwrap_or(0);
            let summary = BenchReport {
                candidate: candidate.nodes,
                predecessor: predecessor.nodes,
                trailer: trailers.bench,
            };
            // A resumed run's file is measured again, never taken as found: it must agree.
            let earlier = match fs::read(&file) {
                Ok(bytes) => {
                    Some(serde_json::from_slice::<BenchReport>(&bytes).map_err(|e| {
                        StepFailure::error(step, format!("{}: {e}", file.display()))
                    })?)
                }
                Err(_) => None,
            };
            if let Some(earlier) = earlier.filter(|_| self.resumed) {
                let fields = [
                    ("candidate", earlier.candidate, summary.candidate),
                    ("predecessor", earlier.predecessor, summary.predecessor),
                ];
                if let Some((field, found, measured)) = fields.iter().find(|(_, a, b)| a != b) {
                    return Err(StepFailure::error(
                        step,
                        format!(
                            "{}: {field} is {found}, the bound binary measures {measured}; use a fresh --out",
                            file.display()
                        ),
                    )
                    .evidence(&file));
                }
            }
            write_json(step, &file, &summary)?;
            let candidate = &summary;
            self.report.bench = Some(summary.clone());
            if candidate.candidate != trailers.bench {
                return Err(StepFailure::error(
                    step,
                    format!(
                        "the candidate's bench searched {} nodes but its commit says `{}: {}`; \
                         put the measured signature in the commit message",
                        candidate.candidate, bench.trailer.key, trailers.bench
                    ),
                )
                .evidence(&file));
            }
            Ok((summary, nodes_per_second))
        })();
        self.close(result, |(b, nps)| {
            format!(
                "candidate {} = trailer, predecessor {}; {nps} nodes/s",
                b.candidate, b.predecessor
            )
        })
    }

    /// Before any game: what the stages are expected to cost on this machine.
    pub(super) fn plan(
        &mut self,
        rules: &Rules,
        binding: &BindingRecord,
        trailers: &Trailers,
        nodes_per_second: u64,
    ) -> Result<(), StepFailure> {
        if skips_games(rules, binding, trailers) {
            errln!("plan: no games, the binaries are bit-identical (Article 2.4: Gleich)");
            return Ok(());
        }
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let forecast = plan::forecast(&rules.profile, trailers.path, nodes_per_second, cores)
            .map_err(|e| StepFailure::error(Step::Bench, e))?;
        // As `errln!`: a closed standard error drops the plan, it never stops the run.
        let _ = std::io::stderr().write_all(plan::render(&forecast, nodes_per_second).as_bytes());
        self.plan = forecast;
        Ok(())
    }
}
