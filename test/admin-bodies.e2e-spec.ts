import fc from 'fast-check';
import { expectErrorBody } from './support/client';
import { adminAppPerSuite } from './support/admin-app';

/** The admin listener's body limit: past it, 413 before any check of the body. */
const BODY_LIMIT = 16 * 1024;

/** The fields of the admin bodies, and names that must never be taken for one. */
const FIELDS = ['plan', 'name', 'perMinute', 'perDay', 'expiresAt', 'scopes', 'graceSeconds'];
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
        } else if (Buffer.byteLength(body) > BODY_LIMIT) {
          expectErrorBody(res, 413, 'PAYLOAD_TOO_LARGE');
        } else {
          expectErrorBody(res, 400, 'INVALID_BODY');
        }
      }),
      { numRuns: 250 },
    );
  });
});
