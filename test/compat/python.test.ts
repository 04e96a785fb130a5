// The official Python `openai` package against the gateway, with the loop its
// README teaches (`chunk.choices[0].delta.content`), which reads every frame's
// first choice: it works once the tenant's stream uses the `chunk` metadata frame.
// The package comes from this machine's local package index; where Python or the
// package is missing (a clean CI machine may lack it) the test is skipped, saying why.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { seedTenant } from '../helpers/gateway.js';
import { createApiKey } from '../gateway/support.js';
import { ANSWER, compatWorld, FORECAST_SCHEMA, MODEL, WEATHER_CALL, WEATHER_TOOL, type CompatWorld } from './support.js';

const probe = spawnSync('python3', ['-c', 'import openai; print(openai.__version__)'], { encoding: 'utf8' });
const missing = probe.status === 0 ? undefined : 'python3 with the `openai` package is not installed here';

const SCRIPT = `
import json, os, sys
import openai
client = openai.OpenAI(base_url=os.environ["BASE_URL"], api_key=os.environ["KEY"], max_retries=0)
model = os.environ["MODEL"]
out = {"version": openai.__version__}
messages = [{"role": "user", "content": "hello there"}]
out["json"] = client.chat.completions.create(model=model, messages=messages).choices[0].message.content
text = ""
for chunk in client.chat.completions.create(model=model, messages=messages, stream=True):
    text += chunk.choices[0].delta.content or ""
out["stream"] = text
tools = [{"type": "function", "function": json.loads(os.environ["TOOL"])}]
question = [{"role": "user", "content": "What is the weather in Paris?"}]
called = client.chat.completions.create(model=model, messages=question, tools=tools).choices[0]
call = called.message.tool_calls[0]
out["finish_reason"] = called.finish_reason
out["call"] = [call.function.name, json.loads(call.function.arguments)]
followup = question + [called.message.model_dump(exclude_none=True), {"role": "tool", "tool_call_id": call.id, "content": "sunny"}]
out["answer"] = client.chat.completions.create(model=model, messages=followup, tools=tools).choices[0].message.content
pieces = {}
for chunk in client.chat.completions.create(model=model, messages=question, tools=tools, stream=True):
    for call in chunk.choices[0].delta.tool_calls or []:
        entry = pieces.setdefault(call.index, {"name": "", "arguments": ""})
        entry["name"] += call.function.name or ""
        entry["arguments"] += call.function.arguments or ""
out["streamed_call"] = [pieces[0]["name"], json.loads(pieces[0]["arguments"])]
schema = json.loads(os.environ["SCHEMA"])
structured = client.chat.completions.create(model=model, messages=question,
    response_format={"type": "json_schema", "json_schema": {"name": "forecast", "schema": schema, "strict": True}})
out["structured"] = json.loads(structured.choices[0].message.content)
embedded = client.embeddings.create(model=model, input=["one", "two"])
out["embeddings"] = [len(item.embedding) for item in embedded.data]
try:
    client.chat.completions.create(model="no-such-model", messages=messages)
except openai.BadRequestError as e:
    out["error"] = {"status": e.status_code, "code": e.code, "message": e.message}
print(json.dumps(out))
`;

describe('the Python openai package against the gateway', { skip: missing }, () => {
  let world: CompatWorld;

  before(async () => {
    world = await compatWorld('python');
  });
  after(() => world?.close());

  it('chats, streams with the README loop, calls tools (JSON and streamed), structured output, embeddings, errors', async () => {
    world.fake.behaviour.toolCalls = [WEATHER_CALL];
    // The fake calls the tool only while the last message is not a tool result, so one knob serves the round trip.
    // Asynchronously: the gateway answering the script runs in this process.
    const run = await promisify(execFile)('python3', ['-c', SCRIPT], {
      encoding: 'utf8',
      timeout: 60_000,
      env: {
        ...process.env,
        BASE_URL: world.baseURL,
        KEY: world.key,
        MODEL,
        TOOL: JSON.stringify(WEATHER_TOOL),
        SCHEMA: JSON.stringify(FORECAST_SCHEMA),
      },
    }).finally(() => delete world.fake.behaviour.toolCalls);
    const out = JSON.parse(run.stdout);
    assert.equal(out.json, ANSWER);
    assert.equal(out.stream, ANSWER);
    assert.equal(out.finish_reason, 'tool_calls');
    assert.deepEqual(out.call, ['get_weather', { city: 'Paris' }]);
    assert.equal(out.answer, 'Fake answer to tool result: sunny');
    assert.deepEqual(out.streamed_call, ['get_weather', { city: 'Paris' }]);
    assert.deepEqual(out.structured, { sky: 'clear' });
    assert.deepEqual(out.embeddings, [16, 16]);
    assert.equal(out.error.status, 400);
    assert.equal(out.error.code, 'validation_failed');
    assert.match(out.error.message, /no-such-model/);
  });

  it('runs the documented app.py as written (JSON, then a stream asking for the chunk metadata frame) for a tenant without that default', async () => {
    // The README's first chat links to its Python version in docs/openai.md.
    const page = readFileSync(new URL('../../docs/openai.md', import.meta.url), 'utf8');
    const snippet = /```python\n# app\.py\n([\s\S]*?)```/.exec(page)?.[1];
    assert.ok(snippet, 'docs/openai.md has the app.py block');
    const readmeUrl = 'https://localhost:8443/api/llm/v1';
    assert.ok(snippet.includes(readmeUrl));
    // A tenant that kept the default frame (`spec`): the one a new user has.
    const tenant = await seedTenant(world.gw, 'python-readme');
    const { key } = await createApiKey(world.gw, tenant.tenantId, 'python-readme');
    const run = (code: string) =>
      promisify(execFile)('python3', ['-c', code.replace(readmeUrl, world.baseURL)], {
        encoding: 'utf8',
        timeout: 60_000,
        env: { ...process.env, GATEWAY_KEY: key },
      });
    const { stdout } = await run(snippet);
    assert.equal(stdout, 'Fake answer to: Hello\nFake answer to: Hello\n');
    // Why the snippet asks for it: the loop without it fails on the metadata frame (issue 26).
    const bare = snippet.replace(/,\s*extra_body=\{[^\n]*\}\}\)/, ')');
    assert.notEqual(bare, snippet);
    await assert.rejects(run(bare), /TypeError: 'NoneType' object is not subscriptable/);
  });
});
