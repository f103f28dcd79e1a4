/**
 * The messages logged through `spy` (a spy on a PinoLogger method, e.g.
 * `jest.spyOn(PinoLogger.prototype, 'warn')`: every logger of this process) that match `pattern`.
 */
export function said(spy: jest.SpyInstance, pattern: RegExp): string[] {
  return (spy.mock.calls as unknown[][]).flatMap((args) =>
    args.filter((arg): arg is string => typeof arg === 'string' && pattern.test(arg)),
  );
}
