//! The GitHub workflows hold against a hostile pull request (docs/ci-trust.md): only the
//! triggers each file is meant to have and never `pull_request_target`; read-only tokens except
//! in the named write jobs, which run on main only, run no shell and read only artifacts that
//! their own run made without candidate code; no persisted credentials, no secrets, the token
//! only in the named step of a read-only job, no expressions expanded into shell scripts, only
//! known actions pinned by commit sha, and no `out-N` a later run continues from published by a
//! job cancelled or failed before its oracle finished it.
//!
//! Local composite actions (`uses: ./.github/actions/NAME`) are read as the steps they run.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use serde_norway::Value;

use crate::support::repository_root;

/// The triggers each workflow may have. A workflow file not listed here fails the test: a new
/// workflow is a decision about trust, made here.
const TRIGGERS: &[(&str, &[&str])] = &[
    ("ci.yml", &["pull_request", "push"]),
    ("verify.yml", &["workflow_run"]),
    ("verify-round.yml", &["workflow_call"]),
    ("register.yml", &["push"]),
];

/// The triggers under which a workflow's definition and code come from main, never from a pull
/// request: the only ones a workflow with a write job may have.
const TRUSTED_TRIGGERS: &[&str] = &["push", "workflow_run"];

/// The branch every `push` trigger is limited to.
const DEFAULT_BRANCH: &str = "main";

/// A job that may hold write permissions.
struct WriteJob {
    /// Its workflow file.
    workflow: &'static str,
    /// Its job id.
    job: &'static str,
    /// The permission scopes it may write.
    scopes: &'static [&'static str],
    /// The artifacts it may read, each made by a job of the same run.
    artifacts: &'static [&'static str],
}

/// Every job that may write: publishing the register to GitHub Pages, nothing else.
const WRITE_JOBS: &[WriteJob] = &[WriteJob {
    workflow: "register.yml",
    job: "deploy",
    scopes: &["pages", "id-token"],
    artifacts: &["github-pages"],
}];

/// A job one of whose steps may hand the run's token to `gh`: read-only, to list this
/// repository's runs of a workflow and download their artifacts (docs/ci-trust.md, "Continuing an
/// earlier run").
struct TokenReader {
    /// Its workflow file.
    workflow: &'static str,
    /// Its job id.
    job: &'static str,
    /// The `id` of the one step that gets the token, as `GH_TOKEN: ${{ github.token }}` in its `env:`.
    step: &'static str,
    /// The job's permissions, exactly.
    permissions: &'static [(&'static str, &'static str)],
}

/// Every job that may hand the token to a step: `verify`'s `prepare`, which continues from the
/// newest `out-N` of an earlier run of `verify` for the same candidate.
const TOKEN_READERS: &[TokenReader] = &[TokenReader {
    workflow: "verify.yml",
    job: "prepare",
    step: "previous",
    permissions: &[("actions", "read"), ("contents", "read")],
}];

/// How the one allowed step names the token.
const TOKEN_EXPRESSION: &str = "${{ github.token }}";

/// The actions a write job may run; it runs no shell and no checkout.
const WRITE_JOB_ACTIONS: &[&str] = &["actions/deploy-pages"];

/// The third-party actions any workflow may use, each pinned by a full commit sha. No cache
/// action: a cache saved by a job that ran candidate code could be restored by a trusted one.
const ACTIONS: &[&str] = &[
    "actions/checkout",
    "actions/upload-artifact",
    "actions/download-artifact",
    "actions/upload-pages-artifact",
    "actions/deploy-pages",
];

/// The only build a job whose artifacts a write job reads may run: the oracle, from main.
const ORACLE_BUILD: &str = "cargo build --release --locked -p oracle";

/// Commands that build or run candidate code, or fetch what another run made; a job whose
/// artifacts a write job reads runs none of them.
const UNTRUSTED_COMMANDS: &[&str] = &[
    "oracle verify",
    "register replay",
    "register landing",
    ".ci/run",
    "git fetch",
    "gh ",
    "curl",
    "wget",
];

/// The flag that makes `oracle register landing` judge the changed paths with git alone: it
/// builds and runs nothing of the push.
const GIT_ONLY: &str = "--paths-only";

