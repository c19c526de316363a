// The UnitedDeployment controller (upstream pkg/controller/uniteddeployment): reads the UD, its
// ControllerRevisions, its subset workloads and their pods from informer caches, waits while
// expectations say the cache is behind our own writes, asks planUnitedDeployment for the round and
// hands the plan to the executor.

import type { UnitedDeployment } from '../../apis/apps/uniteddeployment.ts';
import { SUBSET_NAME_LABEL } from '../../apis/constants.ts';
import {
  AdvancedStatefulSets,
  CloneSets,
  ControllerRevisions,
  Deployments,
  Pods,
  StatefulSets,
  UnitedDeployments,
} from '../../runtime/resources.ts';
import type { ControllerRevision, KubeObject, Pod, Stored } from '../../apis/core-objects.ts';
import type { ReconcileResult } from '../../runtime/controller.ts';
import { splitKey, unwrapDeleted, type DeletedFinalStateUnknown } from '../../runtime/store.ts';
import type { Informer } from '../../runtime/informer-factory.ts';
import { access, READ, WRITE } from '../../runtime/rbac.ts';
import { realClock, type Clock } from '../../util/clock.ts';
import { labelSelectorAsSelector, Selector } from '../../util/labelselector.ts';
import { managerController, type ControllerDeps, type ControllerSetup } from '../types.ts';
import { WorkloadExpectations, WorkloadStep, type WorkloadKind } from '../workload.ts';
import { UnitedDeploymentExecutor, type ExecutorDeps } from './executor.ts';
import { planUnitedDeployment } from './plan.ts';
import { subsetKindOf, udControllerRef, type SubsetKind, type SubsetWorkload } from './subset.ts';
import type { ScaleExpectations } from '../../runtime/expectations.ts';
import { ownedBy } from '../owned.ts';

/** What one reconcile reads: informer caches in production, plain objects in unit tests. */
export interface UnitedDeploymentCache {
  get(namespace: string, name: string): Stored<UnitedDeployment> | undefined;
  revisions(ud: UnitedDeployment): ControllerRevision[];
  workloads(ud: UnitedDeployment, kind: SubsetKind): SubsetWorkload[];
  /** Pods of the UD's namespace that carry a subset-name label and match the UD's selector. */
  pods(ud: UnitedDeployment): Pod[];
}

export interface ReconcilerDeps extends ExecutorDeps {
  cache: UnitedDeploymentCache;
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
  private readonly executor: UnitedDeploymentExecutor;

  constructor(private readonly deps: ReconcilerDeps) {
    this.clock = deps.clock ?? realClock;
    this.executor = new UnitedDeploymentExecutor(deps);
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
    if (requeue !== undefined) return { requeueAfterMs: requeue };

    const servedVersion = await this.deps.client.servedVersion(UnitedDeployments);
    // A malformed object is reported (Event + SubsetFailure condition) instead of hot-looping.
    const plan = await this.step.orReport(ud, () => {
      if (!kind)
        throw new Error(
          'no subset template: one of statefulSetTemplate, advancedStatefulSetTemplate, cloneSetTemplate, deploymentTemplate is required',
        );
      return planUnitedDeployment({
        ud,
        kind,
        revisions,
        workloads,
        pods: this.deps.cache.pods(ud),
        now: this.clock.now(),
        servedVersion,
      });
    });
    return this.executor.execute(ud, kind!, plan);
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

  revisions(ud: UnitedDeployment) {
    return ownedBy(this.revisionInformer.lister, ud);
  }

  workloads(ud: UnitedDeployment, kind: SubsetKind) {
    // A UD owns workloads of one kind; two kinds share a resource (apps/v1 and Kruise StatefulSet) only by kind name.
    return ownedBy(this.workloadInformers[kind].lister, ud);
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
