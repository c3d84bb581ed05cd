import { expect } from 'chai';
import { useGateway } from '../../support/suite-gateway';

/** Every error, whatever raised it, answers OpenAI's JSON error shape. */
describe('error answers are always OpenAI\'s JSON error shape', function () {
  this.timeout(120_000);
  const env = useGateway({ credits: 1 });

  async function errorOf(res: Response): Promise<{ message: string; type: string; param: string | null; code: string | null }> {
    expect(res.headers.get('content-type')).to.match(/^application\/json/);
    const body = (await res.json()) as { error: { message: string; type: string; param: string | null; code: string | null } };
    expect(Object.keys(body.error).sort()).to.deep.equal(['code', 'message', 'param', 'type']);
    return body.error;
  }

  it('405 for a known path with another method, naming the allowed ones', async () => {
    for (const [method, path] of [['DELETE', '/v1/models'], ['POST', '/v1/models/sim-chat'], ['PUT', '/v1/chat/completions'], ['GET', '/v1/embeddings']]) {
      const res = await env.tenant.fetch(path, { method });
      expect(res.status, `${method} ${path}`).to.equal(405);
      const error = await errorOf(res);
      expect(error).to.include({ type: 'invalid_request_error', code: 'method_not_allowed' });
      expect(res.headers.get('allow')).to.be.a('string').and.not.empty;
      expect(error.message).to.include(res.headers.get('allow')!);
    }
  });

  it('501 for a method the server does not know, 404 for an unknown path, 401 without a key', async () => {
    const unknownMethod = await env.tenant.fetch('/v1/models', { method: 'PROPFIND' });
    expect(unknownMethod.status).to.equal(501);
    expect((await errorOf(unknownMethod)).code).to.equal('method_not_allowed');
    const missing = await env.tenant.fetch('/v1/no-such-thing');
    expect(missing.status).to.equal(404);
    expect((await errorOf(missing)).code).to.equal('unknown_url');
    const anonymous = await fetch(`${env.gateway.url}/v1/models`);
    expect(anonymous.status).to.equal(401);
    expect((await errorOf(anonymous)).type).to.equal('authentication_error');
  });
});
