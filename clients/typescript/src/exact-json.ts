import { INT64_PROPERTIES } from './generated/int64.js';

const INT64 = new Set(INT64_PROPERTIES);

/** JSON.parse's reviver with the source text of each primitive (ES2025), where the runtime has it. */
type Reviver = (key: string, value: unknown, context?: { source?: string }) => unknown;

/**
 * Parses an answer of the API, reading its int64 properties (`id`, `petId`) as the exact decimal
 * strings the API wrote: a JavaScript number is exact only up to 2^53, and ids go up to 2^63 - 1.
 * Every such value is a string, small ones too, so code comparing ids has one type to handle. On a
 * runtime whose JSON.parse cannot give the source text, an id beyond 2^53 is an error rather than
 * a silently different id.
 */
export function parseExact(text: string): unknown {
  const reviver: Reviver = (key, value, context) => {
    if (typeof value !== 'number' || !INT64.has(key)) return value;
    if (context?.source !== undefined) return context.source;
    if (Number.isSafeInteger(value)) return String(value);
    throw new RangeError(
      `"${key}" is beyond 2^53 and this runtime's JSON.parse cannot read it exactly`,
    );
  };
  return JSON.parse(text, reviver as Parameters<typeof JSON.parse>[1]);
}

/** The answer with its JSON body rewritten by {@link parseExact}; any other answer as it is. */
export async function withExactIds(response: Response): Promise<Response> {
  const type = response.headers.get('Content-Type') ?? '';
  if (!/^application\/(.+\+)?json\b/i.test(type) || response.body === null) return response;
  const text = await response.text();
  const headers = new Headers(response.headers);
  // The body is written again (ids now quoted): its length is no longer the one sent.
  headers.delete('Content-Length');
  headers.delete('Content-Encoding');
  return new Response(text === '' ? null : JSON.stringify(parseExact(text)), {
    status: response.status,
    statusText: response.statusText,
    headers,
  });
}
