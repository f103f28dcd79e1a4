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
