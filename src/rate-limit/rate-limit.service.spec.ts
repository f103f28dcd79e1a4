import type { Request, Response } from 'express';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import type { PinoLogger } from 'nestjs-pino';
import type { ActiveKey, ApiKeysRepository } from '../auth/api-keys.repository';
import { ApiException } from '../common/errors/api.exception';
import type { RateLimitSettings } from './rate-limit.settings';
import type { MetricsService } from '../metrics/metrics.service';
import { MemoryRateLimitStorage } from './memory-rate-limit.storage';
import { RateLimitErrors } from './rate-limit.errors';
import { bindingWindow, RateLimitService } from './rate-limit.service';
import { Clock } from '../common/clock';

describe('bindingWindow', () => {
  const minute = { name: 'minute', limit: 100, count: 10, resetAtMs: 60_000 };
  const day = { name: 'day', limit: 3, count: 1, resetAtMs: 86_400_000 };

  it('is the window with the fewest requests remaining', () => {
    expect(bindingWindow([minute, day])).toBe(day);
    expect(bindingWindow([{ ...minute, count: 99 }, day]).name).toBe('minute');
  });

  it('on a tie, is the window that resets later', () => {
    expect(bindingWindow([{ ...minute, count: 98 }, day]).name).toBe('day');
    expect(
      bindingWindow([
        { ...minute, count: 100 },
        { ...day, count: 3 },
      ]).name,
    ).toBe('day');
  });
});

