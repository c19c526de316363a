// The Mutating/ValidatingWebhookConfigurations that point the API server at the webhook server
// (pkg/webhook/util/configuration), in one of two client modes: URL (https://host:port/path, for a
// manager running outside the cluster, e.g. on 127.0.0.1) or Service
// (kruise-system/kruise-webhook-service, for a manager running in a pod). With self-managed
// certificates the caBundle is written; with external ones it is only checked, since the external
// injector owns it.

import type { LabelSelector } from '../../apis/core.ts';
import type { FeatureGates } from '../../apis/features.ts';
import type { Operation, WebhookRegistration } from './types.ts';
import type { KubeClient } from '../client.ts';
import type { KubeObject } from '../../apis/core-objects.ts';
import { isNotFound } from '../errors.ts';
import { MutatingWebhookConfigurations, ValidatingWebhookConfigurations } from '../resources.ts';
import { serviceDNSName } from './certs.ts';
import { enabledRegistrations, webhookName, webhookPath, type WebhookType } from './paths.ts';
import { isJsonObject } from '../../apis/json.ts';

export const DEFAULT_SERVICE_NAME = 'kruise-webhook-service';
export const MUTATING_WEBHOOK_CONFIGURATION_NAME = 'kruise-mutating-webhook-configuration';
export const VALIDATING_WEBHOOK_CONFIGURATION_NAME = 'kruise-validating-webhook-configuration';

const b64 = (s: string) => Buffer.from(s).toString('base64');

export type ClientMode =
  /** The API server calls https://host:port/path (host may be an IP such as 127.0.0.1). */
  | { mode: 'url'; host: string; port: number }
  /** The API server calls the Service; port defaults to 443. */
  | { mode: 'service'; namespace: string; name: string; port?: number };

/** The DNS name (or IP) the serving certificate must carry for this client mode. */
export function servingNameFor(mode: ClientMode): string {
  return mode.mode === 'url' ? mode.host : serviceDNSName(mode.namespace, mode.name);
}

export interface WebhookClientConfig {
  url?: string;
  service?: { namespace: string; name: string; path?: string; port?: number };
  caBundle?: string;
}

export function clientConfigFor(mode: ClientMode, urlPath: string, caBundlePem?: string): WebhookClientConfig {
  const cc: WebhookClientConfig =
    mode.mode === 'url'
      ? { url: `https://${mode.host.includes(':') ? `[${mode.host}]` : mode.host}:${mode.port}${urlPath}` }
      : { service: { namespace: mode.namespace, name: mode.name, path: urlPath, port: mode.port ?? 443 } };
  if (caBundlePem) cc.caBundle = b64(caBundlePem);
  return cc;
}

export interface RuleWithOperations {
  apiGroups: string[];
  apiVersions: string[];
  operations: Operation[];
  resources: string[];
  scope: '*' | 'Cluster' | 'Namespaced';
}

export interface AdmissionWebhook {
  name: string;
  clientConfig: WebhookClientConfig;
  rules: RuleWithOperations[];
  failurePolicy: 'Fail' | 'Ignore';
  matchPolicy: 'Exact' | 'Equivalent';
  namespaceSelector: LabelSelector;
  objectSelector: LabelSelector;
  sideEffects: 'None';
  timeoutSeconds: number;
  admissionReviewVersions: string[];
  reinvocationPolicy?: 'Never' | 'IfNeeded';
  matchConditions?: Array<{ name: string; expression: string }>;
}

export interface WebhookConfiguration extends KubeObject {
  webhooks?: AdmissionWebhook[];
}

export interface WebhookConfigurationSet {
  mutating: WebhookConfiguration;
  validating: WebhookConfiguration;
}

export interface BuildOptions {
  clientMode: ClientMode;
  features: FeatureGates;
  /** PEM of the CA that signed the serving certificate; omitted → no caBundle (external injection). */
  caBundle?: string;
  mutatingName?: string;
  validatingName?: string;
  /** Default 10 (the API server's default); at most 30. */
  timeoutSeconds?: number;
  /** ANDed into every webhook's selectors, e.g. to confine webhooks to some namespaces. */
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  labels?: Record<string, string>;
  /** The manager's namespace, kept out of webhooks registered with excludeSystemNamespaces. */
  managerNamespace?: string;
}

