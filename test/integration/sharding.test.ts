// The sharded manager (docs/sharding.md, issue 37) on a cluster of its own: three replicas with
// --sharding, 30 CloneSets rolling out, one replica SIGKILLed mid-rollout, then a fourth replica
// joining mid-rollout. Its shard Lease is taken over and its CloneSets move to live shards within
// the lease duration and a small margin; no CloneSet ever has more live pods than replicas or fewer
// than replicas − maxUnavailable; every rollout finishes; and no CloneSet is reconciled by two
// replicas at once. The last is read from the API server's audit log: a shard's clients name it in
// their user agent, and for each CloneSet the writes of its controller (the CloneSet, its pods and
// revisions) must come from one shard after another, never back to a shard once another wrote.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeObject, Lease } from '../../src/apis/core-objects.ts';
import { down, up, type ClusterState } from '../../src/cluster/local-cluster.ts';
import { stopProcesses, tail } from '../../src/cluster/processes.ts';
import { installCRDs } from '../../src/manager/crds.ts';
import { fromKubeconfigFile, type KubeClient } from '../../src/runtime/client.ts';
import { CloneSets, Leases, Namespaces, Pods } from '../../src/runtime/resources.ts';
import { shardLabels, shardLeaseName } from '../../src/util/shard-ring.ts';
import { TEST_CLUSTER, waitFor } from '../harness/cluster.ts';
import { RollingCloneSet } from '../harness/chaos.ts';
import { startManagerProcess, waitLeader, type ManagerProcess } from '../harness/managers.ts';

const NAME = `${TEST_CLUSTER}-shard`;
const RING = 'kruise-manager';
const LABELS = shardLabels(RING);
const NAMESPACE = 'sharded';
const CLONESETS = 30;
const REPLICAS = 3;
const MAX_UNAVAILABLE = 1;
const LEASE_DURATION_MS = 4_000;
/** Lease duration + one renew period of the dead shard before it died + the sharder's relabelling. */
const MOVE_BOUND_MS = LEASE_DURATION_MS + 6_000;
const SHARDING_FLAGS = [
  '--sharding=true',
  `--leader-election-lease-duration=${LEASE_DURATION_MS / 1000}s`,
  '--leader-election-renew-deadline=3s',
  '--leader-election-retry-period=1s',
];

const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
    verbs: [create, update, patch, delete]
    namespaces: [${NAMESPACE}]
    resources:
      - group: ''
        resources: [pods, pods/status]
      - group: apps
        resources: [controllerrevisions]
      - group: apps.kruise.io
        resources: [clonesets, clonesets/status]
  - level: None
`;

let state: ClusterState;
let client: KubeClient;
let auditDir: string;
const managers = new Map<string, ManagerProcess>();
/** Stopped in after() too: a failed assertion must not leave it polling (the run would never end). */
let sampler: ReturnType<typeof samplePods> | undefined;

before(async () => {
  auditDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kruise-shard-audit-'));
  fs.writeFileSync(path.join(auditDir, 'policy.yaml'), AUDIT_POLICY);
  const started = await up({
    name: NAME,
    nodes: 2,
    log: () => undefined,
    extraArgs: {
      'kube-apiserver': [
        `--audit-policy-file=${path.join(auditDir, 'policy.yaml')}`,
        `--audit-log-path=${path.join(auditDir, 'audit.log')}`,
      ],
    },
  });
  state = started.state;
  assert.equal(started.reused, false, `cluster ${NAME} was already running (without this test's audit log): stop it first`);
  client = fromKubeconfigFile(state.kubeconfig, { qps: 200, burst: 400 });
  await installCRDs(client);
  await client.create(Namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
});

after(async () => {
  await sampler?.stop();
  await stopProcesses(
    [...managers.values()].filter((m) => !m.proc.exited).map((m) => m.proc.pid),
    5000,
  );
  await client?.close();
  if (process.env.KRUISE_TS_KEEP_CLUSTER !== '1') {
    await down(NAME, { quiet: true, purge: true });
    fs.rmSync(auditDir, { recursive: true, force: true });
  }
});

/** The shard Leases of the ring: shard id → holder. */
async function shardHolders(): Promise<Map<string, string>> {
  const leases = await client.list<Lease>(Leases, { namespace: 'kruise-system', labelSelector: `${LABELS.ring}=${RING}` });
  const prefix = shardLeaseName(RING, '');
  return new Map(leases.items.map((l) => [l.metadata.name!.slice(prefix.length), l.spec?.holderIdentity ?? '']));
}

/** Each CloneSet's shard label. */
async function assignments(): Promise<Map<string, string | undefined>> {
  const list = await client.list<KubeObject>(CloneSets, { namespace: NAMESPACE });
  return new Map(list.items.map((cs) => [cs.metadata.name!, cs.metadata.labels?.[LABELS.shard]]));
}

