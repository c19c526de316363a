// The Kubernetes messages read as protobuf, by the kinds they carry: hack/gen-protobuf.ts keeps
// these and every message they hold; src/runtime/protobuf/codec.ts decodes them.

const CORE = 'k8s.io.api.core.v1';
const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';

/**
 * The kinds whose lists and watches ask for protobuf, with the message of an object and of a list:
 * pods and nodes, the largest lists by far (CRDs are served only as JSON).
 */
export const PROTOBUF_KINDS: Readonly<Record<string, { object: string; list: string }>> = {
  Pod: { object: `${CORE}.Pod`, list: `${CORE}.PodList` },
  Node: { object: `${CORE}.Node`, list: `${CORE}.NodeList` },
};

/** How the API server frames what it sends: an envelope, a watch event, and an error. */
export const FRAMING = {
  unknown: 'k8s.io.apimachinery.pkg.runtime.Unknown',
  watchEvent: `${META}.WatchEvent`,
  status: `${META}.Status`,
} as const;

/** Every message the generated descriptors must hold. */
export const WIRE_ROOTS: readonly string[] = [
  ...Object.values(PROTOBUF_KINDS).flatMap((k) => [k.object, k.list]),
  ...Object.values(FRAMING),
];