/// The workflow files and local composite actions of a repository, parsed.
struct Workflows {
    /// Workflow file name → document.
    files: BTreeMap<String, Value>,
    /// `./.github/actions/NAME` → the action's document.
    actions: BTreeMap<String, Value>,
}

/// One step of a job, with composite actions expanded.
struct Step {
    /// Where it is, for messages: `file: job \`id\`: step N` (and the action it came from).
    place: String,
    /// The step.
    value: Value,
}

/// The string form of a YAML scalar (keys, trigger names), else empty.
fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        _ => String::new(),
    }
}

/// The keys of a mapping (empty for anything else).
fn keys(value: &Value) -> Vec<String> {
    value
        .as_mapping()
        .map(|map| map.keys().map(text).collect())
        .unwrap_or_default()
}

/// The action a `uses:` names, without its ref (`actions/checkout`).
fn action_name(uses: &str) -> &str {
    uses.split('@').next().unwrap_or(uses)
}

/// Parses YAML text, naming the file when it is not YAML.
fn parse(name: &str, text: &str) -> Value {
    serde_norway::from_str(text).unwrap_or_else(|e| panic!("{name}: not YAML: {e}"))
}

impl Workflows {
    /// Reads `.github/workflows/*.yml` and `.github/actions/*/action.yml` under `root`.
    fn read(root: &Path) -> Self {
        let mut files = BTreeMap::new();
        for item in fs::read_dir(root.join(".github/workflows")).unwrap() {
            let path = item.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            files.insert(
                name.clone(),
                parse(&name, &fs::read_to_string(&path).unwrap()),
            );
        }
        let mut actions = BTreeMap::new();
        if let Ok(listing) = fs::read_dir(root.join(".github/actions")) {
            for item in listing {
                let dir = item.unwrap().path();
                let name = dir.file_name().unwrap().to_string_lossy().into_owned();
                let file = dir.join("action.yml");
                let uses = format!("./.github/actions/{name}");
                actions.insert(
                    uses.clone(),
                    parse(&uses, &fs::read_to_string(file).unwrap()),
                );
            }
        }
        Self { files, actions }
    }

    /// Workflows given as (file name, YAML text), without local actions.
    fn from_texts(texts: &[(&str, &str)]) -> Self {
        let files = texts
            .iter()
            .map(|(name, text)| ((*name).to_owned(), parse(name, text)))
            .collect();
        Self {
            files,
            actions: BTreeMap::new(),
        }
    }

    /// Every job of every workflow: (file, job id, job).
    fn jobs(&self) -> Vec<(&str, String, &Value)> {
        let mut jobs = Vec::new();
        for (file, doc) in &self.files {
            if let Some(map) = doc.get("jobs").and_then(Value::as_mapping) {
                jobs.extend(map.iter().map(|(id, job)| (file.as_str(), text(id), job)));
            }
        }
        jobs
    }

    /// The steps a job runs, local composite actions expanded in place.
    fn steps(&self, file: &str, id: &str, job: &Value) -> Vec<Step> {
        let mut steps = Vec::new();
        let list = job.get("steps").and_then(Value::as_sequence);
        for (n, step) in list.into_iter().flatten().enumerate() {
            self.expand(
                &format!("{file}: job `{id}`: step {}", n + 1),
                step,
                &mut steps,
            );
        }
        steps
    }

    /// Appends `step`, or the steps of the local composite action it uses.
    fn expand(&self, place: &str, step: &Value, steps: &mut Vec<Step>) {
        let uses = step.get("uses").and_then(Value::as_str).unwrap_or_default();
        if let Some(action) = self.actions.get(uses) {
            let inner = action.get("runs").and_then(|r| r.get("steps"));
            for (n, inner) in inner
                .and_then(Value::as_sequence)
                .into_iter()
                .flatten()
                .enumerate()
            {
                self.expand(&format!("{place} ({uses}: step {})", n + 1), inner, steps);
            }
        } else {
            steps.push(Step {
                place: place.to_owned(),
                value: step.clone(),
            });
        }
    }

    /// Every step of every job and of every local action, whether or not a job uses it.
    fn all_steps(&self) -> Vec<Step> {
        let mut steps: Vec<Step> = self
            .jobs()
            .into_iter()
            .flat_map(|(file, id, job)| self.steps(file, &id, job))
            .collect();
        for (uses, action) in &self.actions {
            let list = action.get("runs").and_then(|r| r.get("steps"));
            for (n, step) in list
                .and_then(Value::as_sequence)
                .into_iter()
                .flatten()
                .enumerate()
            {
                steps.push(Step {
                    place: format!("{uses}: step {}", n + 1),
                    value: step.clone(),
                });
            }
        }
        steps
    }

