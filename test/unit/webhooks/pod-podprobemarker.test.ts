// The pod webhook's serverless PodProbeMarker hook (gate EnablePodProbeMarkerOnServerless, upstream
// podProbeMarkerMutatingPod): which probes a pod is handed in kruise.io/podprobe, in the bytes
// upstream writes, and kruise.io/podprobemarker-list.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FEATURE_GATE_DEFAULTS, type FeatureGates } from '../../../src/apis/features.ts';
import type { Pod } from '../../../src/apis/core-objects.ts';
import type { AdmissionCache } from '../../../src/runtime/webhook/types.ts';
import { mutatePod } from '../../../src/webhooks/pod/pipeline.ts';
import { podProbeAnnotation, serverlessProbes } from '../../../src/webhooks/pod/podprobemarker.ts';

const features: FeatureGates = { ...FEATURE_GATE_DEFAULTS };
const NOW = new Date('2026-01-01T00:00:00Z');

const probe = (name: string, p: Record<string, any> = {}): any => ({
  name,
  containerName: 'main',
  probe: { exec: { command: ['bash', '/data/probe.sh'] } },
  podConditionType: `game.kruise.io/${name}`,
  markerPolicy: [{ state: 'Succeeded', labels: { ok: 'true' } }],
  ...p,
});
const marker = (name: string, probes: any[], selector: any = { matchLabels: { app: 'game' } }): any => ({
  metadata: { name, namespace: 'ns' },
  spec: { selector, probes },
});
const pod = (o: { labels?: Record<string, string>; annotations?: Record<string, string> } = {}): Pod => ({
  metadata: { name: 'p', namespace: 'ns', labels: o.labels ?? { app: 'game' }, ...(o.annotations ? { annotations: o.annotations } : {}) },
  spec: {
    containers: [{ name: 'main', image: 'x' }],
    initContainers: [
      { name: 'sidecar', image: 'y', restartPolicy: 'Always' },
      { name: 'setup', image: 'z' },
    ],
  },
});
const cache = (markers: any[]): AdmissionCache => ({ list: async () => markers as any, get: async () => undefined });

describe('podProbeAnnotation (Go field order, omitempty, no markerPolicy)', () => {
  test("upstream's documented example", () => {
    assert.equal(
      podProbeAnnotation([
        {
          name: 'healthy',
          containerName: 'minecraft',
          podConditionType: 'game.kruise.io/healthy',
          probe: { periodSeconds: 10, exec: { command: ['bash', '/data/probe.sh'] }, initialDelaySeconds: 0, timeoutSeconds: 3 },
        },
      ]),
      '[{"name":"healthy","containerName":"minecraft","probe":{"exec":{"command":["bash","/data/probe.sh"]},"timeoutSeconds":3,"periodSeconds":10},"podConditionType":"game.kruise.io/healthy"}]',
    );
  });
  test('httpGet, tcpSocket and grpc handlers', () => {
    assert.equal(
      podProbeAnnotation([
        {
          name: 'h',
          containerName: 'c',
          probe: {
            httpGet: { scheme: 'HTTP', port: 'web', path: '/a?b=<c>', httpHeaders: [{ value: 'v', name: 'n' }] },
            failureThreshold: 3,
            successThreshold: 1,
          },
        },
        { name: 't', containerName: 'c', probe: { tcpSocket: { port: 80 } } },
        { name: 'g', containerName: 'c', probe: { grpc: { port: 9000 } } as any },
      ]),
      '[{"name":"h","containerName":"c","probe":{"httpGet":{"path":"/a?b=\\u003cc\\u003e","port":"web","scheme":"HTTP","httpHeaders":[{"name":"n","value":"v"}]},"successThreshold":1,"failureThreshold":3}},' +
        '{"name":"t","containerName":"c","probe":{"tcpSocket":{"port":80}}},' +
        '{"name":"g","containerName":"c","probe":{"grpc":{"port":9000,"service":null}}}]',
    );
  });
});

describe('serverlessProbes', () => {
  const cases: Array<{ name: string; markers: any[]; pod?: Pod; want: { probes: string[]; markers: string[] } }> = [
    { name: 'one marker, one probe', markers: [marker('m', [probe('healthy')])], want: { probes: ['healthy'], markers: ['m'] } },
    {
      name: 'a probe without podConditionType is not handed over (the provider reports through the condition)',
      markers: [marker('m', [probe('a', { podConditionType: undefined })])],
      want: { probes: [], markers: [] },
    },
    {
      name: 'containers the pod lacks are skipped; a restartable init container counts, a plain one not',
      markers: [
        marker('m', [
          probe('a', { containerName: 'other' }),
          probe('b', { containerName: 'sidecar' }),
          probe('c', { containerName: 'setup' }),
        ]),
      ],
      want: { probes: ['b'], markers: ['m'] },
    },
    {
      name: 'the first probe per condition type and per container/name wins',
      markers: [
        marker('a', [probe('x', { podConditionType: 'first' }), probe('y', { podConditionType: 'shared' })]),
        marker('z', [probe('x', { podConditionType: 'other' }), probe('w', { podConditionType: 'shared' })]),
      ],
      want: { probes: ['x', 'y'], markers: ['a'] },
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const got = serverlessProbes(c.pod ?? pod(), c.markers);
      assert.deepEqual({ probes: got.probes.map((p) => p.name), markers: got.markers }, c.want);
      assert.ok(got.probes.every((p) => p.markerPolicy === undefined));
    });
  }
});

