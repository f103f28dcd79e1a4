import { moveApiRoutesFirst, type RouterLayer } from './api-routes-first';

const use = (rawPath: string, name: string): RouterLayer & { name: string } => ({ rawPath, name });
const route = (path: string): RouterLayer & { name: string } => ({
  rawPath: path,
  route: { path },
  name: `GET ${path}`,
});
const names = (stack: RouterLayer[]): string[] => stack.map((l) => (l as { name: string }).name);

describe('moveApiRoutesFirst', () => {
  it("moves the docs' and health's layers after the API routes, each group in its order", () => {
    const stack = [
      use('/', 'every request'),
      use('/docs', 'docs headers'),
      route('/openapi/v1.json'),
      route('/docs'),
      use('/docs', 'docs assets'),
      route('/health/live'),
      route('/v1/store/orders'),
      route('/v1/store/orders/:orderId'),
      route('/v2/store/orders'),
      use('/', 'not found'),
    ];
    moveApiRoutesFirst(stack);
    expect(names(stack)).toEqual([
      'every request',
      'GET /v1/store/orders',
      'GET /v1/store/orders/:orderId',
      'GET /v2/store/orders',
      'docs headers',
      'GET /openapi/v1.json',
      'GET /docs',
      'docs assets',
      'GET /health/live',
      'not found',
    ]);
  });

  it('keeps before the API routes what an API request can reach', () => {
    const stack = [
      use('/v1', 'under v1'),
      use('/v2/store', 'under v2'),
      route('/:anything/info'),
      use('/*splat', 'wildcard'),
      route('/docs'),
      route('/v1/store/orders'),
    ];
    moveApiRoutesFirst(stack);
    expect(names(stack)).toEqual([
      'under v1',
      'under v2',
      'GET /:anything/info',
      'wildcard',
      'GET /v1/store/orders',
      'GET /docs',
    ]);
  });

  it('leaves alone a stack without API routes, and what lies between API routes', () => {
    const withoutApi = [route('/docs'), route('/health/live')];
    moveApiRoutesFirst(withoutApi);
    expect(names(withoutApi)).toEqual(['GET /docs', 'GET /health/live']);

    const between = [route('/v1/a'), route('/status'), route('/v2/b'), route('/after')];
    moveApiRoutesFirst(between);
    expect(names(between)).toEqual(['GET /v1/a', 'GET /status', 'GET /v2/b', 'GET /after']);
  });
});
