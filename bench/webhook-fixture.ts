// The AdmissionReviews of bench/webhook.ts: a realistic CloneSet and the CREATE review the API server
// sends for it, with __UID__ and __NAME__ placeholders the load generator fills in per request.

// A CloneSet of the kind a team actually ships: app + sidecar, probes, resources, volumes, a PVC
// template, anti-affinity, in-place updates with surge.
export function cloneSet(name: string) {
  const labels = { app: 'web', tier: 'frontend', 'app.kubernetes.io/name': 'web', 'app.kubernetes.io/part-of': 'shop' };
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'CloneSet',
    metadata: {
      name,
      namespace: 'shop',
      labels,
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"apiVersion":"apps.kruise.io/v1beta1","kind":"CloneSet"}' },
      managedFields: [
        {
          manager: 'kubectl-client-side-apply',
          operation: 'Update',
          apiVersion: 'apps.kruise.io/v1beta1',
          time: '2025-01-01T00:00:00Z',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': { 'f:labels': { '.': {}, 'f:app': {}, 'f:tier': {} } },
            'f:spec': { '.': {}, 'f:replicas': {}, 'f:selector': {}, 'f:template': {} },
          },
        },
      ],
    },
    spec: {
      replicas: 10,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels, annotations: { 'prometheus.io/scrape': 'true', 'prometheus.io/port': '9102' } },
        spec: {
          serviceAccountName: 'web',
          affinity: {
            podAntiAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [
                {
                  weight: 100,
                  podAffinityTerm: { labelSelector: { matchLabels: { app: 'web' } }, topologyKey: 'topology.kubernetes.io/zone' },
                },
              ],
            },
          },
          tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'web', effect: 'NoSchedule' }],
          containers: [
            {
              name: 'web',
              image: 'registry.example.com/shop/web:1.42.3',
              ports: [
                { name: 'http', containerPort: 8080 },
                { name: 'metrics', containerPort: 9102 },
              ],
              env: [
                { name: 'LOG_LEVEL', value: 'info' },
                { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
                { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
                { name: 'DB_PASSWORD', valueFrom: { secretKeyRef: { name: 'web-db', key: 'password' } } },
              ],
              envFrom: [{ configMapRef: { name: 'web-config' } }],
              resources: { requests: { cpu: '500m', memory: '512Mi' }, limits: { cpu: '2', memory: '1Gi' } },
              readinessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 5 },
              livenessProbe: { httpGet: { path: '/livez', port: 'http' }, initialDelaySeconds: 10, periodSeconds: 10 },
              lifecycle: { preStop: { exec: { command: ['/bin/sh', '-c', 'sleep 5'] } } },
              volumeMounts: [
                { name: 'config', mountPath: '/etc/web' },
                { name: 'data', mountPath: '/var/lib/web' },
                { name: 'tmp', mountPath: '/tmp' },
              ],
            },
            {
              name: 'log-shipper',
              image: 'registry.example.com/infra/fluent-bit:3.1',
              resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: '128Mi' } },
              volumeMounts: [{ name: 'tmp', mountPath: '/tmp', readOnly: true }],
            },
          ],
          volumes: [
            { name: 'config', configMap: { name: 'web-config' } },
            { name: 'tmp', emptyDir: {} },
          ],
        },
      },
      volumeClaimTemplates: [
        {
          metadata: { name: 'data' },
          spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'standard', resources: { requests: { storage: '10Gi' } } },
        },
      ],
      updateStrategy: {
        type: 'RollingUpdate',
        rollingUpdate: {
          podUpdatePolicy: 'InPlaceIfPossible',
          maxUnavailable: '10%',
          maxSurge: '20%',
          inPlaceUpdateStrategy: { gracePeriodSeconds: 10 },
        },
      },
      minReadySeconds: 5,
    },
  };
}

export function review(object: { metadata: object }): string {
  const request = {
    uid: '__UID__',
    kind: { group: 'apps.kruise.io', version: 'v1beta1', kind: 'CloneSet' },
    resource: { group: 'apps.kruise.io', version: 'v1beta1', resource: 'clonesets' },
    requestKind: { group: 'apps.kruise.io', version: 'v1beta1', kind: 'CloneSet' },
    requestResource: { group: 'apps.kruise.io', version: 'v1beta1', resource: 'clonesets' },
    name: '__NAME__',
    namespace: 'shop',
    operation: 'CREATE',
    userInfo: {
      username: 'system:serviceaccount:ci:deployer',
      uid: 'b6f0e0c2-0000-4000-8000-000000000001',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:ci', 'system:authenticated'],
    },
    object: { ...object, metadata: { ...object.metadata, name: '__NAME__' } },
    oldObject: null,
    dryRun: false,
    options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1', fieldManager: 'kubectl-client-side-apply' },
  };
  return JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request });
}
