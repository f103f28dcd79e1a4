import fc from 'fast-check';
import { expectErrorBody } from './support/client';
import { adminAppPerSuite, type AdminMethod } from './support/admin-app';

/** The admin listener's body limit: past it, 413 before any check of the body. */
const BODY_LIMIT = 16 * 1024;

/** The fields of the admin bodies, and names that must never be taken for one. */
const FIELDS = [
  ...['plan', 'name', 'perMinute', 'perDay', 'expiresAt', 'scopes', 'graceSeconds'],
  ...['url', 'events', 'description', 'disabled'],
];
const PROTOTYPE_NAMES = ['__proto__', 'constructor', 'prototype'];

/** Strings near the rules (plans, scopes, times) and far from them (controls, surrogates). */
const oddString = fc.oneof(
  fc.constantFrom(
    ...['free', 'pro', 'business', 'enterprise', 'orders:read', 'orders:cancel', 'keys:admin', '*'],
    ...['2099-01-01T00:00:00Z', '2001-01-01T00:00:00Z', '', ' ', 'a\u0000b', '\u001b]0;x\u0007'],
    ...['\u007f', '\u0085', '\u009b', '\ud800', '\udfff\ud800', '\u2028', '\ufeff', '𝒳'],
    ...FIELDS,
    ...PROTOTYPE_NAMES,
  ),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'binary-ascii', maxLength: 40 }),
  fc.string({ unit: fc.constantFrom('a', '\u0000', '\u001f', '\u007f', '\u0080', '\ud800', 'é') }),
  fc.string({ unit: 'grapheme', minLength: 190, maxLength: 210 }),
);

/** JSON text for `depth` arrays or objects around `leaf`: nesting far past any schema. */
const deepText = fc
  .record({
    array: fc.boolean(),
    depth: fc.integer({ min: 1, max: 7_000 }),
    leaf: fc.oneof(fc.json({ maxDepth: 2 }), fc.constant('"orders:read"')),
  })
  .map(({ array, depth, leaf }) =>
    array
      ? `${'['.repeat(depth)}${leaf}${']'.repeat(depth)}`
      : // An object a level is 5 bytes more: fewer levels, to stay mostly under the limit.
        `${'{"a":'.repeat(Math.ceil(depth / 3))}${leaf}${'}'.repeat(Math.ceil(depth / 3))}`,
  );

/** A field's value as JSON text. */
const valueText = fc.oneof(
  oddString.map((s) => JSON.stringify(s)),
  fc
    .oneof(fc.integer(), fc.double(), fc.boolean(), fc.constant(null))
    .map((v) => JSON.stringify(v)),
  fc.integer({ min: -1, max: 2 ** 53 }).map(String),
  fc.json({ maxDepth: 4 }),
  fc.array(oddString, { maxLength: 4 }).map((a) => JSON.stringify(a)),
  deepText,
);

/**
 * An object of the admin bodies' field names (and others, the prototype's included) with odd
 * values, written as text: a `__proto__` key stays a key, as a client can send it.
 */
const fieldsText = fc
  .array(
    fc.tuple(
      fc.oneof(
        { arbitrary: fc.constantFrom(...FIELDS), weight: 6 },
        { arbitrary: fc.constantFrom(...PROTOTYPE_NAMES), weight: 2 },
        { arbitrary: oddString, weight: 1 },
      ),
      valueText,
    ),
    { maxLength: 6 },
  )
  .map((pairs) => `{${pairs.map(([key, value]) => `${JSON.stringify(key)}:${value}`).join(',')}}`);

/** A field's value: mostly one its rules take, else an odd one (deep ones are above). */
const mostly = <T>(valid: fc.Arbitrary<T>): fc.Arbitrary<unknown> =>
  fc.oneof({ arbitrary: valid, weight: 8 }, oddString, fc.jsonValue({ maxDepth: 3 }));

type Route = 'create' | 'rotate' | 'unban';

