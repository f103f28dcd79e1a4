import { API_KEY_RANDOM_CHARS } from '../auth/api-key';

/** What a logged secret is replaced with. */
export const REDACTED = '[REDACTED]';

/**
 * Anything shaped like one of our keys (`sk_` and base62), in any case, with `-`, `_` or nothing
 * after `sk`: a key whose prefix a client altered still gives its secret part away.
 */
const KEY_SHAPED = /sk[-_]?[0-9a-z]{8,}/i;
const KEY_SHAPED_ALL = new RegExp(KEY_SHAPED.source, 'gi');

/**
 * What to look closer at: a key's prefix, a percent-encoding that could hide one, or any character
 * beyond ASCII (a key spelled in fullwidth or other compatibility forms: `ｓｋ＿…`).
 */
const SUSPECT = /sk|%|[\u0080-\uffff]/i;

const BEYOND_ASCII = /[\u0080-\uffff]/;
const BEYOND_LATIN1 = /[\u0100-\uffff]/;

/**
 * `text` as its compatibility form (NFKC: fullwidth `ｓｋ＿Ａｂ１` is `sk_Ab1`), reading a text
 * of single bytes (a raw or percent-decoded url) as the UTF-8 it was sent in first. A key spelled
 * in other forms is still the key to a reader of the log.
 */
function compatible(text: string): string {
  if (!BEYOND_ASCII.test(text)) return text;
  const utf8 = BEYOND_LATIN1.test(text) ? text : Buffer.from(text, 'latin1').toString('utf8');
  return utf8.normalize('NFKC');
}

const PERCENT_ENCODED = /%([0-9a-f]{2})/gi;

/**
 * Letters and digits a value may hold before it is taken for a key's body (the key without its
 * `sk_`, whole or cut in pieces): more than half of a body. A value logged with fewer holds at most
 * 21 of a key's 43 characters, and the other 22 (over 128 bits) are still unknown.
 */
const KEY_BODY_SHARE = Math.ceil(API_KEY_RANDOM_CHARS / 2);

/**
 * Decodings tried before a text that still holds a percent-encoding is taken for a hidden key:
 * each one may undo a layer of encoding, and a bound keeps a `%2525…` crafted to take one pass
 * per character from costing time quadratic in its length.
 */
const MAX_DECODINGS = 8;

/** One layer of percent-encoding undone: each `%XX` one character (a byte of UTF-8 as Latin-1). */
const decodeOnce = (text: string): string =>
  text.replace(PERCENT_ENCODED, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));

/** `text` with up to {@link MAX_DECODINGS} layers of percent-encoding undone. */
function percentDecoded(text: string): string {
  let decoded = text;
  for (let pass = 0; pass < MAX_DECODINGS && decoded.includes('%'); pass++) {
    const next = decodeOnce(decoded);
    if (next === decoded) break;
    decoded = next;
  }
  return decoded;
}

/**
 * Whether `text` may hold a key's body, whole or cut by other characters: it has
 * {@link KEY_BODY_SHARE} or more letters and digits, wherever they are, and among them both
 * upper- and lower-case letters. A key's characters are drawn at random from all 62, so that many
 * of them lack a case only by a rare chance (docs/security.md gives the odds), while what a
 * request is known by is in one case: a number (an order id), hex (a UUID, a trace id), a ULID,
 * words (`pending,shipped,cancelled`), a date.
 */
function holdsKeyBody(text: string): boolean {
  return (
    text.length >= KEY_BODY_SHARE &&
    /[A-Z]/.test(text) &&
    /[a-z]/.test(text) &&
    text.replace(/[^A-Za-z0-9]/g, '').length >= KEY_BODY_SHARE
  );
}

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
    if (KEY_SHAPED.test(decoded) || KEY_SHAPED.test(compatible(decoded))) return true;
    const next = decodeOnce(decoded);
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
  const decoded = percentDecoded(name).toLowerCase();
  return SECRET_PARAMETERS.has(decoded.replace(/[^a-z0-9]/g, ''));
}

/**
 * Whether a part of a url (a path segment, a query parameter's name or value, the fragment) may
 * hold a key: one shaped like a key however it is encoded ({@link hidesKey}), or, once decoded,
 * a key's body ({@link holdsKeyBody}).
 */
function mayHoldKey(part: string): boolean {
  return hidesKey(part) || holdsKeyBody(compatible(percentDecoded(part)));
}

/** A query's `name=value` (or a bare `name`), with the name, the value or both redacted. */
function redactParameter(parameter: string): string {
  const eq = parameter.indexOf('=');
  if (eq < 0) return mayHoldKey(parameter) ? REDACTED : parameter;
  const name = parameter.slice(0, eq);
  const value = parameter.slice(eq + 1);
  const shownName = mayHoldKey(name) ? REDACTED : name;
  const shownValue = isSecretParameter(name) || mayHoldKey(value) ? REDACTED : value;
  return `${shownName}=${shownValue}`;
}

const redactSegment = (segment: string): string => (mayHoldKey(segment) ? REDACTED : segment);

/**
 * Whether a path may have a segment to redact: a key's prefix or a percent-encoding, or an
 * upper-case letter (a key's body has both cases; the service's own paths are in lower case).
 */
const pathToJudge = (path: string): boolean => SUSPECT.test(path) || /[A-Z]/.test(path);

/**
 * The url as the request log shows it (a key never appears in a log line, wherever the client put
 * it, nor its body without `sk_`). Each part is judged as the server would read it,
 * percent-decoded: a path segment, a query parameter's name or value, or the fragment that may
 * hold a key ({@link mayHoldKey}) is replaced whole, and so is the value of a secret-named
 * parameter ({@link SECRET_PARAMETERS}). Nearly every url has no query, no `%`, no `sk` and no
 * upper-case letter in it, and is returned as it is after a few scans.
 */
export function redactUrl(url: string): string {
  if (!url.includes('?') && !pathToJudge(url)) return url;
  const fragmentAt = url.indexOf('#');
  const beforeFragment = fragmentAt < 0 ? url : url.slice(0, fragmentAt);
  const fragment = fragmentAt < 0 ? '' : `#${redactSegment(url.slice(fragmentAt + 1))}`;
  const queryAt = beforeFragment.indexOf('?');
  const path = queryAt < 0 ? beforeFragment : beforeFragment.slice(0, queryAt);
  const shownPath = pathToJudge(path) ? path.split('/').map(redactSegment).join('/') : path;
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
  const shown = compatible(text).replace(KEY_SHAPED_ALL, REDACTED);
  return hidesKey(shown) ? REDACTED : shown;
}

/**
 * Whether a short token a client sent (a request id) may be a secret: it has a key's shape, or
 * it may hold a key's body, whole or cut by separators ({@link holdsKeyBody}: 22 or more letters
 * and digits in all, in both cases). A UUID, a hex trace id, a ULID or a nanoid is not.
 */
export function mayBeSecret(token: string): boolean {
  const text = compatible(token);
  return KEY_SHAPED.test(text) || holdsKeyBody(text);
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
