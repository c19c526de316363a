// The sharded manager (docs/sharding.md, issue 37) on a cluster of its own, through the four failure
// cases of issue 37 with 30 CloneSets rolling out each time: three replicas with --sharding, one
// SIGKILLed mid-rollout; then one frozen (SIGSTOP) past its lease mid-rollout — partitioned: alive but
// unable to renew — and resumed once its CloneSets have moved; then a fourth replica joining
// mid-rollout and the leader, which runs the sharder, SIGKILLed as the first drain towards it starts.
// Each time the dead or frozen shard's Lease is taken over and its CloneSets move to live shards in a
// bound; no CloneSet ever has more live pods than replicas or fewer than replicas − maxUnavailable;
// every rollout finishes; and no CloneSet is reconciled by a shard that does not own it. The last is
// read from the API server's audit log: a shard's clients name it in their user agent, the sharder's
// and the shards' label patches say who owns each CloneSet from when, and every write of a shard's
// CloneSet controller (to the CloneSet, its pods and revisions) must fall while that shard owns it.
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
import { ShardRing, shardLabels, shardLeaseName, workloadKey } from '../../src/util/shard-ring.ts';
import { TEST_CLUSTER, waitFor } from '../harness/cluster.ts';
import { RollingCloneSet } from '../harness/chaos.ts';
import { leaseHolder, startManagerProcess, waitLeader, type ManagerProcess } from '../harness/managers.ts';

const NAME = `${TEST_CLUSTER}-shard`;
const RING = 'kruise-manager';
const LABELS = shardLabels(RING);
const NAMESPACE = 'sharded';
const CLONESETS = 30;
const REPLICAS = 3;
const MAX_UNAVAILABLE = 1;
const LEASE_DURATION_MS = 4_000;
const RENEW_DEADLINE_MS = 3_000;
/** Lease duration + one renew period of the dead shard before it died + the sharder's relabelling. */
const MOVE_BOUND_MS = LEASE_DURATION_MS + 6_000;
/**
 * A resumed shard campaigns again: its renewals fail for the renew deadline, then it waits out the
 * sharder's hold on its Lease (a lease duration from when it saw it), plus retries and a margin.
 */
const REJOIN_BOUND_MS = RENEW_DEADLINE_MS + LEASE_DURATION_MS + 6_000;
/**
 * A new leader (lease duration + retries), its cold caches, then the dead leader's shard Lease expiring
 * on its clock and the moves, paced by the sharder's client rate limit (14.1–16.1 s measured).
 */
const SHARDER_FAILOVER_BOUND_MS = 2 * LEASE_DURATION_MS + 12_000;
const SHARDING_FLAGS = [
  '--sharding=true',
  `--leader-election-lease-duration=${LEASE_DURATION_MS / 1000}s`,
  `--leader-election-renew-deadline=${RENEW_DEADLINE_MS / 1000}s`,
  '--leader-election-retry-period=1s',
];

// CloneSet patches with their bodies: the label patches of the sharder (assign, drain) and of a
// shard letting go say who owns each CloneSet from when.
const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Request
    verbs: [patch, update]
    namespaces: [${NAMESPACE}]
    resources:
      - group: apps.kruise.io
        resources: [clonesets]
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
  - level: Metadata
    verbs: [get]
    namespaces: [${NAMESPACE}]
    resources:
      - group: ''
        resources: [pods]
  - level: None
`;

/** The test's own client, in the audit log. */
const TEST_AGENT = 'kruise-sharding-test';

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
  client = fromKubeconfigFile(state.kubeconfig, { qps: 200, burst: 400, userAgent: TEST_AGENT });
  await installCRDs(client);
  await client.create(Namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
});

after(async () => {
  await sampler?.stop();
  // A replica left frozen by a failed assertion must wake to stop.
  for (const m of managers.values()) {
    try {
      if (!m.proc.exited) process.kill(m.proc.pid, 'SIGCONT');
    } catch {
      // exited meanwhile
    }
  }
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

/**
 * When (ms since the epoch) the sharder took `shard`'s Lease over, and when all of `names` (its
 * CloneSets) carried one of the `to` shards.
 */
async function shardMoved(shard: string, names: readonly string[], to: readonly string[]): Promise<{ takenOver: number; moved: number }> {
  const takenOver = await waitFor(
    `${shard}'s Lease taken over by the sharder`,
    async () => {
      const holder = (await shardHolders()).get(shard);
      return holder !== undefined && holder !== shard && Date.now();
    },
    MOVE_BOUND_MS + 10_000,
    100,
  );
  const moved = await waitFor(
    `${shard}'s CloneSets on ${to.join(' or ')}`,
    async () => {
      const now = await assignments();
      return names.every((n) => to.includes(now.get(n) ?? '')) && Date.now();
    },
    MOVE_BOUND_MS + 10_000,
    100,
  );
  return { takenOver, moved };
}

