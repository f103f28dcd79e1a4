import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** The source tree (`src/` run from TypeScript, `dist/` once built): where features live. */
const FEATURES_ROOT = join(__dirname, '..');

/**
 * What a feature declares in files of its own folder for the keys tool to know: its scopes
 * (`<name>.scopes.ts`, for `create --scopes`) and its audit actions (`<name>.audit.ts`, for
 * `audit --action`); `.js` once built.
 */
const DECLARATION_FILE = /\.(scopes|audit)\.(ts|js)$/;

/**
 * Loads every feature's `*.scopes.ts` and `*.audit.ts`, so that their `defineScopes()` and
 * `defineAuditActions()` register what they declare: the keys tool runs without the application
 * (whose modules import them). Found by their place in the feature's folder, as entities and
 * migrations are: a new module adds a file, never a line here.
 */
export function loadModuleDeclarations(root: string = FEATURES_ROOT): string[] {
  const files = readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((file) => DECLARATION_FILE.test(file))
    .map((file) => join(root, file))
    .sort();
  for (const file of files) {
    // Loaded for what it registers; its exports are the feature's business.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require(file);
  }
  return files;
}
