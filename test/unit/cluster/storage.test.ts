// The local cluster's provisioner (src/cluster/storage.ts): which claims get a volume, when a
// volume grows, and which volumes are reclaimed, from the observed claims, volumes and classes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PersistentVolume, StorageClass } from '../../../src/apis/core-objects.ts';
import { defaultStorageClass, LOCAL_VOLUME_PROVISIONER, planStorage, type PVC } from '../../../src/cluster/storage.ts';

const root = '/run/cluster/volumes';
const immediate: StorageClass = {
  metadata: { name: 'fast' },
  provisioner: LOCAL_VOLUME_PROVISIONER,
  volumeBindingMode: 'Immediate',
  reclaimPolicy: 'Delete',
  allowVolumeExpansion: false,
};
const standard = defaultStorageClass();
const foreign: StorageClass = { metadata: { name: 'csi' }, provisioner: 'hostpath.csi.k8s.io' };

function claim(
  name: string,
  opts: { cls?: string; size?: string; annotations?: Record<string, string>; volume?: string; capacity?: string } = {},
): PVC {
  return {
    metadata: { name, namespace: 'ns', uid: `uid-${name}`, annotations: opts.annotations },
    spec: {
      storageClassName: opts.cls ?? 'standard',
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: opts.size ?? '1Gi' } },
      ...(opts.volume ? { volumeName: opts.volume } : {}),
    },
    status: opts.volume ? { phase: 'Bound', capacity: { storage: opts.capacity ?? opts.size ?? '1Gi' } } : { phase: 'Pending' },
  };
}
const handedToUs = { 'volume.kubernetes.io/storage-provisioner': LOCAL_VOLUME_PROVISIONER };

function volume(
  name: string,
  claimName: string,
  opts: { size?: string; phase?: string; cls?: string; ours?: boolean } = {},
): PersistentVolume {
  return {
    metadata: { name, annotations: opts.ours === false ? {} : { 'pv.kubernetes.io/provisioned-by': LOCAL_VOLUME_PROVISIONER } },
    spec: {
      capacity: { storage: opts.size ?? '1Gi' },
      storageClassName: opts.cls ?? 'standard',
      persistentVolumeReclaimPolicy: 'Delete',
      claimRef: { namespace: 'ns', name: claimName, uid: `uid-${claimName}` },
      hostPath: { path: `${root}/${name}`, type: 'DirectoryOrCreate' },
    },
    status: { phase: opts.phase ?? 'Bound' },
  };
}

const plan = (claims: PVC[], volumes: PersistentVolume[] = []) =>
  planStorage({ claims, volumes, classes: [standard, immediate, foreign], volumeRoot: root });

test('the default class is the default, waits for the first consumer, expands and is reclaimed', () => {
  assert.equal(standard.metadata.name, 'standard');
  assert.equal(standard.metadata.annotations?.['storageclass.kubernetes.io/is-default-class'], 'true');
  assert.equal(standard.volumeBindingMode, 'WaitForFirstConsumer');
  assert.equal(standard.allowVolumeExpansion, true);
  assert.equal(standard.reclaimPolicy, 'Delete');
});

test('WaitForFirstConsumer: provisioned only once the scheduler picked a node, pinned to it', () => {
  assert.deepEqual(plan([claim('data', { annotations: handedToUs })]), []);
  const [action] = plan([claim('data', { annotations: { ...handedToUs, 'volume.kubernetes.io/selected-node': 'kwok-node-2' } })]);
  assert.equal(action?.kind, 'provision');
  const pv = action.kind === 'provision' ? action.volume : undefined;
  assert.equal(pv?.metadata.name, 'pvc-uid-data');
  assert.deepEqual(pv?.spec?.claimRef, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: 'ns', name: 'data', uid: 'uid-data' });
  assert.deepEqual(pv?.spec?.capacity, { storage: '1Gi' });
  assert.equal(pv?.spec?.storageClassName, 'standard');
  assert.deepEqual(pv?.spec?.hostPath, { path: `${root}/pvc-uid-data`, type: 'DirectoryOrCreate' });
  assert.deepEqual(pv?.spec?.nodeAffinity?.required?.nodeSelectorTerms[0]?.matchExpressions, [
    { key: 'kubernetes.io/hostname', operator: 'In', values: ['kwok-node-2'] },
  ]);
});

