// JSON values as the clouds' REST answers and the managed resources' specs hold them.

/** A JSON object. */
export type Json = Record<string, unknown>;

/** A JSON object: not null, not an array. */
export const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** `o` without its undefined members: what a cloud's answer sets. */
export const defined = <T extends Json>(o: T): Partial<T> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
