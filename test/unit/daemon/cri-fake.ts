// A fake CRI v1 runtime for unit tests: a grpc-js server on a unix socket in a temp dir, serving
// whichever RuntimeService/ImageService methods a test provides (the rest answer UNIMPLEMENTED,
// as a real server does for methods it does not have).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { criServices } from '../../../src/daemon/cri/client.ts';

export type Handler = (req: any) => any;

export interface FakeCri {
  socketPath: string;
  endpoint: string;
  /** Requests received, in order, as [rpc, request]. */
  calls: Array<[string, any]>;
  stop(): Promise<void>;
}

export async function startFakeCri(handlers: { runtime?: Record<string, Handler>; image?: Record<string, Handler> }): Promise<FakeCri> {
  const dir = mkdtempSync(path.join(tmpdir(), 'fake-cri-'));
  const socketPath = path.join(dir, 'cri.sock');
  const server = new grpc.Server();
  const calls: Array<[string, any]> = [];
  const { RuntimeService, ImageService } = criServices();
  const wrap = (impl: Record<string, Handler>) =>
    Object.fromEntries(
      Object.entries(impl).map(([rpc, fn]) => [
        rpc,
        (call: grpc.ServerUnaryCall<any, any>, cb: grpc.sendUnaryData<any>) => {
          calls.push([rpc, call.request]);
          try {
            cb(null, fn(call.request));
          } catch (err) {
            const e = err as { code?: grpc.status; message: string };
            cb({ code: e.code ?? grpc.status.UNKNOWN, details: e.message });
          }
        },
      ]),
    );
  if (handlers.runtime) server.addService(RuntimeService.service, wrap(handlers.runtime));
  if (handlers.image) server.addService(ImageService.service, wrap(handlers.image));
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix://${socketPath}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
  );
  return {
    socketPath,
    endpoint: `unix://${socketPath}`,
    calls,
    async stop() {
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** An error a handler throws to answer with a gRPC status. */
export function grpcError(code: grpc.status, message: string): Error & { code: grpc.status } {
  return Object.assign(new Error(message), { code });
}
