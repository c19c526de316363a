// The custom-workload whitelists of the kruise-configuration ConfigMap (upstream
// pkg/util/configuration): `PPS_Watch_Custom_Workload_WhiteList` and
// `WorkloadSpread_Watch_Custom_Workload_WhiteList`, each JSON `{"workloads":[…]}` whose entries are a
// group/version/kind (Go field names, matched case-insensitively as encoding/json does) plus, for
// WorkloadSpread, `replicasPath` and `subResources`. The controllers, the pod webhook and the
// admission of WorkloadSpread / PersistentPodState all read them through here.
import { parseApiVersion } from '../apis/registry.ts';

export interface CustomWorkload {
  group: string;
  version: string;
  kind: string;
  /** WorkloadSpread: where the workload keeps its replicas, e.g. `spec.replicas`. */
  replicasPath?: string;
  /** WorkloadSpread: kinds between the workload and its pods (pods owned by one of these belong to the workload). */
  subResources: CustomWorkload[];
}

/** A JSON object's field by its Go name, matched case-insensitively as encoding/json does. */
function field(obj: Record<string, unknown>, name: string): unknown {
  if (name in obj) return obj[name];
  const key = Object.keys(obj).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : obj[key];
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function entryOf(raw: unknown): CustomWorkload | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  const o = raw as Record<string, unknown>;
  const subs = field(o, 'subResources');
  const replicasPath = str(field(o, 'replicasPath'));
  return {
    group: str(field(o, 'Group')),
    version: str(field(o, 'Version')),
    kind: str(field(o, 'Kind')),
    ...(replicasPath ? { replicasPath } : {}),
    subResources: Array.isArray(subs) ? subs.flatMap((s) => entryOf(s) ?? []) : [],
  };
}

/** The whitelist in a kruise-configuration value: [] when absent; throws on malformed JSON, as upstream's unmarshal. */
export function parseCustomWorkloadWhitelist(raw: string | undefined): CustomWorkload[] {
  if (!raw) return [];
  const doc = JSON.parse(raw) as unknown;
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new Error('the whitelist is not a JSON object');
  const workloads = field(doc as Record<string, unknown>, 'workloads');
  return Array.isArray(workloads) ? workloads.flatMap((w) => entryOf(w) ?? []) : [];
}

/** The whitelist entry for an apiVersion + kind (matched by group and kind, as CustomWorkloadWhiteList.IsValid). */
export function whitelistEntryFor(
  ref: { apiVersion?: string; kind?: string },
  whitelist: readonly CustomWorkload[],
): CustomWorkload | undefined {
  const group = parseApiVersion(ref.apiVersion ?? '').group;
  return whitelist.find((w) => w.kind === ref.kind && w.group === group);
}

export function isWhitelisted(ref: { apiVersion?: string; kind?: string }, whitelist: readonly CustomWorkload[]): boolean {
  return whitelistEntryFor(ref, whitelist) !== undefined;
}

/** Whether the apiVersion + kind is a whitelisted workload or one of their subResources (upstream initializeWorkloadsInWhiteList). */
export function isWhitelistedOrSubResource(ref: { apiVersion?: string; kind?: string }, whitelist: readonly CustomWorkload[]): boolean {
  return isWhitelisted(ref, whitelist) || whitelist.some((w) => isWhitelisted(ref, w.subResources));
}
