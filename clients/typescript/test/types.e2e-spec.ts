import { execFile } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { servicePerSuite } from './service';

const execFileAsync = promisify(execFile);

/** Runs a program; its failure says what it printed. */
async function exec(
  file: string,
  args: string[],
  options: { cwd?: string } = {},
): Promise<{ stdout: string }> {
  try {
    return await execFileAsync(file, args, options);
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`${[file, ...args].join(' ')}:\n${stdout ?? ''}${stderr ?? ''}`, {
      cause: error,
    });
  }
}
const PACKAGE = join(__dirname, '..');
const GENERATED = join(PACKAGE, 'src/generated');
const ROOT = join(PACKAGE, '../..');

describe('the TypeScript client package', () => {
  const service = servicePerSuite();
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'client-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('holds the types generated from the documents the service serves (regenerate: npm run generate)', async () => {
    const out = join(dir, 'generated');
    const script = join(PACKAGE, 'scripts/generate-types.mts');
    await exec(process.execPath, [script, service.url, service.adminUrl, out]);
    const files = readdirSync(out).sort();
    expect(files).toEqual(['admin.ts', 'int64.ts', 'v1.ts', 'v2.ts']);
    for (const file of files) {
      const generated = readFileSync(join(out, file), 'utf8');
      if (process.env.UPDATE_CLIENT_TYPES === '1') writeFileSync(join(GENERATED, file), generated);
      expect({ file, text: generated }).toEqual({
        file,
        text: readFileSync(join(GENERATED, file), 'utf8'),
      });
    }
    expect(readdirSync(GENERATED).sort()).toEqual(files);
    expect(readFileSync(join(GENERATED, 'int64.ts'), 'utf8')).toContain('["id","petId"]');
  });

  it("is versioned as the service's latest release, and packs its build alone", async () => {
    const version = (file: string): string =>
      (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
    const released = /^## \[(\d+\.\d+\.\d+)\]/m.exec(
      readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8'),
    );
    expect(version(join(PACKAGE, 'package.json'))).toBe(released?.[1]);
    expect(version(join(PACKAGE, 'package.json'))).toBe(version(join(ROOT, 'package.json')));

    // What `npm pack` would put in the tarball (without building it again under other suites).
    const { stdout } = await exec('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: PACKAGE,
    });
    const [packed] = JSON.parse(stdout) as [{ files: { path: string }[] }];
    const files = packed.files.map((file) => file.path);
    expect(files).toEqual(
      expect.arrayContaining([
        'package.json',
        'dist/esm/index.js',
        'dist/esm/index.d.ts',
        'dist/esm/package.json',
        'dist/cjs/index.js',
        'dist/cjs/index.d.ts',
      ]),
    );
    expect(files.filter((file) => !file.startsWith('dist/') && file !== 'package.json')).toEqual(
      [],
    );
  });

  it('is loaded by its name from ESM and CommonJS, typed in both, needing only openapi-fetch', async () => {
    const manifest = JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8'));
    expect(Object.keys(manifest.dependencies)).toEqual(['openapi-fetch']);
    expect(manifest.peerDependencies).toBeUndefined();

    // A program of its own, with the package installed beside it as npm links a local path.
    const program = join(dir, 'program');
    mkdirSync(join(program, 'node_modules'), { recursive: true });
    symlinkSync(PACKAGE, join(program, 'node_modules/store-orders-client'), 'dir');
    const use = `new StoreOrdersClient({ baseUrl: 'http://x', apiKey: 'k' }).orders.each({ status: 'pending' });
const failed: StoreOrdersError = new StoreOrdersError({ code: 'C', status: 400, message: 'm' });
console.log(typeof StoreOrdersClient, failed instanceof Error, failed.code);
`;
    writeFileSync(
      join(program, 'esm.mts'),
      `import { StoreOrdersClient, StoreOrdersError } from 'store-orders-client';\n${use}`,
    );
    writeFileSync(
      join(program, 'cjs.cts'),
      `import { StoreOrdersClient, StoreOrdersError } from 'store-orders-client';\n${use}`,
    );
    writeFileSync(
      join(program, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'node20',
          target: 'es2022',
          strict: true,
          types: ['node'],
          typeRoots: [join(ROOT, 'node_modules/@types')],
          outDir: 'out',
        },
        files: ['esm.mts', 'cjs.cts'],
      }),
    );
    await exec(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', program]);
    for (const file of ['esm.mjs', 'cjs.cjs']) {
      const { stdout } = await exec(process.execPath, [join(program, 'out', file)]);
      expect({ file, stdout }).toEqual({ file, stdout: 'function true C\n' });
    }
    const cjs = readFileSync(join(program, 'out/cjs.cjs'), 'utf8');
    expect(cjs).toContain('require("store-orders-client")');
  }, 120_000);
});
