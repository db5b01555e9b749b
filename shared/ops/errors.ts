// Errors the operator commands raise; the CLI maps them to exit codes by class, never by message text.
import { namedError } from "../named-error.ts";

/** The command was called wrongly (unknown kind, malformed KIND/NAME, bad configuration): exit 2. */
export class UsageError extends namedError("UsageError", Error) {}

/** What was asked for does not exist (a managed resource, a file): exit 1. */
export class NotFoundError extends namedError("NotFoundError", Error) {}

/**
 * A failure whose exit code the command defines itself, because its 1 already means an answer
 * (`driftless orphans`: 1 = orphans found, so a search that failed exits 2).
 */
export class CommandFailedError extends namedError("CommandFailedError", Error) {
  readonly exitCode: number;
  constructor(message: string, exitCode: number, options?: ErrorOptions) {
    super(message, options);
    this.exitCode = exitCode;
  }
}
