import { ServiceUnavailableException } from '@nestjs/common';
import type {
  HealthCheckResult,
  HealthCheckService,
  TypeOrmHealthIndicator,
} from '@nestjs/terminus';
import type { PinoLogger } from 'nestjs-pino';
import type { MetricsService } from '../metrics/metrics.service';
import { Readiness, READINESS_INTERVAL_MS } from './readiness';
import type { RedisHealthIndicator } from './redis.health';
import { ShutdownState } from './shutdown-state';

const UP: HealthCheckResult = {
  status: 'ok',
  info: { database: { status: 'up' } },
  error: {},
  details: { database: { status: 'up' } },
};
const DOWN = new ServiceUnavailableException({
  status: 'error',
  info: {},
  error: { database: { status: 'down' } },
  details: { database: { status: 'down' } },
});

/** A check whose outcome the test decides, when it decides. */
interface PendingCheck {
  pass(): void;
  fail(): void;
}

/** Readiness over a terminus that records each check and lets the test settle it. */
function readinessWithChecks(): { readiness: Readiness; checks: PendingCheck[]; warn: jest.Mock } {
  const checks: PendingCheck[] = [];
  const health = {
    check: () =>
      new Promise<HealthCheckResult>((resolve, reject) => {
        checks.push({ pass: () => resolve(UP), fail: () => reject(DOWN) });
      }),
  } as unknown as HealthCheckService;
  const redis = { isConfigured: false } as RedisHealthIndicator;
  const warn = jest.fn();
  const readiness = new Readiness(
    health,
    {} as TypeOrmHealthIndicator,
    redis,
    new ShutdownState(),
    {} as MetricsService,
    { warn } as unknown as PinoLogger,
  );
  return { readiness, checks, warn };
}

describe('Readiness', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('lets concurrent callers share the check in flight', async () => {
    const { readiness, checks } = readinessWithChecks();
    const answers = Array.from({ length: 100 }, () => readiness.checkDependencies());
    expect(checks).toHaveLength(1);
    checks[0].pass();
    await expect(Promise.all(answers)).resolves.toEqual(Array(100).fill(UP));
  });

  it('answers with a check’s outcome for an interval after it settles, then checks again', async () => {
    const { readiness, checks } = readinessWithChecks();
    const first = readiness.checkDependencies();
    jest.advanceTimersByTime(READINESS_INTERVAL_MS * 5); // a slow check: the interval starts after it
    checks[0].pass();
    await first;
    jest.advanceTimersByTime(READINESS_INTERVAL_MS - 1);
    await expect(readiness.checkDependencies()).resolves.toBe(UP);
    expect(checks).toHaveLength(1);
    jest.advanceTimersByTime(1);
    const second = readiness.checkDependencies();
    expect(checks).toHaveLength(2);
    checks[1].pass();
    await expect(second).resolves.toBe(UP);
  });

  it('keeps a failed check for an interval too, logged once, and turns ready when a check passes', async () => {
    const { readiness, checks, warn } = readinessWithChecks();
    const failed = Array.from({ length: 10 }, () => readiness.isReady());
    checks[0].fail();
    await expect(Promise.all(failed)).resolves.toEqual(Array(10).fill(false));
    await expect(readiness.checkDependencies()).rejects.toBe(DOWN);
    expect(checks).toHaveLength(1);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0][1]).toBe('not ready: database down');

    jest.advanceTimersByTime(READINESS_INTERVAL_MS);
    const again = readiness.isReady();
    checks[1].pass();
    await expect(again).resolves.toBe(true);
  });

  it('is not ready from the moment a shutdown begins, whatever the last check said', async () => {
    const { readiness, checks } = readinessWithChecks();
    const first = readiness.isReady();
    checks[0].pass();
    await expect(first).resolves.toBe(true);
    readiness.shutdown.begin();
    await expect(readiness.isReady()).resolves.toBe(false);
  });
});
