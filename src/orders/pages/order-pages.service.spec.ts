import type { PinoLogger } from 'nestjs-pino';
import { ApiException } from '../../common/errors/api.exception';
import type { OrderSettings } from '../orders.settings';
import { decodeCursor, encodeCursor } from './order-cursor';
import type { OrderCursorSecret } from './order-cursor-secret';
import type { FilterFractions } from './order-page-estimate';
import { onFakeClock } from './fake-clock.fixture';
import type { OrderPageQuery } from './order-page-query';
import { type OrderPagesRepository, PageOverBudgetError } from './order-pages.repository';
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
 * The service over a fake repository: `answer` is what the page's statement returns (or throws),
 * after `statementMs` on the fake clock; with `overBudgetAfterMs`, the repository gives up on the
 * page's budget then instead. `fractions` are the statistics it reads for a sparse filter.
 */
function setUp(options: {
  answer: () => unknown[][];
  statementMs?: number;
  overBudgetAfterMs?: number;
  fractions?: FilterFractions;
}) {
  const sent: { name: string; values: unknown[]; withStatistics: boolean }[] = [];
  const pages = {
    pageRows: async (
      statement: { name: string },
      withStatistics: boolean,
      valuesOf: (fractions: FilterFractions | undefined) => unknown[],
    ) => {
      const { overBudgetAfterMs } = options;
      if (overBudgetAfterMs !== undefined) {
        await new Promise((resolve) => setTimeout(resolve, overBudgetAfterMs));
        throw new PageOverBudgetError(new Error('no connection within 100 ms'));
      }
      const values = valuesOf(withStatistics ? options.fractions : undefined);
      sent.push({ name: statement.name, values, withStatistics });
      await new Promise((resolve) => setTimeout(resolve, options.statementMs ?? 0));
      return options.answer();
    },
  } as unknown as OrderPagesRepository;
  const secret = { get: () => Promise.resolve(KEY) } as unknown as OrderCursorSecret;
  const warn = jest.fn();
  const service = new OrderPagesService(
    pages,
    secret,
    { PAGE_DATABASE_BUDGET_MS: BUDGET_MS } as OrderSettings,
    { warn } as unknown as PinoLogger,
  );
  return { service, sent, warn };
}

/** Runs `find` to its end on the fake clock. */
const find = (service: OrderPagesService, q: OrderPageQuery) => onFakeClock(service.find(q));

describe('OrderPagesService', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('sends the scan and page limits after the statement values, reading no statistics for an indexed filter', async () => {
    const { service, sent } = setUp({ answer: () => [row(1)] });
    const page = await find(service, query({ filter: { petId: '1' }, limit: 2 }));
    expect(page).toEqual({ rows: [row(1)] });
    expect(sent[0].values).toEqual(['1', 12, 3]);
    expect(sent[0].withStatistics).toBe(false);
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
    expect(sent.map((s) => s.withStatistics)).toEqual([true, true]);
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

  it('answers 503 with Retry-After when the page runs out of its budget, logging the shape', async () => {
    const { service, warn } = setUp({ answer: () => [], overBudgetAfterMs: BUDGET_MS / 4 });
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

  it('passes any other failure on, unlogged', async () => {
    const broken = new Error('connection terminated');
    const { service, warn } = setUp({
      answer: () => {
        throw broken;
      },
    });
    await expect(find(service, query())).rejects.toBe(broken);
    expect(warn).not.toHaveBeenCalled();
  });
});
