import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

const TIME = { type: 'string', format: 'date-time' } as const;

/** An Endpoint in the admin API's document. */
export class AdminWebhookSchema {
  @ApiProperty({ format: 'uuid' })
  id!: string;
  @ApiProperty({ example: 'https://hooks.example.com/store-orders' })
  url!: string;
  @ApiProperty({ type: [String], example: ['order.cancelled'] })
  events!: string[];
  @ApiPropertyOptional()
  description?: string;
  @ApiProperty()
  disabled!: boolean;
  @ApiPropertyOptional({
    enum: ['gone', 'failing', 'operator'],
    description:
      '`gone`: it answered 410; `failing`: no success for too long; `operator`: disabled over this API.',
  })
  disabledReason?: string;
  @ApiProperty(TIME)
  createdAt!: string;
  @ApiPropertyOptional(TIME)
  secretRotatedAt?: string;
}

export class AdminWebhookListSchema {
  @ApiProperty({ type: [AdminWebhookSchema] })
  data!: AdminWebhookSchema[];
}

/** An Endpoint just made or given a new secret: with the secret, shown this once. */
export class AdminWebhookWithSecretSchema extends AdminWebhookSchema {
  @ApiProperty({
    description: 'The signing secret (`whsec_` + base64): shown this once, never again.',
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  })
  secret!: string;
}

/** A Delivery: one event to one endpoint. */
export class AdminWebhookDeliverySchema {
  @ApiProperty({ format: 'uuid' })
  id!: string;
  @ApiProperty({ description: "The message's `webhook-id`.", example: 'evt_42' })
  eventId!: string;
  @ApiProperty({ example: 'order.cancelled' })
  type!: string;
  @ApiProperty({ enum: ['pending', 'delivered', 'failed'] })
  status!: string;
  @ApiProperty({ type: 'integer' })
  attempts!: number;
  @ApiPropertyOptional(TIME)
  lastAttemptAt?: string;
  @ApiPropertyOptional({ type: 'integer' })
  lastStatusCode?: number;
  @ApiPropertyOptional({ description: 'What went wrong last (at most 1 KiB of the answer).' })
  lastError?: string;
  @ApiPropertyOptional(TIME)
  nextAttemptAt?: string;
  @ApiPropertyOptional(TIME)
  deliveredAt?: string;
}

export class AdminWebhookDeliveryPageSchema {
  @ApiProperty({ type: [AdminWebhookDeliverySchema] })
  data!: AdminWebhookDeliverySchema[];
  @ApiProperty()
  hasMore!: boolean;
  @ApiPropertyOptional({
    description: "Present exactly when `hasMore` is: the next page's `cursor`.",
  })
  nextCursor?: string;
}
