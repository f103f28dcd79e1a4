import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GENERATE_COMMAND } from '../../config/generated-section';
import { errorCodeTables, withErrorCodeTables } from './error-code-docs';

const DOCUMENT = join(__dirname, '..', '..', '..', 'docs', 'api.md');

describe('docs/api.md', () => {
  it(`lists the error codes as the modules declare them (${GENERATE_COMMAND} writes it)`, () => {
    const committed = readFileSync(DOCUMENT, 'utf8');
    const state = withErrorCodeTables(committed) === committed ? 'current' : 'stale';
    expect(`docs/api.md is ${state}`).toBe('docs/api.md is current');
  });

  it("lists every module's codes, each API's in its own table", () => {
    const [api, admin] = errorCodeTables().split('### The admin API');
    expect(api).toMatch(/^\| 404 \| `ORDER_NOT_FOUND` \| /m);
    expect(api).toMatch(/^\| 503 \| `OVERLOADED` \| /m);
    expect(api).not.toContain('`KEY_NOT_FOUND`');
    expect(admin).toMatch(/^\| 404 \| `WEBHOOK_NOT_FOUND` \| /m);
    expect(admin).toMatch(/^\| 400 \| `INVALID_QUERY` \| the audit query/m);
  });
});
