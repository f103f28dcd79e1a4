import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { IssuedKey, KeySummary } from '../auth/api-keys.repository';
import { issuedJson, keyResourceFields, keyResourceJson } from '../auth/key-json';
import { PLANS } from '../plans/plans';

/** A key as the admin API shows it. */
export function adminKeyJson(key: KeySummary, now = Date.now()): Record<string, unknown> {
  return keyResourceJson(key, now);
}

/** A key just issued, with its secret: shown this once. */
export function adminIssuedKeyJson(key: IssuedKey): Record<string, unknown> {
  return keyResourceFields(issuedJson(key), ['key']);
}

const TIME = { type: 'string', format: 'date-time' } as const;

/** A Key in the admin API's document. */
export class AdminKeySchema {
  @ApiProperty({ format: 'uuid', example: '4f8d0c1e-6b7a-4c55-9a51-0f3e2d1c9b8a' })
  id!: string;
  @ApiPropertyOptional({ example: 'reporting' })
  name?: string;
  @ApiProperty({ enum: PLANS })
  plan!: string;
  @ApiProperty({ type: 'integer', example: 300 })
  perMinute!: number;
  @ApiProperty({ type: 'integer', example: 10000 })
  perDay!: number;
  @ApiProperty({
    type: [String],
    description: 'What the key may do; `["*"]`: every scope but `keys:admin`.',
    example: ['orders:read'],
  })
  scopes!: string[];
  @ApiProperty(TIME)
  createdAt!: string;
  @ApiPropertyOptional({ ...TIME, description: 'When the key stops working.' })
  expiresAt?: string;
  @ApiPropertyOptional(TIME)
  revokedAt?: string;
  @ApiPropertyOptional(TIME)
  lastUsedAt?: string;
  @ApiPropertyOptional({ ...TIME, description: 'Present while the key is banned.' })
  bannedUntil?: string;
}

/** A Key just issued: with its secret, shown this once. */
export class AdminIssuedKeySchema extends AdminKeySchema {
  @ApiProperty({
    description: 'The key itself: shown this once, never again.',
    example: 'sk_3xQ9...',
  })
  key!: string;
}

export class AdminKeyListSchema {
  @ApiProperty({ type: [AdminKeySchema] })
  data!: AdminKeySchema[];
}
