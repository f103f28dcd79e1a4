import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import request from 'supertest';
import { featureFolders, folderDrawing, withFolderDrawing } from '../scripts/architecture';
import { ADMIN_API } from '../src/admin/admin.errors';
import { errorCodeForStatus, registeredErrorCodes } from '../src/common/errors/error-code';
// Every module's settings are declared as its files load: the application's, all of them.
import '../src/app.module';
import { environmentVariableNames } from '../src/config/environment';
import {
  anchorsOf,
  brokenReason,
  documentationFiles,
  read,
  relativeLinks,
  REPO_ROOT,
  sessionSteps,
  shellBlocksUnder,
  tableRows,
} from './support/markdown';
import { startAdminApp, type AdminTestApp } from './support/admin-app';
import { expectErrorBody } from './support/client';
import { createTestApp, listen, TestApp } from './support/test-app';

/**
 * Documentation that cannot rot: links and anchors resolve, every variable and error code of the
 * code is documented (and nothing documented is unknown to it), and the README's first curl
 * session answers as shown.
 */
describe('documentation', () => {
  const files = documentationFiles();

  it('has a README and the docs/ pages it links to', () => {
    expect(files).toContain('README.md');
    expect(files.length).toBeGreaterThan(5);
  });

  it.each(files)('every relative link and anchor in %s resolves', (file) => {
    const broken = relativeLinks(file)
      .map((link) => ({ link, why: brokenReason(link, (p) => existsSync(join(REPO_ROOT, p))) }))
      .filter(({ why }) => why !== undefined)
      .map(({ link, why }) => `${link.file}:${link.line} (${link.target}): ${why}`);
    expect(broken).toEqual([]);
  });

  it('the README stays a short door (at most ~150 lines) with a table of contents into docs/', () => {
    const readme = read('README.md');
    expect(readme.split('\n').length).toBeLessThanOrEqual(160);
    const pages = new Set(relativeLinks('README.md').map((l) => l.target.split('#')[0]));
    for (const page of files.filter((f) => f.startsWith('docs/'))) {
      expect([...pages]).toContain(page);
    }
  });

  describe('docs/configuration.md', () => {
    const rows = tableRows(read('docs/configuration.md'));
    const documented = new Map(
      rows
        .map((cells) => [/^`([A-Z][A-Z0-9_]+)`$/.exec(cells[0])?.[1], cells] as const)
        .filter((entry): entry is [string, string[]] => entry[0] !== undefined),
    );
    const validated = environmentVariableNames();

    it('documents every variable the configuration validates, with its default', () => {
      expect(validated.length).toBeGreaterThan(5);
      const header = rows.find((cells) => cells.some((c) => /default/i.test(c))) ?? [];
      const defaultColumn = header.findIndex((c) => /default/i.test(c));
      expect(defaultColumn).toBeGreaterThan(0);
      for (const name of validated) {
        expect({ name, documented: documented.has(name) }).toEqual({ name, documented: true });
        expect({ name, default: documented.get(name)?.[defaultColumn] ?? '' }).toEqual({
          name,
          default: expect.stringMatching(/\S/),
        });
      }
    });

    it('documents nothing the code does not know', async () => {
      const { stdout } = await promisify(execFile)('grep', ['-rhoE', '[A-Z][A-Z0-9_]{2,}', 'src'], {
        cwd: REPO_ROOT,
        maxBuffer: 16 * 1024 * 1024,
      });
      const known = new Set(stdout.split('\n'));
      const unknown = [...documented.keys()].filter((name) => !known.has(name));
      expect(unknown).toEqual([]);
    });
  });

  describe('docs/architecture.md', () => {
    const document = read('docs/architecture.md');

    it('draws the folders as the lint places them (npm run generate writes it)', () => {
      const state = withFolderDrawing(document) === document ? 'current' : 'stale';
      expect(`docs/architecture.md is ${state}`).toBe('docs/architecture.md is current');
    });

    it('draws every folder of src/, and lays out every layer', () => {
      const folders = readdirSync(join(REPO_ROOT, 'src'), { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => entry.name);
      expect(folders.length).toBeGreaterThan(15);
      const drawing = folderDrawing();
      for (const folder of folders) {
        expect({ folder, drawn: drawing.includes(`${folder}/`) }).toEqual({ folder, drawn: true });
      }
      // A feature module's folder is laid out by its team, not here: the layers are.
      const layout = document.slice(document.indexOf('## Layout and rules'));
      for (const folder of folders.filter((name) => !featureFolders().includes(name))) {
        expect({ folder, laidOut: new RegExp(`^  ${folder}/`, 'm').test(layout) }).toEqual({
          folder,
          laidOut: true,
        });
      }
      expect(featureFolders()).toEqual(expect.arrayContaining(['orders', 'webhooks']));
    });
  });

  describe('against a running server', () => {
    let t: TestApp;
    let url: string;

    beforeAll(async () => {
      t = await createTestApp({ appOptions: { seedDemoData: true } });
      url = await listen(t);
    });
    afterAll(async () => {
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- beforeAll may have failed
      await t?.close();
    });

    it('docs/api.md names every error code the service can answer', async () => {
      // Every code a loaded module registered (the admin API's too), and every one the served
      // documents show.
      const registered = [...registeredErrorCodes(), ...registeredErrorCodes(ADMIN_API)];
      const codes = new Map(registered.map((e) => [e.code, e.status]));
      for (const path of ['/openapi/v1.json', '/openapi/v2.json']) {
        const res = await fetch(`${url}${path}`);
        if (res.status !== 200) continue;
        collectErrorCodes(await res.json(), codes);
      }
      expect(codes.size).toBeGreaterThan(8);
      const api = read('docs/api.md');
      // A stock exception's code, the status's standard name, is documented by the rule that
      // names it, whichever module throws it.
      expect(api).toContain('its standard name');
      const stock = (code: string, status: number): boolean =>
        !registered.some((e) => e.code === code) && errorCodeForStatus(status).code === code;
      const missing = [...codes]
        .filter(([code, status]) => !stock(code, status))
        .map(([code]) => code)
        .filter((code) => !api.includes(`\`${code}\``));
      expect(missing).toEqual([]);
    });

    it("the README's first curl session answers as shown", async () => {
      const blocks = shellBlocksUnder(read('README.md'), 'first session with curl');
      expect(blocks.length).toBeGreaterThan(0);
      const steps = blocks.flatMap(sessionSteps);
      const shown = steps.filter((s) => s.expected.length > 0);
      expect(shown.length).toBeGreaterThan(5);

      const outputs = await runSession(steps, url, t.key);
      steps.forEach((step, i) => {
        for (const expected of step.expected) {
          expect({ command: step.command, matches: matchesShown(expected, outputs[i]) }).toEqual({
            command: step.command,
            matches: true,
          });
        }
      });
    });
  });

  it('every page is reachable from the README in one click', () => {
    const fromReadme = new Set(relativeLinks('README.md').map((l) => l.target.split('#')[0]));
    const orphans = files.filter((f) => f.startsWith('docs/') && !fromReadme.has(f));
    expect(orphans).toEqual([]);
    expect(anchorsOf(read('README.md')).size).toBeGreaterThan(2);
  });
});

/**
 * Swagger UI at /docs serves what its page loads, and nothing else of the swagger-ui-dist folder
 * it comes from: on the API's listener and on the admin listener alike.
 */
describe("Swagger UI's files under /docs", () => {
  let t: TestApp;
  let admin: AdminTestApp;

  beforeAll(async () => {
    t = await createTestApp();
    admin = await startAdminApp(t);
  });
  afterAll(async () => {
    await admin.admin.close();
    await t.close();
  });

  const listeners = [
    ['API', () => t.http],
    ['admin', () => admin.http],
  ] as const;

  it.each(listeners)(
    "the %s listener serves Swagger UI's page and what it loads",
    async (_, http) => {
      const page = await request(http()).get('/docs').expect(200);
      const loaded = [...page.text.matchAll(/(?:href|src)="\.\/docs\/([^"]+)"/g)].map((m) => m[1]);
      expect(loaded.sort()).toEqual([
        'favicon-16x16.png',
        'favicon-32x32.png',
        'swagger-ui-bundle.js',
        'swagger-ui-init.js',
        'swagger-ui-standalone-preset.js',
        'swagger-ui.css',
      ]);
      await request(http()).get('/docs/').expect(200);
      for (const file of loaded) {
        const res = await request(http()).get(`/docs/${file}`);
        expect({ file, status: res.status }).toEqual({ file, status: 200 });
      }
    },
  );

  it.each(listeners)(
    'the %s listener answers any other file of swagger-ui-dist 404 NOT_FOUND, its version untold',
    async (_, http) => {
      for (const path of [
        '/docs/package.json',
        '/docs/%70ackage.json',
        '/docs/README.md',
        '/docs/LICENSE',
        '/docs/NOTICE',
        '/docs/index.html',
        '/docs/index.css',
        '/docs/index.js',
        '/docs/absolute-path.js',
        '/docs/oauth2-redirect.html',
        '/docs/swagger-ui.js',
        '/docs/swagger-ui-bundle.js.map',
        '/docs/swagger-ui-bundle.js.LICENSE.txt',
        '/docs/swagger-ui-es-bundle.js',
        '/docs/swagger-ui-es-bundle-core.js',
        '/docs/log.bundle-sizes.swagger-ui.txt',
        '/docs/missing.js',
      ]) {
        const res = await request(http()).get(path);
        expect({ path, status: res.status }).toEqual({ path, status: 404 });
        expectErrorBody(res, 404, 'NOT_FOUND');
        expect(res.text).not.toMatch(/swagger-ui-dist|"version"/);
      }
    },
  );
});

/** Every `code` of an Error example anywhere in an OpenAPI document. */
function collectErrorCodes(node: unknown, into: Map<string, number>): void {
  if (Array.isArray(node)) {
    node.forEach((item) => collectErrorCodes(item, into));
  } else if (typeof node === 'object' && node !== null) {
    const record = node as Record<string, unknown>;
    if (
      typeof record.code === 'string' &&
      typeof record.message === 'string' &&
      typeof record.status === 'number'
    ) {
      into.set(record.code, record.status);
    }
    Object.values(record).forEach((value) => collectErrorCodes(value, into));
  }
}

/**
 * Runs the session's commands in order in one bash, as a reader would paste them, against `url`
 * with `KEY` set; returns each command's output.
 */
async function runSession(
  steps: { command: string }[],
  url: string,
  key: string,
): Promise<string[]> {
  const marker = '@@step@@';
  const script = steps
    .filter((s) => !/^\s*export KEY=/.test(s.command))
    .map((s) => `printf '\\n${marker}\\n'\n${s.command.replaceAll('http://localhost:3000', url)}`)
    .join('\n');
  const keptIndexes = steps.flatMap((s, i) => (/^\s*export KEY=/.test(s.command) ? [] : [i]));
  const { stdout } = await promisify(execFile)('bash', ['-c', script], {
    env: { PATH: process.env.PATH ?? '', KEY: key },
    maxBuffer: 16 * 1024 * 1024,
  });
  const parts = stdout.split(`\n${marker}\n`).slice(1);
  const outputs = steps.map(() => '');
  keptIndexes.forEach((stepIndex, j) => (outputs[stepIndex] = parts[j] ?? ''));
  return outputs;
}

/** JSON as the docs show it: `...` stands for elements and members left out. */
function parseShown(text: string): unknown {
  try {
    return JSON.parse(text.replace(/,\s*\.\.\.(?=\s*[\]}])/g, ''));
  } catch {
    return undefined;
  }
}

