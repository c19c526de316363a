// Drop-in (issue #17): upstream OpenKruise v1.8.2 hands a cluster to Kruise TS and takes it back,
// and no pod notices. On a cluster of its own (two managers' CRDs never meet the suite's):
//   1. upstream v1.8.2 creates every object of test/harness/dropin-workloads.ts in two namespaces
//      and they settle; in "reference" it then rolls a template change;
//   2. switch: upstream's webhook configurations go, its manager stops, our CRDs are applied over
//      its CRDs (objects and stored versions kept), Kruise TS starts (docs/migrate-from-openkruise.md);
//   3. an observation window that includes a forced resync (a manager restart relists and
//      reconciles every object): no pod created, deleted or re-specced, no pod label or annotation
//      changed (ALLOWED_POD_CHANGES excepted), CloneSet revisions and the ControllerRevision set
//      unchanged, no ImagePullJob replaced, every Kruise object of the table (CloneSet, ASTS, ADS,
//      SidecarSet, BroadcastJob, AdvancedCronJob, UnitedDeployment and its subset workloads,
//      WorkloadSpread, PUB, PersistentPodState, ResourceDistribution and its copies, a CRR and an
//      EphemeralJob v1.8.2 finished, a PodProbeMarker and v1.8.2's NodePodProbes) unchanged, no
//      container restarted, launch-priority barrier ConfigMaps not written;
//   4. the same template change in "takeover" rolls as it did under upstream;
//   5. the way back: the same objects created through Kruise TS in a namespace of their own ("ours",
//      kruiseTSCreatedSet) settle, `kruise storage-version migrate --to openkruise-v1.8` (which also
//      re-points the ResourceDistribution copies' ownerReferences to v1alpha1), Kruise TS stops,
//      upstream's CRDs replace ours, upstream v1.8.2 starts, and the same window shows no churn on
//      the objects of all three namespaces, v1.8.2 keeping every distributed copy as its own.
// The window is KRUISE_TS_DROPIN_OBSERVE_SECONDS per half (default 20 s, so a forced resync sits
// between two 20 s halves); the 2-minute form is `KRUISE_TS_DROPIN_OBSERVE_SECONDS=60`.
// Every reconcile either manager would make happens on start-up and on events; the manager restart
// in the middle repeats all of them, which a longer wait would not add to.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { down, kubectl as clusterKubectl } from '../../src/cluster/local-cluster.ts';
import { ensureUpstreamPeer } from '../../src/cluster/binaries.ts';
import { startProcess, stopProcesses, tail, type Started } from '../../src/cluster/processes.ts';
import { migrateStorageVersion, OPENKRUISE_V18 } from '../../src/cli/storage-version.ts';
import { installCRDs } from '../../src/manager/crds.ts';
import { fromKubeconfigFile, type KubeClient } from '../../src/runtime/client.ts';
import type { KubeObject } from '../../src/apis/core-objects.ts';
import { Pods } from '../../src/runtime/resources.ts';
import { TEST_CLUSTER, waitFor } from '../harness/cluster.ts';
import { creationOrder, DROPIN_NAMESPACE_LABEL, DROPIN_OBJECTS, kruiseTSCreatedSet, unsettled } from '../harness/dropin-workloads.ts';
import { startUpstreamPeer, type RunningPeer } from '../harness/upstream-peer.ts';
import { defaultedByWebhook } from '../harness/webhook-ready.ts';
import { kruiseArgs, servingFlags } from '../harness/kruise-cli.ts';
import { startSimulatedDaemon } from '../harness/simulated-daemon.ts';

const CLUSTER = `${TEST_CLUSTER}-dropin`;
const FEATURE_GATES = 'ImagePullJobGate=true,ResourceDistributionGate=true';
/**
 * Kruise TS's daemon after the takeover: the CRR executor on (it must not re-run the CRR v1.8.2
 * finished), image pulls on (progress is not compared); off what v1.8.2 never had running here and
 * would change pods on its own: the probes (pod conditions and marker labels from results) and the
 * env-from-metadata container meta (a pod annotation).
 */
