/** GET /v1/requests/{id} also finds a request by the client's own X-Request-Id (recorded with its usage). */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('create index usage_records_client_request_id on usage_records (workspace_id, client_request_id) where client_request_id is not null');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists usage_records_client_request_id');
}
