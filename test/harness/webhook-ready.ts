// Whether the API server really calls the manager's defaulting webhook yet. It loads a changed
// webhook configuration asynchronously; a CloneSet admitted before that keeps an undefaulted first
// revision, so its first image change differs in more than the image and cannot go in place.
import type { KubeObject } from '../../src/apis/core-objects.ts';
import type { KubeClient } from '../../src/runtime/client.ts';

/**
 * A CloneSet for a server-side dry run, at v1alpha1: served under either API version set (and by
 * OpenKruise v1.8.2's CRDs).
 */
export const CLONESET_WEBHOOK_PROBE = {
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'CloneSet',
  metadata: { name: 'webhook-probe', namespace: 'default' },
  spec: {
    replicas: 0,
    selector: { matchLabels: { app: 'probe' } },
    template: { metadata: { labels: { app: 'probe' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
  },
};

type Defaulted = typeof CLONESET_WEBHOOK_PROBE & {
  spec: { updateStrategy?: { type?: string }; template: { spec: { containers: Array<{ imagePullPolicy?: string }> } } };
};

const CloneSetsV1alpha1 = {
  group: 'apps.kruise.io',
  version: 'v1alpha1',
  resource: 'clonesets',
  kind: 'CloneSet',
  namespaced: true,
} as const;

/** The probe as a dry-run create returns it (undefined while the create fails). */
export async function dryRunCloneSetProbe(client: KubeClient): Promise<Defaulted | undefined> {
  const out = await client
    .create(CloneSetsV1alpha1, CLONESET_WEBHOOK_PROBE as KubeObject, { namespace: 'default', dryRun: true })
    .catch(() => undefined);
  return out as Defaulted | undefined;
}

/** True once a dry-run CloneSet create comes back defaulted (imagePullPolicy filled in). */
export async function defaultedByWebhook(client: KubeClient): Promise<boolean> {
  return (await dryRunCloneSetProbe(client))?.spec.template.spec.containers[0]?.imagePullPolicy === 'Always';
}