/** Samples every CloneSet's live (not terminating) pods, from one list of the namespace at a time. */
function samplePods(periodMs = 500): { stop(): Promise<{ samples: number; extra: string[]; missing: string[] }> } {
  const extra = new Set<string>();
  const missing = new Set<string>();
  let samples = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const pods = await client.list<KubeObject>(Pods, { namespace: NAMESPACE }).catch(() => undefined);
      if (pods) {
        samples++;
        const live = new Map<string, number>();
        for (const p of pods.items) {
          const app = p.metadata.labels?.app;
          if (app && !p.metadata.deletionTimestamp) live.set(app, (live.get(app) ?? 0) + 1);
        }
        for (let i = 0; i < CLONESETS; i++) {
          const n = live.get(csName(i)) ?? 0;
          if (n > REPLICAS) extra.add(`${csName(i)}: ${n} live pods`);
          if (n < REPLICAS - MAX_UNAVAILABLE) missing.add(`${csName(i)}: ${n} live pods`);
        }
      }
      await sleep(periodMs);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { samples, extra: [...extra], missing: [...missing] };
    },
  };
}

const csName = (i: number) => `cs-${String(i).padStart(2, '0')}`;

interface AuditEvent {
  verb: string;
  userAgent?: string;
  objectRef?: { resource?: string; namespace?: string; name?: string; subresource?: string };
  requestReceivedTimestamp: string;
  responseStatus?: { code?: number };
}

/**
 * From the audit log: for each CloneSet, the shards whose CloneSet controller wrote it, its pods or
 * its revisions, in the order of their writes with repeats collapsed (`a b` = a, then b). A shard
 * that appears twice wrote again after another shard had: the CloneSet was reconciled by two at once.
 */
