// The runs of the threads API (OpenAI Assistants v2 shape, spec 2.8, 4, 6): create
// (JSON or event stream), read, list, modify, cancel, and the run's step. Every route
// acts on the caller's owner's records only (access `owner`).
import { Type } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { principalOf } from '../../guard.js';
import { problems } from '../../schemas.js';
import { ListOf, ListQuery } from '../history/pages.js';
import type { RunRow } from '../runs/repository.js';
import { idempotent } from '../idempotency/idempotency.js';
import { createRun, createThreadAndRun, type Caller, type CreateRunDeps } from './create.js';
import { RunObject, StepObject, runObject } from './objects.js';
import { CreateRunBody, CreateThreadAndRunBody, ModifyRunBody, RunParams, StepParams, ThreadParams } from './schemas.js';
import { cancelRun, findRun, getRun, getStep, listRuns, listSteps, modifyRun } from './service.js';
import { streamRun, type StreamDeps } from './stream.js';

export type ThreadRunDeps = CreateRunDeps & StreamDeps;

/** What the SDK's polling helpers wait between reads of an open run (they honour this header). */
export const POLL_AFTER_MS = 500;

export const threadRunRoutes: FastifyPluginAsyncTypebox<{ deps: ThreadRunDeps }> = async (app, { deps }) => {
  const config = { access: 'owner' } as const;
  const created = { 200: RunObject, ...problems(400, 401, 404, 409, 503) };

  /** The new run as JSON, or its event stream. */
  async function answer(reply: FastifyReply, run: RunRow, stream: boolean) {
    if (!stream) return runObject(run);
    await streamRun(deps, reply, run);
    return reply;
  }

  // Creates honour Idempotency-Key: a retry gets the same run, as JSON, or as its
  // stream from the first event (followed live while the run still executes).
  const create = (request: FastifyRequest, make: (caller: Caller) => Promise<RunRow>) => {
    const caller = callerOf(request);
    return idempotent(
      deps,
      caller.principal,
      request,
      async () => {
        const run = await make(caller);
        return { id: run.id, value: run };
      },
      (id) => findRun(deps, caller.principal, id),
    );
  };

  app.post(
    '/threads/:threadId/runs',
    { config, schema: { params: ThreadParams, body: CreateRunBody, response: created } },
    async (request, reply) => {
      const stream = request.body.stream === true;
      const run = await create(request, (caller) => createRun(deps, caller, request.params.threadId, request.body, stream));
      return answer(reply, run, stream);
    },
  );

  // The spec's path for a streamed run: the same as `stream: true`.
  app.post(
    '/threads/:threadId/runs/stream',
    { config, schema: { params: ThreadParams, body: CreateRunBody, response: created } },
    async (request, reply) => {
      const run = await create(request, (caller) => createRun(deps, caller, request.params.threadId, request.body, true));
      return answer(reply, run, true);
    },
  );

  app.post('/threads/runs', { config, schema: { body: CreateThreadAndRunBody, response: created } }, async (request, reply) => {
    const stream = request.body.stream === true;
    const run = await create(request, (caller) => createThreadAndRun(deps, caller, request.body, stream));
    return answer(reply, run, stream);
  });

  app.get(
    '/threads/:threadId/runs',
    { config, schema: { params: ThreadParams, querystring: ListQuery, response: { 200: ListOf(RunObject), ...problems(400, 401, 404) } } },
    async (request) => listRuns(deps, principalOf(request), request.params.threadId, request.query),
  );

  app.get(
    '/threads/:threadId/runs/:runId',
    { config, schema: { params: RunParams, response: { 200: RunObject, ...problems(401, 404) } } },
    async (request, reply) => {
      const run = await getRun(deps, principalOf(request), request.params.threadId, request.params.runId);
      // The SDK's createAndPoll waits this long before the next read (5 s without it).
      if (run.status === 'queued' || run.status === 'in_progress' || run.status === 'cancelling')
        reply.header('openai-poll-after-ms', String(POLL_AFTER_MS));
      return runObject(run);
    },
  );

  app.post(
    '/threads/:threadId/runs/:runId',
    { config, schema: { params: RunParams, body: Type.Optional(ModifyRunBody), response: { 200: RunObject, ...problems(400, 401, 404) } } },
    async (request) =>
      runObject(await modifyRun(deps, principalOf(request), request.params.threadId, request.params.runId, request.body?.metadata)),
  );

  app.post(
    '/threads/:threadId/runs/:runId/cancel',
    { config, schema: { params: RunParams, response: { 200: RunObject, ...problems(400, 401, 404) } } },
    async (request) => runObject(await cancelRun(deps, principalOf(request), request.params.threadId, request.params.runId)),
  );

  app.get(
    '/threads/:threadId/runs/:runId/steps',
    {
      config,
      schema: { params: RunParams, querystring: ListQuery, response: { 200: ListOf(StepObject), ...problems(400, 401, 404) } },
    },
    async (request) => listSteps(deps, principalOf(request), request.params.threadId, request.params.runId, request.query),
  );

  app.get(
    '/threads/:threadId/runs/:runId/steps/:stepId',
    { config, schema: { params: StepParams, response: { 200: StepObject, ...problems(401, 404) } } },
    async (request) => getStep(deps, principalOf(request), request.params.threadId, request.params.runId, request.params.stepId),
  );
};

function callerOf(request: FastifyRequest): Caller {
  return { principal: principalOf(request), correlationId: String(request.id) };
}