const DAEMON_FEATURE_GATES = 'KruiseDaemon=true,DaemonWatchingPod=true,PodProbeMarkerGate=false,InPlaceUpdateEnvFromMetadata=false';
const HALF_WINDOW_MS = Number(process.env.KRUISE_TS_DROPIN_OBSERVE_SECONDS ?? 20) * 1000;
const TAKEOVER = 'takeover';
const REFERENCE = 'reference';
/** The hand-back check's namespace (and name suffix of its cluster-scoped objects): objects created through Kruise TS. */
const OURS = 'ours';

/**
 * Pod metadata a manager may legitimately rewrite with nothing happening to the pod, and why.
 * Anything else changing fails the test.
 */
const ALLOWED_POD_CHANGES: Array<{ key: string; from?: string; to?: string; reason: string }> = [
  {
    key: 'lifecycle.apps.kruise.io/state',
    from: 'PreparingNormal',
    to: 'Normal',
    reason:
      'with no preNormal hook, v1.8.2 moves a PreparingNormal pod to Normal at once (the spec, after upstream master, waits until it is scheduled); upstream does this to its own pods too',
  },
  { key: 'lifecycle.apps.kruise.io/timestamp', reason: 'written with every lifecycle state change above' },
];

/** The template change rolled in both namespaces: an image change, in place for in-place CloneSets. */
const IMAGE_V2 = 'registry.example/app:v2';

type Obj = KubeObject & { spec?: Record<string, unknown>; status?: Record<string, unknown>; data?: unknown; revision?: number };

interface PodView {
  key: string;
  uid: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  spec: string;
  /** Container ids and restart counts (ephemeral containers included): a recreated or restarted container changes them. */
  containers: string;
}

type ContainerStatusView = { name: string; containerID?: string; restartCount?: number };
/** A ConfigMap as compared across a switch: identity, version and data, plus what the caller adds. */
const configMapState = (c: Obj, extra: Record<string, unknown>): string =>
  JSON.stringify({
    key: `${c.metadata!.namespace}/${c.metadata!.name}`,
    uid: c.metadata!.uid,
    resourceVersion: c.metadata!.resourceVersion,
    data: c.data,
    ...extra,
  });

const podView = (p: Obj): PodView => {
  const status = (p.status ?? {}) as { containerStatuses?: ContainerStatusView[]; ephemeralContainerStatuses?: ContainerStatusView[] };
  return {
    key: `${p.metadata!.namespace}/${p.metadata!.name}`,
    uid: p.metadata!.uid!,
    labels: p.metadata!.labels ?? {},
    annotations: p.metadata!.annotations ?? {},
    spec: JSON.stringify(p.spec),
    containers: JSON.stringify(
      [...(status.containerStatuses ?? []), ...(status.ephemeralContainerStatuses ?? [])].map((c) => [
        c.name,
        c.containerID,
        c.restartCount,
      ]),
    ),
  };
};

/** What must not move across a switch, keyed for comparison. */
interface Snapshot {
  revisions: string[];
  cloneSets: Record<string, { currentRevision: unknown; updateRevision: unknown }>;
  imagePullJobs: string[];
  pvcs: string[];
  /** Every Kruise object of the drop-in kinds (and the UDs' subset workloads, the NodeImages): identity, spec, metadata and the status fields below. */
  kruiseObjects: Record<string, unknown>;
  /** The ResourceDistribution's copies: not rewritten. */
  distributed: string[];
  /** Container launch priority's `<pod>-barrier` ConfigMaps: not rewritten (resourceVersion included). */
  barriers: string[];
}

/**
 * Kinds whose whole status is compared: what v1.8.2 finished (a CRR ended by its deadline, an
 * EphemeralJob run to completion) and what a daemon reports (NodePodProbe: none on this cluster).
 */
