// What every daemon sub-controller is given: the API client, shared informers, the node scope it
// serves, and the process-wide clock, recorder and logger.
import type { FeatureGates } from '../apis/features.ts';
import type { KubeClient } from '../runtime/client.ts';
import type { KubeObject } from '../apis/core-objects.ts';
import type { EventRecorder } from '../runtime/events.ts';
import type { InformerSelector, SharedInformerFactory } from '../runtime/informer-factory.ts';
import type { Logger } from '../runtime/log.ts';
import type { Clock } from '../util/clock.ts';
import type { ContainerRuntime } from './runtime/types.ts';

/**
 * The nodes one daemon process serves: one node on a real host (kruise-daemon runs as a
 * DaemonSet), or every simulated node of the local cluster. Informer selectors narrow the watches
 * on the API server; owns() is the exact check (a label selector cannot name a changing node set).
 */
export interface NodeScope {
  readonly crrSelector: InformerSelector;
  readonly podSelector: InformerSelector;
  /** Objects named after their node: NodeImage, NodePodProbe. */
  readonly nodeNamedSelector: InformerSelector;
  owns(nodeName: string | undefined): boolean;
  /** The runtime of an owned node; undefined while the node is unknown. */
  runtimeFor(nodeName: string): ContainerRuntime | undefined;
  /** Called with a node name when the node joins or leaves the scope. */
  onNodeChange(fn: (nodeName: string) => void): void;
}

export interface DaemonContext {
  client: KubeClient;
  informers: SharedInformerFactory;
  scope: NodeScope;
  recorder: EventRecorder;
  clock: Clock;
  logger: Logger;
  features: FeatureGates;
}

/** A running sub-controller. */
export interface SubController {
  readonly name: string;
  start(): void;
  stop(): Promise<void>;
}

/** Resource versions are etcd revisions: a larger one is a later state of the same object. */
export function newerObject<T extends KubeObject>(a: T | undefined, b: T | undefined): T | undefined {
  if (!a || !b) return a ?? b;
  const ra = Number(a.metadata.resourceVersion);
  const rb = Number(b.metadata.resourceVersion);
  if (Number.isNaN(ra) || Number.isNaN(rb)) return a;
  return rb > ra ? b : a;
}
