//! Step 3: build both engines twice, bit-identically, in the sandbox (or keep an earlier
//! invocation's binding), and bind their sha256 in `--out` before any measurement.

use std::fs;
use std::time::SystemTime;

use crate::builder::sandbox::cpu_account::CpuAccount;
use crate::builder::sandbox::engine::EngineIsolation;
use crate::builder::sandbox::{Isolation, Limits, Sandbox};
use crate::builder::{self, BuildRequest};
use crate::errln;
use crate::governance::entry::IsolationRecord;

use super::binding::{BindingRecord, BoundBinary, timestamp};
use super::resolve::{self};
use super::{Mode, Rules, Run, Step, StepFailure, short};

impl Run<'_> {
    /// Step 3: build both twice (or reuse an earlier run's binding), bind before any measurement.
    pub(super) fn build_and_bind(&mut self, rules: &Rules) -> Result<BindingRecord, StepFailure> {
        let step = Step::Build;
        self.reporter.begin(
            step,
            "build both engines twice, bit-identically; bind their sha256",
        );
        let result = self.bind(rules);
        if let Ok(record) = &result {
            self.report.bound_at = record.bound_at.clone();
            self.report.candidate_sha256 = record.candidate.sha256.clone();
            self.report.predecessor_sha256 = record.predecessor.sha256.clone();
            self.binding = Some(record.clone());
        }
        self.close(result, |r| {
            format!(
                "bound at {}: candidate {}, predecessor {} ({})",
                r.bound_at,
                &r.candidate.sha256[..16],
                &r.predecessor.sha256[..16],
                r.toolchain
            )
        })
    }

    pub(super) fn bind(&mut self, rules: &Rules) -> Result<BindingRecord, StepFailure> {
        let step = Step::Build;
        let pair = self.pair().clone();
        let path = self.out.binding();
        let sandbox = Sandbox::detect(Limits::build());
        let isolation = IsolationRecord {
            build: sandbox.isolation.describe(),
            play: EngineIsolation::detect().describe(),
        };
        let sandboxed = sandbox.isolation == Isolation::Bubblewrap
            && EngineIsolation::detect() == EngineIsolation::Bubblewrap;
        if rules.profile.binding && !sandboxed {
            return Err(StepFailure::error(
                step,
                format!(
                    "profile `{}` is binding and needs a working bubblewrap sandbox, but builds \
                     would run under `{}` and engines under `{}`; install bubblewrap and let it \
                     create user, pid, ipc, uts and net namespaces (nothing was built)",
                    self.request.profile, isolation.build, isolation.play
                ),
            ));
        }
        // Article 6.7: at a clock the CPU rule must see every process an engine starts, which
        // only a CPU account does (the `/proc` tree misses children that exit unreaped). A
        // merge (`--no-play`) plays nothing and needs none.
        let timed = rules.profile.stages.iter().any(|stage| stage.tc.is_timed());
        let plays = !matches!(self.request.mode, Mode::NoPlay { .. }) && !self.request.checks_only;
        if rules.profile.binding && timed && plays && !CpuAccount::available() {
            return Err(StepFailure::error(
                step,
                format!(
                    "profile `{}` is binding and plays at a clock, which needs a CPU account \
                     (cgroup) per engine, but no cgroup2 mount is writable here; run the oracle \
                     as root on a machine with cgroup2 (nothing was built)",
                    self.request.profile
                ),
            ));
        }
        let earlier = BindingRecord::read(&path).map_err(|e| StepFailure::error(step, e))?;
        if let Some(earlier) = earlier {
            let register_sha256 = rules
                .custody
                .as_ref()
                .map(|(_, engine)| engine.binary_sha256.as_str());
            let expected = [
                (
                    "profile",
                    earlier.profile.as_str(),
                    self.request.profile.as_str(),
                ),
                (
                    "constitution_sha256",
                    &earlier.constitution_sha256,
                    rules.constitution_sha256.as_str(),
                ),
                (
                    "candidate.commit",
                    &earlier.candidate.commit,
                    &pair.candidate.commit,
                ),
                (
                    "candidate.tree",
                    &earlier.candidate.tree,
                    &pair.candidate.tree,
                ),
                (
                    "predecessor.commit",
                    &earlier.predecessor.commit,
                    &pair.predecessor.commit,
                ),
                (
                    "predecessor.tree",
                    &earlier.predecessor.tree,
                    &pair.predecessor.tree,
                ),
                (
                    "predecessor.sha256",
                    &earlier.predecessor.sha256,
                    register_sha256.unwrap_or(&earlier.predecessor.sha256),
                ),
            ];
            let engines = [
                ("candidate.path", &earlier.candidate.path, "candidate"),
                ("predecessor.path", &earlier.predecessor.path, "predecessor"),
            ];
            let wrong_field = expected
                .iter()
                .find(|(_, found, wanted)| found != wanted)
                .map(|(field, found, wanted)| format!("{field} is {found}, this run's is {wanted}"))
                .or_else(|| {
                    engines.iter().find_map(|(field, found, role)| {
                        let wanted = fs::canonicalize(self.out.engine(role)).ok()?;
                        (**found != wanted).then(|| {
                            format!("{field} is {}, not {}", found.display(), wanted.display())
                        })
                    })
                });
            if let Some(wrong) = wrong_field {
                return Err(StepFailure::error(
                    step,
                    format!(
                        "{} does not belong to this run: {wrong}; use a fresh --out",
                        path.display()
                    ),
                )
                .evidence(path));
            }
            earlier
                .rehash()
                .map_err(|e| StepFailure::error(step, e).evidence(path.clone()))?;
            errln!(
                "      resuming: the binding of {} is kept",
                earlier.bound_at
            );
            self.resumed = true;
            self.report.isolation = Some(earlier.isolation.clone());
            return Ok(earlier);
        }
        errln!("      isolation: builds {}", isolation.build);
        errln!("      isolation: engines {}", isolation.play);
        self.report.isolation = Some(isolation.clone());
        let binding = rules.custody.is_some();
        let mut bound = Vec::new();
        let mut toolchain = String::new();
        for (role, commit) in [
            ("candidate", &pair.candidate),
            ("predecessor", &pair.predecessor),
        ] {
            // A binding candidate is built fresh: no cached binary stands in for it. The
            // predecessor may come from the cache: it is held to the register's record below.
            let fresh = (binding || self.request.checks_only) && role == "candidate";
            let mut outcome = self.build_bound(role, commit, rules, sandbox, fresh)?;
            if let (Some((id, engine)), "predecessor") = (&rules.custody, role) {
                if outcome.sha256 != engine.binary_sha256.as_str() && outcome.cached {
                    errln!(
                        "      the cached predecessor {} is not the register's {}: rebuilding it",
                        &outcome.sha256[..16],
                        &engine.binary_sha256.as_str()[..16]
                    );
                    outcome = self.build_bound(role, commit, rules, sandbox, true)?;
                }
                if outcome.sha256 != engine.binary_sha256.as_str() {
                    return Err(StepFailure::error(
                        step,
                        format!(
                            "chain of custody: the predecessor {} rebuilds to sha256 {}, but the register's \
                             current engine {id} (commit {}) is sha256 {}; a binding run judges a change \
                             against the engine that landed last",
                            short(&commit.commit),
                            outcome.sha256,
                            short(engine.commit.as_str()),
                            engine.binary_sha256
                        ),
                    ));
                }
            }
            // A fresh build was held to this already; a cached one may come from an older oracle.
            builder::runnable(&outcome.binary).map_err(|reason| {
                let failure = format!("{role} {}: {reason}", short(&commit.commit));
                if role == "candidate" {
                    StepFailure::rejected(step, failure)
                } else {
                    StepFailure::error(step, failure)
                }
            })?;
            let copy = self.out.engine(role);
            fs::copy(&outcome.binary, &copy)
                .map_err(|e| StepFailure::error(step, format!("{}: {e}", copy.display())))?;
            let sha256 = crate::integrity::sha256_file(&copy)
                .map_err(|e| StepFailure::error(step, e.to_string()))?;
            if sha256 != outcome.sha256 {
                return Err(StepFailure::error(
                    step,
                    format!(
                        "the copy {} of the {role} hashes to {sha256}, the build to {}",
                        copy.display(),
                        outcome.sha256
                    ),
                ));
            }
            toolchain = outcome.toolchain.clone();
            bound.push(BoundBinary {
                commit: commit.commit.clone(),
                tree: commit.tree.clone(),
                sha256,
                path: fs::canonicalize(&copy).unwrap_or(copy),
            });
        }
        let (bound_at, bound_at_unix_ms) = timestamp(SystemTime::now());
        let predecessor = bound.pop().expect("two binaries were bound");
        let candidate = bound.pop().expect("two binaries were bound");
        let record = BindingRecord {
            bound_at,
            bound_at_unix_ms,
            toolchain,
            profile: self.request.profile.clone(),
            constitution_sha256: rules.constitution_sha256.to_string(),
            candidate,
            predecessor,
            isolation,
        };
        record
            .write(&path)
            .map_err(|e| StepFailure::error(step, e))?;
        Ok(record)
    }

    /// Builds one side twice (or takes it from the cache unless `fresh`), naming it on failure.
    pub(super) fn build_bound(
        &mut self,
        role: &str,
        commit: &resolve::ResolvedCommit,
        rules: &Rules,
        sandbox: Sandbox,
        fresh: bool,
    ) -> Result<builder::BuildOutcome, StepFailure> {
        let spinner = self
            .reporter
            .spinner(&format!("building {role} {} twice", short(&commit.commit)));
        let outcome = builder::build_commit(&BuildRequest {
            repo: self.request.repo.clone(),
            rev: commit.commit.clone(),
            build: rules.contract.build.clone(),
            fetch: rules.contract.fetch.clone(),
            cache_dir: self.request.cache_dir.clone(),
            registry: builder::host_registry(),
            sandbox,
            fresh,
        });
        spinner.finish_and_clear();
        outcome.map_err(|e| {
            let failure = format!("{role} {}: {e}", short(&commit.commit));
            if role == "candidate" && e.rejects_candidate() {
                StepFailure::rejected(Step::Build, failure)
            } else {
                StepFailure::error(Step::Build, failure)
            }
        })
    }
}
