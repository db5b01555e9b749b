import { describe, expect, it } from "vitest";
import { ClaimLabels } from "../../../shared/api/claims/meta.ts";
import {
  claimLabels,
  labelValue,
  MAX_RESOURCE_NAME,
  namespaceAllowed,
  resourceName,
  systemSecretName,
} from "../../../shared/claims/naming.ts";

const UID = "3f2a9c1e-77b0-4c2d-9e1f-0a1b2c3d4e5f";

describe("resourceName", () => {
  it("is the claim's name and the first 8 characters of its uid", () => {
    expect(resourceName({ name: "orders", uid: UID })).toBe("orders-3f2a9c1e");
  });

  it("is the same for every call with the same claim (every worker agrees)", () => {
    const names = new Set(Array.from({ length: 5 }, () => resourceName({ name: "orders", uid: UID })));
    expect(names.size).toBe(1);
  });

  it("differs for two claims of the same name (another namespace, or deleted and recreated)", () => {
    expect(resourceName({ name: "orders", uid: UID })).not.toBe(
      resourceName({ name: "orders", uid: "99999999-0000-0000-0000-000000000000" }),
    );
  });

  it("fits every cloud: ≤ 63 characters, lower case, starts with a letter, no dots or double hyphens", () => {
    for (const name of [
      "a".repeat(253),
      "my.app.queue",
      "9lives",
      "x--y---z",
      "-leading",
      "google-events",
      `${"ab-".repeat(30)}tail`,
    ]) {
      const out = resourceName({ name, uid: UID });
      expect(out.length).toBeLessThanOrEqual(MAX_RESOURCE_NAME);
      expect(out).toMatch(/^[a-z][a-z0-9]*(-[a-z0-9]+)*$/);
      expect(out.startsWith("goog")).toBe(false);
      expect(out.endsWith("-3f2a9c1e")).toBe(true);
    }
  });

  it("refuses a claim without a uid (it was never stored)", () => {
    expect(() => resourceName({ name: "orders" })).toThrow(/no uid/);
  });
});

describe("labels and names", () => {
  it("labels a resource with its claim's namespace, name and uid, within label limits", () => {
    const labels = claimLabels({ name: `${"n".repeat(100)}.x`, namespace: "shop", uid: UID });
    expect(labels[ClaimLabels.namespace]).toBe("shop");
    expect(labels[ClaimLabels.uid]).toBe(UID);
    expect(labels[ClaimLabels.name]?.length).toBe(63);
    expect(labelValue("abc-.")).toBe("abc");
  });

  it("names the system Secret after the claim's uid", () => {
    expect(systemSecretName(UID)).toBe(`claim-${UID}`);
  });
});

describe("namespaceAllowed", () => {
  it('admits "*", exact names and "prefix-*" patterns, nothing else', () => {
    expect(namespaceAllowed(undefined, "any")).toBe(true);
    expect(namespaceAllowed(["*"], "any")).toBe(true);
    expect(namespaceAllowed(["shop"], "shop")).toBe(true);
    expect(namespaceAllowed(["shop"], "shop-dev")).toBe(false);
    expect(namespaceAllowed(["payments-*"], "payments-eu")).toBe(true);
    expect(namespaceAllowed(["payments-*"], "payments")).toBe(false);
    expect(namespaceAllowed([], "shop")).toBe(false);
  });
});
