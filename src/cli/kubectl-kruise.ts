// `kubectl-kruise`: the kubectl plugin for OpenKruise workloads (`kubectl kruise ...` once it is on
// the PATH). Exit code 0 on success, 1 on any error, printed as kubectl does: `error: ...`.
import { enableCompileCache } from './compile-cache.ts';

enableCompileCache();
const { runKubectlKruise } = await import('./kubectl/main.ts');

// A reader that stops early (`... | head -1`) is not an error.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});

process.exitCode = await runKubectlKruise(process.argv.slice(2));
