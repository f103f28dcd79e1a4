/** What a logged secret is replaced with. */
export const REDACTED = '[REDACTED]';

/** `-`, `_` (also percent-encoded) or nothing, between the words of a parameter name. */
const SEP = '(?:[-_]|%5f|%2d)?';

/** Anything shaped like one of our keys (`sk_` and base62), wherever in the url it was put. */
const KEY_SHAPED = new RegExp(`sk${SEP}[0-9a-z]{8,}`, 'gi');

/**
 * Query parameters whose value is a credential by name, in whatever case and spelling: api_key,
 * apikey, api-key, key, token, access_token, refresh_token, id_token, auth_token, secret,
 * client_secret, password, passwd, pwd, auth, authorization, signature, sig, session, session_id,
 * credential(s).
 */
const SECRET_PARAMETER = new RegExp(
  `([?&;](?:api${SEP}key|key|(?:(?:access|refresh|id|auth)${SEP})?token|(?:client${SEP})?secret|` +
    `password|passwd|pwd|auth|authorization|signature|sig|session(?:${SEP}id)?|credentials?)=)[^&;#]*`,
  'gi',
);

/**
 * The url as the request log shows it: no key and no secret-named query value (contract §2: a key
 * never appears in a log line, wherever the client put it). Nearly every url has neither a query
 * nor `sk` in it, and is returned as it is after two scans.
 */
export function redactUrl(url: string): string {
  const hasQuery = url.includes('?');
  if (!hasQuery && !/sk/i.test(url)) return url;
  const unkeyed = url.replace(KEY_SHAPED, REDACTED);
  return hasQuery ? unkeyed.replace(SECRET_PARAMETER, `$1${REDACTED}`) : unkeyed;
}
