export * from "./template.ts";
