#!/usr/bin/env bash
# Creates .venv at the repository root and installs the project into it (editable),
# with the test extras when called as `bootstrap.sh test`.  Re-running is cheap: the
# install is skipped while setup.cfg and the requested extras are unchanged.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
extras="${1:-}"
python="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
stamp=".venv/.bingo-installed"
want="$(cat setup.cfg pyproject.toml | sha256sum | cut -c1-16)-${extras}"
if [ ! -f "$stamp" ] || ! grep -qx -- "$want" "$stamp"; then
  .venv/bin/python -m pip install --quiet --upgrade pip setuptools wheel
  if [ -n "$extras" ]; then
    .venv/bin/python -m pip install --quiet -e ".[${extras}]"
  else
    .venv/bin/python -m pip install --quiet -e .
  fi
  echo "$want" > "$stamp"
fi
