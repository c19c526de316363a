// Sharded manager benchmark (issue 37, docs/sharding.md; figures printed, never asserted), on a
// dedicated local cluster with Kruise TS managers as child processes (the production entry point,
// leader election on, --rest-config-qps/--rest-config-burst as given):
//   throughput: N CloneSets × R pods (default 20 × 200) on KWOK nodes, scale-up 0 → R and a
//     ReCreate rollout (maxUnavailable 10%), all CloneSets at once, with one replica (sharding off,
//     the default manager) and then with 2 shards: wall time, reconcile throughput in pods per
//     second (pods created, or replaced with the new template, per wall second), CPU seconds and
//     RSS of each replica, and how the CloneSets were split between the shards.
//   rss: per-replica RSS at P pods (default 50 000, in 50 CloneSets) with 1, 2 and 3 shards. The
//     pods are made by the CloneSets themselves (so they carry their shard label like any sharded
//     pod) but are never scheduled (a schedulerName nobody serves): no KWOK or scheduler work, only
//     objects to cache. For each shard count the shards are first left to settle the assignment
//     (the sharder relabelling ≈ 1/k of the pods), then all are SIGKILLed and started afresh at
//     once (their Leases still theirs, so nothing moves) and measured once every replica's CPU is
//     idle: a fresh process holds only what its caches hold now. The leader caches every pod by
//     design (the sharder and the leader-only controllers read all of them): its RSS is reported
//     apart from the other shards'.
// Usage: ./run.sh bench sharding [--part throughput,rss] [--modes off,2] [--sets 20] [--replicas 200] [--nodes 40]
//        [--qps 300] [--burst 500] [--rss-pods 50000] [--rss-sets 50] [--shards 1,2,3] [--cluster shardbench]
import os from 'node:os';
import { benchArgs } from './args.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { up, down } from '../src/cluster/local-cluster.ts';
import { isAlive, stopProcesses, tail, type Started } from '../src/cluster/processes.ts';
import { installCRDs } from '../src/manager/crds.ts';
import { fromKubeconfigFile, PatchType } from '../src/runtime/client.ts';
import type { CloneSetSpec, CloneSetStatus } from '../src/apis/apps/cloneset.ts';
import type { KubeObject, Lease } from '../src/apis/core-objects.ts';
import { CloneSets, Leases, Namespaces } from '../src/runtime/resources.ts';
import { ShardRing, shardLabels, shardLeaseName, workloadKey } from '../src/util/shard-ring.ts';
import { leaseHolder } from '../test/harness/managers.ts';
import { cpuSeconds, rssMiB } from './measure.ts';
import { startBenchManager, waitForDefaulting } from './workload.ts';

const { values } = benchArgs(import.meta.url, {
  options: {
    part: { type: 'string', default: 'throughput,rss' },
    modes: { type: 'string', default: 'off,2' },
    sets: { type: 'string', default: '20' },
    replicas: { type: 'string', default: '200' },
    nodes: { type: 'string', default: '40' },
    qps: { type: 'string', default: '300' },
    burst: { type: 'string', default: '500' },
    'rss-pods': { type: 'string', default: '50000' },
    'rss-sets': { type: 'string', default: '50' },
    shards: { type: 'string', default: '1,2,3' },
    cluster: { type: 'string', default: 'shardbench' },
  },
});
const parts = new Set(values.part.split(','));
const RING = 'kruise-manager';
const LABELS = shardLabels(RING);

const { state } = await up({ name: values.cluster, nodes: parts.has('throughput') ? Number(values.nodes) : 1, log: () => undefined });
const client = fromKubeconfigFile(state.kubeconfig, { qps: 1000, burst: 1000 });
const running = new Map<string, Started>();
const out: string[] = [];
const say = (line: string) => {
  out.push(line);
  process.stderr.write(`${line}\n`);
};

/** The CloneSet fields the benchmark reads. */
type CS = KubeObject & {
  spec: Pick<CloneSetSpec, 'replicas'>;
  status?: Partial<
    Pick<
      CloneSetStatus,
      'observedGeneration' | 'replicas' | 'readyReplicas' | 'updatedReadyReplicas' | 'currentRevision' | 'updateRevision'
    >
  >;
};

