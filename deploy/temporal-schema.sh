#!/bin/sh
# Creates or upgrades Temporal's two databases on our Postgres (run by the `temporal-schema` job of docker-compose.yml
# with the temporalio/admin-tools image). Idempotent: `create` fails harmlessly when the database exists, and
# update-schema applies only the versions not yet applied.
set -eu
tool() { temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -p 5432 -u "$POSTGRES_USER" --pw "$POSTGRES_PWD" "$@"; }
for db in temporal temporal_visibility; do
  tool --db "$db" create || echo "database $db exists"
done
tool --db temporal setup-schema -v 0.0 || true
tool --db temporal update-schema -d /etc/temporal/schema/postgresql/v12/temporal/versioned
tool --db temporal_visibility setup-schema -v 0.0 || true
tool --db temporal_visibility update-schema -d /etc/temporal/schema/postgresql/v12/visibility/versioned
echo "Temporal schema is current"
