// kubectl keys ~/.kube/cache by the API server's host and port only: each local cluster gets its own,
// so a cluster on a port an earlier one used never reads that one's API versions.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { envLines, kubectlCacheDir, kubectlFlags, type ClusterState } from '../../../src/cluster/local-cluster.ts';

const cluster = (name: string) =>
  ({ kubeconfig: `/home/u/.cache/kruise-ts/clusters/${name}/kubeconfig`, kubectl: '/bin/k/kubectl' }) as ClusterState;

test("each cluster's kubectl has a cache of its own, in the cluster's run directory", () => {
  assert.equal(kubectlCacheDir(cluster('a')), '/home/u/.cache/kruise-ts/clusters/a/kubectl-cache');
  assert.notEqual(kubectlCacheDir(cluster('a')), kubectlCacheDir(cluster('b')));
  assert.deepEqual(kubectlFlags(cluster('a')), [
    '--kubeconfig',
    '/home/u/.cache/kruise-ts/clusters/a/kubeconfig',
    '--cache-dir',
    '/home/u/.cache/kruise-ts/clusters/a/kubectl-cache',
  ]);
  assert.deepEqual(envLines(cluster('a')), [
    'export KUBECONFIG=/home/u/.cache/kruise-ts/clusters/a/kubeconfig',
    'export KUBECACHEDIR=/home/u/.cache/kruise-ts/clusters/a/kubectl-cache',
    'export PATH=/bin/k:$PATH',
  ]);
});
