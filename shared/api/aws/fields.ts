import { z } from "zod";

/** AWS tag limits (value ≤ 256 characters), enforced by the API server so a bad value never reaches the cloud. */
export const AwsTags = z.record(z.string(), z.string().max(256));
