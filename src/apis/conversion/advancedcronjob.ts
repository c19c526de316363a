// AdvancedCronJob v1alpha1 ↔ v1beta1: both versions share one schema, so only apiVersion changes.

import { identicalConversion, type KindConversion } from './shared.ts';

export const advancedCronJobConversion: KindConversion = identicalConversion;
