import { auditTable } from './keys-output';

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
