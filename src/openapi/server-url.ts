import { isIPv6 } from 'node:net';
import { versionPrefix } from '../common/http/versioning';

/**
 * A base URL as a version's document shows it in `servers`: ending in `/v1` (the version's
 * prefix) exactly once, whether it was configured with or without it (`https://api.example.com`,
 * `https://api.example.com/v1/`); a version configured there is replaced.
 */
export function versionedServerUrl(baseUrl: string, version = '1'): string {
  const root = baseUrl.replace(/\/+$/, '').replace(/\/v\d+$/i, '');
  return `${root}${versionPrefix(version)}`;
}

/** A DNS name (RFC 1123 labels), an IPv4 address or a bracketed IPv6 one, and an optional port. */
const HOST =
  /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*|\[([0-9a-f:.]+)\])(?::(\d{1,5}))?$/i;

/**
 * This server's own `servers` entry, from the address the client used (`Host`, and the scheme,
 * which Express takes from `X-Forwarded-Proto` under TRUST_PROXY). Both are the client's word, and
 * the document (and Swagger UI's page) shows them: only an `http`/`https` scheme and a well-formed
 * host[:port] are taken; anything else gives the relative `/v1` (the version's prefix), which
 * OpenAPI resolves against the document's own address.
 */
export function selfServerUrl(protocol: string, host: string | undefined, version = '1'): string {
  const match = host === undefined ? null : HOST.exec(host);
  const ipv6 = match?.[1];
  const port = match?.[2];
  const valid =
    match !== null &&
    (protocol === 'http' || protocol === 'https') &&
    (ipv6 === undefined || isIPv6(ipv6)) &&
    (port === undefined || Number(port) <= 65535);
  return valid ? versionedServerUrl(`${protocol}://${host}`, version) : versionPrefix(version);
}
