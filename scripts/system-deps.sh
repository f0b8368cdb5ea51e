#!/usr/bin/env bash
# Debian packages the test suite needs: Chromium for the browser tests (driven by
# Playwright at /usr/bin/chromium; no browser download), openssl for checking
# signatures and certificates with stock tools, PostgreSQL's server binaries for the
# tests that start a cluster of their own (tests/support/postgres.py), dieharder
# for the random ball generator's certification (bingo rng certify), systemd for
# checking the release's units (systemd-analyze verify), libfaketime for the tests
# that step a running server's wall clock (tests/faults/), espeak-ng for the board's
# speech clips (hall_server/voice/), and etcd with python3-venv
# for the central server's database pair (bingo central cluster; Patroni's
# venv is made by scripts/patroni-venv.sh, called at the end).  Installs only what is
# missing.
set -euo pipefail
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v openssl >/dev/null || missing+=(openssl)
command -v node >/dev/null || missing+=(nodejs)
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing+=(postgresql)
command -v dieharder >/dev/null || missing+=(dieharder)
[ -x /usr/bin/etcd ] || missing+=(etcd-server)
[ -x /usr/bin/etcdctl ] || missing+=(etcd-client)
[ -x /usr/lib/postgresql/15/bin/postgres ] || missing+=(postgresql-15)
command -v faketime >/dev/null || missing+=(faketime)
command -v espeak-ng >/dev/null || missing+=(espeak-ng)
/usr/bin/python3 -c 'import ensurepip, venv' 2>/dev/null || missing+=(python3-venv)
command -v systemd-analyze >/dev/null || missing+=(systemd)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "system-deps.sh: please install: ${missing[*]} (as root: apt-get install ${missing[*]})" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ "$(id -u)" -eq 0 ] || [ -n "${BINGO_PATRONI_VENV:-}" ]; then
  "$(dirname "$0")/patroni-venv.sh"
fi
