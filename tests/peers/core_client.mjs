#!/usr/bin/env node
// The conformance suite's core server scenarios (0.1.16; tests/fixtures/conformance-core-0.1.16.md), run by
// @modelcontextprotocol/sdk 1.32.2's Client over stdio, the client the suite itself uses. Each scenario starts
// the server afresh, connects as the suite does (name conformance-test-client, sampling and elicitation
// declared), makes the scenario's requests through the SDK (which validates every answer with its zod schemas,
// e.g. strict `{}` results and the elicitation schema union) and checks what the scenario checks.
//
//   node core_client.mjs [--only NAME] [--] SERVER_CMD [ARGS...]
//
// OUTPUT (JSON lines)
//   {"event":"scenario","name":"tools-call-image","failures":[]}      one per scenario, in the suite's order
//   {"event":"summary","passed":N,"failed":M}
// Exit 0 when every scenario passed; 1 otherwise; 2 on usage errors. The transport scenarios
// (server-sse-multiple-streams, dns-rebinding-protection) need HTTP and are not run here.
import { sdk, emit, fail, errorMessage, sleep } from './peerlib.mjs';

const { Client } = sdk('client/index.js');
const { StdioClientTransport } = sdk('client/stdio.js');
const types = sdk('types.js');

const argv = process.argv.slice(2);
let only = null;
while (argv.length && argv[0] !== '--') {
  const flag = argv.shift();
  if (flag === '--only') only = argv.shift();
  else fail(`unknown option ${flag}`, 2);
}
if (argv[0] === '--') argv.shift();
if (!argv.length) fail('usage: core_client.mjs [--only NAME] [--] SERVER_CMD [ARGS...]', 2);
const [command, ...args] = argv;

const SAMPLED = {
  role: 'assistant',
  content: { type: 'text', text: 'This is a test response from the client' },
  model: 'test-model',
  stopReason: 'endTurn',
};

/** A fresh server and a client connected to it; `seen` collects what the server sent us. */
async function connect() {
  const seen = { logs: [], elicitations: [], samplings: [], elicitAnswer: { action: 'accept', content: {} } };
  const client = new Client(
    { name: 'conformance-test-client', version: '1.0.0' },
    { capabilities: { sampling: {}, elicitation: {} } },
  );
  client.setNotificationHandler(types.LoggingMessageNotificationSchema, (n) => seen.logs.push(n.params));
  client.setRequestHandler(types.CreateMessageRequestSchema, (r) => {
    seen.samplings.push(r.params);
    return SAMPLED;
  });
  client.setRequestHandler(types.ElicitRequestSchema, (r) => {
    seen.elicitations.push(r.params);
    return seen.elicitAnswer;
  });
  await client.connect(new StdioClientTransport({ command, args, stderr: 'inherit' }));
  return { client, seen };
}

/** Collects failures: `check(cond, what)`. */
function checker() {
  const failures = [];
  return { failures, check: (ok, what) => ok || failures.push(what) };
}

const contentOf = (result) => (Array.isArray(result?.content) ? result.content : []);
const block = (result, type) => contentOf(result).find((c) => c.type === type);
const isEmpty = (v) => v && typeof v === 'object' && Object.keys(v).filter((k) => k !== '_meta').length === 0;
const call = (client, name, args = {}) => client.callTool({ name, arguments: args });

async function elicitedSchema(client, seen, tool, answer) {
  seen.elicitAnswer = { action: 'accept', content: answer };
  const result = await call(client, tool);
  return { schema: seen.elicitations[0]?.requestedSchema ?? {}, result };
}

