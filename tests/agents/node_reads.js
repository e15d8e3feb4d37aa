// A dream agent in Node, as Claude Code, Codex and Letta Code are: it starts, looks at
// the machine (cpus, memory, a name lookup), tries a private key, and edits memory
// through `git memory`. Each step prints what it got.
const fs = require('fs');
const os = require('os');
const cp = require('child_process');
const dns = require('dns');
console.log(`NODE ${process.version} cpus=${os.cpus().length} mem=${os.totalmem() > 0}`);
try {
  fs.readFileSync(process.argv[2]);
  console.log('READ THE KEY');
} catch (e) {
  console.log(`KEY ${e.code}`);
}
dns.lookup('localhost', (err, address) => {
  console.log(`LOOKUP ${err ? err.code : address}`);
  cp.execFileSync('git', ['memory', 'create', 'notes/node.md', 'Written from Node.', '-d', 'A note from Node',
                          '-m', 'Note from a Node agent'], {stdio: 'inherit'});
  console.log('DONE');
});
