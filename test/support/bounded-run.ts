/**
 * Runs a script's `main` (chaos, bench) and exits with its verdict: 0 when it returns true, 1 when
 * false, 2 when it throws or is still running after `hardLimitMs`. Past that limit the emergency
 * stops run first (synchronous, best effort), so nothing the script started outlives it.
 */
export function runBounded(
  name: string,
  main: () => Promise<boolean>,
  hardLimitMs: number,
  emergencyStops: readonly (() => void)[],
): void {
  // Kept referenced: an event loop that empties by mistake must not end the run with status 0.
  const hardLimit = setTimeout(() => {
    process.stderr.write(`${name}: still running after ${hardLimitMs} ms, giving up\n`);
    for (const stop of emergencyStops) {
      try {
        stop();
      } catch {
        // Best effort: already stopped.
      }
    }
    process.exit(2);
  }, hardLimitMs);

  main().then(
    (ok) => {
      clearTimeout(hardLimit);
      process.exit(ok ? 0 : 1);
    },
    (error: unknown) => {
      process.stderr.write(
        `${name}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      process.exit(2);
    },
  );
}
