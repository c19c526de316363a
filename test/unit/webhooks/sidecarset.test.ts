import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  mutateSidecarSet,
  registrations,
  setDefaultsSidecarSet,
  sidecarSetHash,
  sidecarSetHashWithoutImage,
  validateSidecarSet,
  validateSidecarSetConflicts,
} from '../../../src/webhooks/sidecarset/index.ts';
import { selectorsOverlap } from '../../../src/util/selector-overlap.ts';
import { admission, fakeReader, loadExamples, msg } from './nonworkload-helpers.ts';

const V = 'apps.kruise.io/v1beta1';

function sidecarSet(spec: Record<string, any> = {}, metadata: Record<string, any> = {}): any {
  return {
    apiVersion: V,
    kind: 'SidecarSet',
    metadata: { name: 'test-sidecarset', ...metadata },
    spec: {
      selector: { matchLabels: { app: 'nginx' } },
      containers: [{ name: 'sidecar1', image: 'centos:6.7' }],
      ...spec,
    },
  };
}

async function errors(obj: any, opts: { old?: any; objects?: any[]; gates?: any } = {}): Promise<string> {
  const ctx = admission(V, opts.old ? 'UPDATE' : 'CREATE', { reader: fakeReader(opts.objects ?? []), gates: opts.gates });
  mutateSidecarSet(obj, ctx);
  if (opts.old) mutateSidecarSet(opts.old, ctx);
  return msg(await validateSidecarSet(obj, opts.old, ctx));
}

describe('SidecarSet defaulting', () => {
  test('applies upstream defaults and hash annotations, idempotently', () => {
    const obj = sidecarSet({
      initContainers: [{ name: 'init', image: 'busybox:1.28' }],
      containers: [{ name: 'sidecar1', image: 'centos', ports: [{ containerPort: 80 }], livenessProbe: { httpGet: { port: 80 } } }],
      volumes: [{ name: 'v', secret: { secretName: 's' } }],
      patchPodMetadata: [{ annotations: { a: 'b' } }],
      injectionStrategy: { revision: { revisionName: 'r' } },
    });
    mutateSidecarSet(obj, admission(V));
    assert.deepEqual(obj.spec.updateStrategy, { type: 'RollingUpdate', maxUnavailable: 1, partition: 0 });
    assert.equal(obj.spec.revisionHistoryLimit, 10);
    assert.equal(obj.spec.patchPodMetadata[0].patchPolicy, 'Retain');
    assert.equal(obj.spec.injectionStrategy.revision.policy, 'Always');
    assert.equal(obj.spec.volumes[0].secret.defaultMode, 420);
    const [init] = obj.spec.initContainers;
    assert.equal(init.podInjectPolicy, 'AfterAppContainer');
    assert.equal(init.imagePullPolicy, 'IfNotPresent');
    const [c] = obj.spec.containers;
    assert.deepEqual(
      [c.podInjectPolicy, c.upgradeStrategy, c.shareVolumePolicy, c.imagePullPolicy, c.terminationMessagePath, c.terminationMessagePolicy],
      ['BeforeAppContainer', { upgradeType: 'ColdUpgrade' }, { type: 'disabled' }, 'Always', '/dev/termination-log', 'File'],
    );
    assert.equal(c.ports[0].protocol, 'TCP');
    assert.deepEqual(c.livenessProbe, {
      httpGet: { port: 80, path: '/', scheme: 'HTTP' },
      timeoutSeconds: 1,
      periodSeconds: 10,
      successThreshold: 1,
      failureThreshold: 3,
    });
    assert.match(obj.metadata.annotations['kruise.io/sidecarset-hash'], /^[bcdfghjklmnpqrstvwxz2456789]{64}$/);
    const once = structuredClone(obj);
    mutateSidecarSet(obj, admission(V, 'UPDATE'));
    assert.deepEqual(obj, once);
  });

  test('hash changes with images, hash-without-image does not; plain init containers are not hashed', () => {
    const a = sidecarSet({ initContainers: [{ name: 'init', image: 'busybox:1' }] });
    setDefaultsSidecarSet(a);
    const b = structuredClone(a);
    b.spec.containers[0].image = 'centos:7';
    assert.notEqual(sidecarSetHash(a), sidecarSetHash(b));
    assert.equal(sidecarSetHashWithoutImage(a), sidecarSetHashWithoutImage(b));
    const c = structuredClone(a);
    c.spec.initContainers[0].image = 'busybox:2';
    assert.equal(sidecarSetHash(a), sidecarSetHash(c));
    c.spec.initContainers[0].restartPolicy = 'Always';
    assert.notEqual(sidecarSetHash(a), sidecarSetHash(c));
  });
});

