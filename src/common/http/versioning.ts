import { VersioningType, type VersioningOptions } from '@nestjs/common';

/**
 * The API's versioning: the version in the URI (`/v1/...`). A controller that names no version is
 * served, and documented, as v1: it never lands outside every version by omission.
 */
export const API_VERSIONING = {
  type: VersioningType.URI,
  defaultVersion: '1',
} as const satisfies VersioningOptions;

/** `/v1`, `/v2`: the prefix URI versioning gives the routes of a version. */
export function versionPrefix(version: string): string {
  return `/v${version}`;
}