// config/webhook/patch_manifests.yaml: pod webhooks skip the control plane's namespaces, and
// deletion protection of built-in kinds only sees objects labelled for it.
const controlPlaneExcluded: LabelSelector = { matchExpressions: [{ key: 'control-plane', operator: 'DoesNotExist' }] };
const deleteProtectionOnly: LabelSelector = { matchExpressions: [{ key: 'policy.kruise.io/delete-protection', operator: 'Exists' }] };
const upstreamSelectors: Record<string, { namespaceSelector?: LabelSelector; objectSelector?: LabelSelector }> = {
  'mpod.kb.io': { namespaceSelector: controlPlaneExcluded },
  'vpod.kb.io': { namespaceSelector: controlPlaneExcluded },
  'vpodeviction.kb.io': { namespaceSelector: controlPlaneExcluded },
  'vbuiltindeployment.kb.io': { objectSelector: deleteProtectionOnly },
  'vbuiltinreplicaset.kb.io': { objectSelector: deleteProtectionOnly },
  'vbuiltinstatefulset.kb.io': { objectSelector: deleteProtectionOnly },
  'vcustomresourcedefinition.kb.io': { objectSelector: deleteProtectionOnly },
  'vnamespace.kb.io': { objectSelector: deleteProtectionOnly },
  // Not in upstream's patch (it sends every Service/Ingress deletion): only labelled ones can be
  // refused, so only they need to wait on the manager.
  'vservice.kb.io': { objectSelector: deleteProtectionOnly },
  'vingress.kb.io': { objectSelector: deleteProtectionOnly },
};

/** kube-system and the manager's namespace, by the label the API server sets on every namespace. */
function systemNamespacesExcluded(managerNamespace: string | undefined): LabelSelector {
  const names = [...new Set(['kube-system', ...(managerNamespace ? [managerNamespace] : [])])];
  return { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: names }] };
}

/** Both selectors must hold: labels and expressions are concatenated. */
export function andSelectors(a: LabelSelector | undefined, b: LabelSelector | undefined): LabelSelector {
  const out: LabelSelector = {};
  const labels = { ...a?.matchLabels };
  for (const [k, v] of Object.entries(b?.matchLabels ?? {})) {
    if (k in labels && labels[k] !== v) throw new Error(`conflicting selectors for label ${k}: ${labels[k]} and ${v}`);
    labels[k] = v;
  }
  if (Object.keys(labels).length) out.matchLabels = labels;
  const exprs = [...(a?.matchExpressions ?? []), ...(b?.matchExpressions ?? [])];
  if (exprs.length) out.matchExpressions = structuredClone(exprs);
  return out;
}

const mutatingOperations = new Set<Operation>(['CREATE', 'UPDATE']);

/** The registration's operations whose gate (operationGates; any one of a list) is on. */
export function registeredOperations(reg: WebhookRegistration, features: FeatureGates): Operation[] {
  return reg.operations.filter((o) => {
    const gate = reg.operationGates?.[o];
    if (!gate) return true;
    return typeof gate === 'string' ? features[gate] : gate.some((g) => features[g]);
  });
}

function buildWebhook(type: WebhookType, reg: WebhookRegistration, opts: BuildOptions): AdmissionWebhook | undefined {
  const operations = registeredOperations(reg, opts.features).filter((o) => type === 'validate' || mutatingOperations.has(o));
  if (!operations.length) return undefined;
  const name = webhookName(type, reg);
  const upstream = upstreamSelectors[name] ?? {};
  const excluded = reg.excludeSystemNamespaces ? systemNamespacesExcluded(opts.managerNamespace) : undefined;
  const wh: AdmissionWebhook = {
    name,
    clientConfig: clientConfigFor(opts.clientMode, webhookPath(type, reg), opts.caBundle),
    rules: [{ apiGroups: [reg.group], apiVersions: [...reg.versions], operations, resources: [reg.resource], scope: '*' }],
    failurePolicy: reg.failurePolicy ?? 'Fail',
    matchPolicy: 'Equivalent',
    namespaceSelector: andSelectors(andSelectors(upstream.namespaceSelector, excluded), opts.namespaceSelector),
    objectSelector: andSelectors(upstream.objectSelector, opts.objectSelector),
    sideEffects: 'None',
    timeoutSeconds: reg.timeoutSeconds ?? opts.timeoutSeconds ?? 10,
    admissionReviewVersions: ['v1'],
  };
  if (type === 'mutate') wh.reinvocationPolicy = 'Never';
  if (reg.matchConditions?.length) wh.matchConditions = reg.matchConditions.map((c) => ({ ...c }));
  return wh;
}

