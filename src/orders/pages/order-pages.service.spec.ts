import type { PinoLogger } from 'nestjs-pino';
import type { PoolClient } from 'pg';
import { ApiException } from '../../common/errors/api.exception';
import type { OrderSettings } from '../orders.settings';
import { decodeCursor, encodeCursor } from './order-cursor';
import type { OrderCursorSecret } from './order-cursor-secret';
import type { FilterFractions, OrderFilterStatistics } from './order-page-estimate';
import type { OrderPagePool } from './order-page-pool';
import type { OrderPageQuery } from './order-page-query';
import { OrderPagesService } from './order-pages.service';

const KEY = Buffer.alloc(32, 7);
const BUDGET_MS = 400;

const row = (id: number, shipDate: string | null = null): unknown[] => [
  String(id),
  '1',
  1,
  shipDate,
  false,
  'pending',
];

const query = (over: Partial<OrderPageQuery> = {}): OrderPageQuery => ({
  filter: {},
  sort: 'id',
  limit: 2,
  search: '',
  ...over,
});

/**
 * The service over a fake pool: `answer` is what the page's statement returns (or throws), after
 * `statementMs` on the fake clock; `connectMs` is how long the connection takes, `undefined` when
 * none comes within the wait.
 */
function setUp(options: {
  answer: () => unknown[][];
  connectMs?: number;
  statementMs?: number;
  noConnection?: boolean;
  fractions?: FilterFractions;
}) {
  const released: (Error | undefined)[] = [];
  const sent: { name: string; values: unknown[] }[] = [];
  const client = {
    query: jest.fn(async (config: { name: string; values: unknown[] }) => {
      sent.push(config);
      await new Promise((resolve) => setTimeout(resolve, options.statementMs ?? 0));
      return { rows: options.answer() };
    }),
    release: (error?: Error) => released.push(error),
  } as unknown as PoolClient;
  const pool = {
    connect: async () => {
      await new Promise((resolve) => setTimeout(resolve, options.connectMs ?? 0));
      return options.noConnection ? undefined : client;
    },
  } as unknown as OrderPagePool;
  const secret = { get: () => Promise.resolve(KEY) } as unknown as OrderCursorSecret;
  const warn = jest.fn();
  const statistics = {
    get: () => Promise.resolve(options.fractions),
  } as unknown as OrderFilterStatistics;
  const service = new OrderPagesService(
    pool,
    secret,
    statistics,
    { PAGE_DATABASE_BUDGET_MS: BUDGET_MS } as OrderSettings,
    { warn } as unknown as PinoLogger,
  );
  return { service, released, sent, warn };
}

/** Runs `find` to its end on the fake clock. */
async function find(service: OrderPagesService, q: OrderPageQuery) {
  const finding = service.find(q);
  const settled = finding.then(
    () => undefined,
    () => undefined,
  );
  await jest.runAllTimersAsync();
  await settled;
  return finding;
}

describe('OrderPagesService', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('sends the scan and page limits after the statement values, and gives the connection back', async () => {
    const { service, sent, released } = setUp({ answer: () => [row(1)] });
    const page = await find(service, query({ filter: { petId: '1' }, limit: 2 }));
    expect(page).toEqual({ rows: [row(1)] });
    expect(sent[0].values).toEqual(['1', 12, 3]);
    expect(released).toEqual([undefined]);
  });

  it('lets a page filtered on a sparse status examine more, by the statistics', async () => {
    const fractions: FilterFractions = {
      status: new Map([
        ['shipped', 0.6],
        ['pending', 0.25],
        ['cancelled', 0.15],
      ]),
      complete: new Map([
        ['false', 0.52],
        ['true', 0.48],
      ]),
    };
    const { service, sent } = setUp({ answer: () => [], fractions });
    await find(service, query({ filter: { statuses: ['pending'] }, limit: 2 }));
    await find(service, query({ filter: { statuses: ['shipped'] }, limit: 2 }));
    expect(sent.map((s) => s.values.slice(-2))).toEqual([
      [5 * 3, 3],
      [4 * 3, 3],
    ]);
  });

  it('continues a full page after its last order', async () => {
    const { service } = setUp({ answer: () => [row(1), row(2), row(3)] });
    const page = await find(service, query());
    expect(page.rows).toEqual([row(1), row(2)]);
    expect(page.nextCursor).toBe(encodeCursor(KEY, {}, 'id', { id: '2', shipDate: null }));
  });

  it('continues a page whose scan reached its bound after the last order it examined', async () => {
    const filter = { statuses: ['pending' as const] };
    const { service } = setUp({
      answer: () => [
        [...row(1), true, false],
        [...row(2), false, false],
        [...row(9), false, true],
      ],
    });
    const page = await find(service, query({ filter }));
    expect(page.rows).toEqual([row(1)]);
    expect(decodeCursor(KEY, page.nextCursor ?? '', filter, 'id')).toEqual({ id: '9' });
  });

  it('ends with a scan that ended before its bound', async () => {
    const filter = { complete: false };
    const { service } = setUp({ answer: () => [[...row(1), true, false]] });
    expect(await find(service, query({ filter }))).toEqual({ rows: [row(1)] });
  });

  it('answers 503 with Retry-After when no connection comes within the budget, logging the shape', async () => {
    const { service, warn } = setUp({
      answer: () => [],
      connectMs: BUDGET_MS / 4,
      noConnection: true,
    });
    const failure = await find(service, query({ filter: { petId: '1' }, sort: '-shipDate' })).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(ApiException);
    expect((failure as ApiException).getStatus()).toBe(503);
    expect((failure as ApiException).headers).toEqual({ 'Retry-After': '10' });
    expect(warn).toHaveBeenCalledWith(
      {
        route: 'GET /v2/store/orders',
        shape: 'petId; sort=-shipDate; page 1',
        budgetMs: BUDGET_MS,
        elapsedMs: BUDGET_MS / 4,
      },
      'v2 page over its database budget',
    );
  });

  it('answers 503 when the statement timeout cancels the page, the connection kept', async () => {
    const cancelled = Object.assign(new Error('canceling statement'), { code: '57014' });
    const { service, released, warn } = setUp({
      answer: () => {
        throw cancelled;
      },
      statementMs: 300,
    });
    const failure = await find(service, query()).catch((error: unknown) => error);
    expect((failure as ApiException).getStatus()).toBe(503);
    expect(released).toEqual([undefined]);
    expect(warn.mock.calls[0][0]).toMatchObject({
      shape: 'no filter; sort=id; page 1',
      elapsedMs: 300,
    });
  });

  it('passes any other failure on, and closes its connection', async () => {
    const broken = new Error('connection terminated');
    const { service, released, warn } = setUp({
      answer: () => {
        throw broken;
      },
    });
    await expect(find(service, query())).rejects.toBe(broken);
    expect(released).toEqual([broken]);
    expect(warn).not.toHaveBeenCalled();
  });
});
