import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { registrations, validatePodProbeMarker } from '../../../src/webhooks/podprobemarker/index.ts';
import { admission, loadExamples, msg } from './nonworkload-helpers.ts';

const V = 'apps.kruise.io/v1alpha1';
const probe = (p: Record<string, any> = {}) => ({
  name: 'healthy',
  containerName: 'main',
  probe: { exec: { command: ['true'] } },
  podConditionType: 'game.io/healthy',
  ...p,
});
const ppm = (probes: any[], selector: any = { matchLabels: { app: 'game' } }): any => ({
  apiVersion: V,
  kind: 'PodProbeMarker',
  metadata: { name: 'p', namespace: 'default' },
  spec: { selector, probes },
});
const errors = (obj: any, old?: any) => msg(validatePodProbeMarker(obj, old, admission(V, old ? 'UPDATE' : 'CREATE')));

describe('PodProbeMarker validation', () => {
  test('upstream examples pass', () => {
    for (const doc of loadExamples('podprobemarker.yaml', 'PodProbeMarker')) assert.equal(errors(doc), '', doc.metadata.name);
  });
  const cases: Array<[string, any, string]> = [
    ['empty selector', ppm([probe()], {}), 'spec.selector: Invalid value: {}: empty selector is not valid for podProbeMarker.'],
    ['no selector', ppm([probe()], null), 'spec.selector: Invalid value: null: empty Selector is not valid for PodProbeMarker.'],
    ['no probes', ppm([]), 'spec.probes: Invalid value: []: empty probes is not valid for PodProbeMarker.'],
    [
      'duplicate probe',
      ppm([probe(), probe({ podConditionType: 'other' })]),
      'spec.probes: Invalid value: "healthy": probe name must be unique in PodProbeMarker.',
    ],
    ['# in name', ppm([probe({ name: 'a#b' })]), `spec.probes: Invalid value: "a#b": probe name can't contains '#'.`],
    ['native condition name', ppm([probe({ name: 'Ready' })]), `spec.probes: Invalid value: "Ready": probe name can't be Ready`],
    [
      'no container',
      ppm([probe({ containerName: '' })]),
      `spec.probes: Invalid value: "": probe containerName can't be empty in PodProbeMarker.`,
    ],
    ['no handler', ppm([probe({ probe: {} })]), 'spec.probe: Required value: must specify a handler type'],
    [
      'two handlers',
      ppm([probe({ probe: { exec: { command: ['a'] }, tcpSocket: { port: 80 } } })]),
      'spec.probe.tcpSocket: Forbidden: may not specify more than 1 handler type',
    ],
    [
      'negative period',
      ppm([probe({ probe: { exec: { command: ['a'] }, periodSeconds: -1 } })]),
      'spec.probe.periodSeconds: Invalid value: -1: must be greater than or equal to 0',
    ],
    [
      'http host',
      ppm([probe({ probe: { httpGet: { host: 'x', port: 80, path: '/', scheme: 'HTTP' } } })]),
      'spec.probe.httpGet.host: Invalid value: "x": host field in probes is not allowed',
    ],
    [
      'no result sink',
      ppm([probe({ podConditionType: undefined })]),
      'spec.probes: Invalid value: {"name":"healthy","containerName":"main","probe":{"exec":{"command":["true"]}}}: podConditionType and markerPolicy cannot be empty at the same time',
    ],
    [
      'bad marker state',
      ppm([probe({ markerPolicy: [{ state: 'Unknown', labels: { a: 'b' } }] })]),
      `spec.markerPolicy.state: Required value: marker policy state must be 'True' or 'False'`,
    ],
    [
      'empty marker',
      ppm([probe({ markerPolicy: [{ state: 'Succeeded' }] })]),
      `spec.markerPolicy: Required value: marker policy annotations or labels can't be both empty`,
    ],
  ];
  for (const [name, obj, expected] of cases) test(name, () => assert.equal(errors(obj), expected));
  test('selector is immutable', () => {
    assert.equal(
      errors(ppm([probe()], { matchLabels: { app: 'other' } }), ppm([probe()])),
      'selector: Invalid value: {"matchLabels":{"app":"other"}}: selector must be immutable',
    );
  });
  test('served with the gate off, refusing (403) as upstream does', () => {
    assert.deepEqual(
      registrations.map((r) => [r.resource, r.versions, r.gate]),
      [['podprobemarkers', ['v1alpha1'], undefined]],
    );
    assert.throws(
      () => validatePodProbeMarker(ppm([probe()]), undefined, admission(V, 'CREATE', { gates: { PodProbeMarkerGate: false } })),
      { message: 'feature-gate PodProbeMarkerGate is not enabled', code: 403 },
    );
  });
});
