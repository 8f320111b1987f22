#!/usr/bin/env bash
# Make sure PostgreSQL server binaries (initdb, pg_ctl, postgres) are on this machine, for the
# tests that start a throwaway server (benchmarks/solar_bench/pg_server.py). Called by .ci/run on a fresh machine.
# Idempotent: does nothing when /usr/lib/postgresql/*/bin/initdb already exists. Prints the initdb
# path it found. Debian 12 installs PostgreSQL 15.
#
# The tests run their own server in a temporary directory; the distro's "main" cluster is not
# needed, so a fresh install is told not to create it (and hence not to start it on port 5432).
set -euo pipefail

find_initdb() {
    # highest major version first (sort -V), empty if none
    compgen -G '/usr/lib/postgresql/*/bin/initdb' | sort -V | tail -n 1 || true
}

initdb_path="$(find_initdb)"
if [[ -z "$initdb_path" ]]; then
    if [[ "$(id -u)" -ne 0 ]]; then
        echo "install_postgres.sh: PostgreSQL is not installed and installing it needs root" >&2
        exit 1
    fi
    # postgresql-common reads this include dir when its postinst creates the default cluster
    no_main=/etc/postgresql-common/createcluster.d/00-no-main-cluster.conf
    if [[ ! -e "$no_main" ]]; then
        mkdir -p "$(dirname "$no_main")"
        echo 'create_main_cluster = false' >"$no_main"
    fi
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql \
        >/dev/null
    initdb_path="$(find_initdb)"
    if [[ -z "$initdb_path" ]]; then
        echo "install_postgres.sh: installed postgresql but found no" \
            "/usr/lib/postgresql/*/bin/initdb" >&2
        exit 1
    fi
fi
echo "$initdb_path"
