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
import { kindFor, kinds, parseApiVersion } from '../apis/registry.ts';
import { realClock, type Clock } from '../util/clock.ts';

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

/** How long discovery's "not served at any version" stands before it is asked again (a CRD installed later). */
const UNSERVED_RECHECK_MS = 5_000;

export class WireVersions {
  /** `<resource>.<group>` → the versions the cluster serves. */
  private readonly served = new Map<string, readonly string[]>();
  /** `<resource>.<group>` → when discovery last found it served at no version. */
  private readonly unservedAt = new Map<string, number>();
  /** One discovery read per resource at a time. */
  private readonly learning = new Map<string, Promise<void>>();

  constructor(private readonly clock: Clock = realClock) {}

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
    const unserved = this.unservedAt.get(key);
    const recheck = unserved === undefined || this.clock.now() - unserved >= UNSERVED_RECHECK_MS;
    if (!this.served.has(key) && recheck) await this.learn(key, type, known, discover);
    const served = this.served.get(key);
    if (!served || served.length === 0 || served.includes(type.version)) return type.version;
    return known.find((v) => served.includes(v)) ?? type.version;
  }

  /**
   * Owner references to a Kruise kind at a version the cluster does not serve, moved to the version
   * it serves: the garbage collector finds an owner through its reference's apiVersion, and a
   * reference it cannot map keeps the dependent alive (OpenKruise v1.8.2's pods name
   * `apps.kruise.io/v1alpha1` owners likewise). The same array when nothing moves.
   */
  async servedOwnerReferences<R extends { apiVersion: string; kind: string }>(refs: R[], discover: Discover): Promise<R[]> {
    let out = refs;
    for (const [i, ref] of refs.entries()) {
      const { group, version } = parseApiVersion(ref.apiVersion);
      const def = CONVERTED_GROUPS.has(group) ? kindFor(group, ref.kind) : undefined;
      if (!def) continue;
      const served = await this.versionOf({ group, version, resource: def.plural, kind: def.kind }, discover);
      if (served === version) continue;
      if (out === refs) out = [...refs];
      out[i] = { ...ref, apiVersion: `${group}/${served}` };
    }
    return out;
  }

  private learn(key: string, type: VersionedResource, known: readonly string[], discover: Discover): Promise<void> {
    let pending = this.learning.get(key);
    if (!pending) {
      pending = (async () => {
        const lists = await Promise.all(known.map((v) => discover(type.group, v)));
        const served = known.filter((_, i) => lists[i]?.some((r) => r.name === type.resource));
        // Nothing served (the CRD is not installed yet): the code's own version, asked again in a while.
        if (served.length > 0) this.served.set(key, served);
        else this.unservedAt.set(key, this.clock.now());
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
