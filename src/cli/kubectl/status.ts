// `rollout status` messages, word for word as kubectl and kruise-tools print them (behaviour spec
// §23), as pure functions of the object: { message, done } or an error for a rollout that cannot
// finish.
import type { ResourceType } from '../../runtime/resources.ts';
import { getScaledValueFromIntOrPercent, type IntOrString } from '../../util/intstr.ts';
import type { LabelSelectorLike } from '../../util/labelselector.ts';
import { CliError, isKruise } from './session.ts';

export interface RolloutStatus {
  message: string;
  done: boolean;
}

/** The fields of a workload the status viewers read (every workload kind is a subset of this). */
export interface Workload {
  metadata: { name?: string; generation?: number; annotations?: Record<string, string> };
  spec?: {
    replicas?: number;
    selector?: LabelSelectorLike;
    paused?: boolean;
    updateStrategy?: {
      type?: string;
      partition?: IntOrString;
      rollingUpdate?: { partition?: IntOrString; paused?: boolean; maxUnavailable?: IntOrString; maxSurge?: IntOrString };
    };
  };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    updatedReplicas?: number;
    updatedReadyReplicas?: number;
    currentReplicas?: number;
    updateRevision?: string;
    currentRevision?: string;
    conditions?: Array<{ type?: string; reason?: string }>;
    desiredNumberScheduled?: number;
    updatedNumberScheduled?: number;
    numberAvailable?: number;
  };
}

export function rolloutStatus(type: ResourceType, obj: Workload): RolloutStatus {
  switch (type.kind) {
    case 'Deployment':
      return deploymentStatus(obj);
    case 'DaemonSet':
      return isKruise(type) ? advancedDaemonSetStatus(obj) : daemonSetStatus(obj);
    case 'StatefulSet':
      return isKruise(type) ? advancedStatefulSetStatus(obj) : statefulSetStatus(obj);
    case 'CloneSet':
      return cloneSetStatus(obj);
    default:
      throw new CliError(`no status viewer has been implemented for ${type.kind}`);
  }
}

const observed = (o: Workload) => (o.metadata.generation ?? 0) <= (o.status?.observedGeneration ?? 0);
const name = (o: Workload) => JSON.stringify(o.metadata.name ?? '');

function deploymentStatus(d: Workload): RolloutStatus {
  if (!observed(d)) return { message: 'Waiting for deployment spec update to be observed...', done: false };
  const s = d.status ?? {};
  const progressing = s.conditions?.find((c) => c.type === 'Progressing');
  if (progressing?.reason === 'ProgressDeadlineExceeded') throw new CliError(`deployment ${name(d)} exceeded its progress deadline`);
  const replicas = d.spec?.replicas ?? 1;
  const updated = s.updatedReplicas ?? 0;
  if (updated < replicas) {
    return {
      message: `Waiting for deployment ${name(d)} rollout to finish: ${updated} out of ${replicas} new replicas have been updated...`,
      done: false,
    };
  }
  if ((s.replicas ?? 0) > updated) {
    return {
      message: `Waiting for deployment ${name(d)} rollout to finish: ${(s.replicas ?? 0) - updated} old replicas are pending termination...`,
      done: false,
    };
  }
  if ((s.availableReplicas ?? 0) < updated) {
    return {
      message: `Waiting for deployment ${name(d)} rollout to finish: ${s.availableReplicas ?? 0} of ${updated} updated replicas are available...`,
      done: false,
    };
  }
  return { message: `deployment ${name(d)} successfully rolled out`, done: true };
}

function daemonSetStatus(ds: Workload, what = 'daemon set'): RolloutStatus {
  if ((ds.spec?.updateStrategy?.type ?? 'RollingUpdate') !== 'RollingUpdate') {
    throw new CliError('rollout status is only available for RollingUpdate strategy type');
  }
  if (!observed(ds)) return { message: `Waiting for ${what} spec update to be observed...`, done: false };
  const s = ds.status ?? {};
  const desired = s.desiredNumberScheduled ?? 0;
  if ((s.updatedNumberScheduled ?? 0) < desired) {
    return {
      message: `Waiting for ${what} ${name(ds)} rollout to finish: ${s.updatedNumberScheduled ?? 0} out of ${desired} new pods have been updated...`,
      done: false,
    };
  }
  if ((s.numberAvailable ?? 0) < desired) {
    return {
      message: `Waiting for ${what} ${name(ds)} rollout to finish: ${s.numberAvailable ?? 0} of ${desired} updated pods are available...`,
      done: false,
    };
  }
  return { message: `${what} ${name(ds)} successfully rolled out`, done: true };
}

/**
 * kruise-tools has no Advanced DaemonSet viewer; the native one's messages, naming the kind. A
 * partition (nodes kept at old revisions; a percentage rounded down, as the controller does) ends
 * the roll out once the other nodes are updated, in the partitioned messages of the other kinds.
 */