/** Bodies valid but for a field or two, where an odd value gets furthest: by route. */
const nearlyValid: Record<Route, fc.Arbitrary<string>> = {
  // Limits go with enterprise (both) and with no other plan.
  create: fc.constantFrom('free', 'pro', 'business', 'enterprise').chain((plan) =>
    fc
      .record(
        {
          plan: mostly(fc.constant(plan)),
          name: mostly(fc.string({ minLength: 1, maxLength: 20 })),
          expiresAt: mostly(fc.constant('2099-01-01T00:00:00Z')),
          scopes: mostly(
            fc.subarray(['orders:read', 'orders:cancel', 'keys:admin', '*'], { minLength: 1 }),
          ),
          ...(plan === 'enterprise'
            ? {
                perMinute: mostly(fc.integer({ min: 1, max: 1_000 })),
                perDay: mostly(fc.integer({ min: 1, max: 100_000 })),
              }
            : {}),
        },
        { requiredKeys: plan === 'enterprise' ? ['plan', 'perMinute', 'perDay'] : ['plan'] },
      )
      .map((body) => JSON.stringify(body)),
  ),
  rotate: fc
    .record({ graceSeconds: mostly(fc.integer({ min: 0, max: 86_400 })) }, { requiredKeys: [] })
    .map((body) => JSON.stringify(body)),
  unban: fc.constantFrom('{}', ''),
};

/** A body: any JSON, the fields' objects, deep nesting, or text that is no JSON at all. */
const bodyText = fc.oneof(
  { arbitrary: fieldsText, weight: 6 },
  { arbitrary: fc.json(), weight: 2 },
  { arbitrary: fc.jsonValue().map((v) => JSON.stringify(v)), weight: 1 },
  { arbitrary: deepText, weight: 1 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 60 }), weight: 1 },
);

/** A route and a body: any body, or one nearly valid for the route. */
const request = fc.constantFrom<Route>('create', 'rotate', 'unban').chain((route) =>
  fc.record({
    route: fc.constant(route),
    body: fc.oneof(bodyText, nearlyValid[route]),
    json: fc.oneof({ arbitrary: fc.constant(true), weight: 9 }, fc.constant(false)),
  }),
);

/** A refusal past the body limit is 413, any other 400 INVALID_BODY. */
function expectRefused(res: Parameters<typeof expectErrorBody>[0], body: string): void {
  if (Buffer.byteLength(body) > BODY_LIMIT) expectErrorBody(res, 413, 'PAYLOAD_TOO_LARGE');
  else expectErrorBody(res, 400, 'INVALID_BODY');
}

describe('admin bodies, whatever a client sends', () => {
  // An app and database of its own: the keys this issues slow no other suite.
  const a = adminAppPerSuite();

  it('are never answered 500: a refusal is 400 INVALID_BODY (413 past 16 KiB)', async () => {
    // Rotations go to the newest key of the family, so that a valid one is always 201.
    let id = (
      (await a.call('post', '/admin/v1/keys').send({ plan: 'free' })).body as { id: string }
    ).id;
    await fc.assert(
      fc.asyncProperty(request, async ({ route, body, json }) => {
        const path =
          route === 'create'
            ? '/admin/v1/keys'
            : route === 'rotate'
              ? `/admin/v1/keys/${id}/rotate`
              : `/admin/v1/keys/${id}/unban`;
        const res = await a
          .call('post', path)
          .set('Content-Type', json ? 'application/json' : 'text/plain')
          .send(body);
        a.check('post', path, res);
        if (res.status < 300) {
          expect(res.status).toBe(route === 'unban' ? 204 : 201);
          if (route === 'rotate') id = (res.body as { id: string }).id;
        } else {
          expectRefused(res, body);
        }
      }),
      { numRuns: 250 },
    );
  });
});

/** Endpoint URLs the rules take here (loopback allowed, no name to resolve), and near misses. */
const URLS = [
  'http://127.0.0.1:9/hook',
  'https://127.0.0.1/hook',
  'https://[::1]:8443/',
  'ftp://127.0.0.1/',
  'https://user:pw@127.0.0.1/',
  'https://',
];
const EVENT_TYPES = [
  'order.cancelled',
  'key.created',
  'key.rotated',
  'key.revoked',
  'webhook.test',
];

type WebhookRoute = 'create' | 'change' | 'rotate' | 'test' | 'retry';

