#!/usr/bin/env bash
# Every documentation reference in the repository resolves inside it:
#  - each relative Markdown link [text](path) in a .md file names a file or directory
#    (relative to the linking file; anchors and web addresses are not checked);
#  - each mention of docs/<name>.md in any text file (code comments, --help texts, tests,
#    workflows, Markdown) names a file under docs/;
#  - the design notes the project grew from are not named unless the repository has them, and
#    the source documents ("seed 000" …) are not named at all.
# Usage: scripts/check-doc-references.sh [REPO_DIR]   (default: this repository)
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"

self=scripts/check-doc-references.sh
failures=0
fail() {
  echo "error: $1" >&2
  failures=$((failures + 1))
}

# Tracked and new (not ignored) files, so the check also works before a commit.
mapfile -t files < <(git ls-files --cached --others --exclude-standard | sort -u)
existing() { [ -e "$1" ]; }

for file in "${files[@]}"; do
  [ -f "$file" ] || continue
  case "$file" in
    *.md)
      dir=$(dirname "$file")
      # Inline links; the target ends at the first space or closing parenthesis.
      while IFS=: read -r line target; do
        target=${target%%#*}
        case "$target" in
          '' | http://* | https://* | mailto:*) continue ;;
        esac
        existing "$dir/$target" || fail "$file:$line: link to '$target' does not resolve"
      done < <(grep -noE '\]\([^) ]+' "$file" | sed -E 's/^([0-9]+):\]\(/\1:/' || true)
      ;;
  esac
  # docs/<name>.md mentions anywhere (binary files are skipped by -I).
  while IFS=: read -r line target; do
    existing "$target" || fail "$file:$line: '$target' does not exist"
  done < <(grep -InoE '(^|[^A-Za-z0-9_./-])docs/[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md' "$file" |
    sed -E 's/^([0-9]+):[^d]*/\1:/' || true)
done

# The design notes: a name may appear only where the repository holds a file of that name.
for name in ARCHITECTURE.md STATISTICS.md SPSA.md STYLE.md; do
  if ! printf '%s\n' "${files[@]}" | grep -q "\(^\|/\)$name$"; then
    while IFS= read -r hit; do
      fail "$hit: names $name, which is not in the repository"
    done < <(printf '%s\0' "${files[@]}" | grep -zv "^$self$" |
      xargs -0 grep -IHn -- "$name" 2>/dev/null || true)
  fi
done

# The source documents the project grew from are not in it: "seed 000" and its like say nothing
# to a reader of the repository.
while IFS= read -r hit; do
  fail "$hit: names a seed document, which is not in the repository"
done < <(printf '%s\0' "${files[@]}" | grep -zv "^$self$" |
  xargs -0 grep -IHniE -- '\bseed 00[0-9]\b' 2>/dev/null || true)

if [ "$failures" -gt 0 ]; then
  echo "$failures documentation reference(s) do not resolve" >&2
  exit 1
fi
echo "documentation references: all resolve (${#files[@]} files checked)"