/** The full webhook configurations for the enabled registrations, webhooks sorted by name. */
export function buildWebhookConfigurations(regs: readonly WebhookRegistration[], opts: BuildOptions): WebhookConfigurationSet {
  const mutating: AdmissionWebhook[] = [];
  const validating: AdmissionWebhook[] = [];
  for (const reg of enabledRegistrations(regs, opts.features)) {
    const m = reg.mutate ? buildWebhook('mutate', reg, opts) : undefined;
    const v = reg.validate ? buildWebhook('validate', reg, opts) : undefined;
    if (m) mutating.push(m);
    if (v) validating.push(v);
  }
  const byName = (a: AdmissionWebhook, b: AdmissionWebhook) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  for (const list of [mutating, validating]) {
    const seen = new Set<string>();
    for (const w of list) {
      if (seen.has(w.name)) throw new Error(`two registrations produce the webhook ${w.name}`);
      seen.add(w.name);
    }
  }
  const meta = (name: string) => ({ name, ...(opts.labels ? { labels: { ...opts.labels } } : {}) });
  return {
    mutating: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: meta(opts.mutatingName ?? MUTATING_WEBHOOK_CONFIGURATION_NAME),
      webhooks: mutating.sort(byName),
    },
    validating: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: meta(opts.validatingName ?? VALIDATING_WEBHOOK_CONFIGURATION_NAME),
      webhooks: validating.sort(byName),
    },
  };
}

/** Whether every field set in `want` has the same value in `have` (arrays: same length, item by item). */
export function isSubset(want: unknown, have: unknown): boolean {
  if (want === undefined) return true;
  if (Array.isArray(want)) {
    return Array.isArray(have) && want.length === have.length && want.every((w, i) => isSubset(w, have[i]));
  }
  if (typeof want === 'object' && want !== null) {
    if (typeof have !== 'object' || have === null || Array.isArray(have)) return false;
    // The API server drops empty selectors' fields but keeps {}; an empty object matches an absent one.
    return Object.entries(want).every(([k, v]) => isSubset(v, (have as Record<string, unknown>)[k] ?? (isEmptyObject(v) ? {} : undefined)));
  }
  return want === have;
}

function isEmptyObject(v: unknown): boolean {
  return isJsonObject(v) && Object.keys(v).length === 0;
}

/**
 * Creates each configuration, or replaces its webhooks when they differ from the desired ones
 * (other metadata, e.g. labels added by others, is kept). Returns the names written.
 * `beforeWrite` runs right before each write and may refuse it by throwing (leader fencing).
 * With `create: false` a missing configuration is left missing: an installation (the Helm chart)
 * owns them, as upstream's, so an uninstall that deletes them is not undone by a manager that is
 * still shutting down (a configuration left behind would point the pod webhook at nothing).
 */
export async function ensureWebhookConfigurations(
  client: KubeClient,
  desired: WebhookConfigurationSet,
  beforeWrite?: () => Promise<void>,
  opts: { create?: boolean } = {},
): Promise<string[]> {
  // The two are independent: read (and written) together.
  const written = await Promise.all(
    [[MutatingWebhookConfigurations, desired.mutating] as const, [ValidatingWebhookConfigurations, desired.validating] as const].map(
      async ([type, want]): Promise<string | undefined> => {
        const name = want.metadata.name!;
        let have: WebhookConfiguration | undefined;
        try {
          have = await client.get<WebhookConfiguration>(type, name);
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
        if (!have && opts.create === false) return undefined;
        if (!have) {
          await beforeWrite?.();
          await client.create(type, want);
          return name;
        }
        if (isSubset(want.webhooks ?? [], have.webhooks ?? [])) return undefined;
        const labels = { ...have.metadata.labels, ...want.metadata.labels };
        await beforeWrite?.();
        await client.update(type, { ...have, metadata: { ...have.metadata, labels, managedFields: undefined }, webhooks: want.webhooks });
        return name;
      },
    ),
  );
  return written.filter((name) => name !== undefined);
}
