/** Fixtures of the Responses API tests. */

/** A strict function tool, as a Responses request defines it. */
export const weatherTool = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'The weather in a city.',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  strict: true,
};