/** Each CloneSet's shard label. */
async function assignments(): Promise<Map<string, string | undefined>> {
  return new Map([...(await labelsByCloneSet())].map(([name, l]) => [name, l.shard]));
}

/** Each CloneSet's shard label and whether it carries the drain label. */
async function labelsByCloneSet(): Promise<Map<string, { shard?: string; draining: boolean }>> {
  const list = await client.list<KubeObject>(CloneSets, { namespace: NAMESPACE });
  return new Map(
    list.items.map((cs) => [
      cs.metadata.name!,
      { shard: cs.metadata.labels?.[LABELS.shard], draining: !!cs.metadata.labels?.[LABELS.drain] },
    ]),
  );
}

/** How many CloneSets carry each shard label. */
const counts = (a: Map<string, string | undefined>) =>
  [...a.values()].reduce((m, s) => m.set(s ?? '(none)', (m.get(s ?? '(none)') ?? 0) + 1), new Map<string, number>());

/** The CloneSets of `names` whose rollout has not finished. */
async function notRolledOut(sets: readonly RollingCloneSet[], names: Iterable<string>): Promise<string[]> {
  const wanted = new Set(names);
  const pending = await Promise.all(
    sets.filter((cs) => wanted.has(cs.name)).map(async (cs) => ((await cs.rolledOut()) ? undefined : cs.name)),
  );
  return pending.filter((n) => n !== undefined);
}

/** Resolves with the first CloneSet seen carrying the drain label (a watch: the move is caught as it starts). */
function firstDrain(signal: AbortSignal): Promise<string> {
  return (async () => {
    for await (const ev of client.watch<KubeObject>(CloneSets, { namespace: NAMESPACE, labelSelector: LABELS.drain, signal })) {
      if (ev.type === 'ADDED' || ev.type === 'MODIFIED') return ev.object.metadata.name!;
    }
    throw new Error('the drain watch ended before a drain');
  })();
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
  /** At level Request (CloneSet patches and updates): the patch or the object sent. */
  requestObject?: { metadata?: { labels?: Record<string, string | null> } };
}

interface ControllerWrite {
  cloneSet: string;
  shard: string;
  /** When the API server received it (ms). */
  at: number;
  what: string;
}

