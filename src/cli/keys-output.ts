/** What the `keys` tool prints: for people (tables, relative times) and for scripts (`--json`). */
import type { AuditPage } from '../audit/audit-trail';
import { IssuedKey, KeySummary, Rotation } from '../auth/api-keys.repository';
import { keyJson, statusOf } from '../auth/key-json';
import { EVERY_SCOPE, KEYS_ADMIN, scopesOf } from '../auth/scopes';
import { limitsOf } from '../plans/plans';
import { relativeTime } from './relative-time';
import { printable } from './terminal-text';

/** Characters of a key id shown by `list`; any unique prefix of 4 or more is accepted back. */
export const SHORT_ID_LENGTH = 8;

export function shortId(id: string): string {
  return id.slice(0, SHORT_ID_LENGTH);
}

/** A key's scopes for people: `orders:read, orders:cancel`, or what `*` stands for. */
export function describeScopes(scopes: readonly string[]): string {
  if (scopes.length === 1 && scopes[0] === EVERY_SCOPE) {
    return `${EVERY_SCOPE} (every scope but ${KEYS_ADMIN})`;
  }
  return scopes.join(', ');
}

/** An absolute time and how far it is from now: `2026-11-23T12:00:00.000Z (3 minutes ago)`. */
function when(at: Date, now: number): string {
  return `${at.toISOString()} (${relativeTime(at, now)})`;
}

export function describeIssued(key: IssuedKey, now = Date.now()): string {
  return [
    `Created ${key.plan} key ${key.id}${key.name ? ` (${key.name})` : ''}`,
    `Limits: ${key.limits.perMinute} per minute, ${key.limits.perDay} per day`,
    `Scopes: ${describeScopes(key.scopes)}`,
    `Expires: ${key.expiresAt ? when(key.expiresAt, now) : 'never'}`,
    `Key (shown once, store it now): ${key.key}`,
    '',
  ]
    .map(printable)
    .join('\n');
}

export function describeRotation({ issued, previous }: Rotation, now = Date.now()): string {
  const end = previous.expiresAt ?? new Date(now);
  const grace =
    end.getTime() > now
      ? `keeps working until ${when(end, now)}, then is refused as expired`
      : 'is refused from now on';
  return [
    `Rotated key ${previous.id}${issued.name ? ` (${issued.name})` : ''}: the old key ${grace}.`,
    'Both share one rate-limit budget and one ban meanwhile.',
    `New ${issued.plan} key ${issued.id}`,
    `Limits: ${issued.limits.perMinute} per minute, ${issued.limits.perDay} per day`,
    `Scopes: ${describeScopes(issued.scopes)}`,
    `Expires: ${issued.expiresAt ? when(issued.expiresAt, now) : 'never'}`,
    `Key (shown once, store it now): ${issued.key}`,
    '',
  ]
    .map(printable)
    .join('\n');
}

/** `list` for people: short ids, relative times, one line per key. */
export function keyTable(keys: KeySummary[], now = Date.now()): string {
  if (keys.length === 0) return 'No keys. Create one with: npm run keys -- create --plan free\n';
  const rows = keys.map((key) => {
    const k = keyJson(key, now);
    return [
      shortId(key.id),
      key.name ?? '',
      `${key.prefix}…`,
      key.plan,
      `${k.perMinute}/min ${k.perDay}/day`,
      k.scopes.join(','),
      statusCell(key, now),
      relativeTime(key.createdAt, now),
      key.lastUsedAt ? relativeTime(key.lastUsedAt, now) : 'never',
      key.expiresAt ? relativeTime(key.expiresAt, now) : 'never',
    ];
  });
  const header = [
    'ID',
    'NAME',
    'PREFIX',
    'PLAN',
    'LIMITS',
    'SCOPES',
    'STATUS',
    'CREATED',
    'LAST USED',
    'EXPIRES',
  ];
  return columns(header, rows).join('\n') + '\n';
}

/**
 * The lines of a table: each column as wide as its widest cell, two spaces apart. Cells are
 * escaped (a name may hold control characters), and measured as printed.
 */
function columns(header: string[], cells: string[][]): string[] {
  const rows = cells.map((row) => row.map(printable));
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  return [header, ...rows].map((r) =>
    r
      .map((c, i) => c.padEnd(widths[i]))
      .join('  ')
      .trimEnd(),
  );
}

function statusCell(key: KeySummary, now: number): string {
  const status = statusOf(key, now);
  return status === 'banned' && key.bannedUntil
    ? `banned, ends ${relativeTime(key.bannedUntil, now)}`
    : status;
}

/** `show` for people: every field, then the other keys of its rotation family (`keys rotate`). */
export function describeKey(key: KeySummary, family: KeySummary[], now = Date.now()): string {
  const limits = limitsOf(key);
  const lines: [string, string][] = [
    ['ID', key.id],
    ['Name', key.name ?? ''],
    ['Prefix', `${key.prefix}…`],
    ['Plan', `${key.plan} (${limits.perMinute} per minute, ${limits.perDay} per day)`],
    ['Scopes', describeScopes(scopesOf(key))],
    ['Status', statusCell(key, now)],
    ['Created', when(key.createdAt, now)],
    ['Last used', key.lastUsedAt ? when(key.lastUsedAt, now) : 'never'],
    ['Expires', key.expiresAt ? when(key.expiresAt, now) : 'never'],
  ];
  if (key.revokedAt) lines.push(['Revoked', when(key.revokedAt, now)]);
  if (key.bannedUntil && key.bannedUntil.getTime() > now) {
    lines.push(['Banned until', when(key.bannedUntil, now)]);
  }
  const others = family.filter((k) => k.id !== key.id);
  for (const other of others) {
    const relation = other.createdAt < key.createdAt ? 'Earlier key' : 'Later key';
    const expires = other.expiresAt ? `, expires ${relativeTime(other.expiresAt, now)}` : '';
    lines.push([relation, `${shortId(other.id)} (${statusOf(other, now)}${expires})`]);
  }
  const width = Math.max(...lines.map(([label]) => label.length));
  return (
    lines
      .map(([label, value]) => `${label.padEnd(width)}  ${printable(value)}`.trimEnd())
      .join('\n') + '\n'
  );
}

/**
 * `audit` for people: one line per event, newest first, times in UTC; then, when there are more,
 * the cursor of the next page.
 */
export function auditTable(page: AuditPage): string {
  if (page.data.length === 0) return 'No events.\n';
  const header = ['ID', 'AT', 'ACTOR', 'ACTION', 'TARGET', 'REQUEST ID'];
  const rows = page.data.map((e) => [
    e.id,
    e.at.toISOString(),
    e.actor,
    e.action,
    e.target,
    e.requestId ?? '',
  ]);
  const lines = columns(header, rows);
  if (page.nextCursor !== undefined) lines.push('', `More: --cursor ${page.nextCursor}`);
  return lines.join('\n') + '\n';
}
