// The sharder (docs/sharding.md), run by the elected leader when the manager shards: it watches the
// shard Leases of its ring, judges which shards are alive (planShardStates), takes the Leases of
// expired ones over, and keeps every workload — and what it owns — labelled with the shard the ring
// gives it (planSharder), draining a workload from a live shard before it moves. Its caches are the
// leader's unselected ones (the pod webhook and the leader-only controllers read the same).

import type { KubeObject, Lease } from '../../apis/core-objects.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import { expectationGate, ResourceVersionExpectations } from '../../runtime/expectations.ts';
import type { Informer } from '../../runtime/informer-factory.ts';
import { access, READ } from '../../runtime/rbac.ts';
import { CloneSets, ControllerRevisions, Leases, PersistentVolumeClaims, Pods, type ResourceType } from '../../runtime/resources.ts';
import { splitKey, unwrapDeleted } from '../../runtime/store.ts';
import { realClock, type Clock } from '../../util/clock.ts';
import { ShardRing, shardLabels, shardLeaseName, workloadKey } from '../../util/shard-ring.ts';
import { ownedBy } from '../owned.ts';
import { managerController, type ControllerDeps, type ControllerSetup } from '../types.ts';
import { SharderExecutor } from './executor.ts';
import { planSharder, planShardStates, type ShardChild, type ShardLeaseView, type ShardState } from './plan.ts';

/** The workload kinds sharded, and the resources of what they own (labelled with them). */
export const SHARDED_WORKLOADS: readonly ResourceType[] = [CloneSets];
export const SHARDED_CHILDREN: readonly ResourceType[] = [Pods, PersistentVolumeClaims, ControllerRevisions];
/** The controllers that run on every shard, for their shard's workloads (the others stay leader-only). */
export const SHARDED_CONTROLLERS: readonly string[] = ['cloneset'];

/**
 * Workloads moved at once. A move is a few round trips (children listed, relabelled, then the
 * workload); one at a time, the 12 CloneSets of a dead shard took 7–9 s to move on the loaded
 * local cluster, past the lease duration the move should take. The client's rate limit still paces
 * the writes; a key is never in two workers at once, and the drain limit may be passed by at most
 * this many less one.
 */
export const SHARDER_WORKERS = 8;

/** The queue key of a pass over the shard Leases. */
const LEASES_KEY = '@leases';
/** How soon a workload found behind the sharder's own write is looked at again (its update event usually comes first). */
const CACHE_WAIT_MS = 500;

export interface SharderOptions {
  /** The ring: the manager's --leader-election-id. */
  ring: string;
  /** The identity the sharder writes into a Lease it takes over. */
  identity: string;
  /** Where the shard Leases live (the manager namespace). */
  namespace: string;
  leaseDurationMs: number;
  clock?: Clock;
}

/** Cluster-wide; the shard Leases (list, watch, update, delete) are in the leader-election Role's namespace. */
export const SHARDER_ACCESS = [
  ...SHARDED_WORKLOADS.map((t) => access(t, [...READ, 'patch'])),
  ...SHARDED_CHILDREN.map((t) => access(t, [...READ, 'patch'])),
];

export function sharderController(opts: SharderOptions): ControllerSetup {
  return {
    name: 'sharder',
    kinds: ['CloneSet'],
    access: SHARDER_ACCESS,
    setup(deps: ControllerDeps) {
      const sharder = new Sharder(deps, opts);
      return { run: (signal) => sharder.run(signal) };
    },
  };
}

class Sharder {
  private readonly labels;
  private readonly clock: Clock;
  private readonly leases: Informer<Lease>;
  private readonly workloads: Informer<KubeObject>;
  private readonly children: ReadonlyMap<string, Informer<KubeObject>>;
  private readonly executor: SharderExecutor;
  private readonly controller;
  /** When the sharder first saw each Lease at its current resourceVersion (its own clock). */
  private readonly observed = new Map<string, { resourceVersion: string; at: number }>();
  private states = new Map<string, ShardState>();
  private ring: ShardRing | undefined;
  private readonly resourceVersions: ResourceVersionExpectations;

