#!/usr/bin/env bash
# The whole test suite on a fresh machine: installs what it needs (Debian packages
# through scripts/system-deps.sh, Python packages into .venv), then runs pytest.
# Extra arguments go to pytest.  pytest's "no tests ran" (exit 5) is a failure here.
# The tests run in six worker processes (pytest-xdist), each test file on one worker:
# most of the long tests wait on real time (Patroni's ttl, sale windows, ball intervals,
# processes starting), so six keep the two cores busy; BINGO_TEST_WORKERS=0 runs them
# in this process.
set -euo pipefail
cd "$(dirname "$0")"
scripts/system-deps.sh
scripts/bootstrap.sh test
# The tests' folders (pytest's tmp_path, the PostgreSQL clusters, every tempfile) go to
# memory when /dev/shm has room: the tests kill processes, which the page cache survives,
# so a disk adds only its fsync waits (the benchmarks measure the disk; docs/testing.md).
scratch=""
if [ -z "${BINGO_TEST_ON_DISK:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ] \
   && [ "$(df -Pk /dev/shm | awk 'NR==2 {print $4}')" -gt 4194304 ]; then
  scratch="$(mktemp -d /dev/shm/bingo-tests.XXXXXX)"
  chmod 755 "$scratch"
  trap 'rm -rf "$scratch"' EXIT
  export TMPDIR="$scratch"
fi
set +e
.venv/bin/python -m pytest -n "${BINGO_TEST_WORKERS:-6}" --dist loadfile --no-loadscope-reorder --durations=25 ${scratch:+--basetemp "$scratch/pytest"} "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "test.sh: pytest collected no tests; that is a failure" >&2
  exit 1
fi
exit "$status"
