// V8's compiled code for the modules imported from here on, kept on disk (Node's compile cache): a
// later start loads it instead of compiling them again — 0.33–0.43 → 0.23–0.27 s from a manager's
// start to its webhook answering on a restart (docs/benchmarks.md, "Ninth pass"). In the system's temporary
// directory unless NODE_COMPILE_CACHE names another (in the chart, the pod's /tmp emptyDir: every
// start of the pod after its first); NODE_DISABLE_COMPILE_CACHE=1 turns it off. Entries are keyed
// by the module's content and Node's version, so a new build never loads an old one's code. Only
// what is imported after this call is covered (a static import is compiled before any code runs):
// the entry points import their commands dynamically.
import module from 'node:module';

export function enableCompileCache(): void {
  module.enableCompileCache();
}
