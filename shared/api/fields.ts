// Field builders for the kinds' schemas: the declarations every kind repeats, each with its own description.
import { z } from "zod";

/** An optional string field, e.g. an atProvider value the cloud reports: `optionalString("The VPC id.")`. */
export const optionalString = (description: string) => z.string().optional().describe(description);
