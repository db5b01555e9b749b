export * from "./crd.ts";
export * from "./external.ts";
export * from "./managed.ts";
export * from "./meta.ts";
export * from "./provider-config.ts";
