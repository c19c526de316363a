// The UnitedDeployment controller (upstream pkg/controller/uniteddeployment): reads the UD, its
// ControllerRevisions, its subset workloads and their pods from informer caches, waits while
// expectations say the cache is behind our own writes, asks planUnitedDeployment for the round and
// writes the plan. Subset workloads are named client-side (`<ud>-<subset>-` + 5 random characters,
// generateName kept) so the create can be expected by name before it is sent.

import { randomBytes } from 'node:crypto';
import type { UnitedDeployment } from '../../apis/apps/uniteddeployment.ts';
import { SUBSET_NAME_LABEL, UNITED_DEPLOYMENT_RESERVED_POD_LABEL } from '../../apis/constants.ts';
import { PatchType, type KubeClient } from '../../runtime/client.ts';
import type { KubeObject, Stored, ControllerRevision, Pod } from '../../apis/core-objects.ts';
import { isAlreadyExists, isNotFound } from '../../runtime/errors.ts';
import {
  AdvancedStatefulSets,
  CloneSets,
  ControllerRevisions,
  Deployments,
  Pods,
  StatefulSets,
  UnitedDeployments,
  type ResourceType,
} from '../../runtime/resources.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import type { EventRecorder } from '../../runtime/events.ts';
import type { Informer } from '../../runtime/informer-factory.ts';
import { OwnerUIDIndex, splitKey, unwrapDeleted, type DeletedFinalStateUnknown } from '../../runtime/store.ts';
import type { Logger } from '../../runtime/log.ts';
import { access, READ, WRITE } from '../../runtime/rbac.ts';
import { applyWrites, CONFLICT_REQUEUE_MS, writeStatus } from '../../runtime/writes.ts';
import { realClock, type Clock } from '../../util/clock.ts';
import { labelSelectorAsSelector, Selector } from '../../util/labelselector.ts';
import { managerController, type ControllerDeps, type ControllerSetup } from '../types.ts';
import { WorkloadExpectations, WorkloadStep, type WorkloadKind } from '../workload.ts';
import { planUnitedDeployment, type UnitedDeploymentPlan } from './plan.ts';
import { subsetKindOf, udControllerRef, type SubsetKind, type SubsetWorkload } from './subset.ts';
import type { ScaleExpectations } from '../../runtime/expectations.ts';
import { errMessage } from '../../util/errors.ts';
import { RAND_ALPHABET } from '../../util/rand.ts';

export const WORKLOAD_RESOURCE: Record<SubsetKind, ResourceType> = {
  StatefulSet: StatefulSets,
  AdvancedStatefulSet: AdvancedStatefulSets,
  CloneSet: CloneSets,
  Deployment: Deployments,
};

/** A name as the API server's generateName makes it: the prefix and 5 characters of its alphabet. */
export function generatedName(prefix: string, random: () => Buffer = () => randomBytes(5)): string {
  return prefix + [...random()].map((b) => RAND_ALPHABET[b % RAND_ALPHABET.length]).join('');
}

export type UnitedDeploymentClient = Pick<KubeClient, 'create' | 'get' | 'update' | 'patch' | 'delete' | 'updateStatus'>;

/** What one reconcile reads: informer caches in production, plain objects in unit tests. */
export interface UnitedDeploymentCache {
  get(namespace: string, name: string): Stored<UnitedDeployment> | undefined;
  revisions(ud: UnitedDeployment): ControllerRevision[];
  workloads(ud: UnitedDeployment, kind: SubsetKind): SubsetWorkload[];
  /** Pods of the UD's namespace that carry a subset-name label and match the UD's selector. */
  pods(ud: UnitedDeployment): Pod[];
}

export interface ReconcilerDeps {
  cache: UnitedDeploymentCache;
  client: UnitedDeploymentClient;
  recorder: EventRecorder;
  log: Logger;
  /** Subset workloads (as `scale`) and revisions created / deleted, and our writes, per UD key. */
  expectations: WorkloadExpectations;
  clock?: Clock;
}

/** The shared workload step's view of a UD: failures are recorded under SubsetFailure. */
const UNITED_DEPLOYMENT_KIND: WorkloadKind<UnitedDeployment> = {
  type: UnitedDeployments,
  failureCondition: 'SubsetFailure',
  emptyStatus: { replicas: 0, updatedReplicas: 0, currentRevision: '' },
  controllerRef: udControllerRef,
};

