import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  controllerRevisionName,
  equalToRevisionHash,
  fnv1_32,
  fnv1a_32,
  hashControllerRevision,
  marshalGoJSON,
  safeEncodeString,
  shortHash,
} from '../../../src/util/revision.ts';

// Golden values in this file were computed with Go 1.26 (hash/fnv, encoding/json) and
// k8s.io/kubernetes v1.36.3 pkg/controller/history + apimachinery util/rand.

describe('FNV 32-bit', () => {
  // [input, FNV-1, FNV-1a]
  const cases: Array<[string, number, number]> = [
    ['', 2166136261, 2166136261],
    ['a', 84696446, 3826002220],
    ['foobar', 837857890, 3214735720],
    ['hello world', 1418570095, 3582672807],
    ['{"spec":{}}0', 1575608152, 142525770],
  ];
  for (const [input, fnv1, fnv1a] of cases) {
    it(`${JSON.stringify(input)}`, () => {
      assert.equal(fnv1_32(input), fnv1);
      assert.equal(fnv1a_32(input), fnv1a);
      assert.equal(fnv1_32(Buffer.from(input)), fnv1);
      assert.equal(fnv1a_32(new Uint8Array(Buffer.from(input))), fnv1a);
    });
  }

  it('hashes the UTF-8 bytes of strings', () => {
    assert.equal(fnv1_32('é'), fnv1_32(Buffer.from([0xc3, 0xa9])));
  });
});

describe('safeEncodeString', () => {
  it('maps digits into the vowel-free alphabet', () => {
    assert.equal(safeEncodeString('0123456789'), '456789bcdf');
    assert.equal(safeEncodeString('4294967295'), '86f8fbc6f9');
    assert.equal(safeEncodeString(''), '');
  });

  it('encodes per code point', () => {
    assert.equal(safeEncodeString('日本語').length, 3);
    assert.match(safeEncodeString('kube-system'), /^[bcdfghjklmnpqrstvwxz2456789]+$/);
  });
});

describe('ControllerRevision hashing and naming', () => {
  const nginx =
    '{"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null,"labels":{"app":"nginx"}},"spec":{"containers":[{"image":"nginx:1.14.2","name":"nginx","resources":{}}]}}}}';
  const web =
    '{"spec":{"template":{"$patch":"replace","metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"image":"nginx:alpine","name":"main"}]}}}}';
  // [data, collisionCount, expected hash]
  const cases: Array<[string, number | null, string]> = [
    [nginx, null, 'cf9cbc5df'],
    [nginx, 0, '54c58795ff'],
    [nginx, 1, '54c58795fd'],
    [nginx, 7, '54c58795f6'],
    [nginx, 12345, 'b9b96d966'],
    [web, null, '8667d6697b'],
    [web, 0, '897f4dc56'],
    [web, 1, '897f4dc57'],
    [web, 7, '897f4dc5f'],
    [web, 12345, 'c66bb64b9'],
  ];
  for (const [data, collisionCount, want] of cases) {
    it(`${data === nginx ? 'nginx' : 'web'} data, collisionCount ${collisionCount}`, () => {
      assert.equal(hashControllerRevision(data, collisionCount), want);
      assert.equal(hashControllerRevision(Buffer.from(data), collisionCount), want);
    });
  }

  it('an absent collisionCount hashes differently from 0', () => {
    assert.equal(hashControllerRevision(web), hashControllerRevision(web, null));
    assert.notEqual(hashControllerRevision(web), hashControllerRevision(web, 0));
  });

  it('names are <prefix>-<hash>', () => {
    assert.equal(controllerRevisionName('sample-cloneset', nginx, 0), 'sample-cloneset-54c58795ff');
    assert.equal(controllerRevisionName('sample-cloneset', web, 0), 'sample-cloneset-897f4dc56');
  });

  it('cuts the prefix to 223 characters', () => {
    const name = controllerRevisionName('p'.repeat(300), web, 0);
    assert.equal(name, `${'p'.repeat(223)}-897f4dc56`);
    assert.ok(name.length <= 253);
  });
});