const WHOLE_STATUS = /^(containerrecreaterequests|ephemeraljobs|nodepodprobes)\./;
/** Kinds neither manager has anything to write to once settled: compared with their resourceVersion (not written at all). */
const NOT_WRITTEN = /^(containerrecreaterequests|ephemeraljobs|podprobemarkers|nodepodprobes)\./;

/** Kinds whose status (and NodeImage's spec) is pull progress reported for nodes, not compared. */
const PULL_PROGRESS = /^(imagepulljobs|imagelistpulljobs|nodeimages)\./;

/**
 * A spec without null and empty-object members: Go's typed encoding writes them (`creationTimestamp:
 * null`, `scaleStrategy: {}`); an object stored once at v1beta1 and read back at v1alpha1 loses
 * them. They mean nothing (Go decodes both forms to the same struct; revision hashes add them back).
 */
function withoutGoZeroValues(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutGoZeroValues);
  if (!v || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    const y = withoutGoZeroValues(x);
    if (y === null || (typeof y === 'object' && !Array.isArray(y) && Object.keys(y).length === 0)) continue;
    out[k] = y;
  }
  return out;
}

/** Status fields that record revisions, hashes and what a controller has done: a takeover leaves them as they were. */
const STABLE_STATUS_FIELDS = [
  'currentRevision',
  'updateRevision',
  'updatedRevision',
  'daemonSetHash',
  'latestRevision',
  'replicas',
  'updatedReplicas',
  'readyReplicas',
  'matchedPods',
  'updatedPods',
  'succeeded',
  'failed',
  'desired',
  'phase',
  'completionTime',
  'lastScheduleTime',
  'active',
  'podStates',
  'totalReplicas',
  'desiredAvailable',
  'unavailableAllowed',
];
/**
 * The Kruise resources compared, each read at the version its manifest was written in (v1alpha1 for
 * v1.8.2's single-version kinds): `kubectl get <plural>` would serve Kruise TS's preferred v1beta1
 * after the switch, a different shape of the same object.
 */
const KRUISE_RESOURCES = [
  ...new Set([
    ...DROPIN_OBJECTS.filter((o) => o.resource !== 'pods').map((o) => {
      const [plural, ...group] = o.resource.split('.');
      return `${plural}.${String(o.manifest.apiVersion).split('/')[1]}.${group.join('.')}`;
    }),
    'nodeimages.v1alpha1.apps.kruise.io',
    'nodepodprobes.v1alpha1.apps.kruise.io',
  ]),
].sort();

/** The baseline holds what v1.8.2 did with every drop-in object, so that "unchanged" means something. */
function assertCovers(s: Snapshot): void {
  for (const o of DROPIN_OBJECTS.filter((x) => x.resource !== 'pods')) {
    const [plural, ...group] = o.resource.split('.');
    const resource = `${plural}.${String(o.manifest.apiVersion).split('/')[1]}.${group.join('.')}`;
    for (const ns of o.clusterScoped ? [''] : [TAKEOVER, REFERENCE])
      assert.ok(s.kruiseObjects[`${resource} ${ns}/${o.name}`], `${resource} ${ns}/${o.name}`);
  }
  const npp = Object.entries(s.kruiseObjects).filter(([k]) => k.startsWith('nodepodprobes.'));
  const probed = npp.flatMap(([, v]) =>
    ((v as { spec?: { podProbes?: Array<{ name: string }> } }).spec?.podProbes ?? []).map((p) => p.name),
  );
  assert.deepEqual(probed.sort(), ['pod-tools', 'pod-tools'], 'v1.8.2 listed pod-tools of both namespaces in a NodePodProbe');
  assert.equal(s.barriers.length, 2, 'v1.8.2 made a barrier ConfigMap for pod-launch in both namespaces');
}

/** Watches every pod from a resourceVersion and records each change a manager could have made. */
class PodChurn {
  readonly changes: string[] = [];
  private readonly abort = new AbortController();
  private readonly done: Promise<void>;
  private readonly known = new Map<string, PodView>();

