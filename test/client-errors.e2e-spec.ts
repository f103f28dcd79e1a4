import { generateApiKey } from '../src/auth/api-key';
import { AppProcess } from './support/app-process';
import { buildOnce } from './support/build';
import { bearerFor } from './support/auth';
import { httpRequest } from './support/http';
import { RawAnswer, rawExchange } from './support/raw-http';
import { createTestDatabase } from './support/test-app';

/** The built service (`npm run build`, once per run), as `npm start` runs it. */
const START_BUILT = ['node', 'dist/main.js'];

describe('what Node answers before Express (a real process, its log captured)', () => {
  let app: AppProcess;
  let url: string;
  let databaseUrl: string;

  beforeAll(async () => {
    await buildOnce();
    databaseUrl = await createTestDatabase();
    ({ app, url } = await AppProcess.start(START_BUILT, {
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'info',
      HTTP_HEADERS_TIMEOUT_MS: '1000',
      HTTP_REQUEST_TIMEOUT_MS: '2000',
      HTTP_KEEP_ALIVE_TIMEOUT_MS: '1000',
    }));
  }, 300_000);
  afterAll(() => app.stop());

  /** The Error JSON, Connection: close, a request id, and exactly one log line with that id. */
  async function expectAnswered(answer: RawAnswer, status: number, code: string): Promise<void> {
    expect(answer.status).toBe(status);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(answer.body)).toEqual({ code, message: expect.any(String), status });
    expect(answer.headers.connection).toBe('close');
    expect(answer.closedByServer).toBe(true);
    const id = answer.headers['x-request-id'];
    expect(id).toMatch(/^[\w.:-]+$/);
    await app.waitFor(new RegExp(`"id":"${id}"`));
    const lines = app.json().filter((l) => (l.req as { id?: string } | undefined)?.id === id);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ res: { statusCode: status } });
  }

  it.each([
    ['a malformed request line', 'GARBAGE\r\n\r\n'],
    [
      'a header without a colon',
      'GET /v1/store/orders HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n',
    ],
    [
      'a header name with a space',
      'GET /v1/store/orders HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n',
    ],
    [
      'conflicting Content-Lengths',
      'DELETE /v1/store/orders/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello',
    ],
  ])('answers %s 400 BAD_REQUEST', async (_, head) => {
    await expectAnswered(await rawExchange(url, head), 400, 'BAD_REQUEST');
  });

  it('answers headers over Node’s limit 431 HEADERS_TOO_LARGE', async () => {
    const head = `GET /v1/store/orders HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`;
    await expectAnswered(await rawExchange(url, head), 431, 'HEADERS_TOO_LARGE');
  });

  it('answers headers not received within HTTP_HEADERS_TIMEOUT_MS 408 REQUEST_TIMEOUT', async () => {
    const answer = await rawExchange(url, 'GET /v1/store/orders HTTP/1.1\r\nHost: x\r\n', {
      deadlineMs: 15_000,
    });
    await expectAnswered(answer, 408, 'REQUEST_TIMEOUT');
    // 1 s of timeout, checked every second by Node: well before the old 60 s default.
    expect(answer.answeredAfterMs).toBeLessThan(10_000);
  });

  it('answers a body not received within HTTP_REQUEST_TIMEOUT_MS 408 REQUEST_TIMEOUT', async () => {
    const answer = await rawExchange(
      url,
      'DELETE /v1/store/orders/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly a few bytes',
      { deadlineMs: 15_000 },
    );
    await expectAnswered(answer, 408, 'REQUEST_TIMEOUT');
    expect(answer.answeredAfterMs).toBeLessThan(10_000);
  });

  it('answers an anonymous request followed by garbage bytes once, logging no error', async () => {
    const before = app.json().length;
    const answer = await rawExchange(
      url,
      'GET /v1/store/orders HTTP/1.1\r\nHost: x\r\nX-Request-Id: trailing-garbage\r\n\r\n\x01\x02GARBAGE\r\n\r\n',
    );
    // The bytes arrive at once: Node's parser refuses the garbage before the guards answer 401,
    // and answers through the request's own response.
    await expectAnswered(answer, 400, 'BAD_REQUEST');
    // The guards went on after that answer; a request sent after it shows they are done.
    await httpRequest(`${url}/health/live`, { headers: { 'X-Request-Id': 'after-garbage' } });
    await app.waitFor(/"id":"after-garbage"/);
    const lines = app.json().slice(before);
    expect(lines.filter((l) => Number(l.level) >= 50)).toEqual([]);
    expect(app.output()).not.toContain('Cannot set headers after they are sent');
  });

  it('logs no key, wherever the client put it', async () => {
    const auth = await bearerFor(databaseUrl);
    const key = generateApiKey();
    const secrets = [key, 'hunter2-secret-value', 'tok-9f8e7d6c5b4a'];
    const paths = [
      `/v1/store/orders?api_key=${key}`,
      `/v1/store/orders?access_token=${secrets[2]}&x=1`,
      `/v1/store/orders?password=${secrets[1]}`,
      `/v1/store/orders/${key}`,
      `/v1/store/orders?q=Bearer%20${key}`,
    ];
    for (const [i, path] of paths.entries()) {
      const id = `redaction-check-${i}`;
      await httpRequest(`${url}${path}`, { headers: { ...auth, 'X-Request-Id': id } });
      await app.waitFor(new RegExp(`"id":"${id}"`));
    }
    const output = app.output();
    expect(output).toContain('[REDACTED]');
    for (const secret of secrets) expect(output).not.toContain(secret);
    expect(output).not.toContain(key.slice(3));
  });
});
