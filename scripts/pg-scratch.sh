#!/usr/bin/env bash
# Starts (or stops) a throwaway PostgreSQL server for cross-checking
# sqllogictest expectations by hand:
#
#   scripts/pg-scratch.sh start [PORT]   # prints the URL to pass to streamsql slt --url
#   scripts/pg-scratch.sh stop [PORT]
#
# The cluster lives in /tmp/streamsql-pg-PORT. PostgreSQL refuses to run as
# root, so as root the cluster belongs to the postgres OS user.
set -euo pipefail
cmd=${1:-start}
port=${2:-5499}
dir=/tmp/streamsql-pg-$port
bindir=$(pg_config --bindir)
as_owner() {
	if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
case "$cmd" in
start)
	if [ ! -d "$dir" ]; then
		mkdir -p "$dir"
		[ "$(id -u)" -eq 0 ] && chown postgres "$dir"
		as_owner "$bindir/initdb" -D "$dir/data" -U postgres -A trust >/dev/null
	fi
	as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/log" -w \
		-o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c TimeZone=UTC" start >/dev/null
	echo "postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
	;;
stop)
	as_owner "$bindir/pg_ctl" -D "$dir/data" -m fast stop >/dev/null
	;;
*)
	echo "usage: $0 start|stop [PORT]" >&2
	exit 2
	;;
esac
