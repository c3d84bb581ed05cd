import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { ensurePostgres } from '../../stack/postgres';
import { freePort } from '../../stack/processes';

describe('stack/postgres', function () {
  this.timeout(120_000);

  it('starts an embedded Postgres with the gateway database when no server answers, and keeps its data', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-embedded-'));
    const nobody = { host: '127.0.0.1', port: await freePort(), user: 'postgres' };
    try {
      const first = await ensurePostgres({ dbName: 'gateway', dataDir, localServer: nobody, log: () => undefined });
      expect(first.source).to.equal('embedded');
      const client = new Client({ connectionString: first.url });
      await client.connect();
      await client.query('create table kept (x int)');
      await client.query('insert into kept values (42)');
      await client.end();
      await first.stop();

      const second = await ensurePostgres({ dbName: 'gateway', dataDir, localServer: nobody, log: () => undefined });
      const again = new Client({ connectionString: second.url });
      await again.connect();
      const { rows } = await again.query('select x from kept');
      await again.end();
      await second.stop();
      expect(rows).to.deep.equal([{ x: 42 }]);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
