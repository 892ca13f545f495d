// One ACP flow driven by an independent client: the official TypeScript SDK
// (npm @agentclientprotocol/sdk), not the Python package our own tests use.
// Run: npm install @agentclientprotocol/sdk@2 in a scratch folder, copy this file there, then
//   node ts_client_flow.mjs /path/to/tui-agent /path/to/script.json /path/to/workspace
// It prints one JSON line: protocol version, stop reason, modes, the streamed answer, and how
// many permission requests it answered (allow once).
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { client, methods, ndJsonStream } from "@agentclientprotocol/sdk";

const [agentBin, script, workspace] = process.argv.slice(2);
const agent = spawn(agentBin, ["acp", "--provider", "scripted", "--script", script], {
  stdio: ["pipe", "pipe", "inherit"],
});
const stream = ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));
let asked = 0;
const app = client({ name: "tui-agent-interop-check" }).onRequest(
  methods.client.session.requestPermission,
  () => {
    asked++;
    return { outcome: { outcome: "selected", optionId: "allow_once" } };
  },
);
const result = await app.connectWith(stream, async (ctx) => {
  const init = await ctx.request(methods.agent.initialize, {
    protocolVersion: 1,
    clientCapabilities: {},
  });
  return await ctx.buildSession(workspace).withSession(async (session) => {
    const done = await session.prompt("write it");
    return {
      protocol: init.protocolVersion,
      stop: done.stopReason,
      modes: session.modes.availableModes.map((m) => m.id),
      text: await session.readText(),
    };
  });
});
console.log(JSON.stringify({ ...result, asked }));
agent.stdin.end();
