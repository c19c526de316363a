// ListBodyReader on an informer's first list (figures printed, never asserted): a list body of
// --pods copies of a pod as the API server writes it (one of the start-up benchmark's background
// pods, managedFields a quarter of its bytes), fed in 16 KiB chunks (an HTTP/2 DATA frame), each
// item handed to the reflector's store path. Per variant: the best and median of --rounds parses,
// and the heap the parsed items hold (after GC). Variants: `cut` leaves managedFields out of the
// text before parsing (what an informer asks for), `parse` parses it and drops it after with a new
// metadata object, `delete` as the reflector used to (which leaves metadata a dictionary),
// `protobuf` the same list as protobuf (what the API server sends pods as since issue 37) read by
// ProtobufListReader without managedFields (checked to give the objects `cut` gives).
// Usage: node --expose-gc --import tsx bench/list-reader.ts [--pods 50000] [--rounds 8]
import { benchArgs } from './args.ts';
import { isDeepStrictEqual } from 'node:util';
import protobuf from 'protobufjs/light.js';
import { ListBodyReader, withoutManagedFields } from '../src/runtime/list-reader.ts';
import { ProtobufListReader } from '../src/runtime/protobuf/codec.ts';
import { DESCRIPTOR } from '../src/runtime/protobuf/kubernetes.generated.ts';

const { values } = benchArgs(import.meta.url, {
  options: { pods: { type: 'string', default: '50000' }, rounds: { type: 'string', default: '8' } },
});
const pods = Number(values.pods);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) {
  process.stderr.write('bench/list-reader.ts needs node --expose-gc: node --expose-gc --import tsx bench/list-reader.ts\n');
  process.exit(2);
}

