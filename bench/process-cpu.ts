import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's CPU times (USER_HZ: 100 on Linux). */
const TICKS_PER_SECOND = 100;

/**
 * A process's parent, its user + system CPU time, and that of its children that have exited, in
 * seconds, from /proc/<pid>/stat.
 */
function stat(pid: number): { parent: number; seconds: number; exited: number } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces: the fields after it start past its ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return {
    parent: Number(fields[1]),
    seconds: (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND,
    exited: (Number(fields[13]) + Number(fields[14])) / TICKS_PER_SECOND,
  };
}

/** CPU seconds used so far by `pid` itself. */
export function cpuSecondsOf(pid: number): number {
  return stat(pid)?.seconds ?? 0;
}

/**
 * CPU seconds used so far by `pid` and its children, living or exited (a PostgreSQL postmaster
 * and its backends).
 */
export function cpuSecondsWithChildren(pid: number): number {
  const own = stat(pid);
  let seconds = (own?.seconds ?? 0) + (own?.exited ?? 0);
  for (const entry of readdirSync('/proc')) {
    const child = Number(entry);
    if (!Number.isInteger(child)) continue;
    const s = stat(child);
    if (s?.parent === pid) seconds += s.seconds;
  }
  return seconds;
}
