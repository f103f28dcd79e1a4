import type { NamedStatement } from '../database/statements';
import { DELIVERY_COLUMNS, ENDPOINT_COLUMNS } from './webhook-json';

/*
 * The statements of the webhooks' tables, run by their repositories
 * (webhook-endpoints.repository.ts, webhook-deliveries.repository.ts).
 */

// Endpoints.

export const ACTIVE_ENDPOINTS_SQL = `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE removed_at IS NULL ORDER BY created_at, id`;

export const ACTIVE_ENDPOINT_SQL = `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1 AND removed_at IS NULL`;

/** Held to the end of the transaction: one new endpoint at a time. */
export const NEW_ENDPOINT_LOCK_SQL = `SELECT pg_advisory_xact_lock(hashtext('webhook_endpoints'))`;

export const ACTIVE_ENDPOINT_COUNT_SQL = `SELECT count(*)::int AS count FROM webhook_endpoints WHERE removed_at IS NULL`;

export const INSERT_ENDPOINT_SQL = `INSERT INTO webhook_endpoints (url, events, description, secret)
           VALUES ($1, $2, $3, $4) RETURNING ${ENDPOINT_COLUMNS}`;

/**
 * A change of an endpoint: `$2` url, `$3` events (each NULL: unchanged), `$4` whether the
 * description changes, to `$5`, `$6` disabled (NULL: unchanged).
 */
export const CHANGE_ENDPOINT_SQL = `UPDATE webhook_endpoints
            SET url = COALESCE($2, url),
                events = COALESCE($3, events),
                description = CASE WHEN $4::boolean THEN $5 ELSE description END,
                disabled_at = CASE WHEN $6::boolean IS NULL THEN disabled_at
                                   WHEN $6 THEN COALESCE(disabled_at, now()) ELSE NULL END,
                disabled_reason = CASE WHEN $6::boolean IS NULL THEN disabled_reason
                                       WHEN $6 THEN COALESCE(disabled_reason, 'operator') ELSE NULL END,
                failing_since = CASE WHEN $6::boolean = false THEN NULL ELSE failing_since END
          WHERE id = $1 AND removed_at IS NULL
          RETURNING ${ENDPOINT_COLUMNS}`;

export const LOCK_ENDPOINT_SQL = `SELECT removed_at IS NOT NULL AS removed FROM webhook_endpoints WHERE id = $1 FOR UPDATE`;

export const REMOVE_ENDPOINT_SQL = `UPDATE webhook_endpoints SET removed_at = now() WHERE id = $1`;

/** A new secret `$2`; the old one kept for `$3` seconds (0: not at all). */
export const ROTATE_SECRET_SQL = `UPDATE webhook_endpoints
          SET previous_secret = CASE WHEN $3::bigint > 0 THEN secret END,
              previous_secret_until = CASE WHEN $3::bigint > 0 THEN now() + $3 * interval '1 second' END,
              secret = $2, secret_rotated_at = now()
        WHERE id = $1 AND removed_at IS NULL
        RETURNING ${ENDPOINT_COLUMNS}`;

/** A failed attempt's endpoint: failing since now, unless it was already; `long` past `$2` hours. */
export const ENDPOINT_FAILING_SQL = `UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, now())
          WHERE id = $1
          RETURNING failing_since < now() - $2 * interval '1 hour' AS long`;

export const DISABLE_ENDPOINT_SQL = `UPDATE webhook_endpoints SET disabled_at = now(), disabled_reason = $2
        WHERE id = $1 AND disabled_at IS NULL`;

/** The endpoints of some ids (uuids), removed ones too: the objects of their events. */
export const ENDPOINTS_WITH_IDS_SQL = `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = ANY ($1::uuid[])`;

/** The actions some enabled endpoint subscribes to: as the fan-out's join matches them. */
export const SUBSCRIBED_ACTIONS: NamedStatement = {
  name: 'webhooks.subscribed',
  text: `SELECT DISTINCT unnest(events) AS action FROM webhook_endpoints
          WHERE removed_at IS NULL AND disabled_at IS NULL`,
};

