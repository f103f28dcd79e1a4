import {
  AUDIT_ACTION_NAMES,
  auditActions,
  defineAuditActions,
  isAuditAction,
} from './audit-actions';
import { auditEventsOfRows } from './audit-events.sql';

describe('audit actions', () => {
  const Gizmo = defineAuditActions({
    MADE: { name: 'gizmo.made', description: 'A gizmo was made' },
    BROKEN: { name: 'gizmo.broken', description: 'A gizmo was broken' },
  });

  it('knows the actions a module declares, in the order declared, with what they record', () => {
    expect(Gizmo).toEqual({ MADE: 'gizmo.made', BROKEN: 'gizmo.broken' });
    expect(isAuditAction('gizmo.made')).toBe(true);
    expect(isAuditAction('gizmo.eaten')).toBe(false);
    expect(AUDIT_ACTION_NAMES.slice(-2)).toEqual(['gizmo.made', 'gizmo.broken']);
    expect(auditActions()).toContainEqual({
      name: 'gizmo.broken',
      description: 'A gizmo was broken',
    });
  });

  it('grows the same list as modules declare theirs (the admin document keeps it)', () => {
    const names = AUDIT_ACTION_NAMES;
    defineAuditActions({ SPUN: { name: 'sprocket.spun', description: 'A sprocket was spun' } });
    expect(names).toContain('sprocket.spun');
  });

  it.each(['Gizmo.made', 'gizmo', 'gizmo.', '.made', "gizmo.made'; DROP TABLE x; --", ''])(
    'refuses the action name %p',
    (name) => {
      expect(() => defineAuditActions({ X: { name, description: 'x' } })).toThrow(
        /is not an action/,
      );
    },
  );

  it('refuses an action declared twice with two meanings, and takes it twice with one', () => {
    expect(() =>
      defineAuditActions({ MADE: { name: 'gizmo.made', description: 'Something else' } }),
    ).toThrow(/already declared/);
    expect(
      defineAuditActions({ MADE: { name: 'gizmo.made', description: 'A gizmo was made' } }),
    ).toEqual({
      MADE: 'gizmo.made',
    });
    expect(AUDIT_ACTION_NAMES.filter((name) => name === 'gizmo.made')).toHaveLength(1);
  });

  it('writes the events of a statement’s rows for a declared action only', () => {
    expect(
      auditEventsOfRows(Gizmo.MADE, {
        from: 'made',
        actor: '$2::text',
        target: `'gizmo:' || id`,
        requestId: 'NULL',
      }),
    ).toBe(
      `INSERT INTO audit_events (actor, action, target, request_id)
    SELECT $2::text, 'gizmo.made', 'gizmo:' || id, NULL FROM made`,
    );
    expect(() =>
      auditEventsOfRows('gizmo.eaten', { from: 'x', actor: 'a', target: 't', requestId: 'r' }),
    ).toThrow(/not a declared audit action/);
  });
});
