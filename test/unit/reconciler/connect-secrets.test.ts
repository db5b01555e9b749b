// Which Secrets a managed resource can make the engine read (shared/reconciler/connect.ts): a resource's
// Secret inputs (a password to set) end in the cloud and in its connection Secret, so naming a Secret is
// copying it. The ProviderConfig's credential Secret is never such an input, and the namespace rule holds
// whether or not the resource has a connection Secret.
import { describe, expect, it } from "vitest";
import type { ManagedKindProvider } from "../../../shared/api/external.ts";
import type { ManagedResource } from "../../../shared/api/managed.ts";
import { providerConfigType } from "../../../shared/api/managed.ts";
import { ProviderConnector } from "../../../shared/reconciler/connect.ts";
import { widgetKind } from "../../support/fake-cloud.ts";
import { MemoryApiServer } from "../../support/memory-apiserver.ts";

const CREDS = { namespace: "crossplane-system", name: "aws-creds", key: "credentials" };

function setup(secretRefNamespaces: string[] = []) {
  const api = new MemoryApiServer();
  const pc = providerConfigType("aws");
  const credentials = { source: "Secret", secretRef: CREDS };
  api.seed(pc, {
    kind: pc.kind,
    apiVersion: `${pc.group}/${pc.version}`,
    metadata: { name: "default" },
    spec: { credentials },
  });
  api.seedSecret(CREDS.namespace, CREDS.name, { credentials: "AKIA-PLATFORM-KEY", other: "more" });
  api.seedSecret("kube-system", "admin", { password: "not-yours" });
  api.seedSecret("team-a", "db", { password: "team-a-password" });
  api.seedSecret("shared-secrets", "db", { password: "shared" });
  const credentialReads: string[] = [];
  const inputs: string[] = [];
  const provider: ManagedKindProvider = {
    definition: widgetKind(),
    // As the real kinds: the credentials at connect, a password the resource names at create.
    connect: async (ctx) => {
      const spec = ctx.providerConfig.spec as { credentials: { secretRef: typeof CREDS } };
      credentialReads.push(await ctx.readSecretKey(spec.credentials.secretRef));
      return {
        observe: async () => ({ resourceExists: false }),
        create: async (mr: ManagedResource) => {
          const ref = (mr.spec.forProvider as { passwordSecretRef?: typeof CREDS }).passwordSecretRef;
          if (ref) inputs.push(await ctx.readSecretKey(ref));
          return {};
        },
        update: async () => ({}),
        delete: async () => {},
      } as never;
    },
  } as ManagedKindProvider;
  const connector = new ProviderConnector(api.kube(), { rateLimit: false, secretRefNamespaces });
  const create = async (forProvider: Record<string, unknown>, connectionNamespace?: string) => {
    const mr = {
      apiVersion: "widgets.fake.driftless.dev/v1alpha1",
      kind: "Widget",
      metadata: { name: "w", uid: "u" },
      spec: {
        forProvider,
        ...(connectionNamespace
          ? { writeConnectionSecretToRef: { name: "w-conn", namespace: connectionNamespace } }
          : {}),
      },
    } as unknown as ManagedResource;
    const client = await connector.connect(provider, mr);
    return client.create(mr, "w");
  };
  return { create, credentialReads, inputs };
}

describe("Secrets a managed resource may name", () => {
  it("the ProviderConfig's credentials are read for the ProviderConfig", async () => {
    const s = setup();
    await s.create({ passwordSecretRef: { namespace: "team-a", name: "db", key: "password" } }, "team-a");
    expect(s.credentialReads).toEqual(["AKIA-PLATFORM-KEY"]);
    expect(s.inputs).toEqual(["team-a-password"]);
  });

  it("attack: a resource naming the credential Secret's key is refused (even with its namespace allowed)", async () => {
    const s = setup(["crossplane-system"]);
    const err = await s.create({ passwordSecretRef: CREDS }, "team-a").catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toContain("credential");
    expect((err as Error).message).not.toContain("AKIA");
    expect(s.inputs).toEqual([]);
  });

  it("attack: another key of the credential Secret is refused too", async () => {
    const s = setup(["*"]);
    const err = await s
      .create({ passwordSecretRef: { ...CREDS, key: "other" } }, "crossplane-system")
      .catch((e: Error) => e);
    expect((err as Error).message).toContain("credential");
    expect(s.inputs).toEqual([]);
  });

  it("attack: without a connection Secret, a Secret in another namespace is still refused", async () => {
    const s = setup();
    const err = await s
      .create({ passwordSecretRef: { namespace: "kube-system", name: "admin", key: "password" } })
      .catch((e: Error) => e);
    expect((err as Error).message).toContain("DRIFTLESS_SECRET_REF_NAMESPACES");
    expect(s.inputs).toEqual([]);
  });

  it("without a connection Secret, a namespace the platform allows is readable", async () => {
    const s = setup(["shared-secrets"]);
    await s.create({ passwordSecretRef: { namespace: "shared-secrets", name: "db", key: "password" } });
    expect(s.inputs).toEqual(["shared"]);
  });
});
