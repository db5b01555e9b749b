export * from "./agent.ts";
export * from "./app-kubeconfig.ts";
export * from "./bind.ts";
export * from "./naming.ts";
export * from "./run.ts";
export * from "./sync.ts";
