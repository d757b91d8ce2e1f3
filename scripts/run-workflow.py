#!/usr/bin/env python3
"""Runs a GitHub Actions workflow of this repository on this machine, as far as it can.

It reads the workflow file (and the reusable workflows and composite actions it uses) and runs
the same commands in the same order: jobs in the order their `needs` allow, each in a fresh clone
of the repository at the same path (a fresh runner), matrix entries one after the other, `if:`
conditions evaluated, step and job outputs passed on, artifacts kept in a directory instead of
GitHub's storage, earlier runs of the workflow given as their directories (`--previous-run`).
What it cannot run it refuses, naming the file, job and step, before anything runs: an action
other than checkout, upload-artifact and download-artifact and this repository's own, a context
or function it does not know, a key it does not understand. So the workflow and this script
cannot drift apart silently (oracle/tests/run_workflow.rs runs `--check` on the pull-request
workflow, and runs it).

    scripts/run-workflow.py --check [WORKFLOW]
    scripts/run-workflow.py WORKFLOW --repo REPO --head SHA --base SHA --work DIR
                            [--env NAME=VALUE]... [--oracle BINARY] [--previous-run DIR]...
                            [--cancel-after JOB] [--skip-action ACTION]...

`--head` and `--base` stand for the pull request's head (`github.event.workflow_run.head_sha`)
and main (`github.sha`). `--env` sets a variable in every job, over the workflows' own `env:`
(e.g. PROFILE, a small profile of a test repository's constitution instead of `official`, or
XDG_CACHE_HOME, to share the oracle's build cache between the jobs). `--oracle` takes the
given binary as what a step `cargo build --release --locked -p oracle` would have built, and says
so; without it the step runs. As root, `sudo` is run as the command it prefixes (a shim on PATH).
HOME is DIR/home, so `git config --global` in a step changes nothing outside DIR.

Each run records itself in DIR/run.json as GitHub lists a run (id, title from `run-name`,
event, head commit, status, conclusion). `--previous-run` names the DIR of an earlier run, whose
record and artifacts a step then reaches with `gh` (a stand-in on PATH, scripts/run-workflow-gh.py,
that answers the few calls the workflow makes and refuses any other); the new run takes the next
id and that run's workspace path, as GitHub's runners use one path for every run of a repository
(records such as the binding name files by absolute path). `--cancel-after JOB` cancels the run
once JOB has finished, as a newer push or a maintainer does on GitHub: its later jobs do not run.
`--skip-action` skips the steps of one of this repository's actions, saying so (e.g.
./.github/actions/sandbox, which installs bubblewrap, on a machine that has it).
"""

import argparse
import datetime
import fnmatch
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_WORKFLOW = ".github/workflows/verify.yml"
GH_STAND_IN = os.path.join(ROOT, "scripts", "run-workflow-gh.py")
# The repository a local run stands for (GITHUB_REPOSITORY, the API's owner/name).
REPOSITORY = "local/local"

CHECKOUT = "actions/checkout"
UPLOAD = "actions/upload-artifact"
DOWNLOAD = "actions/download-artifact"
# The inputs each action is run with here; any other input is a step this script cannot run.
ACTION_INPUTS = {
    CHECKOUT: {"fetch-depth", "persist-credentials"},
    UPLOAD: {"name", "path", "retention-days"},
    DOWNLOAD: {"name", "path", "pattern", "merge-multiple"},
}
JOB_KEYS = {"name", "if", "needs", "runs-on", "outputs", "steps", "strategy", "uses", "with",
            "permissions", "env", "timeout-minutes"}
STEP_KEYS = {"id", "name", "if", "uses", "with", "run", "env", "shell"}
RUNNERS = {"ubuntu-latest"}
# The contexts a run provides (`base_contexts`, and per job and step).
GITHUB_CONTEXT = {"github.sha", "github.token", "github.event.workflow_run.head_sha",
                  "github.event.workflow_run.event", "github.event.workflow_run.conclusion",
                  "github.event.workflow_run.head_branch",
                  "github.event.workflow_run.head_repository.full_name"}
