import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);
const ROOT = join(__dirname, '../..');

/** Runs `work` with the document written to a file in a fresh temporary directory. */
async function withDocumentFile<T>(
  document: unknown,
  work: (file: string, dir: string) => Promise<T>,
): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'openapi-'));
  try {
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(document));
    return await work(file, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `redocly lint` of the document with the repository's redocly.yaml: its JSON report. */
export function lintWithRedocly(
  document: unknown,
): Promise<{ totals: object; problems: unknown[] }> {
  return withDocumentFile(document, async (file) => {
    const { stdout } = await exec(
      process.execPath,
      [
        join(ROOT, 'node_modules/@redocly/cli/bin/cli.js'),
        'lint',
        file,
        '--config',
        join(ROOT, 'redocly.yaml'),
        '--format',
        'json',
      ],
      { env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } },
    );
    return JSON.parse(stdout) as { totals: object; problems: unknown[] };
  });
}

/** Expects `redocly lint` (the recommended rules of redocly.yaml) to find no error or warning. */
export async function expectRedoclyClean(document: unknown): Promise<void> {
  const report = await lintWithRedocly(document);
  expect(report.problems).toEqual([]);
  expect(report.totals).toEqual(expect.objectContaining({ errors: 0, warnings: 0 }));
}

interface ScopedOperation {
  description?: string;
  'x-required-scopes'?: string[];
  responses: Record<
    string,
    {
      headers?: Record<string, object>;
      content?: Record<string, { examples?: Record<string, { value: unknown }> }>;
    }
  >;
}

/**
 * Expects the orders operations of a version's document to state their scope:
 * `x-required-scopes`, the description, and the 403 `INSUFFICIENT_SCOPE` with its challenge.
 */
export function expectOrderScopesDocumented(document: object): void {
  const doc = document as {
    info: { description?: string };
    paths: Record<string, Record<string, ScopedOperation>>;
  };
  const scopes = {
    'orders:read': doc.paths['/store/orders'].get,
    'orders:cancel': doc.paths['/store/orders/{orderId}'].delete,
  };
  for (const [scope, operation] of Object.entries(scopes)) {
    expect(operation['x-required-scopes']).toEqual([scope]);
    expect(operation.description).toContain(`**Required scope:** \`${scope}\``);
    const forbidden = operation.responses['403'];
    expect(forbidden.content?.['application/json'].examples).toEqual({
      INSUFFICIENT_SCOPE: expect.objectContaining({
        value: { code: 'INSUFFICIENT_SCOPE', message: expect.stringContaining(scope), status: 403 },
      }),
    });
    expect(forbidden.headers?.['WWW-Authenticate']).toEqual(
      expect.objectContaining({
        required: true,
        description: expect.stringContaining(
          `Bearer realm="store-orders", error="insufficient_scope", scope="${scope}"`,
        ),
      }),
    );
  }
  expect(doc.info.description).toContain('`INSUFFICIENT_SCOPE` (403)');
}
