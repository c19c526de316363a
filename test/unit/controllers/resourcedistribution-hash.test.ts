// The hash annotation against upstream OpenKruise v1.8.2, frozen: the values upstream's
// kruise-manager wrote in kruise.io/resourcedistribution.resource.hashcode on the copies of the
// test/harness/rd-hash-fixtures.ts distributions (measured by
// test/integration/resourcedistribution-peer.test.ts on 2026-11-24, where ours wrote the same
// bytes). Copies upstream made keep their hash under Kruise TS, so a takeover rewrites none of them
// for it. The fixtures go in as the API server hands them out, which is what the controller hashes:
// through JSON (numbers as JavaScript reads them) and without null-valued fields, which the API
// server drops from the embedded resource.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { resourceHash, type ResourceDistribution } from '../../../src/controllers/resourcedistribution/plan.ts';
import { RD_HASH_FIXTURES } from '../../harness/rd-hash-fixtures.ts';

const UPSTREAM_V1_8_2_HASHES: Record<string, string> = {
  'rd-hash-plain-configmap': '6cc357c668beafae2a30aadb250cbc96eebeadb9b9f3cee1aa7b24952fdec007',
  'rd-hash-ordering': 'ce474c01af749fe624cc4b2029d0ffc09bb05c08fc804022f5b76bbcede4c68b',
  'rd-hash-escapes': 'fc3ae1346a95627f691d39eda3d1daa08221757c4543f0fa543c28b6a408681b',
  'rd-hash-secret': '510fdb7d30a3a6c5ac5b087cd8ce12fc72b69e0ef044871af225de5f205e8860',
  'rd-hash-tls-secret': '44160a07af522646e8c8bec0feee51d59a7e24a55655c1ec09fadcc03ebc6f51',
  'rd-hash-numbers': '54371791cee8e25f4a92ffcdae36abbf9540bbbeb4ed0909f6a649888c8e5656',
  'rd-hash-binary': '1f84e7fa5a5c0a2f275fe7296b6c3202ee7b5e5df607881d20ff002303ad133a',
};

/** A fixture as the API server serves it back. */
function asServed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(asServed);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => v !== null)
        .map(([k, v]) => [k, asServed(v)]),
    );
  }
  return value;
}

describe('resourceHash is byte-equal to upstream v1.8.2', () => {
  test('every fixture has a frozen upstream value', () => {
    assert.deepEqual(RD_HASH_FIXTURES.map((f) => f.name).sort(), Object.keys(UPSTREAM_V1_8_2_HASHES).sort());
  });
  for (const f of RD_HASH_FIXTURES) {
    test(f.name, () => {
      const rd = {
        metadata: { name: f.name },
        spec: { resource: asServed(JSON.parse(JSON.stringify(f.resource))) as Record<string, unknown> },
      } as unknown as ResourceDistribution;
      assert.equal(resourceHash(rd), UPSTREAM_V1_8_2_HASHES[f.name]);
    });
  }
});
