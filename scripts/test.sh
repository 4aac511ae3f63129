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
	SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq postgresql >/dev/null
fi
have_postgres || { echo "PostgreSQL server binaries still missing" >&2; exit 1; }

# Real clients the tests drive (engine/clients_test.go). A client that cannot
# be installed (no network) is reported and its test skipped, rather than
# failing the whole run; once installed, a missing one fails its test.
if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
apt_install() {
	$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >/dev/null
}
have_psycopg2() { python3 -c 'import psycopg2' 2>/dev/null || /usr/bin/python3 -c 'import psycopg2' 2>/dev/null; }
if ! have_psycopg2; then
	echo "== installing python3-psycopg2 (client tests)"
	apt_install python3-psycopg2 || echo "warning: python3-psycopg2 could not be installed" >&2
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "== installing nodejs and npm (client tests)"
	apt_install nodejs npm || echo "warning: nodejs could not be installed" >&2
fi
if command -v npm >/dev/null && [ ! -d testdata/clients/node_modules/pg ]; then
	echo "== npm ci (node-postgres, client tests)"
	(cd testdata/clients && npm ci --no-audit --no-fund --loglevel=error) ||
		echo "warning: node-postgres could not be installed" >&2
fi
if [ ! -f /usr/share/java/postgresql.jar ] || ! command -v javac >/dev/null; then
	echo "== installing pgJDBC and a JDK (client tests)"
	apt_install libpostgresql-jdbc-java default-jdk-headless || echo "warning: pgJDBC could not be installed" >&2
fi
if have_psycopg2 && [ -d testdata/clients/node_modules/pg ] && [ -f /usr/share/java/postgresql.jar ] && command -v javac >/dev/null; then
	export STREAMSQL_REQUIRE_CLIENTS=1
fi
# The dashboard test drives headless Chromium (engine/dashboard_test.go).
if ! command -v chromium >/dev/null 2>&1; then
	echo "== installing Chromium (needed by the dashboard test)"
	apt_install chromium || echo "warning: chromium could not be installed" >&2
fi

echo "== go vet"
go vet ./...

# The SQLite corpus (about 10,000 queries) and pgbench's initialization run
# without the race detector, which would make them take many times as long;
# everything else runs with it.
echo "== go test -race"
go test -race -count=1 -timeout 45m -skip TestSQLiteCorpus ./... "$@"

# A short fuzzing run over the protocol (startup, authentication, messages),
# beyond the seed corpus that the run above replays.
echo "== go test -fuzz (pgwire, 20s)"
go test -run '^$' -fuzz '^FuzzServeConn$' -fuzztime 20s ./pgwire

echo "== go test (SQLite corpus, pgbench)"
go test -count=1 -timeout 20m -run 'TestSQLiteCorpus|TestPgbenchInit' ./engine "$@"
