import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  FEATURE_GATE_DEFAULTS,
  FEATURE_GATE_NAMES,
  applyFeatureGateDependencies,
  defaultFeatureGates,
  parseFeatureGates,
  resolveFeatureGates,
  type FeatureGate,
  type FeatureGates,
} from '../../../src/apis/features.ts';

const withGates = (overrides: Partial<Record<FeatureGate, boolean>>): FeatureGates => ({
  ...FEATURE_GATE_DEFAULTS,
  ...overrides,
});

describe('parseFeatureGates', () => {
  test('parses a comma list of gate=bool', () => {
    assert.deepEqual(parseFeatureGates('ImagePullJobGate=true, PodWebhook=false'), {
      ImagePullJobGate: true,
      PodWebhook: false,
    });
  });

  test('accepts the spellings strconv.ParseBool accepts', () => {
    assert.deepEqual(parseFeatureGates('CloneSetShortHash=1,TemplateNoDefaults=T,PodWebhook=FALSE,KruiseDaemon=f'), {
      CloneSetShortHash: true,
      TemplateNoDefaults: true,
      PodWebhook: false,
      KruiseDaemon: false,
    });
  });

  test('empty input sets nothing', () => {
    assert.deepEqual(parseFeatureGates(''), {});
    assert.deepEqual(parseFeatureGates(' , '), {});
  });

  test('an unknown gate is an error naming it', () => {
    assert.throws(() => parseFeatureGates('PodWebhook=true,NoSuchGate=true'), /unrecognized feature gate: NoSuchGate/);
  });

  test("AllAlpha / AllBeta set every gate of v1.8.2's stage; a gate named on its own wins wherever it stands", () => {
    // What OpenKruise's own config/manager and e2e setup pass.
    const gates = resolveFeatureGates('AllAlpha=true,AllBeta=true,EnableExternalCerts=false');
    assert.equal(gates.EnableExternalCerts, false);
    for (const g of [
      'CloneSetShortHash',
      'ResourceDistributionGate',
      'ImagePullJobGate',
      'InPlaceWorkloadVerticalScaling',
      'PodUnavailableBudgetUpdateGate',
    ] as const) {
      assert.equal(gates[g], true, g);
    }
    for (const g of ['ResourcesDeletionProtection', 'PodWebhook', 'KruiseDaemon'] as const) assert.equal(gates[g], true, g);
    // Gates v1.8.2 does not have are left at their default, as v1.8.2 leaves them.
    assert.equal(gates.DaemonSetPruneIneligibleNodes, false);
    assert.equal(gates.EnableSortSidecarContainerByName, false);
    assert.deepEqual(parseFeatureGates('CloneSetShortHash=false,AllAlpha=true').CloneSetShortHash, false);
    assert.deepEqual(parseFeatureGates('AllBeta=false').PodWebhook, false);
    assert.equal(parseFeatureGates('AllBeta=false').CloneSetShortHash, undefined);
    assert.throws(() => parseFeatureGates('AllAlpha=maybe'), /invalid value of AllAlpha=maybe/);
  });

  test('a value that is not a bool is an error', () => {
    assert.throws(() => parseFeatureGates('PodWebhook=yes'), /invalid value of PodWebhook=yes/);
    assert.throws(() => parseFeatureGates('PodWebhook'), /missing bool value for PodWebhook/);
  });
});

