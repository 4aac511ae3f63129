#!/usr/bin/env bash
# Runs the whole streamsql test suite on a fresh machine: installs what the
# tests need (a PostgreSQL server for the differential tests), then vets and
# tests every package with the race detector.
set -euo pipefail
cd "$(dirname "$0")/.."

# The differential tests start their own throwaway PostgreSQL; make sure the
# server binaries exist (psql alone is not enough).
have_postgres() {
	local bindir
	bindir=$(pg_config --bindir 2>/dev/null) || return 1
	[ -x "$bindir/postgres" ] && [ -x "$bindir/initdb" ]
}
if ! have_postgres; then
	echo "== installing PostgreSQL server (needed by the differential tests)"
	if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq postgresql >/dev/null
fi
have_postgres || { echo "PostgreSQL server binaries still missing" >&2; exit 1; }

# The dashboard test drives headless Chromium (engine/dashboard_test.go).
if ! command -v chromium >/dev/null 2>&1; then
	echo "== installing Chromium (needed by the dashboard test)"
	if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi

echo "== go vet"
go vet ./...

# The SQLite corpus (about 10,000 queries) runs without the race detector,
# which would make it take many times as long; everything else runs with it.
echo "== go test -race"
go test -race -count=1 -timeout 20m -skip TestSQLiteCorpus ./... "$@"

echo "== go test (SQLite corpus)"
go test -count=1 -timeout 20m -run TestSQLiteCorpus ./engine "$@"
