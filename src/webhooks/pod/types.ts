// The contract between the pod webhook's handlers (one file per concern) and the pipeline that
// composes them (pipeline.ts): what a handler is asked and how it is registered.
import type { FeatureGates } from '../../apis/features.ts';
import type { FieldError } from '../../apis/field-errors.ts';
import type { Pod } from '../../apis/core-objects.ts';
import type { AdmissionCache, AdmissionContext, AdmissionReader, AdmissionWriter } from '../../runtime/webhook/types.ts';

/** What a pod handler knows besides the pod. */
export interface PodAdmission {
  features: FeatureGates;
  /** Informer-backed reads; without it (pure unit tests of other handlers) nothing is read. */
  cache?: AdmissionCache;
  /** Status writes (WorkloadSpread reserves a subset slot) and the live reads after a lost race. */
  writer?: AdmissionWriter;
  reader?: AdmissionReader;
  dryRun?: boolean;
  now: Date;
  random: () => number;
}

export interface PodMutatingHandler {
  name: string;
  enabled(features: FeatureGates): boolean;
  /** Mutates the new pod in place; true when it changed it. */
  mutate(pod: Pod, req: PodAdmission): boolean | Promise<boolean>;
}

export type PodOperation = 'UPDATE' | 'DELETE' | 'EVICT';

/** What a validating pod handler is asked: the operation and the pods. */
export interface PodValidation {
  operation: PodOperation;
  namespace: string;
  name: string;
  /** The new pod (UPDATE). */
  pod?: Pod;
  /** The pod before the change (UPDATE). */
  oldPod?: Pod;
  /**
   * The pod being deleted (DELETE: the request's oldObject, no read) or evicted (EVICT: an eviction
   * names the pod only, so it is read, once for every handler); undefined for UPDATE or a pod not found.
   */
  leavingPod(): Promise<Pod | undefined>;
  ctx: AdmissionContext;
}

export interface PodValidatingHandler {
  name: string;
  enabled(features: FeatureGates, operation: PodOperation): boolean;
  validate(req: PodValidation): FieldError[] | Promise<FieldError[]>;
}
