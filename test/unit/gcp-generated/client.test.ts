// The generic Google providers' small rules, as tables: Google's errors to the engine's classes (with
// Google's message kept), path templates, where an API is reached, and an import by a full name outside
// the spec's home refused.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateGcp } from "../../../infra/gen-gcp.ts";
import {
  type GoogleGenericFake,
  startGoogleGenericFake,
} from "../../../infra/local/fakes/gcp-generic-fake.ts";
import {
  CredentialsError,
  DependentsExistError,
  ExternalError,
  InvalidSpecError,
  ThrottledError,
} from "../../../shared/api/external.ts";
import { loadGoogleCatalog, loadGoogleSpec } from "../../../shared/api/googleapis/catalog.ts";
import type { GoogleKindSpec } from "../../../shared/api/googleapis/spec.ts";
import type { ManagedResource } from "../../../shared/api/managed.ts";
import type { GcpProviderConfigSpec } from "../../../shared/api/provider-config.ts";
import { apiBase, fillPath } from "../../../shared/providers/gcp/generic/client.ts";
import { classifyGoogle, operationError } from "../../../shared/providers/gcp/generic/errors.ts";
import { GoogleHttpError } from "../../../shared/providers/gcp/google-rest.ts";
import { connectGoogle } from "../../support/gcp-generated.ts";

const specOf = (type: string): GoogleKindSpec => {
  const e = loadGoogleCatalog().kinds.find((k) => k.typeName === type);
  if (!e) throw new Error(type);
  return loadGoogleSpec(e);
};
let fake: GoogleGenericFake;
beforeAll(async () => {
  generateGcp();
  fake = await startGoogleGenericFake({ opPolls: 0 });
});
afterAll(() => fake?.close());

describe("Google's errors as the engine's classes", () => {
  const cases: Array<[number, string | undefined, new (...a: never[]) => Error, string]> = [
    [429, undefined, ThrottledError, "RESOURCE_EXHAUSTED"],
    [403, "quotaExceeded", ThrottledError, "RESOURCE_EXHAUSTED"],
    [403, undefined, CredentialsError, "PERMISSION_DENIED"],
    [401, undefined, CredentialsError, "UNAUTHENTICATED"],
    [409, "alreadyExists", ExternalError, "ALREADY_EXISTS"],
    [412, "conditionNotMet", ExternalError, "FAILED_PRECONDITION"],
    [400, "badRequest", InvalidSpecError, "INVALID_ARGUMENT"],
    [400, "resourceInUseByAnotherResource", DependentsExistError, "in use"],
    [404, "notFound", ExternalError, "NOT_FOUND"],
  ];
  for (const [code, reason, cls, text] of cases)
    it(`${code} ${reason ?? ""} → ${cls.name}`, () => {
      const err = classifyGoogle(new GoogleHttpError(code, "Google's own words", reason), "create x");
      expect(err).toBeInstanceOf(cls);
      expect(err.message).toContain(text);
      expect(err.message).toContain("Google's own words");
    });
  // Google's canonical status (error.status) decides where the HTTP code is shared: 400 is INVALID_ARGUMENT,
  // FAILED_PRECONDITION and OUT_OF_RANGE alike (cloud.google.com/apis/design/errors#handling_errors).
  const byStatus: Array<[number, string, string | undefined, new (...a: never[]) => Error, string, string]> =
    [
      [
        400,
        "FAILED_PRECONDITION",
        "failedPrecondition",
        ExternalError,
        "FAILED_PRECONDITION",
        "INVALID_ARGUMENT",
      ],
      [400, "OUT_OF_RANGE", undefined, InvalidSpecError, "OUT_OF_RANGE", "INVALID_ARGUMENT"],
      [409, "ABORTED", "aborted", ExternalError, "ABORTED", "ALREADY_EXISTS"],
      [
        403,
        "PERMISSION_DENIED",
        "SERVICE_DISABLED",
        CredentialsError,
        "SERVICE_DISABLED",
        "RESOURCE_EXHAUSTED",
      ],
      [429, "RESOURCE_EXHAUSTED", "RATE_LIMIT_EXCEEDED", ThrottledError, "RATE_LIMIT_EXCEEDED", "PERMISSION"],
      [504, "DEADLINE_EXCEEDED", undefined, ExternalError, "DEADLINE_EXCEEDED", "UNAVAILABLE"],
    ];
  for (const [code, status, reason, cls, text, not] of byStatus)
    it(`${code} ${status} ${reason ?? ""} → ${cls.name}, status and reason in the message`, () => {
      const err = classifyGoogle(new GoogleHttpError(code, "Google's own words", reason, status), "create x");
      expect(err).toBeInstanceOf(cls);
      expect(err.message).toContain(status);
      expect(err.message).toContain(text);
      expect(err.message).not.toContain(not);
      expect(err.message).toContain("Google's own words");
    });
  it("reads a finished operation's error, google.rpc.Status or Compute's list", () => {
    expect(operationError({ code: 9, message: "state" }, "create")).not.toBeInstanceOf(InvalidSpecError);
    expect(operationError({ code: 3, message: "bad" }, "create")).toBeInstanceOf(InvalidSpecError);
    expect(operationError({ code: 8, message: "quota" }, "create")).toBeInstanceOf(ThrottledError);
    expect(operationError({ code: 9, message: "state" }, "create").message).toContain(
      "FAILED_PRECONDITION: state",
    );
    expect(
      operationError({ errors: [{ code: "QUOTA_EXCEEDED", message: "CPUS" }] }, "insert"),
    ).toBeInstanceOf(ThrottledError);
    expect(
      operationError({ errors: [{ code: "RESOURCE_ALREADY_EXISTS", message: "x" }] }, "insert"),
    ).toBeInstanceOf(ExternalError);
  });
});

