#!/usr/bin/env bash
# Creates .venv at the repository root and installs the project into it: every
# dependency exactly as the lock file pins it, each checked against its hashes
# (requirements/runtime.lock; requirements/test.lock when called as
# `bootstrap.sh test`), then the project itself (editable, no dependency resolved
# anew).  Re-running is cheap: the install is skipped while pyproject.toml and the
# lock file are unchanged.  The lock files are made by `scripts/lock.sh`.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
extras="${1:-}"
lock="requirements/${extras:-runtime}.lock"
[ -f "$lock" ] || { echo "bootstrap.sh: no lock file $lock" >&2; exit 2; }
python="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
stamp=".venv/.bingo-installed"
want="$(cat pyproject.toml "$lock" | sha256sum | cut -c1-16)-${extras}"
if [ ! -f "$stamp" ] || ! grep -qx -- "$want" "$stamp"; then
  .venv/bin/python -m pip install --quiet --require-hashes --no-deps -r "$lock"
  .venv/bin/python -m pip install --quiet --no-deps --no-build-isolation -e .
  echo "$want" > "$stamp"
fi
