/**
 * A base URL as a document's `servers` show it: ending in the version prefix (`/v1`, `/v2`) exactly
 * once, whether it was configured with or without a version (`https://api.example.com`,
 * `https://api.example.com/v1/`).
 */
export function versionedServerUrl(baseUrl: string, prefix = '/v1'): string {
  const root = baseUrl.replace(/\/+$/, '').replace(/\/v[0-9]+$/i, '');
  return `${root}${prefix}`;
}
