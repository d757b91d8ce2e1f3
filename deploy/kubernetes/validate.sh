#!/usr/bin/env bash
# Checks the manifests of deploy/kubernetes/ against Kubernetes' own OpenAPI schemas, strictly
# (an unknown or misspelt field fails), with kubernetes-validate from PyPI, which ships the
# schemas of every Kubernetes release it knows (no download at run time). It is installed into
# a virtual environment of its own when missing. Usage: deploy/kubernetes/validate.sh [VERSION]
set -euo pipefail
cd "$(dirname "$0")"
version=${1:-1.33.0}
venv=${KUBERNETES_VALIDATE_VENV:-${TMPDIR:-/tmp}/kubernetes-validate-1.37.0}
if [ ! -x "$venv/bin/kubernetes-validate" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q kubernetes-validate==1.37.0
fi
"$venv/bin/kubernetes-validate" --strict --kubernetes-version "$version" ./*.yaml
