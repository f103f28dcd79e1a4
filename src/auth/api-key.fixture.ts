import type { ActiveKey } from './api-keys.repository';

/**
 * For unit specs (never built into dist/): a valid key on the pro plan, with every scope, no ban
 * and no expiry, as the keys' repository returns it.
 */
export const KEY: ActiveKey = {
  keyId: '7',
  familyId: '7',
  plan: 'pro',
  limits: { perMinute: 300, perDay: 10_000 },
  bannedUntil: null,
  expiresAt: null,
  scopes: ['*'],
};
