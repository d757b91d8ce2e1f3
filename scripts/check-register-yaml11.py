#!/usr/bin/env python3
"""Check that a YAML 1.1 reader (PyYAML) reads every register entry exactly as
the oracle does.

For each register/T-NNNN.yaml of each REPO given, the entry is loaded with
PyYAML's safe loader (YAML 1.1 resolution: yes/no/on/off are booleans,
1_000 and 12:30 are numbers, unquoted dates are timestamps) and compared,
type by type, with `oracle register show ID --json` (the oracle's reading).
Any difference — a string PyYAML took for a boolean, number, date or null,
a float that reads differently — fails the check.

usage: scripts/check-register-yaml11.py [--oracle BIN] REPO...
needs: pip install pyyaml
"""

import argparse
import json
import pathlib
import re
import subprocess
import sys

import yaml


def differences(ours, theirs, where):
    """Yield every place where the two readings differ in type or value."""
    if type(ours) is not type(theirs):
        yield f"{where}: oracle reads {ours!r} ({type(ours).__name__}), PyYAML reads {theirs!r} ({type(theirs).__name__})"
    elif isinstance(ours, dict):
        if list(ours) != list(theirs):
            yield f"{where}: keys differ: oracle {list(ours)}, PyYAML {list(theirs)}"
        for key in ours:
            if key in theirs:
                yield from differences(ours[key], theirs[key], f"{where}.{key}")
    elif isinstance(ours, list):
        if len(ours) != len(theirs):
            yield f"{where}: oracle reads {len(ours)} items, PyYAML {len(theirs)}"
        for index, (a, b) in enumerate(zip(ours, theirs)):
            yield from differences(a, b, f"{where}[{index}]")
    elif ours != theirs:
        yield f"{where}: oracle reads {ours!r}, PyYAML reads {theirs!r}"


def check_repo(oracle, repo):
    """Compare every entry of one repository; return (entries checked, problems)."""
    problems = []
    entries = sorted(p for p in (repo / "register").glob("T-*.yaml") if re.fullmatch(r"T-\d{4,}\.yaml", p.name))
    for path in entries:
        entry_id = path.stem
        shown = subprocess.run(
            [oracle, "register", "show", entry_id, "--json", "--repo", str(repo)],
            capture_output=True, text=True, check=False,
        )
        if shown.returncode != 0:
            problems.append(f"{path}: oracle cannot read it: {shown.stderr.strip()}")
            continue
        ours = json.loads(shown.stdout)
        theirs = yaml.safe_load(path.read_bytes())
        problems.extend(f"{path}: {d}" for d in differences(ours, theirs, entry_id))
    return len(entries), problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--oracle", default="target/debug/oracle", help="oracle binary")
    parser.add_argument("repos", nargs="+", type=pathlib.Path, help="repositories with a register/")
    args = parser.parse_args()
    failed = False
    for repo in args.repos:
        count, problems = check_repo(args.oracle, repo)
        for problem in problems:
            print(problem)
        failed |= bool(problems)
        print(f"{repo}: {count} entries, {'read identically by PyYAML ' + yaml.__version__ if not problems else f'{len(problems)} differences'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
