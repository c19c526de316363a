// kubectl differential test against OpenKruise v1.8.2 (issue #32): on a cluster of its own, each
// manager in turn with its DEFAULT options — upstream's kruise-manager with its own CRDs and webhook
// configurations (test/harness/upstream-peer.ts), then Kruise TS (`kruise start --install-crds`, its
// default CRDs) — gets the same manifests (test/harness/kubectl-differential-objects.ts: every
// upstream config/samples file and one object per kind with its spec filled in) in the same
// namespace under the same names; once everything has settled, `kubectl get <resource> <name> -o json`
// of each must be equal field for field, spec and status, after normalise() (what is not compared, and
// why) — or differ only as KNOWN_DIFFERENCES says. An object one manager
// refuses must be refused by the other (messages are reported, not compared: the admission
// differential test audits them).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ensureUpstreamPeer } from '../../src/cluster/binaries.ts';
import { down, kubectl as clusterKubectl } from '../../src/cluster/local-cluster.ts';
import { startProcess, stopProcesses, tail, type Started } from '../../src/cluster/processes.ts';
import { TEST_CLUSTER, waitFor } from '../harness/cluster.ts';
import { kruiseArgs, servingFlags } from '../harness/kruise-cli.ts';
import { creationOrder, fullObjects, sampleObjects, type DifferentialObject } from '../harness/kubectl-differential-objects.ts';
import { startUpstreamPeer, UPSTREAM_NAMESPACE, type RunningPeer } from '../harness/upstream-peer.ts';
import { CLONESET_WEBHOOK_PROBE } from '../harness/webhook-ready.ts';

const CLUSTER = `${TEST_CLUSTER}-kdiff`;
const NAMESPACE = 'kdiff';
/** An object has settled once its status caught up with its generation and nothing in the namespace changed for this long. */
const QUIET_MS = 6000;
const SETTLE_TIMEOUT_MS = 90_000;