const pod = {
  kind: 'Pod',
  apiVersion: 'v1',
  metadata: {
    name: 'bg-0',
    namespace: 'bench-background',
    uid: '4f52fd0f-97aa-45b1-8d9b-fc1f2653a5d5',
    resourceVersion: '425',
    generation: 1,
    creationTimestamp: '2026-11-24T23:50:36Z',
    labels: { app: 'background' },
    managedFields: [
      {
        manager: 'kubectl-create',
        operation: 'Update',
        apiVersion: 'v1',
        time: '2026-11-24T23:50:36Z',
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
          'f:spec': {
            'f:containers': {
              'k:{"name":"main"}': {
                '.': {},
                'f:image': {},
                'f:imagePullPolicy': {},
                'f:name': {},
                'f:resources': {},
                'f:terminationMessagePath': {},
                'f:terminationMessagePolicy': {},
              },
            },
            'f:dnsPolicy': {},
            'f:enableServiceLinks': {},
            'f:restartPolicy': {},
            'f:schedulerName': {},
            'f:securityContext': {},
            'f:terminationGracePeriodSeconds': {},
          },
        },
      },
    ],
  },
  spec: {
    volumes: [
      {
        name: 'kube-api-access-ww4jj',
        projected: {
          sources: [
            { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
            { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
            { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
          ],
          defaultMode: 420,
        },
      },
    ],
    containers: [
      {
        name: 'main',
        image: 'nginx:1.0',
        resources: {},
        volumeMounts: [{ name: 'kube-api-access-ww4jj', readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }],
        terminationMessagePath: '/dev/termination-log',
        terminationMessagePolicy: 'File',
        imagePullPolicy: 'IfNotPresent',
      },
    ],
    restartPolicy: 'Always',
    terminationGracePeriodSeconds: 30,
    dnsPolicy: 'ClusterFirst',
    serviceAccountName: 'default',
    serviceAccount: 'default',
    securityContext: {},
    schedulerName: 'bench-background',
    tolerations: [
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    ],
    priority: 0,
    enableServiceLinks: true,
    preemptionPolicy: 'PreemptLowerPriority',
  },
  status: { phase: 'Pending', qosClass: 'BestEffort' },
};

/** The pod as protobufjs takes it: proto's field names (inline volume source), times and fields sets as their messages. */
function protoShape(p: typeof pod): object {
  const seconds = (t: string) => ({ seconds: Date.parse(t) / 1000 });
  const { managedFields, creationTimestamp, ...metadata } = p.metadata;
  return {
    metadata: {
      ...metadata,
      creationTimestamp: seconds(creationTimestamp),
      managedFields: managedFields.map(({ time, fieldsV1, ...f }) => ({
        ...f,
        time: seconds(time),
        fieldsV1: { Raw: Buffer.from(JSON.stringify(fieldsV1)) },
      })),
    },
    spec: {
      ...p.spec,
      volumes: p.spec.volumes.map(({ name, projected }) => ({
        name,
        volumeSource: {
          projected: {
            ...projected,
            sources: projected.sources.map(({ configMap, ...s }) =>
              configMap ? { configMap: { localObjectReference: { name: configMap.name }, items: configMap.items } } : s,
            ),
          },
        },
      })),
    },
    status: p.status,
  };
}

const items: string[] = [];
const protoItems: object[] = [];
for (let i = 0; i < pods; i++) {
  pod.metadata.name = `bg-${i}`;
  pod.metadata.uid = `${i}`.padStart(36, '0');
  items.push(JSON.stringify(pod));
  protoItems.push(protoShape(pod));
}
const root = protobuf.Root.fromJSON(DESCRIPTOR);
const listBytes = root
  .lookupType('k8s.io.api.core.v1.PodList')
  .encode({ metadata: { resourceVersion: '425' }, items: protoItems })
  .finish();
protoItems.length = 0;
const protoBody = Buffer.concat([
  Buffer.from('k8s\0', 'latin1'),
  root
    .lookupType('k8s.io.apimachinery.pkg.runtime.Unknown')
    .encode({ typeMeta: { apiVersion: 'v1', kind: 'PodList' }, raw: listBytes })
    .finish(),
]);
const body = Buffer.from(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"425"},"items":[${items.join(',')}]}`);
items.length = 0;
const CHUNK = 16 * 1024;

type Variant = 'cut' | 'parse' | 'delete' | 'protobuf';

function parse(variant: Variant): { ms: number; parsed: unknown[] } {
  const parsed: unknown[] = [];
  if (variant === 'protobuf') {
    const reader = new ProtobufListReader(
      () => {},
      (item) => parsed.push(withoutManagedFields(item)),
      { dropManagedFields: true },
    );
    const started = performance.now();
    for (let at = 0; at < protoBody.length; at += CHUNK) reader.push(protoBody.subarray(at, at + CHUNK));
    reader.end();
    return { ms: performance.now() - started, parsed };
  }
  const reader = new ListBodyReader(
    () => {},
    // The reflector's store path: managedFields gone either way.
    (item) => {
      const obj = item as { metadata?: { managedFields?: unknown } };
      if (variant === 'delete') delete obj.metadata?.managedFields;
      parsed.push(withoutManagedFields(obj));
    },
    { dropManagedFields: variant === 'cut' },
  );
  const started = performance.now();
  for (let at = 0; at < body.length; at += CHUNK) reader.push(body.subarray(at, at + CHUNK));
  reader.end();
  return { ms: performance.now() - started, parsed };
}

const heapMiB = () => {
  gc!();
  return process.memoryUsage().heapUsed / 2 ** 20;
};

const [fromJson, fromProtobuf] = [parse('cut').parsed, parse('protobuf').parsed];
// (The pod above carries kind and apiVersion, which the API server leaves out of a list's items.)
if (!isDeepStrictEqual(fromJson[pods - 1], { kind: 'Pod', apiVersion: 'v1', ...(fromProtobuf[pods - 1] as object) })) {
  throw new Error('the protobuf list does not decode to the JSON list');
}
process.stdout.write(
  `${pods} pods, ${(body.length / 1e6).toFixed(1)} MB of list body as JSON, ${(protoBody.length / 1e6).toFixed(1)} MB as protobuf (${process.version})\n`,
);
for (const variant of ['cut', 'protobuf', 'parse', 'delete', 'cut', 'protobuf', 'parse', 'delete'] as const) {
  const times: number[] = [];
  for (let r = 0; r < Number(values.rounds); r++) times.push(parse(variant).ms);
  times.sort((a, b) => a - b);
  const { parsed } = parse(variant);
  const withItems = heapMiB();
  const count = parsed.length;
  parsed.length = 0;
  const held = withItems - heapMiB();
  process.stdout.write(
    `${variant.padEnd(6)}: best ${times[0]!.toFixed(0)} ms, median ${times[times.length >> 1]!.toFixed(0)} ms; items hold ${held.toFixed(1)} MiB of heap (${count})\n`,
  );
}
