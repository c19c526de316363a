// ResourceDistribution copies, Kruise TS against upstream OpenKruise v1.8.2 (issue #16): the same
// ResourceDistributions (test/harness/rd-hash-fixtures.ts) are distributed by upstream's
// kruise-manager on a cluster of its own and by the suite's manager, and what each stamps on its
// copies is compared: the hash annotation byte for byte (also recomputed by ours from the bytes
// upstream read), the source annotation, the copy's content, labels and the controller reference
// (UIDs apart). The figures are frozen in test/unit/controllers/resourcedistribution-hash.test.ts,
// so the default suite checks them without the peer; this file runs on request only
// (`./run.sh test integration resourcedistribution-peer`), as it starts upstream's manager.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { kubectl as clusterKubectl, type ClusterState } from '../../src/cluster/local-cluster.ts';
import { resourceHash, type ResourceDistribution } from '../../src/controllers/resourcedistribution/plan.ts';
import { testCluster } from '../harness/cluster.ts';
import { hashFixtureDistribution, RD_HASH_FIXTURES, RD_HASH_NAMESPACE } from '../harness/rd-hash-fixtures.ts';
import { startUpstreamPeer, type RunningPeer } from '../harness/upstream-peer.ts';

const HASH = 'kruise.io/resourcedistribution.resource.hashcode';
const FROM = 'kruise.io/resourcedistribution.resource.from';

interface Copy {
  metadata: {
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
    ownerReferences?: Array<Record<string, unknown>>;
    finalizers?: string[];
  };
  [field: string]: unknown;
}

/** What a manager stamped on a copy, with what differs per cluster (UIDs, server fields) left out. */
function stamped(copy: Copy) {
  const { metadata, ...content } = copy;
  return {
    annotations: metadata.annotations ?? {},
    labels: metadata.labels ?? {},
    finalizers: metadata.finalizers ?? [],
    ownerReferences: (metadata.ownerReferences ?? []).map(({ uid: _uid, ...ref }) => ref),
    content,
  };
}

async function distribute(cluster: ClusterState): Promise<Map<string, { rd: ResourceDistribution; copy: Copy }>> {
  const run = (args: string[], input?: string) => clusterKubectl(cluster, args, input);
  await run(['create', 'namespace', RD_HASH_NAMESPACE]).catch((e: Error) => {
    if (!/AlreadyExists/.test(e.message)) throw e;
  });
  for (const f of RD_HASH_FIXTURES) await run(['apply', '-f', '-'], JSON.stringify(hashFixtureDistribution(f)));
  const out = new Map<string, { rd: ResourceDistribution; copy: Copy }>();
  const deadline = Date.now() + 60_000;
  for (const f of RD_HASH_FIXTURES) {
    const kind = (f.resource.kind as string).toLowerCase();
    for (;;) {
      const copy = await run(['get', kind, f.name, '-n', RD_HASH_NAMESPACE, '-o', 'json']).then(
        (s) => JSON.parse(s) as Copy,
        () => undefined,
      );
      if (copy?.metadata.annotations?.[HASH]) {
        const rd = JSON.parse(
          await run(['get', 'resourcedistributions.v1alpha1.apps.kruise.io', f.name, '-o', 'json']),
        ) as ResourceDistribution;
        out.set(f.name, { rd, copy });
        break;
      }
      if (Date.now() > deadline) throw new Error(`no distributed ${kind} ${RD_HASH_NAMESPACE}/${f.name} on ${cluster.name} within 60s`);
      await sleep(500);
    }
  }
  return out;
}

async function cleanUp(cluster: ClusterState) {
  const run = (args: string[]) => clusterKubectl(cluster, args);
  for (const f of RD_HASH_FIXTURES)
    await run(['delete', 'resourcedistributions.apps.kruise.io', f.name, '--ignore-not-found', '--wait=false']).catch(() => '');
  await run(['delete', 'namespace', RD_HASH_NAMESPACE, '--ignore-not-found', '--wait=false']).catch(() => '');
}

describe('ResourceDistribution copies against upstream v1.8.2', () => {
  let peer: RunningPeer | undefined;

  before(async () => {
    peer = await startUpstreamPeer({ featureGates: 'ResourceDistributionGate=true' });
  });

  after(async () => {
    if (peer) await cleanUp(peer.cluster);
    await cleanUp(testCluster());
    await peer?.stop();
  });

  test('hash and source annotations, content and owner reference are the same', { timeout: 300_000 }, async () => {
    const theirs = await distribute(peer!.cluster);
    const ours = await distribute(testCluster());
    const report: Record<string, unknown> = {};
    for (const f of RD_HASH_FIXTURES) {
      const t = theirs.get(f.name)!;
      const o = ours.get(f.name)!;
      report[f.name] = {
        upstreamHash: t.copy.metadata.annotations?.[HASH],
        ourHash: o.copy.metadata.annotations?.[HASH],
        ourHashOfUpstreamBytes: resourceHash(t.rd),
        upstreamResource: t.rd.spec?.resource,
        upstream: stamped(t.copy),
        ours: stamped(o.copy),
      };
    }
    writeFileSync(path.join(testCluster().runDir, 'rd-peer-report.json'), JSON.stringify(report, null, 2));
    for (const f of RD_HASH_FIXTURES) {
      const t = theirs.get(f.name)!;
      const o = ours.get(f.name)!;
      assert.equal(resourceHash(t.rd), t.copy.metadata.annotations?.[HASH], `${f.name}: our hash of the resource upstream read`);
      assert.equal(o.copy.metadata.annotations?.[HASH], t.copy.metadata.annotations?.[HASH], `${f.name}: hash annotation`);
      assert.equal(o.copy.metadata.annotations?.[FROM], t.copy.metadata.annotations?.[FROM], `${f.name}: source annotation`);
      const { ownerReferences: ourRefs, ...ourRest } = stamped(o.copy);
      const { ownerReferences: theirRefs, ...theirRest } = stamped(t.copy);
      assert.deepEqual(ourRest, theirRest, `${f.name}: annotations, labels, finalizers and content`);
      // The one deliberate difference: the reference names the version each side stores
      // ResourceDistributions in — v1alpha1 (v1.8.2, its only version), v1beta1 (ours, as upstream
      // master since it promoted the kind). Ours takes either as its own (docs/resourcedistribution.md).
      assert.deepEqual(
        ourRefs.map(({ apiVersion: _v, ...r }) => r),
        theirRefs.map(({ apiVersion: _v, ...r }) => r),
        `${f.name}: controller reference`,
      );
      assert.deepEqual(
        [ourRefs.map((r) => r.apiVersion), theirRefs.map((r) => r.apiVersion)],
        [['apps.kruise.io/v1beta1'], ['apps.kruise.io/v1alpha1']],
        `${f.name}: controller reference versions`,
      );
    }
  });
});
