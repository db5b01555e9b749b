import { FlexibleServer } from "../../api/azure/dbforpostgresql.ts";
import { AzurePostgreSQLClass } from "../../api/claims/classes.ts";
import { type ClassBinding, objectAt } from "../binding.ts";
import { overPostgreSQLLimits } from "./rds-instance.ts";

const DEFAULT_SKUS: Record<string, { name: string; tier: string }> = {
  small: { name: "Standard_B1ms", tier: "Burstable" },
  medium: { name: "Standard_D2ds_v5", tier: "GeneralPurpose" },
  large: { name: "Standard_D4ds_v5", tier: "GeneralPurpose" },
};
const DEFAULT_ADMINISTRATOR = "pgadmin";
/** The storage sizes (GiB) a flexible server offers. */
const STORAGE_SIZES = [32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32767];

/** The smallest storage size Azure offers that holds `gb`. */
export const azureStorageSize = (gb: unknown): number | undefined =>
  typeof gb === "number" ? (STORAGE_SIZES.find((s) => s >= gb) ?? STORAGE_SIZES.at(-1)) : undefined;

/** PostgreSQLInstance claims as Azure Database for PostgreSQL flexible servers. */
export const azurePostgreSQLBinding: ClassBinding = {
  class: AzurePostgreSQLClass,
  parts: [
    {
      role: "server",
      type: FlexibleServer,
      primary: true,
      fixed: ({ classSpec }) => ({
        administratorLogin: objectAt(classSpec, "forProvider").administratorLogin ?? DEFAULT_ADMINISTRATOR,
      }),
      portable: ({ claim, classSpec }) => {
        const size = typeof claim.size === "string" ? claim.size : "small";
        const skus = { ...DEFAULT_SKUS, ...objectAt(classSpec, "sizes") } as Record<string, unknown>;
        return {
          version: typeof claim.version === "string" ? claim.version.split(".")[0] : undefined,
          storageSizeGB: azureStorageSize(claim.storageGB),
          // Without the class (deleted after binding) the sku is left as it is.
          sku: classSpec ? skus[size] : undefined,
        };
      },
    },
  ],
  // host, port, username and password come from the server's connection Secret as they are.
  connection: () => ({ service: "azure-postgresql" }),
  overLimit: (claim, classSpec, cls) => overPostgreSQLLimits(claim, classSpec, cls),
};
