// The official TypeScript SDK client against `git memory mcp`: one round of tools,
// resources, prompts and refusals. Usage:
//   node round.mjs SDK_DIR stdio COMMAND [ARG...]
//   node round.mjs SDK_DIR http URL            (bearer token from $GIT_MEMORY_MCP_TOKEN, if set)
// Prints one JSON object of what it saw; the Python test judges it and the repository.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [sdkDir, mode, ...rest] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(join(sdkDir, "node_modules/@modelcontextprotocol/sdk/dist/esm", p)).href);
const { Client } = await load("client/index.js");

let transport;
if (mode === "stdio") {
  const { StdioClientTransport } = await load("client/stdio.js");
  transport = new StdioClientTransport({ command: rest[0], args: rest.slice(1), env: process.env, stderr: "pipe" });
} else {
  const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");
  const token = process.env.GIT_MEMORY_MCP_TOKEN;
  transport = new StreamableHTTPClientTransport(new URL(rest[0]), {
    requestInit: token ? { headers: { Authorization: `Bearer ${token}` } } : {},
  });
}

const client = new Client({ name: "git-memfs-ts-round", version: "1.0.0" });
await client.connect(transport);
const out = { server: client.getServerVersion(), instructions: client.getInstructions() ?? "" };
const text = (r) => (r.content ?? []).map((b) => b.text ?? "").join("");
const failure = async (fn) => {
  try {
    await fn();
    return null;
  } catch (e) {
    return { code: e.code ?? null, message: String(e.message ?? e) };
  }
};

const tools = (await client.listTools()).tools;
out.tools = Object.fromEntries(tools.map((t) => [t.name, {
  required: t.inputSchema.required ?? [], properties: Object.keys(t.inputSchema.properties ?? {}),
  destructive: t.annotations?.destructiveHint ?? null, readOnly: t.annotations?.readOnlyHint ?? null,
  output: Boolean(t.outputSchema),
}]));

const call = async (name, args) => {
  const r = await client.callTool({ name, arguments: args });
  return { isError: Boolean(r.isError), text: text(r), structured: r.structuredContent ?? null };
};
out.calls = {};
out.calls.view = await call("view", { path: "system/contacts.md" });
out.calls.create = await call("create", { path: "system/café notes.md", description: "Made by the TS client",
  file_text: "hello from TypeScript\n", reason: "ts round: create" });
out.calls.str_replace = await call("str_replace", { path: "system/contacts.md", old_string: "Tom",
  new_string: "Thomas", reason: "ts round: rename Tom" });
out.calls.search = await call("search", { query: "Thomas" });
out.calls.log = await call("log", { limit: 3 });
out.calls.undo = await call("undo", { last: true, reason: "ts round: undo" });
out.calls.read_only = await call("str_replace", { path: "system/rules.md", old_string: "Never", new_string: "Always",
  reason: "ts round: try" });
out.calls.unknown_arg = await call("view", { path: "system/contacts.md", colour: "red" });
out.unknown_tool = await failure(() => client.callTool({ name: "no_such_tool", arguments: {} }));

out.resources = (await client.listResources()).resources.map((r) => r.uri);
out.reads = {};
for (const uri of out.resources) {
  const contents = (await client.readResource({ uri })).contents;
  out.reads[uri] = contents[0]?.text ?? null;
}
out.missing_resource = await failure(() => client.readResource({ uri: "memory://system/missing.md" }));

out.prompts = (await client.listPrompts()).prompts.map((p) => p.name);
const remember = await client.getPrompt({ name: "remember", arguments: { fact: "tea is green", why: "asked" } });
out.remember = remember.messages[0].content.text;
out.unknown_prompt = await failure(() => client.getPrompt({ name: "no_such_prompt", arguments: {} }));

await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