export class UnitedDeploymentReconciler {
  private readonly clock: Clock;
  private readonly step: WorkloadStep<UnitedDeployment>;

  constructor(private readonly deps: ReconcilerDeps) {
    this.clock = deps.clock ?? realClock;
    this.step = new WorkloadStep(UNITED_DEPLOYMENT_KIND, {
      client: deps.client,
      recorder: deps.recorder,
      log: deps.log,
      resourceVersions: deps.expectations.resourceVersions,
      now: () => this.clock.now(),
    });
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const { namespace = '', name } = splitKey(key);
    const ud = this.deps.cache.get(namespace, name);
    if (!ud) {
      this.deps.expectations.forget(key);
      return {};
    }
    if (ud.metadata.deletionTimestamp) return {};

    const kind = subsetKindOf(ud);
    const revisions = this.deps.cache.revisions(ud);
    const workloads = kind ? this.deps.cache.workloads(ud, kind) : [];
    const requeue = this.deps.expectations.wait(key, [ud, ...revisions, ...workloads], this.deps.log);
    if (requeue !== undefined) return { requeueAfter: requeue };

    // A malformed object is reported (Event + SubsetFailure condition) instead of hot-looping.
    const plan = await this.step.orReport(ud, () => {
      if (!kind)
        throw new Error(
          'no subset template: one of statefulSetTemplate, advancedStatefulSetTemplate, cloneSetTemplate, deploymentTemplate is required',
        );
      return planUnitedDeployment({ ud, kind, revisions, workloads, pods: this.deps.cache.pods(ud), now: this.clock.now() });
    });
    return applyWrites(() => this.execute(ud, kind!, plan));
  }