CONTEXT_ROOTS = {"github", "inputs", "needs", "matrix", "steps", "jobs"}
FUNCTIONS = {"always", "success", "failure", "cancelled"}
ORACLE_BUILD = "cargo build --release --locked -p oracle"
EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}", re.S)
CONTEXT_REF = re.compile(r"(?<![\w.'])([a-z_][\w-]*(?:\.[\w-]+)+)")


class CannotRun(Exception):
    """A part of the workflow this script cannot run as GitHub would."""


def load(path):
    with open(os.path.join(ROOT, path)) as handle:
        # PyYAML reads `on:` as the boolean True, as YAML 1.1 says; the key is not used here.
        return yaml.safe_load(handle)


def action_name(uses):
    return uses.split("@", 1)[0]


def evaluate(expression, contexts, where):
    """A GitHub expression: context references, string literals, ==, !=, &&, ||, !, and the
    status functions."""
    text = expression.strip()
    strings = []

    def keep_string(match):
        strings.append(match.group(1))
        return f"__s{len(strings) - 1}__"

    text = re.sub(r"'([^']*)'", keep_string, text)

    def value_of(match):
        reference = match.group(1)
        if reference.startswith("__s"):
            return reference
        value = contexts
        parts = reference.split(".")
        for index, part in enumerate(parts):
            if index > 0 and parts[index - 1] == "outputs" and isinstance(value, dict):
                # As on GitHub: an output a job or step did not set (or a skipped job's) is empty.
                value = value.get(part)
                continue
            if not isinstance(value, dict) or part not in value:
                raise CannotRun(f"{where}: `{reference}` is not a context this script knows")
            value = value[part]
        strings.append("" if value is None else str(value))
        return f"__s{len(strings) - 1}__"

    for function, result in (("always()", "True"), ("success()", "__success__"),
                             ("failure()", "(not __success__)"), ("cancelled()", "False")):
        text = text.replace(function, f" {result} ")
    text = CONTEXT_REF.sub(value_of, text)
    text = text.replace("&&", " and ").replace("||", " or ")
    text = re.sub(r"!(?!=)", " not ", text)
    if re.search(r"[A-Za-z_][\w]*\s*\(", text):
        raise CannotRun(f"{where}: `{expression.strip()}` calls a function this script does not know")
    names = {f"__s{i}__": s for i, s in enumerate(strings)}
    names["__success__"] = contexts.get("__success__", True)
    try:
        return eval(text, {"__builtins__": {}}, names)  # noqa: S307 (names only, no builtins)
    except Exception as error:  # a syntax this script does not know
        raise CannotRun(f"{where}: cannot evaluate `{expression.strip()}`: {error}") from error


def substitute(value, contexts, where):
    """`${{ … }}` in a string (a whole-string expression keeps its type)."""
    if not isinstance(value, str):
        return value
    whole = EXPRESSION.fullmatch(value.strip())
    if whole:
        return evaluate(whole.group(1), contexts, where)
    return EXPRESSION.sub(lambda m: str(evaluate(m.group(1), contexts, where)), value)


def condition(step_or_job, contexts, where, default=True):
    expression = step_or_job.get("if")
    if expression is None:
        return default and contexts.get("__success__", True)
    expression = EXPRESSION.sub(lambda m: m.group(1), str(expression))
    uses_status = re.search(r"\b(always|success|failure|cancelled)\(\)", expression)
    result = bool(evaluate(expression, contexts, where))
    return result if uses_status else result and contexts.get("__success__", True)


