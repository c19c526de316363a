// SidecarSet resourcesPolicy at injection, term for term with upstream master's
// sidecarset_resources.go and the proposal's stories (docs/proposals/20250913-sidecarset-dynamic-
// resources-when-creating.md): target containers, sum/max aggregation, unlimited limits, missing
// requests as 0, expression results, refusals.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { SidecarContainer } from '../../../src/apis/apps/sidecarset.ts';
import type { Container } from '../../../src/apis/core.ts';
import type { Pod } from '../../../src/apis/core-objects.ts';
import { injectSidecarSets } from '../../../src/webhooks/pod/sidecarset.ts';
import { aggregateResources, applyResourcesPolicy, resourcesPolicyTargets } from '../../../src/webhooks/pod/sidecarset-resources.ts';
import { formatQuantity } from '../../../src/apis/quantity.ts';
import type { StoredSidecarSet } from '../../../src/util/sidecarset.ts';

type Resources = { limits?: Record<string, string>; requests?: Record<string, string> };
const container = (name: string, resources: Resources = {}): Container => ({ name, image: 'nginx:1.14.2', resources });
const pod = (containers: Container[], initContainers: Container[] = []): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'default', labels: { app: 'web' } },
  spec: { containers, ...(initContainers.length ? { initContainers } : {}) },
});
const v4 = container('large.engine.v4', { limits: { cpu: '200m', memory: '200Mi' }, requests: { cpu: '50m', memory: '100Mi' } });
const v8 = container('large.engine.v8', { limits: { cpu: '400m', memory: '400Mi' }, requests: { cpu: '100m', memory: '200Mi' } });
const PROPOSAL_EXPR = {
  limits: { cpu: 'max(cpu*50%, 50m)', memory: '200Mi' },
  requests: { cpu: 'max(cpu*50%, 50m)', memory: '100Mi' },
};
const sidecar = (policy: NonNullable<SidecarContainer['resourcesPolicy']>): SidecarContainer => ({
  name: 'sidecar1',
  image: 'centos:6.7',
  resourcesPolicy: policy,
});
const apply = (s: SidecarContainer, p: Pod, sidecarNames: string[] = ['sidecar1']) => {
  const c = structuredClone(s);
  applyResourcesPolicy(c, p, new Set(sidecarNames));
  return c.resources;
};

describe('resourcesPolicy: the proposal stories', () => {
  test('story 1, one container by name: limits cpu max(200m×50%, 50m) = 100m, requests cpu max(25m, 50m) = 50m', () => {
    const got = apply(
      sidecar({ targetContainersMode: 'sum', targetContainersNameRegex: '^large.engine.v4$', resourcesExpr: PROPOSAL_EXPR }),
      pod([v4, v8]),
    );
    assert.deepEqual(got, { limits: { cpu: '100m', memory: '200Mi' }, requests: { cpu: '50m', memory: '100Mi' } });
  });
  test('story 2, sum: limits cpu (200m+400m)×50% = 300m, requests cpu (50m+100m)×50% = 75m', () => {
    const got = apply(
      sidecar({ targetContainersMode: 'sum', targetContainersNameRegex: '^large.engine.v.*$', resourcesExpr: PROPOSAL_EXPR }),
      pod([v4, v8]),
    );
    assert.deepEqual(got, { limits: { cpu: '300m', memory: '200Mi' }, requests: { cpu: '75m', memory: '100Mi' } });
  });
  test('story 3, max: limits cpu max(200m, 400m)×50% = 200m, requests cpu max(50m, 50m) = 50m', () => {
    const got = apply(
      sidecar({ targetContainersMode: 'max', targetContainersNameRegex: '^large.engine.v.*$', resourcesExpr: PROPOSAL_EXPR }),
      pod([v4, v8]),
    );
    assert.deepEqual(got, { limits: { cpu: '200m', memory: '200Mi' }, requests: { cpu: '50m', memory: '100Mi' } });
  });
  test('story 4, one target without a cpu limit: the sidecar gets no cpu limit; memory from the expression', () => {
    const unlimited = container('large.engine.v9', { limits: { memory: '600Mi' }, requests: { cpu: '100m' } });
    const got = apply(
      sidecar({
        targetContainersMode: 'sum',
        targetContainersNameRegex: '^large',
        resourcesExpr: { limits: { cpu: 'cpu*50%', memory: 'memory*50%' }, requests: { cpu: 'cpu*50%', memory: 'memory*50%' } },
      }),
      pod([v4, unlimited]),
    );
    // memory limits 200Mi + 600Mi = 800Mi → 400Mi; requests cpu 150m → 75m, memory 100Mi (+ none = 0) → 50Mi
    assert.deepEqual(got, { limits: { memory: '400Mi' }, requests: { cpu: '75m', memory: '50Mi' } });
  });
});

