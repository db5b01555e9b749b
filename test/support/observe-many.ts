// The batched drift check's contract, checked per kind against its emulator or fake: `observeMany` over
// a set of resources returns, for each one, exactly what `observe` returns for it alone.
import { expect } from "vitest";
import type { ExternalClient, ExternalObservation, ObserveManyItem } from "../../shared/api/external.ts";

type Client = ExternalClient<Record<string, unknown>, Record<string, unknown>>;
type Item = ObserveManyItem<Record<string, unknown>, Record<string, unknown>>;

/** Runs observeMany once and observe per item; asserts equal results and returns both. */
export async function expectObserveManyMatchesObserve(client: Client, items: readonly Item[]) {
  if (!client.observeMany) throw new Error("this client has no observeMany");
  const many = await client.observeMany(items);
  expect(many).toHaveLength(items.length);
  const single: Array<ExternalObservation<Record<string, unknown>, Record<string, unknown>> | Error> = [];
  for (const item of items) {
    single.push(await client.observe(item.mr, item.externalName).catch((err: Error) => err));
  }
  for (const [i, item] of items.entries()) {
    const m = many[i];
    const s = single[i];
    if (s instanceof Error) {
      expect(m, `${item.externalName}: observe failed, observeMany should too`).toBeInstanceOf(Error);
      continue;
    }
    expect(m, `${item.externalName}: observeMany vs observe`).toEqual(s);
  }
  return { many, single };
}
