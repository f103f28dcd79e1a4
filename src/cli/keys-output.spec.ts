import type { IssuedKey, KeySummary } from '../auth/api-keys.repository';
import { auditTable, describeIssued, describeKey, describeRotation, keyTable } from './keys-output';

describe('keys audit output', () => {
  const event = (id: string, requestId: string | null) => ({
    id,
    at: new Date('2026-11-26T01:02:03.456Z'),
    actor: 'key:k1',
    action: 'order.cancelled' as const,
    target: `order:${id}`,
    requestId,
  });

  it('prints one line per event under a header, columns aligned, and the next cursor', () => {
    expect(
      auditTable({
        data: [event('12', 'req-1'), event('9', null)],
        hasMore: true,
        nextCursor: 'YXVkaXQ6OQ',
      }),
    ).toBe(
      [
        'ID  AT                        ACTOR   ACTION           TARGET    REQUEST ID',
        '12  2026-11-26T01:02:03.456Z  key:k1  order.cancelled  order:12  req-1',
        '9   2026-11-26T01:02:03.456Z  key:k1  order.cancelled  order:9',
        '',
        'More: --cursor YXVkaXQ6OQ',
        '',
      ].join('\n'),
    );
  });

  it('says so when there is nothing to show, and gives no cursor on the last page', () => {
    expect(auditTable({ data: [], hasMore: false })).toBe('No events.\n');
    expect(auditTable({ data: [event('1', null)], hasMore: false })).not.toContain('More:');
  });
});

describe('keys output of text from the database', () => {
  const hostile = '\u001b]0;PWNED\u0007\u001b[31m';
  const escaped = '\\x1b]0;PWNED\\x07\\x1b[31m';
  /** Nothing a terminal acts on: no control character but the lines' own newlines. */
  // eslint-disable-next-line no-control-regex -- the characters under test
  const inert = /^[^\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]*$/;
  const now = Date.parse('2026-11-26T12:00:00Z');
  const key: KeySummary = {
    id: '72d8175b-5d0e-4c51-9a43-6f1f0c2a7e11',
    name: `${hostile}\tline\nbreak\u202e`,
    prefix: 'sk_SWe4UF',
    plan: 'pro',
    perMinute: null,
    perDay: null,
    createdAt: new Date(now - 60_000),
    revokedAt: null,
    lastUsedAt: null,
    expiresAt: null,
    familyId: null,
    scopes: ['orders:read\u009b'],
    bannedUntil: null,
  };

  it('list: the name and scopes written out, one line per key, columns measured as printed', () => {
    const table = keyTable([key, { ...key, id: 'e1e07ceb', name: 'plain' }], now);
    expect(table).toMatch(inert);
    const [header, first, second] = table.split('\n');
    expect(first).toContain(`  ${escaped}\\x09line\\x0abreak\\u202e  sk_SWe4UF…`);
    expect(first).toContain('orders:read\\x9b');
    expect(second.indexOf('sk_')).toBe(first.indexOf('sk_'));
    expect(header.indexOf('PREFIX')).toBe(first.indexOf('sk_'));
  });

  it('show, create and rotate: the name written out', () => {
    const shown = describeKey(key, [key], now);
    expect(shown).toMatch(inert);
    expect(shown).toMatch(/^Name +\\x1b\]0;PWNED\\x07\\x1b\[31m\\x09line\\x0abreak\\u202e$/m);
    const issued: IssuedKey = {
      id: key.id,
      key: 'sk_secret',
      name: hostile,
      prefix: key.prefix,
      plan: 'pro',
      limits: { perMinute: 300, perDay: 10_000 },
      createdAt: key.createdAt,
      expiresAt: null,
      familyId: key.id,
      scopes: ['*'],
    };
    const created = describeIssued(issued, now);
    expect(created).toMatch(inert);
    expect(created).toContain(`(${escaped})`);
    const rotated = describeRotation({ issued, previous: key }, now);
    expect(rotated).toMatch(inert);
    expect(rotated).toContain(`(${escaped})`);
  });

  it('audit: actor, target and request id written out', () => {
    const table = auditTable({
      data: [
        {
          id: '1',
          at: new Date(now),
          actor: `cli:${hostile}`,
          action: 'key.created',
          target: 'key:\u0085',
          requestId: 'req\u007f',
        },
      ],
      hasMore: false,
    });
    expect(table).toMatch(inert);
    expect(table).toContain(`cli:${escaped}  key.created  key:\\x85  req\\x7f`);
  });
});
