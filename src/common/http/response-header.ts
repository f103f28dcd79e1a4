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
 * The symbol under which Node keeps a response's headers (`kOutHeaders` of `_http_outgoing`),
 * once checked against Node's own accessors; undefined if this Node keeps them otherwise, and
 * then every header goes through `setHeader`.
 */
const OUT_HEADERS = ((): symbol | undefined => {
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
 * A setter of the header `name` (validated once, here), for the headers the service sets on
 * every response. Node's `setHeader` validates the name and the value of each header it is given
 * (a regular expression each, behind a wrapper that copies its arguments), lowercases the name
 * and stores the entry under that new string: about 2,000 instructions a header on every
 * response, and a cancel's answer carries eight of the service's own (valgrind:
 * docs/performance.md). This stores the entry exactly as `setHeader` would, under the lowercased
 * name computed once, after checking the value for plain printable ASCII; any other value, a
 * response whose headers are already sent, or a Node that keeps headers otherwise, goes through
 * `setHeader` itself (so an invalid value still throws as it would).
 *
 * Node's entry is private (`kOutHeaders`): it is found, and checked against Node's own
 * `getHeader`, `getHeaderNames` and `getRawHeaderNames`, once at start.
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
  const symbol = OUT_HEADERS;
  if (symbol === undefined) return (res, value) => void res.setHeader(name, value);
  return (res, value) => {
    if (res.headersSent || (checkValue && !PLAIN_VALUE.test(value))) res.setHeader(name, value);
    else store(res, symbol, key, name, value);
  };
}
