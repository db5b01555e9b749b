// Printing for the CLI: tables, JSON/YAML, `describe` text, doctor lines and a progress line.
import { stringify } from "yaml";
import { CHANGE_LOG_REASON } from "../../shared/api/change-log.ts";
import type { DoctorCheck } from "../../shared/ops/doctor.ts";
import type { Description, Row } from "../../shared/ops/inspect.ts";
import { age } from "../../shared/ops/inspect.ts";
import type { TraceNode } from "../../shared/ops/trace.ts";

export type Output = "table" | "json" | "yaml";

export interface Out {
  write(text: string): void;
}

export const stdout: Out = { write: (t) => void process.stdout.write(t) };
export const stderr: Out = { write: (t) => void process.stderr.write(t) };

/** A kubectl-style table: header row, columns padded, three spaces apart. */
export function table(rows: readonly Row[], columns?: readonly string[]): string {
  if (rows.length === 0) return "No resources found.\n";
  const cols = columns ?? Object.keys(rows[0] ?? {});
  const width = cols.map((c) => Math.max(c.length, ...rows.map((r) => (r[c] ?? "").length)));
  const line = (r: Row) =>
    cols
      .map((c, i) => (r[c] ?? "").padEnd(width[i] ?? 0))
      .join("   ")
      .trimEnd();
  return `${[line(Object.fromEntries(cols.map((c) => [c, c]))), ...rows.map(line)].join("\n")}\n`;
}

/** Rows as a table, or the raw objects as JSON or YAML. */
export function printList(out: Out, output: Output, rows: readonly Row[], raw: unknown, columns?: string[]) {
  if (output === "json") out.write(`${JSON.stringify(raw, null, 2)}\n`);
  else if (output === "yaml") out.write(stringify(raw));
  else out.write(table(rows, columns));
}

export function printObject(out: Out, output: Exclude<Output, "table">, value: unknown) {
  out.write(output === "json" ? `${JSON.stringify(value, null, 2)}\n` : stringify(value));
}

const indent = (text: string, by = "  ") =>
  text
    .trimEnd()
    .split("\n")
    .map((l) => `${by}${l}`)
    .join("\n");

const yamlBlock = (value: unknown) => indent(stringify(value).trimEnd(), "    ");

/** `driftless describe` as text: the layout of `kubectl describe`, with driftless's sections. */
export function describeText(d: Description, now = Date.now()): string {
  const lines: string[] = [];
  const field = (k: string, v: string | number | undefined) => {
    if (v !== undefined && v !== "") lines.push(`${`${k}:`.padEnd(22)}${v}`);
  };
  field("Name", d.name);
  field("Namespace", d.namespace);
  field("Kind", `${d.kind} (${d.apiVersion})`);
  field("UID", d.uid);
  field(
    "Created",
    d.creationTimestamp ? `${d.creationTimestamp} (${age(d.creationTimestamp, now)} ago)` : "",
  );
  field("Deleting since", d.deletionTimestamp);
  field("External name", d.externalName);
  field(
    "ProviderConfig",
    d.providerConfigKind && d.providerConfig
      ? `${d.providerConfigKind}/${d.providerConfig}`
      : d.providerConfig,
  );
  field("Management policies", d.managementPolicies?.join(", "));
  field("Deletion policy", d.deletionPolicy);
  if (d.credentials) {
    field("Credentials", d.credentials.source);
    field("Credentials Secret", d.credentials.secret);
    field("Users", d.users);
    if (d.allowedNamespaces) field("Allowed namespaces", d.allowedNamespaces.join(", ") || "<none>");
  }
  field("Finalizers", d.finalizers.join(", "));
  const map = (title: string, m: Record<string, string>) => {
    const entries = Object.entries(m);
    lines.push(`${title}:${entries.length === 0 ? " <none>" : ""}`);
    for (const [k, v] of entries) lines.push(`  ${k}: ${v}`);
  };
  map("Labels", d.labels);
  map("Annotations", d.annotations);

  lines.push("Conditions:");
  if (d.conditions.length === 0)
    lines.push("  <none> (not reconciled yet: is `driftless run` or the forwarder running?)");
  else {
    lines.push(
      indent(
        table(
          d.conditions.map((c) => ({
            TYPE: c.type,
            STATUS: c.status,
            REASON: c.reason,
            "LAST-TRANSITION": `${age(c.lastTransitionTime, now)} ago`,
            MESSAGE: c.message ?? "",
          })),
        ),
      ),
    );
  }

  if (d.forProvider) {
    lines.push("Spec (forProvider):");
    lines.push(Object.keys(d.forProvider).length ? yamlBlock(d.forProvider) : "  {}");
  }
  if (d.atProvider) {
    lines.push("Observed (atProvider):");
    lines.push(yamlBlock(d.atProvider));
  }

  if (d.references.length > 0 || d.forProvider) {
    lines.push(`References:${d.references.length === 0 ? " <none>" : ""}`);
    for (const r of d.references) {
      const targets = r.targets.length
        ? r.targets
            .map(
              (t) =>
                `${r.kind}/${t.name} (${!t.exists ? "does not exist" : t.ready ? "Ready" : "not Ready"})`,
            )
            .join(", ")
        : `${r.kind} selected by ${r.selector || "(empty selector)"} (none chosen yet)`;
      lines.push(
        `  ${r.field}: ${r.resolved ? `resolved to ${JSON.stringify(r.value)}` : "UNRESOLVED"} via ${r.via} → ${targets}`,
      );
    }
  }

  if (d.connectionSecret) {
    const s = d.connectionSecret;
    lines.push("Connection Secret:");
    lines.push(`  Name: ${s.namespace}/${s.name}`);
    if (!s.exists) lines.push("  Status: not written yet (it is written once the external resource exists)");
    else {
      lines.push(`  Keys: ${s.keys.length ? s.keys.join(", ") : "<none>"} (values are never shown)`);
      if (!s.ownedByResource)
        lines.push("  Warning: the Secret is not owned by this resource: driftless will not write to it");
    }
  }

  lines.push(`Change log:${d.changeLog.length === 0 ? " <none>" : ""}`);
  if (d.changeLog.length > 0) {
    lines.push(
      indent(
        table(
          d.changeLog.map((r) => ({
            AGE: age(r.at, now),
            VERB: r.verb,
            TRIGGER: r.trigger,
            "EXTERNAL NAME": r.externalName ?? "",
            "REQUEST ID": (r.requestIds ?? []).join(" "),
            CHANGES: (r.changes ?? [])
              .map((c) => `${c.field}: ${JSON.stringify(c.before)} → ${JSON.stringify(c.after)}`)
              .concat(r.fields ?? [])
              .join("; "),
          })),
        ),
      ),
    );
  }
  // The change-log records are shown above, as records.
  const events = d.events.filter((e) => e.reason !== CHANGE_LOG_REASON);
  lines.push(`Events:${events.length === 0 ? " <none>" : ""}`);
  if (events.length > 0) {
    lines.push(
      indent(
        table(
          events.map((e) => ({
            TYPE: e.type,
            REASON: e.reason,
            AGE: e.lastTimestamp
              ? `${age(e.lastTimestamp, now)}${e.count > 1 && e.firstTimestamp ? ` (x${e.count} over ${age(e.firstTimestamp, now)})` : ""}`
              : "",
            FROM: e.source,
            MESSAGE: e.message,
          })),
        ),
      ),
    );
  }
  return `${lines.join("\n")}\n`;
}

