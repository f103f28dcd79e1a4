import { auditEventJson } from './audit-event';

describe('audit event JSON', () => {
  const at = new Date('2026-11-26T01:02:03.456Z');

  it('gives every field, the time in ISO 8601', () => {
    expect(
      auditEventJson({
        id: '9007199254740993',
        at,
        actor: 'key:k1',
        action: 'order.cancelled',
        target: 'order:7',
        requestId: 'req-1',
      }),
    ).toEqual({
      id: '9007199254740993',
      at: '2026-11-26T01:02:03.456Z',
      actor: 'key:k1',
      action: 'order.cancelled',
      target: 'order:7',
      requestId: 'req-1',
    });
  });

  it('leaves out a request id that is null (a change made with the keys tool)', () => {
    const json = auditEventJson({
      id: '1',
      at,
      actor: 'cli:alice',
      action: 'key.created',
      target: 'key:k1',
      requestId: null,
    });
    expect(json).not.toHaveProperty('requestId');
    expect(JSON.stringify(json)).toBe(
      '{"id":"1","at":"2026-11-26T01:02:03.456Z","actor":"cli:alice","action":"key.created","target":"key:k1"}',
    );
  });
});