  private async execute(ud: Stored<UnitedDeployment>, kind: SubsetKind, plan: UnitedDeploymentPlan): Promise<ReconcileResult> {
    const key = `${ud.metadata.namespace}/${ud.metadata.name}`;
    const ns = ud.metadata.namespace ?? '';
    const { client } = this.deps;
    const { scale: scaleExpectations, revisions: revisionExpectations, resourceVersions } = this.deps.expectations;

    // 1. revisions
    if (plan.newRevision) {
      const revName = plan.newRevision.metadata.name ?? '';
      revisionExpectations.expectScale(key, 'create', revName);
      try {
        resourceVersions.expect(await client.create(ControllerRevisions, plan.newRevision));
      } catch (err) {
        revisionExpectations.observeScale(key, 'create', revName);
        if (!isAlreadyExists(err)) throw err;
        // Taken by a different revision (ours would be in the cache): a hash collision.
        const collisionCount = plan.collisionCount + 1;
        await client.updateStatus(UnitedDeployments, { ...ud, status: { ...ud.status, collisionCount } as UnitedDeployment['status'] });
        return { requeueAfter: CONFLICT_REQUEUE_MS };
      }
    }
    if (plan.revisionUpdate) {
      const { name, revision } = plan.revisionUpdate;
      resourceVersions.expect(await client.patch(ControllerRevisions, name, { revision }, { namespace: ns, patchType: PatchType.Merge }));
    }

    if (plan.allocationError) {
      this.deps.recorder.event(
        ud,
        'Warning',
        'Failed SpecifySubsetReplicas',
        'Allocate',
        `Specified subset replicas is ineffective: ${plan.allocationError}`,
      );
      return {};
    }

    // 2. reserved pods (reservation strategy)
    for (const { pod, value } of plan.reservedLabels) {
      try {
        const written = await client.patch(
          Pods,
          pod,
          { metadata: { labels: { [UNITED_DEPLOYMENT_RESERVED_POD_LABEL]: value } } },
          { namespace: ns, patchType: PatchType.StrategicMerge },
        );
        resourceVersions.expect(written);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }

    // 3. subset workloads: duplicates and removed subsets, new subsets, changed subsets
    const resource = WORKLOAD_RESOURCE[kind];
    for (const w of plan.deletes) {
      const wName = w.metadata.name ?? '';
      scaleExpectations.expectScale(key, 'delete', wName);
      try {
        await client.delete(resource, wName, { namespace: ns, preconditions: { uid: w.metadata.uid } });
      } catch (err) {
        scaleExpectations.observeScale(key, 'delete', wName);
        if (!isNotFound(err)) throw err;
      }
    }
    if (plan.deletes.length > 0) this.event(ud, 'Normal', 'SuccessfulUpdateSubset', `Delete ${plan.deletes.length} Subset (${kind})`);
    for (const w of plan.creates) {
      const wName = generatedName(w.metadata.generateName ?? '');
      scaleExpectations.expectScale(key, 'create', wName);
      try {
        resourceVersions.expect(await client.create(resource, { ...w, metadata: { ...w.metadata, name: wName } }));
      } catch (err) {
        scaleExpectations.observeScale(key, 'create', wName);
        this.event(
          ud,
          'Warning',
          'FailedUpdateSubset',
          `fail to create Subset (${kind}) ${w.metadata.labels?.[SUBSET_NAME_LABEL]}: ${errMessage(err)}`,
        );
        throw err;
      }
    }
    if (plan.creates.length > 0) this.event(ud, 'Normal', 'SuccessfulUpdateSubset', `Create ${plan.creates.length} Subset (${kind})`);
    for (const w of plan.updates) {
      try {
        resourceVersions.expect(await client.update(resource, w));
      } catch (err) {
        this.event(
          ud,
          'Warning',
          'FailedUpdateSubset',
          `Error updating PodSet (${kind}) ${w.metadata.name} when updating: ${errMessage(err)}`,
        );
        throw err;
      }
    }

    // 4. status
    const status = await writeStatus(client, UnitedDeployments, ud, plan.status, resourceVersions);
    if (status.ended) return status.ended;
    return plan.requeueAfter !== undefined ? { requeueAfter: plan.requeueAfter } : {};
  }

  private event(ud: Stored<UnitedDeployment>, type: 'Normal' | 'Warning', reason: string, note: string): void {
    this.deps.recorder.event(ud, type, reason, 'Reconcile', note);
  }
}

/** The UD's selector; one that does not parse selects nothing (the planner reports it). */
function selectorOf(ud: UnitedDeployment): Selector {
  try {
    return labelSelectorAsSelector(ud.spec?.selector);
  } catch {
    return Selector.nothing();
  }
}

/** The UD controlling an object, if any. */
function udOwner(obj: KubeObject): string | undefined {
  const ref = obj.metadata.ownerReferences?.find((r) => r.controller);
  if (!ref || ref.kind !== 'UnitedDeployment' || !ref.apiVersion.startsWith('apps.kruise.io/')) return undefined;
  return `${obj.metadata.namespace}/${ref.name}`;
}

class InformerCache implements UnitedDeploymentCache {
  constructor(
    private readonly uds: Informer<Stored<UnitedDeployment>>,
    private readonly revisionInformer: Informer<ControllerRevision>,
    private readonly workloadInformers: Record<SubsetKind, Informer<SubsetWorkload>>,
    private readonly podInformer: Informer<Pod>,
  ) {}

  get(namespace: string, name: string) {
    return this.uds.lister.get(namespace, name);
  }

  private owned<T extends KubeObject>(informer: Informer<T>, ud: UnitedDeployment): T[] {
    const uid = ud.metadata?.uid;
    if (!uid) return [];
    return informer.lister.byIndex(OwnerUIDIndex, uid).filter((o) => o.metadata.namespace === ud.metadata?.namespace);
  }

  revisions(ud: UnitedDeployment) {
    return this.owned(this.revisionInformer, ud);
  }

  workloads(ud: UnitedDeployment, kind: SubsetKind) {
    // A UD owns workloads of one kind; two kinds share a resource (apps/v1 and Kruise StatefulSet) only by kind name.
    return this.owned(this.workloadInformers[kind], ud);
  }

