import { SkipThrottle, Throttle } from '@nestjs/throttler';
import { RouteThrottles } from './route-throttle';

class Plain {
  list(): void {}
}

class Widgets {
  @Throttle({ default: { limit: 3, ttl: 60_000 } })
  inspect(): void {}

  @SkipThrottle()
  status(): void {}

  @SkipThrottle({ day: true })
  daily(): void {}

  @Throttle({ burst: { limit: 5, ttl: 1_000 }, default: { limit: 100, ttl: 3_600_000 } })
  twice(): void {}
}

@Throttle({ default: { limit: 10, ttl: 60_000 } })
class Throttled {
  list(): void {}

  @Throttle({ default: { limit: 2, ttl: 60_000 } })
  stricter(): void {}

  @SkipThrottle()
  skipped(): void {}
}

class PlanWindow {
  @Throttle({ minute: { limit: 5, ttl: 60_000 } })
  list(): void {}
}

class NoTtl {
  @Throttle({ default: { limit: 5 } })
  list(): void {}
}

const throttles = new RouteThrottles(['minute', 'day']);
const of = (controller: new () => object, handler: object) => throttles.of(controller, handler);

describe('RouteThrottles: what @Throttle and @SkipThrottle ask of the plan limiter', () => {
  it('asks nothing of an undecorated route', () => {
    expect(of(Plain, Plain.prototype.list)).toEqual({
      skipped: false,
      skippedPlanWindows: new Set(),
      windows: [],
    });
  });

  it("reads a route's own windows, named after the route", () => {
    expect(of(Widgets, Widgets.prototype.inspect).windows).toEqual([
      { name: 'route:Widgets.inspect:default', limit: 3, ttlMs: 60_000 },
    ]);
    expect(of(Widgets, Widgets.prototype.twice).windows).toEqual(
      expect.arrayContaining([
        { name: 'route:Widgets.twice:burst', limit: 5, ttlMs: 1_000 },
        { name: 'route:Widgets.twice:default', limit: 100, ttlMs: 3_600_000 },
      ]),
    );
  });

  it('exempts a @SkipThrottle() route, or leaves out the plan window it names', () => {
    expect(of(Widgets, Widgets.prototype.status).skipped).toBe(true);
    const daily = of(Widgets, Widgets.prototype.daily);
    expect(daily.skipped).toBe(false);
    expect([...daily.skippedPlanWindows]).toEqual(['day']);
  });

  it("takes a controller's declaration, a route's own winning", () => {
    expect(of(Throttled, Throttled.prototype.list).windows).toEqual([
      { name: 'route:Throttled.list:default', limit: 10, ttlMs: 60_000 },
    ]);
    expect(of(Throttled, Throttled.prototype.stricter).windows).toEqual([
      { name: 'route:Throttled.stricter:default', limit: 2, ttlMs: 60_000 },
    ]);
    expect(of(Throttled, Throttled.prototype.skipped).skipped).toBe(true);
  });

  it("refuses a plan window's name, and a window without its ttl", () => {
    expect(() => of(PlanWindow, PlanWindow.prototype.list)).toThrow(
      /PlanWindow\.list names the plan's minute window/,
    );
    expect(() => of(NoTtl, NoTtl.prototype.list)).toThrow(
      /NoTtl\.list: default needs a limit and a ttl/,
    );
  });
});