const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;
const UID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * What is not compared, and why:
 * - metadata.uid, resourceVersion, creationTimestamp, managedFields: assigned by the API server per
 *   write (managedFields also name each manager's field manager, which differ by design);
 * - every other timestamp (conditions' lastTransitionTime, startTime, completionTime…): wall-clock of
 *   each run — replaced by a placeholder, so that a timestamp one side sets and the other does not
 *   still differs;
 * - uids inside other fields (a CRR's pod-uid label, ownerReferences): the other side's objects have
 *   their own — replaced by a placeholder likewise;
 * - containerID (a CRR's statusContext): the runtime's id of the container instance on each run;
 * - a member absent on one side and a Go zero value on the other (null, "", 0, false, {}, [] or an
 *   object of only such): v1.8.2's webhooks answer with the object re-marshalled from Go types, which
 *   writes non-omitempty zero members (`resources: {}`, `selector: null`) and drops omitempty ones the
 *   user wrote (`paused: false`), and its status writers omit zero counters Kruise TS writes. Both
 *   forms decode to the same Go object, so no client reading either manager sees a difference (see
 *   differences()).
 */
function normalise(v: unknown, key = ''): unknown {
  if (Array.isArray(v)) return v.map((x) => normalise(x));
  if (key === 'containerID' && typeof v === 'string') return '<container id>';
  if (typeof v === 'string') return RFC3339.test(v) ? '<time>' : UID.test(v) ? '<uid>' : v;
  if (!v || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (key === 'metadata' && ['uid', 'resourceVersion', 'creationTimestamp', 'managedFields'].includes(k)) continue;
    out[k] = normalise(x, k);
  }
  return out;
}

/** A value Go's encoding writes for an unset member, or drops with omitempty. */
const goZero = (v: unknown): boolean =>
  v === null ||
  v === '' ||
  v === 0 ||
  v === false ||
  (Array.isArray(v) ? v.length === 0 : typeof v === 'object' && Object.values(v as object).every(goZero));

/** The paths at which a and b differ, with both values (an absent member equals a Go zero value: see normalise()). */
function differences(a: unknown, b: unknown, at = ''): string[] {
  if (JSON.stringify(a) === JSON.stringify(b)) return [];
  if ((a === undefined && goZero(b)) || (b === undefined && goZero(a))) return [];
  const isObj = (x: unknown) => !!x && typeof x === 'object';
  if (isObj(a) && isObj(b) && Array.isArray(a) === Array.isArray(b)) {
    const keys = new Set([...Object.keys(a as object), ...Object.keys(b as object)]);
    return [...keys].sort().flatMap((k) => differences((a as any)[k], (b as any)[k], Array.isArray(a) ? `${at}[${k}]` : `${at}.${k}`));
  }
  return [`${at}: upstream ${JSON.stringify(a)} ≠ Kruise TS ${JSON.stringify(b)}`];
}

/**
 * Differences left as they are, each with why; the test fails when one no longer occurs (remove it then).
 * Listed in docs/migrate-from-openkruise.md "What is verified".
 */
const KNOWN_DIFFERENCES: Array<{ match: RegExp; reason: string }> = [
  {
    match: /^ephemeraljobs\.apps\.kruise\.io full-ephemeraljob \(full\) \.metadata\.generation: upstream 2 ≠ Kruise TS 1$/,
    reason:
      'v1.8.2 adds its cleanup finalizer with an Update of its Go-typed object, which writes `resources: {}` into the ' +
      'ephemeral container and so bumps generation; Kruise TS patches the finalizer in and leaves the spec as stored. ' +
      'EphemeralJob status has no observedGeneration: nothing reads the number.',
  },
];

interface Outcome {
  /** The object as kubectl reads it, normalised; undefined when creating it was refused or it is gone. */
  object?: unknown;
  refused?: string;
  /** Created, then deleted by the manager before it settled (a NodePodProbe of no node). */
  gone?: boolean;
}

describe('kubectl differential: the same manifests under OpenKruise v1.8.2 and under Kruise TS', { timeout: 15 * 60_000 }, () => {
  let peer: RunningPeer | undefined;
  let manager: Started | undefined;
  let objects: DifferentialObject[];
  const outcomes: { upstream: Map<string, Outcome>; ours: Map<string, Outcome> } = { upstream: new Map(), ours: new Map() };
  const kubectl = (args: string[], input?: string) => clusterKubectl(peer!.cluster, args, input);
  const key = (o: DifferentialObject) => `${o.resource} ${o.name} (${o.source})`;
  const nsArgs = (o: DifferentialObject) => (o.clusterScoped ? [] : ['-n', NAMESPACE]);

  /** Waits until observedGeneration caught up everywhere and no object or pod of the run changed for QUIET_MS. */
  async function settle(created: DifferentialObject[]): Promise<void> {
    const resources = [...new Set([...created.map((o) => o.resource), 'pods'])].join(',');
    const names = new Set(created.map((o) => `${o.resource.split('.')[0]}/${o.name}`));
    let last = '';
    let quietSince = Date.now();
    await waitFor(
      'the objects to settle',
      async () => {
        const list = JSON.parse(await kubectl(['get', resources, '-A', '-o', 'json'])) as {
          items: Array<{ kind: string; metadata: any; status?: { observedGeneration?: number } }>;
        };
        const mine = list.items.filter((i) =>
          i.kind === 'Pod' ? i.metadata.namespace === NAMESPACE : [...names].some((n) => n.endsWith(`/${i.metadata.name}`)),
        );
        const behind = mine.filter(
          (i) => i.status?.observedGeneration !== undefined && i.status.observedGeneration !== i.metadata.generation,
        );
        const fingerprint = mine
          .map((i) => `${i.kind}/${i.metadata.namespace}/${i.metadata.name}@${i.metadata.resourceVersion}`)
          .sort()
          .join();
        if (fingerprint !== last || behind.length) {
          last = fingerprint;
          quietSince = Date.now();
          return false;
        }
        return Date.now() - quietSince >= QUIET_MS;
      },
      SETTLE_TIMEOUT_MS,
      1000,
    );
  }

  /** Creates every object in order, lets them settle, then reads each with kubectl get. */
  async function run(side: 'upstream' | 'ours'): Promise<void> {
    await kubectl(['create', 'namespace', NAMESPACE]);
    await waitFor('the default ServiceAccount', () => kubectl(['-n', NAMESPACE, 'get', 'serviceaccount', 'default', '-o', 'name']));
    const created: DifferentialObject[] = [];
    for (const o of creationOrder(objects)) {
      if (o.afterPodReady) await kubectl(['-n', NAMESPACE, 'wait', '--for=condition=Ready', `pod/${o.afterPodReady}`, '--timeout=120s']);
      try {
        await kubectl([...nsArgs(o), 'create', '-f', '-'], JSON.stringify(o.manifest));
        created.push(o);
      } catch (err) {
        const e = err as Error & { stderr?: string };
        outcomes[side].set(key(o), { refused: (e.stderr ?? e.message).trim() });
      }
    }
    await settle(created);
    for (const o of created) {
      if (o.resource === 'pods') continue;
      const got = await kubectl([...nsArgs(o), 'get', o.resource, o.name, '-o', 'json', '--ignore-not-found']);
      outcomes[side].set(key(o), got.trim() ? { object: normalise(JSON.parse(got)) } : { gone: true });
    }
  }

  /** Deletes what the run made (the namespace, the cluster-scoped objects) while its manager still runs its finalizers. */
  async function cleanUp(): Promise<void> {
    for (const o of objects.filter((x) => x.clusterScoped)) {
      await kubectl(['delete', o.resource, o.name, '--ignore-not-found', '--timeout=60s']);
    }
    await kubectl(['delete', 'namespace', NAMESPACE, '--ignore-not-found', '--timeout=120s']);
  }

  before(async () => {
    const peerModule = await ensureUpstreamPeer();
    objects = [...sampleObjects(peerModule.moduleDir), ...fullObjects(NAMESPACE)];
    // Upstream v1.8.2, default feature gates.
    peer = await startUpstreamPeer({ cluster: CLUSTER });
    await run('upstream');
    await cleanUp();
    // Switch (docs/upstream-peer.md): its webhook configurations, its manager, its CRDs (and with them
    // every Kruise object it made on its own, e.g. per-node NodePodProbes), its certificates and lease.
    await peer.stopManager();
    const crds = (await kubectl(['get', 'crd', '-o', 'name'])).split('\n').filter((n) => n.endsWith('.kruise.io'));
    await kubectl(['delete', ...crds, '--timeout=120s']);
    await kubectl(['-n', UPSTREAM_NAMESPACE, 'delete', 'secrets,leases', '--all']);

    // Kruise TS, default options.
    manager = startProcess(
      'kruise-manager',
      process.execPath,
      kruiseArgs(
        'start',
        '--kubeconfig',
        peer.cluster.kubeconfig,
        '--install-crds',
        '--enable-leader-election=false',
        ...servingFlags(0, '0', '0'),
      ),
      path.join(peer.cluster.runDir, 'logs', 'kruise-manager.log'),
    );
    // Serving once a server-side dry run of a CloneSet comes back defaulted by its webhook.
    await waitFor(
      'Kruise TS to serve its webhooks',
      async () => {
        if (manager!.exited) throw new Error(`manager exited: ${tail(manager!.logFile, 20)}`);
        const out = await kubectl(['create', '--dry-run=server', '-o', 'json', '-f', '-'], JSON.stringify(CLONESET_WEBHOOK_PROBE)).catch(
          () => '',
        );
        return !!out && JSON.parse(out).spec.template.spec.containers[0].imagePullPolicy === 'Always';
      },
      120_000,
      500,
    );
    await run('ours');
  });

  after(async () => {
    if (manager) await stopProcesses([manager.pid], 15_000).catch(() => undefined);
    await peer?.stop().catch(() => undefined);
    if (process.env.KRUISE_TS_KEEP_CLUSTER !== '1') await down(CLUSTER, { quiet: true }).catch(() => undefined);
  });

  test('every object reads back the same from kubectl under both managers', (t) => {
    const report: string[] = [];
    const failures: string[] = [];
    for (const o of objects.filter((x) => x.resource !== 'pods')) {
      const k = key(o);
      const theirs = outcomes.upstream.get(k);
      const ours = outcomes.ours.get(k);
      if (!theirs || !ours) {
        failures.push(`${k}: not read under ${theirs ? 'Kruise TS' : 'upstream'}`);
        continue;
      }
      if (!!theirs.refused !== !!ours.refused) {
        failures.push(
          `${k}: ${theirs.refused ? `refused by upstream only: ${theirs.refused}` : `refused by Kruise TS only: ${ours.refused}`}`,
        );
        continue;
      }
      if (theirs.refused) {
        report.push(`${k}: refused by both\n  upstream: ${theirs.refused}\n  Kruise TS: ${ours.refused}`);
        continue;
      }
      if (theirs.gone || ours.gone) {
        if (theirs.gone !== ours.gone) failures.push(`${k}: deleted under ${theirs.gone ? 'upstream' : 'Kruise TS'} only`);
        else report.push(`${k}: deleted by both managers`);
        continue;
      }
      const diff = differences(theirs.object, ours.object);
      report.push(`${k}: ${diff.length ? `${diff.length} differences\n  ${diff.join('\n  ')}` : 'equal'}`);
      failures.push(...diff.map((d) => `${k} ${d}`));
    }
    const reportFile = path.join(peer!.cluster.runDir, 'logs', 'kubectl-differential.txt');
    writeFileSync(
      reportFile,
      `${report.join('\n')}\n\n${JSON.stringify({ upstream: Object.fromEntries(outcomes.upstream), ours: Object.fromEntries(outcomes.ours) }, null, 1)}\n`,
    );
    t.diagnostic(`${objects.length} manifests; report and both sides' objects: ${reportFile}`);
    const known = (f: string) => KNOWN_DIFFERENCES.some((d) => d.match.test(f));
    assert.deepEqual(
      KNOWN_DIFFERENCES.filter((d) => !failures.some((f) => d.match.test(f))).map((d) => d.match.source),
      [],
      'KNOWN_DIFFERENCES entries that no longer match any difference (remove them)',
    );
    assert.deepEqual(
      failures.filter((f) => !known(f)),
      [],
      `differences from upstream (see ${reportFile})`,
    );
  });
});
