// One pod read as a watch event reads it (figures printed, never asserted): the recorded pods of
// test/fixtures/protobuf (running pods from the local cluster, status and conditions included), each
// as "k8s\0" + Unknown, under --variants distinct names, uids and resourceVersions, decoded by
// decodeObject without managedFields; CPU time per pod over --count decodes, --rounds times, after a
// warm-up. With --against DIR (a checkout of another commit, e.g. a git worktree), that checkout's
// codec runs in the same process, its rounds alternating with this one's: an A/B that the
// machine's load and CPU steal move alike.
// Usage: ./run.sh bench decode [--count 40000] [--rounds 6] [--variants 50] [--against /work/wt/base]
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { benchArgs } from './args.ts';
import protobuf from 'protobufjs/light.js';
import * as here from '../src/runtime/protobuf/codec.ts';
import { DESCRIPTOR } from '../src/runtime/protobuf/kubernetes.generated.ts';

const { values } = benchArgs(import.meta.url, {
  options: {
    count: { type: 'string', default: '40000' },
    rounds: { type: 'string', default: '6' },
    variants: { type: 'string', default: '50' },
    against: { type: 'string' },
  },
});
const count = Number(values.count);

const root = protobuf.Root.fromJSON(DESCRIPTOR);
const Unknown = root.lookupType('k8s.io.apimachinery.pkg.runtime.Unknown');
const PodList = root.lookupType('k8s.io.api.core.v1.PodList');
const Pod = root.lookupType('k8s.io.api.core.v1.Pod');
const MAGIC = Buffer.from('k8s\0', 'latin1');
const fixtures = path.join(import.meta.dirname, '..', 'test', 'fixtures', 'protobuf');
const { raw } = Unknown.decode(readFileSync(path.join(fixtures, 'pod-list.pb')).subarray(MAGIC.length)) as unknown as { raw: Uint8Array };
const recorded = (PodList.decode(raw) as unknown as { items: protobuf.Message[] }).items;
const pods: Buffer[] = [];
for (let i = 0; i < Number(values.variants); i++) {
  for (const p of recorded) {
    const pod = Pod.toObject(p) as { metadata: { name: string; uid: string; resourceVersion: string } };
    pod.metadata = {
      ...pod.metadata,
      name: `${pod.metadata.name}-${i}`,
      uid: `uid-${i}-${pod.metadata.uid}`,
      resourceVersion: String(1000 + i),
    };
    const bytes = Pod.encode(Pod.fromObject(pod)).finish();
    pods.push(Buffer.concat([MAGIC, Unknown.encode({ typeMeta: { apiVersion: 'v1', kind: 'Pod' }, raw: bytes }).finish()]));
  }
}

type DecodeObject = typeof here.decodeObject;
const codecs: Array<{ name: string; decode: DecodeObject; perPod: number[] }> = [
  { name: 'this checkout', decode: here.decodeObject, perPod: [] },
];
if (values.against) {
  const other = (await import(path.resolve(values.against, 'src/runtime/protobuf/codec.ts'))) as typeof here;
  codecs.push({ name: values.against, decode: other.decodeObject, perPod: [] });
}

/** CPU microseconds per pod over `count` decodes. */
function round(decode: DecodeObject): number {
  const start = process.cpuUsage();
  for (let i = 0; i < count; i++) decode(pods[i % pods.length]!, { withoutManagedFields: true });
  const used = process.cpuUsage(start);
  return (used.user + used.system) / count;
}

for (const c of codecs) round(c.decode); // warm-up: the decoders are generated on first use
for (let r = 0; r < Number(values.rounds); r++) for (const c of codecs) c.perPod.push(round(c.decode));

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
console.log(
  `${pods.length} pods (${recorded.length} recorded × ${values.variants}), ${pods[0]!.length} bytes each, ${count} decodes per round`,
);
console.log('| codec | CPU µs per pod, median | rounds |');
console.log('|---|---|---|');
for (const c of codecs) console.log(`| ${c.name} | ${median(c.perPod).toFixed(1)} | ${c.perPod.map((x) => x.toFixed(1)).join(' ')} |`);