test('Immediate: provisioned as soon as kube-controller-manager hands the claim over, without a node', () => {
  const [action] = plan([claim('data', { cls: 'fast', annotations: handedToUs })]);
  assert.equal(action?.kind, 'provision');
  assert.equal(action.kind === 'provision' && action.volume.spec?.nodeAffinity, undefined);
});

test('no volume for a claim not handed to us, of another provisioner, being deleted, or whose volume exists', () => {
  assert.deepEqual(plan([claim('a', { cls: 'fast' })]), []);
  assert.deepEqual(
    plan([claim('b', { cls: 'csi', annotations: { 'volume.kubernetes.io/storage-provisioner': 'hostpath.csi.k8s.io' } })]),
    [],
  );
  const deleting = claim('c', { cls: 'fast', annotations: handedToUs });
  deleting.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
  assert.deepEqual(plan([deleting]), []);
  assert.deepEqual(plan([claim('d', { cls: 'fast', annotations: handedToUs })], [volume('pvc-uid-d', 'd', { phase: 'Available' })]), []);
});

test('a bound claim asking for more grows its volume when the class allows it', () => {
  assert.deepEqual(plan([claim('data', { size: '2Gi', capacity: '1Gi', volume: 'pvc-uid-data' })], [volume('pvc-uid-data', 'data')]), [
    { kind: 'expand', volume: 'pvc-uid-data', claim: { namespace: 'ns', name: 'data' }, size: '2Gi' },
  ]);
  // Same size in other units: nothing to do.
  assert.deepEqual(
    plan([claim('data', { size: '1024Mi', capacity: '1Gi', volume: 'pvc-uid-data' })], [volume('pvc-uid-data', 'data')]),
    [],
  );
  // Not expandable (the API server refuses such a resize anyway).
  assert.deepEqual(
    plan(
      [claim('data', { cls: 'fast', size: '2Gi', capacity: '1Gi', volume: 'pvc-uid-data' })],
      [volume('pvc-uid-data', 'data', { cls: 'fast' })],
    ),
    [],
  );
  // A volume someone else provisioned is theirs to grow.
  assert.deepEqual(plan([claim('data', { size: '2Gi', volume: 'pv-x' })], [volume('pv-x', 'data', { ours: false })]), []);
});

test('a grown volume whose claim status lags gets the status written again', () => {
  assert.deepEqual(
    plan([claim('data', { size: '2Gi', capacity: '1Gi', volume: 'pvc-uid-data' })], [volume('pvc-uid-data', 'data', { size: '2Gi' })]),
    [{ kind: 'expand', volume: 'pvc-uid-data', claim: { namespace: 'ns', name: 'data' }, size: '2Gi' }],
  );
});

test('released volumes of ours are reclaimed with their directory; others are left alone', () => {
  assert.deepEqual(plan([], [volume('pvc-uid-gone', 'gone', { phase: 'Released' })]), [
    { kind: 'reclaim', volume: 'pvc-uid-gone', directory: `${root}/pvc-uid-gone` },
  ]);
  assert.deepEqual(plan([], [volume('pv-x', 'gone', { phase: 'Released', ours: false })]), []);
  const outside = volume('pvc-uid-odd', 'odd', { phase: 'Released' });
  outside.spec!.hostPath = { path: '/etc' };
  assert.deepEqual(plan([], [outside]), [{ kind: 'reclaim', volume: 'pvc-uid-odd', directory: undefined }]);
});
