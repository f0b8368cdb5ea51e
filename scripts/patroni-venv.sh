#!/usr/bin/env bash
# Patroni for the central server's database pair (central_server/cluster.py,
# docs/replica.md): a virtual environment made with Debian's own /usr/bin/python3
# (python3-venv) in a folder the postgres user can read - the machine's default
# Python may live where that user cannot enter.  Idempotent: quick when Patroni is
# already there.  BINGO_PATRONI_VENV chooses the folder (default /opt/bingo/patroni).
set -euo pipefail
venv="${BINGO_PATRONI_VENV:-/opt/bingo/patroni}"
if [ -x "$venv/bin/patroni" ] && "$venv/bin/python" -c 'import patroni, etcd3, psycopg' 2>/dev/null; then
  exit 0
fi
mkdir -p "$(dirname "$venv")"
/usr/bin/python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check 'patroni[etcd3]' 'psycopg[binary]'
chmod -R a+rX "$venv"
