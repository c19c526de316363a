// Go's json.Marshal of a typed corev1.Container (k8s.io/api v0.30, the version OpenKruise v1.8.2 is
// built with) and of Kruise's SidecarContainer: fields in declaration order — not sorted, as a
// decoded map would be — omitempty fields dropped when empty, struct-typed fields always written.
// Hashes upstream computes over such bytes (SidecarSet's kruise.io/sidecarset-hash) agree only when
// Kruise TS writes the same bytes. Every nested struct (securityContext, resourcesPolicy, resource
// claims included) has its layout here.

import { deepHashBytes } from './go-pod-template.ts';
import { goQuantity } from './revision-data.ts';
import { marshalGoJSON } from './revision.ts';
import { isJsonObject } from '../apis/json.ts';

/** How one field is written; undefined = omitted. */
type FieldEncoder = (v: unknown) => string | undefined;
type Layout = Array<[key: string, encode: FieldEncoder]>;

function struct(layout: Layout, v: unknown): string {
  const o = isJsonObject(v) ? v : {};
  const parts: string[] = [];
  for (const [key, encode] of layout) {
    const encoded = encode(o[key]);
    if (encoded !== undefined) parts.push(`${marshalGoJSON(key)}:${encoded}`);
  }
  return `{${parts.join(',')}}`;
}

/** `json:"x"` string: always written. */
const str: FieldEncoder = (v) => marshalGoJSON(typeof v === 'string' ? v : '');
/** `json:"x,omitempty"` string / number / bool: dropped when zero. */
const omitEmpty: FieldEncoder = (v) => (v === undefined || v === null || v === '' || v === 0 || v === false ? undefined : marshalGoJSON(v));
/** `json:"x"` int32: always written. */
const num: FieldEncoder = (v) => marshalGoJSON(typeof v === 'number' ? v : 0);
/** A pointer (`*T`, omitempty): written whenever set, zero values included. */
const ptr: FieldEncoder = (v) => (v === undefined || v === null ? undefined : marshalGoJSON(v));
/** IntOrString: written as set. */
const intOrString: FieldEncoder = (v) => marshalGoJSON(v ?? 0);
const structField =
  (layout: Layout): FieldEncoder =>
  (v) =>
    struct(layout, v);
const ptrStruct =
  (layout: Layout): FieldEncoder =>
  (v) =>
    isJsonObject(v) ? struct(layout, v) : undefined;
const list =
  (item: FieldEncoder): FieldEncoder =>
  (v) =>
    Array.isArray(v) && v.length > 0 ? `[${v.map((x) => item(x) ?? 'null').join(',')}]` : undefined;
const listOf = (layout: Layout): FieldEncoder => list((x) => struct(layout, x));
const strings: FieldEncoder = list((x) => marshalGoJSON(x));

const quantities: FieldEncoder = (v) =>
  isJsonObject(v) && Object.keys(v).length > 0
    ? marshalGoJSON(Object.fromEntries(Object.entries(v).map(([k, x]) => [k, goQuantity(x)])))
    : undefined;

const localRefWith = (rest: Layout): Layout => [['name', omitEmpty], ...rest];
const keySelector = localRefWith([
  ['key', str],
  ['optional', ptr],
]);
const fieldRef: Layout = [
  ['apiVersion', omitEmpty],
  ['fieldPath', str],
];
const envVar: Layout = [
  ['name', str],
  ['value', omitEmpty],
  [
    'valueFrom',
    ptrStruct([
      ['fieldRef', ptrStruct(fieldRef)],
      [
        'resourceFieldRef',
        ptrStruct([
          ['containerName', omitEmpty],
          ['resource', str],
          ['divisor', (v) => (v === undefined ? undefined : marshalGoJSON(goQuantity(v)))],
        ]),
      ],
      ['configMapKeyRef', ptrStruct(keySelector)],
      ['secretKeyRef', ptrStruct(keySelector)],
    ]),
  ],
];
const envFrom: Layout = [
  ['prefix', omitEmpty],
  ['configMapRef', ptrStruct(localRefWith([['optional', ptr]]))],
  ['secretRef', ptrStruct(localRefWith([['optional', ptr]]))],
];
const httpGet: Layout = [
  ['path', omitEmpty],
  ['port', intOrString],
  ['host', omitEmpty],
  ['scheme', omitEmpty],
  [
    'httpHeaders',
    listOf([
      ['name', str],
      ['value', str],
    ]),
  ],
];
const tcpSocket: Layout = [
  ['port', intOrString],
  ['host', omitEmpty],
];
const exec: Layout = [['command', strings]];
const probe: Layout = [
  ['exec', ptrStruct(exec)],
  ['httpGet', ptrStruct(httpGet)],
  ['tcpSocket', ptrStruct(tcpSocket)],
  [
    'grpc',
    ptrStruct([
      ['port', num],
      ['service', ptr],
    ]),
  ],
  ['initialDelaySeconds', omitEmpty],
  ['timeoutSeconds', omitEmpty],
  ['periodSeconds', omitEmpty],
  ['successThreshold', omitEmpty],
  ['failureThreshold', omitEmpty],
  ['terminationGracePeriodSeconds', ptr],
];
const lifecycleHandler: Layout = [
  ['exec', ptrStruct(exec)],
  ['httpGet', ptrStruct(httpGet)],
  ['tcpSocket', ptrStruct(tcpSocket)],
  ['sleep', ptrStruct([['seconds', num]])],
];

