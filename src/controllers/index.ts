// Every controller the manager runs on the leader.
import { cloneSetController } from './cloneset/controller.ts';
import type { ControllerSetup } from './types.ts';

export const allControllers: readonly ControllerSetup[] = [cloneSetController];
