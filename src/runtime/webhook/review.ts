// The admission.k8s.io/v1 wire types: what the API server sends a webhook and what it reads back
// (k8s.io/api/admission/v1). The ConversionReview's are those of src/apis/conversion.

import type { ConversionRequest, ConversionResponse, ConversionReview } from '../../apis/conversion/index.ts';
import type { Operation, UserInfo } from './types.ts';

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

export interface AdmissionRequest {
  uid: string;
  kind: GroupVersionKind;
  resource: GroupVersionResource;
  subResource?: string;
  requestKind?: GroupVersionKind;
  requestResource?: GroupVersionResource;
  requestSubResource?: string;
  name?: string;
  namespace?: string;
  operation: Operation;
  userInfo: UserInfo;
  object?: unknown;
  oldObject?: unknown;
  dryRun?: boolean;
  options?: unknown;
}

export interface ResultStatus {
  code?: number;
  reason?: string;
  message?: string;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: ResultStatus;
  patch?: string;
  patchType?: 'JSONPatch';
  warnings?: string[];
}

export interface AdmissionReview {
  apiVersion: string;
  kind: 'AdmissionReview';
  request?: AdmissionRequest;
  response?: AdmissionResponse;
}

/**
 * Converts the objects of a review (src/apis/conversion), answering deliberate failures as a Failure
 * result; a throw is a bug, answered as a Failure with a generic message and logged.
 */
export type ConversionHandler = (
  review: ConversionReview & { request: ConversionRequest },
) => ConversionResponse | Promise<ConversionResponse>;
