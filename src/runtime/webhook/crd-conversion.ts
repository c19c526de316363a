// The conversion webhook of every apps.kruise.io / policy.kruise.io CRD, pointed at this manager's
// /convert with the CA bundle (pkg/webhook/util/crd).

import { APPS_GROUP, POLICY_GROUP } from '../../apis/constants.ts';
import { CustomResourceDefinitions, type KubeClient, type KubeObject } from '../client.ts';
import { clientConfigFor, isSubset, type ClientMode, type WebhookClientConfig } from './configuration.ts';

/** The CRD groups whose conversion webhooks point at this manager. */
export const KRUISE_CRD_GROUPS: readonly string[] = [APPS_GROUP, POLICY_GROUP];

interface CRD extends KubeObject {
  spec: {
    group: string;
    versions?: unknown[];
    conversion?: { strategy?: string; webhook?: { clientConfig?: WebhookClientConfig; conversionReviewVersions?: string[] } };
  };
}

/**
 * Points the conversion webhook of every webhook-converted CRD in `groups` at /convert with the
 * CA bundle (upstream crd.Ensure). Returns the CRDs updated. A CRD is written only when its
 * conversion settings differ: every write makes the API server rebuild the CRD's storage and every
 * watch on it relist. `beforeWrite` runs right before each write and may refuse it by throwing.
 */
export async function ensureCRDConversion(
  client: KubeClient,
  mode: ClientMode,
  caBundlePem: string,
  groups: readonly string[] = KRUISE_CRD_GROUPS,
  beforeWrite?: () => Promise<void>,
): Promise<string[]> {
  const want = { clientConfig: clientConfigFor(mode, '/convert', caBundlePem), conversionReviewVersions: ['v1', 'v1beta1'] };
  const crds = await client.listAll<CRD>(CustomResourceDefinitions);
  const updated: string[] = [];
  for (const crd of crds.items) {
    const conv = crd.spec.conversion;
    if (!groups.includes(crd.spec.group) || !crd.spec.versions?.length || conv?.strategy !== 'Webhook') continue;
    const have = conv.webhook;
    if (have && isSubset(want.clientConfig, have.clientConfig) && !extraTarget(want.clientConfig, have.clientConfig)) continue;
    const next: CRD = structuredClone(crd);
    next.metadata.managedFields = undefined;
    next.spec.conversion = { ...conv, webhook: { ...want, clientConfig: { ...want.clientConfig } } };
    await beforeWrite?.();
    await client.update(CustomResourceDefinitions, next);
    updated.push(crd.metadata.name!);
  }
  return updated;
}

/** A URL left over next to a Service (or the reverse) would make the API server reject the object. */
function extraTarget(want: WebhookClientConfig, have: WebhookClientConfig | undefined): boolean {
  return (!want.url && !!have?.url) || (!want.service && !!have?.service);
}
