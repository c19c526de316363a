// Regenerates test/fixtures/upstream-v1.8.2/golden.json: the objects of test/harness/dropin-workloads.ts
// created through upstream OpenKruise v1.8.2 (its webhooks and controllers, on a local cluster of
// its own), and what upstream stored and computed for them — defaulted specs (quantities in Go's
// canonical form), ControllerRevision names, hash labels and claim-template hashes, pod revision
// labels, ImageListPullJob template hashes. test/unit/golden-upstream.test.ts checks Kruise TS
// against it. Test tooling only.
//
//   KRUISE_TS_TEST_CLUSTER=<name> node_modules/.bin/node --import tsx hack/upstream-golden.ts
//
// (The peer runs on the cluster <name>-upstream, created when missing and removed afterwards
// unless KRUISE_TS_KEEP_CLUSTER=1.)
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { kubectl } from '../src/cluster/local-cluster.ts';
import { stopProcesses } from '../src/cluster/processes.ts';
import {
  CHILD_NAMING_OBJECTS,
  creationOrder,
  DROPIN_NAMESPACE_LABEL,
  DROPIN_OBJECTS,
  unsettled,
} from '../test/harness/dropin-workloads.ts';
import { startSimulatedDaemon } from '../test/harness/simulated-daemon.ts';
import { startUpstreamPeer } from '../test/harness/upstream-peer.ts';

const NAMESPACE = 'golden';
const out = path.join(path.dirname(fileURLToPath(import.meta.url)), '../test/fixtures/upstream-v1.8.2/golden.json');
// As the suite runs it: ImagePullJobs are refused by upstream with the gate off.
const FEATURE_GATES = 'ImagePullJobGate=true,ResourceDistributionGate=true';
// The AdvancedCronJobs' apps.kruise.io/scheduled-at is written in the manager's local zone.
process.env.TZ = 'UTC';

type Obj = {
  metadata: {
    name: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: Array<{ name: string }>;
    generateName?: string;
  };
  [k: string]: unknown;
};

