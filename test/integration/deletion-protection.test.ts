// Deletion protection on the local control plane (spec §20, issue #14's acceptance): with gate
// ResourcesDeletionProtection on (the suite's manager runs with it), each protected kind refuses
// deletion as specified and allows it once the label is removed or the Cascading condition clears;
// `kubectl delete ns` of a Cascading namespace with active pods is refused.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { apply, createNamespace, deleteNamespace, kubectl, waitFor } from '../harness/cluster.ts';

let ns: string;
const extraNamespaces: string[] = [];

before(async () => {
  ns = await createNamespace('dp');
});

after(async () => {
  for (const n of [ns, ...extraNamespaces]) {
    await kubectl(['label', 'namespace', n, 'policy.kruise.io/delete-protection-']).catch(() => undefined);
    await deleteNamespace(n);
  }
  await kubectl(['delete', 'crd', 'widgets.dp.kruise-ts.io', '--wait=false']).catch(() => undefined);
});

const PREFIX = 'forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=';

async function refused(args: string[]): Promise<string> {
  const err = await kubectl(args).then(
    () => undefined,
    (e: Error & { stderr?: string }) => e.stderr ?? e.message,
  );
  assert.ok(err, `${args.join(' ')} was not refused`);
  return err;
}

const deployment = (name: string, replicas: number, protection: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, labels: { 'policy.kruise.io/delete-protection': protection } },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image: 'nginx' }] } },
  },
});

describe('deletion protection', { concurrency: 4 }, () => {
  test('Deployment Always: refused until the label is removed', async () => {
    await apply(deployment('always', 0, 'Always'), ns);
    assert.match(await refused(['-n', ns, 'delete', 'deployment', 'always']), new RegExp(`${PREFIX}Always`));
    await kubectl(['-n', ns, 'label', 'deployment', 'always', 'policy.kruise.io/delete-protection-']);
    await kubectl(['-n', ns, 'delete', 'deployment', 'always']);
  });

  test('Deployment and CloneSet Cascading: refused while replicas > 0, allowed at 0', async () => {
    await apply(deployment('cascade', 2, 'Cascading'), ns);
    assert.match(await refused(['-n', ns, 'delete', 'deployment', 'cascade']), new RegExp(`${PREFIX}Cascading and replicas 2>0`));
    await kubectl(['-n', ns, 'scale', 'deployment', 'cascade', '--replicas=0']);
    await kubectl(['-n', ns, 'delete', 'deployment', 'cascade']);

    await apply(
      {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'CloneSet',
        metadata: { name: 'cs', labels: { 'policy.kruise.io/delete-protection': 'Cascading' } },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'cs' } },
          template: { metadata: { labels: { app: 'cs' } }, spec: { containers: [{ name: 'main', image: 'nginx' }] } },
        },
      },
      ns,
    );
    assert.match(await refused(['-n', ns, 'delete', 'cloneset', 'cs']), new RegExp(`${PREFIX}Cascading and replicas 1>0`));
    await kubectl(['-n', ns, 'scale', 'cloneset', 'cs', '--replicas=0']);
    await kubectl(['-n', ns, 'delete', 'cloneset', 'cs']);
  });

  test('Service Always refused; Service Cascading deleted', async () => {
    const svc = (name: string, protection: string) => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, labels: { 'policy.kruise.io/delete-protection': protection } },
      spec: { ports: [{ port: 80 }] },
    });
    await apply(svc('keep', 'Always'), ns);
    await apply(svc('go', 'Cascading'), ns);
    assert.match(await refused(['-n', ns, 'delete', 'service', 'keep']), new RegExp(`${PREFIX}Always`));
    await kubectl(['-n', ns, 'delete', 'service', 'go']);
    await kubectl(['-n', ns, 'label', 'service', 'keep', 'policy.kruise.io/delete-protection-']);
    await kubectl(['-n', ns, 'delete', 'service', 'keep']);
  });

  test('kubectl delete ns with active pods is refused (Cascading); allowed once they are gone', async () => {
    const team = await createNamespace('dp-ns');
    extraNamespaces.push(team);
    await apply(deployment('web', 2, 'Cascading'), team);
    await waitFor(
      '2 pods',
      async () => (await kubectl(['-n', team, 'get', 'pods', '-o', 'name'])).trim().split('\n').filter(Boolean).length === 2,
    );
    await kubectl(['label', 'namespace', team, 'policy.kruise.io/delete-protection=Cascading']);
    assert.match(await refused(['delete', 'namespace', team, '--wait=false']), new RegExp(`${PREFIX}Cascading and active pods 2>0`));
    await kubectl(['-n', team, 'scale', 'deployment', 'web', '--replicas=0']);
    await waitFor('pods gone', async () => (await kubectl(['-n', team, 'get', 'pods', '-o', 'name'])).trim() === '', 60_000, 500);
    await kubectl(['delete', 'namespace', team, '--wait=false']);
  });

  test('CustomResourceDefinition Always: refused until unlabelled', async () => {
    await apply({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.dp.kruise-ts.io', labels: { 'policy.kruise.io/delete-protection': 'Always' } },
      spec: {
        group: 'dp.kruise-ts.io',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
        scope: 'Namespaced',
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }],
      },
    });
    assert.match(await refused(['delete', 'crd', 'widgets.dp.kruise-ts.io']), new RegExp(`${PREFIX}Always`));
    await kubectl(['label', 'crd', 'widgets.dp.kruise-ts.io', 'policy.kruise.io/delete-protection-']);
    await kubectl(['delete', 'crd', 'widgets.dp.kruise-ts.io', '--wait=false']);
  });
});
