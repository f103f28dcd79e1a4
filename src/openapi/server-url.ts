/** The version prefix of every operation; the OpenAPI paths are relative to it. */
export const API_VERSION_PREFIX = '/v1';

/**
 * A base URL as the document's `servers` show it: ending in `/v1` exactly once, whether it was
 * configured with or without it (`https://api.example.com`, `https://api.example.com/v1/`).
 */
export function versionedServerUrl(baseUrl: string): string {
  const root = baseUrl.replace(/\/+$/, '').replace(/\/v1$/i, '');
  return `${root}${API_VERSION_PREFIX}`;
}
