import { test } from 'node:test';
import assert from 'node:assert/strict';
import { INPLACE_UPDATE_STATE_ANNOTATION, RUNTIME_CONTAINERS_META_ANNOTATION } from '../../../src/apis/constants.ts';
import { planContainerMeta, podUsesEnvFromMetadata } from '../../../src/daemon/containermeta/plan.ts';
import type { RuntimeContainer } from '../../../src/daemon/runtime/types.ts';
import type { Pod } from '../../../src/apis/core-objects.ts';
import { hashContainer } from '../../../src/util/go-container.ts';
import { envFromMetadataHash, runtimeEnvFromMetadataHash } from '../../../src/util/inplaceupdate.ts';

const container = {
  name: 'app',
  image: 'nginx',
  env: [
    { name: 'VER', valueFrom: { fieldRef: { fieldPath: "metadata.labels['ver']" } } },
    { name: 'X', value: '1' },
  ],
};

function pod(labels: Record<string, string>, annotations: Record<string, string> = {}): Pod {
  return {
    metadata: { name: 'p', namespace: 'ns', labels, annotations },
    spec: { containers: [container, { name: 'side', image: 'busybox' }] } as Pod['spec'],
  };
}
const running = (name: string, env?: Record<string, string>): RuntimeContainer => ({
  name,
  containerID: `containerd://${name}`,
  restartCount: 0,
  state: 'running',
  env,
});
const updating = {
  [INPLACE_UPDATE_STATE_ANNOTATION]: JSON.stringify({
    revision: 'r2',
    updateTimestamp: 'now',
    lastContainerStatuses: {},
    updateEnvFromMetadata: true,
  }),
};

test("the runtime hash equals the manager's expected hash exactly when the env holds today's values", () => {
  assert.equal(runtimeEnvFromMetadataHash(container, { VER: 'v1', X: '1' }), envFromMetadataHash(container, { labels: { ver: 'v1' } }));
  assert.notEqual(runtimeEnvFromMetadataHash(container, { VER: 'v1' }), envFromMetadataHash(container, { labels: { ver: 'v2' } }));
  assert.equal(podUsesEnvFromMetadata(pod({})), true);
  assert.equal(podUsesEnvFromMetadata({ metadata: {}, spec: { containers: [{ name: 'a' }] } as Pod['spec'] }), false);
  const literal = { name: 'a', env: [{ name: 'V', value: 'x', valueFrom: { fieldRef: { fieldPath: "metadata.labels['v']" } } }] };
  assert.equal(podUsesEnvFromMetadata({ metadata: {}, spec: { containers: [literal] } as Pod['spec'] }), false, 'a literal value wins');
});

test('planContainerMeta', () => {
  type Row = [string, Pod, RuntimeContainer[], string[] /* containers in annotation */, string[] /* restarts */];
  const rows: Row[] = [
    [
      'reports running containers with known env',
      pod({ ver: 'v1' }),
      [running('app', { VER: 'v1' }), running('side', {})],
      ['app', 'side'],
      [],
    ],
    ['stale env but no in-place update: report only', pod({ ver: 'v2' }), [running('app', { VER: 'v1' })], ['app'], []],
    [
      'stale env during an env-from-metadata update: restart',
      pod({ ver: 'v2' }, updating),
      [running('app', { VER: 'v1' })],
      ['app'],
      ['app'],
    ],
    ['fresh env during the update: nothing to restart', pod({ ver: 'v2' }, updating), [running('app', { VER: 'v2' })], ['app'], []],
    [
      'unknown env or not running: skipped',
      pod({ ver: 'v2' }, updating),
      [running('app'), { ...running('side', {}), state: 'exited' }],
      [],
      [],
    ],
    [
      'malformed update state: no restart',
      pod({ ver: 'v2' }, { [INPLACE_UPDATE_STATE_ANNOTATION]: '{' }),
      [running('app', { VER: 'v1' })],
      ['app'],
      [],
    ],
  ];
  for (const [name, p, rcs, reported, restart] of rows) {
    const plan = planContainerMeta(p, rcs);
    assert.deepEqual(
      JSON.parse(plan.annotation!).containers.map((c: { name: string }) => c.name),
      reported,
      name,
    );
    assert.deepEqual(
      plan.restart.map((r) => r.name),
      restart,
      name,
    );
  }
  const p = pod({ ver: 'v1' });
  const first = planContainerMeta(p, [running('app', { VER: 'v1' })]);
  const meta = JSON.parse(first.annotation!).containers[0];
  assert.equal(meta.hashes.extractedEnvFromMetadataHash, envFromMetadataHash(container, p.metadata));
  assert.equal(meta.containerID, 'containerd://app');
  assert.equal(meta.hashes.plainHash, hashContainer(container), 'without a kubelet hash: the spec hashed as kubelet v1.30 does');
  assert.equal(meta.hashes.plainHashWithoutResources, 0);
  const kubeletHashed = planContainerMeta(p, [
    { ...running('app', { VER: 'v1' }), specHash: 0xdeadbeef, specHashWithoutResources: 7 },
  ]).annotation!;
  // The kubelet's hashes of the spec the container started from, laid out as v1.8.2's daemon writes them.
  assert.equal(
    kubeletHashed,
    `{"containers":[{"name":"app","containerID":"containerd://app","restartCount":0,"hashes":{"plainHash":${0xdeadbeef},"plainHashWithoutResources":7,"extractedEnvFromMetadataHash":${meta.hashes.extractedEnvFromMetadataHash}}}]}`,
  );
  p.metadata.annotations![RUNTIME_CONTAINERS_META_ANNOTATION] = first.annotation!;
  assert.equal(planContainerMeta(p, [running('app', { VER: 'v1' })]).annotation, undefined, 'unchanged annotation is not rewritten');
});
