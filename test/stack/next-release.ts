/**
 * The releases after this one, as a team would ship them: the repository with the order
 * priorities module (test/fixtures/order-priorities) added the way docs/extending.md says, its
 * folder under `src/` and one line in AppModule's imports. The next release carries the module and
 * its expand migration; the one after adds the contract migration. Both are built from
 * docker/Dockerfile like the current image, so every layer but the compiled code comes from the
 * build cache.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addModuleLine, copyModuleFile, copyModuleFolder } from '../support/module-folder';
import { buildImage, copyBuildContext, ROOT } from './stack';

const FIXTURE = join(ROOT, 'test/fixtures/order-priorities');
const FOLDER = 'order-priorities';
export const EXPAND_MIGRATION = 'ExpandOrderPriorities1765000000000';
export const CONTRACT_MIGRATION = 'ContractOrderPriorities1765100000000';
const CONTRACT_FILE = 'migrations/1765100000000-contract-order-priorities.ts';

/**
 * Builds the next release (`next`: the module and its expand migration) and the one after
 * (`after`: its contract migration too) from a scratch copy of the repository.
 */
export async function buildNextReleases(tags: { next: string; after: string }): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'store-orders-release-'));
  try {
    await copyBuildContext(dir);
    const folder = join(dir, 'src', FOLDER);
    // The module's folder, but for the contract migration, and its line in AppModule.
    await copyModuleFolder(FIXTURE, folder, (file) => file === CONTRACT_FILE);
    await addModuleLine(
      join(dir, 'src'),
      'OrderPrioritiesModule',
      `${FOLDER}/order-priorities.module.ts`,
    );
    await buildImage(tags.next, dir);
    await copyModuleFile(FIXTURE, folder, CONTRACT_FILE);
    await buildImage(tags.after, dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
