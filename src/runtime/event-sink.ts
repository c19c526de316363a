// Where a recorder's Events go: events.k8s.io/v1 through the API, or core v1 Events when the role
// permits only those (upstream's).

import type { Event as KubeEvent, EventSeries, KubeObject } from '../apis/core-objects.ts';
import { PatchType, type KubeClient } from './client.ts';
import { isForbidden, isNamespaceTerminating } from './errors.ts';
import { CoreEvents, Events } from './resources.ts';
import { logger as rootLogger, type Logger } from './log.ts';
import { errMessage } from '../util/errors.ts';

/** The Event writes a recorder needs; KubeClient provides them. */
export interface EventSink {
  create(event: KubeEvent): Promise<KubeEvent>;
  /** Merge-patches the series of an existing Event. */
  patchSeries(event: KubeEvent, series: EventSeries): Promise<KubeEvent>;
}

/**
 * Events through events.k8s.io/v1 while the role permits it. A role that does not (upstream's
 * grants only core `events`) refuses the first write with 403: from then on this process writes
 * the same events as core v1 Events (the API server's own mapping of the two versions), logged once.
 */
export function kubeEventSink(client: KubeClient, log: Logger = rootLogger): EventSink {
  let core = false;
  const refusedByRole = (err: unknown) => isForbidden(err) && !isNamespaceTerminating(err);
  const fallBack = (err: unknown) => {
    if (!core) log.warn({ err: errMessage(err) }, 'events.k8s.io not permitted; writing core v1 Events');
    core = true;
  };
  const patchOptions = (event: KubeEvent) => ({ namespace: event.metadata.namespace, patchType: PatchType.Merge }) as const;
  return {
    async create(event) {
      if (!core) {
        try {
          return await client.create<KubeEvent>(Events, event);
        } catch (err) {
          if (!refusedByRole(err)) throw err;
          fallBack(err);
        }
      }
      const created = await client.create<KubeObject>(CoreEvents, toCoreEvent(event));
      return { ...event, metadata: created.metadata };
    },
    async patchSeries(event, series) {
      if (!core) {
        try {
          return await client.patch<KubeEvent>(Events, event.metadata.name!, { series }, patchOptions(event));
        } catch (err) {
          if (!refusedByRole(err)) throw err;
          fallBack(err);
        }
      }
      const patched = await client.patch<KubeObject>(CoreEvents, event.metadata.name!, { series }, patchOptions(event));
      return { ...event, series, metadata: patched.metadata };
    },
  };
}

/** An events.k8s.io/v1 Event as core v1 spells it. */
export function toCoreEvent(e: KubeEvent): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: e.metadata,
    involvedObject: e.regarding,
    ...(e.related ? { related: e.related } : {}),
    reason: e.reason,
    message: e.note,
    type: e.type,
    action: e.action,
    eventTime: e.eventTime,
    ...(e.series ? { series: e.series } : {}),
    reportingComponent: e.reportingController,
    reportingInstance: e.reportingInstance,
  } as KubeObject;
}
