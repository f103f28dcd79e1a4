import { createHash } from 'node:crypto';
import { ApiException } from '../../common/errors/api.exception';
import { decodeCursor, encodeCursor } from './order-cursor';
import type { OrderFilter } from './order-page-query';

const INT64_MAX = '9223372036854775807';
const KEY = Buffer.from('a deployment secret of at least thirty-two characters');
const OTHER_KEY = Buffer.from('another deployment secret, thirty-two characters on');
const codeOf = (run: () => unknown): string | undefined => {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiException) return error.code;
    throw error;
  }
  return undefined;
};

/** A cursor as anyone could write one: base64url of JSON, the check of version 1 recomputed. */
function minted(payload: unknown[]): string {
  const digest = (text: string): string =>
    createHash('sha256').update(text).digest('base64url').slice(0, 16);
  return Buffer.from(JSON.stringify([...payload, digest(JSON.stringify(payload))])).toString(
    'base64url',
  );
}

describe('the order cursor', () => {
  const filter: OrderFilter = { statuses: ['pending', 'shipped'], petId: '7' };

  it('is base64url and gives back the exact position, int64 extremes included', () => {
    const cursor = encodeCursor(KEY, filter, 'id', { id: INT64_MAX });
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(KEY, cursor, filter, 'id')).toEqual({ id: INT64_MAX });
    const dated = encodeCursor(KEY, filter, '-shipDate', {
      id: '-9223372036854775808',
      shipDate: '2026-11-22T10:00:00.123456Z',
    });
    expect(decodeCursor(KEY, dated, filter, '-shipDate')).toEqual({
      id: '-9223372036854775808',
      shipDate: '2026-11-22T10:00:00.123456Z',
    });
    const undated = encodeCursor(KEY, filter, 'shipDate', { id: '5', shipDate: null });
    expect(decodeCursor(KEY, undated, filter, 'shipDate')).toEqual({ id: '5', shipDate: null });
  });

  it('is refused by another deployment (another secret)', () => {
    const cursor = encodeCursor(KEY, filter, 'id', { id: '10' });
    expect(codeOf(() => decodeCursor(OTHER_KEY, cursor, filter, 'id'))).toBe('INVALID_CURSOR');
  });

  it('refuses the unsigned cursors of version 1, which anyone could make', () => {
    // Issued by the previous version for `filter`, sort id, after order 9223372036854775807.
    const issued =
      'WzEsIlFPVGs3YUoxS0lHT1FwdGUiLCI5MjIzMzcyMDM2ODU0Nzc1ODA3IiwiV1pydVBQT0hMZzdjdF9kWiJd';
    expect(codeOf(() => decodeCursor(KEY, issued, filter, 'id'))).toBe('INVALID_CURSOR');
  });

  it('is bound to the filters and the sort, not to how they were spelled', () => {
    const cursor = encodeCursor(KEY, filter, 'id', { id: '10' });
    expect(
      decodeCursor(KEY, cursor, { petId: '7', statuses: ['pending', 'shipped'] }, 'id'),
    ).toEqual({ id: '10' });
    expect(codeOf(() => decodeCursor(KEY, cursor, filter, '-id'))).toBe('INVALID_CURSOR');
    expect(codeOf(() => decodeCursor(KEY, cursor, { ...filter, petId: '8' }, 'id'))).toBe(
      'INVALID_CURSOR',
    );
    expect(codeOf(() => decodeCursor(KEY, cursor, { statuses: ['pending'] }, 'id'))).toBe(
      'INVALID_CURSOR',
    );
  });

  it('refuses any alteration', () => {
    const cursor = encodeCursor(KEY, filter, 'id', { id: '10' });
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
      minted([1, 'QOTk7aJ1KIGOQpte', '11']),
    ]) {
      expect(codeOf(() => decodeCursor(KEY, altered, filter, 'id'))).toBe('INVALID_CURSOR');
    }
  });

  it.each([
    ['30 February', '2026-02-30T00:00:00.000000Z'],
    ['month 13', '2026-13-01T00:00:00.000000Z'],
    ['year 0000', '0000-01-01T00:00:00.000000Z'],
    ['hour 24', '2026-01-01T24:00:00.000000Z'],
    ['no microseconds', '2026-01-01T00:00:00Z'],
  ])('refuses a ship date that is no instant (%s), even signed', (_what, shipDate) => {
    const cursor = encodeCursor(KEY, filter, 'shipDate', { id: '10', shipDate });
    expect(codeOf(() => decodeCursor(KEY, cursor, filter, 'shipDate'))).toBe('INVALID_CURSOR');
  });

  it('takes 29 February of a leap year', () => {
    const shipDate = '2028-02-29T23:59:59.999999Z';
    const cursor = encodeCursor(KEY, filter, 'shipDate', { id: '10', shipDate });
    expect(decodeCursor(KEY, cursor, filter, 'shipDate')).toEqual({ id: '10', shipDate });
  });
});