    /// The triggers of a workflow (`on:` as a name, a list or a mapping).
    fn triggers(doc: &Value) -> Vec<String> {
        match doc.get("on") {
            Some(Value::String(name)) => vec![name.clone()],
            Some(Value::Sequence(names)) => names.iter().map(text).collect(),
            Some(map @ Value::Mapping(_)) => keys(map),
            _ => Vec::new(),
        }
    }

    /// Triggers: only those listed for the file, never `pull_request_target`, `push` only to main.
    fn trigger_violations(&self) -> Vec<String> {
        let mut found = Vec::new();
        for (file, doc) in &self.files {
            let allowed = TRIGGERS
                .iter()
                .find(|(name, _)| name == file)
                .map(|(_, t)| *t);
            if allowed.is_none() {
                found.push(format!(
                    "{file}: a workflow this test does not know; list its triggers in TRIGGERS"
                ));
            }
            for trigger in Self::triggers(doc) {
                if trigger == "pull_request_target" {
                    found.push(format!(
                        "{file}: triggered by pull_request_target (runs with write access on \
                         pull-request input); use pull_request"
                    ));
                } else if let Some(allowed) = allowed
                    && !allowed.contains(&trigger.as_str())
                {
                    found.push(format!(
                        "{file}: trigger `{trigger}` (allowed: {allowed:?})"
                    ));
                }
            }
            if let Some(push) = doc.get("on").and_then(|on| on.get("push")) {
                let branches = push.get("branches").and_then(Value::as_sequence);
                let only_main = keys(push) == ["branches"]
                    && branches.is_some_and(|b| b.len() == 1 && text(&b[0]) == DEFAULT_BRANCH);
                if !only_main {
                    found.push(format!(
                        "{file}: `push` must be limited to `branches: [{DEFAULT_BRANCH}]`"
                    ));
                }
            }
        }
        found
    }

