// A cloud resource as a cloud's tag search returns it (`driftless orphans`): the cloud's own id (an ARN, an
// ARM resource id, a Cloud Asset name), its type in the cloud's words and its tags (labels on Google).
// Each cloud's search lives beside its providers (providers/<cloud>/tagged.ts); the decision is ops/orphans.ts.
import type { ConnectContext } from "./external.ts";

export interface TaggedResource {
  id: string;
  type: string;
  tags: Record<string, string>;
  /** Where it lives, when the cloud says (region, location). */
  location?: string;
}

/** Which resources to ask for: those carrying `key` (with `value`, exactly that value). */
export interface TagFilter {
  key: string;
  value?: string;
}

/** A cloud's tag search over what one ProviderConfig reaches; resources matching any filter, each once. */
export type TagSearch = (
  // biome-ignore lint/suspicious/noExplicitAny: each cloud's ProviderConfig spec type differs
  ctx: ConnectContext<any>,
  filters: readonly TagFilter[],
  opts: { region?: string | undefined },
) => Promise<TaggedResource[]>;