describe('short hashes', () => {
  const cases: Array<[string, string]> = [
    ['sample-cloneset-54c58795ff', '54c58795ff'],
    ['54c58795ff', '54c58795ff'],
    ['a-', ''],
    ['', ''],
  ];
  for (const [name, want] of cases) {
    it(`shortHash(${JSON.stringify(name)}) = ${JSON.stringify(want)}`, () => {
      assert.equal(shortHash(name), want);
    });
  }

  // [pod label, revision name, equal]
  const eq: Array<[string | undefined, string, boolean]> = [
    ['demo-54c58795ff', 'demo-54c58795ff', true],
    ['54c58795ff', 'demo-54c58795ff', true],
    ['demo-54c58795ff', '54c58795ff', true],
    ['other-54c58795ff', 'demo-54c58795ff', true],
    ['demo-897f4dc56', 'demo-54c58795ff', false],
    [undefined, 'demo-54c58795ff', false],
    ['', 'demo-54c58795ff', false],
  ];
  for (const [label, revision, want] of eq) {
    it(`equalToRevisionHash(${JSON.stringify(label)}, ${JSON.stringify(revision)}) = ${want}`, () => {
      assert.equal(equalToRevisionHash(label, revision), want);
    });
  }
});

describe('marshalGoJSON', () => {
  it('matches Go json.Marshal of the same map[string]interface{}', () => {
    // Go decoded this input into interface{} and re-marshalled it.
    const input = JSON.parse(
      '{"b":1,"a":[1,2.5,1e+21,1e-7,0.1,-0,123456789012,1.5e+300,5e-324],"é":"x","z":"<tag> & \u2028\u2029 \\u0001\\b\\f\\n\\r\\t \u007f \\"q\\" \\\\ ünï 😀","😀":true,"！":"fullwidth","A":null,"nested":{"y":{},"x":[]},"":"empty"}',
    );
    const goOutput =
      '{"":"empty","A":null,"a":[1,2.5,1e+21,1e-7,0.1,-0,123456789012,1.5e+300,5e-324],"b":1,"nested":{"x":[],"y":{}},"z":"\\u003ctag\\u003e \\u0026 \\u2028\\u2029 \\u0001\\b\\f\\n\\r\\t \u007f \\"q\\" \\\\ ünï 😀","é":"x","！":"fullwidth","😀":true}';
    assert.equal(marshalGoJSON(input), goOutput);
  });

  const cases: Array<[string, unknown, string]> = [
    [
      'revision patch shape',
      { spec: { template: { spec: { containers: [{ name: 'c', image: 'i' }] }, $patch: 'replace' } } },
      '{"spec":{"template":{"$patch":"replace","spec":{"containers":[{"image":"i","name":"c"}]}}}}',
    ],
    ['undefined members are absent', { a: undefined, b: [undefined] }, '{"b":[null]}'],
    ['top-level null', null, 'null'],
    ['lone surrogate becomes U+FFFD', '\ud800x', '"\ufffdx"'],
    ['dates print as RFC 3339 seconds in UTC', { t: new Date('2024-05-06T07:08:09.123Z') }, '{"t":"2024-05-06T07:08:09Z"}'],
  ];
  for (const [name, value, want] of cases) {
    it(name, () => {
      assert.equal(marshalGoJSON(value), want);
    });
  }

  it('rejects values Go cannot encode', () => {
    assert.throws(() => marshalGoJSON({ x: NaN }), /unsupported value/);
    assert.throws(() => marshalGoJSON([Infinity]), /unsupported value/);
  });

  it('feeds revision hashing', () => {
    const patch = {
      spec: {
        template: {
          $patch: 'replace',
          metadata: { creationTimestamp: null, labels: { app: 'nginx' } },
          spec: { containers: [{ name: 'nginx', image: 'nginx:1.14.2', resources: {} }] },
        },
      },
    };
    assert.equal(controllerRevisionName('sample-cloneset', marshalGoJSON(patch), 0), 'sample-cloneset-54c58795ff');
  });
});
