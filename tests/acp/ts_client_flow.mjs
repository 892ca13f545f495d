// tui-agent's ACP agent driven by an independent client: the official TypeScript SDK
// (npm @agentclientprotocol/sdk, pinned in tests/node/acp), not the Python package our other
// tests use. Every message in both directions is checked against the JSON schema the SDK
// ships (schema/v1/schema.json), by method, and any that fails is reported.
//
//   node ts_client_flow.mjs SDK_DIR SPEC.json
//
// SPEC names the agent's command line, a workspace and a work folder, and the local
// OpenAI-compatible server the model flow talks to. One JSON line comes out: what each flow saw.
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const [sdkDir, specPath] = process.argv.slice(2);
const spec = JSON.parse(readFileSync(specPath, "utf8"));
const sdk = join(sdkDir, "node_modules", "@agentclientprotocol", "sdk");
const { client, methods, ndJsonStream } = await import(pathToFileURL(join(sdk, "dist/v1/stable/acp.js")));
const { default: Ajv2020 } = await import(pathToFileURL(join(sdkDir, "node_modules/ajv/dist/2020.js")));
const schema = JSON.parse(readFileSync(join(sdk, "schema/v1/schema.json"), "utf8"));
// The SDK's own parsers salvage what they can (an invalid item is skipped), so the check is
// the strict one: Ajv against the protocol's JSON schema, the definition each method names.
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema(schema, "acp");
const def = (name) => ajv.compile({ $ref: `acp#/$defs/${name}` });
const pair = (request, response) => [def(request), response ? def(response) : null];
const shapes = {
  initialize: pair("InitializeRequest", "InitializeResponse"),
  authenticate: pair("AuthenticateRequest", "AuthenticateResponse"),
  "session/new": pair("NewSessionRequest", "NewSessionResponse"),
  "session/load": pair("LoadSessionRequest", "LoadSessionResponse"),
  "session/list": pair("ListSessionsRequest", "ListSessionsResponse"),
  "session/set_mode": pair("SetSessionModeRequest", "SetSessionModeResponse"),
  "session/set_config_option": pair("SetSessionConfigOptionRequest", "SetSessionConfigOptionResponse"),
  "session/prompt": pair("PromptRequest", "PromptResponse"),
  "session/cancel": pair("CancelNotification"),
  "session/update": pair("SessionNotification"),
  "session/request_permission": pair("RequestPermissionRequest", "RequestPermissionResponse"),
  "terminal/create": pair("CreateTerminalRequest", "CreateTerminalResponse"),
  "terminal/output": pair("TerminalOutputRequest", "TerminalOutputResponse"),
  "terminal/wait_for_exit": pair("WaitForTerminalExitRequest", "WaitForTerminalExitResponse"),
  "terminal/kill": pair("KillTerminalRequest", "KillTerminalResponse"),
  "terminal/release": pair("ReleaseTerminalRequest", "ReleaseTerminalResponse"),
};
const errorShape = def("Error");
const invalid = [];
let checked = 0;

function checker(direction) {
  const pending = new Map(); // request id -> method, for the answer that comes the other way
  return { pending, check(message, answers) {
    checked++;
    const fail = (what, error) => invalid.push({ direction, what, message, error: String(error) });
    if (message.method !== undefined) {
      const shape = shapes[message.method];
      if (!shape) return fail("unknown method", message.method);
      if (message.id !== undefined) answers.set(message.id, message.method);
      if (!shape[0](message.params)) fail(message.method, ajv.errorsText(shape[0].errors));
    } else {
      const method = this.pending.get(message.id);
      if (message.error !== undefined) {
        if (!errorShape(message.error)) fail(`${method} error`, ajv.errorsText(errorShape.errors));
      } else if (method && shapes[method][1]) {
        const shape = shapes[method][1];
        if (!shape(message.result)) fail(`${method} result`, ajv.errorsText(shape.errors));
      } else fail("answer to nothing", message.id);
    }
  } };
}

// One agent process, its messages validated and recorded, driven by `flow(ctx, seen)`.
async function withAgent(args, env, capabilities, handlers, flow) {
  const agent = spawn(spec.agent[0], [...spec.agent.slice(1), ...args], {
    stdio: ["pipe", "pipe", "inherit"],
    env: { ...process.env, ...env },
  });
  const raw = ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));
  const fromAgent = checker("agent->client");
  const toAgent = checker("client->agent");
  const seen = [];
  const readable = raw.readable.pipeThrough(new TransformStream({ transform(message, out) {
    fromAgent.check(message, toAgent.pending);
    if (message.method === "session/update") seen.push(message.params.update);
    out.enqueue(message);
  } }));
  const writer = raw.writable.getWriter();
  const writable = new WritableStream({
    async write(message) { toAgent.check(message, fromAgent.pending); await writer.write(message); },
    async close() { await writer.close(); },
  });
  let app = client({ name: "tui-agent-interop-check" });
  for (const [method, handler] of Object.entries(handlers)) app = app.onRequest(method, handler);
  const result = await app.connectWith({ readable, writable }, async (ctx) => {
    await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: capabilities });
    return await flow(ctx, seen);
  });
  agent.stdin.end();
  await new Promise((done) => agent.on("exit", done));
  return result;
}

function script(name, steps) {
  const path = join(spec.work, `${name}.json`);
  writeFileSync(path, JSON.stringify({ steps }));
  return ["--provider", "scripted", "--script", path];
}

