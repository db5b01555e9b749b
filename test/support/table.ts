// What `kubectl get` asks the API server for: the object rendered as a Table of its printer columns.
import { type RequestOptions, request } from "node:https";
import type { KubeConfig } from "@kubernetes/client-node";

export interface Table {
  kind: string;
  columnDefinitions: Array<{ name: string; type: string; priority?: number }>;
  rows: Array<{ cells: unknown[] }>;
}

/** GETs an API path (an object or a collection) as a Table. */
export async function getTable(kc: KubeConfig, path: string): Promise<Table> {
  const url = new URL(path, kc.getCurrentCluster()?.server ?? "");
  const opts: RequestOptions = { headers: { Accept: "application/json;as=Table;v=v1;g=meta.k8s.io" } };
  await kc.applyToHTTPSOptions(opts);
  return new Promise((resolve, reject) => {
    request(url, opts, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => {
        body += c;
      });
      res.on("end", () =>
        res.statusCode === 200
          ? resolve(JSON.parse(body) as Table)
          : reject(new Error(`${res.statusCode}: ${body}`)),
      );
    })
      .on("error", reject)
      .end();
  });
}

/** The first row of a Table as column name → cell (`Name`, then the printer columns, wide ones too). */
export async function tableRow(kc: KubeConfig, path: string): Promise<Record<string, unknown>> {
  const table = await getTable(kc, path);
  return Object.fromEntries(table.columnDefinitions.map((c, i) => [c.name, table.rows[0]?.cells[i]]));
}
