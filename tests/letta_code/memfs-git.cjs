// Letta Code's own MemFS git code, run from its npm bundle (letta.js is the CLI, so it
// cannot be imported whole): the modules that clone, commit, pull and push an agent's
// memory are cut out at their `// src/...` markers and evaluated with their node: imports.
// What needs Letta's API is the only stand-in: getAuthToken() answers $LETTA_API_KEY (as
// Letta's API client does for a key from the environment), the agent's display name is
// not fetched (Letta falls back to "Letta Agent"), attached repositories are none.
//   node memfs-git.cjs BUNDLE clone AGENT
//   node memfs-git.cjs BUNDLE commit AGENT PATH TEXT REASON   (then pushes, as after a turn)
//   node memfs-git.cjs BUNDLE pull AGENT
// Prints {ok, dir} or {ok: false, error} as one JSON line.
const fs = require("node:fs");
const [bundle, command, agentId, ...rest] = process.argv.slice(2);
const text = fs.readFileSync(bundle, "utf8");

function section(first, last = first) {
  const start = text.indexOf(`\n// ${first}\n`);
  const from = text.indexOf(`\n// ${last}\n`, start);
  const end = text.indexOf("\n// src/", from + 10);
  if (start < 0 || from < 0 || end < 0) throw new Error(`letta.js: ${first} .. ${last} not found`);
  return text.slice(start, end);
}

let body = [
  section("src/memory-frontmatter.ts", "src/agent/memory-git-hooks.ts"),
  section("src/backend/api/memfs-git-proxy.ts"),
  section("src/utils/repository-checkout.ts"),
  section("src/agent/memory-git-config-lock.ts", "src/agent/memory-git.ts"),
].join("\n").replace(
  /^import \{([^}]*)\} from "(node:[\w/]+)";$/gms,
  (_, names, mod) => `const {${names.replace(/\s+as\s+/g, ": ")}} = require("${mod}");`);
body = body.replace(/^import \* as (\w+) from "(node:[\w/]+)";$/gm, (_, name, mod) => `const ${name} = require("${mod}");`);

const esm = (fn) => { let done = false; return () => { if (!done) { done = true; fn(); } }; };
const exportAll = (target, all) => { for (const k in all) Object.defineProperty(target, k, { get: all[k], enumerable: true }); };
const declared = new Set([...body.matchAll(/^var (init_\w+) =/gm)].map((m) => m[1]));
const missing = [...new Set([...body.matchAll(/\b(init_\w+)\(\)/g)].map((m) => m[1]))].filter((n) => !declared.has(n));
const stubs = {
  require, __esm: esm, __export: exportAll, debugLog: () => {}, debugWarn: () => {},
  settingsManager: { getSettings: () => ({}) }, LETTA_CLOUD_API_URL: "https://api.letta.com",
  getAuthToken: async () => process.env.LETTA_API_KEY ?? "", getDesktopAccessToken: () => undefined,
  withFileLock: async (_path, work) => work(),
  ...Object.fromEntries(missing.map((n) => [n, () => {}])),
};
const load = new Function(...Object.keys(stubs),
  body + "\ninit_memory_git();\nreturn { cloneMemoryRepo, commitMemoryWrite, pushMemory, pullMemory, getMemoryRepoDir };");
const git = load(...Object.values(stubs));

(async () => {
  const dir = git.getMemoryRepoDir(agentId);
  try {
    if (command === "clone") {
      await git.cloneMemoryRepo(agentId);
    } else if (command === "commit") {
      const [path, content, reason] = rest;
      fs.mkdirSync(require("node:path").dirname(`${dir}/${path}`), { recursive: true });
      fs.writeFileSync(`${dir}/${path}`, content);
      const author = { agentId, authorName: "Letta Agent", authorEmail: `${agentId}@letta.com` };
      const made = await git.commitMemoryWrite({ memoryDir: dir, pathspecs: [path], reason, author });
      if (!made.committed) throw new Error("nothing was committed");
      await git.pushMemory(agentId);
    } else if (command === "pull") {
      const pulled = await git.pullMemory(agentId, { throwOnFailure: true });
      console.log(JSON.stringify({ ok: true, dir, summary: pulled.summary }));
      return;
    } else {
      throw new Error(`unknown command ${command}`);
    }
    console.log(JSON.stringify({ ok: true, dir }));
  } catch (e) {
    console.log(JSON.stringify({ ok: false, dir, error: String(e.message ?? e) }));
  }
})();