  constructor(
    private readonly deps: ControllerDeps,
    private readonly opts: SharderOptions,
  ) {
    this.labels = shardLabels(opts.ring);
    this.clock = opts.clock ?? realClock;
    this.resourceVersions = new ResourceVersionExpectations({ timeout: deps.expectationTimeoutMs });
    const scope = deps.namespace ? { namespace: deps.namespace } : {};
    this.leases = deps.informers.informerFor<Lease>(Leases, {
      namespace: opts.namespace,
      labelSelector: `${this.labels.ring}=${opts.ring}`,
    });
    this.workloads = deps.informers.informerFor<KubeObject>(CloneSets, scope);
    this.children = new Map(SHARDED_CHILDREN.map((t) => [t.resource, deps.informers.informerFor<KubeObject>(t, scope)]));
    this.executor = new SharderExecutor({
      client: deps.client,
      labels: this.labels,
      childTypes: new Map(SHARDED_CHILDREN.map((t) => [t.resource, t])),
      resourceVersions: this.resourceVersions,
    });
    this.controller = managerController('sharder', { ...deps, workers: SHARDER_WORKERS }, (key) => this.reconcile(key));
    const queue = this.controller.queue;
    const enqueueLeases = () => queue.add(LEASES_KEY);
    // The first pass over the Leases makes the ring (and queues every workload), Leases or not.
    enqueueLeases();
    this.leases.addEventHandler({ onAdd: enqueueLeases, onUpdate: enqueueLeases, onDelete: enqueueLeases });
    const enqueueWorkload = (obj: KubeObject) => queue.add(`${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}`);
    this.workloads.addEventHandler({
      onAdd: enqueueWorkload,
      onUpdate: (_, obj) => enqueueWorkload(obj),
      onDelete: (obj) => this.resourceVersions.delete(unwrapDeleted(obj)),
    });
    // A child whose label is not its workload's (created before sharding, or by someone else).
    const strayChild = (obj: KubeObject) => {
      const ref = obj.metadata.ownerReferences?.find((r) => r.controller && r.kind === 'CloneSet');
      if (!ref) return;
      const owner = this.workloads.lister.get(obj.metadata.namespace ?? '', ref.name);
      if (owner && owner.metadata.labels?.[this.labels.shard] !== obj.metadata.labels?.[this.labels.shard]) enqueueWorkload(owner);
    };
    for (const informer of this.children.values()) informer.addEventHandler({ onAdd: strayChild, onUpdate: (_, obj) => strayChild(obj) });
  }

  run(signal: AbortSignal): Promise<void> {
    return this.controller.runAfterSync(signal, [this.leases, this.workloads, ...this.children.values()]);
  }

  private async reconcile(key: string): Promise<ReconcileResult> {
    if (key === LEASES_KEY) return this.reconcileLeases();
    // Not before the first pass over the Leases (one worker runs it), which queues every workload.
    if (!this.ring) return {};
    const { namespace = '', name } = splitKey(key);
    const workload = this.workloads.lister.get(namespace, name);
    if (!workload) return {};
    // Not on a cache behind the sharder's own last write to this workload: its update event queues it again.
    const wait = expectationGate([this.resourceVersions.check(workload, 'sharder label write', CACHE_WAIT_MS)], this.deps.logger);
    if (wait !== undefined) return { requeueAfterMs: wait };
    const shardOf = (obj: KubeObject) => obj.metadata.labels?.[this.labels.shard];
    const children: ShardChild[] = [...this.children].flatMap(([resource, informer]) =>
      ownedBy(informer.lister, workload).map((c) => ({ resource, name: c.metadata.name ?? '', shard: shardOf(c) })),
    );
    const drainsInFlight = this.workloads.lister.list().filter((w) => w !== workload && w.metadata.labels?.[this.labels.drain]).length;
    const decision = planSharder(
      {
        key: workloadKey(CloneSets.group, 'CloneSet', namespace, name),
        shard: shardOf(workload),
        draining: !!workload.metadata.labels?.[this.labels.drain],
      },
      children,
      this.ring,
      this.states,
      drainsInFlight,
    );
    if (decision.action !== 'none') this.deps.logger.info({ object: key, ...decision, children: undefined }, 'sharding');
    await this.executor.execute(CloneSets, workload, decision);
    return {};
  }

  private async reconcileLeases(): Promise<ReconcileResult> {
    const now = this.clock.now();
    const prefix = shardLeaseName(this.opts.ring, '');
    const leases = this.leases.lister.list(this.opts.namespace).filter((l) => l.metadata.name?.startsWith(prefix));
    const views: ShardLeaseView[] = leases.map((lease) => {
      const name = lease.metadata.name ?? '';
      const resourceVersion = lease.metadata.resourceVersion ?? '';
      let seen = this.observed.get(name);
      if (seen?.resourceVersion !== resourceVersion) this.observed.set(name, (seen = { resourceVersion, at: now }));
      return { shard: name.slice(prefix.length), holderIdentity: lease.spec?.holderIdentity ?? '', resourceVersion, observedAt: seen.at };
    });
    for (const name of this.observed.keys()) if (!leases.some((l) => l.metadata.name === name)) this.observed.delete(name);
    const plan = planShardStates(views, now, this.opts.leaseDurationMs);
    const byShard = new Map(leases.map((l) => [l.metadata.name!.slice(prefix.length), l]));
    for (const shard of plan.takeOver) await this.executor.takeOver(byShard.get(shard)!, this.opts.identity);
    for (const shard of plan.remove) await this.executor.remove(byShard.get(shard)!);
    // Every workload is looked at again when a shard changes state: the ring (ready shards) moves
    // some, and a shard found dead (its Lease taken over, an event of its own) moves all of its.
    const signature = (states: ReadonlyMap<string, ShardState>) => [...states].sort().join();
    if (!this.ring || signature(plan.states) !== signature(this.states)) {
      this.states = plan.states;
      this.ring = new ShardRing([...plan.states].filter(([, s]) => s === 'ready').map(([shard]) => shard));
      this.deps.logger.info({ shards: Object.fromEntries(plan.states) }, 'shards changed');
      for (const w of this.workloads.lister.list()) this.controller.queue.add(`${w.metadata.namespace ?? ''}/${w.metadata.name ?? ''}`);
    }
    return plan.requeueAfterMs !== undefined ? { requeueAfterMs: plan.requeueAfterMs } : {};
  }
}
