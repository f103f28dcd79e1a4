import { execFileSync } from 'node:child_process';

/**
 * Whether a system binary a suite needs is installed. On a developer's machine a missing one skips
 * the suite with a clear line naming the Debian package; with CI=true it fails the run, so CI
 * always runs everything.
 */
export function hasSystemBinary(binary: string, aptPackage: string, suite: string): boolean {
  try {
    execFileSync('which', [binary], { stdio: 'ignore' });
    return true;
  } catch {
    const message = `${suite}: '${binary}' is not installed (apt-get install -y ${aptPackage})`;
    if (process.env.CI === 'true') throw new Error(`${message}; CI=true requires it`);
    process.stdout.write(`SKIPPED ${message}\n`);
    return false;
  }
}

/** `describe` when the binary is there, `describe.skip` (after the SKIPPED line) when it is not. */
export function describeWithBinary(binary: string, aptPackage: string) {
  return (name: string, fn: () => void): void => {
    (hasSystemBinary(binary, aptPackage, name) ? describe : describe.skip)(name, fn);
  };
}