  constructor(client: KubeClient, pods: Obj[], resourceVersion: string) {
    for (const p of pods) this.known.set(p.metadata!.uid!, podView(p));
    this.done = (async () => {
      try {
        for await (const ev of client.watch<Obj>(Pods, { resourceVersion, signal: this.abort.signal })) {
          if (ev.type === 'ERROR' || ev.type === 'BOOKMARK') continue;
          const now = podView(ev.object);
          const before = this.known.get(now.uid);
          if (ev.type === 'ADDED' && !before) this.changes.push(`created ${now.key}`);
          else if (ev.type === 'DELETED') this.changes.push(`deleted ${now.key}`);
          else if (before) this.changes.push(...diffPod(before, now));
          this.known.set(now.uid, now);
        }
      } catch (err) {
        if (!this.abort.signal.aborted) this.changes.push(`watch failed: ${String(err)}`);
      }
    })();
  }

  async stop(): Promise<string[]> {
    this.abort.abort();
    await this.done;
    return this.changes;
  }
}

function diffPod(a: PodView, b: PodView): string[] {
  const out: string[] = [];
  if (a.spec !== b.spec) out.push(`spec of ${b.key} changed`);
  if (a.containers !== b.containers) out.push(`containers of ${b.key}: ${a.containers} → ${b.containers}`);
  for (const [what, x, y] of [
    ['label', a.labels, b.labels],
    ['annotation', a.annotations, b.annotations],
  ] as const) {
    for (const k of new Set([...Object.keys(x), ...Object.keys(y)])) {
      const allowed = ALLOWED_POD_CHANGES.some(
        (a) => a.key === k && (a.from === undefined || a.from === x[k]) && (a.to === undefined || a.to === y[k]),
      );
      if (x[k] === y[k] || allowed) continue;
      out.push(`${what} ${k} of ${b.key}: ${JSON.stringify(x[k])} → ${JSON.stringify(y[k])}`);
    }
  }
  return out;
}

