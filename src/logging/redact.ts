/** What a logged secret is replaced with. */
export const REDACTED = '[REDACTED]';

/**
 * Anything shaped like one of our keys (`sk_` and base62), in any case, with `-`, `_` or nothing
 * after `sk`: a key whose prefix a client altered still gives its secret part away.
 */
const KEY_SHAPED = /sk[-_]?[0-9a-z]{8,}/i;
const KEY_SHAPED_ALL = new RegExp(KEY_SHAPED.source, 'gi');

/** What to look closer at: a key's prefix, or a percent-encoding that could hide one. */
const SUSPECT = /sk|%/i;

const PERCENT_ENCODED = /%([0-9a-f]{2})/gi;

/**
 * Decodings tried before a text that still holds a percent-encoding is taken for a hidden key:
 * each one may undo a layer of encoding, and a bound keeps a `%2525…` crafted to take one pass
 * per character from costing time quadratic in its length.
 */
const MAX_DECODINGS = 8;

/**
 * Whether `text` holds something shaped like a key once percent-decoded, as often as it takes
 * (any character may be encoded, in either case of hex, and encodings may be nested): the text a
 * reader of the log could decode a key from. Each `%XX` becomes one character (a byte of UTF-8 as
 * Latin-1): keys are ASCII, so this finds them without failing on a malformed sequence.
 */
export function hidesKey(text: string): boolean {
  if (!SUSPECT.test(text)) return false;
  let decoded = text;
  for (let pass = 0; pass <= MAX_DECODINGS; pass++) {
    if (KEY_SHAPED.test(decoded)) return true;
    const next = decoded.replace(PERCENT_ENCODED, (_, hex: string) =>
      String.fromCharCode(parseInt(hex, 16)),
    );
    if (next === decoded) return false;
    decoded = next;
  }
  return true;
}

/**
 * Query parameters whose value is a credential by name, compared once percent-decoded, in lower
 * case, without anything but letters and digits (so `API_KEY`, `api-key`, `api+key`, `%61pi_key`,
 * `api_key[]` are all `apikey`).
 */
const SECRET_PARAMETERS = new Set([
  'apikey',
  'xapikey',
  'key',
  'accesskey',
  'token',
  'accesstoken',
  'refreshtoken',
  'idtoken',
  'authtoken',
  'bearer',
  'secret',
  'clientsecret',
  'password',
  'passwd',
  'pwd',
  'auth',
  'authorization',
  'signature',
  'sig',
  'session',
  'sessionid',
  'credential',
  'credentials',
]);

function isSecretParameter(name: string): boolean {
  let decoded = name;
  for (let pass = 0; pass < MAX_DECODINGS && decoded.includes('%'); pass++) {
    decoded = decoded.replace(PERCENT_ENCODED, (_, hex: string) =>
      String.fromCharCode(parseInt(hex, 16)),
    );
  }
  return SECRET_PARAMETERS.has(decoded.toLowerCase().replace(/[^a-z0-9]/g, ''));
}

/** A query's `name=value` (or a bare `name`), with the name, the value or both redacted. */
function redactParameter(parameter: string): string {
  const eq = parameter.indexOf('=');
  if (eq < 0) return hidesKey(parameter) ? REDACTED : parameter;
  const name = parameter.slice(0, eq);
  const value = parameter.slice(eq + 1);
  const shownName = hidesKey(name) ? REDACTED : name;
  const shownValue = isSecretParameter(name) || hidesKey(value) ? REDACTED : value;
  return `${shownName}=${shownValue}`;
}

const redactSegment = (segment: string): string => (hidesKey(segment) ? REDACTED : segment);

/**
 * The url as the request log shows it (contract §2: a key never appears in a log line, wherever
 * the client put it). Each part is judged as the server would read it, percent-decoded: a path
 * segment or a query parameter's name or value that hides a key is replaced whole, and so is the
 * value of a secret-named parameter ({@link SECRET_PARAMETERS}). Nearly every url has no query,
 * no `%` and no `sk` in it, and is returned as it is after three scans.
 */
export function redactUrl(url: string): string {
  if (!url.includes('?') && !SUSPECT.test(url)) return url;
  const fragmentAt = url.indexOf('#');
  const beforeFragment = fragmentAt < 0 ? url : url.slice(0, fragmentAt);
  const fragment = fragmentAt < 0 ? '' : `#${redactSegment(url.slice(fragmentAt + 1))}`;
  const queryAt = beforeFragment.indexOf('?');
  const path = queryAt < 0 ? beforeFragment : beforeFragment.slice(0, queryAt);
  const shownPath = SUSPECT.test(path) ? path.split('/').map(redactSegment).join('/') : path;
  const query =
    queryAt < 0 ? '' : `?${beforeFragment.slice(queryAt + 1).replace(/[^&;]+/g, redactParameter)}`;
  return `${shownPath}${query}${fragment}`;
}

/**
 * Free text a client may have put words in (an error's message, a parser's reason): each
 * key-shaped run replaced, and the whole text when a key is still hidden in it (encoded).
 */
export function redactKeys(text: string): string {
  if (!SUSPECT.test(text)) return text;
  const shown = text.replace(KEY_SHAPED_ALL, REDACTED);
  return hidesKey(shown) ? REDACTED : shown;
}

/** A run of letters and digits as long as a secret's. */
const SECRET_LENGTH_RUN = /[A-Za-z0-9]{32,}/g;

/**
 * Whether a short token a client sent (a request id) may be a secret: it has a key's shape, or a
 * run of 32 or more letters and digits in both cases, as a key's random part is (a key without
 * its prefix). Hex digits (a UUID, a trace id), a ULID or a nanoid are not.
 */
export function mayBeSecret(token: string): boolean {
  if (KEY_SHAPED.test(token)) return true;
  for (const [run] of token.matchAll(SECRET_LENGTH_RUN)) {
    if (/[A-Z]/.test(run) && /[a-z]/.test(run)) return true;
  }
  return false;
}

/** Deepest an error's properties are followed: errors nest (`cause`, a driver's error). */
const MAX_DEPTH = 6;

/**
 * A serialized error (pino's `err`) with {@link redactKeys} applied to every string in it, its
 * message and stack, a query's parameters and a cause included: an error may quote what a
 * client sent.
 */
export function redactDeep(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactKeys(value);
  if (typeof value !== 'object' || value === null || value instanceof Date) return value;
  // Deeper than any error worth reading, or bytes: what they hold is not looked at, so not shown.
  if (depth >= MAX_DEPTH || ArrayBuffer.isView(value)) return REDACTED;
  if (Array.isArray(value)) return value.map((item: unknown) => redactDeep(item, depth + 1));
  const copy: Record<string, unknown> = {};
  for (const [name, item] of Object.entries(value)) copy[name] = redactDeep(item, depth + 1);
  return copy;
}
