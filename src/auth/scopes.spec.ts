import { Controller, Get, type Type } from '@nestjs/common';
import {
  defineScopes,
  EVERY_SCOPE,
  grantsScope,
  KEYS_ADMIN,
  knownScopes,
  requiredScopeOf,
  RequireScope,
  scopesOf,
  scopesProblem,
  storedScopes,
  undeclaredScopeProblem,
} from './scopes';

const SpecScopes = defineScopes({
  READ: { name: 'gizmos:read', description: 'Read the gizmos' },
  WRITE: { name: 'gizmos:write', description: 'Change the gizmos' },
});

@Controller('gizmos')
@RequireScope(SpecScopes.READ)
class GizmosController {
  @Get()
  list(): void {
    return undefined;
  }

  @Get('mine')
  @RequireScope(SpecScopes.WRITE)
  mine(): void {
    return undefined;
  }
}

@Controller('open')
class OpenController {
  @Get()
  open(): void {
    return undefined;
  }
}

@Controller('sprockets')
class SprocketsController {
  @Get()
  @RequireScope('sprockets:whirl')
  spin(): void {
    return undefined;
  }
}

const handlerOf = (controller: object, name: string): object =>
  (controller as { prototype: Record<string, object> }).prototype[name];

describe('scopes', () => {
  it('reads the scope of a route: its own, else its controller’s, else none', () => {
    expect(requiredScopeOf(handlerOf(GizmosController, 'list'), GizmosController)).toBe(
      'gizmos:read',
    );
    expect(requiredScopeOf(handlerOf(GizmosController, 'mine'), GizmosController)).toBe(
      'gizmos:write',
    );
    expect(requiredScopeOf(handlerOf(OpenController, 'open'), OpenController)).toBeUndefined();
  });

  it('grants a scope a key names, and every scope but keys:admin to *', () => {
    expect(grantsScope(['gizmos:read'], 'gizmos:read')).toBe(true);
    expect(grantsScope(['gizmos:read'], 'gizmos:write')).toBe(false);
    expect(grantsScope([EVERY_SCOPE], 'gizmos:write')).toBe(true);
    expect(grantsScope([EVERY_SCOPE], 'added-later:read')).toBe(true);
    expect(grantsScope([EVERY_SCOPE], KEYS_ADMIN)).toBe(false);
    expect(grantsScope([KEYS_ADMIN], KEYS_ADMIN)).toBe(true);
    expect(grantsScope([KEYS_ADMIN], 'gizmos:read')).toBe(false);
    expect(grantsScope([EVERY_SCOPE, KEYS_ADMIN], KEYS_ADMIN)).toBe(true);
    expect(grantsScope([], 'gizmos:read')).toBe(false);
  });

  it.each(['Gizmos:read', 'gizmos', 'gizmos:', ':read', 'gizmos:read:all', 'giz mos:read', ''])(
    'refuses the scope name %p, in defineScopes and @RequireScope alike',
    (name) => {
      expect(() => defineScopes({ X: { name, description: 'x' } })).toThrow(/is not a scope/);
      expect(() => RequireScope(name)).toThrow(/is not a scope/);
    },
  );

  it('refuses a scope declared twice with two meanings, and takes it twice with one', () => {
    expect(() =>
      defineScopes({ READ: { name: 'gizmos:read', description: 'Something else' } }),
    ).toThrow(/already declared/);
    expect(defineScopes({ READ: { name: 'gizmos:read', description: 'Read the gizmos' } })).toEqual(
      { READ: 'gizmos:read' },
    );
  });

  it('knows the scopes declared, and not a name a route alone uses', () => {
    RequireScope('sprockets:spin');
    expect(knownScopes()).toEqual(
      expect.arrayContaining([
        { name: 'gizmos:read', description: 'Read the gizmos' },
        { name: KEYS_ADMIN, description: expect.stringMatching(/admin API/) },
      ]),
    );
    expect(knownScopes().map((scope) => scope.name)).not.toContain('sprockets:spin');
  });

  it('names the scope and the route when a route requires a scope no module declares', () => {
    const route = (controller: Type, handler: string, path: string) => ({
      method: 'GET',
      path,
      controller,
      handler,
    });
    expect(
      undeclaredScopeProblem([
        route(GizmosController, 'list', '/v1/gizmos'),
        route(OpenController, 'open', '/v1/open'),
      ]),
    ).toBeUndefined();
    expect(undeclaredScopeProblem([route(SprocketsController, 'spin', '/v1/sprockets')])).toBe(
      'Route GET /v1/sprockets requires scope "sprockets:whirl", which no module declares: ' +
        "declare it with defineScopes() in the module's *.scopes.ts file",
    );
  });

  it('says what is wrong with the scopes of a key to be issued, naming the unknown ones', () => {
    expect(scopesProblem(['gizmos:read'])).toBeUndefined();
    expect(scopesProblem([EVERY_SCOPE, KEYS_ADMIN])).toBeUndefined();
    expect(scopesProblem([])).toMatch(/at least one scope/);
    const problem = scopesProblem(['gizmos:read', 'gizmos:eat', 'GIZMOS:READ']);
    expect(problem).toContain('unknown scope "gizmos:eat", "GIZMOS:READ"');
    expect(problem).toContain('gizmos:write');
  });

  it('stores scopes sorted, once each, and every scope (* alone) as NULL', () => {
    expect(storedScopes(undefined)).toBeNull();
    expect(storedScopes([EVERY_SCOPE])).toBeNull();
    expect(storedScopes([EVERY_SCOPE, EVERY_SCOPE])).toBeNull();
    expect(storedScopes(['gizmos:write', 'gizmos:read', 'gizmos:write'])).toEqual([
      'gizmos:read',
      'gizmos:write',
    ]);
    expect(storedScopes([KEYS_ADMIN, EVERY_SCOPE])).toEqual([EVERY_SCOPE, KEYS_ADMIN]);
    expect(scopesOf({ scopes: null })).toEqual([EVERY_SCOPE]);
    expect(scopesOf({ scopes: ['gizmos:read'] })).toEqual(['gizmos:read']);
  });
});
