// What a controller gets from the manager, and what it gives back. Every replica sets controllers up
// at start-up, so their informers fill before leadership (a new leader acts on warm caches); only
// the leader runs their workers.
import type { FeatureGates } from '../apis/features.ts';
import type { KubeClient } from '../runtime/client.ts';
import { Controller, type ReconcileResult } from '../runtime/controller.ts';
import type { EventRecorder } from '../runtime/events.ts';
import type { InformerSource } from '../runtime/informer-factory.ts';
import type { Access } from '../runtime/rbac.ts';
import type { Logger } from '../runtime/log.ts';
import type { PubBudgetGuard } from '../runtime/pub-budget.ts';
import type { RestMapper } from '../runtime/restmapper.ts';

export interface ControllerDeps {
  /** This controller's own client: user agent kruise-manager/<controller>, its own QPS/burst budget. */
  client: KubeClient;
  informers: InformerSource;
  recorder: EventRecorder;
  features: FeatureGates;
  logger: Logger;
  /** --<name>-workers. */
  workers: number;
  /** --expectation-timeout in ms. */
  expectationTimeoutMs: number;
  /**
   * --controller-cache-sync-timeout in ms: how long a cache the controller opens on first use (not
   * declared at setup) may take to sync before the reconcile fails naming it.
   */
  cacheSyncTimeoutMs: number;
  /** Restrict to one namespace ('' = all), from --namespace. */
  namespace: string;
  /** The manager's own namespace (--leader-election-namespace): where cluster-scoped kinds keep namespaced history. */
  managerNamespace: string;
  /** Controller-specific manager flags. */
  flags: Readonly<ControllerFlags>;
  /**
   * The process's kind → resource mapper (API discovery, cached): how controllers address workloads
   * they know only by apiVersion + kind (third-party CRDs a targetRef or whitelist names).
   */
  restMapper: RestMapper;
  /** Whether the API server serves a Kruise kind (same naming as ControllerSetup.kinds). */
  served(kind: string): boolean;
  /**
   * The process's PodUnavailableBudget guard, shared with the pod webhook: the PUB controller
   * writes budgets through it, workload controllers take budget from it before in-place updates.
   * Absent when neither PUB gate is on.
   */
  pubBudget?: PubBudgetGuard;
}

/** The manager flags that belong to one controller (the manager's config is one of these). */
export interface ControllerFlags {
  /** --cloneset-scaling-exclude-preparing-delete. */
  clonesetScalingExcludePreparingDelete: boolean;
  /** --nodeimage-creation-delay in ms. */
  nodeimageCreationDelay: number;
  /** --assign-bcj-pods-by-scheduler: BroadcastJob pods are bound by node-name affinity (else by spec.nodeName). */
  assignBcjPodsByScheduler: boolean;
  /** --default-ttlseconds-for-always-nodeimage. */
  defaultTtlsecondsForAlwaysNodeimage: number;
}

export interface ControllerSetup {
  /** The metrics `controller` label, and the --<name>-workers flag unless workersFlag says otherwise. */
  name: string;
  /** Upstream's spelling of the workers flag when it differs from name (`crr` → --crr-workers). */
  workersFlag?: string;
  /**
   * Upstream's name for the controller's API client (user agent `kruise-manager/<clientName>`, own
   * rate limit) when it is not `<name>-controller`.
   */
  clientName?: string;
  /** Feature gate that must be on, if any (a list: one of them). */
  gate?: keyof FeatureGates | readonly (keyof FeatureGates)[];
  /**
   * Kruise kinds (apps.kruise.io unless `Kind.group`) the controller cannot work without: when the
   * API server does not serve one (its CRD is not installed) the controller is not started, as
   * upstream's discovery check does.
   */
  kinds: readonly string[];
  /**
   * Every API access the controller makes (its informers and its writes): config/rbac/ is generated
   * from these, and the RBAC integration test runs the manager under exactly that role.
   */
  access: readonly Access[];
  /** Asks for informers and registers event handlers (which only enqueue); returns the runner. */
  setup(deps: ControllerDeps): ControllerRunner;
}

export interface ControllerRunner {
  /** Waits for its caches, then reconciles with its workers until signal aborts. */
  run(signal: AbortSignal): Promise<void>;
  /**
   * Whether a round of this key is in flight. Controllers that run sharded (docs/sharding.md) have
   * it: a shard lets go of a workload only once no round of it is writing.
   */
  busy?(key: string): boolean;
}

/** The workqueue and workers of a manager controller: --<name>-workers of them, logging as it. */
export function managerController(name: string, deps: ControllerDeps, reconcile: (key: string) => Promise<ReconcileResult>): Controller {
  return new Controller({ name, reconcile, maxConcurrentReconciles: deps.workers, logger: deps.logger });
}
