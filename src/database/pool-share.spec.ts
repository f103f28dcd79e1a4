import { PoolShare } from './pool-share';

/** A task that runs until `finish()` is called. */
function held(): { task: () => Promise<void>; started: boolean; finish: () => void } {
  let finish = (): void => undefined;
  const handle = {
    started: false,
    finish: () => finish(),
    task: () =>
      new Promise<void>((resolve) => {
        handle.started = true;
        finish = resolve;
      }),
  };
  return handle;
}

const settle = (): Promise<void> => new Promise(setImmediate);

describe('PoolShare', () => {
  it('takes half of the pool, at least one connection', () => {
    expect(PoolShare.halfOf(10).size).toBe(5);
    expect(PoolShare.halfOf(3).size).toBe(1);
    expect(PoolShare.halfOf(1).size).toBe(1);
  });

  it('runs at most its size at once, the others in the order they came', async () => {
    const share = new PoolShare(2);
    const tasks = [held(), held(), held(), held()];
    const runs = tasks.map((t) => share.run(t.task));
    await settle();
    expect(tasks.map((t) => t.started)).toEqual([true, true, false, false]);

    tasks[1].finish();
    await settle();
    expect(tasks.map((t) => t.started)).toEqual([true, true, true, false]);

    tasks[0].finish();
    tasks[2].finish();
    await settle();
    expect(tasks[3].started).toBe(true);
    tasks[3].finish();
    await Promise.all(runs);
  });

  it('gives the slot of a failed task to the next one, and passes the failure on', async () => {
    const share = new PoolShare(1);
    const failing = share.run(() => Promise.reject(new Error('statement timeout')));
    const next = held();
    const nextRun = share.run(next.task);
    await expect(failing).rejects.toThrow('statement timeout');
    await settle();
    expect(next.started).toBe(true);
    next.finish();
    await nextRun;
  });
});