const peer = await startUpstreamPeer({ featureGates: FEATURE_GATES });
const run = (args: string[], input?: string) => kubectl(peer.cluster, args, input);
const getJson = async <T = Obj>(args: string[]): Promise<T> => JSON.parse(await run([...args, '-o', 'json'])) as T;
// The kubelet's launch barrier on the KWOK node (no kruise-daemon sub-controller: none runs under v1.8.2 here).
const kubeletBarrier = await startSimulatedDaemon(
  peer.cluster.kubeconfig,
  path.join(peer.cluster.runDir, 'logs', 'kruise-daemon.log'),
  'KruiseDaemon=false',
);
try {
  await run(['delete', 'namespace', NAMESPACE, '--ignore-not-found', '--wait=true']);
  await run(['create', 'namespace', NAMESPACE]);
  await run(['label', 'namespace', NAMESPACE, `${DROPIN_NAMESPACE_LABEL}=true`]);
  // Due every minute: created first, so their first children come while the rest settles.
  for (const o of CHILD_NAMING_OBJECTS) await run(['-n', NAMESPACE, 'create', '-f', '-'], JSON.stringify(o.manifest));
  for (const o of creationOrder(DROPIN_OBJECTS)) {
    if (o.clusterScoped) await run(['delete', o.resource, o.name, '--ignore-not-found', '--wait=true']);
    if (o.afterPodReady) await run(['-n', NAMESPACE, 'wait', '--for=condition=Ready', `pod/${o.afterPodReady}`, '--timeout=180s']);
    await run(o.clusterScoped ? ['create', '-f', '-'] : ['-n', NAMESPACE, 'create', '-f', '-'], JSON.stringify(o.manifest));
  }

  const cloneSets = DROPIN_OBJECTS.filter((o) => o.resource.startsWith('clonesets.'));
  const deadline = Date.now() + 180_000;
  for (;;) {
    const list = await getJson<{
      items: Array<{
        metadata: { name: string; generation: number };
        spec: { replicas: number };
        status?: { observedGeneration?: number; updateRevision?: string; updatedReplicas?: number };
      }>;
    }>(['-n', NAMESPACE, 'get', 'clonesets.apps.kruise.io']);
    // The drop-in CloneSets, not the UnitedDeployments' subset CloneSets.
    const mine = list.items.filter((cs) => cloneSets.some((o) => o.name === cs.metadata.name));
    const settled =
      mine.length === cloneSets.length &&
      mine.every(
        (cs) =>
          cs.status?.observedGeneration === cs.metadata.generation &&
          !!cs.status.updateRevision &&
          (cs.status.updatedReplicas ?? 0) === cs.spec.replicas,
      );
    if (settled) break;
    if (Date.now() > deadline)
      throw new Error(`CloneSets did not settle under upstream: ${JSON.stringify(list.items.map((i) => i.status))}`);
    await sleep(1000);
  }
  const listJobs = DROPIN_OBJECTS.filter((o) => o.resource.startsWith('imagelistpulljobs.'));
  for (;;) {
    const jobs = await getJson<{ items: Obj[] }>(['-n', NAMESPACE, 'get', 'imagelistpulljobs.apps.kruise.io']);
    if (jobs.items.every((j) => j.metadata.labels?.['controller-revision-hash'])) break;
    if (Date.now() > deadline) throw new Error('ImageListPullJobs were not labelled with their template hash');
    await sleep(1000);
  }

  const others = DROPIN_OBJECTS.filter((o) => !/^(clonesets|imagepulljobs|imagelistpulljobs|pods)\./.test(`${o.resource}.`));
  const get = (o: (typeof others)[number]) =>
    getJson<Obj & { metadata: { generation?: number }; spec?: Record<string, unknown>; status?: Record<string, unknown> }>(
      o.clusterScoped ? ['get', o.resource, o.name] : ['-n', NAMESPACE, 'get', o.resource, o.name],
    );
  for (;;) {
    const pending = [];
    for (const o of others) {
      const why = unsettled(o.resource, await get(o));
      if (why) pending.push(`${o.name}: ${why}`);
    }
    if (pending.length === 0) break;
    if (Date.now() > deadline + 120_000) throw new Error(`did not settle under upstream: ${pending.join('; ')}`);
    await sleep(1000);
  }
  for (const o of DROPIN_OBJECTS.filter((x) => x.resource === 'pods'))
    await run(['-n', NAMESPACE, 'wait', '--for=condition=Ready', `pod/${o.name}`, '--timeout=180s']);
  const revisions = (await getJson<{ items: Obj[] }>(['-n', NAMESPACE, 'get', 'controllerrevisions'])).items;
  const pods = (await getJson<{ items: Obj[] }>(['-n', NAMESPACE, 'get', 'pods'])).items;
  const ownerOf = (x: Obj) => x.metadata.ownerReferences?.map((r) => `${(r as { kind?: string }).kind}/${r.name}`).join() ?? '';
  const workloads = {
    objects: await Promise.all(
      others.map(async (o) => {
        const stored = await get(o);
        return {
          resource: o.resource,
          input: o.manifest,
          stored: {
            metadata: { labels: stored.metadata.labels, annotations: stored.metadata.annotations },
            spec: stored.spec,
            status: stored.status,
          },
        };
      }),
    ),
    // Subset workloads of the UnitedDeployments (and every other Kruise workload in the namespace).
    subsetWorkloads: (
      await Promise.all(
        ['clonesets.apps.kruise.io', 'statefulsets.apps.kruise.io'].map(
          async (r) => (await getJson<{ items: Obj[] }>(['-n', NAMESPACE, 'get', r])).items,
        ),
      )
    )
      .flat()
      .filter((w) => w.metadata.ownerReferences?.length)
      .map((w) => ({
        kind: (w as { kind?: string }).kind,
        owner: ownerOf(w),
        labels: w.metadata.labels,
        annotations: w.metadata.annotations,
        spec: w.spec,
      })),
    revisions: revisions.map((r) => ({
      owner: ownerOf(r),
      name: r.metadata.name,
      labels: r.metadata.labels,
      annotations: r.metadata.annotations,
      data: r.data,
      revision: r.revision,
    })),
    pods: pods.map((p) => ({
      name: p.metadata.name,
      generateName: p.metadata.generateName,
      owner: ownerOf(p),
      ownerReferences: p.metadata.ownerReferences,
      labels: p.metadata.labels,
      annotations: p.metadata.annotations,
      spec: p.spec,
    })),
  };
  // Child naming: each AdvancedCronJob's first child (the Job or BroadcastJob v1.8.2 created for a
  // scheduled minute) and the child's pods.
  const childNaming = [];
  for (const o of CHILD_NAMING_OBJECTS) {
    const kind = 'jobTemplate' in (o.manifest.spec as { template: object }).template ? 'jobs.batch' : 'broadcastjobs.apps.kruise.io';
    for (;;) {
      const children = (await getJson<{ items: Obj[] }>(['-n', NAMESPACE, 'get', kind])).items.filter((c) =>
        c.metadata.ownerReferences?.some((r) => r.name === o.name),
      );
      const child = children.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))[0];
      const childPods = child
        ? (await getJson<{ items: Obj[] }>(['-n', NAMESPACE, 'get', 'pods'])).items.filter((p) =>
            p.metadata.ownerReferences?.some((r) => r.name === child.metadata.name),
          )
        : [];
      if (child && childPods.length > 0) {
        const stored = await getJson<Obj & { spec?: unknown; status?: unknown }>(['-n', NAMESPACE, 'get', o.resource, o.name]);
        const meta = (x: Obj) => ({
          name: x.metadata.name,
          generateName: x.metadata.generateName,
          labels: x.metadata.labels,
          annotations: x.metadata.annotations,
          ownerReferences: x.metadata.ownerReferences,
        });
        childNaming.push({
          cronJob: { input: o.manifest, stored: { spec: stored.spec, status: stored.status } },
          child: {
            apiVersion: (child as { apiVersion?: string }).apiVersion,
            kind: (child as { kind?: string }).kind,
            ...meta(child),
            spec: child.spec,
          },
          pods: childPods.map(meta),
        });
        break;
      }
      if (Date.now() > deadline + 240_000) throw new Error(`${o.name}: no child with pods under upstream`);
      await sleep(1000);
    }
  }
  const golden = {
    peer: peer.version,
    regenerate: 'KRUISE_TS_TEST_CLUSTER=<name> node_modules/.bin/node --import tsx hack/upstream-golden.ts',
    featureGates: FEATURE_GATES,
    cloneSets: await Promise.all(
      cloneSets.map(async (o) => {
        const stored = await getJson<Obj & { spec: unknown; status: unknown }>(['-n', NAMESPACE, 'get', o.resource, o.name]);
        return {
          input: o.manifest,
          stored: {
            apiVersion: 'apps.kruise.io/v1alpha1',
            kind: 'CloneSet',
            metadata: { name: o.name, namespace: NAMESPACE },
            spec: stored.spec,
          },
          status: stored.status,
          revisions: revisions
            .filter((r) => r.metadata.ownerReferences?.some((ref) => ref.name === o.name))
            .map((r) => ({
              name: r.metadata.name,
              labels: r.metadata.labels,
              annotations: r.metadata.annotations,
              data: r.data,
              revision: r.revision,
            })),
          podLabels: pods.filter((p) => p.metadata.ownerReferences?.some((ref) => ref.name === o.name)).map((p) => p.metadata.labels),
        };
      }),
    ),
    workloads,
    childNaming,
    imageListPullJobs: await Promise.all(
      listJobs.map(async (o) => {
        const stored = await getJson<Obj & { spec: unknown }>(['-n', NAMESPACE, 'get', o.resource, o.name]);
        return { input: o.manifest, spec: stored.spec, templateHash: stored.metadata.labels?.['controller-revision-hash'] };
      }),
    ),
  };
  // Formatted as `./run.sh lint` checks it.
  writeFileSync(out, await format(JSON.stringify(golden), { ...(await resolveConfig(out)), parser: 'json', filepath: out }));
  process.stdout.write(`wrote ${out}\n`);
} finally {
  await stopProcesses([kubeletBarrier], 5000);
  for (const o of DROPIN_OBJECTS.filter((x) => x.clusterScoped))
    await run(['delete', o.resource, o.name, '--ignore-not-found']).catch(() => undefined);
  await peer.stop();
}
