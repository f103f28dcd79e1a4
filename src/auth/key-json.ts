/**
 * A key in JSON, as the keys tool's `--json` and the admin API show it (the admin API a subset of
 * the fields): never its hash.
 */
import { familyOf, type IssuedKey, type KeySummary, type Rotation } from './api-key.store';
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
