// A pod watch that checks a workload's rollout bounds at every event (used by the SIGKILL tests).
import type { KubeClient } from '../../src/runtime/client.ts';
import { Pods } from '../../src/runtime/resources.ts';
import { SharedInformerFactory, unwrapDeleted } from '../../src/runtime/informer.ts';
import type { Pod } from '../../src/apis/core-objects.ts';
import { waitFor } from '../harness/cluster.ts';

const isReady = (p: Pod) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

/**
 * Every state of a workload's pods, event by event, as a pod watch sees them: a violation of the
 * rollout bounds at any moment is recorded with what was seen.
 */
export class PodBoundsWatcher {
  private readonly pods = new Map<string, Pod>();
  readonly violations: string[] = [];
  events = 0;
  maxActive = 0;
  minReady = Number.MAX_SAFE_INTEGER;
  maxNotReady = 0;
  private readonly abort = new AbortController();
  private factory: SharedInformerFactory;

  constructor(
    client: KubeClient,
    ns: string,
    selector: string,
    private readonly bounds: { maxActive: number; minReady: number; maxNotReady: number },
  ) {
    this.factory = new SharedInformerFactory(client, {});
    const informer = this.factory.informerFor<Pod>(Pods, { namespace: ns, labelSelector: selector });
    const seen = (p: Pod, initial = false) => {
      this.pods.set(p.metadata.name!, p);
      // The initial list arrives one pod at a time: only the whole of it is a state.
      if (!initial) this.check(`${p.metadata.name} rv ${p.metadata.resourceVersion}`);
    };
    informer.addEventHandler({
      onAdd: (p, initial) => seen(p, initial),
      onUpdate: (_old, p) => seen(p),
      onDelete: (o) => {
        const p = unwrapDeleted(o);
        this.pods.delete(p.metadata.name!);
        this.check(`${p.metadata.name} deleted`);
      },
    });
  }

  async start(): Promise<void> {
    this.factory.start(this.abort.signal);
    await this.factory.waitForCacheSync(this.abort.signal);
    await waitFor('the pod watch to deliver the initial list', async () => this.pods.size > 0, 10_000, 20);
    this.check('the initial list');
  }

  /** The names of the pods the watch has seen so far that are not being deleted. */
  activeNames(): string[] {
    return [...this.pods.values()].filter((p) => !p.metadata.deletionTimestamp).map((p) => p.metadata.name!);
  }

  private check(what: string): void {
    this.events++;
    const active = [...this.pods.values()].filter((p) => !p.metadata.deletionTimestamp);
    const ready = active.filter(isReady).length;
    const notReady = active.length - ready;
    this.maxActive = Math.max(this.maxActive, active.length);
    this.minReady = Math.min(this.minReady, ready);
    this.maxNotReady = Math.max(this.maxNotReady, notReady);
    const b = this.bounds;
    if (active.length > b.maxActive || ready < b.minReady || notReady > b.maxNotReady) {
      if (this.violations.length < 20)
        this.violations.push(`after ${what}: ${active.length} active, ${ready} ready, ${notReady} not ready`);
    }
  }

  stop(): void {
    this.abort.abort();
  }
}
