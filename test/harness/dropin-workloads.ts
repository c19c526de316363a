// The objects of the drop-in checks (issue #17): what upstream OpenKruise v1.8.2 creates before a
// takeover, and the inputs of the golden hashes (test/fixtures/upstream-v1.8.2/). One entry per
// object; covering a newly implemented kind is adding entries here (and, when it keeps revisions
// or hashes of its own, a check in test/unit/golden-upstream.test.ts).

export interface DropInObject {
  /** Resource name for kubectl (plural.group). */
  resource: string;
  name: string;
  manifest: Record<string, unknown>;
}

const CLONESET = 'clonesets.apps.kruise.io';
const IMAGEPULLJOB = 'imagepulljobs.apps.kruise.io';
const IMAGELISTPULLJOB = 'imagelistpulljobs.apps.kruise.io';

const IMAGE = 'registry.example/app:v1';

/** The quantity notations whose stored form is compared with upstream's (Go resource.Quantity canonical text). */
export const QUANTITY_NOTATIONS = [
  '500m',
  '0.5',
  '1Gi',
  '1024Mi',
  '1e3',
  '100M',
  '1.5Gi',
  '0.1',
  '100n',
  '1000m',
  '2k',
  '+1',
  '01',
  '1.G',
  '1536Ki',
  '0.5Gi',
  '1E',
  '1500u',
  '2E3',
];

function cloneSet(name: string, spec: Record<string, unknown>, template: Record<string, unknown> = {}): DropInObject {
  const labels = { app: name };
  return {
    resource: CLONESET,
    name,
    manifest: {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'CloneSet',
      metadata: { name },
      spec: {
        selector: { matchLabels: labels },
        ...spec,
        template: {
          metadata: { labels: { ...labels, ...((template.labels as object) ?? {}) } },
          spec: { containers: [{ name: 'main', image: IMAGE }], ...((template.spec as object) ?? {}) },
        },
      },
    },
  };
}

export const DROPIN_OBJECTS: DropInObject[] = [
  cloneSet(
    'cs-recreate',
    { replicas: 2, updateStrategy: { type: 'ReCreate' } },
    {
      spec: {
        containers: [
          {
            name: 'main',
            image: IMAGE,
            resources: { requests: { cpu: '0.5', memory: '1024Mi' }, limits: { cpu: '1e3', memory: '2000M' } },
          },
          { name: 'side', image: IMAGE, resources: { requests: { cpu: '100m', memory: '0.5Gi' }, limits: { cpu: 1, memory: '1.5Gi' } } },
        ],
      },
    },
  ),
  cloneSet(
    'cs-inplace',
    {
      replicas: 3,
      updateStrategy: { type: 'InPlaceIfPossible', partition: 1, maxUnavailable: '50%' },
      lifecycle: {
        preDelete: { labelsHandler: { 'example.com/unready-blocker': 'true' } },
        inPlaceUpdate: { labelsHandler: { 'example.com/unready-blocker': 'true' } },
      },
      volumeClaimTemplates: [
        {
          metadata: { name: 'data' },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1024Mi' } } },
        },
        {
          metadata: { name: 'cache' },
          spec: {
            accessModes: ['ReadWriteOnce'],
            storageClassName: 'standard',
            resources: { requests: { storage: '0.5Gi' }, limits: { storage: '1Gi' } },
          },
        },
      ],
    },
    {
      // The hook label is not on the pods, so hooks pass at once (a pod carrying it would hold its update).
      labels: { track: 'stable' },
      spec: {
        containers: [
          {
            name: 'main',
            image: IMAGE,
            env: [{ name: 'TRACK', valueFrom: { fieldRef: { fieldPath: "metadata.labels['track']" } } }],
            resources: { requests: { cpu: '500m', memory: '1Gi' } },
            volumeMounts: [
              { name: 'data', mountPath: '/data' },
              { name: 'cache', mountPath: '/cache' },
            ],
          },
        ],
      },
    },
  ),
  cloneSet(
    'cs-vct-selector',
    {
      replicas: 1,
      updateStrategy: { type: 'InPlaceIfPossible' },
      volumeClaimTemplates: [
        {
          metadata: { name: 'www', labels: { tier: 'disk' } },
          spec: {
            accessModes: ['ReadWriteOnce', 'ReadOnlyMany'],
            volumeMode: 'Filesystem',
            selector: { matchLabels: { disk: 'ssd' }, matchExpressions: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }] },
            resources: { requests: { storage: '1e3' } },
          },
        },
      ],
    },
    { spec: { containers: [{ name: 'main', image: IMAGE, volumeMounts: [{ name: 'www', mountPath: '/www' }] }] } },
  ),
  // No pods (limits only, so the pods' requests would default to 1E cpu): the stored notations
  // and the revision are what is compared.
  cloneSet(
    'cs-quantities',
    { replicas: 0 },
    {
      spec: {
        containers: QUANTITY_NOTATIONS.map((q, i) => ({ name: `q${i}`, image: IMAGE, resources: { limits: { cpu: q, memory: q } } })),
        overhead: { cpu: '0.25' },
        volumes: [{ name: 'scratch', emptyDir: { sizeLimit: '1024Mi' } }],
      },
    },
  ),
  {
    resource: IMAGEPULLJOB,
    name: 'ipj-once',
    manifest: {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'ImagePullJob',
      metadata: { name: 'ipj-once' },
      spec: { image: 'registry.example/warm:v1', parallelism: 2, completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 3600 } },
    },
  },
  {
    resource: IMAGELISTPULLJOB,
    name: 'iljob',
    manifest: {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'ImageListPullJob',
      metadata: { name: 'iljob' },
      spec: {
        images: ['registry.example/a:v1', 'registry.example/b:v1'],
        parallelism: 1,
        completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 3600 },
      },
    },
  },
  {
    resource: IMAGELISTPULLJOB,
    name: 'iljob-selective',
    manifest: {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'ImageListPullJob',
      metadata: { name: 'iljob-selective' },
      spec: {
        images: ['registry.example/c:v1'],
        pullSecrets: ['pull-secret'],
        selector: {
          matchLabels: { 'kubernetes.io/os': 'linux', 'example.com/pool': 'web' },
          matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['zone-a', 'zone-b'] }],
        },
        parallelism: 3,
        pullPolicy: { timeoutSeconds: 300 },
        completionPolicy: { type: 'Never' },
        sandboxConfig: { labels: { team: 'web', tier: 'front' } },
        imagePullPolicy: 'Always',
      },
    },
  },
];
