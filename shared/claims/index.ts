export * from "./binding.ts";
export { classBindings } from "./bindings/index.ts";
export * from "./kinds.ts";
export * from "./matching.ts";
export * from "./naming.ts";
export * from "./reconciler.ts";
