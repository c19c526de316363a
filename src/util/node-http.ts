// node:http loaded through require rather than an ES import. Node builds the ES-module namespace of
// a builtin by reading every export, and node:http's lazy getters (WebSocket, MessageEvent…) then
// load Node's bundled undici: ≈13 MiB of RSS and 60–250 ms of start-up for nothing the manager uses.
// Types come from `import type { … } from 'node:http'`, which is erased.
import { createRequire } from 'node:module';

export const http = createRequire(import.meta.url)('node:http') as typeof import('node:http');
