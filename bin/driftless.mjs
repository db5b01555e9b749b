#!/usr/bin/env node
// The `driftless` command (package.json "bin"): checks the Node version, then runs the built CLI
// (dist/cli.mjs, made by `npm run build` and by `npm pack` through "prepack") or, in a clone without a
// build, the sources (functions/cli/main.ts; Node >= 22.18 strips the types itself). Plain JavaScript
// that any Node can parse, so an old Node gets a clear message instead of a syntax error.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const MIN_MAJOR = 22;
const major = Number(process.versions.node.split(".")[0]);
if (!(major >= MIN_MAJOR)) {
  process.stderr.write(
    `driftless needs Node.js ${MIN_MAJOR} or newer; this is Node.js ${process.versions.node} (${process.execPath}).\n` +
      "Install Node 22 (https://nodejs.org, nvm install 22), or run it with npx -p node@22 driftless …\n",
  );
  process.exit(1);
}

const built = new URL("../dist/cli.mjs", import.meta.url);
const source = new URL("../functions/cli/main.ts", import.meta.url);

/** The CLI module: the bundle when it was built, else the TypeScript sources. */
async function load() {
  if (existsSync(fileURLToPath(built))) return import(built.href);
  if (!existsSync(fileURLToPath(source))) {
    throw new Error(`neither ${fileURLToPath(built)} nor ${fileURLToPath(source)} exists: run npm run build`);
  }
  if (!process.features.typescript) {
    throw new Error(
      `Node.js ${process.versions.node} cannot run the TypeScript sources (type stripping needs 22.18 or newer): run npm run build, or use a newer Node 22`,
    );
  }
  return import(source.href);
}

let cli;
try {
  cli = await load();
} catch (err) {
  process.stderr.write(`driftless: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
// A closed pipe (`driftless get | head`) is not an error.
process.stdout.on("error", (err) => {
  if (err.code === "EPIPE") process.exit(process.exitCode ?? 0);
  throw err;
});
process.exitCode = await cli.main(process.argv);
