// V8's --optimize-for-size for the long-running commands (`start`, `daemon`), turned on once they
// are up rather than given as a start-up flag.
//
// The flag makes V8 favour memory over speed: smaller heap growth steps, more eager GC and code
// flushing. At the end of a 1000-pod CloneSet run the manager's RSS was 121–123 MiB with it and
// 148–155 MiB without (OpenKruise v1.8.2: 112). But as a start-up flag it also slows the initial
// lists, when the heap grows fastest: with 50k pods cached, caches synced after 4.3–4.6 s instead
// of 2.6–3.7 s (scratch timer, same machine and minute), 11.3 s instead of 6.4 s in a busier run.
// Turned on once the caches have synced, it gives nearly the same RSS after the run as the start-up
// flag (124.7 against 121.4 MiB, same benchmark run), because V8 reads it at each of those
// decisions, not once at start — and Node leaves V8's flags writable after start for
// v8.setFlagsFromString.
// docs/benchmarks.md, issue 20, seventh pass.
import v8 from 'node:v8';

/** Node flags that decide for us: the flag itself either way, or V8 flags frozen after start (setting one would abort). */
const DECIDED = /^--((no-)?optimize[-_]for[-_]size|freeze[-_]flags[-_]after[-_]init)(=|$)/;

/** The Node flags this process was started with: its command line's, then NODE_OPTIONS'. */
function processNodeFlags(): string[] {
  return [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/).filter(Boolean)];
}

/**
 * Turns --optimize-for-size on from now on, unless the process's Node flags set it either way
 * (then they decide, e.g. `--no-optimize-for-size` to trade the memory back for speed) or freeze
 * V8's flags. Returns whether it did.
 */
export function optimizeForSizeFromNow(
  nodeFlags: readonly string[] = processNodeFlags(),
  setFlags: (flags: string) => void = v8.setFlagsFromString,
): boolean {
  if (nodeFlags.some((flag) => DECIDED.test(flag))) return false;
  setFlags('--optimize-for-size');
  return true;
}
