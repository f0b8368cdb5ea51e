#!/usr/bin/env bash
# The whole test suite on a fresh machine: installs what it needs (Debian packages
# through scripts/system-deps.sh, Python packages into .venv), then runs pytest.
# Extra arguments go to pytest.  pytest's "no tests ran" (exit 5) is a failure here.
# The tests run in two worker processes (pytest-xdist), each test file on one worker;
# BINGO_TEST_WORKERS=0 runs them in this process.
set -euo pipefail
cd "$(dirname "$0")"
scripts/system-deps.sh
scripts/bootstrap.sh test
set +e
.venv/bin/python -m pytest -n "${BINGO_TEST_WORKERS:-2}" --dist loadfile "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "test.sh: pytest collected no tests; that is a failure" >&2
  exit 1
fi
exit "$status"
