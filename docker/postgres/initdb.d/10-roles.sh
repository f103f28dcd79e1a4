#!/usr/bin/env bash
# Run once by the postgres image on an empty data directory (/docker-entrypoint-initdb.d/), as
# POSTGRES_USER, the superuser, whose password only an operator holds. Creates the two roles the
# service uses, neither of them a superuser:
#   store_migrate  owns the database and so its public schema: the migration job creates the
#                  schema with it (DATABASE_URL of the `migrate` service);
#   store_app      the instances: connect, and read and write the rows of the tables store_migrate
#                  creates, now and in later migrations (default privileges); no DDL, no TRUNCATE.
#                  The audit trail's migration takes UPDATE and DELETE on audit_events back:
#                  the instances only read and append events.
set -euo pipefail
: "${STORE_MIGRATE_PASSWORD:?set STORE_MIGRATE_PASSWORD}"
: "${STORE_APP_PASSWORD:?set STORE_APP_PASSWORD}"
psql -v ON_ERROR_STOP=1 -X -q --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  --set db="$POSTGRES_DB" \
  --set migrate_password="$STORE_MIGRATE_PASSWORD" \
  --set app_password="$STORE_APP_PASSWORD" <<'SQL'
CREATE ROLE store_migrate LOGIN PASSWORD :'migrate_password';
CREATE ROLE store_app LOGIN PASSWORD :'app_password';
ALTER DATABASE :"db" OWNER TO store_migrate;
REVOKE ALL ON DATABASE :"db" FROM PUBLIC;
GRANT CONNECT ON DATABASE :"db" TO store_app;
GRANT USAGE ON SCHEMA public TO store_app;
ALTER DEFAULT PRIVILEGES FOR ROLE store_migrate IN SCHEMA public
  GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO store_app;
ALTER DEFAULT PRIVILEGES FOR ROLE store_migrate IN SCHEMA public
  GRANT USAGE, SELECT ON SEQUENCES TO store_app;
SQL
