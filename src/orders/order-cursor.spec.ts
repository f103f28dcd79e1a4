import { ApiException } from '../common/errors/api.exception';
import { decodeCursor, encodeCursor } from './order-cursor';
import type { OrderFilter } from './order-page-query';

const INT64_MAX = '9223372036854775807';
const codeOf = (run: () => unknown): string | undefined => {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiException) return error.code;
    throw error;
  }
  return undefined;
};

describe('the order cursor', () => {
  const filter: OrderFilter = { statuses: ['pending', 'shipped'], petId: '7' };

  it('is base64url and gives back the exact position, int64 extremes included', () => {
    const cursor = encodeCursor(filter, 'id', { id: INT64_MAX });
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor, filter, 'id')).toEqual({ id: INT64_MAX });
    const dated = encodeCursor(filter, '-shipDate', {
      id: '-9223372036854775808',
      shipDate: '2026-11-22T10:00:00.123456Z',
    });
    expect(decodeCursor(dated, filter, '-shipDate')).toEqual({
      id: '-9223372036854775808',
      shipDate: '2026-11-22T10:00:00.123456Z',
    });
    const undated = encodeCursor(filter, 'shipDate', { id: '5', shipDate: null });
    expect(decodeCursor(undated, filter, 'shipDate')).toEqual({ id: '5', shipDate: null });
  });

  it('reads the cursors it wrote before, and writes the same ones', () => {
    // Written by the Buffer#toString('base64url') encoder that btoa replaced: clients may hold them.
    const issued: [string, Parameters<typeof encodeCursor>, ReturnType<typeof decodeCursor>][] = [
      [
        'WzEsIlFPVGs3YUoxS0lHT1FwdGUiLCI5MjIzMzcyMDM2ODU0Nzc1ODA3IiwiV1pydVBQT0hMZzdjdF9kWiJd',
        [filter, 'id', { id: INT64_MAX }],
        { id: INT64_MAX },
      ],
      [
        'WzEsIkpzT1pEN1plLUZQUmRBaTMiLCI0MiIsIjIwMjYtMTEtMjJUMTA6MDA6MDAuMTIzNDU2WiIsIl8xMWczTzNvOTNzSElldzUiXQ',
        [filter, '-shipDate', { id: '42', shipDate: '2026-11-22T10:00:00.123456Z' }],
        { id: '42', shipDate: '2026-11-22T10:00:00.123456Z' },
      ],
      [
        'WzEsIi1pYUpMbEdLWDc3Z2p5cXciLCI1IixudWxsLCJGTHptUWMtVEEwNlZFOE1OIl0',
        [{}, 'shipDate', { id: '5', shipDate: null }],
        { id: '5', shipDate: null },
      ],
    ];
    for (const [cursor, [cursorFilter, sort, position], decoded] of issued) {
      expect(encodeCursor(cursorFilter, sort, position)).toBe(cursor);
      expect(decodeCursor(cursor, cursorFilter, sort)).toEqual(decoded);
    }
  });

  it('is bound to the filters and the sort, not to how they were spelled', () => {
    const cursor = encodeCursor(filter, 'id', { id: '10' });
    expect(decodeCursor(cursor, { petId: '7', statuses: ['pending', 'shipped'] }, 'id')).toEqual({
      id: '10',
    });
    expect(codeOf(() => decodeCursor(cursor, filter, '-id'))).toBe('INVALID_CURSOR');
    expect(codeOf(() => decodeCursor(cursor, { ...filter, petId: '8' }, 'id'))).toBe(
      'INVALID_CURSOR',
    );
    expect(codeOf(() => decodeCursor(cursor, { statuses: ['pending'] }, 'id'))).toBe(
      'INVALID_CURSOR',
    );
  });

  it('refuses any alteration', () => {
    const cursor = encodeCursor(filter, 'id', { id: '10' });
    const json = Buffer.from(cursor, 'base64url').toString();
    const forged = Buffer.from(json.replace('"10"', '"11"')).toString('base64url');
    for (const altered of [
      forged,
      `${cursor}A`,
      cursor.slice(0, -1),
      `${cursor.slice(0, 5)}${cursor[5] === 'A' ? 'B' : 'A'}${cursor.slice(6)}`,
      `${cursor}=`,
      ` ${cursor}`,
      `${cursor.slice(0, 4)}\n${cursor.slice(4)}`,
      'not a cursor',
      '%%%%',
      Buffer.from('[1]').toString('base64url'),
    ]) {
      expect(codeOf(() => decodeCursor(altered, filter, 'id'))).toBe('INVALID_CURSOR');
    }
  });
});
