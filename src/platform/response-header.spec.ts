import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { constantHeaderSetter, headerSetter } from './response-header';

/** The head (status line and headers) of the one response `respond` gives, as it left the server. */
async function headOf(respond: (res: ServerResponse) => void): Promise<string> {
  const server = createServer((_req, res) => {
    respond(res);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      let text = '';
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => {
        text += chunk;
        if (text.includes('\r\n\r\n')) {
          socket.destroy();
          resolve(text);
        }
      });
      socket.on('error', reject);
      socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    });
    // The Date header moves with the clock.
    return raw.replace(/^Date: .*\r\n/m, '');
  } finally {
    server.close();
  }
}

describe('headerSetter and constantHeaderSetter', () => {
  const setRequestId = headerSetter('X-Request-Id');
  const setRemaining = headerSetter('X-RateLimit-Remaining');
  const setFrameOptions = constantHeaderSetter('X-Frame-Options', 'DENY');

  it('send the same head as setHeader, in the same order, after headers set either way', async () => {
    const viaNode = await headOf((res) => {
      res.setHeader('Content-Type', 'application/json');
      res.setHeader('X-Request-Id', 'b7c1f0a2-3c4d');
      res.setHeader('X-Frame-Options', 'DENY');
      res.setHeader('X-RateLimit-Remaining', '59');
    });
    const viaSetters = await headOf((res) => {
      res.setHeader('Content-Type', 'application/json');
      setRequestId(res, 'b7c1f0a2-3c4d');
      setFrameOptions(res);
      setRemaining(res, '59');
    });
    expect(viaSetters).toBe(viaNode);
    expect(viaSetters).toContain('\r\nX-Request-Id: b7c1f0a2-3c4d\r\n');
  });

  it("keep a header Node's accessors see: read, replaced in any case, removed", async () => {
    const head = await headOf((res) => {
      setRequestId(res, 'first');
      expect(res.getHeader('x-request-id')).toBe('first');
      expect(res.hasHeader('X-REQUEST-ID')).toBe(true);
      res.setHeader('x-request-id', 'second');
      expect(res.getHeaderNames()).toEqual(['x-request-id']);
      setRemaining(res, '1');
      res.removeHeader('X-RateLimit-Remaining');
    });
    expect(head).toContain('\r\nx-request-id: second\r\n');
    expect(head).not.toMatch(/ratelimit/i);
  });

  it('leave to setHeader a value that is not plain ASCII: accepted as Node accepts it, or refused', async () => {
    const head = await headOf((res) => {
      setRequestId(res, 'tab\tand latin-1 \u00e9');
      expect(() => setRequestId(res, 'injected\r\nSet-Cookie: a=b')).toThrow(
        expect.objectContaining({ code: 'ERR_INVALID_CHAR' }),
      );
    });
    expect(head).toContain('\r\nX-Request-Id: tab\tand latin-1 \u00e9\r\n');
    expect(head).not.toContain('Set-Cookie');
  });

  it('refuse an invalid name or constant value at once, and a header after the head is sent', async () => {
    expect(() => headerSetter('Bad Name')).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_HTTP_TOKEN' }),
    );
    expect(() => constantHeaderSetter('X-Frame-Options', 'a\r\nb')).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_CHAR' }),
    );
    await headOf((res) => {
      res.flushHeaders();
      expect(() => setFrameOptions(res)).toThrow(
        expect.objectContaining({ code: 'ERR_HTTP_HEADERS_SENT' }),
      );
      expect(() => setRequestId(res, 'late')).toThrow(
        expect.objectContaining({ code: 'ERR_HTTP_HEADERS_SENT' }),
      );
    });
  });
});