// Deliveries.

/** Fails the pending deliveries of an endpoint that gets nothing any more. */
export const FAIL_PENDING_SQL = `UPDATE webhook_deliveries
   SET status = 'failed', next_attempt_at = NULL,
       last_error = COALESCE(last_error, $2)
 WHERE endpoint_id = $1 AND status = 'pending'`;

/**
 * A page of an endpoint's deliveries, newest first: `$2` a status (NULL: any), after
 * (`$3` created_at, `$4` id) when given, `$5` rows at most.
 */
export const DELIVERY_PAGE_SQL = `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries
          WHERE endpoint_id = $1
            AND ($2::text IS NULL OR status = $2)
            AND ($3::timestamptz IS NULL OR (created_at, id) < ($3::timestamptz, $4::uuid))
          ORDER BY created_at DESC, id DESC
          LIMIT $5`;

export const RETRY_DELIVERY_SQL = `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = now()
            WHERE id = $1 AND endpoint_id = $2 RETURNING ${DELIVERY_COLUMNS}`;

/** The test route's delivery: to endpoint `$1`, of type `$2` at `$3`, body `$4`. */
export const TEST_DELIVERY_SQL = `WITH made AS (SELECT gen_random_uuid() AS id)
         INSERT INTO webhook_deliveries (id, endpoint_id, webhook_id, type, event_at, body, next_attempt_at)
         SELECT made.id, $1, 'evt_test_' || replace(made.id::text, '-', ''), $2, $3, $4, now()
           FROM made
         RETURNING ${DELIVERY_COLUMNS}`;

/**
 * A delivery per event of `$1` (ids, with their actions `$2`, times `$3` and message bodies `$4`)
 * and enabled endpoint subscribed to its action, unless it has one already (a run of the fan-out
 * again, or a delivery the trigger of earlier releases wrote). It is made at the event's time: an
 * endpoint's deliveries are listed in the order of their events, however the fan-outs ran, and
 * the age of a pending one counts from its change.
 */
export const FAN_OUT_SQL = `
  INSERT INTO webhook_deliveries (endpoint_id, event_id, webhook_id, type, event_at, body,
                                  next_attempt_at, created_at)
  SELECT e.id, v.event_id, 'evt_' || v.event_id, v.action, v.at, v.body, now(), v.at
    FROM unnest($1::bigint[], $2::text[], $3::timestamptz[], $4::text[])
           AS v (event_id, action, at, body)
    JOIN webhook_endpoints e
      ON e.removed_at IS NULL AND e.disabled_at IS NULL AND v.action = ANY (e.events)
   WHERE NOT EXISTS (SELECT 1 FROM webhook_deliveries d
                      WHERE d.event_id = v.event_id AND d.endpoint_id = e.id)
  RETURNING id`;

/*
 * The statements of every batch of attempts are sent by name: each connection prepares them
 * once, and PostgreSQL does not plan them again for every batch.
 */

/**
 * Claims the pending deliveries of a batch that are due, for one attempt each: a lease as long as
 * the attempt and its recording may take, so that however many jobs name a delivery, one attempt
 * runs at a time. An attempt cut off by a crash leaves its lease: the job pg-boss runs again
 * finds it and comes back when it ends. A delivery without its body (queued by the trigger of releases before
 * the fan-out made bodies) comes with its audit event, in the same round trip.
 *
 * The batch is found by its primary keys whatever the table's statistics say. A backlog (an
 * endpoint or the workers down for a while) adds pending deliveries faster than autovacuum analyses
 * a large table again, and, planned on statistics that counted almost none pending, `status =
 * 'pending'` or a join on the endpoint read the whole backlog for each batch, through the partial
 * index of pending deliveries or the endpoint's. So the status is tested as neither delivered nor
 * failed, which no index answers, and the endpoint by an anti-join that the deliveries drive.
 */
