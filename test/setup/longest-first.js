const { default: Sequencer } = require('@jest/test-sequencer');

/**
 * The suites that take longest on the development VM, longest first (each mostly waiting on a
 * claim's lease, an install, a load of thousands of events or a stalled reader).
 */
const LONGEST = [
  'test/webhook-instances.e2e-spec.ts',
  'test/production-install.e2e-spec.ts',
  'test/outbox-two-workers.e2e-spec.ts',
  'test/stalled-lists.e2e-spec.ts',
  'test/webhooks-outage.e2e-spec.ts',
  'test/made-up-keys.e2e-spec.ts',
  'clients/typescript/test/types.e2e-spec.ts',
  'test/rate-limit.e2e-spec.ts',
  'test/key-changes-feed.e2e-spec.ts',
  'test/deployment.e2e-spec.ts',
  'test/swagger-ui.e2e-spec.ts',
  'test/orders-v2-full-pages.e2e-spec.ts',
  'test/webhooks.e2e-spec.ts',
  'clients/typescript/test/retry.e2e-spec.ts',
];

/**
 * Jest starts the suites it has timed in an earlier run longest first, and the others by their
 * file's size. A clean checkout has no timings: there the longest suites, in files of middling
 * size, started late and the run ended with one of them going on alone. This starts them first
 * when Jest knows no suite's time; once it does, its own order stands.
 */
class LongestFirst extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    if (sorted.some((test) => test.duration != null)) return sorted;
    const rank = (test) => {
      const at = LONGEST.findIndex((name) => test.path.endsWith(`/${name}`));
      return at === -1 ? LONGEST.length : at;
    };
    return [...sorted].sort((a, b) => rank(a) - rank(b));
  }
}

module.exports = LongestFirst;