function advancedDaemonSetStatus(ds: Workload): RolloutStatus {
  const s = ds.status ?? {};
  const desired = s.desiredNumberScheduled ?? 0;
  const partition = Math.min(
    desired,
    getScaledValueFromIntOrPercent(ds.spec?.updateStrategy?.rollingUpdate?.partition ?? 0, desired, false),
  );
  if (partition === 0 || (ds.spec?.updateStrategy?.type ?? 'RollingUpdate') !== 'RollingUpdate' || !observed(ds))
    return daemonSetStatus(ds, 'Advanced DaemonSet');
  const updated = s.updatedNumberScheduled ?? 0;
  if (updated < desired - partition) {
    return {
      message: `Waiting for partitioned roll out to finish: ${updated} out of ${desired - partition} new pods have been updated...`,
      done: false,
    };
  }
  return { message: `partitioned roll out complete: ${updated} new pods have been updated...`, done: true };
}

function statefulSetStatus(sts: Workload): RolloutStatus {
  const strategy = sts.spec?.updateStrategy;
  if ((strategy?.type ?? 'RollingUpdate') !== 'RollingUpdate')
    throw new CliError('rollout status is only available for RollingUpdate strategy type');
  const s = sts.status ?? {};
  if (!s.observedGeneration || !observed(sts)) return { message: 'Waiting for statefulset spec update to be observed...', done: false };
  const replicas = sts.spec?.replicas ?? 1;
  if ((s.readyReplicas ?? 0) < replicas)
    return { message: `Waiting for ${replicas - (s.readyReplicas ?? 0)} pods to be ready...`, done: false };
  if (strategy?.rollingUpdate) {
    const partition = Number(strategy.rollingUpdate.partition ?? 0);
    if ((s.updatedReplicas ?? 0) < replicas - partition) {
      return {
        message: `Waiting for partitioned roll out to finish: ${s.updatedReplicas ?? 0} out of ${replicas - partition} new pods have been updated...`,
        done: false,
      };
    }
    return { message: `partitioned roll out complete: ${s.updatedReplicas ?? 0} new pods have been updated...`, done: true };
  }
  if (s.updateRevision !== s.currentRevision) {
    return {
      message: `waiting for statefulset rolling update to complete ${s.updatedReplicas ?? 0} pods at revision ${s.updateRevision}...`,
      done: false,
    };
  }
  return { message: `statefulset rolling update complete ${s.currentReplicas ?? 0} pods at revision ${s.currentRevision}...`, done: true };
}

/** Partition as a pod count (CloneSet's may be a percentage, rounded up as the controller does). */
export function partitionCount(obj: Workload): number {
  const replicas = obj.spec?.replicas ?? 1;
  const p = obj.spec?.updateStrategy?.rollingUpdate?.partition ?? obj.spec?.updateStrategy?.partition ?? 0;
  return getScaledValueFromIntOrPercent(p, replicas, true);
}

function cloneSetStatus(cs: Workload): RolloutStatus {
  const replicas = cs.spec?.replicas ?? 1;
  const s = cs.status ?? {};
  const partition = partitionCount(cs);
  if (partition > 0 && (s.updatedReplicas ?? 0) < replicas - partition) {
    return {
      message: `Waiting for partitioned roll out to finish: ${s.updatedReplicas ?? 0} out of ${replicas - partition} new pods have been updated...`,
      done: false,
    };
  }
  if (!s.observedGeneration || !observed(cs)) return { message: 'Waiting for CloneSet spec update to be observed...', done: false };
  if ((s.readyReplicas ?? 0) < replicas)
    return { message: `Waiting for ${replicas - (s.readyReplicas ?? 0)} pods to be ready...`, done: false };
  // Done with the partition: kruise-tools' completion line (scripts grep for it), under the stricter rule above.
  if (partition === 0 && (s.updatedReplicas ?? 0) < replicas) {
    return {
      message: `Waiting for CloneSet rolling update to complete: ${s.updatedReplicas ?? 0} out of ${replicas} new pods have been updated...`,
      done: false,
    };
  }
  return { message: `CloneSet rolling update complete ${s.availableReplicas ?? 0} pods at revision ${s.updateRevision}...`, done: true };
}

function advancedStatefulSetStatus(sts: Workload): RolloutStatus {
  const replicas = sts.spec?.replicas ?? 1;
  const s = sts.status ?? {};
  const partition = Number(sts.spec?.updateStrategy?.rollingUpdate?.partition ?? 0);
  if ((sts.spec?.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate' && (s.updatedReplicas ?? 0) < replicas - partition) {
    return {
      message: `Waiting for partitioned roll out to finish: ${s.updatedReplicas ?? 0} out of ${replicas - partition} new pods have been updated...`,
      done: false,
    };
  }
  if (!s.observedGeneration || !observed(sts))
    return { message: 'Waiting for Advanced StatefulSet spec update to be observed...', done: false };
  if ((s.readyReplicas ?? 0) < replicas)
    return { message: `Waiting for ${replicas - (s.readyReplicas ?? 0)} pods to be ready...`, done: false };
  return {
    message: `Advanced StatefulSet rolling update complete ${s.availableReplicas ?? 0} pods at revision ${s.updateRevision}...`,
    done: true,
  };
}
