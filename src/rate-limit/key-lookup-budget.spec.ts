import type { Request } from 'express';
import type { PinoLogger } from 'nestjs-pino';
import { generateApiKey, hashApiKey } from '../auth/api-key';
import { ApiKeyAuthenticator } from '../auth/api-key.authenticator';
import { KEY } from '../auth/api-key.fixture';
import type { ActiveKey, ApiKeysRepository } from '../auth/api-keys.repository';
import { authSettings } from '../auth/auth.settings';
import { KeyCache } from '../auth/key-cache';
import { LastUseRecorder } from '../auth/last-use-recorder';
import { INSTANCE_LOOKUPS_PER_MINUTE, KeyLookupBudget } from './key-lookup-budget';
import { MemoryRateLimitStorage } from './memory-rate-limit.storage';
import { Clock } from '../common/clock';

const logger = { warn: jest.fn() } as unknown as PinoLogger;

const requestFrom = (ip: string, token: string): Request =>
  ({
    ip,
    socket: { remoteAddress: ip },
    headers: { authorization: `Bearer ${token}` },
    rawHeaders: ['Authorization', `Bearer ${token}`],
  }) as unknown as Request;

/** Lets the pending steps (the storage, the loads of the hashes) run. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * The budget over the in-process counters and a real key cache, whose store knows the keys in
 * `valid` (the set of hashes loads `hashesLoaded`) and holds every lookup until `answer()`: every
 * request is in flight at once. The key changes feed listens; `answer()` also has it confirm
 * every change so far (its heartbeat), which lets the requests past the budget be decided.
 */
async function budgetOver(valid: string[] = [], hashesLoaded = valid) {
  const held: (() => void)[] = [];
  const store = {
    findActive: jest.fn(
      (hash: string) =>
        new Promise<ActiveKey | undefined>((resolve) =>
          held.push(() => resolve(valid.some((k) => hashApiKey(k) === hash) ? KEY : undefined)),
        ),
    ),
    touch: jest.fn(() => Promise.resolve()),
    keyHashes: jest.fn(() => Promise.resolve(hashesLoaded.map(hashApiKey))),
  };
  const keyStore = store as unknown as ApiKeysRepository;
  const keys = new KeyCache(keyStore, logger, authSettings.read({}), new Clock());
  const authenticator = new ApiKeyAuthenticator(
    keys,
    new LastUseRecorder(keyStore, new Clock(), logger),
  );
  const storage = new MemoryRateLimitStorage();
  const budget = new KeyLookupBudget(storage, authenticator, keys, new Clock());
  const answer = (): void => {
    keys.changesFeedConfirmed(performance.now());
    held.splice(0).forEach((release) => release());
  };
  keys.changesFeedListening(performance.now());
  await settle();
  return { budget, keys, store, storage, answer };
}

/** Starts deciding each request (all in flight together); `done` once all are decided. */
async function inFlight(budget: KeyLookupBudget, requests: Request[], answer: () => void) {
  const decided = Promise.all(requests.map((req) => budget.decideKey(req)));
  await settle();
  return {
    done: async (): Promise<void> => {
      answer();
      await decided;
    },
  };
}

