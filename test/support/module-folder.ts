/**
 * A module of test/fixtures/ added to a copy of the repository the way docs/extending.md says:
 * its folder under `src/`, and one line in AppModule's imports. Nothing else is edited.
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';

/** This repository, where the fixtures are. */
const REPO = join(__dirname, '..', '..');

/** AppModule's last import, after which a team adds its module's line. */
const LAST_IMPORT = '        WebhooksModule,\n';

/**
 * A file of the fixture as it reads in its folder under `src/` of a copy of the repository
 * (`folder` is `<copy>/src/<name>`): its relative imports that leave the folder (of the service,
 * `'../../../src/common/...'`, or of the tests' support) reach the same files of the copy from
 * its new place; those within the folder stay as they are.
 */
export async function copyModuleFile(fixture: string, folder: string, file: string): Promise<void> {
  const text = await readFile(join(fixture, file), 'utf8');
  const from = dirname(join(fixture, file));
  const to = dirname(join(folder, file));
  const copy = join(folder, '..', '..');
  const rebased = (path: string): string => {
    const inCopy = join(copy, relative(REPO, resolve(from, path)));
    const moved = relative(to, inCopy).split(sep).join('/');
    return moved.startsWith('.') ? moved : `./${moved}`;
  };
  await mkdir(to, { recursive: true });
  await writeFile(
    join(folder, file),
    text.replace(/(from |import )'(\.\.?\/[^']*)'/g, (_, before: string, path: string) =>
      resolve(from, path).startsWith(fixture + sep)
        ? `${before}'${path}'`
        : `${before}'${rebased(path)}'`,
    ),
  );
}

/** Every `.ts` file of the fixture's folder but those `leaveOut` names, copied to `folder`. */
export async function copyModuleFolder(
  fixture: string,
  folder: string,
  leaveOut: (file: string) => boolean = () => false,
): Promise<void> {
  const files = await readdir(fixture, { recursive: true });
  for (const file of files.filter((f) => f.endsWith('.ts') && !leaveOut(f))) {
    await copyModuleFile(fixture, folder, file);
  }
}

/** The module's one line in AppModule's imports (and the import of its class). */
export async function addModuleLine(src: string, moduleClass: string, file: string): Promise<void> {
  const appModule = join(src, 'app.module.ts');
  const text = await readFile(appModule, 'utf8');
  if (!text.includes(LAST_IMPORT)) throw new Error(`app.module.ts has no line ${LAST_IMPORT}`);
  await writeFile(
    appModule,
    `import { ${moduleClass} } from './${file.replace(/\.ts$/, '')}';\n` +
      text.replace(LAST_IMPORT, `${LAST_IMPORT}        ${moduleClass},\n`),
  );
}
