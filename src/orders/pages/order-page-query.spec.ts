import { ApiException } from '../../common/errors/api.exception';
import { parseOrderPageQuery } from './order-page-query';

describe('parseOrderPageQuery', () => {
  it('gives the defaults for an empty query', () => {
    expect(parseOrderPageQuery('')).toEqual({ filter: {}, sort: 'id', limit: 100, search: '' });
  });

  it('parses every parameter into the typed filter', () => {
    const search =
      'status=shipped,pending&petId=0009223372036854775807&complete=false' +
      '&shipDateFrom=2026-11-22T11:00:00%2B01:00&shipDateTo=2026-11-23T00:00:00.5Z' +
      '&sort=-shipDate&limit=1000&cursor=abc';
    expect(parseOrderPageQuery(search)).toEqual({
      filter: {
        statuses: ['pending', 'shipped'],
        petId: '9223372036854775807',
        complete: false,
        shipDateFrom: '2026-11-22T10:00:00.000000Z',
        shipDateTo: '2026-11-23T00:00:00.500000Z',
      },
      sort: '-shipDate',
      limit: 1000,
      cursor: 'abc',
      search,
    });
  });

  it.each([
    ['foo=1', 'foo'],
    ['limit=1&limit=2', 'limit'],
    ['status=', 'status'],
    ['status=pending,pending', 'status'],
    ['limit=0', 'limit'],
    ['shipDateFrom=2026-11-22T10:00:00Z&shipDateTo=2026-11-22T10:00:00Z', 'shipDateFrom'],
  ])('refuses %s, naming %s', (search, name) => {
    let error: unknown;
    try {
      parseOrderPageQuery(search);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ApiException);
    expect((error as ApiException).code).toBe('INVALID_QUERY');
    expect((error as ApiException).message).toContain(name);
  });
});
