import { DBInstance } from "../../api/aws/rds.ts";
import { RDSInstanceClass } from "../../api/claims/classes.ts";
import { type ClassBinding, type Fields, objectAt } from "../binding.ts";

const DEFAULT_SIZES: Record<string, string> = {
  small: "db.t3.micro",
  medium: "db.t3.medium",
  large: "db.m5.large",
};
const DEFAULT_MASTER_USERNAME = "dbadmin";

/** PostgreSQLInstance claims as Amazon RDS DB instances with engine postgres. */
export const rdsInstanceBinding: ClassBinding = {
  class: RDSInstanceClass,
  parts: [
    {
      role: "instance",
      type: DBInstance,
      primary: true,
      fixed: ({ classSpec }) => ({
        engine: "postgres",
        masterUsername: objectAt(classSpec, "forProvider").masterUsername ?? DEFAULT_MASTER_USERNAME,
      }),
      portable: ({ claim, classSpec }) => {
        const size = typeof claim.size === "string" ? claim.size : "small";
        const sizes = { ...DEFAULT_SIZES, ...objectAt(classSpec, "sizes") } as Record<string, string>;
        return {
          engineVersion: claim.version,
          allocatedStorage: claim.storageGB,
          // Without the class (deleted after binding) the size is left as it is.
          dbInstanceClass: classSpec ? sizes[size] : undefined,
        };
      },
    },
  ],
  // The portable "host"; endpoint, port, username and password come from the DBInstance as they are.
  connection: (d) => ({ service: "rds-postgresql", ...(d.endpoint ? { host: d.endpoint } : {}) }),
  overLimit: (claim, classSpec, cls) => overPostgreSQLLimits(claim, classSpec, cls),
};

/** The limits every PostgreSQL class shares (maxStorageGB, allowedSizes): why a claim is over them, if it is. */
export function overPostgreSQLLimits(claim: Fields, classSpec: Fields, cls: string): string | undefined {
  const limits = objectAt(classSpec, "limits");
  const max = typeof limits.maxStorageGB === "number" ? limits.maxStorageGB : undefined;
  const storage = typeof claim.storageGB === "number" ? claim.storageGB : undefined;
  if (max !== undefined && storage !== undefined && storage > max)
    return `storageGB ${storage} is over the limit: ${cls} allows at most ${max} GiB per claim; ask for less, or use another class`;
  const sizes = Array.isArray(limits.allowedSizes) ? (limits.allowedSizes as string[]) : undefined;
  const size = typeof claim.size === "string" ? claim.size : "small";
  if (sizes && !sizes.includes(size))
    return `size ${size} is over the limit: ${cls} allows ${sizes.join(", ")}; choose one of those, or use another class`;
  return undefined;
}
