// Real nodes' naming and addressing (interface names fit Linux's 15 characters, nodes of one
// cluster never share an address or subnet), the one message naming what is missing, and the
// kubelet's place in the binary cache.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '../../../src/cluster/binaries.ts';
import {
  MAX_REAL_NODES,
  nodeIpInterfaceOf,
  realNodeAddresses,
  realNodeName,
  realNodesUnavailableReason,
} from '../../../src/cluster/real-node.ts';

test('real nodes of a cluster get distinct node IPs and non-overlapping /26 pod subnets', () => {
  const seen = new Set<string>();
  for (let i = 0; i < MAX_REAL_NODES; i++) {
    const a = realNodeAddresses('test-real', i);
    assert.match(a.ip, /^10\.245\.\d+\.\d+$/);
    assert.match(a.podCidr, /^10\.246\.\d+\.\d+\/26$/);
    const base = Number(a.podCidr.split('/')[0]!.split('.')[3]);
    assert.equal(base, i * 64);
    assert.equal(Number(a.gateway.split('.')[3]), base + 1);
    assert.ok(!seen.has(a.ip) && !seen.has(a.podCidr));
    seen.add(a.ip).add(a.podCidr);
  }
  assert.equal(realNodeName(2), 'real-2');
});

test('interface names fit in 15 characters and differ between clusters', () => {
  const a = nodeIpInterfaceOf('a-very-long-cluster-name-that-is-still-a-dns-label');
  assert.ok(a.length <= 15, a);
  assert.notEqual(nodeIpInterfaceOf('one'), nodeIpInterfaceOf('two'));
});

test('without the packages, one message names every missing one and how to install them', () => {
  const saved = process.env.PATH;
  process.env.PATH = mkdtempSync(path.join(os.tmpdir(), 'empty-path-'));
  try {
    const reason = realNodesUnavailableReason() ?? '';
    assert.match(reason, /^real nodes need /);
    for (const pkg of ['containerd', 'runc', 'skopeo', 'umoci', 'busybox-static', 'iproute2'])
      assert.ok(reason.includes(pkg), `${pkg} in: ${reason}`);
    assert.match(reason, /hack\/install-node-runtime\.sh installs them/);
    if (process.getuid?.() !== 0) assert.match(reason, /root/);
  } finally {
    process.env.PATH = saved;
  }
});

test('the kubelet is cached beside the control plane, keyed by the same Kubernetes version', () => {
  const cache = mkdtempSync(path.join(os.tmpdir(), 'kruise-ts-cache-'));
  const r = spawnSync('bash', [path.join(repoRoot, 'hack/build-binaries.sh'), '--kubelet', '--print'], {
    encoding: 'utf8',
    env: { ...process.env, KRUISE_TS_CACHE: cache },
  });
  assert.equal(r.status, 1, 'missing in an empty cache');
  assert.match(r.stdout.trim(), new RegExp(`^kubelet=${cache}/bin/kubelet-v1\\.\\d+\\.\\d+$`));
});
