import type { ConfigType } from '@nestjs/config';
import { defineSettings, url } from '../config/settings';

/** The servers the OpenAPI documents name. */
export const openApiSettings = defineSettings('openapi', {
  PUBLIC_BASE_URL: {
    rule: url({ protocols: ['http', 'https'] }),
    description:
      'public base URL, the first server of the OpenAPI document (with or without `/v1`). Unset: this server, at the address the client reached it by',
  },
  STAGING_BASE_URL: {
    rule: url({ protocols: ['http', 'https'] }),
    description: 'staging base URL, a second server of the OpenAPI document. Unset: not shown',
  },
});
export type OpenApiSettings = ConfigType<typeof openApiSettings>;
