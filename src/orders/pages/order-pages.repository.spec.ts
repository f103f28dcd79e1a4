import type { PinoLogger } from 'nestjs-pino';
import type { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import type { DatabasePools } from '../../database/database-pools';
import { StatementPool } from '../../database/statement-pool';
import type { OrderSettings } from '../orders.settings';
import type { FilterFractions } from './order-page-estimate';
import { onFakeClock } from './fake-clock.fixture';
import { FILTER_STATISTICS_SQL } from './order-page.sql';
import { OrderPagesRepository, PageOverBudgetError } from './order-pages.repository';

const BUDGET_MS = 400;
const PAGE = { name: 'page.test', text: 'SELECT page' };
const STATISTICS_ROWS = [{ column: 'status', values: '{shipped,pending}', shares: [0.6, 0.4] }];

/**
 * The repository over a fake pg pool of one connection: it comes after `connectMs` on the fake
 * clock; each statement answers `answer(text)` (or throws) after `statementMs`.
 */
function setUp(options: {
  answer?: (text: string) => unknown[];
  connectMs?: number;
  statementMs?: number;
}) {
  const released: (Error | undefined)[] = [];
  const sent: { text: string; name?: string; rowMode?: string; values?: unknown[] }[] = [];
  const client = {
    query: async (
      config: string | { text: string; name: string; rowMode: string },
      values?: unknown[],
    ) => {
      const statement = typeof config === 'string' ? { text: config } : config;
      sent.push({
        text: statement.text,
        name: 'name' in statement ? statement.name : undefined,
        rowMode: 'rowMode' in statement ? statement.rowMode : undefined,
        values,
      });
      await new Promise((resolve) => setTimeout(resolve, options.statementMs ?? 0));
      return { rows: (options.answer ?? (() => []))(statement.text) };
    },
    release: (error?: Error) => released.push(error),
  };
  const pool = {
    connect: async () => {
      await new Promise((resolve) => setTimeout(resolve, options.connectMs ?? 0));
      return client;
    },
    options: { max: 1 },
    ended: false,
  } as unknown as Pool;
  const pools = { createStatementPool: () => new StatementPool(pool) } as unknown as DatabasePools;
  const repository = new OrderPagesRepository(
    pools,
    {} as DataSource,
    { PAGE_DATABASE_BUDGET_MS: BUDGET_MS, PAGE_POOL_SIZE: 1 } as OrderSettings,
    { warn: jest.fn() } as unknown as PinoLogger,
  );
  return { repository, released, sent };
}

/** Runs `pageRows` to its end on the fake clock. */
const pageRows = (
  repository: OrderPagesRepository,
  withStatistics: boolean,
  valuesOf: (fractions: FilterFractions | undefined) => unknown[] = () => [],
) => onFakeClock(repository.pageRows(PAGE, withStatistics, valuesOf));

describe('OrderPagesRepository', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('sends a page by name with its rows as arrays, and gives the connection back', async () => {
    const { repository, sent, released } = setUp({ answer: () => [['1']] });
    expect(await pageRows(repository, false, () => ['1', 12, 3])).toEqual([['1']]);
    expect(sent).toEqual([{ ...PAGE, rowMode: 'array', values: ['1', 12, 3] }]);
    expect(released).toEqual([undefined]);
  });

  it('reads the statistics on the page connection for a sparse filter, then keeps them', async () => {
    const { repository, sent } = setUp({
      answer: (text) => (text === FILTER_STATISTICS_SQL ? STATISTICS_ROWS : []),
    });
    const seen: (FilterFractions | undefined)[] = [];
    const valuesOf = (fractions: FilterFractions | undefined): unknown[] => {
      seen.push(fractions);
      return [];
    };
    await pageRows(repository, true, valuesOf);
    await pageRows(repository, true, valuesOf);
    expect(sent.map((s) => s.text)).toEqual([FILTER_STATISTICS_SQL, PAGE.text, PAGE.text]);
    expect(seen.map((fractions) => fractions?.status.get('pending'))).toEqual([0.4, 0.4]);
  });

  it('is over budget when no connection comes within a quarter of the budget; a late one goes back', async () => {
    const { repository, sent, released } = setUp({ connectMs: BUDGET_MS });
    const failure = await pageRows(repository, false).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(PageOverBudgetError);
    expect(sent).toEqual([]);
    expect(released).toEqual([undefined]);
  });

  it('is over budget when the statement timeout cancels the page, the connection kept', async () => {
    const cancelled = Object.assign(new Error('canceling statement'), { code: '57014' });
    const { repository, released } = setUp({
      answer: () => {
        throw cancelled;
      },
      statementMs: 300,
    });
    const failure = await pageRows(repository, false).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(PageOverBudgetError);
    expect((failure as Error).cause).toBe(cancelled);
    expect(released).toEqual([undefined]);
  });

  it('passes any other failure on, and closes its connection', async () => {
    const broken = new Error('connection terminated');
    const { repository, released } = setUp({
      answer: () => {
        throw broken;
      },
    });
    await expect(pageRows(repository, false)).rejects.toBe(broken);
    expect(released).toEqual([broken]);
  });
});
