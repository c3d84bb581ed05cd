/**
 * Path ids (`/v1/files/{id}`, `/v1/budget/alerts/{id}`, ...) and query parameters (cursors such as
 * `after` and `before`, filters) with control characters are refused with a 400 before any route runs,
 * so none of them reaches a query. Body limits are in api/http/body.ts; both rules in core/input-limits.ts.
 */
import type Koa from 'koa';
import { controlCharactersRefused, hasControlCharacters } from '../../core/input-limits';

export function rejectControlCharacters(): Koa.Middleware {
  return async (ctx, next) => {
    for (const segment of ctx.path.split('/')) {
      if (hasControlCharacters(decodeSegment(segment))) throw controlCharactersRefused('path', 'path');
    }
    for (const [name, value] of Object.entries(ctx.query)) {
      if (hasControlCharacters(name)) throw controlCharactersRefused('query', 'query parameter name');
      for (const one of [value ?? []].flat()) {
        if (hasControlCharacters(one)) throw controlCharactersRefused(name);
      }
    }
    await next();
  };
}

/** The segment as the router will see it (a malformed escape stays as it is, as the router keeps it). */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
