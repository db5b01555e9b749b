import { describe, expect, it } from "vitest";
import { DEFAULT_CLASS_ANNOTATION } from "../../../shared/api/claims/meta.ts";
import { ambiguity, type Candidate, selectClass } from "../../../shared/claims/matching.ts";

const KINDS = ["SQSQueueClass", "PubSubQueueClass"];
const def = { [DEFAULT_CLASS_ANNOTATION]: "true" };
const c = (kind: string, name: string, o: Partial<Candidate> = {}): Candidate => ({ kind, name, ...o });
const select = (candidates: Candidate[], o: { selector?: Record<string, string>; namespace?: string } = {}) =>
  selectClass({
    claimKind: "Queue",
    classKinds: KINDS,
    namespace: o.namespace ?? "shop",
    selector: o.selector ? { matchLabels: o.selector } : undefined,
    candidates,
  });

describe("selectClass", () => {
  it("uses the default class when no selector is given", () => {
    const s = select([c("SQSQueueClass", "plain"), c("SQSQueueClass", "std", { annotations: def })]);
    expect(s).toMatchObject({ found: true, how: "default", chosen: { name: "std" } });
  });

  it("ignores defaults when a selector is given, and matches labels across kinds", () => {
    const s = select(
      [
        c("SQSQueueClass", "std", { annotations: def, labels: { tier: "std" } }),
        c("PubSubQueueClass", "fast", { labels: { tier: "fast", cloud: "gcp" } }),
      ],
      { selector: { tier: "fast" } },
    );
    expect(s).toMatchObject({
      found: true,
      how: "selector",
      chosen: { kind: "PubSubQueueClass", name: "fast" },
    });
  });

  it("chooses deterministically among several: kind, then name", () => {
    const all = [
      c("SQSQueueClass", "a", { annotations: def }),
      c("PubSubQueueClass", "z", { annotations: def }),
      c("PubSubQueueClass", "b", { annotations: def }),
    ];
    for (const order of [all, [...all].reverse()]) {
      const s = select(order);
      expect(s).toMatchObject({ found: true, chosen: { kind: "PubSubQueueClass", name: "b" } });
      if (s.found) expect(ambiguity(s)?.reason).toBe("SeveralDefaultClasses");
    }
  });

  it("never qualifies a class that does not allow the namespace, and says so", () => {
    const only = [c("SQSQueueClass", "private", { annotations: def, allowedNamespaces: ["payments"] })];
    const s = select(only);
    expect(s).toEqual({
      found: false,
      reason: "ClassNotAllowed",
      message: expect.stringContaining(
        'that allows namespace "shop": SQSQueueClass/private does not list it',
      ),
    });
    expect(select(only, { namespace: "payments" })).toMatchObject({ found: true });
    // Another namespace's default does not count towards ambiguity either.
    const two = [...only, c("SQSQueueClass", "public", { annotations: def })];
    const chosen = select(two);
    expect(chosen).toMatchObject({ found: true, chosen: { name: "public" } });
    if (chosen.found) expect(ambiguity(chosen)).toBeUndefined();
  });

  it("reports what it looked for when nothing matches", () => {
    expect(select([], { selector: { tier: "gold" } })).toEqual({
      found: false,
      reason: "ClassNotFound",
      message:
        "no SQSQueueClass or PubSubQueueClass matches spec.classSelector {tier=gold}; set spec.classRef or spec.classSelector, or ask the platform team for a class. Binding is retried.",
    });
    expect(select([c("SQSQueueClass", "x")])).toMatchObject({
      found: false,
      reason: "ClassNotFound",
      message: expect.stringContaining(
        `no default class for Queue claims (a SQSQueueClass or PubSubQueueClass annotated ${DEFAULT_CLASS_ANNOTATION}: "true")`,
      ),
    });
  });

  it('treats only the value "true" as default', () => {
    expect(
      select([c("SQSQueueClass", "x", { annotations: { [DEFAULT_CLASS_ANNOTATION]: "false" } })]),
    ).toMatchObject({
      found: false,
    });
  });
});
