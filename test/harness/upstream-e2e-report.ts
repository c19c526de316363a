// The pure half of running OpenKruise's e2e suite (bench/upstream-e2e.ts, test/harness/upstream-e2e.ts):
// upstream's focus groups, the Ginkgo v1 JUnit report read into per-spec results, and the
// generated part of docs/upstream-e2e.md (unit-tested in test/unit/cluster/upstream-e2e-report.test.ts).

export interface E2EGroup {
  name: string;
  /** Ginkgo focus / skip regular expressions (RE2; the ones used here mean the same in JavaScript). */
  focus: string;
  skip: string;
  /** go test -timeout of the run. */
  timeout: string;
  title: string;
  /**
   * Whether the module's test/kruise-e2e-config.yaml is applied before the run (its
   * kruise-configuration ConfigMap, …). Upstream's CI installs Kruise without it for the SidecarSet
   * job (DISABLE_E2E_CONFIG=true): "sidecarSet patch pod metadata" creates that ConfigMap itself.
   */
  e2eConfig: boolean;
}

const ASTS_STORAGE = String.raw`\[apps\] AppStatefulSetStorage`;
const ASTS = String.raw`\[apps\] StatefulSet`;
const PULL = String.raw`\[apps\] (PullImage|ContainerRecreateRequest|PullImages)`;
const DAEMONSET = String.raw`\[apps\] DaemonSet`;
const SIDECARSET = String.raw`\[apps\] SidecarSet`;
const EPHEMERALJOB = String.raw`\[apps\] EphemeralJob`;
const PUB = String.raw`\[policy\] PodUnavailableBudget`;
const CLONESET = String.raw`\[apps\] (CloneSet|InplaceVPA)`;

/** The jobs of upstream's .github/workflows/e2e-1.30.yaml (v1.8.2), in its order. */
export const E2E_GROUPS: readonly E2EGroup[] = [
  { name: 'asts-storage', title: 'Advanced StatefulSet storage', focus: ASTS_STORAGE, skip: '', timeout: '60m', e2eConfig: true },
  { name: 'asts', title: 'Advanced StatefulSet', focus: ASTS, skip: '', timeout: '60m', e2eConfig: true },
  { name: 'pull-image', title: 'ImagePullJob, ContainerRecreateRequest', focus: PULL, skip: '', timeout: '60m', e2eConfig: true },
  { name: 'daemonset', title: 'Advanced DaemonSet', focus: DAEMONSET, skip: '', timeout: '60m', e2eConfig: true },
  { name: 'sidecarset', title: 'SidecarSet', focus: SIDECARSET, skip: '', timeout: '60m', e2eConfig: false },
  { name: 'ephemeraljob', title: 'EphemeralJob', focus: EPHEMERALJOB, skip: '', timeout: '60m', e2eConfig: true },
  { name: 'pub', title: 'PodUnavailableBudget', focus: PUB, skip: '', timeout: '60m', e2eConfig: true },
  { name: 'cloneset', title: 'CloneSet, InplaceVPA', focus: CLONESET, skip: '', timeout: '60m', e2eConfig: true },
  {
    name: 'other',
    title: 'Everything else (WorkloadSpread, UnitedDeployment, PPS, jobs, ResourceDistribution, deletion protection, …)',
    focus: '',
    skip: [ASTS_STORAGE, ASTS, PULL, DAEMONSET, SIDECARSET, EPHEMERALJOB, PUB, CLONESET].join('|'),
    timeout: '90m',
    e2eConfig: true,
  },
];

export type SpecStatus = 'pass' | 'fail' | 'skip';

export interface SpecResult {
  status: SpecStatus;
  seconds: number;
  /** The failure's (or runtime skip's) first message line and where it was raised. */
  firstFailure?: string;
}

export interface E2ERun {
  id: string;
  manager: 'ts' | 'go';
  group: string;
  date: string;
  commit: string;
  command: string;
  minutes: number;
  pass: number;
  fail: number;
  skip: number;
  managerDied: boolean;
}

export interface E2EResults {
  runs: E2ERun[];
  /** Keyed by the spec's full name (JUnit testcase name). */
  specs: Record<string, { group: string; ts?: SpecResult; go?: SpecResult }>;
}

/** Whether a spec is in the group's selection (Ginkgo: matches the focus, not the skip). */
export function selected(specName: string, group: Pick<E2EGroup, 'focus' | 'skip'>): boolean {
  return new RegExp(group.focus).test(specName) && !(group.skip && new RegExp(group.skip).test(specName));
}

/** The first group (in upstream's order) whose selection holds the spec. */
export function groupOfSpec(specName: string): string {
  return (E2E_GROUPS.find((g) => selected(specName, g)) ?? E2E_GROUPS[E2E_GROUPS.length - 1]!).name;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
function unescapeXml(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-z]+);/g, (m, e: string) =>
    e.startsWith('#x')
      ? String.fromCodePoint(parseInt(e.slice(2), 16))
      : e.startsWith('#')
        ? String.fromCodePoint(Number(e.slice(1)))
        : (ENTITIES[e] ?? m),
  );
}

/**
 * Ginkgo v1's failure text is "<container location>\n<message…>\n<failure location>": the first
 * non-empty message line, with the failure's file:line.
 */
export function firstFailureLine(text: string): string {
  const lines = text.split('\n').map((l) => l.trim());
  const where = /([^/\s]+\.go:\d+)$/.exec(lines[lines.length - 1] ?? '')?.[1];
  const message = lines.slice(1, -1).find((l) => l !== '') ?? lines.find((l) => l !== '') ?? '';
  return where ? `${message} (${where})` : message;
}

