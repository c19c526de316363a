// The shared workload reconcile step: what every controller of pods (CloneSet, Advanced StatefulSet,
// Advanced DaemonSet and the kinds that follow) does before and around its pure planner.
//   1. wait while expectations say the cache is behind our own creations, deletions and writes;
//   2. parse the selector and claim pods (ControllerRefManager), requeueing soon when a claim only
//      lost optimistic-concurrency races;
//   3. run the planner through the failed-plan idiom (failed-plan.ts: a malformed object is reported
//      as a Warning Event and a status condition, and the key is forgotten until its next change).

import type { KubeClient } from '../runtime/client.ts';
import { Pods, type ResourceType } from '../runtime/resources.ts';
import type { KubeObject, OwnerReference, Stored } from '../apis/core-objects.ts';
import {
  expectationGate,
  ResourceVersionExpectations,
  ScaleExpectations,
  type ExpectationCheck,
  type ExpectationOptions,
} from '../runtime/expectations.ts';
import type { Logger } from '../runtime/log.ts';
import { ClaimError, ControllerRefManager } from '../runtime/refmanager.ts';
import { labelSelectorAsSelector, type LabelSelectorLike } from '../util/labelselector.ts';
import { FailedPlanReporter, type FailedPlanDeps, type FailedPlanKind, type ReportedObject } from './failed-plan.ts';

/** A workload as the shared step reads it. */
export interface WorkloadObject extends ReportedObject {
  spec?: { selector?: LabelSelectorLike | null };
}

/**
 * The expectations one workload controller keeps between rounds, per workload key: pods (and
 * claims) created or deleted, ControllerRevisions created, and the resourceVersions of our writes.
 */
export class WorkloadExpectations {
  readonly scale: ScaleExpectations;
  readonly revisions: ScaleExpectations;
  readonly resourceVersions: ResourceVersionExpectations;

  constructor(options: ExpectationOptions = {}) {
    this.scale = new ScaleExpectations(options);
    this.revisions = new ScaleExpectations(options);
    this.resourceVersions = new ResourceVersionExpectations(options);
  }

  /** The workload is gone: nothing more is expected for it. */
  forget(key: string): void {
    this.scale.deleteExpectations(key);
    this.revisions.deleteExpectations(key);
  }

  /**
   * How long to wait before planning `key` (undefined: go on). `observed` are the objects the round
   * will read — the workload itself too, since a round started before the watch brought our last
   * status write would write the next status from the stale copy and only earn a 409.
   */
  wait(key: string, observed: Iterable<KubeObject>, log: Logger, onScaleLeak?: () => void): number | undefined {
    const { scale, revisions, resourceVersions } = this;
    function* checks(): Generator<ExpectationCheck> {
      yield scale.check(key, 'scale', onScaleLeak);
      yield revisions.check(key, 'revision');
      for (const obj of observed) yield resourceVersions.check(obj, 'resourceVersion');
    }
    return expectationGate(checks(), log);
  }
}

/** What the shared step needs to know about one workload kind. */
export interface WorkloadKind<W extends WorkloadObject> extends FailedPlanKind<W> {
  type: ResourceType;
  /** The condition type a failed round is recorded under (upstream's, per kind). */
  failureCondition: string;
  controllerRef(workload: Stored<W>): OwnerReference;
}

export interface WorkloadStepDeps extends FailedPlanDeps {
  client: Pick<KubeClient, 'get' | 'patch' | 'updateStatus'>;
  resourceVersions: ResourceVersionExpectations;
}

/** The shared step; its orReport is the failed-plan idiom, recording failures under the kind's condition. */
export class WorkloadStep<W extends WorkloadObject> extends FailedPlanReporter<W> {
  constructor(
    protected override readonly kind: WorkloadKind<W>,
    private readonly deps: WorkloadStepDeps,
  ) {
    super(kind, deps);
  }

  /**
   * The pods the workload controls after claiming `candidates` (its own pods, plus the orphans it
   * may adopt); undefined when claiming only lost write races, so the round ends and comes back soon.
   */
  async claimPods<P extends KubeObject>(workload: Stored<W>, candidates: readonly P[]): Promise<P[] | undefined> {
    const selector = await this.orReport(workload, () => labelSelectorAsSelector(workload.spec?.selector));
    const refs = new ControllerRefManager({
      client: this.deps.client,
      owner: workload,
      ownerType: this.kind.type,
      ownerRef: this.kind.controllerRef(workload),
      selector,
    });
    try {
      return await refs.claim(Pods, candidates, (written) => this.deps.resourceVersions.expect(written));
    } catch (err) {
      if (err instanceof ClaimError && err.onlyConflicts()) return undefined;
      throw err;
    }
  }
}
