import { Check, Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import type { Plan } from '../plans/plans';

/** An API key. Only the SHA-256 of the key is stored; the key itself is shown once, at issue. */
@Entity({ name: 'api_keys' })
@Check('CHK_api_keys_plan', `"plan" IN ('free', 'pro', 'business', 'enterprise')`)
@Check(
  'CHK_api_keys_enterprise_limits',
  `("plan" = 'enterprise' AND "per_minute" IS NOT NULL AND "per_day" IS NOT NULL AND "per_minute" > 0 AND "per_day" > 0) OR ("plan" <> 'enterprise' AND "per_minute" IS NULL AND "per_day" IS NULL)`,
)
export class ApiKey {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'PK_api_keys' })
  id!: string;

  @Column({ type: 'text', nullable: true })
  name!: string | null;

  /** The first characters of the key, to tell keys apart in listings and logs. */
  @Column({ type: 'text' })
  prefix!: string;

  @Index('UQ_api_keys_key_hash', { unique: true })
  @Column({ name: 'key_hash', type: 'char', length: 64, select: false })
  keyHash!: string;

  @Column({ type: 'text' })
  plan!: Plan;

  /** Enterprise keys only: limits set when the key is issued. */
  @Column({ name: 'per_minute', type: 'integer', nullable: true })
  perMinute!: number | null;

  @Column({ name: 'per_day', type: 'integer', nullable: true })
  perDay!: number | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt!: Date | null;

  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt!: Date | null;

  /** After this moment the key is refused as expired; null: never expires. */
  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt!: Date | null;

  /**
   * The key's rotation family: null for a key issued by `keys create` (it heads its own family,
   * whose id is its id); the first key's id for the replacements `keys rotate` issues. A family
   * shares one rate-limit budget and one ban.
   */
  @Index('IDX_api_keys_family_id')
  @Column({ name: 'family_id', type: 'uuid', nullable: true })
  familyId!: string | null;

  /**
   * What the key may do (`scopes.ts`), sorted; null: every scope but `keys:admin`, as for the
   * keys issued before scopes existed.
   */
  @Column({ type: 'text', array: true, nullable: true })
  scopes!: string[] | null;

  /** Set by the rate limiter when the key keeps sending after its 429s; cleared by `keys unban`. */
  @Column({ name: 'banned_until', type: 'timestamptz', nullable: true })
  bannedUntil!: Date | null;
}