function writersByCloneSet(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const events = fs
    .readFileSync(path.join(auditDir, 'audit.log'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AuditEvent)
    .sort((a, b) => a.requestReceivedTimestamp.localeCompare(b.requestReceivedTimestamp));
  for (const e of events) {
    const shard = /^kruise-manager\/cloneset-controller shard\/(\S+)/.exec(e.userAgent ?? '')?.[1];
    const cs = /^(cs-\d\d)(-|$)/.exec(e.objectRef?.name ?? '')?.[1];
    if (!shard || !cs || e.objectRef?.namespace !== NAMESPACE) continue;
    const seq = out.get(cs) ?? [];
    if (seq.at(-1) !== shard) seq.push(shard);
    out.set(cs, seq);
  }
  return out;
}

test(
  '3 shards, one SIGKILLed mid-rollout, a 4th joining mid-rollout: moves in time, no pod extra or missing, no CloneSet reconciled by two',
  { timeout: 300_000 },
  async (t) => {
    // The first replica leads (it runs the sharder) before the others start, so the one killed is a plain shard.
    for (const id of ['shard-a', 'shard-b', 'shard-c']) {
      managers.set(id, await startManagerProcess(state, id, SHARDING_FLAGS));
      if (id === 'shard-a') await waitLeader(client, managers.get(id)!);
    }
    await waitFor(
      'three shard Leases held',
      async () => {
        const holders = await shardHolders();
        return ['shard-a', 'shard-b', 'shard-c'].every((s) => holders.get(s) === s) && holders;
      },
      90_000,
      200,
    );

    const sets = Array.from({ length: CLONESETS }, (_, i) => new RollingCloneSet(client, NAMESPACE, csName(i), REPLICAS, MAX_UNAVAILABLE));
    await Promise.all(sets.map((cs) => cs.create()));
    await Promise.all(sets.map((cs) => cs.waitRolledOut(120_000)));
    const first = await assignments();
    const counts = (a: Map<string, string | undefined>) =>
      [...a.values()].reduce((m, s) => m.set(s ?? '(none)', (m.get(s ?? '(none)') ?? 0) + 1), new Map<string, number>());
    t.diagnostic(`assignments: ${JSON.stringify(Object.fromEntries(counts(first)))}`);
    for (const id of ['shard-a', 'shard-b', 'shard-c']) assert.ok((counts(first).get(id) ?? 0) > 0, `${id} was given no CloneSet`);

    sampler = samplePods();
    // Killed mid-rollout: pods take 3 s to start, a rollout three rounds of one pod.
    await Promise.all(sets.map((cs) => cs.roll('3s')));
    await sleep(2_000);
    const victim = managers.get('shard-c')!;
    const victimSets = [...first].filter(([, s]) => s === 'shard-c').map(([name]) => name);
    const midRollout = (await Promise.all(victimSets.map(async (n) => !(await sets.find((cs) => cs.name === n)!.rolledOut())))).filter(
      Boolean,
    ).length;
    process.kill(victim.proc.pid, 'SIGKILL');
    const killedAt = Date.now();
    t.diagnostic(`shard-c killed with ${midRollout} of its ${victimSets.length} CloneSets mid-rollout`);
    assert.ok(midRollout > 0, 'none of the killed shard’s CloneSets was mid-rollout');

    const takenOver = await waitFor(
      "shard-c's Lease taken over by the sharder",
      async () => {
        const holder = (await shardHolders()).get('shard-c');
        return holder !== undefined && holder !== 'shard-c' && Date.now();
      },
      MOVE_BOUND_MS + 10_000,
      100,
    );
    const moved = await waitFor(
      "shard-c's CloneSets on live shards",
      async () => {
        const now = await assignments();
        return victimSets.every((n) => ['shard-a', 'shard-b'].includes(now.get(n) ?? '')) && Date.now();
      },
      MOVE_BOUND_MS + 10_000,
      100,
    );
    t.diagnostic(`after the kill: Lease taken over in ${takenOver - killedAt} ms, CloneSets moved in ${moved - killedAt} ms`);
    assert.ok(moved - killedAt <= MOVE_BOUND_MS, `moved ${moved - killedAt} ms after the kill (bound ${MOVE_BOUND_MS} ms)`);
    await Promise.all(sets.map((cs) => cs.waitRolledOut(120_000)));

    // A fourth replica joins while every CloneSet rolls out again (slower pods: its start-up takes a while).
    const before4 = await assignments();
    await Promise.all(sets.map((cs) => cs.roll('8s')));
    managers.set('shard-d', await startManagerProcess(state, 'shard-d', SHARDING_FLAGS));
    await waitFor('shard-d holds its Lease', async () => (await shardHolders()).get('shard-d') === 'shard-d', 90_000, 100);
    const notDoneAtJoin = new Set(
      (await Promise.all(sets.map(async (cs) => ((await cs.rolledOut()) ? undefined : cs.name)))).filter((n) => n !== undefined),
    );
    const toD = await waitFor(
      'CloneSets drained to shard-d',
      async () => {
        const now = await assignments();
        const names = [...now].filter(([, s]) => s === 'shard-d').map(([n]) => n);
        return names.length > 0 && [...now.values()].every((s) => s) && names;
      },
      30_000,
      200,
    );
    await Promise.all(sets.map((cs) => cs.waitRolledOut(180_000)));
    const samples = await sampler.stop();
    const last = await assignments();
    const movedToD = [...last].filter(([, s]) => s === 'shard-d').map(([n]) => n);
    t.diagnostic(
      `shard-d joined with ${notDoneAtJoin.size} CloneSets mid-rollout and took ${movedToD.length} (first seen ${toD.length}); assignments ${JSON.stringify(Object.fromEntries(counts(last)))}; ${samples.samples} pod samples`,
    );
    assert.ok(
      movedToD.some((n) => notDoneAtJoin.has(n)),
      'no CloneSet drained to shard-d was mid-rollout when it joined',
    );
    for (const n of movedToD) assert.notEqual(before4.get(n), 'shard-d');

    assert.deepEqual(samples.extra, [], 'a CloneSet had more live pods than replicas');
    assert.deepEqual(samples.missing, [], `a CloneSet had fewer live pods than replicas − maxUnavailable`);
    for (const cs of sets) {
      const pods = await cs.pods();
      assert.deepEqual(pods, { live: REPLICAS, ready: REPLICAS, onImage: REPLICAS }, cs.name);
    }
    // Every pod carries its CloneSet's shard, a live one.
    const pods = await client.list<KubeObject>(Pods, { namespace: NAMESPACE });
    for (const p of pods.items) {
      const owner = last.get(p.metadata.labels?.app ?? '');
      assert.equal(p.metadata.labels?.[LABELS.shard], owner, `pod ${p.metadata.name}`);
    }
    assert.ok(
      [...last.values()].every((s) => ['shard-a', 'shard-b', 'shard-d'].includes(s ?? '')),
      JSON.stringify([...last]),
    );

    const writers = writersByCloneSet();
    assert.equal(writers.size, CLONESETS, 'every CloneSet was written by its shard (audit log)');
    const twice = [...writers].filter(([, seq]) => new Set(seq).size !== seq.length).map(([cs, seq]) => `${cs}: ${seq.join(' → ')}`);
    t.diagnostic(`writers: ${[...writers].map(([cs, seq]) => `${cs} ${seq.join('→')}`).join(', ')}`);
    assert.deepEqual(twice, [], 'a CloneSet written by a shard after another shard had written it');
    for (const n of victimSets) assert.ok(writers.get(n)?.includes('shard-c'), `${n} was written by shard-c before it died`);
    for (const m of managers.values())
      if (m !== victim) assert.equal(m.proc.exited, undefined, `${m.id} exited: ${tail(m.proc.logFile, 20)}`);
  },
);
