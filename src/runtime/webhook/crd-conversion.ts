// The conversion webhook of every apps.kruise.io / policy.kruise.io CRD, pointed at this manager's
// /convert with the CA bundle (pkg/webhook/util/crd).

import { APPS_GROUP, POLICY_GROUP } from '../../apis/constants.ts';
import type { KubeClient } from '../client.ts';
import type { KubeObject } from '../../apis/core-objects.ts';
import { CustomResourceDefinitions } from '../resources.ts';
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
  const stale = crds.items.filter((crd) => {
    const conv = crd.spec.conversion;
    if (!groups.includes(crd.spec.group) || !crd.spec.versions?.length || conv?.strategy !== 'Webhook') return false;
    const have = conv.webhook;
    return !(have && isSubset(want.clientConfig, have.clientConfig) && !extraTarget(want.clientConfig, have.clientConfig));
  });
  // All at once: each write waits on the API server rebuilding that CRD's storage (≈0.2 s), and a
  // manager taking over 15 CRDs would otherwise spend seconds here before its caches can sync.
  await Promise.all(
    stale.map(async (crd) => {
      const next: CRD = structuredClone(crd);
      next.metadata.managedFields = undefined;
      next.spec.conversion = { ...crd.spec.conversion, webhook: { ...want, clientConfig: { ...want.clientConfig } } };
      await beforeWrite?.();
      await client.update(CustomResourceDefinitions, next);
    }),
  );
  return stale.map((crd) => crd.metadata.name!);
}

/** A URL left over next to a Service (or the reverse) would make the API server reject the object. */
function extraTarget(want: WebhookClientConfig, have: WebhookClientConfig | undefined): boolean {
  return (!want.url && !!have?.url) || (!want.service && !!have?.service);
}
