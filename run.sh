#!/usr/bin/env bash
# The main job on a fresh machine: installs the project into .venv, then starts a hall
# on the embedded default (SQLite and keys under var/, a local PKI, a card set) and
# prints the console URL and the staff logins.  Arguments go to `bingo hall serve`:
# `./run.sh --demo` fills the hall with a scripted session to watch.
set -euo pipefail
cd "$(dirname "$0")"
scripts/bootstrap.sh
exec .venv/bin/bingo hall serve "$@"
