import { defineScopes } from '../auth/scopes';

/** The webhooks' administration: like `keys:admin`, a key has it only when granted by name. */
export const WebhookScopes = defineScopes({
  ADMIN: {
    name: 'webhooks:admin',
    description:
      'The admin API of webhooks: add, change and remove endpoints, rotate their secrets, read and resend their deliveries',
    byNameOnly: true,
  },
});