describe('KeyLookupBudget', () => {
  const stopped: KeyCache[] = [];
  afterEach(() => {
    for (const keys of stopped.splice(0)) keys.onApplicationShutdown();
  });

  it('reserves before the lookup: made-up keys in flight at once from one address cost 60 lookups', async () => {
    const { budget, keys, store, answer } = await budgetOver();
    stopped.push(keys);
    const requests = Array.from({ length: 200 }, () =>
      requestFrom('198.51.100.7', generateApiKey()),
    );
    const flight = await inFlight(budget, requests, answer);
    expect(store.findActive).toHaveBeenCalledTimes(60);
    await flight.done();
    expect(requests.map((r) => r.authFailure)).toEqual(Array<string>(200).fill('invalid'));
    expect(store.findActive).toHaveBeenCalledTimes(60);
  });

  it('caps the lookups of one instance from all addresses, however many are in flight at once', async () => {
    const { budget, keys, store, answer } = await budgetOver();
    stopped.push(keys);
    const flood = Array.from({ length: INSTANCE_LOOKUPS_PER_MINUTE + 500 }, (_, i) =>
      requestFrom(`10.0.${Math.floor(i / 50)}.${i % 50}`, generateApiKey()),
    );
    const flight = await inFlight(budget, flood, answer);
    expect(store.findActive).toHaveBeenCalledTimes(INSTANCE_LOOKUPS_PER_MINUTE);
    await flight.done();
    expect(flood.every((r) => r.authFailure === 'invalid')).toBe(true);
  });

  it("hands the instance's unit back when the address's budget refuses the reservation", async () => {
    const { budget, keys, store, answer } = await budgetOver();
    stopped.push(keys);
    const one = Array.from({ length: 100 }, () => requestFrom('198.51.100.7', generateApiKey()));
    const first = await inFlight(budget, one, answer);
    expect(store.findActive).toHaveBeenCalledTimes(60);
    // The 40 refused by the address's budget took nothing of the instance's.
    const many = Array.from({ length: INSTANCE_LOOKUPS_PER_MINUTE }, (_, i) =>
      requestFrom(`10.0.${Math.floor(i / 50)}.${i % 50}`, generateApiKey()),
    );
    const second = await inFlight(budget, many, answer);
    expect(store.findActive).toHaveBeenCalledTimes(INSTANCE_LOOKUPS_PER_MINUTE);
    await first.done();
    await second.done();
  });

  it('looks up a key whose hash is in the set past both budgets, reserving nothing', async () => {
    const valid = generateApiKey();
    const { budget, keys, storage, store, answer } = await budgetOver([valid]);
    stopped.push(keys);
    const flood = Array.from({ length: INSTANCE_LOOKUPS_PER_MINUTE + 100 }, (_, i) =>
      requestFrom(`10.1.${Math.floor(i / 50)}.${i % 50}`, generateApiKey()),
    );
    const flight = await inFlight(budget, flood, answer);
    expect(store.findActive).toHaveBeenCalledTimes(INSTANCE_LOOKUPS_PER_MINUTE);

    const fresh = requestFrom('192.0.2.1', valid);
    const decided = budget.decideKey(fresh);
    await settle();
    answer();
    await decided;
    await flight.done();
    expect(fresh.auth).toBe(KEY);
    expect(
      await storage.peek('lookup:192.0.2.1', [{ name: 'minute', limit: 60, ttlMs: 60_000 }]),
    ).toEqual([expect.objectContaining({ count: 0 })]);
  });

  it('looks up a key issued before the request, not yet in the set, past the budget', async () => {
    const valid = generateApiKey();
    // The set is loaded before the key is issued: its announcement comes after the request.
    const { budget, keys, store, answer } = await budgetOver([valid], []);
    stopped.push(keys);
    const spent = Array.from({ length: 60 }, () => requestFrom('198.51.100.7', generateApiKey()));
    await (await inFlight(budget, spent, answer)).done();

    const req = requestFrom('198.51.100.7', valid);
    const decided = budget.decideKey(req);
    await settle();
    expect(store.findActive).toHaveBeenCalledTimes(60);
    keys.keyChanged(hashApiKey(valid));
    keys.changesFeedConfirmed(performance.now());
    await settle();
    answer();
    await decided;
    expect(req.auth).toBe(KEY);
    expect(store.findActive).toHaveBeenCalledTimes(61);
  });

  it('refuses a made-up key past the budget without a lookup once the set is current', async () => {
    const { budget, keys, store, answer } = await budgetOver();
    stopped.push(keys);
    const spent = Array.from({ length: 60 }, () => requestFrom('198.51.100.7', generateApiKey()));
    await (await inFlight(budget, spent, answer)).done();

    const req = requestFrom('198.51.100.7', generateApiKey());
    const decided = budget.decideKey(req);
    await settle();
    keys.changesFeedConfirmed(performance.now());
    await decided;
    expect(req.authFailure).toBe('invalid');
    expect(store.findActive).toHaveBeenCalledTimes(60);
  });
});