describe('defaults', () => {
  test('spec §2 defaults', () => {
    const on = FEATURE_GATE_NAMES.filter((g) => FEATURE_GATE_DEFAULTS[g]).sort();
    assert.deepEqual(on, [
      'DaemonWatchingPod',
      'InPlaceUpdateEnvFromMetadata',
      'KruiseDaemon',
      'PodIndexLabel',
      'PodProbeMarkerGate',
      'PodUnavailableBudgetDeleteGate',
      'PodWebhook',
      'StatefulSetAutoDeletePVC',
      'WorkloadSpread',
    ]);
    assert.equal(FEATURE_GATE_NAMES.length, 36);
  });

  test('CUSTOM_RESOURCE_ENABLE without SidecarSet turns the pod webhook default off', () => {
    assert.equal(defaultFeatureGates({}).PodWebhook, true);
    assert.equal(defaultFeatureGates({ CUSTOM_RESOURCE_ENABLE: '' }).PodWebhook, true);
    assert.equal(defaultFeatureGates({ CUSTOM_RESOURCE_ENABLE: 'CloneSet,SidecarSet' }).PodWebhook, true);
    assert.equal(defaultFeatureGates({ CUSTOM_RESOURCE_ENABLE: 'CloneSet,StatefulSet' }).PodWebhook, false);
  });

  test('an explicit flag still wins over the CUSTOM_RESOURCE_ENABLE default', () => {
    assert.equal(resolveFeatureGates('PodWebhook=true', { CUSTOM_RESOURCE_ENABLE: 'CloneSet' }).PodWebhook, true);
  });
});

describe('applyFeatureGateDependencies', () => {
  test('the defaults are consistent', () => {
    assert.deepEqual(applyFeatureGateDependencies(FEATURE_GATE_DEFAULTS), FEATURE_GATE_DEFAULTS);
  });

  test('PodWebhook off forces its dependants off', () => {
    const gates = applyFeatureGateDependencies(
      withGates({
        PodWebhook: false,
        KruisePodReadinessGate: true,
        PodUnavailableBudgetUpdateGate: true,
        SidecarSetPatchPodMetadataDefaultsAllowed: true,
        EnhancedLivenessProbe: true,
        EnablePodProbeMarkerOnServerless: true,
      }),
    );
    for (const gate of [
      'KruisePodReadinessGate',
      'PodUnavailableBudgetDeleteGate',
      'PodUnavailableBudgetUpdateGate',
      'WorkloadSpread',
      'SidecarSetPatchPodMetadataDefaultsAllowed',
      'EnhancedLivenessProbe',
      'EnablePodProbeMarkerOnServerless',
    ] as const) {
      assert.equal(gates[gate], false, gate);
    }
    assert.equal(gates.KruiseDaemon, true);
  });

  test('KruiseDaemon off forces its dependants off, pre-download included', () => {
    const gates = applyFeatureGateDependencies(
      withGates({
        KruiseDaemon: false,
        PreDownloadImageForInPlaceUpdate: true,
        PreDownloadImageForDaemonSetUpdate: true,
        SidecarTerminator: true,
        ImagePullJobGate: true,
        EnhancedLivenessProbe: true,
      }),
    );
    for (const gate of [
      'PreDownloadImageForInPlaceUpdate',
      'PreDownloadImageForDaemonSetUpdate',
      'DaemonWatchingPod',
      'InPlaceUpdateEnvFromMetadata',
      'PodProbeMarkerGate',
      'SidecarTerminator',
      'ImagePullJobGate',
      'EnhancedLivenessProbe',
    ] as const) {
      assert.equal(gates[gate], false, gate);
    }
  });

  test('image pre-download turns ImagePullJobGate on', () => {
    assert.equal(resolveFeatureGates('PreDownloadImageForInPlaceUpdate=true').ImagePullJobGate, true);
    assert.equal(resolveFeatureGates('PreDownloadImageForDaemonSetUpdate=true').ImagePullJobGate, true);
    assert.equal(resolveFeatureGates('PreDownloadImageForInPlaceUpdate=true,ImagePullJobGate=false').ImagePullJobGate, true);
  });

  test('Cascading deletion protection needs ResourcesDeletionProtection', () => {
    assert.equal(resolveFeatureGates('DeletionProtectionForCRDCascadingGate=true').DeletionProtectionForCRDCascadingGate, false);
    assert.equal(
      resolveFeatureGates('DeletionProtectionForCRDCascadingGate=true,ResourcesDeletionProtection=true')
        .DeletionProtectionForCRDCascadingGate,
      true,
    );
  });

  test('does not modify its input', () => {
    const input = withGates({ PodWebhook: false });
    applyFeatureGateDependencies(input);
    assert.equal(input.WorkloadSpread, true);
  });
});
