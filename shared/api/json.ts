// JSON values as the clouds' REST answers and the managed resources' specs hold them.

/** A JSON object. */
export type Json = Record<string, unknown>;

/** A JSON object: not null, not an array. */
export const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
