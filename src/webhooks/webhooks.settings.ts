import type { ConfigType } from '@nestjs/config';
import { defineSettings, integer, oneOf, type Rule } from '../config/settings';

/** The waits between attempts, in seconds: comma-separated positive integers. */
function secondsList(): Rule<number[]> {
  const expected = 'a comma-separated list of positive integers (seconds), e.g. 5,300,1800';
  return {
    parse(raw) {
      const parts = raw.split(',').map((part) => part.trim());
      if (parts.length === 0 || parts.some((part) => !/^[1-9]\d{0,6}$/.test(part))) {
        return { expected };
      }
      return { value: parts.map(Number) };
    },
  };
}

/** 32 bytes, in base64 or in 64 hexadecimal digits: an AES-256 key. */
function aesKey(): Rule<Buffer> {
  const expected = '32 bytes in base64 (e.g. `openssl rand -base64 32`) or 64 hexadecimal digits';
  return {
    parse(raw) {
      const text = raw.trim();
      const bytes = /^[0-9a-fA-F]{64}$/.test(text)
        ? Buffer.from(text, 'hex')
        : /^[A-Za-z0-9+/]{42,43}=?$/.test(text)
          ? Buffer.from(text, 'base64')
          : undefined;
      return bytes?.length === 32 ? { value: bytes } : { expected };
    },
  };
}

const flag = oneOf(['true', 'false']);

/** The webhooks module's environment variables. */
export const webhooksSettings = defineSettings('webhooks', {
  WEBHOOK_CONCURRENCY: {
    rule: integer({ min: 1, max: 1000 }),
    default: 10,
    description: 'attempts this instance makes at once, at most',
  },
  WEBHOOK_MAX_ENDPOINTS: {
    rule: integer({ min: 1, max: 10000 }),
    default: 100,
    description:
      'webhook endpoints the service holds at most (removed ones not counted); adding one more is refused with 409 `CONFLICT`',
  },
  WEBHOOK_TIMEOUT_MS: {
    rule: integer({ min: 100, max: 300000 }),
    default: 10000,
    description:
      "time an attempt has, from looking up the endpoint's host name to the answer's status (ms); later is a failed attempt",
  },
  WEBHOOK_RETRY_SECONDS: {
    rule: secondsList(),
    default: [5, 300, 1800, 7200, 18000, 36000, 36000],
    description:
      'the wait before each new attempt after a failed one (seconds, each ±10 % at random); after the last, the delivery is `failed`',
  },
  WEBHOOK_DISABLE_AFTER_HOURS: {
    rule: integer({ min: 1, max: 8760 }),
    default: 120,
    description:
      'an endpoint with no success since a failure this many hours ago is disabled (`failing`)',
  },
  WEBHOOK_ALLOW_HTTP: {
    rule: flag,
    default: 'false',
    description: 'accept `http://` endpoint URLs (development and tests only)',
  },
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: {
    rule: flag,
    default: 'false',
    description:
      'accept endpoints on loopback, private, link-local and other non-public addresses (development and tests only)',
  },
  WEBHOOK_SECRETS_KEY: {
    rule: aesKey(),
    description:
      "key that encrypts the endpoints' signing secrets in the database (AES-256-GCM); unset: stored unencrypted, said once at start",
    sensitive: true,
  },
});
export type WebhooksSettings = ConfigType<typeof webhooksSettings>;
