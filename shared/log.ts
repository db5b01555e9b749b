import { type Logger, pino } from "pino";

/**
 * Structured JSON logs, one line per event. Field names that could carry a secret are redacted as a
 * second line of defence: the code never logs secret values in the first place.
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
      redact: {
        paths: [
          "password",
          "*.password",
          "secretAccessKey",
          "*.secretAccessKey",
          "credentials",
          "*.credentials",
          "connectionDetails",
          "*.connectionDetails",
          "data",
          "*.data",
          "token",
          "*.token",
        ],
        censor: "[redacted]",
      },
    },
    opts.destination as pino.DestinationStream | undefined,
  );
}

export type { Logger };
