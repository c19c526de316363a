// The shared workload reconcile step: what every controller of pods (CloneSet, Advanced StatefulSet,
// Advanced DaemonSet and the kinds that follow) does before and around its pure planner.
//   1. wait while expectations say the cache is behind our own creations, deletions and writes;
//   2. parse the selector and claim pods (ControllerRefManager), requeueing soon when a claim only
//      lost optimistic-concurrency races;
//   3. run the planner; a malformed object (bad selector, a value the planner cannot read) is
//      reported as a Warning Event and a status condition, and the key is forgotten (TerminalError)
//      instead of crashing the process or hot-looping: the next change to the object brings it back.

import type { KubeClient } from '../runtime/client.ts';
import type { KubeObject, OwnerReference, Stored } from '../apis/core-objects.ts';
import { Pods, type ResourceType } from '../runtime/resources.ts';
import { TerminalError } from '../runtime/controller.ts';
import type { EventRecorder } from '../runtime/events.ts';
import {
  expectationGate,
  ResourceVersionExpectations,
  ScaleExpectations,
  type ExpectationCheck,
  type ExpectationOptions,
} from '../runtime/expectations.ts';
import type { Logger } from '../runtime/log.ts';
import { ClaimError, ControllerRefManager } from '../runtime/refmanager.ts';
import { metaTime } from '../util/clock.ts';
import { errMessage } from '../util/errors.ts';
import { labelSelectorAsSelector, type LabelSelectorLike } from '../util/labelselector.ts';

/** A workload as the shared step reads it. */
export interface WorkloadObject {
  spec?: { selector?: LabelSelectorLike | null };
  status?: { conditions?: readonly WorkloadCondition[] };
}

// type/status optional: some kinds' schemas (UnitedDeployment's) declare them so.
interface WorkloadCondition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
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
export interface WorkloadKind<W extends WorkloadObject> {
  type: ResourceType;
  /** The condition type a failed round is recorded under (upstream's, per kind). */
  failureCondition: string;
  /** Status fields the schema requires, for a failure recorded before any status was written. */
  emptyStatus?: Partial<NonNullable<W['status']>>;
  controllerRef(workload: Stored<W>): OwnerReference;
}

export interface WorkloadStepDeps {
  client: Pick<KubeClient, 'get' | 'patch' | 'updateStatus'>;
  recorder: EventRecorder;
  log: Logger;
  resourceVersions: ResourceVersionExpectations;
  now: () => number;
}

export class WorkloadStep<W extends WorkloadObject> {
  constructor(
    private readonly kind: WorkloadKind<W>,
    private readonly deps: WorkloadStepDeps,
  ) {}

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

  /** Runs the planner (or any read of the object's values): a throw is reported, then terminal. */
  async orReport<T>(workload: Stored<W>, plan: () => T): Promise<T> {
    try {
      return plan();
    } catch (err) {
      await this.reportBadObject(workload, err);
      const { namespace, name } = workload.metadata;
      throw new TerminalError(`cannot plan ${this.kind.type.kind} ${namespace ?? ''}/${name ?? ''}`, { cause: err });
    }
  }

  private async reportBadObject(workload: Stored<W>, err: unknown): Promise<void> {
    const message = errMessage(err);
    const kind = this.kind.type.kind;
    this.deps.recorder.event(workload, 'Warning', 'FailedSync', 'Reconcile', `failed to reconcile ${kind}: ${message}`);
    const type = this.kind.failureCondition;
    const conditions: WorkloadCondition[] = (workload.status?.conditions ?? []).filter((c) => c.type !== type);
    conditions.push({ type, status: 'True', reason: 'FailedSync', message, lastTransitionTime: metaTime(this.deps.now()) });
    try {
      await this.deps.client.updateStatus(this.kind.type, {
        ...workload,
        status: { ...this.kind.emptyStatus, ...workload.status, conditions },
      });
    } catch (e) {
      this.deps.log.info({ err: errMessage(e) }, 'could not record the failure on the status');
    }
  }
}