const csName = (i: number) => `cs-${String(i).padStart(3, '0')}`;

function manifest(ns: string, name: string, replicas: number, image: string, schedulerName?: string): KubeObject {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'CloneSet',
    metadata: { name, namespace: ns },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { ...(schedulerName ? { schedulerName } : {}), containers: [{ name: 'main', image }] },
      },
      updateStrategy: { type: 'ReCreate', maxUnavailable: '10%' },
    },
  } as KubeObject;
}

/** Starts a replica: sharding on (`shards` > 0) or off, leader election on, the QPS of the run. */
function startReplica(id: string, sharding: boolean, extra: string[] = []): Started {
  const proc = startBenchManager(state, 0, [], {
    name: id,
    args: [
      '--identity',
      id,
      '--rest-config-qps',
      values.qps,
      '--rest-config-burst',
      values.burst,
      ...(sharding ? ['--sharding=true'] : []),
      ...extra,
    ],
  });
  running.set(id, proc);
  return proc;
}

async function until<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs: number, periodMs = 500): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    for (const p of running.values()) if (p.exited) throw new Error(`${p.name} exited while waiting for ${what}: ${tail(p.logFile, 20)}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(periodMs);
  }
}

async function shardHolders(): Promise<Map<string, string>> {
  const leases = await client.list<Lease>(Leases, { namespace: 'kruise-system', labelSelector: `${LABELS.ring}=${RING}` });
  const prefix = shardLeaseName(RING, '');
  return new Map(leases.items.map((l) => [l.metadata.name!.slice(prefix.length), l.spec?.holderIdentity ?? '']));
}

/** Until one of `ids` leads and, sharding, each holds its shard Lease; the leader's id. */
async function replicasUp(ids: string[], sharding: boolean): Promise<string> {
  const leader = await until(
    `a leader among ${ids.join(', ')}`,
    async () => {
      const holder = await leaseHolder(client);
      return holder && ids.includes(holder) && holder;
    },
    300_000,
  );
  if (sharding) {
    await until(
      'the shard Leases held',
      async () => {
        const holders = await shardHolders();
        return ids.every((id) => holders.get(id) === id);
      },
      300_000,
    );
  }
  return leader;
}

/** Until every CloneSet carries the shard the ring of `ids` gives it, none draining (children are relabelled before it). */
async function assigned(ns: string, ids: string[], timeoutMs: number): Promise<Map<string, number>> {
  const ring = new ShardRing(ids);
  return until(
    `the CloneSets of ${ns} assigned to ${ids.join(', ')}`,
    async () => {
      const list = await client.list<CS>(CloneSets, { namespace: ns });
      const split = new Map<string, number>();
      for (const cs of list.items) {
        const want = ring.shardFor(workloadKey('apps.kruise.io', 'CloneSet', ns, cs.metadata.name!));
        if (cs.metadata.labels?.[LABELS.shard] !== want || cs.metadata.labels?.[LABELS.drain]) return false;
        split.set(want!, (split.get(want!) ?? 0) + (cs.spec.replicas ?? 0));
      }
      return list.items.length > 0 && split;
    },
    timeoutMs,
    1_000,
  );
}

/** Until every replica's CPU has been idle (< 0.25 s in 5 s) and at least `minMs` have passed. */
async function idle(procs: Started[], minMs: number): Promise<void> {
  const began = Date.now();
  let last = procs.map((p) => cpuSeconds(p.pid));
  for (const deadline = Date.now() + 600_000; Date.now() < deadline;) {
    await sleep(5_000);
    const now = procs.map((p) => cpuSeconds(p.pid));
    if (Date.now() - began >= minMs && now.every((c, i) => c - last[i]! < 0.25)) return;
    last = now;
  }
  throw new Error('the replicas never went idle');
}

async function stopAll(signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
  const procs = [...running.values()];
  running.clear();
  if (signal === 'SIGTERM')
    return stopProcesses(
      procs.map((p) => p.pid),
      10_000,
    );
  for (const p of procs) process.kill(p.pid, 'SIGKILL');
  await until('the replicas gone', async () => procs.every((p) => !isAlive(p.pid)), 30_000, 100);
}

async function deleteNamespace(ns: string): Promise<void> {
  await client.delete(Namespaces, ns).catch(() => undefined);
  await until(
    `namespace ${ns} gone`,
    async () =>
      !(await client.get(Namespaces, ns).then(
        () => true,
        () => false,
      )),
    600_000,
    2_000,
  );
}

async function throughput(shards: number): Promise<void> {
  const sets = Number(values.sets);
  const replicas = Number(values.replicas);
  const ns = `tp-${shards}`;
  const label = shards ? `${shards} shards` : '1 replica (sharding off)';
  await client.create(Namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }).catch(() => undefined);
  const ids = shards ? Array.from({ length: shards }, (_, i) => `shard-${i + 1}`) : ['replica-1'];
  const procs = ids.map((id) => startReplica(id, shards > 0));
  const leader = await replicasUp(ids, shards > 0);
  await waitForDefaulting(
    state,
    JSON.stringify(manifest(ns, 'probe', 0, 'nginx:1.0')),
    (obj) => obj.spec.template.spec.containers[0]!.imagePullPolicy === 'Always',
    () => procs.find((p) => p.exited),
  );
  await Promise.all(
    Array.from({ length: sets }, (_, i) => client.create(CloneSets, manifest(ns, csName(i), 0, 'nginx:1.0'), { namespace: ns })),
  );
  if (shards) await assigned(ns, ids, 120_000);
  const perShard = shards
    ? await (async () => {
        const list = await client.list<CS>(CloneSets, { namespace: ns });
        const n = new Map<string, number>();
        for (const cs of list.items)
          n.set(cs.metadata.labels?.[LABELS.shard] ?? '', (n.get(cs.metadata.labels?.[LABELS.shard] ?? '') ?? 0) + 1);
        return ids.map((id) => `${id} ${n.get(id) ?? 0}`).join(', ');
      })()
    : '';
  const patchAll = (spec: object) =>
    Promise.all(
      Array.from({ length: sets }, (_, i) => client.patch(CloneSets, csName(i), { spec }, { namespace: ns, patchType: PatchType.Merge })),
    );
  const settled = (image: string) =>
    until(
      `${ns} settled on ${image}`,
      async () => {
        const list = await client.list<CS & { spec: { template: { spec: { containers: Array<{ image: string }> } } } }>(CloneSets, {
          namespace: ns,
        });
        return list.items.every((cs) => {
          const s = cs.status ?? {};
          return (
            cs.spec.template.spec.containers[0]!.image === image &&
            s.observedGeneration === cs.metadata.generation &&
            s.replicas === replicas &&
            s.readyReplicas === replicas &&
            s.updatedReadyReplicas === replicas &&
            s.currentRevision === s.updateRevision
          );
        });
      },
      1_800_000,
      250,
    );
  for (const [phase, change, image] of [
    [`scale-up 0 → ${replicas}`, () => patchAll({ replicas }), 'nginx:1.0'],
    ['ReCreate rollout', () => patchAll({ template: { spec: { containers: [{ name: 'main', image: 'nginx:2.0' }] } } }), 'nginx:2.0'],
  ] as const) {
    const cpu0 = procs.map((p) => cpuSeconds(p.pid));
    const t0 = performance.now();
    await change();
    await settled(image);
    const seconds = (performance.now() - t0) / 1000;
    const cpu = procs
      .map((p, i) => `${p.name}${p.name === leader ? ' (leader)' : ''} ${(cpuSeconds(p.pid) - cpu0[i]!).toFixed(1)}`)
      .join(', ');
    say(
      `| ${label} | ${phase} | ${seconds.toFixed(1)} | ${((sets * replicas) / seconds).toFixed(0)} | ${cpu} | ${procs.map((p) => rssMiB(p.pid).toFixed(0)).join(', ')} | ${perShard || '—'} |`,
    );
  }
  // Before the replicas stop: every pod deletion passes their pod webhook.
  await deleteNamespace(ns);
  await stopAll('SIGTERM');
}

async function rss(): Promise<void> {
  const sets = Number(values['rss-sets']);
  const pods = Number(values['rss-pods']);
  const per = Math.round(pods / sets);
  const ns = 'rss';
  const counts = values.shards.split(',').map(Number);
  // Long leases: a replica restarted with 25k pods to list renews late, and must not be taken for dead.
  const lease = ['--leader-election-lease-duration=60s', '--leader-election-renew-deadline=40s', '--leader-election-retry-period=2s'];
  const idsOf = (k: number) => Array.from({ length: k }, (_, i) => `shard-${i + 1}`);
  await client.create(Namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }).catch(() => undefined);
  let current: string[] = [];
  for (const k of counts) {
    const ids = idsOf(k);
    // Join the missing shards to the running ones and let the sharder settle the assignment.
    for (const id of ids.filter((id) => !current.includes(id))) startReplica(id, true, lease);
    await replicasUp(ids, true);
    if (!current.length) {
      const proc = [...running.values()][0]!;
      await waitForDefaulting(
        state,
        JSON.stringify(manifest(ns, 'probe', 0, 'nginx:1.0')),
        (obj) => obj.spec.template.spec.containers[0]!.imagePullPolicy === 'Always',
        () => (proc.exited ? proc : undefined),
      );
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: sets }, (_, i) =>
          client
            .create(CloneSets, manifest(ns, csName(i), per, 'nginx:1.0', 'bench-unscheduled'), { namespace: ns })
            .catch(() => undefined),
        ),
      );
      await until(
        `${sets * per} pods`,
        async () => {
          const list = await client.list<CS>(CloneSets, { namespace: ns });
          return list.items.length === sets && list.items.every((cs) => cs.status?.replicas === per);
        },
        1_800_000,
        2_000,
      );
      say(`(${sets * per} pods created by ${k} shard(s) in ${((performance.now() - t0) / 1000).toFixed(0)} s)`);
    }
    const t1 = performance.now();
    const split = await assigned(ns, ids, 1_800_000);
    if (current.length) say(`(${k} shards: assignment settled in ${((performance.now() - t1) / 1000).toFixed(0)} s)`);
    current = ids;
    // Fresh processes, their Leases still theirs: nothing moves, each caches only what it holds now.
    await stopAll('SIGKILL');
    const procs = ids.map((id) => startReplica(id, true, lease));
    const leader = await replicasUp(ids, true);
    await idle(procs, 30_000);
    await assigned(ns, ids, 10_000);
    const leaderRss = rssMiB(running.get(leader)!.pid);
    const others = procs.filter((p) => p.name !== leader).map((p) => `${p.name} ${rssMiB(p.pid).toFixed(0)}`);
    say(
      `| ${k} | ${ids.map((id) => `${id} ${split.get(id) ?? 0}`).join(', ')} | ${leader} ${leaderRss.toFixed(0)} | ${others.join(', ') || '—'} |`,
    );
  }
  await stopAll('SIGTERM');
}

try {
  await installCRDs(client);
  say(`\nSharded manager benchmark (${process.version}, ${os.cpus().length} CPUs, QPS ${values.qps} / burst ${values.burst})`);
  if (parts.has('throughput')) {
    say(`\nThroughput: ${values.sets} CloneSets × ${values.replicas} pods on ${values.nodes} KWOK nodes, all at once`);
    say('\n| configuration | phase | wall s | pods/s | CPU s per replica | RSS MiB per replica | CloneSets per shard |');
    say('|---|---|---|---|---|---|---|');
    for (const mode of values.modes.split(',')) await throughput(mode === 'off' ? 0 : Number(mode));
    say(
      `load average after: ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
  }
  if (parts.has('rss')) {
    say(`\nRSS: ${values['rss-pods']} pods in ${values['rss-sets']} CloneSets, never scheduled`);
    say('\n| shards | pods per shard | leader RSS MiB | other shards RSS MiB |');
    say('|---|---|---|---|');
    await rss();
    say(
      `load average after: ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
  }
  console.log(out.join('\n'));
} finally {
  await stopAll('SIGTERM').catch(() => undefined);
  await client.close();
  if (process.env.KRUISE_TS_KEEP_CLUSTER !== '1') await down(values.cluster, { quiet: true });
}