/** The audit log's events in the test's namespace, in the order the API server received them. */
function auditEvents(): AuditEvent[] {
  return fs
    .readFileSync(path.join(auditDir, 'audit.log'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AuditEvent)
    .filter((e) => e.objectRef?.namespace === NAMESPACE)
    .sort((a, b) => a.requestReceivedTimestamp.localeCompare(b.requestReceivedTimestamp));
}

/**
 * From the audit log, in the order the API server received them: who owns each CloneSet (its shard
 * label, as the sharder's and the shards' successful patches set it) and the writes of every shard's
 * CloneSet controller to a CloneSet, its pods and revisions. `outOfTurn`: writes by a shard to a
 * CloneSet it did not own at that moment — the CloneSet reconciled by two replicas (a shard's writes
 * stop before it lets go of a workload or loses its Lease, and the new owner's start after it was
 * labelled). `writers`: each CloneSet's writing shards in order, repeats collapsed (`a b`: a, then b).
 */
function auditedWrites(): { writes: ControllerWrite[]; outOfTurn: string[]; writers: Map<string, string[]> } {
  const events = auditEvents().filter((e) => e.verb !== 'get');
  const owner = new Map<string, string | undefined>();
  const writes: ControllerWrite[] = [];
  const outOfTurn: string[] = [];
  const writers = new Map<string, string[]>();
  for (const e of events) {
    const ref = e.objectRef!;
    const cloneSet = /^(cs-\d\d)(-|$)/.exec(ref.name ?? '')?.[1];
    if (!cloneSet) continue;
    const labels = e.requestObject?.metadata?.labels;
    const ok = (e.responseStatus?.code ?? 0) >= 200 && (e.responseStatus?.code ?? 0) < 300;
    if (ref.resource === 'clonesets' && !ref.subresource && ok && labels && LABELS.shard in labels) {
      owner.set(cloneSet, labels[LABELS.shard] ?? undefined);
    }
    const shard = /^kruise-manager\/cloneset-controller shard\/(\S+)/.exec(e.userAgent ?? '')?.[1];
    if (!shard) continue;
    const what = `${e.verb} ${ref.resource}${ref.subresource ? `/${ref.subresource}` : ''} ${ref.name} at ${e.requestReceivedTimestamp}`;
    writes.push({ cloneSet, shard, at: Date.parse(e.requestReceivedTimestamp), what });
    if (owner.get(cloneSet) !== shard) outOfTurn.push(`${shard}: ${what}, ${cloneSet} owned by ${owner.get(cloneSet) ?? 'nobody'}`);
    const seq = writers.get(cloneSet) ?? [];
    if (seq.at(-1) !== shard) seq.push(shard);
    writers.set(cloneSet, seq);
  }
  return { writes, outOfTurn, writers };
}

test(
  'shards: one SIGKILLed, one partitioned (SIGSTOP past its lease), one joining while the sharder is SIGKILLed, all mid-rollout: moves in time, no pod extra or missing, no CloneSet written by a shard not owning it',
  { timeout: 420_000 },
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
    t.diagnostic(`assignments: ${JSON.stringify(Object.fromEntries(counts(first)))}`);
    for (const id of ['shard-a', 'shard-b', 'shard-c']) assert.ok((counts(first).get(id) ?? 0) > 0, `${id} was given no CloneSet`);

    sampler = samplePods();
    // 1. A replica killed mid-rollout: pods take 3 s to start, a rollout three rounds of one pod.
    await Promise.all(sets.map((cs) => cs.roll('3s')));
    await sleep(2_000);
    const victim = managers.get('shard-c')!;
    const victimSets = [...first].filter(([, s]) => s === 'shard-c').map(([name]) => name);
    const midRollout = (await notRolledOut(sets, victimSets)).length;
    process.kill(victim.proc.pid, 'SIGKILL');
    const killedAt = Date.now();
    t.diagnostic(`shard-c killed with ${midRollout} of its ${victimSets.length} CloneSets mid-rollout`);
    assert.ok(midRollout > 0, 'none of the killed shard’s CloneSets was mid-rollout');

    const { takenOver, moved } = await shardMoved('shard-c', victimSets, ['shard-a', 'shard-b']);
    t.diagnostic(`after the kill: Lease taken over in ${takenOver - killedAt} ms, CloneSets moved in ${moved - killedAt} ms`);
    assert.ok(moved - killedAt <= MOVE_BOUND_MS, `moved ${moved - killedAt} ms after the kill (bound ${MOVE_BOUND_MS} ms)`);
    await Promise.all(sets.map((cs) => cs.waitRolledOut(120_000)));

    // 2. A partitioned replica: shard-b frozen 2 s into a rollout, alive but unable to renew, until its
    // Lease is taken over and its CloneSets have moved (longer than its lease); then resumed, its timers
    // firing late, its caches and queues as they were — what a replica cut off and reconnected wakes to.
    const beforePartition = await assignments();
    const frozen = managers.get('shard-b')!;
    const frozenSets = [...beforePartition].filter(([, s]) => s === 'shard-b').map(([name]) => name);
    await Promise.all(sets.map((cs) => cs.roll('3s')));
    await sleep(2_000);
    const midPartition = (await notRolledOut(sets, frozenSets)).length;
    process.kill(frozen.proc.pid, 'SIGSTOP');
    const stoppedAt = Date.now();
    assert.ok(midPartition > 0, 'none of the frozen shard’s CloneSets was mid-rollout');
    const { takenOver: frozenTakenOver, moved: frozenMoved } = await shardMoved('shard-b', frozenSets, ['shard-a']);
    process.kill(frozen.proc.pid, 'SIGCONT');
    const resumedAt = Date.now();
    assert.ok(resumedAt - stoppedAt > LEASE_DURATION_MS, `frozen for ${resumedAt - stoppedAt} ms, not past its lease`);
    const rejoined = await waitFor(
      'shard-b holds its Lease again',
      async () => (await shardHolders()).get('shard-b') === 'shard-b' && Date.now(),
      REJOIN_BOUND_MS + 10_000,
      100,
    );
    const givenBack = await waitFor(
      'CloneSets drained back to shard-b',
      async () => {
        const names = [...(await assignments())].filter(([, s]) => s === 'shard-b').map(([n]) => n);
        return names.length > 0 && { at: Date.now(), names };
      },
      30_000,
      100,
    );
    t.diagnostic(
      `shard-b frozen with ${midPartition} of its ${frozenSets.length} CloneSets mid-rollout: Lease taken over in ${frozenTakenOver - stoppedAt} ms, ` +
        `CloneSets moved in ${frozenMoved - stoppedAt} ms; resumed after ${resumedAt - stoppedAt} ms, its Lease held again ${rejoined - resumedAt} ms later, ` +
        `first CloneSets given back by drains ${givenBack.at - resumedAt} ms after resuming (${givenBack.names.length})`,
    );
    assert.ok(frozenMoved - stoppedAt <= MOVE_BOUND_MS, `moved ${frozenMoved - stoppedAt} ms after the freeze (bound ${MOVE_BOUND_MS} ms)`);
    assert.ok(rejoined - resumedAt <= REJOIN_BOUND_MS, `re-joined ${rejoined - resumedAt} ms after resuming (bound ${REJOIN_BOUND_MS} ms)`);
    // The ring is the one before the freeze again: every CloneSet shard-b held comes back to it.
    const allBack = await waitFor(
      'every CloneSet back on its shard of before the freeze, none draining',
      async () => {
        const now = await labelsByCloneSet();
        return [...now].every(([n, l]) => l.shard === beforePartition.get(n) && !l.draining) && Date.now();
      },
      30_000,
      100,
    );
    t.diagnostic(`all ${frozenSets.length} of shard-b's CloneSets back on it ${allBack - resumedAt} ms after resuming`);
    await Promise.all(sets.map((cs) => cs.waitRolledOut(120_000)));

    // 3. A fourth replica joins while every CloneSet rolls out again (slower pods: its start-up takes a
    // while), and the leader — shard-a, running the sharder — is SIGKILLed as the first drain towards
    // it starts: the next leader's sharder must finish the moves the dead one began.
    const before4 = await assignments();
    assert.equal(await leaseHolder(client), 'shard-a', 'shard-a leads');
    await Promise.all(sets.map((cs) => cs.roll('8s')));
    // Stopped at the first drain, or after 90 s (shard-d's start-up on a loaded machine included).
    const watchDrains = new AbortController();
    const noDrain = setTimeout(() => watchDrains.abort(new Error('no drain within 90 s of shard-d starting')), 90_000);
    const drainStarted = firstDrain(watchDrains.signal);
    drainStarted.catch(() => undefined);
    managers.set('shard-d', await startManagerProcess(state, 'shard-d', SHARDING_FLAGS));
    const firstDrained = await drainStarted;
    const leader = managers.get('shard-a')!;
    process.kill(leader.proc.pid, 'SIGKILL');
    const sharderKilledAt = Date.now();
    clearTimeout(noDrain);
    watchDrains.abort();
    const ring = new ShardRing(['shard-a', 'shard-b', 'shard-d']);
    const atKill = await labelsByCloneSet();
    const draining = [...atKill].filter(([, l]) => l.draining).length;
    const pending = [...atKill].filter(
      ([n, l]) => l.shard !== ring.shardFor(workloadKey('apps.kruise.io', 'CloneSet', NAMESPACE, n)),
    ).length;
    assert.ok(pending > 0, 'no move left pending when the sharder was killed');
    assert.equal((await shardHolders()).get('shard-d'), 'shard-d', 'shard-d holds its Lease');
    const notDoneAtJoin = new Set(await notRolledOut(sets, before4.keys()));
    const newLeader = await waitFor(
      'a new leader',
      async () => {
        const holder = await leaseHolder(client);
        return holder !== undefined && holder !== 'shard-a' && { holder, at: Date.now() };
      },
      SHARDER_FAILOVER_BOUND_MS + 10_000,
      100,
    );
    const settled = await waitFor(
      'every CloneSet on a live shard, none draining',
      async () =>
        [...(await labelsByCloneSet()).values()].every((l) => ['shard-b', 'shard-d'].includes(l.shard ?? '') && !l.draining) && Date.now(),
      SHARDER_FAILOVER_BOUND_MS + 20_000,
      100,
    );
    t.diagnostic(
      `first drain to shard-d seen (${firstDrained}), leader shard-a killed with ${draining} CloneSets draining and ${pending} not yet where the ring puts them; ` +
        `${newLeader.holder} led ${newLeader.at - sharderKilledAt} ms later, every CloneSet on shard-b or shard-d ${settled - sharderKilledAt} ms after the kill`,
    );
    // Lease duration after the candidates last saw it renewed, and two of their jittered polls (≤ 2.2 s each).
    assert.ok(
      newLeader.at - sharderKilledAt <= LEASE_DURATION_MS + 5_000,
      `a new leader ${newLeader.at - sharderKilledAt} ms after the kill`,
    );
    assert.ok(
      settled - sharderKilledAt <= SHARDER_FAILOVER_BOUND_MS,
      `moves finished ${settled - sharderKilledAt} ms after the kill (bound ${SHARDER_FAILOVER_BOUND_MS} ms)`,
    );
    await Promise.all(sets.map((cs) => cs.waitRolledOut(180_000)));
    const samples = await sampler.stop();
    const last = await assignments();
    const movedToD = [...last].filter(([, s]) => s === 'shard-d').map(([n]) => n);
    t.diagnostic(
      `shard-d took ${movedToD.length}; assignments ${JSON.stringify(Object.fromEntries(counts(last)))}; ${samples.samples} pod samples`,
    );
    assert.ok(
      movedToD.some((n) => notDoneAtJoin.has(n)),
      'no CloneSet moved to shard-d was mid-rollout when it joined',
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
      [...last.values()].every((s) => ['shard-b', 'shard-d'].includes(s ?? '')),
      JSON.stringify([...last]),
    );

    const { writes, outOfTurn, writers } = auditedWrites();
    assert.equal(writers.size, CLONESETS, 'every CloneSet was written by its shard (audit log)');
    t.diagnostic(`writers: ${[...writers].map(([cs, seq]) => `${cs} ${seq.join('→')}`).join(', ')}`);
    assert.deepEqual(outOfTurn, [], 'a CloneSet, its pods or revisions written by a shard that did not own it');
    for (const n of victimSets) assert.ok(writers.get(n)?.includes('shard-c'), `${n} was written by shard-c before it died`);
    // The resumed shard: no write between waking and its Lease held again (it owned nothing then), its
    // stale writes refused by its own fence.
    const whileStale = writes.filter((w) => w.shard === 'shard-b' && w.at >= resumedAt && w.at < rejoined).map((w) => w.what);
    // Its reconciles on waking (its caches and queues as before the freeze) whose writes its fence refused.
    const refused = fs
      .readFileSync(frozen.proc.logFile, 'utf8')
      .split('\n')
      .filter((l) => l.includes('no longer holds its shard lease'))
      .map((l) => (JSON.parse(l) as { object?: string }).object)
      .filter((o) => o !== undefined);
    t.diagnostic(
      `shard-b after resuming: ${whileStale.length} writes before it held its Lease again; ${refused.length} reconciles (${new Set(refused).size} CloneSets) refused by its fence`,
    );
    assert.deepEqual(whileStale, [], 'shard-b wrote after resuming, before it held its Lease again');
    // The pod webhook reads pods from the API server when sharding (one GET per eviction); the
    // rollouts' hundreds of pod deletions carry their pod and read none, nor does anything else of ours.
    // One GET of the test's own, so an empty count below means none, not a policy logging none.
    const probe = pods.items[0]!.metadata;
    await client.get(Pods, probe.name!, { namespace: NAMESPACE });
    const podGets = new Map<string, number>();
    for (const e of auditEvents()) {
      if (e.verb !== 'get' || e.objectRef?.resource !== 'pods' || e.objectRef.subresource) continue;
      podGets.set(e.userAgent ?? '', (podGets.get(e.userAgent ?? '') ?? 0) + 1);
    }
    t.diagnostic(`pod GETs by user agent: ${JSON.stringify(Object.fromEntries(podGets))}`);
    assert.ok((podGets.get(TEST_AGENT) ?? 0) >= 1, `the test's own GET was not logged: ${JSON.stringify([...podGets])}`);
    assert.deepEqual(
      [...podGets.keys()].filter((agent) => agent.startsWith('kruise-manager')),
      [],
      'a pod read from the API server by the manager',
    );
    // Each leader's shard moved onto the leader's caches once it led, its own selected watches stopped
    // (pods, PVCs, revisions, CloneSets and the draining CloneSets): every pod held once.
    for (const id of ['shard-a', newLeader.holder]) {
      const moved = fs
        .readFileSync(managers.get(id)!.proc.logFile, 'utf8')
        .split('\n')
        .filter((l) => l.includes("the shard's controllers read the leader's caches"))
        .map((l) => (JSON.parse(l) as { stopped?: number }).stopped);
      assert.deepEqual(moved, [5], `${id}: its shard moved onto the leader's caches once, its 5 selected informers stopped`);
    }
    for (const id of ['shard-b', 'shard-d']) {
      const m = managers.get(id)!;
      assert.equal(m.proc.exited, undefined, `${id} exited: ${tail(m.proc.logFile, 20)}`);
    }
  },
);
