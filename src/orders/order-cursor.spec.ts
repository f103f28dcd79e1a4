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
      'not a cursor',
      Buffer.from('[1]').toString('base64url'),
    ]) {
      expect(codeOf(() => decodeCursor(altered, filter, 'id'))).toBe('INVALID_CURSOR');
    }
  });
});
