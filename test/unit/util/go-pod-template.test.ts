// Kubernetes' ComputeHash over a pod template (src/util/go-pod-template.ts) against the Go code
// itself: test/fixtures/go-pod-template-hash.json was computed by hack/go-pod-template (`hash`), which
// runs ComputeHash as k8s v1.30.10 writes it, on templates chosen for the awkward parts of spew's
// print — quantities on and off Go's int64 path, with and without their text kept, numbers, padded
// text; label keys beyond ASCII; strings with newlines and quotes; nil vs empty lists and maps;
// IntOrString; collision counts nil, 0 and 3. The Advanced DaemonSet names v1.8.2 gave real
// templates are checked in test/unit/daemonset-golden.test.ts.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { computePodTemplateHash, goPodTemplateDump, goPodTemplateRoundTrip } from '../../../src/util/go-pod-template.ts';

const fixture = JSON.parse(readFileSync(new URL('../../fixtures/go-pod-template-hash.json', import.meta.url), 'utf8')) as {
  cases: Array<{
    template: { spec?: { containers?: Array<{ resources?: { limits?: { cpu?: unknown } } }> } };
    collisionCount: number | null;
    hash: string;
  }>;
};

describe('computePodTemplateHash equals Kubernetes ComputeHash', () => {
  fixture.cases.forEach((c, i) => {
    const cpu = c.template.spec?.containers?.[0]?.resources?.limits?.cpu;
    it(`case ${i}: ${cpu === undefined ? 'no quantity' : `cpu ${JSON.stringify(cpu)}`}, collisionCount ${c.collisionCount}`, () =>
      assert.equal(computePodTemplateHash(c.template, c.collisionCount), c.hash));
  });
});

describe("goPodTemplateDump: spew's %#v of the decoded struct", () => {
  const dump = goPodTemplateDump({
    metadata: { labels: { b: '2', a: '1' } },
    spec: { containers: [{ name: 'c', args: [], resources: { requests: { memory: '512Mi' } } }], terminationGracePeriodSeconds: 0 },
  });
  it('types every field, strings unquoted, pointers with their type', () => {
    assert.match(dump, /^\(v1\.PodTemplateSpec\)\{ObjectMeta:\(v1\.ObjectMeta\)\{Name:\(string\) GenerateName:\(string\) /);
    assert.match(dump, / TerminationGracePeriodSeconds:\(\*int64\)0 ActiveDeadlineSeconds:\(\*int64\)<nil> /);
  });
  it('nil vs empty lists, sorted map keys, a quantity whose text Go does not keep', () => {
    assert.match(dump, /Command:\(\[\]string\)<nil> Args:\(\[\]string\)\[\] /);
    assert.match(dump, /Labels:\(map\[string\]string\)map\[a:1 b:2\] /);
    assert.match(
      dump,
      /map\[memory:\{i:\(resource\.int64Amount\)\{value:\(int64\)536870912 scale:\(resource\.Scale\)0\} d:\(resource\.infDecAmount\)\{Dec:\(\*inf\.Dec\)<nil>\} s:\(string\) Format:\(resource\.Format\)BinarySI\}\]/,
    );
  });
});

describe('goPodTemplateRoundTrip: as Go decodes and re-marshals a template', () => {
  it('drops unknown fields and empty omitempty lists, writes canonical quantities and zero structs', () => {
    const out = goPodTemplateRoundTrip({
      metadata: { labels: { a: '1' }, bogus: 1 },
      spec: { containers: [{ name: 'c', args: [], env: [], resources: { limits: { cpu: 0.5, memory: '1024Mi' } } }], nodeSelector: {} },
    });
    assert.deepEqual(out, {
      metadata: { labels: { a: '1' }, creationTimestamp: null },
      spec: { containers: [{ name: 'c', resources: { limits: { cpu: '500m', memory: '1Gi' } } }] },
    });
  });
});
