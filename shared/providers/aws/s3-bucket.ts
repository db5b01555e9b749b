import {
  type BucketLocationConstraint,
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteBucketTaggingCommand,
  DeletePublicAccessBlockCommand,
  GetBucketTaggingCommand,
  GetBucketVersioningCommand,
  GetPublicAccessBlockCommand,
  HeadBucketCommand,
  PutBucketTaggingCommand,
  PutBucketVersioningCommand,
  PutPublicAccessBlockCommand,
  paginateListBuckets,
  S3Client,
} from "@aws-sdk/client-s3";
import type { z } from "zod";
import { Bucket, type BucketAtProvider, type BucketForProvider } from "../../api/aws/s3.ts";
import { firstName, stringAt } from "../../api/cloud-events.ts";
import type {
  ConnectContext,
  ExternalClient,
  ExternalListing,
  ExternalObservation,
} from "../../api/external.ts";
import { defineProvider } from "../../api/external.ts";
import type { ManagedResource } from "../../api/managed.ts";
import type { AwsProviderConfigSpec } from "../../api/provider-config.ts";
import { awsClientConfig, awsErrorCode, ClientCache, perResource, sdkOptions } from "./config.ts";
import { awsHome } from "./home.ts";

type F = z.infer<typeof BucketForProvider>;
type A = z.infer<typeof BucketAtProvider>;
type MR = ManagedResource<F, A>;

// Path-style addressing when an endpoint is overridden: emulators and VPC endpoints have no bucket DNS.
const clients = new ClientCache(
  (c) => new S3Client({ ...sdkOptions(c), forcePathStyle: Boolean(c.endpoint) }),
);

// Key order differs between the API server's spec and the SDK's answer: compare by key.
const sameMap = (a: Record<string, string>, b: Record<string, string> | undefined) =>
  b !== undefined &&
  Object.keys(a).length === Object.keys(b).length &&
  Object.entries(a).every(([k, v]) => b[k] === v);
const sameFlags = (
  a: Record<string, boolean | undefined>,
  b: Record<string, boolean | undefined> | undefined,
) => b !== undefined && Object.entries(a).every(([k, v]) => (v ?? false) === (b[k] ?? false));

