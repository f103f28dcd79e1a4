import { SetMetadata } from '@nestjs/common';
import { readRoute, type RouteDecorators } from './route-metadata';

const MARK = 'spec:mark';

@SetMetadata(MARK, 'controller')
@SetMetadata('spec:per-name:a', 1)
class Marked {
  @SetMetadata(MARK, 'handler')
  @SetMetadata('spec:per-name:b', 2)
  @SetMetadata('spec:per-name:a', 3)
  own(): void {}

  inherited(): void {}
}

class Unmarked {
  plain(): void {}
}

/** A second controller serving the very same handler function. */
class MarkedToo extends Marked {}
SetMetadata(MARK, 'other controller')(MarkedToo);

describe('route metadata: one cache of what the routes’ decorators say', () => {
  it("reads the handler's value, else its controller's, else none", () => {
    const mark = (route: RouteDecorators): unknown => route.get(MARK);
    expect(readRoute(mark, Marked, Marked.prototype.own)).toBe('handler');
    expect(readRoute(mark, Marked, Marked.prototype.inherited)).toBe('controller');
    expect(readRoute(mark, Unmarked, Unmarked.prototype.plain)).toBeUndefined();
  });

  it('lists the names under a prefix, on the handler and its controller, once each', () => {
    const names = (route: RouteDecorators): string[] => route.keysUnder('spec:per-name:').sort();
    expect(readRoute(names, Marked, Marked.prototype.own)).toEqual(['a', 'b']);
    expect(readRoute(names, Marked, Marked.prototype.inherited)).toEqual(['a']);
  });

  it('works a reading out once per route, undefined answers included', () => {
    const reading = jest.fn((route: RouteDecorators) => route.get('spec:absent'));
    for (let i = 0; i < 3; i++) {
      expect(readRoute(reading, Marked, Marked.prototype.own)).toBeUndefined();
    }
    expect(reading).toHaveBeenCalledTimes(1);
    readRoute(reading, Marked, Marked.prototype.inherited);
    expect(reading).toHaveBeenCalledTimes(2);
  });

  it('keeps each reading of a route apart, and each controller of a shared handler', () => {
    const mark = jest.fn((route: RouteDecorators) => route.get(MARK));
    const controllerName = jest.fn((route: RouteDecorators) => route.controller.name);
    const handler = Marked.prototype.inherited;
    expect(readRoute(mark, Marked, handler)).toBe('controller');
    expect(readRoute(controllerName, Marked, handler)).toBe('Marked');
    expect(readRoute(mark, MarkedToo, handler)).toBe('other controller');
    expect(readRoute(controllerName, MarkedToo, handler)).toBe('MarkedToo');
    expect(readRoute(mark, Marked, handler)).toBe('controller');
    expect(mark).toHaveBeenCalledTimes(2);
    expect(controllerName).toHaveBeenCalledTimes(2);
  });

  it('does not remember a reading that throws', () => {
    let calls = 0;
    const failing = (): never => {
      calls += 1;
      throw new Error('a declaration the reader refuses');
    };
    expect(() => readRoute(failing, Unmarked, Unmarked.prototype.plain)).toThrow(/refuses/);
    expect(() => readRoute(failing, Unmarked, Unmarked.prototype.plain)).toThrow(/refuses/);
    expect(calls).toBe(2);
  });
});
