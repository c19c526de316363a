// `kruise sharding unlabel` on the in-memory API server: one ring's shard labels, drain label,
// children note and shard Leases go; another ring's, every other label and annotation, and objects
// never labelled stay; a dry run writes nothing.
import assert from 'node:assert/strict';
import { beforeEach, describe, test } from 'node:test';
import { removeShardLabels } from '../../../src/cli/sharding.ts';
import type { KubeClient } from '../../../src/runtime/client.ts';
import { CloneSets } from '../../../src/runtime/resources.ts';
import { shardLabels } from '../../../src/util/shard-ring.ts';
import { useFakeApiServer, type FakeApiServer } from '../runtime/fake-apiserver.ts';

const PODS = '/v1/pods';
const CLONESETS = `${CloneSets.group}/${CloneSets.version}/clonesets`;
const LEASES = 'coordination.k8s.io/v1/leases';
const RING = shardLabels('kruise-manager');
const OTHER = shardLabels('other');

describe('kruise sharding unlabel', () => {
  let server: FakeApiServer;
  let client: KubeClient;
  useFakeApiServer((s, c) => {
    server = s;
    client = c;
  });

  beforeEach(() => {
    server.put(PODS, { metadata: { namespace: 'a', name: 'web-1', labels: { app: 'web', [RING.shard]: 's1', [OTHER.shard]: 's9' } } });
    server.put(PODS, { metadata: { namespace: 'a', name: 'plain', labels: { app: 'plain' } } });
    server.put(CLONESETS, {
      metadata: {
        namespace: 'a',
        name: 'web',
        labels: { app: 'web', [RING.shard]: 's1', [RING.drain]: 'true' },
        annotations: { note: 'kept', [RING.children]: '{"pods":"12"}' },
      },
    });
    server.put(LEASES, {
      metadata: { namespace: 'kruise-system', name: 'kruise-manager-shard-s1', labels: { [RING.ring]: 'kruise-manager' } },
    });
    server.put(LEASES, { metadata: { namespace: 'kruise-system', name: 'other-shard-s9', labels: { [RING.ring]: 'other' } } });
    server.put(LEASES, { metadata: { namespace: 'kruise-system', name: 'kruise-manager' } });
    server.requests.length = 0;
  });

  test("removes one ring's labels, note and shard Leases, and nothing else", async () => {
    const result = await removeShardLabels(client, { ring: 'kruise-manager', leaseNamespace: 'kruise-system' });
    assert.deepEqual(result, { unlabelled: { pods: 1, clonesets: 1 }, leases: ['kruise-manager-shard-s1'] });
    assert.deepEqual(server.getObject(PODS, 'a/web-1')!.metadata.labels, { app: 'web', [OTHER.shard]: 's9' });
    const cloneSet = server.getObject(CLONESETS, 'a/web')!;
    assert.deepEqual(cloneSet.metadata.labels, { app: 'web' });
    assert.deepEqual(cloneSet.metadata.annotations, { note: 'kept' });
    assert.equal(server.getObject(LEASES, 'kruise-system/kruise-manager-shard-s1'), undefined);
    assert.ok(server.getObject(LEASES, 'kruise-system/other-shard-s9'), "another ring's Lease stays");
    assert.ok(server.getObject(LEASES, 'kruise-system/kruise-manager'), 'the leader Lease stays');
    const writes = server.requests.filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.path}`);
    assert.deepEqual(writes, [
      'PATCH /api/v1/namespaces/a/pods/web-1',
      `PATCH /apis/${CloneSets.group}/${CloneSets.version}/namespaces/a/clonesets/web`,
      'DELETE /apis/coordination.k8s.io/v1/namespaces/kruise-system/leases/kruise-manager-shard-s1',
    ]);
  });

  test('--dry-run reports the same and writes nothing', async () => {
    const lines: string[] = [];
    const result = await removeShardLabels(client, {
      ring: 'kruise-manager',
      leaseNamespace: 'kruise-system',
      dryRun: true,
      log: (line) => lines.push(line),
    });
    assert.deepEqual(result, { unlabelled: { pods: 1, clonesets: 1 }, leases: ['kruise-manager-shard-s1'] });
    assert.deepEqual(lines, [
      'would unlabel pods a/web-1',
      'would unlabel clonesets a/web',
      'would delete shard Lease kruise-system/kruise-manager-shard-s1',
    ]);
    assert.deepEqual(
      server.requests.filter((r) => r.method !== 'GET'),
      [],
    );
  });
});
