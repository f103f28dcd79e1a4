import type { ConfigType } from '@nestjs/config';
import { defineSettings, integer, ip, oneOf, pattern } from '../../config/settings';

/** The HTTP server's settings: its listener, its timeouts, the proxy in front, compression. */
export const httpSettings = defineSettings(
  'http',
  {
    PORT: { rule: integer({ min: 0, max: 65535 }), default: 3000, description: 'HTTP port' },
    HOST: {
      rule: ip({ examples: ['0.0.0.0', '::', '127.0.0.1'] }),
      description:
        'IP address of the interface to listen on (`127.0.0.1`, `0.0.0.0`, `::`), for the API and the metrics listener (`METRICS_PORT`) alike. Unset: every interface, IPv6 and IPv4. In the image, keep it unset or a wildcard: its `HEALTHCHECK` probes `127.0.0.1`',
    },
    TRUST_PROXY: {
      rule: pattern(
        /^(true|false|\d+|[\w.:/-]+(\s*,\s*[\w.:/-]+)*)$/,
        'true, false, a hop count, or a comma-separated list of addresses, subnets or loopback/linklocal/uniquelocal',
      ),
      description:
        'Express `trust proxy`: a hop count (compose: `1`, nginx), addresses/subnets such as `loopback`, or `true`. **`true` trusts every `X-Forwarded-For` entry, so any client chooses the address its anonymous limits and bans count against** (the process logs a warning at start): set the number of proxies in front, or their addresses, instead',
    },
    COMPRESSION: {
      rule: oneOf(['on', 'off']),
      default: 'on',
      description:
        '`on`: responses of 1 KiB or more are gzipped (brotli where asked) for clients that accept it, streamed lists flushed batch by batch; `off`: never, for a proxy in front that compresses',
    },
    HTTP_HEADERS_TIMEOUT_MS: {
      rule: integer({ min: 1000 }),
      default: 10000,
      description:
        "time a client has to send a request's headers; past it, 408 `REQUEST_TIMEOUT` and the connection closed (at least 1000)",
    },
    HTTP_REQUEST_TIMEOUT_MS: {
      rule: integer({ min: 1000 }),
      default: 30000,
      description:
        'time a client has to send a whole request, body included; past it, 408 (at least `HTTP_HEADERS_TIMEOUT_MS`)',
    },
    HTTP_KEEP_ALIVE_TIMEOUT_MS: {
      rule: integer({ min: 0 }),
      default: 5000,
      description:
        "how long an idle keep-alive connection stays open; behind a proxy that reuses connections, set it above the proxy's idle timeout",
    },
    HTTP_STALL_TIMEOUT_MS: {
      rule: integer({ min: 1000 }),
      default: 30000,
      description:
        'how long a streamed list waits for a client that takes none of it before cutting the connection (at least 1000); a client that keeps reading, slowly too, gets the whole list however long it takes ([Slow clients](operating.md#slow-clients-and-long-lists)). Once shutting down, stalled clients are cut sooner: see [Shutdown](operating.md#shutdown)',
    },
  },
  // The headers are part of the request: Node checks both from the request's first byte.
  (s) =>
    s.HTTP_REQUEST_TIMEOUT_MS < s.HTTP_HEADERS_TIMEOUT_MS
      ? ['HTTP_REQUEST_TIMEOUT_MS must be at least HTTP_HEADERS_TIMEOUT_MS']
      : [],
);
export type HttpSettings = ConfigType<typeof httpSettings>;
