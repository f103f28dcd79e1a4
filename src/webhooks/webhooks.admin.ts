import { defineAdminRoutes } from '../admin-routes/admin-routes';
import { AdminWebhooksController } from './admin-webhooks.controller';
import { WebhooksService } from './webhooks.service';

/** The endpoints' routes on the admin API (`/admin/v1/webhooks`), over the API's service. */
export const WebhooksAdmin = defineAdminRoutes({
  controllers: [AdminWebhooksController],
  fromApi: [WebhooksService],
});
