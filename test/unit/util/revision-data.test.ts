import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  cloneSetRevisionData,
  equalRevision,
  newCloneSetRevision,
  normalisePodTemplate,
  templateFromRevision,
  volumeClaimTemplatesHash,
} from '../../../src/util/revision-data.ts';
import { controllerRevisionName, hashControllerRevision } from '../../../src/util/revision.ts';
import { cloneSet, template } from '../cloneset/fixtures.ts';

describe('revision data', () => {
  it('serialises the template like Go: creationTimestamp null, resources {}, $patch replace, sorted keys', () => {
    assert.equal(
      cloneSetRevisionData(cloneSet()),
      '{"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null,"labels":{"app":"demo"}},"spec":{"containers":[{"image":"nginx:1.0","name":"main","resources":{}}]}}}}',
    );
  });
  it('keeps existing resources and normalises init containers', () => {
    const t = normalisePodTemplate({
      spec: { containers: [{ name: 'a', resources: { limits: { cpu: '1' } } }], initContainers: [{ name: 'i' }] },
    });
    assert.deepEqual(t, {
      metadata: { creationTimestamp: null },
      spec: { containers: [{ name: 'a', resources: { limits: { cpu: '1' } } }], initContainers: [{ name: 'i', resources: {} }] },
    });
  });
  it('names the revision <cs>-<hash of data and collisionCount>', () => {
    const cs = cloneSet();
    const data = cloneSetRevisionData(cs);
    const r0 = newCloneSetRevision(cs, 1, 0);
    assert.equal(r0.metadata.name, controllerRevisionName('cs', data, 0));
    assert.equal(r0.metadata.labels!['controller.kubernetes.io/hash'], hashControllerRevision(data, 0));
    assert.equal(r0.metadata.labels!.app, 'demo');
    assert.equal(r0.revision, 1);
    assert.notEqual(newCloneSetRevision(cs, 1, 1).metadata.name, r0.metadata.name);
    assert.equal(r0.metadata.ownerReferences![0].kind, 'CloneSet');
  });
  it('VCT hash annotation: "" without templates, stable and order-independent with them', () => {
    assert.equal(newCloneSetRevision(cloneSet(), 1).metadata.annotations!['kruise.io/cloneset-volumeclaimtemplate-hash'], '');
    const a = { metadata: { name: 'a' }, spec: { accessModes: ['ReadWriteOnce'] } };
    const b = { metadata: { name: 'b' }, spec: { accessModes: ['ReadWriteMany'] } };
    assert.match(volumeClaimTemplatesHash([a, b]), /^\d+$/);
    assert.equal(volumeClaimTemplatesHash([a, b]), volumeClaimTemplatesHash([b, a]));
    assert.notEqual(volumeClaimTemplatesHash([a]), volumeClaimTemplatesHash([b]));
  });
  it('copies CloneSet annotations onto the revision', () => {
    const cs = cloneSet();
    cs.metadata!.annotations = { foo: 'bar' };
    assert.equal(newCloneSetRevision(cs, 1).metadata.annotations!.foo, 'bar');
  });
  it('equalRevision compares data; templateFromRevision round-trips', () => {
    const r1 = newCloneSetRevision(cloneSet(), 1);
    const r2 = newCloneSetRevision(cloneSet({ replicas: 9 }), 2);
    const r3 = newCloneSetRevision(cloneSet({ template: template('nginx:2.0') }), 3);
    assert.ok(equalRevision(r1, r2));
    assert.ok(!equalRevision(r1, r3));
    assert.ok(equalRevision(r1, { ...r1, data: JSON.stringify(r1.data) }));
    assert.equal(templateFromRevision(r3).spec!.containers[0].image, 'nginx:2.0');
    assert.equal((templateFromRevision(r3) as Record<string, unknown>).$patch, undefined);
  });
});