  pods(ud: UnitedDeployment) {
    const selector = selectorOf(ud);
    return this.podInformer.lister
      .list(ud.metadata?.namespace)
      .filter((p) => p.metadata.labels?.[SUBSET_NAME_LABEL] !== undefined && selector.matches(p.metadata.labels));
  }
}

export const unitedDeploymentController: ControllerSetup = {
  name: 'uniteddeployment',
  kinds: ['UnitedDeployment', 'CloneSet', 'StatefulSet'],
  access: [
    access(UnitedDeployments, READ),
    access(UnitedDeployments, ['update', 'patch'], 'status'),
    access(ControllerRevisions, [...READ, ...WRITE]),
    access(StatefulSets, [...READ, ...WRITE]),
    access(AdvancedStatefulSets, [...READ, ...WRITE]),
    access(CloneSets, [...READ, ...WRITE]),
    access(Deployments, [...READ, ...WRITE]),
    access(Pods, [...READ, 'patch']),
  ],
  setup(deps: ControllerDeps) {
    const scope = deps.namespace ? { namespace: deps.namespace } : {};
    const uds = deps.informers.informerFor<Stored<UnitedDeployment>>(UnitedDeployments, scope);
    const revisions = deps.informers.informerFor<ControllerRevision>(ControllerRevisions, scope);
    const pods = deps.informers.informerFor<Pod>(Pods, scope);
    const workloads = {
      StatefulSet: deps.informers.informerFor<SubsetWorkload>(StatefulSets, scope),
      AdvancedStatefulSet: deps.informers.informerFor<SubsetWorkload>(AdvancedStatefulSets, scope),
      CloneSet: deps.informers.informerFor<SubsetWorkload>(CloneSets, scope),
      Deployment: deps.informers.informerFor<SubsetWorkload>(Deployments, scope),
    };
    const expectations = new WorkloadExpectations({ timeout: deps.expectationTimeoutMs });
    const { resourceVersions } = expectations;
    const reconciler = new UnitedDeploymentReconciler({
      cache: new InformerCache(uds, revisions, workloads, pods),
      client: deps.client,
      recorder: deps.recorder,
      log: deps.logger,
      expectations,
    });
    const controller = managerController('uniteddeployment', deps, (key) => reconciler.reconcile(key));
    const enqueue = (key: string | undefined): void => {
      if (key) controller.queue.add(key);
    };

    uds.addEventHandler({
      onAdd: (ud) => enqueue(`${ud.metadata.namespace}/${ud.metadata.name}`),
      onUpdate: (_old, ud) => {
        resourceVersions.observe(ud);
        enqueue(`${ud.metadata.namespace}/${ud.metadata.name}`);
      },
      onDelete: (obj) => {
        const ud = unwrapDeleted(obj);
        enqueue(`${ud.metadata.namespace}/${ud.metadata.name}`);
      },
    });
    // Owned children: observe our own writes, then look at the owner again.
    const childHandler = <T extends KubeObject>(created: ScaleExpectations) => ({
      onAdd: (o: T) => {
        const key = udOwner(o);
        if (key) created.observeScale(key, 'create', o.metadata.name ?? '');
        enqueue(key);
      },
      onUpdate: (_old: T, o: T) => {
        resourceVersions.observe(o);
        enqueue(udOwner(o));
      },
      onDelete: (obj: T | DeletedFinalStateUnknown<T>) => {
        const o = unwrapDeleted(obj);
        const key = udOwner(o);
        if (key) created.observeScale(key, 'delete', o.metadata.name ?? '');
        enqueue(key);
      },
    });
    revisions.addEventHandler(childHandler<ControllerRevision>(expectations.revisions));
    for (const informer of Object.values(workloads)) informer.addEventHandler(childHandler<SubsetWorkload>(expectations.scale));
    // Pods of subsets (owned by the subset workloads): pending and readiness changes drive adaptive
    // scheduling and the updated counts, so the UDs selecting them look again.
    const podChanged = (pod: Pod) => {
      if (pod.metadata.labels?.[SUBSET_NAME_LABEL] === undefined) return;
      for (const ud of uds.lister.list(pod.metadata.namespace)) {
        if (selectorOf(ud).matches(pod.metadata.labels)) enqueue(`${ud.metadata.namespace}/${ud.metadata.name}`);
      }
    };
    pods.addEventHandler({
      onAdd: podChanged,
      onUpdate: (_old, pod) => {
        resourceVersions.observe(pod);
        podChanged(pod);
      },
      onDelete: (obj) => podChanged(unwrapDeleted(obj)),
    });

    return {
      run: (signal: AbortSignal) => controller.runAfterSync(signal, [uds, revisions, pods, ...Object.values(workloads)]),
    };
  },
};
