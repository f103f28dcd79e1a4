import { type Agent, request } from 'node:http';

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * One request on a fresh connection (unless given a keep-alive `agent`), for servers running in
 * another process or listening on a port. A header given as an array is sent once per value.
 */
export function httpRequest(
  url: string,
  options: {
    method?: string;
    headers?: Record<string, string | string[]>;
    body?: string;
    timeoutMs?: number;
    agent?: Agent;
  } = {},
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: options.method ?? 'GET', headers: options.headers, agent: options.agent ?? false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          });
        });
      },
    );
    req.setTimeout(options.timeoutMs ?? 20_000, () =>
      req.destroy(new Error(`no answer within ${options.timeoutMs ?? 20_000} ms`)),
    );
    req.on('error', reject);
    req.end(options.body);
  });
}