describe("paths and endpoints", () => {
  it("fills both families' templates", () => {
    expect(
      fillPath("/v2/{parent=projects/*/locations/*}/services", { parent: "projects/p/locations/l" }),
    ).toBe("/v2/projects/p/locations/l/services");
    expect(fillPath("/v1/{secret.name=projects/*/secrets/*}", { name: "projects/p/secrets/s" })).toBe(
      "/v1/projects/p/secrets/s",
    );
    expect(
      fillPath("/compute/v1/projects/{project}/regions/{region}/addresses/{address}", {
        project: "p",
        region: "r",
        address: "a b",
      }),
    ).toBe("/compute/v1/projects/p/regions/r/addresses/a%20b");
    expect(() => fillPath("/compute/v1/projects/{project}/zones/{zone}/disks", { project: "p" })).toThrow(
      InvalidSpecError,
    );
  });

  it("reaches Google's own host unless the ProviderConfig says otherwise ({api} filled)", () => {
    const run = specOf("run.googleapis.com/Service");
    const pc = (endpoint?: GcpProviderConfigSpec["endpoint"]) =>
      ({
        projectID: "p",
        credentials: { source: "InjectedIdentity" },
        ...(endpoint ? { endpoint } : {}),
      }) as GcpProviderConfigSpec;
    expect(apiBase(run, pc())).toBe("https://run.googleapis.com");
    expect(apiBase(run, pc({ apis: "http://127.0.0.1:9/{api}" }))).toBe("http://127.0.0.1:9/run");
    expect(() => apiBase(run, pc({ apis: "http://evil.example.com/{api}" }))).toThrow(CredentialsError);
  });
});

describe("import by full name", () => {
  it("refuses a full name outside the spec's home, and finds one inside it", async () => {
    const spec = specOf("workflows.googleapis.com/Workflow");
    const client = await connectGoogle(spec, fake.url);
    const mr = (location: string) =>
      ({
        metadata: { name: "w", annotations: {} },
        spec: { forProvider: { location } },
      }) as unknown as ManagedResource;
    await client.create(mr("us-east1"), "w");
    const full = "projects/p/locations/us-east1/workflows/w";
    expect((await client.observe(mr("us-east1"), full)).resourceExists).toBe(true);
    await expect(client.observe(mr("europe-west1"), full)).rejects.toThrow(
      /is not a workflows of projects\/p\/locations\/europe-west1/,
    );
  });
});

describe("a call Google does not publish is never sent", () => {
  const mr = (forProvider: Record<string, unknown>) =>
    ({ metadata: { name: "x", annotations: {} }, spec: { forProvider } }) as unknown as ManagedResource;
  const writes = (before: Record<string, number>) =>
    Object.entries(fake.stats()).filter(([k, n]) => !k.startsWith("GET ") && n > (before[k] ?? 0));

  it("a KeyRing's delete (no DeleteKeyRing) throws before any request; the KeyRing stays", async () => {
    const client = await connectGoogle(specOf("cloudkms.googleapis.com/KeyRing"), fake.url);
    await client.create(mr({ location: "global" }), "kr-unit");
    const full = "projects/p/locations/global/keyRings/kr-unit";
    const before = fake.stats();
    await expect(client.delete(mr({ location: "global" }), "kr-unit")).rejects.toThrow(
      /Google publishes no delete/,
    );
    expect(writes(before)).toEqual([]);
    expect(fake.resource(full)).toMatchObject({ name: full });
  });

  it("an AutokeyConfig's create (no CreateAutokeyConfig) throws before any request; observe finds the folder's", async () => {
    const client = await connectGoogle(specOf("cloudkms.googleapis.com/AutokeyConfig"), fake.url);
    const before = fake.stats();
    await expect(client.create(mr({ parent: "folders/42" }), "x")).rejects.toThrow(
      /Google publishes no create/,
    );
    expect(writes(before)).toEqual([]);
    expect((await client.observe(mr({ parent: "folders/42" }), "x")).resourceExists).toBe(false);
    fake.made("cloudkms.googleapis.com/AutokeyConfig", "folders/42/autokeyConfig", {
      keyProject: "projects/k",
    });
    const seen = await client.observe(mr({ parent: "folders/42" }), "x");
    expect(seen).toMatchObject({ resourceExists: true, observed: { keyProject: "projects/k" } });
    // A full external name must be the parent's own config.
    await expect(client.observe(mr({ parent: "folders/42" }), "folders/43/autokeyConfig")).rejects.toThrow(
      /is not folders\/42\/autokeyConfig/,
    );
  });
});

