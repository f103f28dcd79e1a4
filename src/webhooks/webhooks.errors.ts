import { HttpStatus } from '@nestjs/common';
import { defineErrorCodes } from '../common/errors/error-code';

/** The errors of the webhooks' routes, on the admin API (its document lists them). */
export const WebhookErrors = defineErrorCodes(
  {
    WEBHOOK_NOT_FOUND: {
      status: HttpStatus.NOT_FOUND,
      message: 'No webhook endpoint with this id exists',
    },
    DELIVERY_NOT_FOUND: {
      status: HttpStatus.NOT_FOUND,
      message: 'No delivery with this id exists for this endpoint',
    },
  },
  { api: 'admin' },
);
