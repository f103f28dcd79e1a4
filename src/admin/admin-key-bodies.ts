import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional, ApiProperty } from '@nestjs/swagger';
import {
  ArrayNotEmpty,
  IsArray,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Length,
  Max,
  Min,
} from 'class-validator';
import { MAX_GRACE_SECONDS } from '../admin-routes/admin-bodies';
import { type Plan, PLANS } from '../plans/plans';

/**
 * A limit of the key's own (`perMinute`, `perDay`): its type here; that it is given for an
 * enterprise key only, and there both, is the keys service's rule (`planLimitsProblem`).
 */
const PlanLimitField = (): PropertyDecorator =>
  applyDecorators(
    ApiPropertyOptional({
      type: 'integer',
      minimum: 1,
      description: 'Enterprise only, required there.',
    }),
    IsOptional(),
    IsInt(),
  );

/**
 * `POST /admin/v1/keys`: the fields' types here; the rules of plan and limits, scopes and expiry
 * are the keys service's (`planLimitsProblem`, `scopesProblem`, the repository's expiry check), the
 * same the keys tool obeys.
 */
export class CreateKeyBody {
  @ApiProperty({ enum: PLANS })
  @IsIn(PLANS)
  plan!: Plan;

  @ApiPropertyOptional({ minLength: 1, maxLength: 200, example: 'reporting' })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  name?: string;

  @PlanLimitField()
  perMinute?: number;

  @PlanLimitField()
  perDay?: number;

  @ApiPropertyOptional({
    type: 'string',
    format: 'date-time',
    description: 'When the key stops working (RFC 3339 with an offset, in the future).',
  })
  @IsOptional()
  @IsString()
  expiresAt?: string;

  @ApiPropertyOptional({
    type: [String],
    description:
      'Restrict the key to these scopes; absent, every scope but `keys:admin` (`["*"]`).',
    example: ['orders:read'],
  })
  @IsOptional()
  @IsArray()
  @ArrayNotEmpty()
  @IsString({ each: true })
  scopes?: string[];
}

/** `POST /admin/v1/keys/{id}/rotate`. */
export class RotateKeyBody {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: MAX_GRACE_SECONDS,
    description:
      'How long the old key keeps working: 86400 (24 h, as the keys tool) unless given; 0 refuses it from now on.',
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_GRACE_SECONDS)
  graceSeconds?: number;
}
