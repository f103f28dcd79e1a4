import 'reflect-metadata';
import { Controller, Get, HttpStatus, Injectable, Module, Res } from '@nestjs/common';
import { ApiOperation, ApiProperty, ApiSchema } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Response as ExpressResponse } from 'express';
import type { Response, Test } from 'supertest';
import { DataSource } from 'typeorm';
import { JsonStreamSender } from '../src/common/http/send-json-stream';
import { ApiOperationResponses } from '../src/openapi/api-responses.decorator';
import { ApiTag } from '../src/openapi/api-tag.decorator';
import { OrderScopes } from '../src/orders/order.scopes';
import { FIRST_ORDERS_SQL, LIST_BATCH_SIZE, ORDERS_AFTER_SQL } from '../src/orders/orders.sql';
import { api } from './support/client';
import { PostgresStatementCounter } from './support/postgres-statement-counter';
import { createTestApp, createTestDatabase, type TestApp } from './support/test-app';
import { WidgetsModule } from './fixtures/widgets/widgets.module';

/** What a team's list reads (test only): a statement of its own, counted like the orders'. */
const GADGETS_SQL = 'SELECT n AS id FROM generate_series(1, 3) AS n';

@ApiSchema({ name: 'Gadget', description: 'A gadget of a list a team adds (test only).' })
class GadgetSchema {
  @ApiProperty({ type: 'integer', example: 1 })
  id!: number;
}

@Injectable()
class GadgetsService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async listAsJson(): Promise<string> {
    return JSON.stringify(await this.dataSource.query<{ id: number }[]>(GADGETS_SQL));
  }
}

/** A list route as another team adds one: its list answered through the service's sender. */
@ApiTag({ name: 'gadgets', description: 'A list a team adds (test only).' })
@Controller('gadgets')
class GadgetsController {
  constructor(
    private readonly gadgets: GadgetsService,
    private readonly sender: JsonStreamSender,
  ) {}

  @Get()
  @ApiOperation({ operationId: 'listGadgets', summary: 'List the gadgets' })
  @ApiOperationResponses({
    [HttpStatus.OK]: { description: 'Every gadget.', type: [GadgetSchema] },
  })
  async list(@Res() res: ExpressResponse): Promise<void> {
    await this.sender.send(res, () => this.gadgets.listAsJson(), {
      onError: () => undefined,
      onStall: () => undefined,
    });
  }
}

@Module({ controllers: [GadgetsController], providers: [GadgetsService] })
class GadgetsModule {}

const ORDERS = 2 * LIST_BATCH_SIZE + 500;

/**
 * Headers that differ from one response to the next whatever the method (the date, the request's
 * id, where the rate-limit window stands), or that depend on the body a HEAD does not have.
 */
const PER_RESPONSE = [
  'date',
  'x-request-id',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'retry-after',
  'content-length',
  'transfer-encoding',
  'content-encoding',
];

/** The status and the headers of a response, but for {@link PER_RESPONSE}. */
function headOf(res: Response): { status: number; headers: Record<string, string> } {
  const headers = { ...(res.headers as Record<string, string>) };
  for (const name of PER_RESPONSE) Reflect.deleteProperty(headers, name);
  return { status: res.status, headers };
}

