// Schema building blocks for the kind modules. Every Kruise type is written once as a TypeBox
// schema; its TS type (Static<>), its CRD openAPIV3Schema (src/apis/crd.ts) and runtime validation
// (src/apis/validate.ts) all derive from that one definition. The helpers only produce shapes that
// are legal in a structural CRD schema, so whatever is written with them can be emitted as-is.
// Kind modules import everything they need from here.

import { Type, type SchemaOptions, type Static, type TObject, type TProperties, type TSchema } from '@sinclair/typebox';
import { JobTemplateSpec, ObjectMeta, PersistentVolumeClaim, PodTemplateSpec } from './core.ts';
import { DecodedAs, Int64, KnownString, Opt, PreservedObject, Schemaless, Str, StringEnum, Time } from './primitives.ts';

export * from './primitives.ts';
export {
  ContainerPort,
  ExecAction,
  HTTPGetAction,
  LabelSelector,
  LabelSelectorRequirement,
  LocalObjectReference,
  NodeSelectorTerm,
  ObjectFieldSelector,
  ObjectMeta,
  ObjectReference,
  PreferredSchedulingTerm,
  Probe,
  TCPSocketAction,
  Toleration,
} from './core.ts';

// ---------------------------------------------------------------------------------------------
// Embedded Kubernetes types (upstream Kruise CRDs keep them schemaless).

export const PodTemplate = (o?: SchemaOptions) => Schemaless<PodTemplateSpec>(o, PodTemplateSpec);
export const PersistentVolumeClaimTemplates = (o?: SchemaOptions) =>
  Schemaless<PersistentVolumeClaim[]>(o, Type.Array(PersistentVolumeClaim));
export const JobTemplate = (o?: SchemaOptions) => Schemaless<JobTemplateSpec>(o, JobTemplateSpec);
/** runtime.RawExtension patch documents. */
export const RawPatch = (o?: SchemaOptions) => Schemaless<Record<string, unknown>>(o);
/** ObjectMeta nested in a template (kept verbatim, so labels and annotations survive). */
export const TemplateMetadata = (o?: SchemaOptions) => PreservedObject<Static<typeof ObjectMeta>>(o, ObjectMeta);

// ---------------------------------------------------------------------------------------------
// meta/v1

/** metav1.Condition, with the validation Kubernetes generates for it. */
export const MetaCondition = Type.Object({
  type: Str({
    maxLength: 316,
    pattern: '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
  }),
  status: StringEnum(['True', 'False', 'Unknown']),
  observedGeneration: Opt(Int64({ minimum: 0 })),
  lastTransitionTime: Time(),
  reason: Str({ maxLength: 1024, minLength: 1, pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$' }),
  message: Str({ maxLength: 32768 }),
});
export type MetaCondition = Static<typeof MetaCondition>;

export type ConditionStatus = 'True' | 'False' | 'Unknown';

/**
 * The condition struct most Kruise kinds declare for themselves: `type` and `status` required,
 * lastTransitionTime/reason/message optional; `extra` adds per-kind fields such as lastUpdateTime
 * or lastProbeTime.
 */
export function KruiseCondition<T extends TSchema, E extends TProperties = Record<never, never>>(type: T, extra?: E) {
  return Type.Object({
    type,
    status: KnownString<ConditionStatus>(),
    ...(extra ?? ({} as E)),
    lastTransitionTime: Opt(Time()),
    reason: Opt(Str()),
    message: Opt(Str()),
  });
}

// ---------------------------------------------------------------------------------------------
// Top-level object

// The apiserver only permits `type: object` for the root metadata (it validates ObjectMeta
// itself); TS and the webhooks' shape check still see ObjectMeta.
const RootMetadata = Type.Unsafe<Static<typeof ObjectMeta>>({ ...Type.Object({}), [DecodedAs]: ObjectMeta });

export function KubeObject<Spec extends TSchema, Status extends TSchema>(description: string, spec: Spec, status: Status) {
  return Type.Object(
    {
      apiVersion: Opt(Str()),
      kind: Opt(Str()),
      metadata: Opt(RootMetadata),
      spec: Opt(spec),
      status: Opt(status),
    },
    { description },
  );
}

// ---------------------------------------------------------------------------------------------
// CRD-only metadata attached to a kind

export interface PrinterColumn {
  name: string;
  type: 'integer' | 'number' | 'string' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  priority?: number;
}

export interface ScaleSubresource {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

export interface VersionDefinition {
  name: string;
  schema: TObject;
  printerColumns: readonly PrinterColumn[];
  scale?: ScaleSubresource;
}

export type Scope = 'Namespaced' | 'Cluster';

export interface KindDefinition {
  group: string;
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  scope: Scope;
  shortNames: readonly string[];
  categories: readonly string[];
  /**
   * The version controllers, webhooks and the daemon work with (behaviour spec §0): v1beta1 where the
   * kind has one. The cluster may serve only v1alpha1 (OpenKruise v1.8.2's API versions, the
   * default): the client then converts at the wire (src/runtime/wire-versions.ts).
   */
  hubVersion: string;
  /** Every version Kruise TS knows, ordered as the CRD lists them; which are served is an API version set's choice (registry.ts). */
  versions: readonly VersionDefinition[];
}

export interface KindInput {
  group: string;
  kind: string;
  plural: string;
  scope: Scope;
  shortNames?: readonly string[];
  categories?: readonly string[];
  hubVersion: string;
  versions: readonly VersionDefinition[];
}

export function defineKind(input: KindInput): KindDefinition {
  if (!input.versions.some((v) => v.name === input.hubVersion)) {
    throw new Error(`${input.kind}: hub version ${input.hubVersion} is not among its versions`);
  }
  return {
    group: input.group,
    kind: input.kind,
    listKind: `${input.kind}List`,
    plural: input.plural,
    singular: input.kind.toLowerCase(),
    scope: input.scope,
    shortNames: input.shortNames ?? [],
    categories: input.categories ?? [],
    hubVersion: input.hubVersion,
    versions: [...input.versions].sort((a, b) => a.name.localeCompare(b.name)),
  };
}

/** The AGE column every workload CRD ends with. */
export const AGE_COLUMN: PrinterColumn = {
  name: 'AGE',
  type: 'date',
  jsonPath: '.metadata.creationTimestamp',
  description:
    'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.',
};

export const REPLICAS_SCALE: ScaleSubresource = {
  specReplicasPath: '.spec.replicas',
  statusReplicasPath: '.status.replicas',
  labelSelectorPath: '.status.labelSelector',
};
