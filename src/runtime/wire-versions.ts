// The version a Kruise resource is spoken at on the wire when the cluster does not serve the version
// the code asks for. Controllers, webhooks and the daemon work with each kind's hub version (v1beta1
// where it has one); under OpenKruise v1.8.2's API versions, the default, the CRDs of most kinds serve
// v1alpha1 only. The client then sends and receives v1alpha1 and converts each object at the boundary
// (src/apis/conversion, the same code that answers the CRD conversion webhook), so that a kubectl
// user sees exactly the objects OpenKruise would show and the code still sees one shape.
//
// What a cluster serves is learnt once per resource: from the CRD objects when the caller has read
// them (the manager does at start-up, where discovery may still lag a CRD it just installed), else
// from API discovery on first use.

import { APPS_GROUP, POLICY_GROUP } from '../apis/constants.ts';
import { convert, type KubeObject } from '../apis/conversion/index.ts';
import { kinds } from '../apis/registry.ts';

/** The part of a ResourceType the wire version depends on. */
export interface VersionedResource {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly kind: string;
}

/** What the cluster serves, by `<resource>.<group>`, as a CRD lists it. */
export interface ServedCRD {
  spec?: { group?: string; names?: { plural?: string }; versions?: ReadonlyArray<{ name: string; served?: boolean }> };
}

const CONVERTED_GROUPS: ReadonlySet<string> = new Set([APPS_GROUP, POLICY_GROUP]);

/** Every version Kruise TS knows for a resource, by `<resource>.<group>`. */
const KNOWN_VERSIONS: ReadonlyMap<string, readonly string[]> = new Map(
  kinds.map((def) => [`${def.plural}.${def.group}`, def.versions.map((v) => v.name)]),
);

export type Discover = (group: string, version: string) => Promise<ReadonlyArray<{ name: string }> | undefined>;

export class WireVersions {
  /** `<resource>.<group>` → the versions the cluster serves. */
  private readonly served = new Map<string, readonly string[]>();
  /** One discovery read per resource at a time. */
  private readonly learning = new Map<string, Promise<void>>();

  /** Records what the cluster's CRDs serve (replacing what discovery said). */
  learnFromCRDs(crds: Iterable<ServedCRD>): void {
    for (const crd of crds) {
      const group = crd.spec?.group;
      const plural = crd.spec?.names?.plural;
      if (!group || !plural) continue;
      this.served.set(
        `${plural}.${group}`,
        (crd.spec?.versions ?? []).filter((v) => v.served !== false).map((v) => v.name),
      );
    }
  }

  /**
   * The version to address `type` at: its own when served (or when nothing else is known), else the
   * one version of its kind the cluster serves. Learns through `discover` on the first call for a resource.
   */
  async versionOf(type: VersionedResource, discover: Discover): Promise<string> {
    if (!CONVERTED_GROUPS.has(type.group)) return type.version;
    const key = `${type.resource}.${type.group}`;
    const known = KNOWN_VERSIONS.get(key);
    if (!known || known.length < 2) return type.version;
    if (!this.served.has(key)) await this.learn(key, type, known, discover);
    const served = this.served.get(key);
    if (!served || served.length === 0 || served.includes(type.version)) return type.version;
    return known.find((v) => served.includes(v)) ?? type.version;
  }

  private learn(key: string, type: VersionedResource, known: readonly string[], discover: Discover): Promise<void> {
    let pending = this.learning.get(key);
    if (!pending) {
      pending = (async () => {
        const lists = await Promise.all(known.map((v) => discover(type.group, v)));
        const served = known.filter((_, i) => lists[i]?.some((r) => r.name === type.resource));
        // Nothing served yet (the CRD is not installed): ask again next time.
        if (served.length > 0) this.served.set(key, served);
      })().finally(() => this.learning.delete(key));
      this.learning.set(key, pending);
    }
    return pending;
  }
}

/** `obj` of `type` as received at `wireVersion`, converted to the version the code asked for. */
export function fromWire<T>(type: VersionedResource, wireVersion: string, obj: T): T {
  if (wireVersion === type.version || !isObjectOf(obj, type.kind)) return obj;
  return convert(obj as KubeObject, apiVersionAt(type, type.version)) as T;
}

/** `obj` of `type` (at the version the code works with, or any other it names) converted to `wireVersion`. */
export function toWire<T>(type: VersionedResource, wireVersion: string, obj: T): T {
  if (wireVersion === type.version || !isObjectOf(obj, type.kind)) return obj;
  const withMeta = { ...(obj as KubeObject), apiVersion: (obj as KubeObject).apiVersion ?? apiVersionAt(type, type.version) };
  return convert(withMeta, apiVersionAt(type, wireVersion)) as T;
}

function apiVersionAt(type: VersionedResource, version: string): string {
  return type.group ? `${type.group}/${version}` : version;
}

/** Objects of the resource's own kind convert; Scale, Status and bookmarks pass as they are. */
function isObjectOf(obj: unknown, kind: string): boolean {
  if (typeof obj !== 'object' || obj === null) return false;
  const k = (obj as { kind?: unknown }).kind;
  return k === undefined || k === kind;
}