class Runner:
    def __init__(self, args):
        self.args = args
        self.work = os.path.abspath(args.work) if args.work else None
        self.overrides = dict(pair.split("=", 1) for pair in args.env or [])
        self.artifacts = os.path.join(self.work, "artifacts") if self.work else None
        self.previous_runs = [os.path.abspath(d) for d in args.previous_run or []]
        records = []
        for directory in self.previous_runs:
            try:
                with open(os.path.join(directory, "run.json")) as handle:
                    records.append(json.load(handle))
            except (OSError, ValueError) as error:
                raise CannotRun(f"--previous-run {directory}: not the directory of a run of this script ({error})") from error
        self.run_id = 1 + max((record["id"] for record in records), default=0)
        self.workspace = records[-1]["workspace"] if records else \
            (os.path.join(self.work, "workspace") if self.work else None)
        self.created_at = None
        self.cancelled = False

    # ----- checking -------------------------------------------------------------------------

    def check_workflow(self, path, seen=None):
        """Every job and step of `path` (and what it uses), or CannotRun naming the first that
        cannot be run here."""
        seen = seen if seen is not None else set()
        if path in seen:
            return
        seen.add(path)
        workflow = load(path)
        self.check_expressions(workflow.get("env") or {}, f"{path}: env")
        self.check_expressions(workflow.get("run-name") or "", f"{path}: run-name")
        for job_id, job in workflow.get("jobs", {}).items():
            where = f"{path}: job {job_id}"
            self.check_expressions(job, where)
            unknown = set(job) - JOB_KEYS
            if unknown:
                raise CannotRun(f"{where}: key {sorted(unknown)[0]} is not one this script runs")
            if "uses" in job:
                called = job["uses"]
                if not called.startswith("./.github/workflows/"):
                    raise CannotRun(f"{where}: reusable workflow {called} is not this repository's")
                self.check_workflow(called[2:], seen)
                continue
            if job.get("runs-on") not in RUNNERS:
                raise CannotRun(f"{where}: runs-on {job.get('runs-on')} is not {sorted(RUNNERS)}")
            matrix = (job.get("strategy") or {}).get("matrix", {})
            if any(not isinstance(v, list) for v in matrix.values()):
                raise CannotRun(f"{where}: only list-valued matrix axes are run")
            for index, step in enumerate(job.get("steps", [])):
                self.check_step(step, f"{where}, step {index + 1} ({step.get('name') or step.get('uses') or 'run'})")

    def check_options(self, workflow):
        """The jobs and actions the options name exist, so that a misspelt one skips nothing."""
        for action in self.args.skip_action or []:
            if not (action.startswith("./.github/actions/")
                    and os.path.isfile(os.path.join(ROOT, action[2:], "action.yml"))):
                raise CannotRun(f"--skip-action {action}: not one of this repository's actions")
        cancel_after = self.args.cancel_after
        if cancel_after and cancel_after not in load(workflow).get("jobs", {}):
            raise CannotRun(f"--cancel-after {cancel_after}: {workflow} has no such job")

    @staticmethod
    def check_expressions(node, where):
        """Every `${{ … }}` and `if:` below `node` names only contexts this script provides."""
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "if" and isinstance(value, str):
                    Runner.check_references(value, where)
                Runner.check_expressions(value, where)
        elif isinstance(node, list):
            for value in node:
                Runner.check_expressions(value, where)
        elif isinstance(node, str):
            for expression in EXPRESSION.findall(node):
                Runner.check_references(expression, where)

    @staticmethod
    def check_references(expression, where):
        without_strings = re.sub(r"'[^']*'", "''", EXPRESSION.sub(lambda m: m.group(1), expression))
        for reference in CONTEXT_REF.findall(without_strings):
            root = reference.split(".")[0]
            if reference.startswith("github.") and reference not in GITHUB_CONTEXT:
                raise CannotRun(f"{where}: `{reference}` is not a context this script knows")
            if root not in CONTEXT_ROOTS:
                raise CannotRun(f"{where}: `{reference}` is not a context this script knows")
        for function in re.findall(r"([A-Za-z_]\w*)\s*\(", without_strings):
            if function not in FUNCTIONS:
                raise CannotRun(f"{where}: function {function}() is not one this script knows")

    def check_step(self, step, where):
        unknown = set(step) - STEP_KEYS
        if unknown:
            raise CannotRun(f"{where}: key {sorted(unknown)[0]} is not one this script runs")
        if "uses" not in step:
            if step.get("shell", "bash") != "bash":
                raise CannotRun(f"{where}: shell {step['shell']} is not bash")
            return
        name = action_name(step["uses"])
        if name.startswith("./.github/actions/"):
            action = load(os.path.join(name[2:], "action.yml"))
            runs = action.get("runs", {})
            if runs.get("using") != "composite":
                raise CannotRun(f"{where}: {name} is not a composite action")
            self.check_expressions(runs.get("steps", []), f"{where} > {name}")
            for index, inner in enumerate(runs.get("steps", [])):
                self.check_step(inner, f"{where} > {name} step {index + 1}")
            return
        if name not in ACTION_INPUTS:
            raise CannotRun(f"{where}: action {name} is not one this script can run")
        extra = set(step.get("with") or {}) - ACTION_INPUTS[name]
        if extra:
            raise CannotRun(f"{where}: input {sorted(extra)[0]} of {name} is not one this script runs")

    # ----- running --------------------------------------------------------------------------

    def base_contexts(self, inputs=None):
        return {
            "github": {
                "sha": self.args.base,
                "token": "",
                "event": {"workflow_run": {
                    "head_sha": self.args.head, "event": "pull_request", "conclusion": "success",
                    "head_branch": "local", "head_repository": {"full_name": REPOSITORY},
                }},
            },
            "inputs": inputs or {},
        }

    @staticmethod
    def token(workflow, job):
        """The job's `github.token`: a stand-in that carries its permissions (the job's, else the
        workflow's), which the `gh` stand-in checks as GitHub checks the real token's."""
        permissions = job.get("permissions", workflow.get("permissions")) or {}
        if isinstance(permissions, str):
            permissions = {"*": permissions.replace("-all", "")}
        return "run-workflow:" + ",".join(f"{scope}={access}" for scope, access in sorted(permissions.items()))

    def title(self, path):
        """The run's title, as GitHub shows and lists it: `run-name`, else the workflow's name."""
        workflow = load(path)
        if "run-name" in workflow:
            return str(substitute(workflow["run-name"], self.base_contexts(), f"{path}: run-name"))
        return workflow.get("name", path)

    def record(self, path, status, conclusion):
        """DIR/run.json: this run as GitHub's list of a workflow's runs shows it."""
        record = {
            "id": self.run_id, "name": load(path).get("name", path), "path": path,
            "display_title": self.title(path), "event": "workflow_run", "head_sha": self.args.base,
            "head_branch": "main", "status": status, "conclusion": conclusion,
            "created_at": self.created_at, "workspace": self.workspace,
        }
        with open(os.path.join(self.work, "run.json"), "w") as handle:
            json.dump(record, handle, indent=2)

    def run_workflow(self, path, inputs=None):
        """Runs `path`'s jobs in order; returns {job id: {"result", "outputs"}}."""
        workflow = load(path)
        env = {k: str(v) for k, v in (workflow.get("env") or {}).items()}
        jobs = workflow["jobs"]
        done = {}
        pending = list(jobs)
        while pending:
            ready = [j for j in pending if all(n in done for n in needs_of(jobs[j]))]
            if not ready:
                raise CannotRun(f"{path}: jobs {pending} wait on each other")
            job_id = ready[0]
            pending.remove(job_id)
            job = jobs[job_id]
            if self.cancelled:
                print(f"::: {job_id}: cancelled (--cancel-after {self.args.cancel_after})", flush=True)
                done[job_id] = {"result": "cancelled", "outputs": {}}
                continue
            contexts = self.base_contexts(inputs)
            contexts["github"]["token"] = self.token(workflow, job)
            contexts["needs"] = {n: done[n] for n in needs_of(job)}
            contexts["__success__"] = all(done[n]["result"] == "success" for n in needs_of(job))
            where = f"{path}: job {job_id}"
            if not condition(job, contexts, where):
                print(f"::: {job_id}: skipped (if: {job.get('if', 'a needed job failed')})", flush=True)
                done[job_id] = {"result": "skipped", "outputs": {}}
                continue
            job_env = {k: substitute(str(v), contexts, where) for k, v in env.items()}
            job_env.update(self.overrides)
            if "uses" in job:
                with_inputs = {k: substitute(v, contexts, where) for k, v in (job.get("with") or {}).items()}
                print(f"::: {job_id}: {job['uses']} with {with_inputs}", flush=True)
                called = self.run_workflow(job["uses"][2:], with_inputs)
                called_doc = load(job["uses"][2:])
                # PyYAML reads the key `on` as True (YAML 1.1).
                triggers = called_doc.get("on", called_doc.get(True)) or {}
                outputs_spec = (triggers.get("workflow_call") or {}).get("outputs", {})
                call_contexts = dict(contexts, jobs=called)
                outputs = {k: substitute(v["value"], call_contexts, where) for k, v in outputs_spec.items()}
                result = "success" if all(r["result"] in ("success", "skipped") for r in called.values()) else "failure"
                done[job_id] = {"result": result, "outputs": outputs}
                self.cancelled = self.cancelled or (path == self.args.workflow and job_id == self.args.cancel_after)
                continue
            done[job_id] = self.run_job(path, job_id, job, job_env, contexts)
            if done[job_id]["result"] != "success":
                print(f"::: {job_id}: {done[job_id]['result']}", flush=True)
            self.cancelled = self.cancelled or (path == self.args.workflow and job_id == self.args.cancel_after)
        return done

    def run_job(self, path, job_id, job, env, contexts):
        matrix = (job.get("strategy") or {}).get("matrix", {})
        combinations = [{}]
        for axis, values in matrix.items():
            combinations = [dict(c, **{axis: v}) for c in combinations for v in values]
        outputs = {}
        for entry in combinations:
            label = job_id + "".join(f" {k}={v}" for k, v in entry.items())
            job_contexts = dict(contexts, matrix=entry, steps={}, __success__=True)
            name = substitute(job.get("name", job_id), job_contexts, f"{path}: job {job_id}")
            print(f"::: job {label}: {name}", flush=True)
            # One workspace path for every job, as on GitHub's runners: records that name files by
            # absolute path (the binding's engines) mean the same place in every job.
            directory = self.workspace
            shutil.rmtree(directory, ignore_errors=True)
            os.makedirs(directory)
            ok = self.run_steps(job.get("steps", []), directory, env, job_contexts, f"{path}: job {label}")
            outputs = {k: substitute(v, job_contexts, f"{path}: job {label}") for k, v in (job.get("outputs") or {}).items()}
            if not ok:
                return {"result": "failure", "outputs": outputs}
        return {"result": "success", "outputs": outputs}

    def run_steps(self, steps, directory, env, contexts, where):
        for index, step in enumerate(steps):
            label = f"{where}, step {index + 1} ({step.get('name') or step.get('uses') or 'run'})"
            if not condition(step, contexts, label):
                if step.get("id"):
                    # As on GitHub: a skipped step's outputs are empty.
                    contexts["steps"][step["id"]] = {"outputs": {}, "conclusion": "skipped"}
                continue
            step_env = dict(env)
            step_env.update({k: str(substitute(v, contexts, label)) for k, v in (step.get("env") or {}).items()})
            ok = self.run_step(step, directory, step_env, contexts, label)
            if not ok:
                contexts["__success__"] = False
        return contexts["__success__"]

    def run_step(self, step, directory, env, contexts, label):
        print(f"  - {label.split(', ', 1)[-1]}", flush=True)
        if "run" in step:
            return self.run_script(step, directory, env, contexts)
        name = action_name(step["uses"])
        inputs = {k: substitute(v, contexts, label) for k, v in (step.get("with") or {}).items()}
        if name in (self.args.skip_action or []):
            print(f"    (skipped: --skip-action {name})", flush=True)
            return True
        if name.startswith("./.github/actions/"):
            action = load(os.path.join(name[2:], "action.yml"))
            action_contexts = dict(contexts, inputs={
                k: inputs.get(k, v.get("default", "")) for k, v in (action.get("inputs") or {}).items()})
            return self.run_steps(action["runs"]["steps"], directory, env, action_contexts, label)
        if name == CHECKOUT:
            subprocess.run(["git", "clone", "--quiet", "--no-local", "--no-checkout", self.args.repo, "."],
                           cwd=directory, check=True)
            subprocess.run(["git", "checkout", "--quiet", self.args.base], cwd=directory, check=True)
            return True
        if name == UPLOAD:
            return self.upload(inputs, directory)
        if name == DOWNLOAD:
            return self.download(inputs, directory)
        raise CannotRun(f"{label}: action {name}")

    def run_script(self, step, directory, env, contexts):
        script = step["run"]
        if self.args.oracle and script.strip() == ORACLE_BUILD:
            target = os.path.join(directory, "target", "release")
            os.makedirs(target, exist_ok=True)
            shutil.copy2(self.args.oracle, os.path.join(target, "oracle"))
            print(f"    ({ORACLE_BUILD}: taken as built, --oracle {self.args.oracle})", flush=True)
            return True
        files = {name: os.path.join(self.work, "tmp", f"{name}-{os.getpid()}") for name in
                 ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_STEP_SUMMARY")}
        os.makedirs(os.path.join(self.work, "tmp"), exist_ok=True)
        for file in files.values():
            open(file, "w").close()
        process_env = dict(os.environ)
        process_env.update(env)
        process_env.update(files)
        process_env.update({
            "CI": "true", "GITHUB_ACTIONS": "true", "HOME": os.path.join(self.work, "home"),
            "PATH": os.path.join(self.work, "bin") + os.pathsep + os.environ.get("PATH", ""),
            "CARGO_HOME": os.environ.get("CARGO_HOME", os.path.expanduser("~/.cargo")),
            "RUSTUP_HOME": os.environ.get("RUSTUP_HOME", os.path.expanduser("~/.rustup")),
            "DEBIAN_FRONTEND": "noninteractive",
            "GITHUB_REPOSITORY": REPOSITORY, "GITHUB_RUN_ID": str(self.run_id),
            "RUN_WORKFLOW_PREVIOUS_RUNS": os.pathsep.join(self.previous_runs),
        })
        code = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
                              cwd=directory, env=process_env).returncode
        outputs = {}
        with open(files["GITHUB_OUTPUT"]) as handle:
            for line in handle:
                if "=" in line:
                    key, value = line.rstrip("\n").split("=", 1)
                    outputs[key] = value
        if step.get("id"):
            contexts["steps"][step["id"]] = {"outputs": outputs, "conclusion": "success" if code == 0 else "failure"}
        if code != 0:
            print(f"    exit {code}", flush=True)
        return code == 0

    def upload(self, inputs, directory):
        pattern = inputs["path"]
        destination = os.path.join(self.artifacts, inputs["name"])
        if os.path.exists(destination):
            raise CannotRun(f"artifact {inputs['name']} uploaded twice in one run")
        # As upload-artifact: the hierarchy is kept below the last directory before a wildcard;
        # a plain directory's content is the artifact, a plain file goes in by its name.
        if any(c in pattern for c in "*?["):
            root = os.path.join(directory, pattern.split("*")[0].rsplit("/", 1)[0])
            matches = [m for m in glob.glob(os.path.join(directory, pattern)) if os.path.isfile(m)]
            for match in matches:
                target = os.path.join(destination, os.path.relpath(match, root))
                os.makedirs(os.path.dirname(target), exist_ok=True)
                shutil.copy2(match, target)
        else:
            source = os.path.join(directory, pattern)
            if os.path.isdir(source):
                shutil.copytree(source, destination)
            elif os.path.isfile(source):
                os.makedirs(destination)
                shutil.copy2(source, destination)
            else:
                print(f"    nothing at {pattern}: no artifact", flush=True)
                return False
        print(f"    artifact {inputs['name']} <- {pattern}", flush=True)
        return True

    def download(self, inputs, directory):
        target = os.path.join(directory, inputs.get("path", "."))
        if "name" in inputs:
            names = [inputs["name"]]
        else:
            names = sorted(n for n in os.listdir(self.artifacts) if fnmatch.fnmatch(n, inputs["pattern"]))
        for name in names:
            source = os.path.join(self.artifacts, name)
            if not os.path.isdir(source):
                print(f"    no artifact {name}", flush=True)
                return False
            into = target if "name" in inputs or str(inputs.get("merge-multiple")).lower() == "true" \
                else os.path.join(target, name)
            shutil.copytree(source, into, dirs_exist_ok=True)
            print(f"    artifact {name} -> {os.path.relpath(into, directory)}", flush=True)
        return True


