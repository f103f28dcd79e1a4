#!/usr/bin/env bash
# Run once by the postgres image on an empty data directory (/docker-entrypoint-initdb.d/), as
# POSTGRES_USER, the superuser, whose password only an operator holds. Creates the two roles the
# service uses, neither of them a superuser:
#   store_migrate  owns the database and so its public schema: the migration job creates the
#                  schema with it (DATABASE_URL of the `migrate` service);
#   store_app      the instances (and the keys tool): connect, and read, insert and update the
#                  rows of the tables store_migrate creates, now and in later migrations (default
#                  privileges); no DDL, no DELETE, no TRUNCATE. The migrations narrow it further
#                  (src/database/migrations/*-runtime-role-rights.ts): only SELECT and INSERT on
#                  audit_events, only SELECT on order_cursor_secret.
# The embedded database of `npm start` without DATABASE_URL sets up the same two roles and the
# same grants (src/database/embedded/embedded-database.ts); test/embedded-roles.e2e-spec.ts compares them.
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
  GRANT SELECT, INSERT, UPDATE ON TABLES TO store_app;
ALTER DEFAULT PRIVILEGES FOR ROLE store_migrate IN SCHEMA public
  GRANT USAGE, SELECT ON SEQUENCES TO store_app;
SQL
