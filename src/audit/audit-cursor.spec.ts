import { decodeAuditCursor, encodeAuditCursor, InvalidAuditCursorError } from './audit-cursor';

describe('audit trail cursor', () => {
  it.each(['1', '42', '9223372036854775807'])('gives back the id %p it was made from', (id) => {
    const cursor = encodeAuditCursor(id);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeAuditCursor(cursor)).toBe(id);
  });

  it.each([
    '',
    '42',
    'not a cursor',
    btoa('audit:0').replace(/=+$/, ''),
    btoa('audit:9223372036854775808').replace(/=+$/, ''),
    btoa('audit:-1').replace(/=+$/, ''),
    btoa('audit:1e3').replace(/=+$/, ''),
    btoa('other:42').replace(/=+$/, ''),
    // The same text with padding: not the spelling handed out.
    `${encodeAuditCursor('42')}==`,
  ])('refuses %p', (cursor) => {
    expect(() => decodeAuditCursor(cursor)).toThrow(InvalidAuditCursorError);
  });
});
