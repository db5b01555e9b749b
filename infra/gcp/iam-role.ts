// The Google Cloud IAM custom role the reconcile functions' identity needs for the activated generated
// kinds: the union of their permissions (api/googleapis/spec.ts `permissions`, derived from Google's
// `service.resource.verb` names and confirmed against Google's predefined roles by infra/gen-gcp.ts), in
// the file format `gcloud iam roles create ROLE_ID --project=P --file=role.yaml` reads
// (cloud.google.com/iam/docs/creating-custom-roles).
//
//   DRIFTLESS_ACTIVATE=run.googleapis.service,compute.googleapis.network node infra/gcp/iam-role.ts
import { stringify } from "yaml";
import type { GoogleKindSpec } from "../../shared/api/googleapis/spec.ts";
import { activatedGoogleSpecs } from "../../shared/providers/gcp/generic/activated.ts";

export interface GoogleCustomRole {
  title: string;
  description: string;
  stage: "GA";
  includedPermissions: string[];
}

/** The custom role of these kinds: every permission of their calls, once, sorted. */
export function googleIamRole(specs: readonly GoogleKindSpec[]): GoogleCustomRole {
  const names = new Set(specs.flatMap((s) => Object.values(s.permissions).flat()));
  const unconfirmed = [...new Set(specs.flatMap((s) => s.google.unconfirmedPermissions ?? []))].sort();
  return {
    title: "driftless reconciler (generated Google Cloud kinds)",
    description: `Create, get, update, delete and list of ${specs.map((s) => s.typeName).join(", ")}.${
      unconfirmed.length > 0
        ? ` Derived but in no predefined role (check the API's access control page): ${unconfirmed.join(", ")}.`
        : ""
    }`.slice(0, 256),
    stage: "GA",
    includedPermissions: [...names].sort(),
  };
}

if (import.meta.main) {
  const specs = activatedGoogleSpecs();
  if (specs.length === 0) {
    console.error(
      "no generated Google Cloud kind is activated: set DRIFTLESS_ACTIVATE (docs/gcp-generated.md)",
    );
    process.exit(1);
  }
  process.stdout.write(stringify(googleIamRole(specs)));
}
