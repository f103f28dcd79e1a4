import type { Client } from 'pg';

/**
 * What the service's runtime role may do on each table, in production (the roles of
 * docker/postgres/initdb.d/10-roles.sh, then the migrations) and on the embedded database alike:
 * no DELETE or TRUNCATE anywhere, the audit trail read and appended only, the cursor secret and
 * the migrations' table read only.
 */
export const RUNTIME_ROLE_RIGHTS: Record<string, string[]> = {
  api_keys: ['INSERT', 'SELECT', 'UPDATE'],
  audit_events: ['INSERT', 'SELECT'],
  order_cursor_secret: ['SELECT'],
  orders: ['INSERT', 'SELECT', 'UPDATE'],
  event_relay: ['INSERT', 'SELECT', 'UPDATE'],
  typeorm_migrations: ['SELECT'],
  webhook_deliveries: ['INSERT', 'SELECT', 'UPDATE'],
  webhook_endpoints: ['INSERT', 'SELECT', 'UPDATE'],
};

/** Every table of the public schema, with the table privileges `role` holds on it. */
export async function tableRightsOf(
  client: Client,
  role: string,
): Promise<Record<string, string[]>> {
  const { rows } = await client.query<{ table: string; rights: string[] }>(
    `SELECT c.relname AS "table",
            coalesce(array_agg(p.privilege ORDER BY p.privilege)
                       FILTER (WHERE has_table_privilege($1, c.oid, p.privilege)), '{}') AS rights
       FROM pg_class AS c
            CROSS JOIN unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE',
                                    'REFERENCES', 'TRIGGER', 'MAINTAIN']) AS p(privilege)
      WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')
      GROUP BY c.relname`,
    [role],
  );
  return Object.fromEntries(rows.map((row) => [row.table, row.rights]));
}

/**
 * As `role`, each change the service never makes: refused by the grants (permission denied), not
 * only by a trigger.
 */
export const REFUSED_TO_RUNTIME_ROLE: { sql: string; table: string }[] = [
  { sql: 'DELETE FROM api_keys', table: 'api_keys' },
  { sql: 'TRUNCATE api_keys', table: 'api_keys' },
  { sql: 'DELETE FROM orders', table: 'orders' },
  { sql: "UPDATE order_cursor_secret SET secret = '\\x00'", table: 'order_cursor_secret' },
  { sql: 'DELETE FROM order_cursor_secret', table: 'order_cursor_secret' },
  {
    sql: "INSERT INTO order_cursor_secret (id, secret) VALUES (1, '\\x00')",
    table: 'order_cursor_secret',
  },
  { sql: 'TRUNCATE order_cursor_secret', table: 'order_cursor_secret' },
  { sql: "UPDATE audit_events SET actor = 'cli:someone-else'", table: 'audit_events' },
  { sql: 'DELETE FROM audit_events', table: 'audit_events' },
  { sql: 'TRUNCATE audit_events', table: 'audit_events' },
  { sql: 'DELETE FROM typeorm_migrations', table: 'typeorm_migrations' },
];

/**
 * Tries each of {@link REFUSED_TO_RUNTIME_ROLE} in a transaction rolled back after (so one that
 * is let through changes nothing); returns those not refused for lack of privilege.
 */
export async function changesNotRefused(client: Client): Promise<string[]> {
  const allowed: string[] = [];
  for (const { sql, table } of REFUSED_TO_RUNTIME_ROLE) {
    await client.query('BEGIN');
    try {
      const refused = await client.query(sql).then(
        () => false,
        (error: unknown) =>
          error instanceof Error && error.message === `permission denied for table ${table}`,
      );
      if (!refused) allowed.push(sql);
    } finally {
      await client.query('ROLLBACK');
    }
  }
  return allowed;
}