const profile: Layout = [
  ['type', str],
  ['localhostProfile', ptr],
];
const securityContext: Layout = [
  [
    'capabilities',
    ptrStruct([
      ['add', strings],
      ['drop', strings],
    ]),
  ],
  ['privileged', ptr],
  [
    'seLinuxOptions',
    ptrStruct([
      ['user', omitEmpty],
      ['role', omitEmpty],
      ['type', omitEmpty],
      ['level', omitEmpty],
    ]),
  ],
  [
    'windowsOptions',
    ptrStruct([
      ['gmsaCredentialSpecName', ptr],
      ['gmsaCredentialSpec', ptr],
      ['runAsUserName', ptr],
      ['hostProcess', ptr],
    ]),
  ],
  ['runAsUser', ptr],
  ['runAsGroup', ptr],
  ['runAsNonRoot', ptr],
  ['readOnlyRootFilesystem', ptr],
  ['allowPrivilegeEscalation', ptr],
  ['procMount', ptr],
  ['seccompProfile', ptrStruct(profile)],
  ['appArmorProfile', ptrStruct(profile)],
];

/** corev1.Container's fields in declaration order (k8s.io/api v0.30). */
const CONTAINER: Layout = [
  ['name', str],
  ['image', omitEmpty],
  ['command', strings],
  ['args', strings],
  ['workingDir', omitEmpty],
  [
    'ports',
    listOf([
      ['name', omitEmpty],
      ['hostPort', omitEmpty],
      ['containerPort', num],
      ['protocol', omitEmpty],
      ['hostIP', omitEmpty],
    ]),
  ],
  ['envFrom', listOf(envFrom)],
  ['env', listOf(envVar)],
  [
    'resources',
    structField([
      ['limits', quantities],
      ['requests', quantities],
      ['claims', listOf([['name', str]])],
    ]),
  ],
  [
    'resizePolicy',
    listOf([
      ['resourceName', str],
      ['restartPolicy', str],
    ]),
  ],
  ['restartPolicy', ptr],
  [
    'volumeMounts',
    listOf([
      ['name', str],
      ['readOnly', omitEmpty],
      ['recursiveReadOnly', ptr],
      ['mountPath', str],
      ['subPath', omitEmpty],
      ['mountPropagation', ptr],
      ['subPathExpr', omitEmpty],
    ]),
  ],
  [
    'volumeDevices',
    listOf([
      ['name', str],
      ['devicePath', str],
    ]),
  ],
  ['livenessProbe', ptrStruct(probe)],
  ['readinessProbe', ptrStruct(probe)],
  ['startupProbe', ptrStruct(probe)],
  [
    'lifecycle',
    ptrStruct([
      ['postStart', ptrStruct(lifecycleHandler)],
      ['preStop', ptrStruct(lifecycleHandler)],
    ]),
  ],
  ['terminationMessagePath', omitEmpty],
  ['terminationMessagePolicy', omitEmpty],
  ['imagePullPolicy', omitEmpty],
  ['securityContext', ptrStruct(securityContext)],
  ['stdin', omitEmpty],
  ['stdinOnce', omitEmpty],
  ['tty', omitEmpty],
];

const resourceExprs: Layout = [
  ['cpu', omitEmpty],
  ['memory', omitEmpty],
];

/**
 * Kruise's SidecarContainer: the inline Container, then v1.8.2's sidecar fields in order; the two
 * added after v1.8 (shareVolumeDevicePolicy, resourcesPolicy) follow, written only when set, so a
 * SidecarSet that does not use them hashes as under v1.8.2.
 */
const SIDECAR_CONTAINER: Layout = [
  ...CONTAINER,
  ['podInjectPolicy', omitEmpty],
  [
    'upgradeStrategy',
    structField([
      ['upgradeType', omitEmpty],
      ['hotUpgradeEmptyImage', omitEmpty],
    ]),
  ],
  ['shareVolumePolicy', structField([['type', omitEmpty]])],
  ['shareVolumeDevicePolicy', ptrStruct([['type', omitEmpty]])],
  [
    'transferEnv',
    listOf([
      ['sourceContainerName', omitEmpty],
      ['sourceContainerNameFrom', ptrStruct([['fieldRef', ptrStruct(fieldRef)]])],
      ['envName', omitEmpty],
      ['envNames', strings],
    ]),
  ],
  [
    'resourcesPolicy',
    ptrStruct([
      ['targetContainersMode', str],
      ['targetContainersNameRegex', omitEmpty],
      [
        'resourcesExpr',
        structField([
          ['limits', ptrStruct(resourceExprs)],
          ['requests', ptrStruct(resourceExprs)],
        ]),
      ],
    ]),
  ],
];

/**
 * kubelet's HashContainer (k8s.io/kubernetes v1.30.10 pkg/kubelet/container/helpers.go):
 * DeepHashObject over json.Marshal of the container. The kubelet records it on each container it
 * starts; OpenKruise v1.8.2's manager compares it with `plainHash` in runtime-containers-meta.
 */
export function hashContainer(container: unknown): number {
  return deepHashBytes(struct(CONTAINER, container));
}

/** json.Marshal of a []SidecarContainer as Go writes it (null for none). */
export function marshalGoSidecarContainers(containers: readonly unknown[] | undefined | null): string {
  return containers ? `[${containers.map((c) => struct(SIDECAR_CONTAINER, c)).join(',')}]` : 'null';
}
