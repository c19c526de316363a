// Kind → resource mapping from API discovery (what upstream gets from controller-runtime's
// RESTMapper and the scale client's discovery resolver): any apiVersion + kind the API server
// serves — built-in, Kruise, or a third-party CRD — resolves to the ResourceType the client
// addresses, and says whether the resource has a `scale` subresource.
//
// Each group version's discovery document is read once and cached for the process. A kind the
// cached document lacks (a CRD installed after the first read) re-reads that group version, at most
// once per missRefreshMs, so a reconcile that keeps asking for an unserved kind does not turn into a
// discovery call per reconcile.
import { kindFor, parseApiVersion } from '../apis/registry.ts';
import { realClock, type Clock } from '../util/clock.ts';
import type { KubeClient } from './client.ts';
import type { APIResourceList, ResourceType } from './resources.ts';

export interface ResourceMapping extends ResourceType {
  /** Whether `<resource>/scale` is served (autoscaling/v1 Scale). */
  readonly scale: boolean;
}

export interface RestMapperOptions {
  clock?: Clock;
  /** Least time between two discovery reads of one group version caused by a missing kind. */
  missRefreshMs?: number;
}

interface GroupVersionEntry {
  byKind: Map<string, ResourceMapping>;
  readAt: number;
}

/** The mappings of one discovery document, by kind (subresources left out, their flags folded in). */
export function mappingsOf(group: string, version: string, list: APIResourceList | undefined): Map<string, ResourceMapping> {
  const byKind = new Map<string, ResourceMapping>();
  const resources = list?.resources ?? [];
  const subresources = new Set(resources.filter((r) => r.name.includes('/')).map((r) => r.name));
  for (const r of resources) {
    if (r.name.includes('/')) continue;
    // Several resources may share a kind (e.g. an alias); the first listed is the canonical one, as
    // the upstream mapper's priority order.
    if (byKind.has(r.kind)) continue;
    byKind.set(r.kind, {
      group,
      version,
      resource: r.name,
      kind: r.kind,
      namespaced: r.namespaced,
      scale: subresources.has(`${r.name}/scale`),
    });
  }
  return byKind;
}

export class RestMapper {
  private readonly clock: Clock;
  private readonly missRefreshMs: number;
  private readonly groupVersions = new Map<string, GroupVersionEntry>();
  /** One discovery read per group version at a time; concurrent askers share it. */
  private readonly reading = new Map<string, Promise<GroupVersionEntry>>();

  constructor(
    private readonly client: Pick<KubeClient, 'discoverResources'>,
    opts: RestMapperOptions = {},
  ) {
    this.clock = opts.clock ?? realClock;
    this.missRefreshMs = opts.missRefreshMs ?? 5_000;
  }

  /**
   * The mapping of apiVersion + kind, or undefined when the API server does not serve that kind. A
   * Kruise kind asked for at a version the cluster does not serve maps at that version when another
   * version of it is served: the client converts (src/runtime/wire-versions.ts).
   */
  async mapping(apiVersion: string, kind: string): Promise<ResourceMapping | undefined> {
    const { group, version } = parseApiVersion(apiVersion);
    const served = await this.discovered(group, version, kind);
    if (served) return served;
    const def = kindFor(group, kind);
    if (!def?.versions.some((v) => v.name === version)) return undefined;
    for (const other of def.versions) {
      const elsewhere = other.name === version ? undefined : await this.discovered(group, other.name, kind);
      if (elsewhere) return { ...elsewhere, version };
    }
    return undefined;
  }

  private async discovered(group: string, version: string, kind: string): Promise<ResourceMapping | undefined> {
    if (!version || !kind) return undefined;
    const key = `${group}/${version}`;
    let entry = this.groupVersions.get(key);
    const found = entry?.byKind.get(kind);
    if (found) return found;
    if (!entry || this.clock.now() - entry.readAt >= this.missRefreshMs) entry = await this.read(key, group, version);
    return entry.byKind.get(kind);
  }

  /** As mapping, but a kind the API server does not serve is an error naming it. */
  async resourceFor(apiVersion: string, kind: string): Promise<ResourceMapping> {
    const mapping = await this.mapping(apiVersion, kind);
    if (!mapping) throw new Error(`no resource of kind ${kind} is served in ${apiVersion}`);
    return mapping;
  }

  private read(key: string, group: string, version: string): Promise<GroupVersionEntry> {
    const pending = this.reading.get(key);
    if (pending) return pending;
    const read = (async () => {
      try {
        const list = await this.client.discoverResources(group, version);
        const entry = { byKind: mappingsOf(group, version, list), readAt: this.clock.now() };
        this.groupVersions.set(key, entry);
        return entry;
      } finally {
        this.reading.delete(key);
      }
    })();
    this.reading.set(key, read);
    return read;
  }
}
