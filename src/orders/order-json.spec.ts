import { orderJson } from './order-json';

describe('orderJson', () => {
  it('writes every field, int64 values unquoted and exact', () => {
    expect(
      orderJson([
        '9223372036854775807',
        '-9223372036854775808',
        3,
        '2026-11-22T10:00:00.000Z',
        true,
        'shipped',
      ]),
    ).toBe(
      '{"id":9223372036854775807,"petId":-9223372036854775808,"quantity":3,"shipDate":"2026-11-22T10:00:00.000Z","complete":true,"status":"shipped"}',
    );
  });

  it('leaves out the fields whose value is null', () => {
    expect(orderJson(['1', null, null, null, false, 'pending'])).toBe(
      '{"id":1,"complete":false,"status":"pending"}',
    );
  });

  it('writes JSON that parses to the same values (where they fit a JS number)', () => {
    expect(JSON.parse(orderJson(['12', '34', 0, null, false, 'cancelled']))).toEqual({
      id: 12,
      petId: 34,
      quantity: 0,
      complete: false,
      status: 'cancelled',
    });
  });
});
