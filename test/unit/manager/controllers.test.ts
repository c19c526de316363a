// Which controllers the manager starts: gates, and CRDs the API server serves (upstream DiscoverGVK).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FEATURE_GATE_DEFAULTS } from '../../../src/apis/features.ts';
import { allControllers } from '../../../src/controllers/index.ts';
import type { ControllerSetup } from '../../../src/controllers/types.ts';
import { selectControllers, servedKruiseKinds } from '../../../src/manager/controllers.ts';
import { StatusError } from '../../../src/runtime/errors.ts';
import { CloneSets, NodeImages } from '../../../src/runtime/resources.ts';
import { WireVersions } from '../../../src/runtime/wire-versions.ts';

const setup = (name: string, kinds: string[], gate?: ControllerSetup['gate']): ControllerSetup => ({
  name,
  kinds,
  access: [],
  gate,
  setup: () => {
    throw new Error('not called');
  },
});

test('controllers run when their gate is on and every kind they need is served', () => {
  const all = [
    setup('cloneset', ['CloneSet']),
    setup('imagepulljob', ['ImagePullJob', 'NodeImage'], 'ImagePullJobGate'),
    setup('nodeimage', ['NodeImage', 'ImagePullJob']),
    setup('pub', ['PodUnavailableBudget.policy.kruise.io']),
    setup('podreadiness', []),
  ];
  const sel = selectControllers(
    all,
    { ...FEATURE_GATE_DEFAULTS, ImagePullJobGate: false },
    new Set(['CloneSet', 'NodeImage', 'PodUnavailableBudget.policy.kruise.io']),
  );
  assert.deepEqual(
    sel.run.map((c) => c.name),
    ['cloneset', 'pub', 'podreadiness'],
  );
  assert.deepEqual(sel.skipped, [
    { name: 'imagepulljob', reason: 'feature gate ImagePullJobGate is off' },
    { name: 'nodeimage', reason: 'the API server does not serve ImagePullJob (CRD not installed)' },
  ]);
});

test('servedKruiseKinds: a kind counts when its CRD is Established and serves a version Kruise TS knows; the client learns which', async () => {
  const crd = (versions: Array<{ name: string; served: boolean }>, established = 'True') => ({
    metadata: { name: 'x' },
    spec: { versions },
    status: { conditions: [{ type: 'Established', status: established }] },
  });
  const crds: Record<string, unknown> = {
    'clonesets.apps.kruise.io': crd([
      { name: 'v1alpha1', served: true },
      { name: 'v1beta1', served: true },
    ]),
    'imagepulljobs.apps.kruise.io': crd([{ name: 'v1beta1', served: true }], 'False'),
    'nodeimages.apps.kruise.io': crd([
      { name: 'v1alpha1', served: true },
      { name: 'v1beta1', served: false },
    ]),
    'podunavailablebudgets.policy.kruise.io': crd([{ name: 'v1beta1', served: true }]),
  };
  for (const [name, c] of Object.entries(crds)) {
    const [plural, ...group] = name.split('.');
    Object.assign((c as { spec: object }).spec, { group: group.join('.'), names: { plural } });
  }
  const client = {
    wireVersions: new WireVersions(),
    async get(_type: unknown, name: string) {
      if (crds[name]) return crds[name];
      throw new StatusError({ reason: 'NotFound', code: 404, message: `${name} not found` });
    },
  };
  const served = await servedKruiseKinds(client as never);
  // NodeImage is served at v1alpha1 only (OpenKruise v1.8.2's versions): the client speaks that.
  assert.deepEqual([...served].sort(), ['CloneSet', 'NodeImage', 'PodUnavailableBudget.policy.kruise.io']);
  const noDiscovery = () => Promise.reject(new Error('learnt from the CRDs, not discovery'));
  assert.equal(await client.wireVersions.versionOf(NodeImages, noDiscovery), 'v1alpha1');
  assert.equal(await client.wireVersions.versionOf(CloneSets, noDiscovery), 'v1beta1');
});

test('every controller names the kinds it needs; with all CRDs served and default gates the ungated ones run', () => {
  const served = new Set([
    'CloneSet',
    'StatefulSet',
    'DaemonSet',
    'ContainerRecreateRequest',
    'ImagePullJob',
    'ImageListPullJob',
    'NodeImage',
    'SidecarSet',
    'BroadcastJob',
    'AdvancedCronJob',
    'UnitedDeployment',
    'EphemeralJob',
    'PodUnavailableBudget.policy.kruise.io',
    'ResourceDistribution',
    'PersistentPodState',
    'PodProbeMarker',
    'NodePodProbe',
    'WorkloadSpread',
  ]);
  const sel = selectControllers(allControllers, FEATURE_GATE_DEFAULTS, served);
  assert.ok(
    sel.run.some((c) => c.name === 'podunavailablebudget'),
    'runs with PodUnavailableBudgetDeleteGate (on by default)',
  );
  assert.ok(sel.run.some((c) => c.name === 'cloneset'));
  assert.ok(sel.run.some((c) => c.name === 'daemonset'));
  assert.ok(sel.run.some((c) => c.name === 'statefulset'));
  assert.ok(sel.run.some((c) => c.name === 'persistentpodstate'));
  assert.ok(sel.run.some((c) => c.name === 'podprobemarker'));
  assert.ok(sel.run.some((c) => c.name === 'nodepodprobe'));
  assert.ok(
    sel.skipped.every((s) => s.reason.startsWith('feature gate')),
    JSON.stringify(sel.skipped),
  );
});
