import { Controller, Get, type MiddlewareConsumer, RequestMethod } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import {
  applyApiLifecycle,
  Deprecated,
  lifecycleMiddleware,
  lifecycleOf,
  type RouteLifecycle,
  Stability,
} from './api-lifecycle';
import { ApiException } from './errors/api.exception';
import type { ServedRoute } from './http/route-table';

@Controller('things')
@Stability('experimental')
class ThingsController {
  @Get()
  list(): void {}

  @Get('old')
  @Deprecated({ since: '2026-01-31', sunset: '2026-07-31', link: 'https://example.com/notes' })
  @Stability('beta')
  old(): void {}
}

@Controller('plain')
class PlainController {
  @Get()
  list(): void {}
}

describe('@Deprecated', () => {
  it('works out the headers once: Deprecation in Unix seconds, Sunset as an HTTP-date', () => {
    expect(lifecycleOf(ThingsController, 'old')?.deprecation).toEqual(
      expect.objectContaining({
        deprecationHeader: '@1769817600', // 2026-01-31T00:00:00Z
        sunsetHeader: 'Fri, 31 Jul 2026 00:00:00 GMT',
        linkHeader: '<https://example.com/notes>; rel="deprecation"',
        sunsetAt: Date.UTC(2026, 6, 31),
      }),
    );
  });

  it.each([
    [{ since: '2026-1-31', sunset: '2027-01-31' }, /since must be a day as YYYY-MM-DD/],
    [{ since: '2026-02-30', sunset: '2027-01-31' }, /since must be a day/],
    [{ since: '2026-01-31', sunset: 'next year' }, /sunset must be a day/],
    [{ since: '2026-01-31', sunset: '2026-07-30' }, /at least 6 months after since.*2026-07-31/],
    [{ since: '2026-01-31', sunset: '2025-12-31' }, /at least 6 months/],
    [{ since: '2026-01-01', sunset: '2026-12-01', link: 'javascript:alert(1)' }, /link must be/],
    [{ since: '2026-01-01', sunset: '2026-12-01', link: 'https://x.test/a b' }, /link must be/],
  ])('refuses %j when the file is loaded', (options, message) => {
    expect(() => Deprecated(options)).toThrow(message);
  });

  it('takes exactly six months of notice, and a path on this server as the link', () => {
    expect(() =>
      Deprecated({ since: '2026-01-31', sunset: '2026-07-31', link: '/docs#/widgets' }),
    ).not.toThrow();
  });
});

describe('@Stability', () => {
  it('refuses a marker other than experimental or beta', () => {
    expect(() => Stability('stable' as 'beta')).toThrow(/"stable" is not one of/);
  });
});

describe('lifecycleOf', () => {
  it("gives a route its own marker over its controller's, and the controller's otherwise", () => {
    expect(lifecycleOf(ThingsController, 'list')).toEqual({ stability: 'experimental' });
    expect(lifecycleOf(ThingsController, 'old')?.stability).toBe('beta');
  });

  it('is undefined for a route without markers', () => {
    expect(lifecycleOf(PlainController, 'list')).toBeUndefined();
  });
});

describe('lifecycleMiddleware', () => {
  const deprecated = lifecycleOf(ThingsController, 'old') as RouteLifecycle;

  function run(
    lifecycle: RouteLifecycle,
    now: number,
  ): { headers: Map<string, string>; next: jest.Mock } {
    const headers = new Map<string, string>();
    const res = {
      setHeader: (name: string, value: string) => headers.set(name, value),
      // on-headers wraps writeHead; nothing is written here.
      writeHead: () => undefined,
    } as unknown as Response;
    const next = jest.fn();
    lifecycleMiddleware(lifecycle, () => now)({} as Request, res, next as NextFunction);
    return { headers, next };
  }

  it('sets the headers and lets the request through until the sunset', () => {
    const { headers, next } = run(deprecated, Date.UTC(2026, 6, 30, 23, 59, 59));
    expect(next).toHaveBeenCalledWith();
    expect(Object.fromEntries(headers)).toEqual({
      'X-API-Stability': 'beta',
      Deprecation: '@1769817600',
      Sunset: 'Fri, 31 Jul 2026 00:00:00 GMT',
    });
  });

  it('answers 410 GONE from midnight UTC of the sunset date on, with the headers', () => {
    const { headers, next } = run(deprecated, Date.UTC(2026, 6, 31));
    const error = next.mock.calls[0][0] as unknown;
    expect(error).toBeInstanceOf(ApiException);
    expect((error as ApiException).toBody()).toEqual(
      expect.objectContaining({ code: 'GONE', status: 410 }),
    );
    expect(headers.get('Sunset')).toBe('Fri, 31 Jul 2026 00:00:00 GMT');
  });
});

describe('applyApiLifecycle', () => {
  it('gives a middleware to the marked routes only, each on its path, method and version', () => {
    const routes: ServedRoute[] = [
      {
        method: 'GET',
        path: '/v1/things',
        version: '1',
        controller: ThingsController,
        handler: 'list',
      },
      {
        method: 'GET',
        path: '/v2/things/old',
        version: '2',
        controller: ThingsController,
        handler: 'old',
      },
      {
        method: 'GET',
        path: '/v1/plain',
        version: '1',
        controller: PlainController,
        handler: 'list',
      },
    ];
    const forRoutes = jest.fn();
    const consumer = { apply: jest.fn(() => ({ forRoutes })) } as unknown as MiddlewareConsumer;
    applyApiLifecycle(consumer, routes);
    expect(forRoutes.mock.calls).toEqual([
      [{ path: '/things', method: RequestMethod.GET, version: '1' }],
      [{ path: '/things/old', method: RequestMethod.GET, version: '2' }],
    ]);
  });
});
