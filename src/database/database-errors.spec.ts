import { QueryFailedError } from 'typeorm';
import { isConnectionLost, isDatabaseUnavailable } from './database-errors';

function withCode(code: string, message = 'boom'): Error {
  return Object.assign(new Error(message), { code });
}

describe('isDatabaseUnavailable', () => {
  it.each([
    withCode('ECONNREFUSED'),
    withCode('57P01', 'terminating connection due to administrator command'),
    withCode('57P03', 'the database system is starting up'),
    withCode('08006'),
    withCode('53300', 'too many connections'),
    withCode('57014', 'canceling statement due to statement timeout'),
    new Error('timeout exceeded when trying to connect'),
    new Error('Connection terminated unexpectedly'),
    new QueryFailedError('SELECT 1', [], withCode('57P01')),
    new Error('wrapped', { cause: withCode('ECONNRESET') }),
  ])('treats %p as the database being unavailable', (error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    withCode('42P01', 'relation "orders" does not exist'),
    withCode('23505', 'duplicate key'),
    new TypeError('x is undefined'),
    'a string',
    undefined,
  ])('treats %p as a bug, not an outage', (error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});

describe('isConnectionLost', () => {
  it.each([
    withCode('57P01', 'terminating connection due to administrator command'),
    withCode('08006'),
    withCode('ECONNRESET'),
    new Error('Connection terminated unexpectedly'),
    new QueryFailedError('SELECT 1', [], withCode('57P01')),
  ])('treats %p as a lost connection', (error) => {
    expect(isConnectionLost(error)).toBe(true);
  });

  it.each([
    withCode('42P01', 'relation "orders" does not exist'),
    withCode('57014', 'canceling statement due to statement timeout'),
    withCode('57P03', 'the database system is starting up'),
    new Error('timeout exceeded when trying to connect'),
  ])('treats %p as a failure of the statement, not of its connection', (error) => {
    expect(isConnectionLost(error)).toBe(false);
  });
});
