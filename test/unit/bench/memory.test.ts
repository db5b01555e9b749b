// The bench's memory-size model (bench/sections/cost.ts): below one vCPU (1,769 MB) Lambda's CPU shrinks
// with memory, so CPU-bound work bills the same at any size there, waiting bills less at smaller sizes,
// and no size below the container's resident memory (with headroom) is offered.
import { describe, expect, it } from "vitest";
import { cheapestMemory, gbSecondsPerResource } from "../../../bench/sections/cost.ts";

describe("the memory-size model", () => {
  it("bills CPU-bound work the same at every size up to one vCPU", () => {
    const m = { cpuMsPerResource: 2, wallMsPerResource: 2, rssMb: 100 };
    const at512 = gbSecondsPerResource(m, 512) ?? 0;
    const at1024 = gbSecondsPerResource(m, 1024) ?? 0;
    expect(at512).toBeCloseTo(at1024, 12);
  });

  it("picks the smallest size that fits when the check mostly waits on the cloud", () => {
    const m = { cpuMsPerResource: 0.4, wallMsPerResource: 1.4, rssMb: 150 };
    expect(cheapestMemory(m).best?.mb).toBe(256);
    // A container of 320 MB does not fit in 256 or 384 MB (25% headroom): 512 is the least that does.
    const big = { ...m, rssMb: 320 };
    expect(gbSecondsPerResource(big, 256)).toBeUndefined();
    expect(gbSecondsPerResource(big, 384)).toBeUndefined();
    expect(cheapestMemory(big).best?.mb).toBe(512);
  });
});
