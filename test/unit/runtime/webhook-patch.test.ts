import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fjp from 'fast-json-patch';
import { diffJson, patchResponse, type JsonPatchOperation } from '../../../src/runtime/webhook/response.ts';

/** What the admission patch was before diffJson: fast-json-patch on a JSON round trip of the mutated copy. */
const reference = (original: object, mutated: unknown) => fjp.compare(original, JSON.parse(JSON.stringify(mutated)));
const ours = (original: object, mutated: object) => {
  const ops: JsonPatchOperation[] = [];
  diffJson(original, mutated, ops);
  return JSON.parse(JSON.stringify(ops));
};

const pod = () => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'ns', labels: { app: 'a', 'a/b~c': 'x' }, annotations: { k: 'v' } },
  spec: {
    containers: [{ name: 'main', image: 'nginx:1.0', env: [{ name: 'A', value: '1' }] }],
    volumes: [{ name: 'v', emptyDir: {} }],
    tolerations: [{ key: 't', operator: 'Exists' }],
  },
  status: {},
});
type P = ReturnType<typeof pod> & Record<string, any>;

describe('the admission patch (diffJson): the operations fast-json-patch gives on the JSON of the mutated copy', () => {
  const cases: Array<[string, (p: P) => void]> = [
    ['no change', () => undefined],
    [
      'a sidecar injected, an annotation added',
      (p) => {
        p.spec.containers.push({ name: 'sidecar', image: 'busybox', env: [] });
        (p.metadata.annotations as Record<string, string>)['kruise.io/sidecarset-hash'] = '{"s":1}';
      },
    ],
    ['a sidecar injected first', (p) => p.spec.containers.unshift({ name: 'sidecar', image: 'busybox', env: [] })],
    [
      'keys a defaulter left undefined are absent',
      (p) => {
        (p.metadata as any).generateName = undefined;
        (p.spec as any).readinessGates = undefined;
        p.metadata.annotations.k = undefined as unknown as string;
      },
    ],
    ['undefined inside an array is null', (p) => (p.spec.tolerations as unknown[]).push(undefined)],
    [
      'keys removed and replaced, a path with / and ~',
      (p) => {
        delete (p.metadata as any).annotations;
        p.metadata.labels['a/b~c'] = 'y';
        p.spec.containers[0]!.image = 'nginx:2.0';
      },
    ],
    ['an array shortened', (p) => p.spec.volumes.pop()],
    [
      'an object turned into an array and back',
      (p) => {
        (p as any).status = [];
        (p.spec as any).volumes = { v: 1 };
      },
    ],
    [
      'a value turned into null and an object',
      (p) => {
        (p.metadata as any).name = null;
        (p.metadata as any).namespace = { a: 1 };
      },
    ],
  ];
  for (const [name, mutate] of cases) {
    it(name, () => {
      const original = pod();
      const copy = structuredClone(original) as P;
      mutate(copy);
      assert.deepEqual(ours(original, copy), reference(original, copy));
    });
  }

  it('random trees and changes (seeded)', () => {
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const leaf = (): unknown => [1, 'x', true, null, 0, ''][rand(6)];
    const tree = (depth: number): unknown => {
      if (depth === 0 || rand(3) === 0) return leaf();
      if (rand(2) === 0) return Array.from({ length: rand(4) }, () => tree(depth - 1));
      return Object.fromEntries(Array.from({ length: rand(4) }, (_, i) => [`k${rand(5)}${i % 2 ? '/' : ''}`, tree(depth - 1)]));
    };
    const change = (v: any, depth: number): void => {
      if (v === null || typeof v !== 'object') return;
      const keys = Object.keys(v);
      const r = rand(6);
      if (r === 0 && keys.length) delete v[keys[rand(keys.length)]!];
      else if (r === 1 && Array.isArray(v)) v.push(tree(depth));
      else if (r === 1) v[`n${rand(3)}`] = tree(depth);
      else if (r === 2 && keys.length) v[keys[rand(keys.length)]!] = undefined;
      else if (r === 3 && keys.length) v[keys[rand(keys.length)]!] = tree(depth);
      else for (const k of keys) if (rand(2)) change(v[k], depth - 1);
    };
    for (let i = 0; i < 500; i++) {
      const original = { root: tree(4) };
      const copy = structuredClone(original);
      change(copy, 3);
      assert.deepEqual(ours(original, copy), reference(original, copy), JSON.stringify(original));
    }
  });

  it('patchResponse: no difference, no patch', () => {
    assert.deepEqual(patchResponse('u', { a: 1 }, { a: 1, b: undefined }), { uid: 'u', allowed: true });
  });
});
