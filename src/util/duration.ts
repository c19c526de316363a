// Go's time.ParseDuration / Duration.String, because kruise-manager flags ("5m", "2m0s", "10h")
// and annotations are written in that format. Microseconds are "us", "µs" (U+00B5) or "μs" (U+03BC),
// written as escapes: one non-ASCII character in a bundle makes V8 hold all its source as UTF-16.
const UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, '\u00b5s': 1e-3, '\u03bcs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Milliseconds for a Go duration string like "1h30m", "2m0s", "-1.5s", "0". Throws on bad input. */
export function parseDuration(input: string): number {
  const s = input.trim();
  if (s === '0' || s === '+0' || s === '-0') return 0;
  const m = /^([+-])?((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|\u00b5s|\u03bcs|ms|s|m|h))+$/.exec(s);
  if (!m) throw new Error(`time: invalid duration ${JSON.stringify(input)}`);
  let total = 0;
  for (const part of s.replace(/^[+-]/, '').matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)/g)) {
    total += Number(part[1]) * UNITS[part[2]!]!;
  }
  return m[1] === '-' ? -total : total;
}

/** Go's Duration.String for whole milliseconds: "5m0s", "1h0m0s", "1.5s", "250ms", "0s". */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(ms);
  if (rest < 1000) return `${sign}${rest}ms`;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const secs = (rest / 1000).toString();
  if (h) return `${sign}${h}h${m}m${secs}s`;
  if (m) return `${sign}${m}m${secs}s`;
  return `${sign}${secs}s`;
}
