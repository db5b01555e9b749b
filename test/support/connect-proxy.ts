// A local HTTP CONNECT proxy for the proxy tests: it records every CONNECT target and tunnels it to
// `to(target)` (default: the target itself). Listens on 127.0.0.1; `close()` ends every tunnel.
import http from "node:http";
import net, { type AddressInfo } from "node:net";

export async function connectProxy(to?: (target: string) => { host: string; port: number }) {
  const connects: string[] = [];
  const tunnels = new Set<net.Socket>();
  const server = http.createServer((_req, res) => {
    res.writeHead(405);
    res.end();
  });
  server.on("connect", (req: http.IncomingMessage, client: net.Socket) => {
    const target = req.url ?? "";
    connects.push(target);
    const [host = "", port = ""] = target.split(":");
    const dest = to ? to(target) : { host, port: Number(port) };
    const upstream = net.connect(dest.port, dest.host, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      upstream.pipe(client);
      client.pipe(upstream);
    });
    tunnels.add(client);
    const close = () => {
      upstream.destroy();
      client.destroy();
    };
    upstream.on("error", close);
    client.on("error", close);
    client.on("close", close);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return {
    connects,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      for (const t of tunnels) t.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