describe("driftless import: a kind's list", () => {
  const connect = (spec: GoogleKindSpec) => connectGoogle(spec, fake.url, "imp");
  const made = (location: string, name: string) =>
    fetch(`${fake.url}/workflows/v1/projects/imp/locations/${location}/workflows?workflowId=${name}`, {
      method: "POST",
      body: JSON.stringify({ sourceContents: "main: {}" }),
    }).then((r) => r.status);

  it("lists every location with `-` and reads each resource's home fields back from its name", async () => {
    expect(await made("us-east1", "a")).toBe(200);
    expect(await made("europe-west1", "b")).toBe(200);
    const client = await connect(specOf("workflows.googleapis.com/Workflow"));
    const listed = await client.list?.();
    expect(listed?.sort((x, y) => x.externalName.localeCompare(y.externalName))).toEqual([
      // Its full name too: a managed resource holding that one holds it, and --depth lists under it.
      {
        externalName: "a",
        forProvider: { location: "us-east1" },
        alsoNamed: { externalName: "projects/imp/locations/us-east1/workflows/a" },
        fullName: "projects/imp/locations/us-east1/workflows/a",
      },
      {
        externalName: "b",
        forProvider: { location: "europe-west1" },
        alsoNamed: { externalName: "projects/imp/locations/europe-west1/workflows/b" },
        fullName: "projects/imp/locations/europe-west1/workflows/b",
      },
    ]);
  });

  it("names a regional or zonal Compute kind whose collection has no aggregatedList with why", async () => {
    const spec = loadGoogleSpec(
      loadGoogleCatalog().kinds.find(
        (k) => k.family === "compute" && k.kind === "InstantSnapshotGroup",
      ) as never,
    );
    expect(spec.google.aggregated).toBeUndefined();
    const client = await connect(spec);
    await expect(client.list?.()).rejects.toThrow(/regional or zonal Compute kind .* has no aggregatedList/);
  });

  it("lists a regional Compute kind with its collection's aggregatedList: only its own scopes, the region as home", async () => {
    const insert = (scope: string, name: string) =>
      fetch(`${fake.url}/compute/compute/v1/projects/imp/${scope}/subnetworks`, {
        method: "POST",
        body: JSON.stringify({ name, network: "global/networks/n", ipCidrRange: "10.0.0.0/24" }),
      }).then((r) => r.status);
    expect(await insert("regions/us-east1", "s1")).toBe(200);
    expect(await insert("regions/europe-west1", "s1")).toBe(200);
    const client = await connect(specOf("compute.googleapis.com/Subnetwork"));
    const listed = await client.list?.();
    expect(
      listed?.sort((x, y) => String(x.forProvider.region).localeCompare(String(y.forProvider.region))),
    ).toEqual([
      { externalName: "s1", forProvider: { region: "europe-west1" }, parent: "region" },
      { externalName: "s1", forProvider: { region: "us-east1" }, parent: "region" },
    ]);
  });
});

describe("the generic fake answers as Google does, from the same definitions", () => {
  const post = (path: string, body: unknown, method = "POST") =>
    fetch(`${fake.url}${path}`, { method, body: JSON.stringify(body) }).then(async (r) => ({
      status: r.status,
      error: ((await r.json()) as { error?: { status?: string; message?: string } }).error,
    }));
  it("refuses an IMMUTABLE change, a second create and a missing REQUIRED field", async () => {
    const base = "/secretmanager/v1/projects/p/secrets";
    expect((await post(`${base}?secretId=imm`, { replication: { automatic: {} } })).status).toBe(200);
    const again = await post(`${base}?secretId=imm`, { replication: { automatic: {} } });
    expect(again).toMatchObject({ status: 409, error: { status: "ALREADY_EXISTS" } });
    const changed = await post(
      `${base}/imm?updateMask=replication`,
      { replication: { userManaged: { replicas: [{ location: "us-east1" }] } } },
      "PATCH",
    );
    expect(changed).toMatchObject({
      status: 400,
      error: { status: "INVALID_ARGUMENT", message: expect.stringContaining("IMMUTABLE") },
    });
    const missing = await post("/redis/v1/projects/p/locations/l/instances?instanceId=r", { tier: "BASIC" });
    expect(missing).toMatchObject({
      status: 400,
      error: { message: expect.stringContaining("memorySizeGb") },
    });
  });
});
