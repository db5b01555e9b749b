// Which sweep may take a window (sweep-lease.ts): one row per state of the Lease.
import { describe, expect, it } from "vitest";
import { type SweepLeaseState, sweepClaimDecision } from "../../../shared/pipeline/sweep-lease.ts";

const W = 1_000_000;
const S = 60_000;
const NOW = 5_000_000;
const lease = (o: Partial<SweepLeaseState>): SweepLeaseState => ({
  claimedUpTo: undefined,
  doneUpTo: undefined,
  holder: "a",
  renewMs: NOW - 1_000,
  ttlMs: 900_000,
  resourceVersion: "1",
  ...o,
});

describe("sweepClaimDecision", () => {
  const rows: Array<[string, SweepLeaseState | undefined, ReturnType<typeof sweepClaimDecision>]> = [
    ["no Lease yet", undefined, "claim"],
    ["no window claimed", lease({}), "claim"],
    ["the last claim is an earlier window", lease({ claimedUpTo: W - S, doneUpTo: W - S }), "claim"],
    [
      "an earlier window claimed and never finished",
      lease({ claimedUpTo: W - S, doneUpTo: W - 3 * S }),
      "claim",
    ],
    ["this window is done (a second delivery of the tick)", lease({ claimedUpTo: W, doneUpTo: W }), "done"],
    ["this window is held by a live sweep", lease({ claimedUpTo: W, doneUpTo: W - S }), "held"],
    [
      "this window's holder stopped renewing past its duration",
      lease({ claimedUpTo: W, doneUpTo: W - S, renewMs: NOW - 900_001 }),
      "claim",
    ],
    ["a later window is claimed (a late tick)", lease({ claimedUpTo: W + S, doneUpTo: W - S }), "newer"],
  ];
  for (const [name, state, expected] of rows) {
    it(name, () => expect(sweepClaimDecision(state, W, NOW)).toBe(expected));
  }
});