const prompt = (ctx, sessionId, text, more = []) =>
  ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }, ...more] });

// The client's terminals: each command runs here, its output kept for terminal/output.
const terminals = new Map();
const terminalHandlers = {
  [methods.client.terminal.create]: ({ params }) => {
    const id = `term-${terminals.size + 1}`;
    const child = spawn(params.command, params.args ?? [], { cwd: params.cwd, env: process.env });
    const term = { output: "", exit: null, argv: [params.command, ...(params.args ?? [])] };
    term.done = new Promise((resolve) => child.on("exit", (code, signal) => {
      term.exit = { exitCode: code, signal };
      resolve();
    }));
    child.stdout.on("data", (data) => (term.output += data));
    child.stderr.on("data", (data) => (term.output += data));
    terminals.set(id, term);
    return { terminalId: id };
  },
  [methods.client.terminal.waitForExit]: async ({ params }) => {
    const term = terminals.get(params.terminalId);
    await term.done;
    return term.exit;
  },
  [methods.client.terminal.output]: ({ params }) => {
    const term = terminals.get(params.terminalId);
    return { output: term.output, truncated: false, exitStatus: term.exit ?? undefined };
  },
  [methods.client.terminal.kill]: () => ({}),
  [methods.client.terminal.release]: ({ params }) => {
    terminals.get(params.terminalId).released = true;
    return {};
  },
};

// 1. An edit asked about with its diff before the file changes, a command in the client's
// terminal, the plan, usage, the commands offered, and a command sent as a prompt.
const asked = [];
const edit = await withAgent(
  script("edit", [
    { tool_calls: [{ name: "todo_write", arguments: { todos: [{ content: "edit a.txt", status: "in_progress" }] } }] },
    { tool_calls: [{ name: "edit_file", arguments: { path: "a.txt", old_string: "alpha", new_string: "beta" } }] },
    { tool_calls: [{ name: "shell", arguments: { command: "echo from-the-terminal" } }], usage: { input_other: 900, output: 20 } },
    { text: "Done." },
  ]),
  {},
  { terminal: true },
  {
    ...terminalHandlers,
    [methods.client.session.requestPermission]: ({ params }) => {
      asked.push({ toolCall: params.toolCall, onDisk: readFileSync(join(spec.workspace, "a.txt"), "utf8") });
      return { outcome: { outcome: "selected", optionId: "allow_once" } };
    },
  },
  async (ctx, seen) => {
    const session = await ctx.request(methods.agent.session.new, { cwd: spec.workspace, mcpServers: [] });
    const done = await prompt(ctx, session.sessionId, "edit it");
    const status = await prompt(ctx, session.sessionId, "/status");
    const kinds = seen.map((u) => u.sessionUpdate);
    const commands = seen.find((u) => u.sessionUpdate === "available_commands_update");
    const cards = seen.filter((u) => u.sessionUpdate === "tool_call");
    return {
      sessionId: session.sessionId,
      stop: [done.stopReason, status.stopReason],
      kinds: [...new Set(kinds)],
      commands: commands?.availableCommands.map((c) => c.name) ?? [],
      asked,
      cards: cards.map((c) => ({ title: c.title, kind: c.kind, rawInput: c.rawInput })),
      terminalShown: seen.some((u) => u.content?.some((c) => c.type === "terminal")),
      terminals: [...terminals.values()].map((t) => ({ argv: t.argv, output: t.output, released: !!t.released })),
      said: seen.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => u.content.text).join(""),
    };
  },
);

// 2. Another agent process, on a model server: the list names the first session, loading it
// replays the conversation, plan and usage; then a new session switches its model (a config
// option) and sends an image.
const again = await withAgent(
  ["--provider", "openai", "--base-url", spec.openai, "--model", "m"],
  { OPENAI_API_KEY: "sk-test" },
  {},
  {},
  async (ctx, seen) => {
    const listed = await ctx.request(methods.agent.session.list, { cwd: spec.workspace });
    await ctx.request(methods.agent.session.load, {
      sessionId: edit.sessionId, cwd: spec.workspace, mcpServers: [],
    });
    const load = {
      listed: listed.sessions.map((s) => s.sessionId),
      plan: seen.filter((u) => u.sessionUpdate === "plan").map((u) => u.entries.map((e) => e.content)),
      usage: seen.filter((u) => u.sessionUpdate === "usage_update").length,
      replayed: seen.some((u) => u.sessionUpdate === "user_message_chunk" && u.content.text === "edit it"),
    };
    const session = await ctx.request(methods.agent.session.new, { cwd: spec.workspace, mcpServers: [] });
    const changed = await ctx.request(methods.agent.session.setConfigOption, {
      sessionId: session.sessionId, configId: "model", value: "gpt-4.1",
    });
    const image = { type: "image", mimeType: "image/png", data: spec.png };
    const done = await prompt(ctx, session.sessionId, "what is this?", [image]);
    const model = {
      offered: session.configOptions?.map((o) => [o.id, o.currentValue, o.options.map((v) => v.value)]),
      now: changed.configOptions.map((o) => o.currentValue),
      stop: done.stopReason,
    };
    return { load, model };
  },
);
const { load, model } = again;

console.log(JSON.stringify({ edit, load, model, checked, invalid }));
