/**
 * A key in JSON, as the keys tool's `--json` and the admin API show it (the admin API a subset of
 * the fields): never its hash.
 */
import { familyOf, type IssuedKey, type KeySummary, type Rotation } from './api-keys.repository';
import { scopesOf } from './scopes';
import { limitsOf } from '../plans/plans';

export type KeyStatus = 'active' | 'revoked' | 'expired' | 'banned';

/** One key in `list --json` and `show --json`: the fields scripts rely on, then the newer ones. */
export interface KeyJson {
  id: string;
  name: string | null;
  prefix: string;
  plan: string;
  perMinute: number;
  perDay: number;
  createdAt: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
  bannedUntil: string | null;
  expiresAt: string | null;
  familyId: string;
  status: KeyStatus;
  /** `["*"]`: every scope but `keys:admin`. */
  scopes: string[];
}

/** What the key is now: revoked, else expired, else banned, else active. */
export function statusOf(key: KeySummary, now = Date.now()): KeyStatus {
  if (key.revokedAt) return 'revoked';
  if (key.expiresAt && key.expiresAt.getTime() <= now) return 'expired';
  if (key.bannedUntil && key.bannedUntil.getTime() > now) return 'banned';
  return 'active';
}

export function keyJson(key: KeySummary, now = Date.now()): KeyJson {
  const limits = limitsOf(key);
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    plan: key.plan,
    perMinute: limits.perMinute,
    perDay: limits.perDay,
    createdAt: key.createdAt.toISOString(),
    revokedAt: key.revokedAt?.toISOString() ?? null,
    lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
    bannedUntil:
      key.bannedUntil && key.bannedUntil.getTime() > now ? key.bannedUntil.toISOString() : null,
    expiresAt: key.expiresAt?.toISOString() ?? null,
    familyId: familyOf(key),
    status: statusOf(key, now),
    scopes: [...scopesOf(key)],
  };
}

export function issuedJson(key: IssuedKey): Record<string, unknown> {
  return {
    id: key.id,
    key: key.key,
    name: key.name,
    prefix: key.prefix,
    plan: key.plan,
    perMinute: key.limits.perMinute,
    perDay: key.limits.perDay,
    createdAt: key.createdAt.toISOString(),
    expiresAt: key.expiresAt?.toISOString() ?? null,
    familyId: key.familyId,
    scopes: [...key.scopes],
  };
}

export function rotationJson({ issued, previous }: Rotation): Record<string, unknown> {
  return {
    ...issuedJson(issued),
    rotated: { id: previous.id, expiresAt: previous.expiresAt?.toISOString() ?? null },
  };
}

/** A Key's fields as the admin API and webhook messages show it: those of `--json` it names. */
const KEY_RESOURCE_FIELDS = [
  'id',
  'name',
  'plan',
  'perMinute',
  'perDay',
  'scopes',
  'createdAt',
  'expiresAt',
  'revokedAt',
  'lastUsedAt',
  'bannedUntil',
] as const;

/** Those fields of the keys tool's JSON (and `extra`), nulls left out: never the hash. */
export function keyResourceFields(
  json: object,
  extra: readonly string[] = [],
): Record<string, unknown> {
  const source = json as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const field of [...extra, ...KEY_RESOURCE_FIELDS]) {
    if (source[field] !== null && source[field] !== undefined) out[field] = source[field];
  }
  return out;
}

/** A key as the admin API shows it, and as a webhook message carries it. */
export function keyResourceJson(key: KeySummary, now = Date.now()): Record<string, unknown> {
  return keyResourceFields(keyJson(key, now));
}
