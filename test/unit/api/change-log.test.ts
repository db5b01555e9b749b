// A change-log record as an Event message: JSON that always fits an Event (1,024 characters) and reads back.
import { describe, expect, it } from "vitest";
import {
  CHANGE_LOG_MESSAGE_MAX,
  type ChangeRecord,
  changeRecordMessage,
  parseChangeRecord,
} from "../../../shared/api/change-log.ts";

const record = (changes: ChangeRecord["changes"]): ChangeRecord => ({
  at: "2026-11-27T05:00:00.000Z",
  verb: "update",
  trigger: "spec change",
  externalName: "q",
  requestIds: ["req-1"],
  ...(changes ? { changes } : {}),
});

describe("change-log records as Event messages", () => {
  it("a short record reads back whole", () => {
    const r = record([{ field: "visibilityTimeoutSeconds", before: 30, after: 60 }]);
    expect(parseChangeRecord(changeRecordMessage(r))).toEqual(r);
  });

  it("a record too long for an Event keeps the field names (as many as fit), never cut JSON", () => {
    const big = "x".repeat(400);
    const changes = Array.from({ length: 40 }, (_, i) => ({
      field: `tags.key${i}`,
      before: big,
      after: big,
    }));
    const text = changeRecordMessage(record(changes));
    expect(text.length).toBeLessThanOrEqual(CHANGE_LOG_MESSAGE_MAX);
    const back = parseChangeRecord(text);
    expect(back).toMatchObject({ verb: "update", requestIds: ["req-1"] });
    expect(back?.changes).toBeUndefined();
    expect(back?.fields?.[0]).toBe("tags.key0");
    expect(text).not.toContain(big);
  });

  it("an Event that is not a record is none", () => {
    expect(parseChangeRecord("Created external resource q")).toBeUndefined();
    expect(parseChangeRecord('{"verb":"update"}')).toBeUndefined();
  });
});
