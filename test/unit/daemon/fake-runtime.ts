// A ContainerRuntime for unit tests: containers and images held in memory, every call recorded.
import type { ContainerRuntime, ExecResult, PullImageRequest, RuntimeContainer, RuntimeImage } from '../../../src/daemon/runtime/types.ts';

export class FakeRuntime implements ContainerRuntime {
  readonly name = 'fake';
  containers: RuntimeContainer[] = [];
  images = new Map<string, RuntimeImage>();
  calls: string[] = [];
  stopError?: string;
  exec: (cmd: string[]) => Promise<ExecResult> = async () => ({ exitCode: 0, stdout: '', stderr: '' });
  pull: (req: PullImageRequest) => Promise<{ imageRef: string }> = async (req) => ({ imageRef: `sha256:${req.image}` });

  async version() {
    return { runtimeName: 'fake', runtimeVersion: '1', runtimeApiVersion: 'v1' };
  }
  async podContainers() {
    return this.containers;
  }
  async execSync(id: string, cmd: string[], timeout: number) {
    this.calls.push(`exec ${id} ${cmd.join(' ')} ${timeout}`);
    return this.exec(cmd);
  }
  async stopContainer(id: string, timeout: number) {
    this.calls.push(`stop ${id} ${timeout}`);
    if (this.stopError) throw new Error(this.stopError);
  }
  async pullImage(req: PullImageRequest) {
    this.calls.push(`pull ${req.image}`);
    return this.pull(req);
  }
  async imageStatus(image: string) {
    return this.images.get(image);
  }
  async listImages() {
    return [...this.images.values()];
  }
  async close() {}
}