describe('HEAD on the lists', () => {
  let t: TestApp;
  let database: PostgresStatementCounter;
  // superagent asks for gzip on a GET only: both ask alike, so that both meet the compressor.
  const sendHead = (path: string, key?: string | null): Test =>
    api(t, key).send('head', path).set('Accept-Encoding', 'gzip');
  const sendGet = (path: string, key?: string | null): Test =>
    api(t, key).get(path).set('Accept-Encoding', 'gzip');
  /** Runs of the statements that read the v1 list. */
  const listReads = (): number =>
    database.executed(FIRST_ORDERS_SQL) + database.executed(ORDERS_AFTER_SQL);

  beforeAll(async () => {
    // Through a counter of the statements the app runs: a HEAD of a list must run none of its own.
    database = await PostgresStatementCounter.start(await createTestDatabase());
    t = await createTestApp({ databaseUrl: database.url, imports: [GadgetsModule, WidgetsModule] });
    await t.db.query(
      `INSERT INTO orders (pet_id, quantity, ship_date, status)
       SELECT n, 1, now(), 'pending' FROM generate_series(1, ${ORDERS}) AS n`,
    );
  });
  afterAll(async () => {
    await t.close();
    await database.close();
  });

  it('answers HEAD /v1/store/orders the head of its GET without reading the orders', async () => {
    const before = listReads();
    const head = await sendHead('/v1/store/orders').expect(200);
    expect(listReads()).toBe(before);
    expect(head.text).toBeUndefined();

    const get = await sendGet('/v1/store/orders').expect(200);
    // The counter sees the list being read: the first rows, then a batch at a time.
    expect(listReads()).toBeGreaterThanOrEqual(before + 3);
    expect(get.body).toHaveLength(ORDERS);

    expect(headOf(head)).toEqual(headOf(get));
    expect(head.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(head.headers.link).toBe('</v2/store/orders>; rel="successor-version"');
  });

  it.each(['?limit=2', '?status=pending&sort=-id&limit=5'])(
    'answers HEAD /v2/store/orders%s the head of its GET, its Link to the next page included',
    async (query) => {
      const head = await sendHead(`/v2/store/orders${query}`)
        .set('Host', 'store.example')
        .expect(200);
      const get = await sendGet(`/v2/store/orders${query}`)
        .set('Host', 'store.example')
        .expect(200);
      expect(head.text).toBeUndefined();
      expect(head.headers.link).toMatch(
        /^<http:\/\/store\.example\/v2\/store\/orders\?.+>; rel="next"$/,
      );
      expect(headOf(head)).toEqual(headOf(get));
    },
  );

  it.each(['?limit=0', '?nope=1', '?status=pending&status=shipped', '?cursor=garbage'])(
    'answers HEAD /v2/store/orders%s with the status and headers of its GET, 400',
    async (query) => {
      const head = await sendHead(`/v2/store/orders${query}`).expect(400);
      const get = await sendGet(`/v2/store/orders${query}`).expect(400);
      expect(head.text).toBeUndefined();
      expect(headOf(head)).toEqual(headOf(get));
    },
  );

  it.each(['/v1/store/orders', '/v2/store/orders'])(
    'answers HEAD %s without a key 401, and without the scope 403, as its GET',
    async (path) => {
      const before = listReads();
      const anonymousHead = await sendHead(path, null).expect(401);
      const anonymousGet = await sendGet(path, null).expect(401);
      expect(anonymousHead.headers['www-authenticate']).toBe('Bearer realm="store-orders"');
      expect(headOf(anonymousHead)).toEqual(headOf(anonymousGet));

      const { key } = await t.keys.issue({ plan: 'pro', scopes: [OrderScopes.CANCEL] });
      const unscopedHead = await sendHead(path, key).expect(403);
      const unscopedGet = await sendGet(path, key).expect(403);
      expect(headOf(unscopedHead)).toEqual(headOf(unscopedGet));
      expect(listReads()).toBe(before);
    },
  );

  it.each(['/v1/store/orders', '/v2/store/orders'])(
    'counts HEAD %s against the key like its GET, and answers it 429 like its GET past the limit',
    async (path) => {
      const { key } = await t.keys.issue({
        plan: 'enterprise',
        limits: { perMinute: 3, perDay: 1_000 },
        scopes: [OrderScopes.READ],
      });
      const remaining: string[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await sendHead(path, key).expect(200);
        expect(res.headers['x-ratelimit-limit']).toBe('3');
        remaining.push(res.headers['x-ratelimit-remaining']);
      }
      expect(remaining).toEqual(['2', '1', '0']);
      const head = await sendHead(path, key).expect(429);
      const get = await sendGet(path, key).expect(429);
      expect(head.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
      expect(headOf(head)).toEqual(headOf(get));
    },
  );

  it("answers HEAD on a team's list by the same rule: the head of its GET, its list not read", async () => {
    const before = database.executed(GADGETS_SQL);
    const head = await sendHead('/v1/gadgets').expect(200);
    expect(database.executed(GADGETS_SQL)).toBe(before);
    const get = await sendGet('/v1/gadgets').expect(200);
    expect(database.executed(GADGETS_SQL)).toBe(before + 1);
    expect(get.body).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }]);
    expect(head.text).toBeUndefined();
    expect(headOf(head)).toEqual(headOf(get));

    expect((await sendHead('/v1/gadgets', null).expect(401)).status).toBe(401);
    expect(database.executed(GADGETS_SQL)).toBe(before + 1);
  });

  it('still runs the checks of a GET that answers one resource: HEAD of a missing widget is 404', async () => {
    const head = await sendHead('/v1/widgets/missing').expect(404);
    const get = await sendGet('/v1/widgets/missing').expect(404);
    expect(headOf(head)).toEqual(headOf(get));
    await sendHead('/v1/widgets/1').expect(200);
  });
});