const status = (err: unknown) =>
  (err as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
const codeIs = (err: unknown, ...codes: string[]) => codes.includes(awsErrorCode(err));

class BucketClient implements ExternalClient<F, A> {
  readonly #s3: S3Client;
  readonly #region: string;
  readonly #endpoint: string | undefined;
  constructor(s3: S3Client, region: string, endpoint: string | undefined) {
    this.#s3 = s3;
    this.#region = region;
    this.#endpoint = endpoint;
  }

  #details(name: string, region: string) {
    const endpoint = this.#endpoint
      ? `${this.#endpoint.replace(/\/$/, "")}/${name}`
      : `https://${name}.s3.${region}.amazonaws.com`;
    return { bucket: name, region, endpoint };
  }

  async observe(mr: MR, name: string | undefined): Promise<ExternalObservation<F, A>> {
    if (!name) return { resourceExists: false };
    const fp = mr.spec.forProvider;
    let region: string;
    try {
      const head = await this.#s3.send(new HeadBucketCommand({ Bucket: name }));
      region = head.BucketRegion ?? this.#region;
    } catch (err) {
      if (status(err) === 404 || codeIs(err, "NotFound", "NoSuchBucket")) return { resourceExists: false };
      if (status(err) === 403) {
        throw new Error(
          `bucket name "${name}" exists but belongs to another account (bucket names are global)`,
        );
      }
      throw err;
    }
    const versioning = await this.#s3.send(new GetBucketVersioningCommand({ Bucket: name }));
    const observed: Partial<F> = { region };
    if (versioning.Status === "Enabled" || versioning.Status === "Suspended")
      observed.versioning = versioning.Status;
    // Public access block and tags cost a call each: read them only when the spec manages them.
    if (fp.publicAccessBlock !== undefined) {
      try {
        const pab = await this.#s3.send(new GetPublicAccessBlockCommand({ Bucket: name }));
        const c = pab.PublicAccessBlockConfiguration ?? {};
        observed.publicAccessBlock = {
          blockPublicAcls: c.BlockPublicAcls ?? false,
          ignorePublicAcls: c.IgnorePublicAcls ?? false,
          blockPublicPolicy: c.BlockPublicPolicy ?? false,
          restrictPublicBuckets: c.RestrictPublicBuckets ?? false,
        };
      } catch (err) {
        if (!codeIs(err, "NoSuchPublicAccessBlockConfiguration")) throw err;
        observed.publicAccessBlock = {
          blockPublicAcls: false,
          ignorePublicAcls: false,
          blockPublicPolicy: false,
          restrictPublicBuckets: false,
        };
      }
    }
    if (fp.tags !== undefined) {
      try {
        const t = await this.#s3.send(new GetBucketTaggingCommand({ Bucket: name }));
        observed.tags = Object.fromEntries((t.TagSet ?? []).map((x) => [x.Key ?? "", x.Value ?? ""]));
      } catch (err) {
        if (!codeIs(err, "NoSuchTagSet")) throw err;
        observed.tags = {};
      }
    }
    return {
      resourceExists: true,
      observed,
      atProvider: { arn: `arn:aws:s3:::${name}`, region },
      availability: "Available",
      connectionDetails: this.#details(name, region),
    };
  }

  async create(mr: MR, name: string | undefined) {
    if (!name) throw new Error("a bucket needs a name (crossplane.io/external-name)");
    const fp = mr.spec.forProvider;
    try {
      await this.#s3.send(
        new CreateBucketCommand({
          Bucket: name,
          ...(this.#region !== "us-east-1"
            ? {
                CreateBucketConfiguration: { LocationConstraint: this.#region as BucketLocationConstraint },
              }
            : {}),
        }),
      );
    } catch (err) {
      // Ours already (a retried create): carry on and apply the settings.
      if (!codeIs(err, "BucketAlreadyOwnedByYou")) throw err;
    }
    await this.#apply(name, fp, {});
    return { connectionDetails: this.#details(name, this.#region) };
  }

  async #apply(name: string, fp: F, observed: Partial<F>) {
    if (fp.versioning !== undefined && fp.versioning !== observed.versioning) {
      await this.#s3.send(
        new PutBucketVersioningCommand({ Bucket: name, VersioningConfiguration: { Status: fp.versioning } }),
      );
    }
    if (fp.publicAccessBlock !== undefined && !sameFlags(fp.publicAccessBlock, observed.publicAccessBlock)) {
      const p = fp.publicAccessBlock;
      const all = [p.blockPublicAcls, p.ignorePublicAcls, p.blockPublicPolicy, p.restrictPublicBuckets];
      if (all.every((x) => !x)) await this.#s3.send(new DeletePublicAccessBlockCommand({ Bucket: name }));
      else {
        await this.#s3.send(
          new PutPublicAccessBlockCommand({
            Bucket: name,
            PublicAccessBlockConfiguration: {
              BlockPublicAcls: p.blockPublicAcls ?? false,
              IgnorePublicAcls: p.ignorePublicAcls ?? false,
              BlockPublicPolicy: p.blockPublicPolicy ?? false,
              RestrictPublicBuckets: p.restrictPublicBuckets ?? false,
            },
          }),
        );
      }
    }
    if (fp.tags !== undefined && !sameMap(fp.tags, observed.tags)) {
      if (Object.keys(fp.tags).length === 0)
        await this.#s3.send(new DeleteBucketTaggingCommand({ Bucket: name }));
      else {
        await this.#s3.send(
          new PutBucketTaggingCommand({
            Bucket: name,
            Tagging: { TagSet: Object.entries(fp.tags).map(([Key, Value]) => ({ Key, Value })) },
          }),
        );
      }
    }
  }

  async update(mr: MR, name: string, obs: ExternalObservation<F, A>) {
    await this.#apply(name, mr.spec.forProvider, obs.observed ?? {});
    return {};
  }

  async delete(_mr: MR, name: string) {
    try {
      await this.#s3.send(new DeleteBucketCommand({ Bucket: name }));
    } catch (err) {
      if (status(err) === 404 || codeIs(err, "NoSuchBucket")) return;
      if (codeIs(err, "BucketNotEmpty")) {
        throw new Error(`bucket ${name} is not empty: empty it first (driftless never deletes objects)`, {
          cause: err,
        });
      }
      throw err;
    }
  }
}

export const bucketProvider = defineProvider({
  definition: Bucket,
  cloudEvents: {
    aws: {
      source: "aws.s3",
      eventNames: [
        "CreateBucket",
        "DeleteBucket",
        "PutBucketVersioning",
        "PutBucketTagging",
        "DeleteBucketTagging",
        "PutBucketPublicAccessBlock",
        "DeleteBucketPublicAccessBlock",
      ],
      externalNames: (call) => firstName(stringAt(call.requestParameters, "bucketName")),
    },
  },
  iam: [
    {
      sid: "ManagedBuckets",
      actions: [
        "s3:CreateBucket",
        "s3:DeleteBucket",
        "s3:ListBucket",
        "s3:GetBucketTagging",
        "s3:PutBucketTagging",
        "s3:GetBucketVersioning",
        "s3:PutBucketVersioning",
        "s3:GetBucketPublicAccessBlock",
        "s3:PutBucketPublicAccessBlock",
      ],
      resources: ["arn:{partition}:s3:::{namePrefix}*"],
    },
  ],
  limitsEachRequest: true,
  async connect(ctx: ConnectContext<AwsProviderConfigSpec>) {
    const clientFor = async (mr: MR) => {
      const cfg = await awsClientConfig(ctx, mr.status?.atProvider?.region ?? mr.spec.forProvider.region);
      return new BucketClient(clients.get(cfg), cfg.region, cfg.endpoint);
    };
    return {
      ...perResource(clientFor, (mr) => awsHome(ctx, mr.spec.forProvider.region)),
      // `driftless import`: ListBuckets names every bucket of the account, each with its own region.
      async list(): Promise<ExternalListing[]> {
        const cfg = await awsClientConfig(ctx, undefined);
        const s3 = clients.get(cfg);
        const out: ExternalListing[] = [];
        for await (const page of paginateListBuckets({ client: s3, pageSize: 1000 }, {}))
          for (const b of page.Buckets ?? [])
            if (b.Name)
              out.push({ externalName: b.Name, forProvider: { region: b.BucketRegion ?? cfg.region } });
        return out;
      },
    };
  },
});
