#!/usr/bin/env python3
"""The `gh` of a workflow that scripts/run-workflow.py runs on this machine.

GitHub keeps the record of a workflow's earlier runs and their artifacts; here, an earlier run
is the `--work` directory of an earlier local run (its `run.json` and `artifacts/`), handed to
the new run with `--previous-run DIR`. This program answers, from those directories, the calls a
step makes about them, as GitHub's REST API and `gh` answer them:

    gh api [--method GET] repos/OWNER/REPO/actions/workflows/FILE/runs [-f NAME=VALUE]...
    gh api repos/OWNER/REPO/actions/runs/ID/artifacts
    gh run download ID [--repo OWNER/REPO] --name NAME --dir DIR

Any other call is refused (exit 2), naming it, so a step that needs more of GitHub fails here
rather than passing untested. As on GitHub, a call needs `GH_TOKEN`, and a token without
`actions: read` (the job's permissions, which run-workflow.py puts in the token it hands out)
is refused with GitHub's 403.
"""

import json
import os
import re
import shutil
import sys
from urllib.parse import parse_qsl

# The query parameters GitHub's list of a workflow's runs filters on, as this program does.
RUN_FILTERS = {"event", "status", "head_sha", "branch"}
# Parameters that only page the answer; every earlier local run fits on one page.
PAGING = {"per_page", "page"}
TOKEN_PREFIX = "run-workflow:"


class Refused(Exception):
    """A call this program does not answer, or one GitHub would refuse: (message, exit code)."""


def earlier_runs():
    """The earlier runs, each its `run.json` with the directory it came from."""
    runs = []
    for directory in filter(None, os.environ.get("RUN_WORKFLOW_PREVIOUS_RUNS", "").split(os.pathsep)):
        with open(os.path.join(directory, "run.json")) as handle:
            run = json.load(handle)
        run["directory"] = directory
        runs.append(run)
    return runs


def check_token():
    token = os.environ.get("GH_TOKEN", "")
    if not token:
        raise Refused("gh: To use GitHub CLI in a GitHub Actions workflow, set the GH_TOKEN "
                      "environment variable. Example:\n  env:\n    GH_TOKEN: ${{ github.token }}", 4)
    grants = dict(pair.split("=", 1) for pair in token.removeprefix(TOKEN_PREFIX).split(",") if "=" in pair)
    if grants.get("actions") not in ("read", "write"):
        raise Refused("gh: Resource not accessible by integration (HTTP 403): the job's token "
                      f"has no `actions: read` (it grants {grants or 'nothing'})", 1)


def check_repository(owner_repo):
    repository = os.environ.get("GITHUB_REPOSITORY", "")
    if owner_repo != repository:
        raise Refused(f"gh: Not Found (HTTP 404): repository {owner_repo} (this run's is {repository})", 1)


def workflow_runs(workflow_file, parameters):
    unknown = set(parameters) - RUN_FILTERS - PAGING
    if unknown:
        raise Refused(f"run-workflow's gh: parameter {sorted(unknown)[0]} of the runs list is not one it answers", 2)
    runs = []
    for run in earlier_runs():
        if os.path.basename(run["path"]) != workflow_file:
            continue
        if "event" in parameters and run["event"] != parameters["event"]:
            continue
        # GitHub's `status` filter takes a status or a conclusion.
        if "status" in parameters and parameters["status"] not in (run["status"], run["conclusion"]):
            continue
        if "head_sha" in parameters and run["head_sha"] != parameters["head_sha"]:
            continue
        if "branch" in parameters and run["head_branch"] != parameters["branch"]:
            continue
        runs.append({key: value for key, value in run.items() if key not in ("directory", "workspace")})
    runs.sort(key=lambda run: run["created_at"], reverse=True)
    # As GitHub's: one page at a time (30 runs unless `per_page` says otherwise, at most 100),
    # so that a workflow that reads only the first page misses the older runs here too.
    try:
        per_page = min(int(parameters.get("per_page", 30)), 100)
        page = int(parameters.get("page", 1))
    except ValueError:
        raise Refused("run-workflow's gh: per_page and page must be numbers", 2)
    if per_page < 1 or page < 1:
        raise Refused("run-workflow's gh: per_page and page must be at least 1", 2)
    return {"total_count": len(runs), "workflow_runs": runs[(page - 1) * per_page:page * per_page]}