const nearlyValidWebhook: Record<WebhookRoute, fc.Arbitrary<string>> = {
  create: fc
    .record(
      {
        url: mostly(fc.constantFrom(...URLS)),
        events: mostly(fc.subarray(EVENT_TYPES, { minLength: 1 })),
        description: mostly(fc.string({ maxLength: 40 })),
      },
      { requiredKeys: ['url', 'events'] },
    )
    .map((body) => JSON.stringify(body)),
  change: fc
    .record(
      {
        url: mostly(fc.constantFrom(...URLS)),
        events: mostly(fc.subarray(EVENT_TYPES, { minLength: 1 })),
        description: mostly(fc.string({ maxLength: 40 })),
        disabled: mostly(fc.boolean()),
      },
      { requiredKeys: [] },
    )
    .map((body) => JSON.stringify(body)),
  // Up to the longest grace a rotation takes: 100 years of seconds, past a 32-bit integer.
  rotate: fc
    .record(
      {
        graceSeconds: mostly(
          fc.oneof(fc.integer({ min: 0, max: 86_400 }), fc.constant(36_500 * 86_400)),
        ),
      },
      { requiredKeys: [] },
    )
    .map((body) => JSON.stringify(body)),
  test: fc.constantFrom('{}', ''),
  retry: fc.constantFrom('{}', ''),
};

const webhookRequest = fc
  .constantFrom<WebhookRoute>('create', 'change', 'rotate', 'test', 'retry')
  .chain((route) =>
    fc.record({
      route: fc.constant(route),
      body: fc.oneof(bodyText, nearlyValidWebhook[route]),
      json: fc.oneof({ arbitrary: fc.constant(true), weight: 9 }, fc.constant(false)),
    }),
  );

/** Every byte of a text percent-encoded, as a client may send it (lone surrogates as U+FFFD). */
const percentEncoded = (text: string): string =>
  [...Buffer.from(text)].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');

/** A query parameter's value: odd text encoded, or bytes that are no UTF-8 or no escape. */
const queryValue = fc.oneof(
  oddString.map(percentEncoded),
  fc.string({ maxLength: 12 }).map(encodeURIComponent),
  fc.constantFrom('%00', 'a%00b', '%1b', '%7f', '%c2%85', '%ff', '%ed%a0%80', '%c0%80', '%', '%zz'),
  fc.integer({ min: -1, max: 2 ** 53 }).map(String),
);

/** A query of `names` (and odd ones, repeated or not) with odd values. */
const queryOf = (names: string[], value: fc.Arbitrary<string> = queryValue) =>
  fc
    .array(
      fc.tuple(
        fc.oneof(
          { arbitrary: fc.constantFrom(...names), weight: 8 },
          { arbitrary: oddString.map(percentEncoded), weight: 1 },
          { arbitrary: fc.constantFrom(...names).map((name) => `${name}[x]`), weight: 1 },
        ),
        value,
      ),
      { maxLength: 4 },
    )
    .map((pairs) => pairs.map(([name, v]) => `${name}=${v}`).join('&'));

