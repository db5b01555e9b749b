import { type Logger, pino } from "pino";

const CENSOR = "[redacted]";
/** Field names that hold a secret, compared lowercased without `_` and `-` (clientSecret, private_key…). */
const SECRET_KEY =
  /password|passwd|secret|token|authorization|cookie|credential|privatekey|apikey|accountkey|^sas|signature|connectiondetails|^data$/;
/** Field names that point at a secret rather than hold it (secretRef, masterPasswordSecretRef, secretName). */
const REFERENCE_KEY = /(ref|name|namespace)$/;

/** Whether a field of this name is redacted wherever it occurs. */
export function isSecretKey(key: string): boolean {
  const k = key.toLowerCase().replace(/[-_]/g, "");
  return SECRET_KEY.test(k) && !REFERENCE_KEY.test(k);
}

/** A copy of a JSON value with every secret-named field, at any depth, replaced by "[redacted]". */
export function redactSecrets(value: unknown, depth = 0): unknown {
  if (depth > 64) return CENSOR;
  if (Array.isArray(value)) return value.map((v) => redactSecrets(v, depth + 1));
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = isSecretKey(k) ? CENSOR : redactSecrets(v, depth + 1);
  return out;
}

/**
 * Structured JSON logs, one line per event. Field names that could carry a secret are redacted as a
 * second line of defence (the code never logs secret values in the first place): by name, case-
 * insensitively, at any depth, on the finished line — so child bindings and serialized errors (their
 * own properties and causes, e.g. an HTTP client's request headers) are covered too.
 */
export function createLogger(
  opts: { level?: string; name?: string; destination?: NodeJS.WritableStream } = {},
): Logger {
  return pino(
    {
      name: opts.name ?? "driftless",
      level: opts.level ?? process.env.LOG_LEVEL ?? "info",
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      hooks: {
        streamWrite: (line) => {
          let record: unknown;
          try {
            record = JSON.parse(line);
          } catch {
            return line;
          }
          return `${JSON.stringify(redactSecrets(record))}\n`;
        },
      },
    },
    opts.destination as pino.DestinationStream | undefined,
  );
}

export type { Logger };
