// Secrets and ConfigMaps distributed by a ResourceDistribution in the hash comparison with
// upstream OpenKruise v1.8.2 (test/integration/resourcedistribution-peer.test.ts measures the
// peer; test/unit/controllers/resourcedistribution-hash.test.ts holds what it measured). Each
// exercises one part of how the API server hands out spec.resource's bytes, which upstream hashes
// as they come: key order, HTML and line-separator escapes, non-ASCII text, integers and floats in
// fields the embedded resource keeps without knowing them, nested maps and empty ones.

export interface HashFixture {
  /** The ResourceDistribution's name (and the copy's). */
  name: string;
  resource: Record<string, unknown>;
}

export const RD_HASH_FIXTURES: readonly HashFixture[] = [
  {
    name: 'rd-hash-plain-configmap',
    resource: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'rd-hash-plain-configmap' }, data: { key: 'value' } },
  },
  {
    name: 'rd-hash-ordering',
    resource: {
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: {
        name: 'rd-hash-ordering',
        labels: { 'z.example.com/b': 'x', A: 'y', 'a-b': 'z', 'a.b': 'w' },
        annotations: { zeta: '1', alpha: '2' },
      },
      data: { b: '2', B: '1', 'a.txt': 'first', 'a-txt': 'second', _x: 'under' },
      immutable: true,
    },
  },
  {
    name: 'rd-hash-escapes',
    resource: {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'rd-hash-escapes', annotations: { note: 'a < b && c > d' } },
      data: {
        html: '<script>alert("x")</script> & more',
        unicode: 'héllo wörld — 日本語 😀',
        separators: 'line\u2028para\u2029end',
        control: 'tab\tnewline\nquote"backslash\\ bell\u0007 del\u007f',
      },
    },
  },
  {
    name: 'rd-hash-secret',
    resource: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'rd-hash-secret', labels: { team: 'a' } },
      type: 'Opaque',
      data: { password: 'cGFzc3dvcmQ=', user: 'YWRtaW4=' },
    },
  },
  {
    name: 'rd-hash-tls-secret',
    resource: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'rd-hash-tls-secret' },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': 'Y2VydA==', 'tls.key': 'a2V5' },
    },
  },
  {
    name: 'rd-hash-numbers',
    resource: {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'rd-hash-numbers' },
      data: { k: 'v' },
      // Fields a ConfigMap does not have, kept in the embedded resource (preserve-unknown-fields).
      extra: {
        int: 42,
        negative: -7,
        zeroFloat: 1.0,
        float: 0.1,
        small: 1e-7,
        large: 1e21,
        // Past int64: the API server keeps it as a float64. The literal's own rounding is the point.
        // eslint-disable-next-line no-loss-of-precision
        beyondInt64: 12345678901234567890,
        bool: false,
        nothing: null,
        list: [3, 'two', { b: 1, a: 2 }],
        empty: {},
        emptyList: [],
      },
    },
  },
  {
    name: 'rd-hash-binary',
    resource: {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'rd-hash-binary' },
      binaryData: { 'blob.bin': 'AAECAwQ=' },
      data: {},
    },
  },
];

/** The target namespace every fixture is distributed to. */
export const RD_HASH_NAMESPACE = 'rd-hash-target';

/** A v1alpha1 ResourceDistribution (the only version v1.8.2 serves) for a fixture. */
export function hashFixtureDistribution(f: HashFixture): Record<string, unknown> {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'ResourceDistribution',
    metadata: { name: f.name },
    spec: { resource: f.resource, targets: { includedNamespaces: { list: [{ name: RD_HASH_NAMESPACE }] } } },
  };
}