describe('resourcesPolicy: aggregation and targets', () => {
  const q = (m: Map<string, import('../../../src/apis/quantity.ts').Quantity>) =>
    Object.fromEntries([...m].map(([k, v]) => [k, formatQuantity(v)]));
  const cases: Array<[string, 'sum' | 'max', Container[], { limits: Record<string, string>; requests: Record<string, string> }]> = [
    ['sum', 'sum', [v4, v8], { limits: { cpu: '600m', memory: '600Mi' }, requests: { cpu: '150m', memory: '300Mi' } }],
    ['max', 'max', [v4, v8], { limits: { cpu: '400m', memory: '400Mi' }, requests: { cpu: '100m', memory: '200Mi' } }],
    [
      'sum: a missing limit makes it unlimited, missing requests add nothing',
      'sum',
      [v4, container('x', { limits: { memory: '1Gi' } })],
      {
        limits: { memory: '1224Mi' },
        requests: { cpu: '50m', memory: '100Mi' },
      },
    ],
    [
      'max: the same',
      'max',
      [container('x', { limits: { cpu: '1' } }), v4],
      { limits: { cpu: '1' }, requests: { cpu: '50m', memory: '100Mi' } },
    ],
    ['sum of zero requests: none', 'sum', [container('a', { requests: { cpu: '0' } })], { limits: {}, requests: {} }],
    ['max keeps a zero request', 'max', [container('a', { requests: { cpu: '0' } })], { limits: {}, requests: { cpu: '0' } }],
    [
      "sum across formats keeps the first addend's",
      'sum',
      [container('a', { limits: { memory: '1Gi', cpu: '0.5' } }), container('b', { limits: { memory: '512Mi', cpu: 1 as never } })],
      {
        limits: { cpu: '1500m', memory: '1536Mi' },
        requests: {},
      },
    ],
  ];
  for (const [name, mode, targets, want] of cases) {
    test(name, () => {
      const got = aggregateResources(targets, mode);
      assert.deepEqual({ limits: q(got.limits), requests: q(got.requests) }, want);
    });
  }

  test('targets: native sidecars first, then containers; plain init containers and injected sidecars are not targets', () => {
    const p = pod(
      [container('main'), container('sidecar1'), container('log')],
      [container('init'), { ...container('proxy'), restartPolicy: 'Always' }],
    );
    assert.deepEqual(
      resourcesPolicyTargets(p, '.*', new Set(['sidecar1'])).map((c) => c.name),
      ['proxy', 'main', 'log'],
    );
    // unanchored, as Go's MatchString
    assert.deepEqual(
      resourcesPolicyTargets(p, 'ai', new Set()).map((c) => c.name),
      ['main'],
    );
  });
});

describe('resourcesPolicy: results and refusals', () => {
  const base = { targetContainersMode: 'sum' as const, targetContainersNameRegex: '.*' };
  test('a number is cores for cpu, and (no `memory` in the text) also milli-based for memory, as upstream', () => {
    const got = apply(sidecar({ ...base, resourcesExpr: { requests: { cpu: '0.25', memory: '1000' } } }), pod([v4]));
    assert.deepEqual(got, { requests: { cpu: '250m', memory: '1k' } });
  });
  test('a number joining a quantity counts in whole units (1000 → 1k)', () => {
    const got = apply(sidecar({ ...base, resourcesExpr: { requests: { memory: 'memory*0 + 1000' } } }), pod([v4]));
    assert.deepEqual(got, { requests: { memory: '1k' } });
  });
  test('a missing request is 0 for the expression', () => {
    const got = apply(sidecar({ ...base, resourcesExpr: { requests: { cpu: 'max(cpu, 10m)' } } }), pod([container('bare')]));
    assert.deepEqual(got, { requests: { cpu: '10m' } });
  });
  test('only limits configured and every target unlimited: empty resources', () => {
    const got = apply(sidecar({ ...base, resourcesExpr: { limits: { cpu: 'cpu' } } }), pod([container('bare')]));
    assert.deepEqual(got, {});
  });
  test('no target container: refused', () => {
    assert.throws(() => apply(sidecar({ ...base, targetContainersNameRegex: '^nothing$', resourcesExpr: PROPOSAL_EXPR }), pod([v4])), {
      name: 'AdmissionDenied',
      code: 400,
      message: 'no containers match the regex pattern "^nothing$"',
    });
  });
  test('a negative result: refused naming the expression', () => {
    assert.throws(() => apply(sidecar({ ...base, resourcesExpr: { requests: { cpu: 'cpu - 1' } } }), pod([v4])), {
      name: 'AdmissionDenied',
      message: 'failed to evaluate CPU requests expression: failed to parse expression "cpu - 1": calculation result is negative: -950m',
    });
  });

  test('through injection: a hot-upgrade sidecar pair both get the computed resources; the SidecarSet is untouched', () => {
    const s: StoredSidecarSet = {
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'SidecarSet',
      metadata: { name: 'mesh', annotations: { 'kruise.io/sidecarset-hash': 'h', 'kruise.io/sidecarset-hash-without-image': 'w' } },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        containers: [
          {
            name: 'envoy',
            image: 'envoy:1',
            podInjectPolicy: 'BeforeAppContainer',
            upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'envoy:empty' },
            resourcesPolicy: { ...base, resourcesExpr: { limits: { cpu: 'cpu*50%' }, requests: { memory: 'memory*25%' } } },
          },
        ],
      },
    };
    const before = structuredClone(s);
    const p = pod([v4, v8]);
    assert.ok(injectSidecarSets(p, [s], { now: new Date('2026-11-24T00:00:00Z'), sortByName: false }));
    const byName = new Map(p.spec!.containers.map((c) => [c.name, c.resources]));
    for (const name of ['envoy-1', 'envoy-2'])
      assert.deepEqual(byName.get(name), { limits: { cpu: '300m' }, requests: { memory: '75Mi' } }, name);
    assert.deepEqual(byName.get('large.engine.v4'), v4.resources);
    assert.deepEqual(s, before);
  });
});
