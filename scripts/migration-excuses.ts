/**
 * The statements of migrations already run on deployed databases that break one of Squawk's
 * rules, each with the reason it stays. A migration that has run must keep its effect, so these
 * are excused rather than changed; a new migration follows the rules instead. Keyed by the
 * migration's name; `statement` is how the statement starts (spaces folded). An excuse that no
 * longer matches a statement fails the lint, so this list cannot outlive what it excuses.
 */
export interface Excuse {
  statement: string;
  /** Squawk's rules this statement may break, or `not-ours` for SQL a library wrote. */
  rules: string[] | 'not-ours';
  reason: string;
}

/** Retrying a failed CREATE INDEX CONCURRENTLY is safe: the migration drops it IF EXISTS first. */
const DROPPED_BEFORE =
  'the statement before drops the index IF EXISTS: a rerun after a failed build starts clean';

export const EXCUSES: Record<string, Excuse[]> = {
  CreateOrders1763800000000: [
    {
      statement: 'CREATE TABLE "orders"',
      rules: ['prefer-bigint-over-int'],
      reason: 'quantity is a 32-bit integer in the API the store already serves',
    },
  ],
  CreateApiKeys1763800100000: [
    {
      statement: 'CREATE TABLE "api_keys"',
      rules: ['ban-char-field', 'prefer-bigint-over-int'],
      reason:
        'key_hash is always 64 hex digits; the limits per minute and per day stay far below 2^31',
    },
  ],
  AddOrderPageIndexes1763900000000: [
    'IDX_orders_status_id',
    'IDX_orders_pet_id_id',
    'IDX_orders_complete_id',
    'IDX_orders_ship_date_id',
    'IDX_orders_status_ship_date_id',
  ].map((name) => ({
    statement: `CREATE INDEX CONCURRENTLY "${name}"`,
    rules: ['prefer-robust-stmts'],
    reason: DROPPED_BEFORE,
  })),
  ApiKeyLifecycle1763900000000: [
    {
      statement: 'CREATE INDEX "IDX_api_keys_family_id"',
      rules: ['require-concurrent-index-creation'],
      reason:
        'api_keys holds a row per key issued (thousands at most): the build blocked its writes for milliseconds',
    },
  ],
  CreateOrderCursorSecret1764120000000: [
    {
      statement: 'CREATE TABLE "order_cursor_secret"',
      rules: ['prefer-bigint-over-smallint'],
      reason: 'a table of one row, its id held to 1 by a check',
    },
  ],
  BoundOrderPageIndexes1764120000001: [
    {
      statement: 'CREATE INDEX CONCURRENTLY "IDX_orders_pet_id_ship_date_id"',
      rules: ['prefer-robust-stmts'],
      reason: DROPPED_BEFORE,
    },
  ],
  CreateWebhooks1764500000000: [
    {
      statement: 'BEGIN; SET LOCAL lock_timeout = 30000;',
      rules: 'not-ours',
      reason:
        "pg-boss's own schema, built by its construction plans (which carry their own BEGIN and COMMIT)",
    },
    {
      statement: 'CREATE TABLE "webhook_deliveries"',
      rules: ['prefer-bigint-over-int'],
      reason: 'attempts and an HTTP status code stay far below 2^31',
    },
  ],
};
