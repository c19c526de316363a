// The hashes of apps.kruise.io/runtime-containers-meta against OpenKruise v1.8.2's Go code:
// test/fixtures/go-env-hash.json was computed by hack/go-pod-template (`envhash`, envhash.go:
// GetExpectHash / GetCurrentHash / hashEnvs of pkg/util/containermeta and kubelet v1.30.10's
// HashContainer) on containers chosen for the awkward parts — no env from metadata (still hashed:
// the JSON `null`), literal values and other fieldRefs ignored, missing keys and empty values,
// prototype-looking keys, SidecarSet's version envs, subscripted paths with quotes and brackets,
// non-ASCII and HTML-escaped values, env names in Go string order with duplicates, several
// containers of one pod, a full container spec. A daemon of either implementation and a manager of
// either must agree on these numbers across a takeover.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import type { Container } from '../../../src/apis/core.ts';
import { hashContainer } from '../../../src/util/go-container.ts';
import { envFromMetadataHash, runtimeEnvFromMetadataHash } from '../../../src/util/inplaceupdate.ts';

const fixture = JSON.parse(readFileSync(new URL('../../fixtures/go-env-hash.json', import.meta.url), 'utf8')) as {
  cases: Array<{
    name: string;
    container: Container;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    runtimeEnv?: Record<string, string>;
    extractedEnvFromMetadataHash: number;
    currentEnvHash: number;
    plainHash: number;
  }>;
};

describe('env-from-metadata and plain container hashes equal OpenKruise v1.8.2', () => {
  for (const c of fixture.cases) {
    it(`${c.name}: expected env hash (GetExpectHash)`, () =>
      assert.equal(envFromMetadataHash(c.container, { labels: c.labels, annotations: c.annotations }), c.extractedEnvFromMetadataHash));
    it(`${c.name}: running container's env hash (GetCurrentHash)`, () =>
      assert.equal(runtimeEnvFromMetadataHash(c.container, c.runtimeEnv ?? {}), c.currentEnvHash));
    it(`${c.name}: plain hash (kubelet HashContainer)`, () => assert.equal(hashContainer(c.container), c.plainHash));
  }
});
