// What a cloud's state word says of a resource's availability (Ready's reason): a table per kind, not a
// switch in each. Each cloud names its states its own way; a state the table does not name falls to `otherwise`.
import type { Availability } from "../api/external.ts";

export type AvailabilityOf = { availability: Availability; message?: string };

/** The availability of each state the table names (an own key: "constructor" is no state), else `otherwise`. */
export function availabilityTable(
  states: Readonly<Record<string, Availability | AvailabilityOf>>,
  otherwise: (state: string | undefined) => AvailabilityOf,
): (state: string | undefined) => AvailabilityOf {
  const table = new Map(
    Object.entries(states).map(([k, v]) => [k, typeof v === "string" ? { availability: v } : v] as const),
  );
  return (state) => (state === undefined ? undefined : table.get(state)) ?? otherwise(state);
}
