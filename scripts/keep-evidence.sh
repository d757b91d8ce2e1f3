#!/usr/bin/env bash
# Copies the evidence of one oracle run into the repository, next to the entry it produced.
#   scripts/keep-evidence.sh OUT T-NNNN
# OUT is the run's --out directory (after `oracle verify … --append`); the files an auditor needs
# beside register/T-NNNN.yaml go to evidence/T-NNNN/: the report and its SVG, binding.json,
# result.json, bench.json, gate.json, proof.json, each stage's stage.json and games.pgn (under its
# stage folder's name; the PGN gzip-compressed, `oracle register replay T-NNNN --games K` plays
# games of it again and checks it against the entry's pgn_sha256) and a Randfall's confirmation.
# Not copied: binaries (they rebuild bit-identically from the entry's commits) and the other inputs
# (constitution, books, proof spec: in git at the commits the entry names, bound by their sha256).
# Refuses to overwrite an existing evidence directory.
set -euo pipefail

usage="usage: keep-evidence.sh OUT T-NNNN"
out=${1:?$usage}
id=${2:?$usage}
if [[ ! $id =~ ^T-[0-9]{4}$ ]]; then
  echo "keep-evidence: '$id' is not an entry id (T-NNNN)" >&2
  exit 2
fi
if [[ ! -f register/$id.yaml ]]; then
  echo "keep-evidence: register/$id.yaml does not exist; run from the repository root after --append" >&2
  exit 2
fi
if [[ ! -f $out/binding.json || ! -f $out/result.json ]]; then
  echo "keep-evidence: $out is not a finished oracle --out (binding.json or result.json missing)" >&2
  exit 2
fi
dest=evidence/$id
if [[ -e $dest ]]; then
  echo "keep-evidence: $dest exists; evidence is written once" >&2
  exit 2
fi

mkdir -p evidence
staging=$(mktemp -d "evidence/.$id.XXXXXX")
trap 'rm -rf "$staging"' EXIT
for file in report.md report.svg binding.json result.json bench.json gate.json proof.json entry.yaml; do
  if [[ -f $out/$file ]]; then cp "$out/$file" "$staging/"; fi
done
for stage in "$out"/stage-*/; do
  name=$(basename "$stage")
  if [[ -f $stage/stage.json ]]; then cp "$stage/stage.json" "$staging/$name.json"; fi
  # -n: no name or time in the header, so the same games give the same bytes.
  if [[ -f $stage/games.pgn ]]; then gzip -9 -n -c "$stage/games.pgn" >"$staging/$name.pgn.gz"; fi
done
if [[ -f $out/inputs/confirmation.yaml ]]; then cp "$out/inputs/confirmation.yaml" "$staging/"; fi
chmod -R a+rX,go-w "$staging"
mv "$staging" "$dest"
trap - EXIT
echo "keep-evidence: $dest ($(find "$dest" -type f | wc -l) files)"
