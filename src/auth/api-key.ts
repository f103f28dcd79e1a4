import { hash, randomBytes } from 'node:crypto';

export const API_KEY_PREFIX = 'sk_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** 43 base62 characters carry 256 bits; at least 128 are needed. */
export const API_KEY_RANDOM_CHARS = 43;
/** Characters of a key kept in clear for display (`sk_` and the first 6 random ones). */
const DISPLAY_PREFIX_LENGTH = API_KEY_PREFIX.length + 6;
/** Longer than any key we issue: longer tokens are refused before hashing. */
const MAX_TOKEN_LENGTH = 256;

/** A new key: `sk_` + base62 from `crypto.randomBytes`, unbiased (rejection sampling). */
export function generateApiKey(): string {
  let key = API_KEY_PREFIX;
  while (key.length < API_KEY_PREFIX.length + API_KEY_RANDOM_CHARS) {
    for (const byte of randomBytes(64)) {
      // 248 = 4 * 62: bytes above it would favour the first characters.
      if (byte < 248) key += BASE62[byte % 62];
      if (key.length === API_KEY_PREFIX.length + API_KEY_RANDOM_CHARS) break;
    }
  }
  return key;
}

/**
 * SHA-256 of the key, hex. Keys carry 256 random bits, so a fast hash is enough: there is
 * nothing to brute-force, and no bcrypt/argon2 cost on every request.
 */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

export function displayPrefix(key: string): string {
  return key.slice(0, DISPLAY_PREFIX_LENGTH);
}

export type BearerToken =
  { kind: 'missing' } | { kind: 'malformed' } | { kind: 'token'; token: string };

/**
 * The token of an `Authorization: Bearer <token>` header. The scheme is case-insensitive
 * (RFC 7235); the token is one run of token68 characters (RFC 6750) after exactly one space.
 */
export function parseBearer(header: string | string[] | undefined): BearerToken {
  if (header === undefined || header === '') return { kind: 'missing' };
  if (Array.isArray(header)) return { kind: 'malformed' };
  const match = /^bearer ([A-Za-z0-9\-._~+/]+=*)$/i.exec(header);
  if (!match || match[1].length > MAX_TOKEN_LENGTH) return { kind: 'malformed' };
  return { kind: 'token', token: match[1] };
}
