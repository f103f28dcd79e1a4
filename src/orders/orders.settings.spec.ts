import { InvalidEnvironmentError, validateEnvironment } from '../config/environment';
import { orderSettings } from './orders.settings';

/** The problems start-up validation finds (the service's variables and every module's). */
const problemsOf = (env: Record<string, string>): string[] => {
  try {
    validateEnvironment(env);
    return [];
  } catch (error) {
    return error instanceof InvalidEnvironmentError ? error.problems : [String(error)];
  }
};

const naming = (name: string): unknown =>
  expect.arrayContaining([expect.stringContaining(name)]) as unknown;

describe('the orders settings', () => {
  it('signs cursors with CURSOR_SECRET when given one of 32 characters or more, and bounds a page by PAGE_DATABASE_BUDGET_MS', () => {
    expect(orderSettings.read({})).toMatchObject({
      CURSOR_SECRET: undefined,
      PAGE_DATABASE_BUDGET_MS: 1000,
    });
    const secret = 'x'.repeat(32);
    expect(orderSettings.read({ CURSOR_SECRET: secret }).CURSOR_SECRET).toBe(secret);
    expect(problemsOf({ CURSOR_SECRET: 'x'.repeat(31) })).toEqual(naming('CURSOR_SECRET'));
    expect(problemsOf({ CURSOR_SECRET: `${'x'.repeat(32)} y` })).toEqual(naming('CURSOR_SECRET'));
    expect(orderSettings.read({ PAGE_DATABASE_BUDGET_MS: '250' }).PAGE_DATABASE_BUDGET_MS).toBe(
      250,
    );
    expect(problemsOf({ PAGE_DATABASE_BUDGET_MS: '10' })).toEqual(
      naming('PAGE_DATABASE_BUDGET_MS'),
    );
  });

  it('opens PAGE_POOL_SIZE connections for the pages, 5 unless told, 1 to 200', () => {
    expect(orderSettings.read({}).PAGE_POOL_SIZE).toBe(5);
    expect(orderSettings.read({ PAGE_POOL_SIZE: '3' }).PAGE_POOL_SIZE).toBe(3);
    expect(problemsOf({ PAGE_POOL_SIZE: '0' })).toEqual(
      naming('PAGE_POOL_SIZE must be an integer between 1 and 200'),
    );
    expect(problemsOf({ PAGE_POOL_SIZE: '201' })).toEqual(naming('PAGE_POOL_SIZE'));
  });

  it('are validated with the service’s own, every bad variable named at once', () => {
    const problems = problemsOf({ PORT: 'x', PAGE_POOL_SIZE: 'many', CURSOR_SECRET: 'short' });
    expect(problems).toEqual(naming('PORT'));
    expect(problems).toEqual(naming('PAGE_POOL_SIZE'));
    expect(problems).toEqual(naming('CURSOR_SECRET'));
  });
});
