// Whether the API server really calls the manager's defaulting webhook yet. It loads a changed
// webhook configuration asynchronously; a CloneSet admitted before that keeps an undefaulted first
// revision, so its first image change differs in more than the image and cannot go in place.
import type { KubeClient } from '../../src/runtime/client.ts';
import type { KubeObject } from '../../src/apis/core-objects.ts';

const CloneSets = { group: 'apps.kruise.io', version: 'v1beta1', resource: 'clonesets', kind: 'CloneSet', namespaced: true } as const;

/** True once a dry-run CloneSet create comes back defaulted (imagePullPolicy filled in). */
export async function defaultedByWebhook(client: KubeClient): Promise<boolean> {
  const probe = {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'CloneSet',
    metadata: { name: 'webhook-probe', namespace: 'default' },
    spec: {
      replicas: 0,
      selector: { matchLabels: { app: 'probe' } },
      template: { metadata: { labels: { app: 'probe' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
    },
  };
  const out = await client.create(CloneSets, probe as KubeObject, { namespace: 'default', dryRun: true }).catch(() => undefined);
  return (
    (out as (typeof probe & { spec: { template: { spec: { containers: Array<{ imagePullPolicy?: string }> } } } }) | undefined)?.spec
      .template.spec.containers[0]?.imagePullPolicy === 'Always'
  );
}
