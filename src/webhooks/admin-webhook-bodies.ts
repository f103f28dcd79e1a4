import { ApiProperty, ApiPropertyOptional, type ApiPropertyOptions } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayNotEmpty,
  IsArray,
  IsBoolean,
  IsInt,
  IsOptional,
  IsString,
  Length,
  Max,
  Min,
} from 'class-validator';
import { MAX_GRACE_SECONDS } from '../admin-routes/admin-bodies';

const URL_FIELD = {
  description:
    'Where messages are POSTed: `https://` (`http://` only where the service allows it), no user name or password, a host that resolves only to public addresses.',
  example: 'https://hooks.example.com/store-orders',
  minLength: 1,
  maxLength: 2048,
};

const EVENTS_FIELD: ApiPropertyOptions = {
  type: [String],
  description: 'The event types sent to the endpoint (at least one).',
  example: ['order.cancelled'],
};

const DESCRIPTION_FIELD = { maxLength: 500, example: 'Warehouse: stop the pick' };

/** `POST /admin/v1/webhooks`. */
export class CreateWebhookBody {
  @ApiProperty(URL_FIELD)
  @IsString()
  @Length(1, 2048)
  url!: string;

  @ApiProperty(EVENTS_FIELD)
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(100)
  @IsString({ each: true })
  events!: string[];

  @ApiPropertyOptional(DESCRIPTION_FIELD)
  @IsOptional()
  @IsString()
  @Length(0, 500)
  description?: string;
}

/** `PATCH /admin/v1/webhooks/{id}`: any of the fields. */
export class ChangeWebhookBody {
  @ApiPropertyOptional(URL_FIELD)
  @IsOptional()
  @IsString()
  @Length(1, 2048)
  url?: string;

  @ApiPropertyOptional(EVENTS_FIELD)
  @IsOptional()
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(100)
  @IsString({ each: true })
  events?: string[];

  @ApiPropertyOptional(DESCRIPTION_FIELD)
  @IsOptional()
  @IsString()
  @Length(0, 500)
  description?: string;

  @ApiPropertyOptional({
    description:
      'true: the endpoint gets nothing (its pending deliveries end `failed`); false: it gets the events committed from then on.',
  })
  @IsOptional()
  @IsBoolean()
  disabled?: boolean;
}

/** `POST /admin/v1/webhooks/{id}/rotate-secret`. */
export class RotateWebhookSecretBody {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: MAX_GRACE_SECONDS,
    description:
      'How long the old secret signs too (a second signature): 86400 (24 h) unless given; 0 drops it now.',
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_GRACE_SECONDS)
  graceSeconds?: number;
}
