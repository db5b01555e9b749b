// How every generic provider reads the secret inputs its spec names by `…SecretRef(s)`: one Secret key at a
// time, for one request only, with an error that says which field and Secret failed and never a value.
import { InvalidSpecError } from "../api/external.ts";
import type { SecretKeySelector } from "../api/meta.ts";

/** Where a secret is read from: its field path with list indexes (for messages) and its Secret key. */
export interface SecretUse {
  at: string;
  ref: SecretKeySelector;
}

/** `read` for one spec field: a failure names the field and the Secret (namespace rule, missing key). */
export function secretReader(
  read: (ref: SecretKeySelector) => Promise<string>,
): (use: SecretUse) => Promise<string> {
  return async ({ at, ref }) => {
    try {
      return await read(ref);
    } catch (err) {
      throw new InvalidSpecError(
        `cannot read spec.forProvider.${at} from Secret ${ref.namespace}/${ref.name} key "${ref.key}": ${(err as Error).message}`,
        { cause: err },
      );
    }
  };
}
