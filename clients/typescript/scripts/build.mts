// Builds dist/: ES modules (dist/esm) and CommonJS (dist/cjs), each with its declarations, by
// running the TypeScript compiler once per module format.
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

rmSync(join(root, 'dist'), { recursive: true, force: true });
for (const config of ['tsconfig.esm.json', 'tsconfig.cjs.json']) {
  execFileSync(process.execPath, [tsc, '-p', join(root, config)], { stdio: 'inherit' });
}
// The package's .js files are CommonJS: this marks dist/esm's (and their .d.ts) as ES modules.
writeFileSync(join(root, 'dist/esm/package.json'), '{ "type": "module" }\n');
