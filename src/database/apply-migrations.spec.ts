import { retryPauseMs } from './apply-migrations';

describe('retryPauseMs', () => {
  it('doubles from a quarter second and stops at ten seconds', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8].map(retryPauseMs)).toEqual([
      250, 500, 1000, 2000, 4000, 8000, 10_000, 10_000,
    ]);
  });
});
