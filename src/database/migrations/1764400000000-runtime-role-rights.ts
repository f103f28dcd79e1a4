import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What the instances' role may not do, whatever its name: the service deletes no row of any
 * table, never writes the cursor secret (it only reads it) nor the migrations' own table, and
 * never updates an audit event. Every role but a table's owner loses those rights here, as the
 * audit trail's migration did for its table; the roles script
 * (docker/postgres/initdb.d/10-roles.sh) and the embedded database
 * (src/database/embedded/embedded-database.ts) grant SELECT, INSERT and UPDATE on new tables, and this is
 * where a table gets narrower than that. On a cluster without those roles nothing is granted, and
 * nothing changes.
 */
export class RuntimeRoleRights1764400000000 implements MigrationInterface {
  name = 'RuntimeRoleRights1764400000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    const taken: Record<string, string> = {
      orders: 'DELETE, TRUNCATE',
      api_keys: 'DELETE, TRUNCATE',
      order_cursor_secret: 'INSERT, UPDATE, DELETE, TRUNCATE',
      typeorm_migrations: 'INSERT, UPDATE, DELETE, TRUNCATE',
      // Already so since its migration; again here for tables whose grants came later (an
      // embedded database made before it had roles: see embedded-database.ts).
      audit_events: 'UPDATE, DELETE, TRUNCATE',
    };
    for (const [table, privileges] of Object.entries(taken)) {
      await queryRunner.query(`
        DO $$
        DECLARE grantee regrole;
        BEGIN
          REVOKE ${privileges} ON "${table}" FROM PUBLIC;
          FOR grantee IN
            SELECT DISTINCT acl.grantee::regrole
              FROM pg_class, aclexplode(pg_class.relacl) AS acl
             WHERE pg_class.oid = '"${table}"'::regclass
               AND acl.grantee <> 0 AND acl.grantee <> pg_class.relowner
          LOOP
            EXECUTE format('REVOKE ${privileges} ON "${table}" FROM %s', grantee);
          END LOOP;
        END
        $$`);
    }
    // A database set up by an earlier roles script grants DELETE on every new table by default:
    // its later tables must not get it either.
    await queryRunner.query(`
      DO $$
      DECLARE entry record;
      BEGIN
        FOR entry IN
          SELECT DISTINCT d.defaclrole::regrole AS owner, acl.grantee::regrole AS grantee
            FROM pg_default_acl AS d, aclexplode(d.defaclacl) AS acl
           WHERE d.defaclobjtype = 'r'
             AND d.defaclnamespace = 'public'::regnamespace
             AND acl.grantee <> 0
             AND acl.privilege_type IN ('DELETE', 'TRUNCATE')
             AND pg_has_role(current_user, d.defaclrole, 'MEMBER')
        LOOP
          EXECUTE format(
            'ALTER DEFAULT PRIVILEGES FOR ROLE %s IN SCHEMA public REVOKE DELETE, TRUNCATE ON TABLES FROM %s',
            entry.owner, entry.grantee);
        END LOOP;
      END
      $$`);
  }

  /**
   * Nothing to undo: the rights taken were never used, by this version or the one before, so a
   * rollback keeps the narrower grants.
   */
  public async down(): Promise<void> {
    // Intentionally empty (see above).
  }
}
