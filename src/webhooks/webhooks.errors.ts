import { HttpStatus } from '@nestjs/common';
import { ADMIN_API, defineErrorCodes } from '../common/errors/error-code';

/** The errors of the webhooks' routes, on the admin API (its document lists them). */
export const WebhookErrors = defineErrorCodes(
  {
    WEBHOOK_NOT_FOUND: {
      status: HttpStatus.NOT_FOUND,
      message: 'No webhook endpoint with this id exists',
      when: 'no [webhook endpoint](webhooks.md) with this id (every webhooks route with an unknown id)',
    },
    DELIVERY_NOT_FOUND: {
      status: HttpStatus.NOT_FOUND,
      message: 'No delivery with this id exists for this endpoint',
      when: 'no delivery with this id for this endpoint (send again)',
    },
  },
  { api: ADMIN_API },
);