    /// The write job named `id` in `file`, if it is one.
    fn write_job(file: &str, id: &str) -> Option<&'static WriteJob> {
        WRITE_JOBS
            .iter()
            .find(|job| job.workflow == file && job.job == id)
    }

    /// Permissions: read-only at the top of every workflow; write only in the named jobs, only
    /// their scopes, only in workflows whose triggers are trusted.
    fn permission_violations(&self) -> Vec<String> {
        let mut found = Vec::new();
        for (file, doc) in &self.files {
            match doc.get("permissions") {
                None => found.push(format!(
                    "{file}: no top-level `permissions` (the repository default may be write)"
                )),
                Some(permissions) => {
                    for (scope, access) in Self::grants(permissions) {
                        if access != "read" && access != "none" {
                            found.push(format!(
                                "{file}: top-level permission `{scope}: {access}` (only read)"
                            ));
                        }
                    }
                }
            }
        }
        for (file, id, job) in self.jobs() {
            let write_job = Self::write_job(file, &id);
            for (scope, access) in job.get("permissions").map(Self::grants).unwrap_or_default() {
                if access == "read" || access == "none" {
                    continue;
                }
                match write_job {
                    Some(allowed) if allowed.scopes.contains(&scope.as_str()) => {}
                    _ => found.push(format!(
                        "{file}: job `{id}`: permission `{scope}: {access}` (writes are allowed \
                         only in {})",
                        Self::write_jobs_named()
                    )),
                }
            }
            if write_job.is_some() {
                let triggers = Self::triggers(&self.files[file]);
                if triggers.is_empty()
                    || triggers
                        .iter()
                        .any(|t| !TRUSTED_TRIGGERS.contains(&t.as_str()))
                {
                    found.push(format!(
                        "{file}: job `{id}` may write, so its workflow may be triggered only by \
                         {TRUSTED_TRIGGERS:?}, not {triggers:?}"
                    ));
                }
            }
        }
        found
    }

    /// The token readers, for messages.
    fn token_readers_named() -> String {
        let names: Vec<String> = TOKEN_READERS
            .iter()
            .map(|reader| {
                format!(
                    "{}: `{}`, step `{}`",
                    reader.workflow, reader.job, reader.step
                )
            })
            .collect();
        names.join("; ")
    }

    /// The named write jobs, for messages.
    fn write_jobs_named() -> String {
        let names: Vec<String> = WRITE_JOBS
            .iter()
            .map(|job| {
                format!(
                    "{}: `{}` ({})",
                    job.workflow,
                    job.job,
                    job.scopes.join(", ")
                )
            })
            .collect();
        names.join("; ")
    }

    /// (scope, access) of a `permissions:` value; `read-all`/`write-all` count for every scope.
    fn grants(permissions: &Value) -> Vec<(String, String)> {
        match permissions {
            Value::String(all) => vec![("*".to_owned(), all.replace("-all", ""))],
            Value::Mapping(map) => map.iter().map(|(k, v)| (text(k), text(v))).collect(),
            _ => Vec::new(),
        }
    }

    /// `doc` (the workflow `file`) without the one place each token reader of `file` may name the
    /// token, once that reader's job is found to hold exactly its read-only permissions.
    fn without_allowed_token(file: &str, doc: &Value, found: &mut Vec<String>) -> Value {
        let mut doc = doc.clone();
        for reader in TOKEN_READERS.iter().filter(|r| r.workflow == file) {
            let Some(job) = doc
                .get_mut("jobs")
                .and_then(|jobs| jobs.get_mut(reader.job))
            else {
                found.push(format!(
                    "{file}: job `{}` (a token reader) does not exist",
                    reader.job
                ));
                continue;
            };
            let mut granted = job.get("permissions").map(Self::grants).unwrap_or_default();
            granted.sort();
            let listed: Vec<(String, String)> = reader
                .permissions
                .iter()
                .map(|(scope, access)| ((*scope).to_owned(), (*access).to_owned()))
                .collect();
            if granted != listed {
                found.push(format!(
                    "{file}: job `{}` hands the token to a step, so its permissions must be \
                     exactly {listed:?}, not {granted:?}",
                    reader.job
                ));
                continue;
            }
            let steps = job.get_mut("steps").and_then(Value::as_sequence_mut);
            for step in steps.into_iter().flatten() {
                if step.get("id").and_then(Value::as_str) != Some(reader.step) {
                    continue;
                }
                let env = step.get_mut("env").and_then(Value::as_mapping_mut);
                if let Some(env) = env.filter(|env| {
                    env.get("GH_TOKEN").and_then(Value::as_str) == Some(TOKEN_EXPRESSION)
                }) {
                    env.remove("GH_TOKEN");
                }
            }
        }
        doc
    }

    /// Checkouts persist no credentials; no secret is handed to any step, and the token only to
    /// the one step of each [`TOKEN_READERS`] job, whose permissions are read-only.
    fn credential_violations(&self) -> Vec<String> {
        let mut found = Vec::new();
        for step in self.all_steps() {
            let uses = step
                .value
                .get("uses")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if action_name(uses) == "actions/checkout" {
                let persist = step
                    .value
                    .get("with")
                    .and_then(|with| with.get("persist-credentials"));
                if persist != Some(&Value::Bool(false)) {
                    found.push(format!(
                        "{}: checkout without `persist-credentials: false` (the token stays in \
                         .git/config for every later step)",
                        step.place
                    ));
                }
            }
        }
        let mut texts: Vec<(String, String)> = Vec::new();
        for (file, doc) in &self.files {
            let doc = Self::without_allowed_token(file, doc, &mut found);
            texts.push((file.clone(), serde_norway::to_string(&doc).unwrap()));
        }
        texts.extend(
            self.actions
                .iter()
                .map(|(uses, doc)| (uses.clone(), serde_norway::to_string(doc).unwrap())),
        );
        for (name, text) in texts {
            for needle in ["secrets.", "github.token"] {
                if text.contains(needle) {
                    found.push(format!(
                        "{name}: uses `{needle}`: no step gets a secret, and the token only the \
                         listed step of a read-only job ({})",
                        Self::token_readers_named()
                    ));
                }
            }
        }
        found
    }

    /// Only known actions, each pinned by a full commit sha; reusable workflows only local.
    fn action_violations(&self) -> Vec<String> {
        let mut found = Vec::new();
        for step in self.all_steps() {
            let Some(uses) = step.value.get("uses").and_then(Value::as_str) else {
                continue;
            };
            if uses.starts_with("./.github/actions/") && self.actions.contains_key(uses) {
                continue;
            }
            let pinned = uses.split_once('@').is_some_and(|(_, sha)| {
                sha.len() == 40 && sha.bytes().all(|b| b.is_ascii_hexdigit())
            });
            if !ACTIONS.contains(&action_name(uses)) {
                found.push(format!(
                    "{}: action `{uses}` is not one of {ACTIONS:?}",
                    step.place
                ));
            } else if !pinned {
                found.push(format!(
                    "{}: action `{uses}` is not pinned by a full commit sha",
                    step.place
                ));
            }
        }
        for (file, id, job) in self.jobs() {
            if let Some(uses) = job.get("uses").and_then(Value::as_str)
                && !(uses.starts_with("./.github/workflows/")
                    && self
                        .files
                        .contains_key(uses.trim_start_matches("./.github/workflows/")))
            {
                found.push(format!(
                    "{file}: job `{id}`: reusable workflow `{uses}` is not one of this repository's"
                ));
            }
        }
        found
    }

    /// No `${{ }}` expression inside a shell script: values reach scripts through `env:`, so no
    /// branch name, title or output is ever pasted into shell code.
    fn script_violations(&self) -> Vec<String> {
        let mut found = Vec::new();
        for step in self.all_steps() {
            let script = step.value.get("run").and_then(Value::as_str);
            if script.is_some_and(|script| script.contains("${{")) {
                found.push(format!(
                    "{}: `${{{{ }}}}` inside `run:` (pass it through `env:`)",
                    step.place
                ));
            }
        }
        found
    }

    /// In a job that continues an `out-N` (downloads one), an upload of its `out` that a step
    /// cancelled or failed before it finished could publish: the upload's condition must name
    /// an output of the step that writes the `out`, set only once it ran to its end. Otherwise
    /// the newest `out` of the run can be one that lacks what the job had downloaded into it.
    fn continuation_violations(&self) -> Vec<String> {
        let mut found = Vec::new();
        for (file, id, job) in self.jobs() {
            let steps = self.steps(file, &id, job);
            let artifact = |step: &Step, action: &str| {
                let uses = step.value.get("uses").and_then(Value::as_str);
                (uses.map(action_name) == Some(action))
                    .then(|| step.value.get("with").and_then(|w| w.get("name")).map(text))
                    .flatten()
                    .filter(|name| name.starts_with("out-"))
            };
            if !steps
                .iter()
                .any(|step| artifact(step, "actions/download-artifact").is_some())
            {
                continue;
            }
            for step in &steps {
                let Some(name) = artifact(step, "actions/upload-artifact") else {
                    continue;
                };
                let condition = step.value.get("if").map(text).unwrap_or_default();
                if !(condition.contains("steps.") && condition.contains(".outputs.")) {
                    found.push(format!(
                        "{}: uploads `{name}`, which a later run continues from, under `if: {condition}`: \
                         it must wait for an output of the step that finished the `out`",
                        step.place
                    ));
                }
            }
        }
        found
    }

    /// The artifacts a step reads (download-artifact `name`/`pattern`; deploy-pages'
    /// `artifact_name`, default `github-pages`) and whether it reads another run's.
    fn reads(step: &Value) -> (Vec<String>, bool) {
        let uses = step.get("uses").and_then(Value::as_str).unwrap_or_default();
        let with = step.get("with");
        let input = |key: &str| with.and_then(|w| w.get(key)).map(text);
        match action_name(uses) {
            "actions/download-artifact" => {
                let other_run = input("run-id").is_some() || input("github-token").is_some();
                let names = input("name")
                    .or_else(|| input("pattern"))
                    .unwrap_or_else(|| "*".into());
                (vec![names], other_run)
            }
            "actions/deploy-pages" => (
                vec![input("artifact_name").unwrap_or_else(|| "github-pages".into())],
                false,
            ),
            _ => (Vec::new(), false),
        }
    }

    /// The artifact a step uploads (upload-artifact `name`; upload-pages-artifact `name`,
    /// default `github-pages`).
    fn uploads(step: &Value) -> Option<String> {
        let uses = step.get("uses").and_then(Value::as_str).unwrap_or_default();
        let name = step.get("with").and_then(|w| w.get("name")).map(text);
        match action_name(uses) {
            "actions/upload-artifact" => name,
            "actions/upload-pages-artifact" => Some(name.unwrap_or_else(|| "github-pages".into())),
            _ => None,
        }
    }

    /// The jobs a job waits for, directly or not.
    fn needs(doc: &Value, id: &str) -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![id.to_owned()];
        while let Some(id) = todo.pop() {
            let needs = doc
                .get("jobs")
                .and_then(|jobs| jobs.get(id.as_str()))
                .and_then(|j| j.get("needs"));
            let direct = match needs {
                Some(Value::Sequence(list)) => list.iter().map(text).collect(),
                Some(one) => vec![text(one)],
                None => Vec::new(),
            };
            for need in direct {
                if seen.insert(need.clone()) {
                    todo.push(need);
                }
            }
        }
        seen
    }

    /// A job with a write permission runs only the allowed actions, none of the untrusted work,
    /// and reads only its allowed artifacts; the jobs it waits for ran no candidate code.
    fn write_job_violations(&self) -> Vec<String> {
        let mut found = Vec::new();
        for (file, id, job) in self.jobs() {
            let writes = job
                .get("permissions")
                .map(Self::grants)
                .unwrap_or_default()
                .iter()
                .any(|(_, access)| access == "write");
            let allowed = Self::write_job(file, &id);
            if !writes && allowed.is_none() {
                continue;
            }
            let allowed_artifacts = allowed.map_or(&[][..], |job| job.artifacts);
            let doc = &self.files[file];
            found.extend(self.untrusted_work(file, &id, job, None));
            for step in self.steps(file, &id, job) {
                let uses = step
                    .value
                    .get("uses")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if !WRITE_JOB_ACTIONS.contains(&action_name(uses)) {
                    found.push(format!(
                        "{}: a write job runs only {WRITE_JOB_ACTIONS:?} (no shell, no checkout, \
                         no build)",
                        step.place
                    ));
                }
                let (artifacts, other_run) = Self::reads(&step.value);
                if other_run {
                    found.push(format!("{}: reads an artifact of another run", step.place));
                }
                for artifact in artifacts {
                    if !allowed_artifacts.contains(&artifact.as_str()) {
                        found.push(format!(
                            "{}: reads artifact `{artifact}` (allowed: {allowed_artifacts:?})",
                            step.place
                        ));
                    }
                }
            }
            found.extend(self.feeder_violations(file, doc, &id));
        }
        found
    }

    /// Every job a write job waits for, directly or not, is what can reach it (artifacts, job
    /// outputs, results): none of them does untrusted work, and each artifact any of them reads
    /// is made in the same run by a job the reader waits for.
    fn feeder_violations(&self, file: &str, doc: &Value, id: &str) -> Vec<String> {
        let jobs = self.jobs();
        let job_named = |name: &str| {
            jobs.iter()
                .find(|(f, other, _)| *f == file && other == name)
                .map(|(_, _, job)| *job)
        };
        let upstream = Self::needs(doc, id);
        let mut found = Vec::new();
        for reader in std::iter::once(id.to_owned()).chain(upstream.iter().cloned()) {
            let Some(reader_job) = job_named(&reader) else {
                found.push(format!(
                    "{file}: job `{reader}` is needed but does not exist"
                ));
                continue;
            };
            if reader != id {
                found.extend(self.untrusted_work(file, &reader, reader_job, Some(ORACLE_BUILD)));
            }
            let earlier = Self::needs(doc, &reader);
            for step in self.steps(file, &reader, reader_job) {
                let (artifacts, other_run) = Self::reads(&step.value);
                if other_run {
                    found.push(format!(
                        "{}: reads an artifact of another run, in or for a write job",
                        step.place
                    ));
                }
                for artifact in artifacts {
                    let makers: Vec<&str> =
                        jobs.iter()
                            .filter(|(f, maker, maker_job)| {
                                *f == file
                                    && self.steps(f, maker, maker_job).iter().any(|s| {
                                        Self::uploads(&s.value).as_deref() == Some(&artifact)
                                    })
                            })
                            .map(|(_, maker, _)| maker.as_str())
                            .collect();
                    if makers.is_empty() {
                        found.push(format!(
                            "{}: artifact `{artifact}` is made by no job of {file}",
                            step.place
                        ));
                    }
                    for maker in makers.into_iter().filter(|maker| !earlier.contains(*maker)) {
                        found.push(format!(
                            "{file}: job `{reader}` reads `{artifact}` from job `{maker}`, which \
                             it does not wait for (`needs`)"
                        ));
                    }
                }
            }
        }
        found
    }

    /// What in a write job, or a job it waits for, could run candidate code:
    /// a checkout of anything but the triggering commit, a build other than the oracle's, or a
    /// command that builds or runs candidate code or fetches from elsewhere.
    /// `build` is the one cargo command allowed (none in a write job itself).
    fn untrusted_work(
        &self,
        file: &str,
        id: &str,
        job: &Value,
        build: Option<&str>,
    ) -> Vec<String> {
        let mut found = Vec::new();
        for step in self.steps(file, id, job) {
            let uses = step
                .value
                .get("uses")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let with = step.value.get("with");
            if action_name(uses) == "actions/checkout"
                && ["ref", "repository"]
                    .iter()
                    .any(|key| with.and_then(|w| w.get(*key)).is_some())
            {
                found.push(format!(
                    "{}: checks out another ref or repository, in or for a write job",
                    step.place
                ));
            }
            let script = step
                .value
                .get("run")
                .and_then(Value::as_str)
                .unwrap_or_default();
            for line in script.lines().map(str::trim) {
                if line.contains("cargo") && Some(line) != build {
                    found.push(format!(
                        "{}: `{line}`: a build in or for a write job (allowed: {build:?})",
                        step.place
                    ));
                }
                let git_only = line.contains("register landing") && line.contains(GIT_ONLY);
                if let Some(command) = UNTRUSTED_COMMANDS
                    .iter()
                    .find(|c| line.contains(**c) && !git_only)
                {
                    found.push(format!(
                        "{}: `{line}` runs `{command}`, in or for a write job",
                        step.place
                    ));
                }
            }
        }
        found
    }

    /// Every violation, one line each.
    fn violations(&self) -> Vec<String> {
        let mut found = self.trigger_violations();
        found.extend(self.permission_violations());
        found.extend(self.credential_violations());
        found.extend(self.action_violations());
        found.extend(self.script_violations());
        found.extend(self.write_job_violations());
        found.extend(self.continuation_violations());
        found
    }
}

