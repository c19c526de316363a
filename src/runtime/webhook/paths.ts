// The paths and names of kruise-manager's webhooks (kubebuilder markers of pkg/webhook/**,
// config/webhook/manifests.yaml): what the server routes and the configurations point at.

import type { FeatureGates } from '../../apis/features.ts';
import type { WebhookRegistration } from './types.ts';

export type WebhookType = 'mutate' | 'validate';

// Upstream paths that do not follow the <group-with-dashes>-<singular> pattern.
const pathStemOverrides: Record<string, string> = {
  'apiextensions.k8s.io/customresourcedefinitions': 'customresourcedefinition',
  'networking.k8s.io/ingresses': 'ingress',
  'apps.kruise.io/ephemeraljobs': 'apps-kruise-io-v1alpha1-ephemeraljob',
};

/** clonesets → cloneset, ingresses → ingress, pods/eviction → pod. */
export function singularOf(resource: string): string {
  const base = resource.split('/')[0]!;
  if (base.endsWith('sses')) return base.slice(0, -2);
  return base.endsWith('s') ? base.slice(0, -1) : base;
}

/**
 * kruise-manager's path for a registration: /mutate-apps-kruise-io-cloneset, /validate-pod,
 * /validate-apps-deployment, /validate-policy-kruise-io-podunavailablebudget… Upstream serves all
 * versions of a kind on one unversioned path.
 */
export function webhookPath(type: WebhookType, reg: Pick<WebhookRegistration, 'group' | 'resource'>): string {
  const base = reg.resource.split('/')[0]!;
  const stem =
    pathStemOverrides[`${reg.group}/${base}`] ?? [...(reg.group ? [reg.group.replace(/\./g, '-')] : []), singularOf(base)].join('-');
  return `/${type}-${stem}`;
}

/** The webhook's name in the configuration, e.g. mcloneset.kb.io, vbuiltindeployment.kb.io, vpodeviction.kb.io. */
export function webhookName(type: WebhookType, reg: Pick<WebhookRegistration, 'group' | 'resource'>): string {
  const [base, sub] = reg.resource.split('/');
  const builtin = reg.group === 'apps' ? 'builtin' : '';
  return `${type === 'mutate' ? 'm' : 'v'}${builtin}${singularOf(base!)}${sub ?? ''}.kb.io`;
}

/** Registrations whose feature gate (if any) is on. */
export function enabledRegistrations(regs: readonly WebhookRegistration[], features: FeatureGates): WebhookRegistration[] {
  return regs.filter((r) => !r.gate || features[r.gate]);
}
