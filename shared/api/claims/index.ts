import { claimKinds } from "./claims.ts";
import { classKinds } from "./classes.ts";
import { claimCrd, classCrd } from "./crd.ts";

export * from "./claims.ts";
export * from "./classes.ts";
export * from "./crd.ts";
export * from "./meta.ts";

/** The CRDs of every claim and class kind. */
export function claimCrds() {
  return [...claimKinds.map(claimCrd), ...classKinds.map(classCrd)];
}
