import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** The source tree (`src/` run from TypeScript, `dist/` once built): where modules live. */
export const MODULES_ROOT = join(__dirname, '..');

/**
 * Loads every file under the source tree whose name ends in `.<kind>.ts` (`.js` once built), for
 * what it declares when it loads (`defineSettings`, `defineErrorCodes` ...): start-up, the tools
 * and the generated docs know every module's declarations without a list kept anywhere. Found by
 * their place in the module's folder, as entities and migrations are.
 */
export function loadDeclarations(kind: string, root: string = MODULES_ROOT): void {
  const file = new RegExp(`\\.${kind}\\.(ts|js)$`);
  const files = readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((name) => file.test(name))
    .sort();
  for (const name of files) {
    // Loaded for what it declares.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require(join(root, name));
  }
}