describe('webhook bodies and admin queries, whatever a client sends', () => {
  const a = adminAppPerSuite({
    env: {
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_DELIVERY: 'off',
    },
  });
  let webhooksKey: string;
  beforeAll(async () => {
    webhooksKey = (
      await a.t.keys.issue({
        plan: 'enterprise',
        limits: { perMinute: 1_000_000, perDay: 1_000_000_000 },
        scopes: ['webhooks:admin'],
      })
    ).key;
  });
  const call = (method: AdminMethod, path: string) => a.call(method, path, webhooksKey);

  it('are never answered 500: a refusal is 400 INVALID_BODY naming the field (413 past 16 KiB)', async () => {
    const made = await call('post', '/admin/v1/webhooks').send({
      url: URLS[0],
      events: ['order.cancelled'],
    });
    expect(made.status).toBe(201);
    const id = (made.body as { id: string }).id;
    const tested = await call('post', `/admin/v1/webhooks/${id}/test`);
    expect(tested.status).toBe(202);
    const deliveryId = (tested.body as { id: string }).id;
    const paths: Record<WebhookRoute, [AdminMethod, string]> = {
      create: ['post', '/admin/v1/webhooks'],
      change: ['patch', `/admin/v1/webhooks/${id}`],
      rotate: ['post', `/admin/v1/webhooks/${id}/rotate-secret`],
      test: ['post', `/admin/v1/webhooks/${id}/test`],
      retry: ['post', `/admin/v1/webhooks/${id}/deliveries/${deliveryId}/retry`],
    };
    const expected: Record<WebhookRoute, number> = {
      create: 201,
      change: 200,
      rotate: 201,
      test: 202,
      retry: 202,
    };
    await fc.assert(
      fc.asyncProperty(webhookRequest, async ({ route, body, json }) => {
        const [method, path] = paths[route];
        const res = await call(method, path)
          .set('Content-Type', json ? 'application/json' : 'text/plain')
          .send(body);
        a.check(method, path, res);
        if (res.status < 300) {
          expect(res.status).toBe(expected[route]);
          // Endpoints are few by design: each one added here goes again at once.
          if (route === 'create') {
            const added = (res.body as { id: string }).id;
            expect((await call('delete', `/admin/v1/webhooks/${added}`)).status).toBe(204);
          }
        } else {
          expectRefused(res, body);
        }
      }),
      {
        numRuns: 250,
        examples: [
          ...['url', 'events', 'description', 'disabled'].map((field) => [
            { route: 'change' as const, body: `{"${field}":null}`, json: true },
          ]),
          [{ route: 'create', body: `{"url":"${URLS[0]}","events":null}`, json: true }],
          [{ route: 'rotate', body: '{"graceSeconds":null}', json: true }],
          [{ route: 'rotate', body: '{"graceSeconds":3153600000}', json: true }],
          [{ route: 'test', body: '{"force":null}', json: true }],
          [{ route: 'retry', body: '{"now":true}', json: true }],
        ],
      },
    );
    // The reported spelling, and the field named.
    const nulled = await call('patch', `/admin/v1/webhooks/${id}`).send({ events: null });
    expectErrorBody(nulled, 400, 'INVALID_BODY');
    expect((nulled.body as { message: string }).message).toMatch(/^events\b/);
  });

  it('the audit trail and the deliveries: a query is answered 200 or 400 INVALID_QUERY naming the parameter, never 500', async () => {
    const made = await call('post', '/admin/v1/webhooks').send({
      url: URLS[0],
      events: ['order.cancelled'],
    });
    const id = (made.body as { id: string }).id;
    const cursorText = fc.oneof(
      fc.constantFrom('1', '2026-02-30 00:00:00+00', '9999999-01-01', 'now', '2026-11-29'),
      fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
      oddString,
    );
    const deliveryCursor = fc
      .tuple(cursorText, fc.uuid())
      .map(([at, uuid]) => Buffer.from(`${at}|${uuid}`).toString('base64url'));
    const audit = queryOf(['action', 'actor', 'target', 'limit', 'cursor']).map(
      (query) => `/admin/v1/audit?${query}`,
    );
    const deliveries = queryOf(
      ['status', 'limit', 'cursor'],
      fc.oneof(queryValue, deliveryCursor),
    ).map((query) => `/admin/v1/webhooks/${id}/deliveries?${query}`);
    await fc.assert(
      fc.asyncProperty(fc.oneof(audit, deliveries), async (path) => {
        // The audit trail needs keys:admin, the deliveries webhooks:admin.
        const res = path.startsWith('/admin/v1/audit')
          ? await a.call('get', path)
          : await call('get', path);
        a.check('get', path, res);
        if (res.status !== 200) expectErrorBody(res, 400, 'INVALID_QUERY');
      }),
      {
        numRuns: 300,
        examples: [
          ['/admin/v1/audit?actor=%00'],
          ['/admin/v1/audit?target=%00'],
          ['/admin/v1/audit?actor=a%1bb'],
          [
            `/admin/v1/webhooks/${id}/deliveries?cursor=${Buffer.from(`1|${id}`).toString('base64url')}`,
          ],
        ],
      },
    );
    for (const name of ['actor', 'target']) {
      const res = await a.call('get', `/admin/v1/audit?${name}=%00`);
      expectErrorBody(res, 400, 'INVALID_QUERY');
      expect((res.body as { message: string }).message).toMatch(new RegExp(`^${name}\\b`));
    }
  });
});
