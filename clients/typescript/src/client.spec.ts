import { StoreOrdersClient } from './client';
import { StoreOrdersPagingError } from './errors';

/** A server stand-in answering each request with the next page of `pages`, recording the URLs. */
function pagesServer(pages: object[]) {
  const urls: string[] = [];
  const fetch = (request: Request): Promise<Response> => {
    urls.push(request.url);
    if (urls.length > 50) throw new Error('the walk goes on without end');
    const page = pages[Math.min(urls.length, pages.length) - 1];
    return Promise.resolve(
      new Response(JSON.stringify(page), { headers: { 'Content-Type': 'application/json' } }),
    );
  };
  return { urls, fetch };
}

const base = { baseUrl: 'http://127.0.0.1:3000', apiKey: 'k' };

const order = (id: number) => ({
  id,
  petId: 1,
  quantity: 1,
  shipDate: '2026-11-29T00:00:00.000Z',
  status: 'pending',
  complete: false,
});

describe('StoreOrdersClient options', () => {
  it.each<[string, Record<string, unknown>, RegExp]>([
    ['maxTries NaN', { retry: { maxTries: NaN } }, /retry\.maxTries .*got NaN/],
    ['maxTries 0', { retry: { maxTries: 0 } }, /retry\.maxTries must be a whole number from 1/],
    ['maxTries Infinity', { retry: { maxTries: Infinity } }, /retry\.maxTries/],
    ['maxTries 2.5', { retry: { maxTries: 2.5 } }, /retry\.maxTries/],
    ['maxTries "3"', { retry: { maxTries: '3' } }, /retry\.maxTries .*got "3"/],
    ['maxTries 1e6', { retry: { maxTries: 1e6 } }, /retry\.maxTries .* to 100/],
    ['maxWaitSeconds NaN', { retry: { maxWaitSeconds: NaN } }, /retry\.maxWaitSeconds/],
    ['maxWaitSeconds -1', { retry: { maxWaitSeconds: -1 } }, /retry\.maxWaitSeconds/],
    ['maxWaitSeconds past a day', { retry: { maxWaitSeconds: 1e7 } }, /from 0 to 86400/],
    ['a misspelt retry option', { retry: { maxtries: 5 } }, /unknown option retry\.maxtries/],
    ['retry true', { retry: true }, /retry must be false or an object/],
    ['timeout NaN', { timeout: NaN }, /timeout .*got NaN/],
    ['timeout 0', { timeout: 0 }, /timeout must be a whole number from 1/],
    ['timeout Infinity', { timeout: Infinity }, /timeout/],
    ['a misspelt option', { timeoutMs: 5000 }, /unknown option timeoutMs/],
    ['a base URL without a scheme', { baseUrl: 'localhost:3000' }, /baseUrl must be an absolute/],
    ['an empty key', { apiKey: '' }, /apiKey/],
  ])('refuses %s, naming the option', (_case, change, message) => {
    expect(() => new StoreOrdersClient({ ...base, ...change })).toThrow(message);
  });

  it('takes sensible ones', () => {
    expect(
      () =>
        new StoreOrdersClient({
          ...base,
          adminBaseUrl: 'http://127.0.0.1:9091',
          retry: { maxTries: 1, maxWaitSeconds: 0.5 },
          timeout: 10_000,
        }),
    ).not.toThrow();
    expect(() => new StoreOrdersClient({ ...base, retry: false })).not.toThrow();
  });
});

describe('orders.each', () => {
  const walk = async (pages: object[]) => {
    const server = pagesServer(pages);
    const client = new StoreOrdersClient({ ...base, fetch: server.fetch });
    const ids: string[] = [];
    const ended = await (async () => {
      for await (const found of client.orders.each({ limit: 2 })) ids.push(String(found.id));
    })().then(
      () => undefined,
      (error: unknown) => error,
    );
    return { ids, ended, urls: server.urls };
  };

  it('walks on past short and empty pages while the cursor moves', async () => {
    const { ids, ended, urls } = await walk([
      { data: [order(1)], hasMore: true, nextCursor: 'a' },
      { data: [], hasMore: true, nextCursor: 'b' },
      { data: [order(2)], hasMore: false },
    ]);
    expect(ended).toBeUndefined();
    expect(ids).toEqual(['1', '2']);
    expect(urls.map((url) => new URL(url).searchParams.get('cursor'))).toEqual([null, 'a', 'b']);
  });

  it('stops with a StoreOrdersPagingError when a page sends it back to a cursor it sent', async () => {
    const same = await walk([{ data: [], hasMore: true, nextCursor: 'a' }]);
    expect(same.ended).toBeInstanceOf(StoreOrdersPagingError);
    expect(same.ended).toMatchObject({
      cursor: 'a',
      message: expect.stringMatching(/no progress/),
    });
    expect(same.urls).toHaveLength(2);

    const cycle = await walk([
      { data: [order(1)], hasMore: true, nextCursor: 'a' },
      { data: [], hasMore: true, nextCursor: 'b' },
      { data: [], hasMore: true, nextCursor: 'a' },
    ]);
    expect(cycle.ended).toBeInstanceOf(StoreOrdersPagingError);
    expect(cycle.ids).toEqual(['1']);
    expect(cycle.urls).toHaveLength(3);
  });

  it('stops with a StoreOrdersPagingError at hasMore without a nextCursor', async () => {
    const { ended, urls } = await walk([{ data: [order(1)], hasMore: true }]);
    expect(ended).toBeInstanceOf(StoreOrdersPagingError);
    expect(ended).toMatchObject({ message: expect.stringMatching(/without a nextCursor/) });
    expect(urls).toHaveLength(1);
  });
});

describe('a call with a signal', () => {
  it('is aborted by it, and not retried', async () => {
    let tries = 0;
    const client = new StoreOrdersClient({
      ...base,
      fetch: (request) => {
        tries++;
        request.signal.throwIfAborted();
        return Promise.resolve(new Response(null, { status: 204 }));
      },
    });
    const controller = new AbortController();
    controller.abort();
    await expect(client.orders.cancel('1', { signal: controller.signal })).rejects.toMatchObject({
      name: 'AbortError',
    });
    await expect(client.orders.list({ signal: controller.signal })).rejects.toMatchObject({
      name: 'AbortError',
    });
    expect(tries).toBe(2);
    await expect(client.orders.cancel('1')).resolves.toBeUndefined();
  });
});
