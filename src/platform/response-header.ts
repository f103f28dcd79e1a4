import {
  OutgoingMessage,
  type ServerResponse,
  validateHeaderName,
  validateHeaderValue,
} from 'node:http';

/** A response's headers as Node keeps them: `[name, value]` by the lowercased name. */
type OutHeaders = Record<string, [string, string]>;
type HeaderHolder = Record<symbol, OutHeaders | null>;

/** What Node's check accepts at once in a value: printable ASCII (anything else is left to it). */
const PLAIN_VALUE = /^[\x20-\x7e]*$/;

/**
 * The symbol under which Node keeps a response's headers (`kOutHeaders` of `_http_outgoing`), if
 * it is there and Node's own accessors read what is stored under it.
 */
function findOutHeaders(): symbol | undefined {
  const probe = new OutgoingMessage();
  const symbol = Object.getOwnPropertySymbols(probe).find((s) => s.description === 'kOutHeaders');
  if (symbol === undefined || (probe as unknown as HeaderHolder)[symbol] !== null) return undefined;
  store(probe, symbol, 'x-probe', 'X-Probe', 'a');
  const seen =
    probe.getHeader('x-probe') === 'a' &&
    // Node's own, missing from its types.
    (probe as unknown as { getRawHeaderNames(): string[] }).getRawHeaderNames().join() ===
      'X-Probe' &&
    probe.getHeaderNames().join() === 'x-probe';
  return seen ? symbol : undefined;
}

/**
 * Checked when this file loads: a Node that keeps headers otherwise fails the start here, rather
 * than leaving every header to a slower path unnoticed.
 */
const OUT_HEADERS = ((): symbol => {
  const symbol = findOutHeaders();
  if (symbol === undefined) {
    throw new Error(
      "Node no longer keeps a response's headers under its `kOutHeaders` symbol as " +
        'src/platform/response-header.ts expects (see docs/upgrading.md)',
    );
  }
  return symbol;
})();

function store(
  res: OutgoingMessage,
  symbol: symbol,
  key: string,
  name: string,
  value: string,
): void {
  const holder = res as unknown as HeaderHolder;
  let headers = holder[symbol];
  if (headers === null) holder[symbol] = headers = Object.create(null) as OutHeaders;
  headers[key] = [name, value];
}

/** Sets one header on a response: see {@link headerSetter}. */
export type HeaderSetter = (res: ServerResponse, value: string) => void;

/**
 * A setter of the header `name`, for the headers the service sets on every response (id, rate
 * limits, security headers, a link). It stores the entry exactly as `setHeader` would, under the
 * lowercased name computed once, after checking the value for plain printable ASCII: `setHeader`
 * validates the name and the value of every header it is given, behind an argument-copying
 * wrapper, and lowercases the name again each time (docs/performance.md). Any other value, and a
 * response whose head is already sent, go through `setHeader` itself, so an invalid value still
 * throws as it would.
 */
export function headerSetter(name: string): HeaderSetter {
  return setterOf(name, true);
}

/**
 * A setter of a header whose value never changes (a security header, a link): its value is
 * validated once, here, instead of on each call.
 */
export function constantHeaderSetter(name: string, value: string): (res: ServerResponse) => void {
  validateHeaderValue(name, value);
  const set = setterOf(name, !PLAIN_VALUE.test(value));
  return (res) => set(res, value);
}

function setterOf(name: string, checkValue: boolean): HeaderSetter {
  validateHeaderName(name);
  const key = name.toLowerCase();
  return (res, value) => {
    if (res.headersSent || (checkValue && !PLAIN_VALUE.test(value))) res.setHeader(name, value);
    else store(res, OUT_HEADERS, key, name, value);
  };
}
