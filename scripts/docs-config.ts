/**
 * Writes docs/configuration.md's tables of variables from the modules' declarations
 * (`src/<module>/<name>.settings.ts`): `npm run docs:config`. A unit test fails while the
 * committed file differs from what this writes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withSettingsTables } from '../src/config/settings-docs';

const FILE = join(__dirname, '..', 'docs', 'configuration.md');
writeFileSync(FILE, withSettingsTables(readFileSync(FILE, 'utf8')));
process.stdout.write(`Wrote ${FILE}\n`);