describe('drop-in: OpenKruise v1.8.2 → Kruise TS → OpenKruise v1.8.2', { timeout: 20 * 60_000 }, () => {
  let peer: RunningPeer | undefined;
  let client: KubeClient;
  let manager: Started | undefined;
  /**
   * `kruise daemon --simulated`: under v1.8.2 with KruiseDaemon off — only the kubelet's launch
   * barrier (v1.8.2's own daemon does not run on KWOK nodes) —, from the takeover on as Kruise TS's
   * daemon replacing it (DAEMON_FEATURE_GATES).
   */
  let daemon: number | undefined;
  const startDaemon = async (featureGates: string) => {
    if (daemon) await stopProcesses([daemon], 5000);
    daemon = await startSimulatedDaemon(
      peer!.cluster.kubeconfig,
      path.join(peer!.cluster.runDir, 'logs', 'kruise-daemon.log'),
      featureGates,
    );
  };
  const kubectl = (args: string[], input?: string) => clusterKubectl(peer!.cluster, args, input);
  const getJson = async <T = Obj>(args: string[]): Promise<T> => JSON.parse(await kubectl([...args, '-o', 'json'])) as T;

  async function snapshot(): Promise<Snapshot> {
    const revisions = (await getJson<{ items: Obj[] }>(['get', 'controllerrevisions', '-A'])).items;
    const cloneSets = (await getJson<{ items: Obj[] }>(['get', 'clonesets.apps.kruise.io', '-A'])).items;
    const jobs = (await getJson<{ items: Obj[] }>(['get', 'imagepulljobs.apps.kruise.io', '-A'])).items;
    const pvcs = (await getJson<{ items: Obj[] }>(['get', 'persistentvolumeclaims', '-A'])).items;
    const kruiseObjects: Record<string, unknown> = {};
    for (const resource of KRUISE_RESOURCES) {
      for (const o of (await getJson<{ items: Obj[] }>(['get', resource, '-A'])).items) {
        const m = o.metadata!;
        const key = `${resource} ${m.namespace ?? ''}/${m.name}`;
        if (PULL_PROGRESS.test(resource)) {
          // Pull progress: on this cluster v1.8.2 never fills NodeImage specs or job status (its
          // image-pull controllers wait for a kruise-daemon the KWOK node lacks), Kruise TS does.
          kruiseObjects[key] = { uid: m.uid, spec: resource.startsWith('nodeimages.') ? undefined : o.spec };
          continue;
        }
        const status = o.status ?? {};
        kruiseObjects[key] = {
          uid: m.uid,
          ...(NOT_WRITTEN.test(resource) ? { resourceVersion: m.resourceVersion } : {}),
          generation: m.generation,
          labels: m.labels,
          annotations: m.annotations,
          spec: withoutGoZeroValues(o.spec),
          status: WHOLE_STATUS.test(resource)
            ? status
            : Object.fromEntries(STABLE_STATUS_FIELDS.filter((f) => status[f] !== undefined).map((f) => [f, status[f]])),
        };
      }
    }
    const configMaps = (await getJson<{ items: Obj[] }>(['get', 'configmaps', '-A'])).items;
    // Every ResourceDistribution's copies (rd-config's and the hand-back set's rd-config-ours').
    const copies = configMaps.filter((c) => c.metadata!.annotations?.['kruise.io/resourcedistribution.resource.from']);
    return {
      kruiseObjects,
      barriers: configMaps
        .filter((c) => c.metadata!.name!.endsWith('-barrier'))
        .map((c) => configMapState(c, { owners: c.metadata!.ownerReferences?.map((r) => `${r.kind}/${r.name}/${r.uid}`) }))
        .sort(),
      // Not written at all: a manager keeps a reference to the distribution at the version it finds
      // (v1.8.2's v1alpha1 through a takeover; re-pointed to v1alpha1 by the migration on the way back).
      distributed: copies
        .map((c) =>
          configMapState(c, {
            annotations: c.metadata!.annotations,
            owners: c.metadata!.ownerReferences?.map((r) => `${r.apiVersion}/${r.kind}/${r.name}/${r.uid}`),
          }),
        )
        .sort(),
      revisions: revisions.map((r) => `${r.metadata!.namespace}/${r.metadata!.name} #${r.revision} ${JSON.stringify(r.data)}`).sort(),
      cloneSets: Object.fromEntries(
        cloneSets.map((c) => [
          `${c.metadata!.namespace}/${c.metadata!.name}`,
          { currentRevision: c.status?.currentRevision, updateRevision: c.status?.updateRevision },
        ]),
      ),
      imagePullJobs: jobs.map((j) => `${j.metadata!.namespace}/${j.metadata!.name} ${j.metadata!.uid}`).sort(),
      pvcs: pvcs.map((p) => `${p.metadata!.namespace}/${p.metadata!.name} ${p.metadata!.uid}`).sort(),
    };
  }

  async function startPodChurn(): Promise<PodChurn> {
    const list = await client.listAll<Obj>(Pods);
    return new PodChurn(client, list.items, list.metadata.resourceVersion!);
  }

  /** Every drop-in object of the namespaces (and the cluster-scoped ones) has settled (unsettled() by kind). */
  async function settled(namespaces: string[], only: (resource: string) => boolean = () => true): Promise<void> {
    const resources = [...new Set(DROPIN_OBJECTS.map((o) => o.resource))].filter(only);
    await waitFor(
      `drop-in objects in ${namespaces.join(', ')} to settle`,
      async () => {
        const pending: unknown[] = [];
        for (const resource of resources) {
          for (const o of (await getJson<{ items: Obj[] }>(['get', resource, '-A'])).items) {
            if (o.metadata!.namespace && !namespaces.includes(o.metadata!.namespace)) continue;
            const why = unsettled(resource, o as Parameters<typeof unsettled>[1]);
            if (why) pending.push({ resource, name: o.metadata!.name, namespace: o.metadata!.namespace, why, status: o.status });
          }
        }
        return pending.length === 0 || { pending };
      },
      240_000,
      1000,
    );
  }

  async function startKruiseTS(): Promise<Started> {
    const m = startProcess(
      'kruise-manager',
      process.execPath,
      kruiseArgs(
        'start',
        '--kubeconfig',
        peer!.cluster.kubeconfig,
        '--enable-leader-election=false',
        ...servingFlags(0, '0', '0'),
        `--feature-gates=${FEATURE_GATES}`,
      ),
      path.join(peer!.cluster.runDir, 'logs', 'kruise-manager.log'),
      { ...process.env, KRUISE_LOG_LEVEL: 'info' },
    );
    await waitFor(
      'Kruise TS to serve its webhooks',
      async () => {
        if (m.exited) throw new Error(`manager exited: ${tail(m.logFile, 20)}`);
        return defaultedByWebhook(client);
      },
      90_000,
      250,
    );
    return m;
  }

  /**
   * The process first, then its webhook configurations at once: a running Kruise TS restores a deleted
   * configuration immediately (its configuration owner corrects drift), so deleting first does nothing.
   */
  async function stopKruiseTS(): Promise<void> {
    if (manager) await stopProcesses([manager.pid], 15_000);
    manager = undefined;
    for (const kind of ['mutatingwebhookconfiguration', 'validatingwebhookconfiguration']) {
      await kubectl(['delete', kind, `kruise-${kind.replace('webhookconfiguration', '')}-webhook-configuration`, '--ignore-not-found']);
    }
  }

  /** Rolls IMAGE_V2 into every CloneSet of the namespace and returns, per CloneSet, what happened to its pods. */
  async function rollImage(namespace: string): Promise<Record<string, unknown>> {
    const before = new Map((await client.listAll<Obj>(Pods, { namespace })).items.map((p) => [p.metadata!.uid!, p]));
    const cloneSets = DROPIN_OBJECTS.filter((o) => o.resource.startsWith('clonesets.'));
    for (const o of cloneSets) {
      const containers = (
        (o.manifest.spec as Obj['spec'])!.template as { spec: { containers: Array<{ name: string }> } }
      ).spec.containers.map((c) => ({ name: c.name, image: IMAGE_V2 }));
      await kubectl([
        '-n',
        namespace,
        'patch',
        o.resource,
        o.name,
        '--type=merge',
        '-p',
        JSON.stringify({ spec: { template: { spec: { containers } } } }),
      ]);
    }
    await sleep(2000);
    await settled([namespace], (r) => r.startsWith('clonesets.'));
    const after = (await client.listAll<Obj>(Pods, { namespace })).items;
    const outcome: Record<string, unknown> = {};
    for (const o of cloneSets) {
      const mine = after.filter((p) => p.metadata!.labels?.app === o.name);
      const cs = await getJson(['-n', namespace, 'get', o.resource, o.name]);
      outcome[o.name] = {
        updateRevision: String(cs.status!.updateRevision).replace(/^.*-/, ''),
        pods: mine.length,
        keptInPlace: mine.filter(
          (p) => before.has(p.metadata!.uid!) && p.metadata!.labels!['controller-revision-hash'] === cs.status!.updateRevision,
        ).length,
        recreated: mine.filter((p) => !before.has(p.metadata!.uid!)).length,
        notUpdated: mine.filter((p) => p.metadata!.labels!['controller-revision-hash'] !== cs.status!.updateRevision).length,
      };
    }
    return outcome;
  }

  before(async () => {
    peer = await startUpstreamPeer({ cluster: CLUSTER, featureGates: FEATURE_GATES });
    client = fromKubeconfigFile(peer.cluster.kubeconfig, { qps: 200, burst: 400 });
    await startDaemon('KruiseDaemon=false');
    // Volumes for the claim templates (no provisioner on the local cluster): statically bound PVs.
    const pv = (name: string, storageClassName: string, labels: Record<string, string>, accessModes: string[]) => ({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name, labels },
      spec: { capacity: { storage: '2Gi' }, accessModes, storageClassName, hostPath: { path: `/tmp/${name}` } },
    });
    const pvs = [];
    for (let i = 0; i < 10; i++) {
      pvs.push(pv(`pv-plain-${i}`, '', {}, ['ReadWriteOnce']), pv(`pv-standard-${i}`, 'standard', {}, ['ReadWriteOnce']));
      pvs.push(pv(`pv-ssd-${i}`, '', { disk: 'ssd', zone: 'a' }, ['ReadWriteOnce', 'ReadOnlyMany']));
    }
    await kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: pvs }));
    for (const ns of [TAKEOVER, REFERENCE]) {
      await kubectl(['create', 'namespace', ns]);
      await kubectl(['label', 'namespace', ns, `${DROPIN_NAMESPACE_LABEL}=true`]);
    }
    const ordered = creationOrder(DROPIN_OBJECTS);
    for (const o of ordered.filter((x) => x.clusterScoped)) await kubectl(['create', '-f', '-'], JSON.stringify(o.manifest));
    for (const ns of [TAKEOVER, REFERENCE]) {
      for (const o of ordered.filter((x) => !x.clusterScoped)) {
        if (o.afterPodReady) await kubectl(['-n', ns, 'wait', '--for=condition=Ready', `pod/${o.afterPodReady}`, '--timeout=180s']);
        await kubectl(['-n', ns, 'create', '-f', '-'], JSON.stringify(o.manifest));
      }
    }
    await settled([TAKEOVER, REFERENCE]);
    // v1.8.2 creates a NodeImage per node on its own schedule; the baseline must hold them, or
    // one it had not written yet would count as Kruise TS's churn.
    await waitFor('v1.8.2 to create a NodeImage for every node', async () => {
      const names = (out: string) =>
        out
          .split('\n')
          .filter(Boolean)
          .map((l) => l.slice(l.indexOf('/') + 1))
          .sort();
      const nodes = names(await kubectl(['get', 'nodes', '-o', 'name']));
      const images = names(await kubectl(['get', 'nodeimages.v1alpha1.apps.kruise.io', '-o', 'name']));
      return nodes.every((n) => images.includes(n));
    });
  });

  after(async () => {
    await stopKruiseTS().catch(() => undefined);
    if (daemon) await stopProcesses([daemon], 5000).catch(() => undefined);
    await peer?.stop().catch(() => undefined);
    await client?.close();
    if (process.env.KRUISE_TS_KEEP_CLUSTER !== '1') await down(CLUSTER, { quiet: true }).catch(() => undefined);
  });

  let referenceRoll: Record<string, unknown>;

  test('upstream rolls the reference change (the behaviour Kruise TS must repeat)', async () => {
    referenceRoll = await rollImage(REFERENCE);
  });

  test('upstream → Kruise TS: no pod, revision, claim or job churn through a forced resync', async () => {
    const baseline = await snapshot();
    assertCovers(baseline);
    const churn = await startPodChurn();
    await peer!.stopManager();
    await installCRDs(client);
    manager = await startKruiseTS();
    // After the manager: the daemon reads CRRs and NodeImages at v1beta1, through its conversion webhook.
    await startDaemon(DAEMON_FEATURE_GATES);
    await sleep(HALF_WINDOW_MS);
    await stopKruiseTS();
    manager = await startKruiseTS();
    await sleep(HALF_WINDOW_MS);
    assert.deepEqual(await churn.stop(), []);
    assert.deepEqual(await snapshot(), baseline);
  });

  test('a template change under Kruise TS rolls as the same change did under upstream', async () => {
    assert.deepEqual(await rollImage(TAKEOVER), referenceRoll);
  });

  /**
   * The hand-back set: every drop-in object created through Kruise TS in OURS (labelled like the
   * other drop-in namespaces, so v1.8.2's rd-config distributes there too, now through Kruise TS),
   * its cluster-scoped objects beside the originals (kruiseTSCreatedSet); all settled.
   */
  async function createThroughKruiseTS(): Promise<void> {
    await kubectl(['create', 'namespace', OURS]);
    await kubectl(['label', 'namespace', OURS, `${DROPIN_NAMESPACE_LABEL}=true`]);
    const ordered = creationOrder(kruiseTSCreatedSet(OURS));
    for (const o of ordered.filter((x) => x.clusterScoped)) await kubectl(['create', '-f', '-'], JSON.stringify(o.manifest));
    for (const o of ordered.filter((x) => !x.clusterScoped)) {
      if (o.afterPodReady) await kubectl(['-n', OURS, 'wait', '--for=condition=Ready', `pod/${o.afterPodReady}`, '--timeout=180s']);
      await kubectl(['-n', OURS, 'create', '-f', '-'], JSON.stringify(o.manifest));
    }
    await settled([OURS]);
  }

  test('Kruise TS → upstream: storage-version migrate, upstream CRDs, upstream v1.8.2 starts with no churn', async () => {
    // Objects created through Kruise TS must hash the same under upstream.
    await createThroughKruiseTS();
    // The Advanced DaemonSet's first revision is named as v1.8.2 named the same manifest's, and its pods carry that hash.
    const firstDaemonSetRevision = async (ns: string) =>
      (await getJson<{ items: Array<Obj & { revision: number }> }>(['-n', ns, 'get', 'controllerrevisions'])).items
        .filter((r) => r.metadata!.ownerReferences?.some((o) => o.kind === 'DaemonSet'))
        .sort((a, b) => a.revision - b.revision)[0]?.metadata!.name;
    const upstreamNamed = await firstDaemonSetRevision(TAKEOVER);
    assert.ok(upstreamNamed);
    assert.equal(await firstDaemonSetRevision(OURS), upstreamNamed);
    const ourPods = (await getJson<{ items: Obj[] }>(['-n', OURS, 'get', 'pods'])).items.filter((p) =>
      p.metadata!.ownerReferences?.some((o) => o.kind === 'DaemonSet'),
    );
    assert.ok(ourPods.length > 0);
    for (const p of ourPods)
      assert.equal(p.metadata!.labels?.['controller-revision-hash'], upstreamNamed.slice(upstreamNamed.lastIndexOf('-') + 1));

    const migration = await migrateStorageVersion(client, OPENKRUISE_V18);
    // v1.8.2 keeps Advanced StatefulSets at v1beta1 (its own conversion would drop their v1beta1-only fields).
    assert.ok(migration.crds.every((r) => r.storedVersions.join() === (r.crd === 'statefulsets.apps.kruise.io' ? 'v1beta1' : 'v1alpha1')));
    // Under the default API versions the copies Kruise TS made already name their distribution at
    // apps.kruise.io/v1alpha1, the version served (as v1.8.2's do): nothing to re-point.
    assert.deepEqual(migration.copies, { apiVersion: 'apps.kruise.io/v1alpha1', repointed: [] });
    const baseline = await snapshot();
    const churn = await startPodChurn();
    await stopKruiseTS();
    // Kruise TS's daemon goes with it (it reads v1beta1, which upstream's CRDs drop); the kubelet's part stays.
    await startDaemon('KruiseDaemon=false');
    // Upstream's CRDs replace ours whole (kubectl replace: v1beta1 goes where v1.8.2 has none).
    await kubectl(['replace', '-f', '-'], await kubectl(['kustomize', path.join((await ensureUpstreamPeer()).moduleDir, 'config/crd')]));
    peer = await startUpstreamPeer({ cluster: CLUSTER, featureGates: FEATURE_GATES });
    await sleep(HALF_WINDOW_MS);
    assert.deepEqual(await churn.stop(), []);
    const handedBack = await snapshot();
    // Both sides whole in the cluster's logs directory (kept by cluster down): assert's diff elides long stretches.
    writeFileSync(path.join(peer!.cluster.runDir, 'logs', 'handback-snapshots.json'), JSON.stringify({ baseline, handedBack }, null, 1));
    assert.deepEqual(handedBack, baseline);
  });
});
