/**
 * The releases after this one, as a team would ship them: the repository with the order
 * priorities module (test/fixtures/order-priorities) added the way docs/extending.md says, its
 * folder under `src/` and one line in AppModule's imports. The next release carries the module and
 * its expand migration; the one after adds the contract migration. Both are built from
 * docker/Dockerfile like the current image, so every layer but the compiled code comes from the
 * build cache.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { buildImage, copyBuildContext, ROOT } from './stack';

const FIXTURE = join(ROOT, 'test/fixtures/order-priorities');
const FOLDER = 'order-priorities';
export const EXPAND_MIGRATION = 'ExpandOrderPriorities1765000000000';
export const CONTRACT_MIGRATION = 'ContractOrderPriorities1765100000000';
const CONTRACT_FILE = 'migrations/1765100000000-contract-order-priorities.ts';

/** AppModule's last import, after which a team adds its module's line. */
const LAST_IMPORT = '        WebhooksModule,\n';

/**
 * A file of the fixture as it reads under `src/<folder>/`: its imports of the service reach
 * `src/` from `test/fixtures/<folder>/`, three folders up.
 */
async function copyFixtureFile(src: string, file: string): Promise<void> {
  const text = await readFile(join(FIXTURE, file), 'utf8');
  const target = join(src, FOLDER, file);
  await mkdir(dirname(target), { recursive: true });
  await writeFile(target, text.replaceAll("'../../../src/", "'../"));
}

/** The module's folder, but for the contract migration, and its line in AppModule. */
async function addModule(src: string): Promise<void> {
  const files = await readdir(FIXTURE, { recursive: true });
  for (const file of files.filter((f) => f.endsWith('.ts') && f !== CONTRACT_FILE)) {
    await copyFixtureFile(src, file);
  }
  const appModule = join(src, 'app.module.ts');
  const text = await readFile(appModule, 'utf8');
  if (!text.includes(LAST_IMPORT)) throw new Error(`app.module.ts has no line ${LAST_IMPORT}`);
  await writeFile(
    appModule,
    `import { OrderPrioritiesModule } from './${FOLDER}/order-priorities.module';\n` +
      text.replace(LAST_IMPORT, `${LAST_IMPORT}        OrderPrioritiesModule,\n`),
  );
}

/**
 * Builds the next release (`next`: the module and its expand migration) and the one after
 * (`after`: its contract migration too) from a scratch copy of the repository.
 */
export async function buildNextReleases(tags: { next: string; after: string }): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'store-orders-release-'));
  try {
    await copyBuildContext(dir);
    await addModule(join(dir, 'src'));
    await buildImage(tags.next, dir);
    await copyFixtureFile(join(dir, 'src'), CONTRACT_FILE);
    await buildImage(tags.after, dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
