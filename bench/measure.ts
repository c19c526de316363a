// Measurements the benchmarks share: a process's CPU seconds and RSS from /proc, the API server's
// write counters (apiserver_request_total) by verb and resource, and percentiles of samples.
import { readFileSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import { kubectl, type ClusterState } from '../src/cluster/local-cluster.ts';

const CLK_TCK = 100;

/** The p-th percentile of ascending `sorted` samples (the sample at rank ⌊p% · n⌋); NaN when there are none. */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

export function cpuSeconds(pid: number): number {
  // Fields after the parenthesised command: utime and stime are fields 14 and 15 of the whole line.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}

export function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** The anonymous part of the RSS (heap, stacks, buffers): RSS less the executable's and libraries' mapped pages. */
export function anonRssMiB(pid: number): number {
  const m = /RssAnon:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

export type Writes = Map<string, number>;

/** Write requests so far, keyed `VERB resource[/subresource]`. */
export async function writes(s: ClusterState): Promise<Writes> {
  const text = await kubectl(s, ['get', '--raw', '/metrics']);
  const out: Writes = new Map();
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const labels = Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (!['POST', 'PUT', 'PATCH', 'DELETE', 'APPLY'].includes(labels.verb)) continue;
    const key = `${labels.verb} ${labels.group ? labels.group + '/' : ''}${labels.resource}${labels.subresource ? '/' + labels.subresource : ''}`;
    out.set(key, (out.get(key) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return out;
}

/**
 * The process's established TCP connections to a local port (its watches, each holding one, plus
 * its pooled request connections): /proc/<pid>/fd sockets matched against /proc/net/tcp{,6}.
 */
export function connectionsTo(pid: number, port: number): number {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch {
      // closed since the listing
    }
  }
  let n = 0;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const row of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const f = row.trim().split(/\s+/);
      // f[2] remote address:port (hex), f[3] state (01 established), f[9] inode
      if (f.length > 9 && f[3] === '01' && parseInt(f[2].split(':')[1], 16) === port && inodes.has(f[9])) n++;
    }
  }
  return n;
}

/** What V8's `--trace-gc-nvp` lines of a process's log say about the collections in one stretch of it. */
export interface GcStats {
  scavenges: number;
  /** Main-thread pause of the scavenges, ms: total and longest. */
  scavengeMs: number;
  scavengeMaxMs: number;
  /** Full (mark-compact) collections. */
  majors: number;
  /** Their main-thread time, ms: the final pauses plus the incremental marking steps. */
  majorMs: number;
  /** The longest single stop of a major collection: its final pause or its longest marking step. */
  majorMaxMs: number;
  /** Bytes allocated, and bytes promoted from the young generation to the old. */
  allocated: number;
  promoted: number;
}

/**
 * The `--trace-gc-nvp` lines a log file gains between two points: `mark()` notes where the log
 * ends now, `since(mark)` sums what the collector printed after it.
 */
export function gcTrace(logFile: string): { mark(): number; since(mark: number): GcStats } {
  const size = () => {
    try {
      return statSync(logFile).size;
    } catch {
      return 0;
    }
  };
  return {
    mark: size,
    since(mark) {
      const text = readFileSync(logFile).subarray(mark).toString('utf8');
      const stats: GcStats = {
        scavenges: 0,
        scavengeMs: 0,
        scavengeMaxMs: 0,
        majors: 0,
        majorMs: 0,
        majorMaxMs: 0,
        allocated: 0,
        promoted: 0,
      };
      for (const line of text.split('\n')) {
        if (!line.includes(' gc=')) continue;
        const v = Object.fromEntries([...line.matchAll(/ ([\w.]+)=([^ ]*)/g)].map((m) => [m[1], m[2]]));
        const num = (key: string) => Number(v[key] ?? 0) || 0;
        const pause = num('pause');
        stats.allocated += num('allocated');
        stats.promoted += num('promoted');
        if (v.gc === 'mc') {
          stats.majors++;
          stats.majorMs += pause + num('incremental');
          stats.majorMaxMs = Math.max(stats.majorMaxMs, pause, num('incremental_longest_step'));
        } else {
          stats.scavenges++;
          stats.scavengeMs += pause;
          stats.scavengeMaxMs = Math.max(stats.scavengeMaxMs, pause);
        }
      }
      return stats;
    },
  };
}