/** Every testcase of a Ginkgo v1 JUnit report (Go's encoding/xml output). */
export function parseJUnit(xml: string): Array<{ name: string; result: SpecResult }> {
  const out: Array<{ name: string; result: SpecResult }> = [];
  for (const m of xml.matchAll(/<testcase\b([^>]*?)(?:\/>|>([\s\S]*?)<\/testcase>)/g)) {
    const attrs = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((a) => [a[1]!, unescapeXml(a[2]!)]));
    const body = m[2] ?? '';
    const seconds = Math.round(Number(attrs.time ?? 0));
    const failure = /<failure\b[^>]*>([\s\S]*?)<\/failure>/.exec(body);
    const skipped = /<skipped\b[^>]*?(?:\/>|>([\s\S]*?)<\/skipped>)/.exec(body);
    const result: SpecResult = failure
      ? { status: 'fail', seconds, firstFailure: firstFailureLine(unescapeXml(failure[1]!)) }
      : skipped
        ? { status: 'skip', seconds, ...(skipped[1]?.trim() ? { firstFailure: firstFailureLine(unescapeXml(skipped[1])) } : {}) }
        : { status: 'pass', seconds };
    out.push({ name: attrs.name ?? '', result });
  }
  return out;
}

/**
 * One result per spec from a report written with flakeAttempts, where Ginkgo v1 lists every
 * attempt: the last attempt's result, and which specs failed an attempt before passing.
 */
export function lastAttempts(cases: Array<{ name: string; result: SpecResult }>): {
  specs: Array<{ name: string; result: SpecResult }>;
  flaked: string[];
} {
  const last = new Map<string, SpecResult>();
  const failedOnce = new Set<string>();
  for (const c of cases) {
    if (c.result.status === 'fail') failedOnce.add(c.name);
    last.set(c.name, c.result);
  }
  const specs = [...last].map(([name, result]) => ({ name, result }));
  return { specs, flaked: specs.filter((s) => s.result.status === 'pass' && failedOnce.has(s.name)).map((s) => s.name) };
}

export const BEGIN = '<!-- BEGIN RESULTS: generated by bench/upstream-e2e.ts from docs/upstream-e2e-results.json -->';
export const END = '<!-- END RESULTS -->';

const cell = (r?: SpecResult) => (!r ? '—' : r.status === 'fail' ? `**fail** ${r.seconds} s` : `${r.status} ${r.seconds} s`);
const esc = (s: string) => s.replace(/\|/g, '\\|').replace(/\s+/g, ' ');
const clip = (s: string, n = 180) => (s.length > n ? s.slice(0, n - 1) + '…' : s);

/** The generated section (runs, then one table per group), replacing the one between the markers. */
export function renderDoc(doc: string, results: E2EResults): string {
  const lines: string[] = [BEGIN, '', '### Runs', ''];
  lines.push('| group | manager | date | commit | min | pass | fail | skip | command |', '|---|---|---|---|---|---|---|---|---|');
  const order = (g: string) => E2E_GROUPS.findIndex((x) => x.name === g);
  const runs = [...results.runs].sort((a, b) => order(a.group) - order(b.group) || a.manager.localeCompare(b.manager));
  for (const r of runs) {
    lines.push(
      `| ${r.group} | ${r.manager === 'ts' ? 'Kruise TS' : 'v1.8.2'} | ${r.date} | ${r.commit} | ${r.minutes} | ${r.pass} | ${r.fail} | ${r.skip} | \`${r.command}\`` +
        (r.managerDied ? ' (the manager died during the run)' : '') +
        ' |',
    );
  }
  for (const group of E2E_GROUPS) {
    const specs = Object.entries(results.specs)
      .filter(([, s]) => s.group === group.name)
      .sort(([a], [b]) => a.localeCompare(b));
    if (!specs.length) continue;
    const both = specs.filter(([, s]) => s.ts && s.go && s.ts.status !== 'skip' && s.go.status !== 'skip');
    const onlyTs = both.filter(([, s]) => s.ts!.status === 'fail' && s.go!.status === 'pass');
    lines.push('', `### ${group.title} (\`${group.name}\`)`, '');
    lines.push(
      `Specs both ran: ${both.length}; pass under Kruise TS: ${both.filter(([, s]) => s.ts!.status === 'pass').length}, ` +
        `under v1.8.2: ${both.filter(([, s]) => s.go!.status === 'pass').length}; fail only under Kruise TS: ${onlyTs.length}.`,
      '',
    );
    lines.push('| spec | Kruise TS | v1.8.2 | first failure (TS / v1.8.2) |', '|---|---|---|---|');
    for (const [name, s] of specs) {
      const why = [s.ts?.firstFailure && `TS: ${clip(s.ts.firstFailure)}`, s.go?.firstFailure && `v1.8.2: ${clip(s.go.firstFailure)}`]
        .filter(Boolean)
        .join('<br>');
      lines.push(`| ${esc(name)} | ${cell(s.ts)} | ${cell(s.go)} | ${esc(why)} |`);
    }
  }
  lines.push('', END);
  const generated = lines.join('\n');
  const begin = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (begin < 0 || end < begin) return doc.trimEnd() + '\n\n' + generated + '\n';
  return doc.slice(0, begin) + generated + doc.slice(end + END.length);
}