def needs_of(job):
    needs = job.get("needs", [])
    return [needs] if isinstance(needs, str) else list(needs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workflow", nargs="?", default=DEFAULT_WORKFLOW)
    parser.add_argument("--check", action="store_true", help="only check that every step can run here")
    parser.add_argument("--repo")
    parser.add_argument("--head")
    parser.add_argument("--base")
    parser.add_argument("--work")
    parser.add_argument("--env", action="append", metavar="NAME=VALUE",
                        help="a variable of every job, over the workflows' env")
    parser.add_argument("--oracle", help="the oracle binary the build step would have built")
    parser.add_argument("--previous-run", action="append", metavar="DIR",
                        help="the --work directory of an earlier run, which `gh` then lists (oldest first)")
    parser.add_argument("--cancel-after", metavar="JOB", help="cancel the run once this job has finished")
    parser.add_argument("--skip-action", action="append", metavar="ACTION",
                        help="skip the steps of this repository's action (./.github/actions/NAME)")
    args = parser.parse_args()
    try:
        runner = Runner(args)
        runner.check_workflow(args.workflow)
        runner.check_options(args.workflow)
        if args.check:
            print(f"{args.workflow}: every job and step can be run by {os.path.relpath(__file__, ROOT)}")
            return 0
        missing = [f"--{n}" for n in ("repo", "head", "base", "work") if not getattr(args, n)]
        if missing:
            parser.error(f"{', '.join(missing)} required to run a workflow")
        args.repo = os.path.abspath(args.repo)
        if os.path.exists(runner.work):
            parser.error(f"--work {runner.work} exists; give a new directory")
        os.makedirs(os.path.join(runner.work, "home"))
        os.makedirs(runner.artifacts)
        os.makedirs(os.path.join(runner.work, "bin"))
        os.symlink(GH_STAND_IN, os.path.join(runner.work, "bin", "gh"))
        if os.geteuid() == 0:
            shim = os.path.join(runner.work, "bin", "sudo")
            with open(shim, "w") as handle:
                handle.write('#!/bin/sh\n# root already: run the command sudo prefixes\n'
                             'while [ $# -gt 0 ]; do case $1 in -*) shift ;; *) break ;; esac; done\nexec "$@"\n')
            os.chmod(shim, 0o755)
        runner.created_at = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        runner.record(args.workflow, "in_progress", None)
        print(f"::: run {runner.run_id}: {runner.title(args.workflow)}", flush=True)
        results = runner.run_workflow(args.workflow)
    except CannotRun as error:
        print(f"cannot run: {error}", file=sys.stderr)
        return 2
    failed = [j for j, r in results.items() if r["result"] == "failure"]
    conclusion = "failure" if failed else "cancelled" if runner.cancelled else "success"
    runner.record(args.workflow, "completed", conclusion)
    print(f"::: {args.workflow}: " + ", ".join(f"{j} {r['result']}" for j, r in results.items()))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
