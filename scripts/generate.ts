/**
 * `npm run generate`: writes every part of the repository that is generated from the modules'
 * declarations, so that adding a module is its folder, its line in AppModule and this command:
 * docs/configuration.md's settings, docs/api.md's error codes, docs/architecture.md's folders, then the TypeScript client's types
 * from the documents the service serves (written by their drift test, which starts the service on
 * the test database). Each has a test that fails while the committed file is stale and names this
 * command.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withErrorCodeTables } from '../src/common/errors/error-code-docs';
import { withSettingsTables } from '../src/config/settings-docs';
import { withFolderDrawing } from './architecture';

const DOCS = join(__dirname, '..', 'docs');

const GENERATED: [file: string, write: (document: string) => string][] = [
  ['configuration.md', withSettingsTables],
  ['api.md', withErrorCodeTables],
  ['architecture.md', withFolderDrawing],
];

for (const [file, write] of GENERATED) {
  const path = join(DOCS, file);
  const before = readFileSync(path, 'utf8');
  const after = write(before);
  if (after !== before) writeFileSync(path, after);
  process.stdout.write(`${after === before ? 'unchanged' : 'wrote'} docs/${file}\n`);
}

execFileSync(
  process.execPath,
  [
    require.resolve('jest/bin/jest'),
    'clients/typescript/test/types.e2e-spec.ts',
    '--selectProjects',
    'e2e',
    '-t',
    'holds the types generated',
  ],
  {
    cwd: join(__dirname, '..'),
    stdio: 'inherit',
    env: { ...process.env, UPDATE_CLIENT_TYPES: '1' },
  },
);
process.stdout.write('wrote clients/typescript/src/generated/\n');
