import { readFileSync, writeFileSync } from 'node:fs';

/** A field of /proc/<pid>/status in bytes (VmRSS: resident now, VmHWM: peak resident). */
function statusBytes(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1];
  if (kb === undefined) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(kb) * 1024;
}

export interface RssWatch {
  /** Stops sampling: the highest resident size seen since the start, in bytes. */
  stop(): number;
}

/**
 * Watches a process's peak resident set size. Resets the kernel's high-water mark first
 * (`echo 5 > /proc/<pid>/clear_refs`, Linux ≥ 4.0), so VmHWM then covers this span exactly; and
 * samples VmRSS every few milliseconds too, for kernels or permissions that refuse the reset.
 */
export function watchPeakRss(pid: number, everyMs = 5): RssWatch {
  let hwmReset = true;
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    hwmReset = false;
  }
  let peak = statusBytes(pid, 'VmRSS');
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, statusBytes(pid, 'VmRSS'));
    } catch {
      // The process is gone; what was seen stands.
    }
  }, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      if (hwmReset) peak = Math.max(peak, statusBytes(pid, 'VmHWM'));
      return peak;
    },
  };
}

export function rssBytes(pid: number): number {
  return statusBytes(pid, 'VmRSS');
}

/**
 * Waits until a process's resident size has held within `toleranceBytes` for `quietMs` (at most
 * `timeoutMs`): a freshly started service still loads in the background after it listens (the
 * hashes of every key, one query), and that belongs to its start, not to the first request
 * measured after it. Resolves with the settled size.
 */
export async function settledRssBytes(
  pid: number,
  { quietMs = 1000, toleranceBytes = 1024 * 1024, timeoutMs = 15_000, everyMs = 100 } = {},
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let low = rssBytes(pid);
  let high = low;
  let since = Date.now();
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, everyMs));
    const now = rssBytes(pid);
    low = Math.min(low, now);
    high = Math.max(high, now);
    if (high - low > toleranceBytes) {
      low = high = now;
      since = Date.now();
    } else if (Date.now() - since >= quietMs) {
      return now;
    }
  }
  throw new Error(`the resident size of process ${pid} did not settle within ${timeoutMs} ms`);
}