describe("RateLimitService's decisions, on a fake clock", () => {
  const START = Date.UTC(2026, 10, 25, 12);
  const BAN_AFTER = 2;
  const BAN_SECONDS = 600;

  beforeEach(() => jest.useFakeTimers({ now: START }));
  afterEach(() => jest.useRealTimers());

  /** The service on in-process counters (read on the fake clock), its keys' repository and metrics. */
  function service() {
    const keys = { ban: jest.fn(() => Promise.resolve()) };
    const metrics = { rateLimitRejected: jest.fn(), keyBanned: jest.fn() };
    const config: RateLimitSettings = {
      RATE_LIMIT_BAN_AFTER: BAN_AFTER,
      RATE_LIMIT_BAN_SECONDS: BAN_SECONDS,
      RATE_LIMIT_ANONYMOUS_TRACKERS: 100,
    };
    const logger = { warn: jest.fn() } as unknown as PinoLogger;
    const rateLimit = new RateLimitService(
      new MemoryRateLimitStorage({ now: () => Date.now() }),
      keys as unknown as ApiKeysRepository,
      config,
      metrics as unknown as MetricsService,
      logger,
      new Clock(),
    );
    return { rateLimit, keys, metrics };
  }

  const keyWith = (perMinute: number, perDay: number): ActiveKey => ({
    keyId: '7',
    familyId: '7',
    plan: 'pro',
    limits: { perMinute, perDay },
    bannedUntil: null,
    expiresAt: null,
    scopes: ['*'],
  });

  const requestOf = (auth: ActiveKey | undefined, ip = '203.0.113.9'): Request =>
    ({ auth, ip, socket: { remoteAddress: ip }, id: 'r' }) as unknown as Request;

  /** What the client is told: the headers, and the 429's code and Retry-After, if refused. */
  async function send(rateLimit: RateLimitService, req: Request) {
    const res = new ServerResponse(new IncomingMessage(new Socket()));
    let refused: ApiException | undefined;
    try {
      await rateLimit.enforceLimits(req, res as unknown as Response);
    } catch (error) {
      if (!(error instanceof ApiException)) throw error;
      refused = error;
    }
    req.rateLimited = undefined;
    return {
      limit: res.getHeader('X-RateLimit-Limit'),
      remaining: res.getHeader('X-RateLimit-Remaining'),
      reset: res.getHeader('X-RateLimit-Reset'),
      refused: refused?.code,
      retryAfter: refused?.headers['Retry-After'],
    };
  }

  const seconds = (ms: number): string => String(Math.ceil(ms / 1000));

  it('refuses past the minute limit until the minute window rolls over, then counts afresh', async () => {
    const { rateLimit, metrics } = service();
    const key = keyWith(3, 1_000);
    for (const remaining of ['2', '1', '0']) {
      expect(await send(rateLimit, requestOf(key))).toMatchObject({
        limit: '3',
        remaining,
        reset: seconds(START + 60_000),
        refused: undefined,
      });
    }
    jest.advanceTimersByTime(20_000);
    expect(await send(rateLimit, requestOf(key))).toMatchObject({
      remaining: '0',
      refused: RateLimitErrors.RATE_LIMIT_EXCEEDED.code,
      retryAfter: '40',
    });
    expect(metrics.rateLimitRejected).toHaveBeenCalledWith('pro');

    // The window is anchored at its first request: it rolls over 60 s after it, not before.
    jest.advanceTimersByTime(39_999);
    expect((await send(rateLimit, requestOf(key))).refused).toBe(
      RateLimitErrors.RATE_LIMIT_EXCEEDED.code,
    );
    jest.advanceTimersByTime(1);
    expect(await send(rateLimit, requestOf(key))).toMatchObject({
      limit: '3',
      remaining: '2',
      reset: seconds(Date.now() + 60_000),
      refused: undefined,
    });
  });

  it('reports the window that binds most, and refuses until the full one that resets last has room', async () => {
    const { rateLimit } = service();
    const key = keyWith(5, 7);
    // The minute has fewer requests left (5 - 4 = 1) than the day (7 - 4 = 3).
    for (let i = 0; i < 4; i++) await send(rateLimit, requestOf(key));
    expect(await send(rateLimit, requestOf(key))).toMatchObject({ limit: '5', remaining: '0' });

    // A new minute: now the day (7 - 5 = 2) binds more than the minute (5).
    jest.advanceTimersByTime(60_000);
    expect(await send(rateLimit, requestOf(key))).toMatchObject({
      limit: '7',
      remaining: '1',
      reset: seconds(START + 86_400_000),
    });
    await send(rateLimit, requestOf(key));
    // The day is full; the minute is not: the day decides the 429 and its Retry-After.
    expect(await send(rateLimit, requestOf(key))).toMatchObject({
      limit: '7',
      remaining: '0',
      refused: RateLimitErrors.RATE_LIMIT_EXCEEDED.code,
      retryAfter: String((86_400_000 - 60_000) / 1000),
    });
    jest.advanceTimersByTime(86_400_000 - 60_000);
    expect(await send(rateLimit, requestOf(key))).toMatchObject({
      limit: '5',
      remaining: '4',
      refused: undefined,
    });
  });

  it("bans a key that keeps sending after its 429s, in the database, for the ban's length", async () => {
    const { rateLimit, keys, metrics } = service();
    const key = keyWith(1, 1_000);
    await send(rateLimit, requestOf(key));
    for (let i = 0; i < BAN_AFTER; i++) {
      expect((await send(rateLimit, requestOf(key))).refused).toBe(
        RateLimitErrors.RATE_LIMIT_EXCEEDED.code,
      );
    }
    expect(keys.ban).not.toHaveBeenCalled();

    jest.advanceTimersByTime(1_000);
    expect(await send(rateLimit, requestOf(key))).toMatchObject({
      refused: RateLimitErrors.API_KEY_BANNED.code,
      retryAfter: String(BAN_SECONDS),
    });
    const until = new Date(START + 1_000 + BAN_SECONDS * 1000);
    expect(keys.ban).toHaveBeenCalledWith('7', until);
    expect(key.bannedUntil).toEqual(until);
    expect(metrics.keyBanned).toHaveBeenCalledWith('pro');

    // Banned past the minute window's rollover, without counting: Retry-After runs down.
    jest.advanceTimersByTime(120_000);
    expect(await send(rateLimit, requestOf(key))).toMatchObject({
      limit: '1',
      remaining: '1',
      refused: RateLimitErrors.API_KEY_BANNED.code,
      retryAfter: String(BAN_SECONDS - 120),
    });
    jest.advanceTimersByTime((BAN_SECONDS - 120) * 1000);
    expect(await send(rateLimit, requestOf(key))).toMatchObject({
      remaining: '0',
      refused: undefined,
    });
    expect(keys.ban).toHaveBeenCalledTimes(1);
  });

  it('bans an anonymous IP in the storage, and lets it back when the ban ends', async () => {
    const { rateLimit, keys } = service();
    const anonymous = (): Request => requestOf(undefined, '198.51.100.4');
    let sent = 0;
    while ((await send(rateLimit, anonymous())).refused === undefined) sent++;
    expect(sent).toBe(60);
    for (let i = 1; i < BAN_AFTER; i++) await send(rateLimit, anonymous());
    expect((await send(rateLimit, anonymous())).refused).toBe(RateLimitErrors.API_KEY_BANNED.code);
    expect(keys.ban).not.toHaveBeenCalled();
    // Another address is not concerned.
    expect((await send(rateLimit, requestOf(undefined, '198.51.100.5'))).refused).toBeUndefined();

    jest.advanceTimersByTime(BAN_SECONDS * 1000 - 1);
    expect(await send(rateLimit, anonymous())).toMatchObject({
      refused: RateLimitErrors.API_KEY_BANNED.code,
      retryAfter: '1',
    });
    jest.advanceTimersByTime(1);
    expect(await send(rateLimit, anonymous())).toMatchObject({ limit: '60', refused: undefined });
  });
});