export const CLAIM: NamedStatement = {
  name: 'webhooks.claim',
  text: `
  WITH claimed AS (
    UPDATE webhook_deliveries d
       SET lease_until = now() + $2 * interval '1 millisecond', attempts = d.attempts + 1,
           last_attempt_at = now()
     WHERE d.id = ANY ($1::uuid[]) AND d.status NOT IN ('delivered', 'failed')
       AND (d.lease_until IS NULL OR d.lease_until < now())
       AND d.next_attempt_at <= now() + interval '1 second'
       AND NOT EXISTS (SELECT 1 FROM webhook_endpoints ep
                        WHERE ep.id = d.endpoint_id
                          AND (ep.disabled_at IS NOT NULL OR ep.removed_at IS NOT NULL))
    RETURNING d.id, d.endpoint_id, d.event_id, d.webhook_id, d.type, d.body, d.attempts
  )
  SELECT c.*, e.url, e.secret,
         CASE WHEN e.previous_secret_until > now() THEN e.previous_secret END AS previous_secret,
         a.actor, a.target, a.request_id, a.at
    FROM claimed c
    JOIN webhook_endpoints e ON e.id = c.endpoint_id
    LEFT JOIN audit_events a ON c.body IS NULL AND a.id = c.event_id`,
};

/** The bodies of first attempts, fixed for every later one: one statement for a batch. */
export const BODIES: NamedStatement = {
  name: 'webhooks.bodies',
  text: `
  UPDATE webhook_deliveries d SET body = b.body
    FROM unnest($1::uuid[], $2::text[]) AS b(id, body)
   WHERE d.id = b.id`,
};

/**
 * The delivered attempts of a batch, in one statement; an endpoint's row is written (and locked)
 * only when it was failing, so that the attempts to one endpoint never wait for each other.
 */
export const DELIVERED: NamedStatement = {
  name: 'webhooks.delivered',
  text: `
  WITH delivered AS (
    UPDATE webhook_deliveries d
       SET status = 'delivered', last_status_code = s.code, last_error = NULL, lease_until = NULL,
           delivered_at = now(), next_attempt_at = NULL
      FROM unnest($1::uuid[], $2::int[]) AS s(id, code)
     WHERE d.id = s.id
    RETURNING d.endpoint_id
  )
  UPDATE webhook_endpoints SET failing_since = NULL
   WHERE id IN (SELECT endpoint_id FROM delivered) AND failing_since IS NOT NULL`,
};

/** Why a job found nothing to attempt. */
export const UNCLAIMED_SQL = `
  SELECT d.status, d.lease_until > now() AS leased, d.lease_until,
         e.disabled_at IS NOT NULL OR e.removed_at IS NOT NULL AS endpoint_off
    FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
   WHERE d.id = $1`;

/** A pending delivery of an endpoint disabled or removed since it was queued: ended. */
export const FAIL_FOR_ENDPOINT_OFF_SQL = `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL,
                last_error = COALESCE(last_error, 'the endpoint is disabled')
          WHERE id = $1 AND status = 'pending'`;

/** A failed attempt's outcome: `failed`, or `pending` with its next attempt in `$5` ms. */
export const ATTEMPT_OUTCOME_SQL = `
  UPDATE webhook_deliveries
     SET status = $2, last_status_code = $3, last_error = $4, lease_until = NULL,
         delivered_at = NULL,
         next_attempt_at = CASE WHEN $2 = 'pending' THEN now() + $5 * interval '1 millisecond' END
   WHERE id = $1
  RETURNING next_attempt_at`;

/** Pending deliveries, and the age of the oldest, for the gauges. */
export const PENDING_SQL = `
  SELECT count(*)::int AS pending,
         COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::float8 AS oldest
    FROM webhook_deliveries WHERE status = 'pending'`;
