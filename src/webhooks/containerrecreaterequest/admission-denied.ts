// A denial that is not a list of field errors: upstream handlers answer some requests with
// admission.Errored(code, plain message) — mutating webhooks that refuse (CRR), validators whose
// rules return bare errors (ImagePullJob, NodeImage). Webhook functions throw it; the server
// answers `allowed: false` with this code and message.
// TODO(contract): belongs in src/webhooks/types.ts next to Validator/Defaulter.

export class AdmissionDenied extends Error {
  override name = 'AdmissionDenied';
  constructor(
    message: string,
    /** HTTP status upstream answers with: 400 bad request, 403 forbidden, 500 internal. */
    readonly code: 400 | 403 | 422 | 500 = 400,
  ) {
    super(message);
  }
}