/// The repository's own workflows.
fn repository() -> Workflows {
    Workflows::read(&repository_root())
}

/// Fails with every violation listed.
fn assert_none(kind: &str, found: &[String]) {
    assert!(
        found.is_empty(),
        "{kind}: {} violation(s):\n{}",
        found.len(),
        found.join("\n")
    );
}

#[test]
fn triggers_are_the_allowed_ones_and_never_pull_request_target() {
    assert_none("triggers", &repository().trigger_violations());
}

#[test]
fn tokens_are_read_only_except_in_the_named_write_jobs_on_main() {
    assert_none("permissions", &repository().permission_violations());
}

#[test]
fn no_credentials_persist_and_no_secret_reaches_a_step() {
    assert_none("credentials", &repository().credential_violations());
}

/// The token reaches one step of `verify`'s `prepare` only, and only while that job reads and
/// nothing more: the token in another step, or one more permission, is reported.
#[test]
fn the_token_reaches_only_the_listed_step_of_a_read_only_job() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let verify = fs::read_to_string(root.join(".github/workflows/verify.yml")).unwrap();
    let cases = [
        (
            "          PREVIOUS: ${{ steps.previous.outputs.from }}\n",
            "          PREVIOUS: ${{ steps.previous.outputs.from }}\n          GH_TOKEN: ${{ github.token }}\n",
            "verify.yml: uses `github.token`",
        ),
        (
            "      actions: read\n",
            "      actions: read\n      pull-requests: read\n",
            "verify.yml: job `prepare` hands the token to a step, so its permissions must be exactly",
        ),
    ];
    for (from, to, expected) in cases {
        assert!(verify.contains(from), "{from}");
        let changed = verify.replacen(from, to, 1);
        let found = Workflows::from_texts(&[("verify.yml", &changed)])
            .credential_violations()
            .join("\n");
        assert!(
            found.contains(expected),
            "missing `{expected}` in:\n{found}"
        );
    }
}

