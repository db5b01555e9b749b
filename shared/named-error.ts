// Errors by class: callers branch on the class (or on `name`, which survives the bundles' minifier, unlike
// the class's own name), never on message text. The name is given once, where the class is declared.

// biome-ignore lint/suspicious/noExplicitAny: TypeScript requires a mixin's base to take `...args: any[]`.
type ErrorClass = new (...args: any[]) => Error;

/**
 * The base of a named error class: `class QueueFullError extends namedError("QueueFullError", QueueError) {}`
 * (an own `name` property, as `override name = "…"` in the class body gave it).
 */
export function namedError<B extends ErrorClass>(errorName: string, base: B) {
  return class extends base {
    override name = errorName;
  };
}