def run_by_id(run_id):
    for run in earlier_runs():
        if str(run["id"]) == str(run_id):
            return run
    raise Refused(f"gh: Not Found (HTTP 404): run {run_id} is none of the earlier runs given", 1)


def artifacts(run_id):
    run = run_by_id(run_id)
    names = sorted(os.listdir(os.path.join(run["directory"], "artifacts")))
    listed = [{"id": index + 1, "name": name, "expired": False,
               "workflow_run": {"id": run["id"], "head_sha": run["head_sha"]}}
              for index, name in enumerate(names)]
    return {"total_count": len(listed), "artifacts": listed}


def api(arguments):
    method, endpoint, fields = "GET", None, {}
    rest = list(arguments)
    while rest:
        argument = rest.pop(0)
        if argument in ("--method", "-X"):
            method = rest.pop(0)
        elif argument in ("-f", "-F", "--raw-field", "--field"):
            name, value = rest.pop(0).split("=", 1)
            fields[name] = value
        elif endpoint is None and not argument.startswith("-"):
            endpoint = argument
        else:
            raise Refused(f"run-workflow's gh: `gh api` option {argument} is not one it answers", 2)
    if method != "GET" or endpoint is None:
        raise Refused(f"run-workflow's gh: `gh api --method {method} {endpoint}` is not a call it answers", 2)
    path, _, query = endpoint.partition("?")
    parameters = dict(parse_qsl(query))
    parameters.update(fields)
    check_token()
    runs = re.fullmatch(r"/?repos/([^/]+/[^/]+)/actions/workflows/([^/]+)/runs", path)
    listing = re.fullmatch(r"/?repos/([^/]+/[^/]+)/actions/runs/(\d+)/artifacts", path)
    if runs:
        check_repository(runs.group(1))
        return workflow_runs(runs.group(2), parameters)
    if listing:
        check_repository(listing.group(1))
        if set(parameters) - PAGING:
            raise Refused(f"run-workflow's gh: parameters {sorted(set(parameters) - PAGING)} of the artifacts list", 2)
        return artifacts(listing.group(2))
    raise Refused(f"run-workflow's gh: `gh api {endpoint}` is not a call it answers", 2)


def download(arguments):
    run_id, name, directory = None, None, "."
    rest = list(arguments)
    while rest:
        argument = rest.pop(0)
        if argument in ("--name", "-n"):
            name = rest.pop(0)
        elif argument in ("--dir", "-D"):
            directory = rest.pop(0)
        elif argument in ("--repo", "-R"):
            check_repository(rest.pop(0))
        elif run_id is None and not argument.startswith("-"):
            run_id = argument
        else:
            raise Refused(f"run-workflow's gh: `gh run download` option {argument} is not one it answers", 2)
    if run_id is None or name is None:
        raise Refused("run-workflow's gh: `gh run download` needs a run id and --name here", 2)
    check_token()
    source = os.path.join(run_by_id(run_id)["directory"], "artifacts", name)
    if not os.path.isdir(source):
        raise Refused(f"gh: no artifact matches {name} in run {run_id}", 1)
    shutil.copytree(source, directory, dirs_exist_ok=True)


def main(arguments):
    try:
        if arguments[:1] == ["api"]:
            print(json.dumps(api(arguments[1:]), indent=2))
        elif arguments[:2] == ["run", "download"]:
            download(arguments[2:])
        else:
            raise Refused(f"run-workflow's gh: `gh {' '.join(arguments)}` is not a call it answers", 2)
    except Refused as refusal:
        message, code = refusal.args
        print(message, file=sys.stderr)
        return code
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
