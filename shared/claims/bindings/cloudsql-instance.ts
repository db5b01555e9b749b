import { CloudSQLInstanceClass } from "../../api/claims/classes.ts";
import { DatabaseInstance } from "../../api/gcp/sql.ts";
import { type ClassBinding, objectAt } from "../binding.ts";
import { overPostgreSQLLimits } from "./rds-instance.ts";

const DEFAULT_TIERS: Record<string, string> = {
  small: "db-custom-1-3840",
  medium: "db-custom-2-7680",
  large: "db-custom-4-15360",
};

const DEFAULT_VERSION = "POSTGRES_16";

/** "16" or "16.4" → POSTGRES_16: Cloud SQL takes the major version; it picks and upgrades the minor. */
export const cloudSqlVersion = (v: unknown): string | undefined =>
  typeof v === "string" && /^\d+/.test(v) ? `POSTGRES_${v.split(".")[0]}` : undefined;

/** PostgreSQLInstance claims as Cloud SQL for PostgreSQL instances. */
export const cloudSqlInstanceBinding: ClassBinding = {
  class: CloudSQLInstanceClass,
  parts: [
    {
      role: "instance",
      type: DatabaseInstance,
      primary: true,
      // Cloud SQL needs a version to create; a claim that names none gets the current default major.
      fixed: () => ({ databaseVersion: DEFAULT_VERSION }),
      portable: ({ claim, classSpec }) => {
        const size = typeof claim.size === "string" ? claim.size : "small";
        const tiers = { ...DEFAULT_TIERS, ...objectAt(classSpec, "sizes") } as Record<string, string>;
        return {
          databaseVersion: cloudSqlVersion(claim.version),
          diskSize: claim.storageGB,
          // Without the class (deleted after binding) the tier is left as it is.
          tier: classSpec ? tiers[size] : undefined,
        };
      },
    },
  ],
  // The portable host is the private IP when the class gives the instance one, else the public IP.
  connection: (d) => {
    const host = d.privateIP || d.publicIP;
    return { service: "cloudsql-postgresql", ...(host ? { host } : {}) };
  },
  overLimit: (claim, classSpec, cls) => overPostgreSQLLimits(claim, classSpec, cls),
};
