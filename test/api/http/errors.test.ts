import { expect } from 'chai';
import Koa from 'koa';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { ApplicationFailure } from '@temporalio/common';
import { toActivityFailure } from '../../../activities/failures';
import { errorMiddleware } from '../../../api/http/errors';
import { requestIdMiddleware } from '../../../api/http/request-id';
import { InternalError, InvalidRequestError } from '../../../core/errors';

describe('api/http/errors: what a client may read of a failure', () => {
  let server: http.Server;
  let url: string;
  const logged: string[] = [];
  const SECRET = "TypeError: Cannot read properties of undefined (reading 'name') at /srv/gateway/dist/endpoints/chat/request.js:41:17";

  before(async () => {
    const app = new Koa();
    app.silent = true;
    app.use(requestIdMiddleware());
    app.use(errorMiddleware(pino({ level: 'error' }, { write: (line: string) => logged.push(line) })));
    app.use(async (ctx) => {
      if (ctx.path === '/type-error') throw new TypeError(SECRET);
      if (ctx.path === '/internal') throw new InternalError(SECRET);
      // As an activity's crash comes back through a workflow: an InternalError carried in a Temporal failure.
      if (ctx.path === '/from-activity') throw toActivityFailure(new Error(SECRET), 1);
      // A database outage that outlasted an activity's retries (what pg throws when the server went away).
      if (ctx.path === '/database-outage-from-activity') throw toActivityFailure(Object.assign(new Error('Connection terminated unexpectedly'), { code: '57P01' }), 3);
      throw new InvalidRequestError("Invalid value for 'n': must be >= 1.", { param: 'n', code: 'invalid_value' });
    });
    const handle = app.callback();
    // Koa answers its own errors, so the promise never rejects.
    server = http.createServer((req, res) => { void handle(req, res); });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  for (const path of ['/type-error', '/internal', '/from-activity']) {
    it(`a 500 (${path}) carries a generic message and the request id, never the exception's text`, async () => {
      const res = await fetch(`${url}${path}`);
      const requestId = res.headers.get('x-request-id')!;
      const text = await res.text();
      expect(res.status).to.equal(500);
      expect(JSON.parse(text)).to.deep.equal({
        error: {
          message: `The server had an error while processing your request. Retry, and quote the request id ${requestId} if it persists.`,
          type: 'server_error', param: null, code: null,
        },
      });
      expect(text).not.to.include('TypeError');
      expect(text).not.to.include('/srv/gateway');
      // The operators' log keeps what happened.
      expect(logged.some((line) => line.includes(requestId) && line.includes('/srv/gateway'))).to.equal(true);
    });
  }

  it('a client error keeps its own message', async () => {
    const res = await fetch(`${url}/bad`);
    expect(res.status).to.equal(400);
    expect(((await res.json()) as { error: unknown }).error).to.deep.equal({ message: "Invalid value for 'n': must be >= 1.", type: 'invalid_request_error', param: 'n', code: 'invalid_value' });
  });

  it("an outage of the database inside an activity is a 503 with Retry-After (retried first), not a 500", async () => {
    const failure = toActivityFailure(Object.assign(new Error("Connection terminated unexpectedly"), { code: "57P01" }), 1) as ApplicationFailure;
    expect(failure.nonRetryable).to.equal(false);
    const res = await fetch(`${url}/database-outage-from-activity`);
    expect(res.status).to.equal(503);
    expect(res.headers.get('retry-after')).to.equal('5');
    const body = (await res.json()) as { error: { code: string; type: string; message: string } };
    expect(body.error.code).to.equal('database_unavailable');
    expect(body.error.type).to.equal('server_error');
    expect(body.error.message).not.to.include('Connection terminated');
  });
});