const MARK: Record<DoctorCheck["status"], string> = { ok: "✓", fail: "✗", warn: "!", skip: "-" };

/** One doctor result: a ✓/✗ line, and for a problem a `fix:` line under it. */
export function doctorLine(c: DoctorCheck): string {
  return `${MARK[c.status]} ${c.name}: ${c.detail}\n${c.fix && c.status !== "ok" ? `    fix: ${c.fix}\n` : ""}`;
}

/**
 * A one-line progress display on stderr, redrawn in place on a terminal and silent otherwise (so logs and
 * pipes stay clean). At most ~10 redraws a second.
 */
export class Progress {
  readonly #tty: boolean;
  #last = 0;
  #shown = false;

  constructor(tty = Boolean(process.stderr.isTTY)) {
    this.#tty = tty;
  }

  update(text: string, force = false) {
    if (!this.#tty) return;
    const now = Date.now();
    if (!force && now - this.#last < 100) return;
    this.#last = now;
    this.#shown = true;
    process.stderr.write(`\r\x1b[2K${text}`);
  }

  /** Clears the line (the final result is printed by the caller). */
  done() {
    if (this.#tty && this.#shown) process.stderr.write("\r\x1b[2K");
    this.#shown = false;
  }
}

/** Longest STATUS shown without -o wide (crossplane beta trace also shortens it). */
const TRACE_STATUS_WIDTH = 64;

/** `driftless trace` as a tree: NAME (with ├─ └─), SYNCED, READY, STATUS; wide adds EXTERNAL-NAME, whole messages. */
export function traceText(root: TraceNode, opts: { wide?: boolean } = {}): string {
  const rows: Row[] = [];
  const walk = (n: TraceNode, prefix: string, childPrefix: string) => {
    const group = n.group ? `.${n.group.split(".")[0]}` : "";
    const where = n.namespace && n.role !== "Claim" ? `${n.namespace}/` : "";
    const status =
      !opts.wide && n.status.length > TRACE_STATUS_WIDTH
        ? `${n.status.slice(0, TRACE_STATUS_WIDTH - 1)}…`
        : n.status;
    rows.push({
      NAME: `${prefix}${n.kind}${group}/${where}${n.name}`,
      SYNCED: n.synced,
      READY: n.ready,
      ...(opts.wide ? { "EXTERNAL-NAME": n.externalName ?? "" } : {}),
      STATUS: n.role === "Secret" && opts.wide && n.keys?.length ? `${status} (${n.keys.join(",")})` : status,
    });
    n.children.forEach((c, i) => {
      const last = i === n.children.length - 1;
      walk(c, `${childPrefix}${last ? "└─ " : "├─ "}`, `${childPrefix}${last ? "   " : "│  "}`);
    });
  };
  walk(root, "", "");
  const head = root.namespace && root.role === "Claim" ? `NAMESPACE ${root.namespace}\n` : "";
  return head + table(rows, ["NAME", "SYNCED", "READY", ...(opts.wide ? ["EXTERNAL-NAME"] : []), "STATUS"]);
}
