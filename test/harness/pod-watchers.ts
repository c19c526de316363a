// Pod watches that judge a workload's pods at every event a watch delivers (the SIGKILL and rollout
// tests): a state that breaks the workload's bounds at any moment is recorded with what was seen.
import type { KubeClient } from '../../src/runtime/client.ts';
import { Pods } from '../../src/runtime/resources.ts';
import { SharedInformerFactory } from '../../src/runtime/informer-factory.ts';
import { unwrapDeleted } from '../../src/runtime/store.ts';
import type { Pod } from '../../src/apis/core-objects.ts';
import { waitFor } from './cluster.ts';

const isReady = (p: Pod) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

/**
 * Every state of a workload's pods, event by event, as a pod watch sees them, judged by `judge`
 * on the pods not being deleted: each state it finds wrong is a violation (the first 20 are kept).
 */
export abstract class PodStateWatcher {
  private readonly pods = new Map<string, Pod>();
  readonly violations: string[] = [];
  events = 0;
  private readonly abort = new AbortController();
  private readonly factory: SharedInformerFactory;

  constructor(
    client: KubeClient,
    ns: string,
    selector: string,
    /** How many pods the initial list must hold before the first state is judged. */
    private readonly initialPods = 1,
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

  /** What is wrong with this state of the live pods, or undefined when nothing is. */
  protected abstract judge(live: readonly Pod[]): string | undefined;

  async start(): Promise<void> {
    this.factory.start(this.abort.signal);
    await this.factory.waitForCacheSync(this.abort.signal);
    await waitFor('the pod watch to deliver the initial list', async () => this.pods.size >= this.initialPods, 10_000, 20);
    this.check('the initial list');
  }

  /** The names of the pods the watch has seen so far that are not being deleted. */
  activeNames(): string[] {
    return this.live().map((p) => p.metadata.name!);
  }

  stop(): void {
    this.abort.abort();
  }

  private live(): Pod[] {
    return [...this.pods.values()].filter((p) => !p.metadata.deletionTimestamp);
  }

  private check(what: string): void {
    this.events++;
    const wrong = this.judge(this.live());
    if (wrong && this.violations.length < 20) this.violations.push(`after ${what}: ${wrong}`);
  }
}

/** A rollout's bounds: at most maxActive live pods, at least minReady ready, at most maxNotReady not ready. */
export class PodBoundsWatcher extends PodStateWatcher {
  maxActive = 0;
  minReady = Number.MAX_SAFE_INTEGER;
  maxNotReady = 0;

  constructor(
    client: KubeClient,
    ns: string,
    selector: string,
    private readonly bounds: { maxActive: number; minReady: number; maxNotReady: number },
  ) {
    super(client, ns, selector);
  }

  protected judge(active: readonly Pod[]): string | undefined {
    const ready = active.filter(isReady).length;
    const notReady = active.length - ready;
    this.maxActive = Math.max(this.maxActive, active.length);
    this.minReady = Math.min(this.minReady, ready);
    this.maxNotReady = Math.max(this.maxNotReady, notReady);
    const b = this.bounds;
    if (active.length > b.maxActive || ready < b.minReady || notReady > b.maxNotReady) {
      return `${active.length} active, ${ready} ready, ${notReady} not ready`;
    }
    return undefined;
  }
}
