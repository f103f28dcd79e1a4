import { whenReady } from './now-or-later';

describe('whenReady', () => {
  it('goes on at once with a value already there: no promise', () => {
    const seen: number[] = [];
    const result = whenReady(2, (value) => {
      seen.push(value);
      return value * 10;
    });
    expect(result).toBe(20);
    expect(seen).toEqual([2]);
  });

  it('goes on once a promise resolves', async () => {
    const result = whenReady(Promise.resolve(2), (value) => value * 10);
    expect(result).toBeInstanceOf(Promise);
    await expect(result).resolves.toBe(20);
  });

  it('passes a rejection on, and an error of the next step as it is thrown', async () => {
    const next = jest.fn();
    await expect(whenReady(Promise.reject(new Error('down')), next)).rejects.toThrow('down');
    expect(next).not.toHaveBeenCalled();
    expect(() =>
      whenReady(1, () => {
        throw new Error('refused');
      }),
    ).toThrow('refused');
  });
});