/** Values that must be equal, not only of the same type (the rest varies from run to run). */
const EXACT = new Set(['code', 'status', 'hasMore']);

function sameShape(shown: unknown, actual: unknown, key?: string): boolean {
  if (Array.isArray(shown)) {
    return (
      Array.isArray(actual) &&
      actual.length >= shown.length &&
      shown.every((item, i) => sameShape(item, actual[i]))
    );
  }
  if (typeof shown === 'object' && shown !== null) {
    if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) return false;
    const a = actual as Record<string, unknown>;
    const s = shown as Record<string, unknown>;
    const keys = (o: object): string => Object.keys(o).sort().join(',');
    return keys(s) === keys(a) && Object.keys(s).every((k) => sameShape(s[k], a[k], k));
  }
  if (key !== undefined && EXACT.has(key)) return shown === actual;
  return typeof shown === typeof actual;
}

/** Whether a command's output shows what the docs show after it (a JSON body's shape, or a line). */
function matchesShown(expected: string, output: string): boolean {
  const shown = parseShown(expected.trim());
  if (shown !== undefined && /^[[{]/.test(expected.trim())) {
    const body = output.trim().split('\n').pop() ?? '';
    try {
      return sameShape(shown, JSON.parse(body));
    } catch {
      return false;
    }
  }
  const lines = output.split('\n').map((l) => l.replace(/\r$/, '').trim().toLowerCase());
  return lines.includes(expected.trim().toLowerCase());
}
