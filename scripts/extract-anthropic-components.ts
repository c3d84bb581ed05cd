/**
 * Extracts the Anthropic component schemas the Messages API tests validate against from a local copy of
 * Anthropic's published OpenAPI document (the one its TypeScript SDK's `.stats.yml` names), with every
 * schema they reference, cleaned as the OpenAI extraction cleans its own (scripts/extract-openai-components.ts).
 *
 *   node dist/scripts/extract-anthropic-components.js path/to/openapi.json > test/schemas/anthropic/components.json
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { extractComponents } from './extract-openai-components';

/** The streamed events, the message, the errors, token counts and model objects. */
export const ANTHROPIC_WANTED = ['MessageStreamEvent', 'Ping', 'Message', 'ErrorResponse', 'CountMessageTokensResponse', 'ModelInfo', 'ListResponse_ModelInfo_'];

if (require.main === module) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write('usage: extract-anthropic-components <openapi.json|openapi.yaml>\n');
    process.exit(2);
  }
  const text = readFileSync(file, 'utf8');
  const spec = text.trimStart().startsWith('{') ? JSON.parse(text) : parse(text);
  const schemas = extractComponents(spec, ANTHROPIC_WANTED);
  process.stdout.write(`${JSON.stringify({ $id: 'https://docs.anthropic.com/openapi.json', components: { schemas } }, null, 1)}\n`);
}