describe('SidecarSet validation', () => {
  test('upstream examples', async () => {
    const revision = {
      kind: 'ControllerRevision',
      metadata: {
        name: 'sidecarset-1',
        namespace: 'kruise-system',
        labels: { 'kruise.io/sidecarset-name': 'sidecarset', 'apps.kruise.io/sidecarset-custom-version': 'example/version-1' },
      },
    };
    const results = [];
    for (const doc of loadExamples('sidecarset.yaml')) results.push(await errors(doc, { objects: [revision] }));
    assert.deepEqual(results, ['', '', '', '']);
  });

  const cases: Array<[string, any, string]> = [
    [
      'resourcesPolicy beside resources (upstream: spec[i], ends the check)',
      sidecarSet({
        containers: [
          {
            name: 'sidecar1',
            image: 'centos:6.7',
            resources: { limits: { cpu: '1' } },
            resourcesPolicy: { targetContainersMode: 'sum', targetContainersNameRegex: '.*', resourcesExpr: { limits: { cpu: 'cpu' } } },
          },
        ],
      }),
      'spec[0].resourcesPolicy: Invalid value: {"targetContainersMode":"sum","targetContainersNameRegex":".*","resourcesExpr":{"limits":{"cpu":"cpu"}}}: resourcesPolicy and resources cannot be configured together',
    ],
    [
      'resourcesPolicy expressions are parsed as upstream (variable bound to 1)',
      sidecarSet({
        containers: [
          {
            name: 'sidecar1',
            image: 'centos:6.7',
            resourcesPolicy: {
              targetContainersMode: 'sum',
              targetContainersNameRegex: '.*',
              resourcesExpr: { limits: { cpu: 'max(cpu*50%, 50m)', memory: 'cpu * 2' }, requests: { cpu: '40m * 2m', memory: '0.5 -' } },
            },
          },
        ],
      }),
      '[spec[0].resourcesPolicy.resourcesExpr.limits.memory: Invalid value: "cpu * 2": invalid expression: undefined variable: cpu, ' +
        'spec[0].resourcesPolicy.resourcesExpr.requests.cpu: Invalid value: "40m * 2m": invalid expression: multiplication of two quantities, ' +
        'spec[0].resourcesPolicy.resourcesExpr.requests.memory: Invalid value: "0.5 -": invalid expression: parse error: syntax error at line 1, col 6]',
    ],
    [
      'bad name',
      sidecarSet({}, { name: 'bad_name' }),
      `metadata.name: Invalid value: "bad_name": sidecarset name must consist of alphanumeric characters or '-' (e.g. 'example-com', regex used for validation is '^[a-zA-Z0-9\\-]+$')`,
    ],
    ['missing selector', sidecarSet({ selector: undefined }), 'spec.selector: Required value: no selector defined for SidecarSet'],
    ['empty selector', sidecarSet({ selector: {} }), 'spec.selector: Invalid value: {}: empty selector is not valid for sidecarset.'],
    [
      'namespace and namespaceSelector',
      sidecarSet({ namespace: 'ns', namespaceSelector: { matchLabels: { a: 'b' } } }),
      'spec.namespace, namespaceSelector: Required value: namespace and namespaceSelector are mutually exclusive',
    ],
    ['no containers', sidecarSet({ containers: [] }), 'spec: Required value: no initContainer or container defined for SidecarSet'],
    ['container without image', sidecarSet({ containers: [{ name: 'c' }] }), 'spec.containers[0].image: Required value'],
    [
      'bad podInjectPolicy',
      sidecarSet({ containers: [{ name: 'c', image: 'i', podInjectPolicy: 'Middle' }] }),
      'spec.container.podInjectPolicy: Invalid value: "Middle": unsupported pod inject policy',
    ],
    [
      'bad shareVolumePolicy',
      sidecarSet({ containers: [{ name: 'c', image: 'i', shareVolumePolicy: { type: 'sometimes' } }] }),
      'spec.container.shareVolumePolicy: Invalid value: {"type":"sometimes"}: unsupported share volume policy',
    ],
    [
      'partition with selector',
      sidecarSet({ updateStrategy: { type: 'RollingUpdate', partition: 1, selector: { matchLabels: { a: 'b' } } } }),
      'updateStrategy: Invalid value: {"type":"RollingUpdate","partition":1,"selector":{"matchLabels":{"a":"b"}},"maxUnavailable":1}: Partition and Selector cannot be used together',
    ],
    [
      'bad maxUnavailable',
      sidecarSet({ updateStrategy: { maxUnavailable: '50' } }),
      `spec.updateStrategy.maxUnavailable: Invalid value: "50": a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')`,
    ],
    [
      'duplicate scatter terms',
      sidecarSet({
        updateStrategy: {
          scatterStrategy: [
            { key: 'k', value: 'v' },
            { key: 'k', value: 'v' },
          ],
        },
      }),
      'spec.updateStrategy.scatterStrategy: Required value: duplicated key=k value=v',
    ],
    [
      'both priority kinds',
      sidecarSet({
        updateStrategy: {
          priorityStrategy: {
            orderPriority: [{ orderedKey: 'k' }],
            weightPriority: [{ weight: 1, matchSelector: { matchLabels: { a: 'b' } } }],
          },
        },
      }),
      'spec.updateStrategy.priorityStrategy: Required value: only one of weightPriority and orderPriority can be used',
    ],
    [
      'native init sidecar with RollingUpdate',
      sidecarSet({ initContainers: [{ name: 'init', image: 'i', restartPolicy: 'Always' }] }),
      'spec.updateStrategy: Required value: The initContainer in-place upgrade is not currently supported.',
    ],
    [
      'revision without name or version',
      sidecarSet({ injectionStrategy: { revision: { policy: 'Always' } } }),
      'revision: Invalid value: {"policy":"Always"}: revisionName and customVersion cannot be empty simultaneously',
    ],
    [
      'missing revision',
      sidecarSet({ injectionStrategy: { revision: { revisionName: 'test-sidecarset-1' } } }),
      'revision: Invalid value: null: Cannot find specific ControllerRevision, err: controllerrevisions.apps "test-sidecarset-1" not found',
    ],
    [
      'duplicate patched annotation',
      sidecarSet({ patchPodMetadata: [{ annotations: { k: 'v' } }, { annotations: { k: 'v' }, patchPolicy: 'Overwrite' }] }),
      'spec.patchPodMetadata: Required value: patch annotation[k] already exist',
    ],
  ];
  for (const [name, obj, expected] of cases) {
    test(name, async () => {
      assert.equal(await errors(obj, { gates: { SidecarSetPatchPodMetadataDefaultsAllowed: true } }), expected);
    });
  }

  test('upgradeType is immutable on update', async () => {
    const old = sidecarSet();
    const obj = sidecarSet({
      containers: [
        { name: 'sidecar1', image: 'centos:6.7', upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty' } },
      ],
    });
    assert.equal(
      await errors(obj, { old }),
      'spec.containers.upgradeStrategy.upgradeType: Invalid value: "sidecar1": container sidecar1 upgradeType is immutable',
    );
  });

  describe('canary', () => {
    const canary = (base: string, type = 'NotUpdate') =>
      sidecarSet(
        { updateStrategy: { type } },
        { annotations: { 'apps.kruise.io/sidecarset-canary': 'true', 'apps.kruise.io/sidecarset-base': base } },
      );
    const baseSet = { kind: 'SidecarSet', metadata: { name: 'base' }, spec: { selector: { matchLabels: { other: 'x' } } } };
    const detail = async (obj: any, objects: any[], old?: any) => {
      const errs = await validateSidecarSet(obj, old, admission(V, old ? 'UPDATE' : 'CREATE', { reader: fakeReader(objects) }));
      return errs.filter((e) => e.field === 'metadata').map((e) => e.detail);
    };
    test('valid canary', async () => assert.deepEqual(await detail(canary('base'), [baseSet]), []));
    test('itself', async () => assert.deepEqual(await detail(canary('test-sidecarset'), [baseSet]), ['base sidecarSet cannot be itself']));
    test('missing base', async () =>
      assert.deepEqual(await detail(canary('nope'), []), [
        'fetch base sidecarSet[nope] failed: sidecarsets.apps.kruise.io "nope" not found',
      ]));
    test('canary base', async () => {
      const other = { ...baseSet, metadata: { name: 'base', annotations: { 'apps.kruise.io/sidecarset-canary': 'true' } } };
      assert.deepEqual(await detail(canary('base'), [other]), ['base sidecarSet cannot be canary']);
    });
    test('RollingUpdate', async () =>
      assert.deepEqual(await detail(canary('base', 'RollingUpdate'), [baseSet]), ['RollingUpdate is not supported for canary sidecarSet']));
    test('base is immutable', async () =>
      assert.deepEqual(await detail(canary('base'), [baseSet], canary('old')), [
        'annotations[apps.kruise.io/sidecarset-base] is immutable',
      ]));
  });

  describe('conflicts with other SidecarSets', () => {
    test('a pinned namespace the reader cannot read (a name no namespace can have) is selected by nothing: no internal error', async () => {
      const reader = fakeReader([]);
      reader.get = async () => {
        throw new Error('Name parameter invalid: "101%": may not contain \'%\'');
      };
      const ctx = admission(V, 'CREATE', { reader });
      const obj = sidecarSet({ namespace: '101%' });
      mutateSidecarSet(obj, ctx);
      assert.deepEqual(await validateSidecarSet(obj, undefined, ctx), []);
    });
    const other = (spec: Record<string, any>) => ({
      kind: 'SidecarSet',
      metadata: { name: 'sidecarset1' },
      spec: { selector: { matchLabels: { app: 'nginx' } }, ...spec },
    });
    test('same container and init container names on overlapping pods', async () => {
      const obj = sidecarSet({ initContainers: [{ name: 'init-name', image: 'i' }], updateStrategy: { type: 'NotUpdate' } });
      const o = other({ containers: [{ name: 'sidecar1' }], initContainers: [{ name: 'init-name' }] });
      assert.equal(
        await errors(obj, { objects: [o] }),
        '[spec.containers: Invalid value: "init-name": container init-name already exist in sidecarset1, spec.containers: Invalid value: "sidecar1": container sidecar1 already exist in sidecarset1]',
      );
    });
    test('disjoint selectors or namespaces do not conflict', async () => {
      assert.equal(
        await errors(sidecarSet(), {
          objects: [
            {
              ...other({ containers: [{ name: 'sidecar1' }] }),
              spec: { selector: { matchLabels: { app: 'redis' } }, containers: [{ name: 'sidecar1' }] },
            },
          ],
        }),
        '',
      );
      const obj = sidecarSet({ namespaceSelector: { matchLabels: { team: 'a' } } });
      assert.equal(
        await errors(obj, { objects: [other({ namespaceSelector: { matchLabels: { team: 'b' } }, containers: [{ name: 'sidecar1' }] })] }),
        '',
      );
    });
    test('namespaces meet as v1.8.2 decides: a pinned namespace is looked up, a new namespace selector never meets a pinned one', async () => {
      // Others come from the reader as v1beta1: a v1alpha1 spec.namespace is a namespace-name selector there.
      const pinned = (ns: string) => ({ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } } });
      const namespace = (name: string, labels: Record<string, string>) => ({ kind: 'Namespace', metadata: { name, labels } });
      const teamA = { namespaceSelector: { matchLabels: { team: 'a' } } };
      const rows: Array<[string, Record<string, any>, Record<string, any>, boolean]> = [
        ['same pinned namespace', { namespace: 'ns1' }, pinned('ns1'), true],
        ['other pinned namespaces', { namespace: 'ns1' }, pinned('ns2'), false],
        ['pinned to a namespace the other selects', { namespace: 'ns1' }, teamA, true],
        ['pinned to a namespace the other does not select', { namespace: 'ns2' }, teamA, false],
        ['pinned to a namespace that does not exist', { namespace: 'gone' }, teamA, false],
        ['pinned by a namespace-name selector', pinned('ns1'), teamA, true],
        // The e2e suite's SidecarSets pinned to namespaces of earlier specs stay (its clean-up skips them).
        ['selecting namespaces, the other pinned to one it selects', teamA, pinned('ns1'), false],
        ['selecting namespaces, the other cluster-wide', teamA, {}, true],
        ['pinned, the other cluster-wide', { namespace: 'ns1' }, {}, true],
      ];
      const objects = [namespace('ns1', { team: 'a' }), namespace('ns2', { team: 'b' })];
      for (const [name, mine, theirs, conflict] of rows) {
        const got = await errors(sidecarSet(mine), { objects: [...objects, other({ ...theirs, containers: [{ name: 'sidecar1' }] })] });
        assert.equal(
          got,
          conflict ? 'spec.containers: Invalid value: "sidecar1": container sidecar1 already exist in sidecarset1' : '',
          name,
        );
      }
    });
    test('volumes must be equal, overwritten annotations exclusive', () => {
      const obj = sidecarSet({
        volumes: [{ name: 'v', hostPath: { path: '/a' } }],
        patchPodMetadata: [{ annotations: { k: '1' }, patchPolicy: 'Overwrite' }],
      });
      const same = other({ volumes: [{ name: 'v', hostPath: { path: '/a' } }] });
      assert.equal(msg(validateSidecarSetConflicts(obj, [same])), '');
      const different = other({
        volumes: [{ name: 'v', hostPath: { path: '/b' } }],
        patchPodMetadata: [{ annotations: { k: '2' }, patchPolicy: 'MergePatchJson' }],
      });
      assert.equal(
        msg(validateSidecarSetConflicts(obj, [different])),
        '[spec.volumes: Invalid value: "v": volume v is in conflict with sidecarset sidecarset1, spec.patchPodMetadata: Invalid value: "k": annotation k is in conflict with sidecarset sidecarset1]',
      );
    });
    test('a canary and its base share container, volume and annotation names; other SidecarSets still may not', () => {
      const shared = { containers: [{ name: 'sidecar1' }], volumes: [{ name: 'v', hostPath: { path: '/b' } }] };
      const base = other(shared);
      const canary = sidecarSet({ ...shared, volumes: [{ name: 'v', hostPath: { path: '/a' } }] });
      canary.metadata.annotations = { 'apps.kruise.io/sidecarset-canary': 'true', 'apps.kruise.io/sidecarset-base': base.metadata.name };
      assert.equal(msg(validateSidecarSetConflicts(canary, [base])), '');
      assert.equal(msg(validateSidecarSetConflicts(base, [canary])), '');
      canary.metadata.annotations['apps.kruise.io/sidecarset-base'] = 'another';
      assert.match(msg(validateSidecarSetConflicts(canary, [base])), /container sidecar1 already exist in/);
    });
  });

  test('selector overlap (upstream TestSelectorConflict table)', () => {
    const rows: Array<[any, any, boolean]> = [
      [{ matchLabels: { a: 'h' } }, { matchLabels: { a: 'h' } }, true],
      [{ matchLabels: { a: 'h' } }, { matchLabels: { a: 'i' } }, false],
      [{ matchLabels: { a: 'h' } }, { matchLabels: { b: 'i' } }, true],
      [{ matchLabels: { a: 'h', b: 'i', c: 'j' } }, { matchLabels: { a: 'h', b: 'x', c: 'j' } }, false],
      [{ matchLabels: { a: 'h' } }, { matchExpressions: [{ key: 'a', operator: 'In', values: ['h', 'i', 'j'] }] }, true],
      [{ matchLabels: { a: 'h' } }, { matchExpressions: [{ key: 'a', operator: 'In', values: ['i', 'j'] }] }, false],
      [{ matchExpressions: [{ key: 'a', operator: 'NotIn', values: ['h', 'i'] }] }, { matchLabels: { a: 'h' } }, false],
      [{ matchLabels: { a: 'h' } }, { matchExpressions: [{ key: 'a', operator: 'Exists' }] }, true],
      [{ matchExpressions: [{ key: 'a', operator: 'DoesNotExist' }] }, { matchLabels: { a: 'h' } }, false],
    ];
    for (const [a, b, want] of rows) assert.equal(selectorsOverlap(a, b), want, JSON.stringify([a, b]));
  });

  test('patchPodMetadata needs the whitelist unless the gate allows defaults', async () => {
    const obj = () => sidecarSet({ patchPodMetadata: [{ annotations: { 'oom-score': '1' } }] });
    assert.equal(await errors(obj()), 'spec.patchPodMetadata: Required value: SidecarSet patch metadata whitelist not found');
    const cm = {
      kind: 'ConfigMap',
      metadata: { name: 'kruise-configuration', namespace: 'kruise-system' },
      data: { SidecarSet_PatchPodMetadata_WhiteList: JSON.stringify({ rules: [{ allowedAnnotationKeyExprs: ['^oom-.*'] }] }) },
    };
    assert.equal(await errors(obj(), { objects: [cm] }), '');
    const other = sidecarSet({ patchPodMetadata: [{ annotations: { 'cpu-set': '1' } }] });
    assert.equal(
      await errors(other, { objects: [cm] }),
      'spec.patchPodMetadata: Required value: sidecarSet patch metadata annotation(cpu-set) is not allowed',
    );
  });

  test('registration', () => {
    assert.deepEqual(
      registrations.map((r) => [r.resource, r.versions, r.operations, !!r.mutate, !!r.validate]),
      [['sidecarsets', ['v1alpha1', 'v1beta1'], ['CREATE', 'UPDATE'], true, true]],
    );
  });
});
