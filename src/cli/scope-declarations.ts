import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** The source tree (`src/` run from TypeScript, `dist/` once built): where features live. */
const FEATURES_ROOT = join(__dirname, '..');

/** A feature's scopes file: `src/<feature>/<name>.scopes.ts` (`.js` once built). */
const SCOPES_FILE = /\.scopes\.(ts|js)$/;

/**
 * Loads every feature's `*.scopes.ts`, so that their `defineScopes()` register the scopes: the
 * keys tool runs without the application (whose controllers import them), yet must know every
 * scope a key can be restricted to. Found by their place in the feature's folder, as entities and
 * migrations are: a new module adds a file, never a line here.
 */
export function loadScopeDeclarations(root: string = FEATURES_ROOT): string[] {
  const files = readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((file) => SCOPES_FILE.test(file))
    .map((file) => join(root, file))
    .sort();
  for (const file of files) {
    // Loaded for what it registers; its exports are the feature's business.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require(file);
  }
  return files;
}
