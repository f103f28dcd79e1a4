/**
 * What `work` comes to once jest's fake clock has run every timer it needs: a page's wait for a
 * connection and its statement, faked in the pages' unit specs.
 */
export async function onFakeClock<T>(work: Promise<T>): Promise<T> {
  const settled = work.then(
    () => undefined,
    () => undefined,
  );
  await jest.runAllTimersAsync();
  await settled;
  return work;
}
