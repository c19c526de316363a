// What a caught value says, for events, conditions and logs: thrown values need not be Errors.
export const errMessage = (err: unknown): string => (err instanceof Error ? err.message : String(err));
