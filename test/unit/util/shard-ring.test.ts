import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ShardRing, resourceVersionAtLeast, shardIdFor, shardLabels, workloadKey } from '../../../src/util/shard-ring.ts';

const keys = Array.from({ length: 3000 }, (_, i) => workloadKey('apps.kruise.io', 'CloneSet', `ns-${i % 7}`, `web-${i}`));
const assignment = (ring: ShardRing) => new Map(keys.map((k) => [k, ring.shardFor(k)]));

describe('ShardRing', () => {
  it('has no shard for a key on an empty ring', () => {
    assert.equal(new ShardRing([]).shardFor('x'), undefined);
  });

  it('answers the same whatever order the shards are given in (every replica agrees)', () => {
    assert.deepEqual(assignment(new ShardRing(['a', 'b', 'c'])), assignment(new ShardRing(['c', 'a', 'b', 'a'])));
  });

  it('spreads keys evenly enough over the shards', () => {
    for (const shards of [
      ['a', 'b'],
      ['a', 'b', 'c'],
      ['s1', 's2', 's3', 's4', 's5'],
    ]) {
      const counts = new Map<string, number>();
      for (const shard of assignment(new ShardRing(shards)).values()) counts.set(shard!, (counts.get(shard!) ?? 0) + 1);
      const fair = keys.length / shards.length;
      for (const shard of shards) {
        const n = counts.get(shard) ?? 0;
        assert.ok(n > fair * 0.75 && n < fair * 1.25, `${shard}: ${n} of ${keys.length} over ${shards.length} shards`);
      }
    }
  });

  it('moves only the keys of a shard that leaves, and only towards a shard that joins', () => {
    const three = assignment(new ShardRing(['a', 'b', 'c']));
    const two = assignment(new ShardRing(['a', 'b']));
    for (const [key, shard] of three) if (shard !== 'c') assert.equal(two.get(key), shard, `${key} moved though its shard stayed`);
    let moved = 0;
    for (const [key, shard] of two) {
      if (three.get(key) !== shard) {
        assert.equal(three.get(key), 'c');
        moved++;
      }
    }
    assert.ok(moved > keys.length * 0.25 && moved < keys.length * 0.42, `${moved} keys moved to the joining shard`);
  });
});

describe('shardIdFor', () => {
  it('keeps a DNS-label identity (a pod name) as it is', () => {
    assert.equal(shardIdFor('kruise-controller-manager-7c9f-x2k4p'), 'kruise-controller-manager-7c9f-x2k4p');
  });

  it('makes any identity a DNS label, keeping distinct identities distinct', () => {
    const a = shardIdFor('Host.Example_1a2b3c4d');
    const b = shardIdFor('host-example-1a2b3c4d');
    assert.match(a, /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/);
    assert.notEqual(a, b);
    assert.ok(shardIdFor('x'.repeat(100)).length <= 40);
  });
});

describe('labels and resource versions', () => {
  it('names the labels after the ring under shard.kruise.io', () => {
    assert.deepEqual(shardLabels('kruise-manager'), {
      ring: 'shard.kruise.io/ring',
      shard: 'shard.kruise.io/kruise-manager',
      drain: 'drain.shard.kruise.io/kruise-manager',
      children: 'children.shard.kruise.io/kruise-manager',
    });
  });

  it('compares resource versions as numbers; anything else is never past', () => {
    assert.equal(resourceVersionAtLeast('100', '99'), true);
    assert.equal(resourceVersionAtLeast('99', '100'), false);
    assert.equal(resourceVersionAtLeast('100', '100'), true);
    assert.equal(resourceVersionAtLeast('', '1'), false);
  });
});
