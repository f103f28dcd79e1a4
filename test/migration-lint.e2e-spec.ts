import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const ROOT = join(__dirname, '..');

/** `npm run lint`'s migration step, with the migrations of `folders` beside the service's. */
async function lintMigrations(...folders: string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(
      'node',
      ['--require', '@swc-node/register', 'scripts/lint-migrations.ts', ...folders],
      { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' } },
    );
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, output: failed.stdout + failed.stderr };
  }
}

describe('the migration lint (Squawk)', () => {
  it("passes the service's migrations, excused statements included, and the worked example's", async () => {
    const { code, output } = await lintMigrations('test/fixtures/order-priorities/migrations');
    expect(output).toMatch(/Squawk: \d+ migrations clean/);
    expect(code).toBe(0);
  });

  it("fails a new migration that breaks a rule, with Squawk's message naming it", async () => {
    const { code, output } = await lintMigrations('test/fixtures/unsafe-migration');
    expect(code).toBe(1);
    expect(output).toContain('require-concurrent-index-creation');
    expect(output).toContain('IndexOrderQuantities1799000000000.sql');
    expect(output).toContain('CREATE INDEX "IDX_orders_quantity" ON "orders" ("quantity")');
    expect(output).toMatch(/Squawk found problems in the migrations' SQL/);
  });
});
