// The contract between admission logic and the webhook server. Each resource's webhook module
// (src/webhooks/<resource>/) exports pure functions of these shapes plus a WebhookRegistration;
// src/runtime's webhook server turns AdmissionReviews into calls and JSON patches.
import type { FeatureGates } from '../../apis/features.ts';
import type { FieldError } from '../../apis/field-errors.ts';
import type { PubBudgetGuard } from '../pub-budget.ts';
import type { ResourceType } from '../resources.ts';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface UserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
}

/** What a webhook function may know about the request besides the objects. */
export interface AdmissionContext {
  operation: Operation;
  /** apiVersion of the object as sent (e.g. apps.kruise.io/v1alpha1). */
  apiVersion: string;
  namespace?: string;
  name?: string;
  /** The stored object an UPDATE changes, decoded as the object is. */
  oldObject?: unknown;
  userInfo: UserInfo;
  dryRun: boolean;
  features: FeatureGates;
  /** Reads other objects (e.g. the pod a CRR targets); absent in pure unit tests. */
  reader?: AdmissionReader;
  /**
   * Reads objects from the manager's informer caches: what hot-path webhooks (pods) use, so that
   * admitting a pod never waits on a live API call. Absent in pure unit tests.
   */
  cache?: AdmissionCache;
  /**
   * Takes PodUnavailableBudget for pod disruptions (shared with the workload controllers of this
   * process); absent when neither PUB gate is on, and in pure unit tests.
   */
  pubBudget?: PubBudgetGuard;
  /**
   * Status writes with optimistic concurrency, for the webhooks that keep books on another object
   * (WorkloadSpread reserves a subset slot per pod). Absent in pure unit tests.
   */
  writer?: AdmissionWriter;
}

export interface AdmissionWriter {
  /** PUT …/status carrying obj's resourceVersion: a stale one fails with a 409 Conflict. */
  updateStatus<T>(apiVersion: string, kind: string, obj: T): Promise<T>;
}

/**
 * Informer-backed reads. The first read of a kind opens (or joins) its informer and waits, at most
 * a bounded time, for its initial list; later reads are in-memory.
 */
export interface AdmissionCache {
  list<T = unknown>(apiVersion: string, kind: string, opts?: { namespace?: string }): Promise<T[]>;
  get<T = unknown>(apiVersion: string, kind: string, name: string, namespace?: string): Promise<T | undefined>;
}

export interface AdmissionReader {
  get<T = unknown>(apiVersion: string, kind: string, name: string, namespace?: string): Promise<T | null>;
  list<T = unknown>(apiVersion: string, kind: string, opts: { namespace?: string; labelSelector?: string }): Promise<T[]>;
  /** Lists any served resource, e.g. the objects of a CustomResourceDefinition (all namespaces when none is given). */
  listResource?<T = unknown>(type: ResourceType, opts: { namespace?: string }): Promise<T[]>;
}

/**
 * A denial that is not a list of field errors: upstream answers some requests with
 * admission.Errored(code, plain message) — mutating webhooks that refuse (CRR), validators whose
 * rules return bare errors (ImagePullJob, NodeImage), deletion protection. Webhook functions throw
 * it; the server answers `allowed: false` with this code and message.
 */
export class AdmissionDenied extends Error {
  override name = 'AdmissionDenied';
  constructor(
    message: string,
    /** HTTP status upstream answers with: 400 bad request, 403 forbidden, 422 invalid, 500 internal. */
    readonly code: 400 | 403 | 422 | 500 = 400,
  ) {
    super(message);
  }
}

/** Field errors deny the request with a 422-style message naming each field; [] allows it. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- registrations hold validators of many object types; the server hands each the decoded object its registration's kind describes
export type Validator<T = any> = (obj: T, old: T | undefined, ctx: AdmissionContext) => FieldError[] | Promise<FieldError[]>;

/** Mutates obj in place (the server hands it a private copy and diffs it into a JSON patch). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as Validator: one slot for defaulters of every object type
export type Defaulter<T = any> = (obj: T, ctx: AdmissionContext) => void | Promise<void>;

export interface WebhookRegistration {
  /** Group and plural resource, e.g. apps.kruise.io / clonesets; '' for the core group. */
  group: string;
  resource: string;
  /** API versions the rules match. */
  versions: string[];
  operations: Operation[];
  /** Served at /mutate-<group with dots as dashes>-<version>-<singular> like kruise-manager, when set. */
  mutate?: Defaulter;
  validate?: Validator;
  /** Feature gate that must be on for the webhook to be registered. */
  gate?: keyof FeatureGates;
  /**
   * Operations registered only while a gate is on, e.g. DELETE only for deletion protection: an
   * operation registered with failurePolicy Fail needs a running manager, so one no feature needs
   * would only block (a namespace's deletion, with the manager down).
   */
  operationGates?: Partial<Record<Operation, keyof FeatureGates | ReadonlyArray<keyof FeatureGates>>>;
  failurePolicy?: 'Fail' | 'Ignore';
  /**
   * CEL conditions (admissionregistration v1 matchConditions) a request must meet to be sent at all:
   * what the webhook would never judge does not depend on a running manager.
   */
  matchConditions?: ReadonlyArray<{ name: string; expression: string }>;
  /** The API server's wait for an answer before failurePolicy applies; default BuildOptions.timeoutSeconds. */
  timeoutSeconds?: number;
  /**
   * Requests from kube-system and the manager's own namespace never reach this webhook
   * (namespaceSelector on kubernetes.io/metadata.name): the control plane and Kruise itself can
   * always start pods, even when the webhook is down.
   */
  excludeSystemNamespaces?: boolean;
}