describe('mutatePod: PodProbeMarker on serverless', () => {
  const on = { ...features, EnablePodProbeMarkerOnServerless: true };
  test('the same annotations as upstream v1.8.2 (measured on its webhook, 2026-11-24)', async () => {
    const p = pod();
    p.spec!.containers[0]!.ports = [{ name: 'web', containerPort: 8080 }];
    const m = marker('game', [
      {
        name: 'healthy',
        containerName: 'main',
        probe: { exec: { command: ['bash', '/data/probe.sh'] }, periodSeconds: 10, timeoutSeconds: 3 },
        podConditionType: 'game.kruise.io/healthy',
        markerPolicy: [{ state: 'Succeeded', labels: { 'game.kruise.io/healthy': 'true' } }],
      },
      {
        name: 'nocond',
        containerName: 'main',
        probe: { exec: { command: ['x'] } },
        markerPolicy: [{ state: 'Failed', labels: { a: 'b' } }],
      },
      {
        name: 'tcp',
        containerName: 'main',
        probe: { tcpSocket: { port: 'web' }, failureThreshold: 3, successThreshold: 1, initialDelaySeconds: 0 },
        podConditionType: 'game.kruise.io/tcp',
      },
    ]);
    await mutatePod(p, { features: on, cache: cache([m]), now: NOW, random: Math.random });
    assert.equal(
      p.metadata.annotations?.['kruise.io/podprobe'],
      '[{"name":"healthy","containerName":"main","probe":{"exec":{"command":["bash","/data/probe.sh"]},"timeoutSeconds":3,"periodSeconds":10},"podConditionType":"game.kruise.io/healthy"},' +
        '{"name":"tcp","containerName":"main","probe":{"tcpSocket":{"port":"web"},"successThreshold":1,"failureThreshold":3},"podConditionType":"game.kruise.io/tcp"}]',
    );
    assert.equal(p.metadata.annotations?.['kruise.io/podprobemarker-list'], 'game');
  });
  test('gate on: the annotations are written', async () => {
    const p = pod();
    const changed = await mutatePod(p, { features: on, cache: cache([marker('m', [probe('healthy')])]), now: NOW, random: Math.random });
    assert.ok(changed.includes('PodProbeMarker on serverless'));
    assert.equal(
      p.metadata.annotations?.['kruise.io/podprobe'],
      '[{"name":"healthy","containerName":"main","probe":{"exec":{"command":["bash","/data/probe.sh"]}},"podConditionType":"game.kruise.io/healthy"}]',
    );
    assert.equal(p.metadata.annotations?.['kruise.io/podprobemarker-list'], 'm');
  });
  test('gate off, no matching marker, or an empty selector: nothing', async () => {
    for (const [f, markers, labels] of [
      [features, [marker('m', [probe('healthy')])], { app: 'game' }],
      [on, [marker('m', [probe('healthy')])], { app: 'other' }],
      [on, [marker('m', [probe('healthy')], {})], { app: 'game' }],
    ] as const) {
      const p = pod({ labels });
      await mutatePod(p, { features: f, cache: cache([...markers]), now: NOW, random: Math.random });
      assert.equal(p.metadata.annotations?.['kruise.io/podprobe'], undefined);
    }
  });
  test('markers are taken by name, so the same one always wins a condition type', async () => {
    const p = pod();
    const markers = [marker('z', [probe('x', { podConditionType: 'shared' })]), marker('a', [probe('y', { podConditionType: 'shared' })])];
    await mutatePod(p, { features: on, cache: cache(markers), now: NOW, random: Math.random });
    assert.match(p.metadata.annotations?.['kruise.io/podprobe'] ?? '', /"name":"y"/);
    assert.equal(p.metadata.annotations?.['kruise.io/podprobemarker-list'], 'a');
  });
  test('a pod naming its markers in kruise.io/podprobemarker-list gets those, whatever its labels', async () => {
    const p = pod({ labels: {}, annotations: { 'kruise.io/podprobemarker-list': 'b' } });
    await mutatePod(p, {
      features: on,
      cache: cache([marker('a', [probe('x')]), marker('b', [probe('y')])]),
      now: NOW,
      random: Math.random,
    });
    assert.match(p.metadata.annotations?.['kruise.io/podprobe'] ?? '', /"name":"y"/);
    assert.equal(p.metadata.annotations?.['kruise.io/podprobemarker-list'], 'b');
  });
});
