// Go's json.Marshal of a SidecarSet's []SidecarContainer (apps.kruise.io/v1alpha1 with corev1.Container
// inline, k8s.io/api v0.30 as OpenKruise v1.8.2 is built): struct fields in declaration order,
// omitempty fields dropped when empty, non-pointer structs always written. The SidecarSet hashes
// (kruise.io/sidecarset-hash, -without-image) are taken over these bytes, so they must match
// upstream's byte for byte for pods injected by either to count as up to date.
import { goQuantity, goStruct, nonEmptyList, nonEmptyMap, omitEmptyStr, requiredStr, type Field } from './revision-data.ts';
import { marshalGoJSON } from './revision.ts';

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : undefined);
/** A pointer field: written whenever set (null and undefined are nil). */
const ptr = (v: unknown, enc: (x: unknown) => string | undefined = marshalGoJSON): string | undefined => (v == null ? undefined : enc(v));
const omitEmptyNum = (v: unknown) => (typeof v === 'number' && v !== 0 ? marshalGoJSON(v) : undefined);
const omitEmptyBool = (v: unknown) => (v === true ? 'true' : undefined);
const strings = (v: unknown) => nonEmptyList(v, (x) => marshalGoJSON(x));
/** A pointer to a struct, or undefined. */
const ptrStruct = (v: unknown, fields: (o: Json) => Field[]) => {
  const o = obj(v);
  return o ? goStruct(fields(o)) : undefined;
};
/** A value struct: always written ({} when unset). */
const valueStruct = (v: unknown, fields: (o: Json) => Field[]) => goStruct(fields(obj(v) ?? {}));
/** A type whose field order this file does not spell out: Go's order is approximated by sorted keys. */
const untyped = (v: unknown) => (v == null ? undefined : marshalGoJSON(v));

const localObjectReference = (o: Json): Field[] => [['name', omitEmptyStr(o.name)]];
const keySelector = (o: Json): Field[] => [...localObjectReference(o), ['key', requiredStr(o.key)], ['optional', ptr(o.optional)]];
const intOrString = (v: unknown) => (typeof v === 'number' || typeof v === 'string' ? marshalGoJSON(v) : '0');

const envVar = (v: unknown) =>
  valueStruct(v, (o) => [
    ['name', requiredStr(o.name)],
    ['value', omitEmptyStr(o.value)],
    [
      'valueFrom',
      ptrStruct(o.valueFrom, (f) => [
        [
          'fieldRef',
          ptrStruct(f.fieldRef, (r) => [
            ['apiVersion', omitEmptyStr(r.apiVersion)],
            ['fieldPath', requiredStr(r.fieldPath)],
          ]),
        ],
        [
          'resourceFieldRef',
          ptrStruct(f.resourceFieldRef, (r) => [
            ['containerName', omitEmptyStr(r.containerName)],
            ['resource', requiredStr(r.resource)],
            ['divisor', r.divisor == null ? '"0"' : marshalGoJSON(goQuantity(r.divisor))],
          ]),
        ],
        ['configMapKeyRef', ptrStruct(f.configMapKeyRef, keySelector)],
        ['secretKeyRef', ptrStruct(f.secretKeyRef, keySelector)],
      ]),
    ],
  ]);

const envFromSource = (v: unknown) =>
  valueStruct(v, (o) => [
    ['prefix', omitEmptyStr(o.prefix)],
    ['configMapRef', ptrStruct(o.configMapRef, (r) => [...localObjectReference(r), ['optional', ptr(r.optional)]])],
    ['secretRef', ptrStruct(o.secretRef, (r) => [...localObjectReference(r), ['optional', ptr(r.optional)]])],
  ]);

const containerPort = (v: unknown) =>
  valueStruct(v, (o) => [
    ['name', omitEmptyStr(o.name)],
    ['hostPort', omitEmptyNum(o.hostPort)],
    ['containerPort', marshalGoJSON(typeof o.containerPort === 'number' ? o.containerPort : 0)],
    ['protocol', omitEmptyStr(o.protocol)],
    ['hostIP', omitEmptyStr(o.hostIP)],
  ]);

const volumeMount = (v: unknown) =>
  valueStruct(v, (o) => [
    ['name', requiredStr(o.name)],
    ['readOnly', omitEmptyBool(o.readOnly)],
    ['recursiveReadOnly', ptr(o.recursiveReadOnly)],
    ['mountPath', requiredStr(o.mountPath)],
    ['subPath', omitEmptyStr(o.subPath)],
    ['mountPropagation', ptr(o.mountPropagation)],
    ['subPathExpr', omitEmptyStr(o.subPathExpr)],
  ]);

const volumeDevice = (v: unknown) =>
  valueStruct(v, (o) => [
    ['name', requiredStr(o.name)],
    ['devicePath', requiredStr(o.devicePath)],
  ]);

const resources = (v: unknown) =>
  valueStruct(v, (o) => [
    ['limits', nonEmptyMap(o.limits, goQuantity)],
    ['requests', nonEmptyMap(o.requests, goQuantity)],
    ['claims', nonEmptyList(o.claims, (c) => valueStruct(c, (r) => [['name', requiredStr(r.name)]]))],
  ]);