const SCENARIOS = {
  'server-initialize': async ({ client }, { check }) => {
    const info = client.getServerVersion();
    check(info?.name && info?.version, 'serverInfo has a name and a version');
    check(client.getServerCapabilities()?.tools, 'tools capability declared');
  },
  'logging-set-level': async ({ client }, { check }) => {
    check(isEmpty(await client.setLoggingLevel('info')), 'logging/setLevel answers {}');
  },
  ping: async ({ client }, { check }) => {
    check(isEmpty(await client.ping()), 'ping answers {}');
  },
  'completion-complete': async ({ client }, { check }) => {
    const r = await client.complete({
      ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
      argument: { name: 'arg1', value: 'test' },
    });
    check(Array.isArray(r?.completion?.values), 'completion.values is an array');
  },
  'tools-list': async ({ client }, { check }) => {
    const { tools } = await client.listTools();
    check(tools.length > 0, 'tools listed');
    tools.forEach((t, i) => {
      check(t.name, `tool ${i}: name`);
      check(t.description, `tool ${i} (${t.name}): description`);
      check(t.inputSchema?.type === 'object', `tool ${i} (${t.name}): inputSchema`);
    });
  },
  'tools-call-simple-text': async ({ client }, { check }) => {
    const r = await client.callTool({ name: 'test_simple_text' });
    check(block(r, 'text')?.text, 'a text block');
  },
  'tools-call-image': async ({ client }, { check }) => {
    const b = block(await call(client, 'test_image_content'), 'image');
    check(b?.data && b?.mimeType, 'an image block with data and mimeType');
    check(b && Buffer.from(b.data, 'base64').subarray(1, 4).toString() === 'PNG', 'the data is a PNG');
  },
  'tools-call-audio': async ({ client }, { check }) => {
    const b = block(await call(client, 'test_audio_content'), 'audio');
    check(b?.data && b?.mimeType === 'audio/wav', 'an audio/wav block with data');
  },
  'tools-call-embedded-resource': async ({ client }, { check }) => {
    const b = block(await call(client, 'test_embedded_resource'), 'resource');
    check(b?.resource?.uri && b.resource.mimeType && (b.resource.text || b.resource.blob), 'an embedded resource');
  },
  'tools-call-mixed-content': async ({ client }, { check }) => {
    const r = await call(client, 'test_multiple_content_types');
    for (const type of ['text', 'image', 'resource']) check(block(r, type), `a ${type} block`);
  },
  'tools-call-with-logging': async ({ client, seen }, { check }) => {
    await client.setLoggingLevel('debug');
    await call(client, 'test_tool_with_logging');
    await sleep(200);
    check(seen.logs.length >= 3, `at least 3 log messages (got ${seen.logs.length})`);
  },
  'tools-call-error': async ({ client }, { check }) => {
    const r = await call(client, 'test_error_handling');
    check(r.isError === true, 'isError: true');
    check(contentOf(r)[0]?.text, 'an error message');
  },
  'tools-call-with-progress': async ({ client }, { check }) => {
    const progress = [];
    await client.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    check(progress.length >= 3, `at least 3 progress notifications before the result (got ${progress.length})`);
    check(progress.every((p, i) => i === 0 || p >= progress[i - 1]), 'progress never decreases');
  },
  'tools-call-sampling': async ({ client, seen }, { check }) => {
    const r = await call(client, 'test_sampling', { prompt: 'Test prompt for sampling' });
    check(seen.samplings.length === 1, 'the server asked for sampling');
    check(seen.samplings[0]?.maxTokens === 100, 'maxTokens 100');
    check(contentOf(r)[0]?.text === 'LLM response: This is a test response from the client', 'the sampled text');
  },
  'tools-call-elicitation': async ({ client, seen }, { check }) => {
    seen.elicitAnswer = { action: 'accept', content: { username: 'testuser', email: 'test@example.com' } };
    const r = await call(client, 'test_elicitation', { message: 'Please provide your information' });
    check(seen.elicitations.length === 1, 'the server asked for input');
    check(contentOf(r).length > 0, 'content');
  },
  'json-schema-2020-12': async ({ client }, { check }) => {
    const { tools } = await client.listTools();
    const s = tools.find((t) => t.name === 'json_schema_2020_12_tool')?.inputSchema ?? {};
    check(s.$schema === 'https://json-schema.org/draft/2020-12/schema', '$schema kept');
    check(s.$defs?.address, '$defs kept');
    check(s.additionalProperties === false, 'additionalProperties kept');
  },
  'elicitation-sep1034-defaults': async ({ client, seen }, { check }) => {
    const { schema } = await elicitedSchema(client, seen, 'test_elicitation_sep1034_defaults', {
      name: 'Jane Smith', age: 25, score: 88.0, status: 'inactive', verified: false,
    });
    const p = schema.properties ?? {};
    check(p.name?.type === 'string' && p.name.default === 'John Doe', 'string default');
    check(p.age?.type === 'integer' && p.age.default === 30, 'integer default');
    check(p.score?.type === 'number' && p.score.default === 95.5, 'number default');
    check(p.status?.default === 'active' && p.status.enum?.includes('active'), 'enum default');
    check(p.verified?.type === 'boolean' && p.verified.default === true, 'boolean default');
  },
  'elicitation-sep1330-enums': async ({ client, seen }, { check }) => {
    const { schema } = await elicitedSchema(client, seen, 'test_elicitation_sep1330_enums', {
      untitledSingle: 'option1', titledSingle: 'value1', legacyEnum: 'opt1',
      untitledMulti: ['option1', 'option2'], titledMulti: ['value1', 'value2'],
    });
    const p = schema.properties ?? {};
    const titled = (o) => Array.isArray(o) && o.every((x) => typeof x.const === 'string' && typeof x.title === 'string');
    check(Array.isArray(p.untitledSingle?.enum) && !p.untitledSingle.oneOf && !p.untitledSingle.enumNames, 'untitled single');
    check(titled(p.titledSingle?.oneOf) && !p.titledSingle.enum, 'titled single');
    check(p.legacyEnum?.enumNames?.length === p.legacyEnum?.enum?.length, 'legacy enumNames');
    check(p.untitledMulti?.items?.type === 'string' && Array.isArray(p.untitledMulti.items.enum), 'untitled multi');
    check(titled(p.titledMulti?.items?.anyOf) && !p.titledMulti.items.enum, 'titled multi');
  },
  'resources-list': async ({ client }, { check }) => {
    const { resources } = await client.listResources();
    check(resources.length > 0, 'resources listed');
    resources.forEach((r, i) => check(r.uri && r.name, `resource ${i}: uri and name`));
  },
  'resources-read-text': async ({ client }, { check }) => {
    const c = (await client.readResource({ uri: 'test://static-text' })).contents[0];
    check(c?.uri && c.mimeType && c.text, 'text contents');
  },
  'resources-read-binary': async ({ client }, { check }) => {
    const c = (await client.readResource({ uri: 'test://static-binary' })).contents[0];
    check(c?.uri && c.mimeType && c.blob, 'blob contents');
  },
  'resources-templates-read': async ({ client }, { check }) => {
    const c = (await client.readResource({ uri: 'test://template/123/data' })).contents[0];
    check(c?.uri && String(c.text ?? '').includes('123'), 'the id substituted');
  },
  'resources-subscribe': async ({ client }, { check }) => {
    check(isEmpty(await client.subscribeResource({ uri: 'test://watched-resource' })), 'subscribe answers {}');
  },
  'resources-unsubscribe': async ({ client }, { check }) => {
    await client.subscribeResource({ uri: 'test://watched-resource' });
    check(isEmpty(await client.unsubscribeResource({ uri: 'test://watched-resource' })), 'unsubscribe answers {}');
  },
  'prompts-list': async ({ client }, { check }) => {
    const { prompts } = await client.listPrompts();
    check(prompts.length > 0, 'prompts listed');
    prompts.forEach((p, i) => check(p.name && p.description, `prompt ${i}: name and description`));
  },
  'prompts-get-simple': async ({ client }, { check }) => {
    const { messages } = await client.getPrompt({ name: 'test_simple_prompt' });
    check(messages.length > 0 && messages.every((m) => m.role && m.content), 'messages with role and content');
  },
  'prompts-get-with-args': async ({ client }, { check }) => {
    const { messages } = await client.getPrompt({
      name: 'test_prompt_with_arguments',
      arguments: { arg1: 'testValue1', arg2: 'testValue2' },
    });
    const text = JSON.stringify(messages);
    check(text.includes('testValue1') && text.includes('testValue2'), 'both arguments substituted');
  },
  'prompts-get-embedded-resource': async ({ client }, { check }) => {
    const { messages } = await client.getPrompt({
      name: 'test_prompt_with_embedded_resource',
      arguments: { resourceUri: 'test://example-resource' },
    });
    check(messages.some((m) => m.content?.type === 'resource'), 'an embedded resource');
  },
  'prompts-get-with-image': async ({ client }, { check }) => {
    const { messages } = await client.getPrompt({ name: 'test_prompt_with_image' });
    check(messages.some((m) => m.content?.type === 'image' && m.content.data && m.content.mimeType), 'an image');
  },
};

let passed = 0;
let failed = 0;
for (const [name, run] of Object.entries(SCENARIOS)) {
  if (only && name !== only) continue;
  const { failures, check } = checker();
  let session = null;
  try {
    session = await connect();
    await run(session, { check });
  } catch (err) {
    failures.push(`Failed: ${errorMessage(err)}`);
  } finally {
    await session?.client.close().catch(() => {});
  }
  emit('scenario', { name, failures });
  if (failures.length) failed += 1;
  else passed += 1;
}
emit('summary', { passed, failed });
process.exit(failed ? 1 : 0);
