// The failed-plan idiom every controller uses. A planner that throws — a malformed object: a bad
// selector, a value it cannot read — must neither take the process down nor hot-loop the key. The
// failure is said where users look (a Warning Event FailedSync on the object, and on its status when
// the kind has a place for it: a condition, or ImagePullJob's message), then the round ends with a
// TerminalError: the key is forgotten until the object's next change brings it back.

import type { KubeClient } from '../runtime/client.ts';
import type { ResourceType } from '../runtime/resources.ts';
import type { Stored } from '../apis/core-objects.ts';
import { TerminalError } from '../runtime/controller.ts';
import type { EventRecorder } from '../runtime/events.ts';
import type { Logger } from '../runtime/log.ts';
import { metaTime } from '../util/clock.ts';
import { errMessage } from '../util/errors.ts';

/** An object as the idiom reads it: a status (with conditions when failureCondition is set). */
export interface ReportedObject {
  status?: unknown;
}

// type/status optional: some kinds' schemas (UnitedDeployment's) declare them so.
interface FailureCondition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

/** How one kind reports a failed plan. */
export interface FailedPlanKind<O extends ReportedObject> {
  type: ResourceType;
  /** For kinds with status conditions: the condition type a failed plan is recorded under (upstream's, per kind). */
  failureCondition?: string;
  /** Status fields the schema requires, for a failure recorded before any status was written. */
  emptyStatus?: Partial<NonNullable<O['status']>>;
  /** For kinds without conditions: the status that records the failure (undefined: nothing to write). */
  failureStatus?(obj: Stored<O>, message: string): O['status'] | undefined;
}

export interface FailedPlanDeps {
  /** Needed only when the kind records failures on its status. */
  client?: Pick<KubeClient, 'updateStatus'>;
  recorder: EventRecorder;
  log: Logger;
  now: () => number;
}

export class FailedPlanReporter<O extends ReportedObject> {
  constructor(
    protected readonly kind: FailedPlanKind<O>,
    private readonly failedPlanDeps: FailedPlanDeps,
  ) {}

  /** Runs the planner (or any read of the object's values): a throw is reported, then terminal. */
  async orReport<T>(obj: Stored<O>, plan: () => T | Promise<T>): Promise<T> {
    try {
      return await plan();
    } catch (err) {
      await this.report(obj, err);
      const { namespace, name } = obj.metadata;
      const key = namespace ? `${namespace}/${name ?? ''}` : (name ?? '');
      throw new TerminalError(`cannot plan ${this.kind.type.kind} ${key}`, { cause: err });
    }
  }

  private async report(obj: Stored<O>, err: unknown): Promise<void> {
    const { recorder, client, log } = this.failedPlanDeps;
    const message = errMessage(err);
    recorder.event(obj, 'Warning', 'FailedSync', 'Reconcile', `failed to reconcile ${this.kind.type.kind}: ${message}`);
    const status = this.failureStatus(obj, message);
    if (status === undefined || !client) return;
    try {
      await client.updateStatus(this.kind.type, { ...obj, status });
    } catch (e) {
      log.info({ err: errMessage(e) }, 'could not record the failure on the status');
    }
  }

  private failureStatus(obj: Stored<O>, message: string): O['status'] | undefined {
    const { failureCondition: type, emptyStatus, failureStatus } = this.kind;
    if (failureStatus) return failureStatus(obj, message);
    if (!type) return undefined;
    const status = obj.status as { conditions?: readonly FailureCondition[] } | undefined;
    const conditions = (status?.conditions ?? []).filter((c) => c.type !== type);
    const lastTransitionTime = metaTime(this.failedPlanDeps.now());
    conditions.push({ type, status: 'True', reason: 'FailedSync', message, lastTransitionTime });
    return { ...emptyStatus, ...status, conditions } as O['status'];
  }
}