#[test]
fn actions_are_known_and_pinned_by_commit_sha() {
    assert_none("actions", &repository().action_violations());
}

#[test]
fn no_expression_is_expanded_into_a_shell_script() {
    assert_none("scripts", &repository().script_violations());
}

#[test]
fn a_continued_out_is_published_only_once_the_oracle_finished_it() {
    assert_none("continuations", &repository().continuation_violations());
}

#[test]
fn write_jobs_read_only_artifacts_their_run_made_without_candidate_code() {
    let workflows = repository();
    assert_none("write jobs", &workflows.write_job_violations());
    let present: Vec<&WriteJob> = WRITE_JOBS
        .iter()
        .filter(|job| {
            workflows
                .jobs()
                .iter()
                .any(|(file, id, _)| *file == job.workflow && *id == job.job)
        })
        .collect();
    assert_eq!(
        present.len(),
        WRITE_JOBS.len(),
        "every named write job exists"
    );
}

/// The pattern issue 12 found in the old `register.yml`, and its neighbours: each is reported.
#[test]
fn a_hostile_workflow_is_reported_on_every_count() {
    let hostile = r#"
on:
  pull_request_target:
  push:
    branches: ["**"]
permissions: write-all
jobs:
  append:
    runs-on: ubuntu-latest
    permissions:
      contents: write
    steps:
      - uses: actions/checkout@v4
      - run: cargo build --release -p oracle
      - run: gh run download "${{ github.event.workflow_run.id }}" --name out-1
        env:
          GH_TOKEN: ${{ github.token }}
"#;
    let pages = r#"
on:
  pull_request:
permissions: {}
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683
        with:
          ref: ${{ github.event.pull_request.head.sha }}
          persist-credentials: false
      - run: cargo build --release --locked
      - uses: actions/upload-pages-artifact@56afc609e74202658d3ffba0e8f6dda462b719fa
        with:
          path: site
  report:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02
        with:
          name: report
          path: out
  merge:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/download-artifact@d3f86a106a0bac45b974a628896c90dbdf5c8093
        with:
          name: out-1
          path: out
      - uses: actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02
        if: always()
        with:
          name: out-2
          path: out
  deploy:
    needs: build
    runs-on: ubuntu-latest
    permissions:
      pages: write
      id-token: write
    steps:
      - uses: actions/download-artifact@d3f86a106a0bac45b974a628896c90dbdf5c8093
        with:
          name: report
      - uses: actions/deploy-pages@d6db90164ac5ed86f2b6aed7e0febac5b3c0c03e
"#;
    let workflows = Workflows::from_texts(&[("evil.yml", hostile), ("register.yml", pages)]);
    let found = workflows.violations().join("\n");
    for expected in [
        "evil.yml: a workflow this test does not know",
        "evil.yml: triggered by pull_request_target",
        "evil.yml: `push` must be limited to `branches: [main]`",
        "register.yml: trigger `pull_request`",
        "evil.yml: top-level permission `*: write`",
        "evil.yml: job `append`: permission `contents: write`",
        "evil.yml: job `append`: step 1: checkout without `persist-credentials: false`",
        "evil.yml: uses `github.token`",
        "evil.yml: job `append`: step 1: action `actions/checkout@v4` is not pinned",
        "evil.yml: job `append`: step 3: `${{ }}` inside `run:`",
        "register.yml: job `deploy` may write, so its workflow may be triggered only by",
        "register.yml: job `deploy`: step 1: a write job runs only [\"actions/deploy-pages\"]",
        "register.yml: job `deploy`: step 1: reads artifact `report` (allowed: [\"github-pages\"])",
        "register.yml: job `deploy` reads `report` from job `report`, which it does not wait for",
        "register.yml: job `build`: step 1: checks out another ref or repository",
        "register.yml: job `build`: step 2: `cargo build --release --locked`: a build in or for",
        "evil.yml: job `append`: step 2: `cargo build --release -p oracle`: a build in or for",
        "register.yml: job `merge`: step 2: uploads `out-2`, which a later run continues from, under `if: always()`",
    ] {
        assert!(
            found.contains(expected),
            "missing `{expected}` in:\n{found}"
        );
    }
}
