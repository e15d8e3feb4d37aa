// The official TypeScript SDK client against `git memory serve`'s /mcp with an agent's key:
// its own memory (implied by the key), another agent's (refused), a wrong key. Usage:
//   GIT_MEMORY_KEY=<key> OTHER_AGENT=<id> node serve.mjs SDK_DIR URL
// Prints one JSON object of what it saw; the Python test judges it.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [sdkDir, url] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(join(sdkDir, "node_modules/@modelcontextprotocol/sdk/dist/esm", p)).href);
const { Client } = await load("client/index.js");
const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");

const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${process.env.GIT_MEMORY_KEY}` } },
});
const client = new Client({ name: "git-memfs-ts-serve", version: "1.0.0" });
const out = {};
try {
  await client.connect(transport);
} catch (e) {
  out.connect = { code: e.code ?? null, message: String(e.message ?? e) };
  console.log(JSON.stringify(out));
  process.exit(0);
}
out.connect = null;
out.server = client.getServerVersion();
const other = process.env.OTHER_AGENT;
const text = (r) => (r.content ?? []).map((b) => b.text ?? "").join("");
const call = async (name, args) => {
  const r = await client.callTool({ name, arguments: args });
  return { isError: Boolean(r.isError), text: text(r), structured: r.structuredContent ?? null };
};
out.view = await call("view", { path: "system/people.md" });
out.create = await call("create", { path: "notes/ts.md", description: "Made by the TS client",
  file_text: "hello from TypeScript\n", reason: "ts: a note" });
out.other = await call("view", { path: "system/people.md", agent: other });
out.resources = (await client.listResources()).resources.map((r) => r.uri);
try {
  await client.readResource({ uri: `memory://${other}/system/people.md` });
  out.stolen = null;
} catch (e) {
  out.stolen = { code: e.code ?? null, message: String(e.message ?? e) };
}
await client.close();
console.log(JSON.stringify(out));
