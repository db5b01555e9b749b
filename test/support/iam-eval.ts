// A small evaluator of Allow statements, for tests that compare what two sets of statements grant: IAM's
// matching of actions (case-insensitive, `*` and `?`), resources (`*` and `?`, over the whole ARN — at least
// as broad as IAM's per-segment matching, so a "not allowed" here is not allowed by IAM either) and the
// condition operators the generators write (StringEquals, StringLike, Null). Anything else is an error.

import { resolved, type Stage, WORST_CASE_STAGE } from "../../infra/iam-policies.ts";
import type { IamStatement } from "../../shared/api/external.ts";

/** One request as IAM sees it: its action, one resource ARN (`*` for a call without one) and its context. */
export interface IamRequest {
  action: string;
  resource: string;
  /** Context keys present in the request: `aws:RequestedRegion`, `aws:ResourceTag/k`, `aws:TagKeys`… */
  context: Record<string, string | readonly string[]>;
}

const globs = new Map<string, RegExp>();
function glob(pattern: string, caseless: boolean): RegExp {
  const id = `${caseless ? "i" : "c"}${pattern}`;
  let re = globs.get(id);
  if (!re) {
    const body = pattern
      .split("")
      .map((ch) => (ch === "*" ? ".*" : ch === "?" ? "." : ch.replace(/[.+^${}()|[\]\\]/g, "\\$&")))
      .join("");
    re = new RegExp(`^${body}$`, caseless ? "is" : "s");
    globs.set(id, re);
  }
  return re;
}

const valuesOf = (v: string | readonly string[] | undefined) =>
  v === undefined ? [] : typeof v === "string" ? [v] : v;

function conditionHolds(condition: IamStatement["condition"], req: IamRequest, stage: Stage): boolean {
  for (const [op, keys] of Object.entries(condition ?? {}))
    for (const [key, value] of Object.entries(keys)) {
      const wanted = valuesOf(value).map((v) => resolved(v, stage));
      const have = valuesOf(req.context[key]);
      switch (op) {
        case "StringEquals":
          if (!have.some((h) => wanted.includes(h))) return false;
          break;
        case "StringLike":
          if (!have.some((h) => wanted.some((w) => glob(w, false).test(h)))) return false;
          break;
        case "Null":
          if (wanted.length !== 1) throw new Error(`Null ${key}: one value expected`);
          if ((wanted[0] === "true") !== (have.length === 0)) return false;
          break;
        default:
          throw new Error(`condition operator ${op} is not evaluated here`);
      }
    }
  return true;
}

/** Whether one statement allows `req`. */
export function statementAllows(s: IamStatement, req: IamRequest, stage: Stage = WORST_CASE_STAGE): boolean {
  return (
    s.actions.some((a) => glob(a, true).test(req.action)) &&
    s.resources.some((r) => glob(resolved(r, stage), false).test(req.resource)) &&
    conditionHolds(s.condition, req, stage)
  );
}

interface Compiled {
  exact: Set<string>;
  wild: RegExp[];
  resources: RegExp[];
  statement: IamStatement;
}

/**
 * Statements indexed by the actions they name, so a request is checked against those that can match it:
 * exact names by their lower-case form, wildcard names against every request. Identical statements count
 * once; patterns are compiled once.
 */
export class IamEvaluator {
  readonly #exact = new Map<string, Compiled[]>();
  readonly #wild: Compiled[] = [];
  readonly #stage: Stage;

  constructor(statements: readonly IamStatement[], stage: Stage = WORST_CASE_STAGE) {
    this.#stage = stage;
    // Per action, each (resources, condition) once: many kinds' statements repeat them.
    const seen = new Set<string>();
    const compiled = new Map<string, Compiled>();
    for (const s of statements) {
      const shape = JSON.stringify([[...new Set(s.resources)].sort(), s.condition ?? {}]);
      let c = compiled.get(shape);
      if (!c) {
        c = {
          exact: new Set(),
          wild: [],
          resources: [...new Set(s.resources)].map((r) => glob(resolved(r, stage), false)),
          statement: s,
        };
        compiled.set(shape, c);
      }
      for (const a of s.actions) {
        if (/[*?]/.test(a)) {
          if (!seen.has(`${a} ${shape}`)) c.wild.push(glob(a, true));
          if (!this.#wild.includes(c)) this.#wild.push(c);
        } else c.exact.add(a.toLowerCase());
        const id = `${a.toLowerCase()} ${shape}`;
        if (seen.has(id) || /[*?]/.test(a)) {
          seen.add(id);
          continue;
        }
        seen.add(id);
        const list = this.#exact.get(a.toLowerCase()) ?? [];
        list.push(c);
        this.#exact.set(a.toLowerCase(), list);
      }
    }
  }

  allows(req: IamRequest): boolean {
    const action = req.action.toLowerCase();
    const candidates = [...(this.#exact.get(action) ?? []), ...this.#wild];
    return candidates.some(
      (c) =>
        (c.exact.has(action) || c.wild.some((w) => w.test(req.action))) &&
        c.resources.some((r) => r.test(req.resource)) &&
        conditionHolds(c.statement.condition, req, this.#stage),
    );
  }
}
