// Longest files first within each group and project, so that a group ends on short files: its workers
// finish together instead of one waiting on a long file started last. vitest's own order does this from
// the results of earlier runs on this checkout; a fresh checkout (CI) has none, and vitest falls back to
// the largest file first, which starts e.g. the 54 s crash-consistency file last among the faults. There
// the durations of a recorded run (durations.ts) stand in; a file with neither runs first.
import path from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import { DURATIONS_S } from "./durations.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const seconds = (f: TestSpecification) => {
      const cached = this.ctx.cache.getTestSpecificationResult(f);
      if (cached) return cached.duration / 1000;
      return (
        DURATIONS_S[path.relative(ROOT, f.moduleId).split(path.sep).join("/")] ?? Number.POSITIVE_INFINITY
      );
    };
    const known = new Map(files.map((f) => [f, seconds(f)]));
    return [...files].sort(
      (a, b) =>
        // Groups in their order, projects of a group one after the other (as vitest orders them), then
        // longest first.
        a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder ||
        (a.project.name === b.project.name ? 0 : a.project.name < b.project.name ? -1 : 1) ||
        (known.get(b) as number) - (known.get(a) as number) ||
        (a.moduleId < b.moduleId ? -1 : 1),
    );
  }
}