const handlerFields = (o: Json): Field[] => [
  ['exec', ptrStruct(o.exec, (e) => [['command', strings(e.command)]])],
  [
    'httpGet',
    ptrStruct(o.httpGet, (h) => [
      ['path', omitEmptyStr(h.path)],
      ['port', intOrString(h.port)],
      ['host', omitEmptyStr(h.host)],
      ['scheme', omitEmptyStr(h.scheme)],
      [
        'httpHeaders',
        nonEmptyList(h.httpHeaders, (x) =>
          valueStruct(x, (hh) => [
            ['name', requiredStr(hh.name)],
            ['value', requiredStr(hh.value)],
          ]),
        ),
      ],
    ]),
  ],
  [
    'tcpSocket',
    ptrStruct(o.tcpSocket, (t) => [
      ['port', intOrString(t.port)],
      ['host', omitEmptyStr(t.host)],
    ]),
  ],
];

const probe = (v: unknown) =>
  ptrStruct(v, (o) => [
    ...handlerFields(o),
    [
      'grpc',
      ptrStruct(o.grpc, (g) => [
        ['port', marshalGoJSON(typeof g.port === 'number' ? g.port : 0)],
        ['service', ptr(g.service)],
      ]),
    ],
    ['initialDelaySeconds', omitEmptyNum(o.initialDelaySeconds)],
    ['timeoutSeconds', omitEmptyNum(o.timeoutSeconds)],
    ['periodSeconds', omitEmptyNum(o.periodSeconds)],
    ['successThreshold', omitEmptyNum(o.successThreshold)],
    ['failureThreshold', omitEmptyNum(o.failureThreshold)],
    ['terminationGracePeriodSeconds', ptr(o.terminationGracePeriodSeconds)],
  ]);

const lifecycleHandler = (v: unknown) =>
  ptrStruct(v, (o) => [
    ...handlerFields(o),
    ['sleep', ptrStruct(o.sleep, (s) => [['seconds', marshalGoJSON(typeof s.seconds === 'number' ? s.seconds : 0)]])],
  ]);

/** corev1.Container's fields, in declaration order. */
function containerFields(c: Json): Field[] {
  return [
    ['name', requiredStr(c.name)],
    ['image', omitEmptyStr(c.image)],
    ['command', strings(c.command)],
    ['args', strings(c.args)],
    ['workingDir', omitEmptyStr(c.workingDir)],
    ['ports', nonEmptyList(c.ports, containerPort)],
    ['envFrom', nonEmptyList(c.envFrom, envFromSource)],
    ['env', nonEmptyList(c.env, envVar)],
    ['resources', resources(c.resources)],
    [
      'resizePolicy',
      nonEmptyList(c.resizePolicy, (x) =>
        valueStruct(x, (r) => [
          ['resourceName', requiredStr(r.resourceName)],
          ['restartPolicy', requiredStr(r.restartPolicy)],
        ]),
      ),
    ],
    ['restartPolicy', ptr(c.restartPolicy)],
    ['volumeMounts', nonEmptyList(c.volumeMounts, volumeMount)],
    ['volumeDevices', nonEmptyList(c.volumeDevices, volumeDevice)],
    ['livenessProbe', probe(c.livenessProbe)],
    ['readinessProbe', probe(c.readinessProbe)],
    ['startupProbe', probe(c.startupProbe)],
    [
      'lifecycle',
      ptrStruct(c.lifecycle, (l) => [
        ['postStart', lifecycleHandler(l.postStart)],
        ['preStop', lifecycleHandler(l.preStop)],
      ]),
    ],
    ['terminationMessagePath', omitEmptyStr(c.terminationMessagePath)],
    ['terminationMessagePolicy', omitEmptyStr(c.terminationMessagePolicy)],
    ['imagePullPolicy', omitEmptyStr(c.imagePullPolicy)],
    ['securityContext', untyped(c.securityContext)],
    ['stdin', omitEmptyBool(c.stdin)],
    ['stdinOnce', omitEmptyBool(c.stdinOnce)],
    ['tty', omitEmptyBool(c.tty)],
  ];
}

/** v1alpha1.SidecarContainer: the container inline, then the sidecar fields v1.8.2 knows. */
export function goSidecarContainer(v: unknown): string {
  return valueStruct(v, (c) => [
    ...containerFields(c),
    ['podInjectPolicy', omitEmptyStr(c.podInjectPolicy)],
    [
      'upgradeStrategy',
      valueStruct(c.upgradeStrategy, (u) => [
        ['upgradeType', omitEmptyStr(u.upgradeType)],
        ['hotUpgradeEmptyImage', omitEmptyStr(u.hotUpgradeEmptyImage)],
      ]),
    ],
    ['shareVolumePolicy', valueStruct(c.shareVolumePolicy, (s) => [['type', omitEmptyStr(s.type)]])],
    [
      'transferEnv',
      nonEmptyList(c.transferEnv, (t) =>
        valueStruct(t, (e) => [
          ['sourceContainerName', omitEmptyStr(e.sourceContainerName)],
          [
            'sourceContainerNameFrom',
            ptrStruct(e.sourceContainerNameFrom, (f) => [
              [
                'fieldRef',
                ptrStruct(f.fieldRef, (r) => [
                  ['apiVersion', omitEmptyStr(r.apiVersion)],
                  ['fieldPath', requiredStr(r.fieldPath)],
                ]),
              ],
            ]),
          ],
          ['envName', omitEmptyStr(e.envName)],
          ['envNames', strings(e.envNames)],
        ]),
      ),
    ],
  ]);
}

/** []SidecarContainer; nil (absent) marshals as null. */
export function goSidecarContainers(list: unknown): string {
  return Array.isArray(list) ? `[${list.map(goSidecarContainer).join(',')}]` : 'null';
}
