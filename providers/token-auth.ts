/** Models of families that authenticate with short-lived bearer tokens (Entra ID, Google service accounts). */
import type { CallContext } from './types';

/**
 * A model whose calls first make sure a bearer token is at hand (`ready`, which fetches or refreshes it);
 * the connection's auth then reads the token when the request's headers are built. Without `ready` (a
 * static key) the model is returned as it is.
 */
export function authorized<T extends object>(model: T, ready: ((ctx: CallContext) => Promise<void>) | undefined): T {
  if (!ready) return model;
  return new Proxy(model, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string' || !property.startsWith('do')) return value;
      const method = value as (...args: unknown[]) => unknown;
      const ctxOf = (args: unknown[]) => args[args.length - 1] as CallContext;
      if (property === 'doStream') {
        return async function* (...args: unknown[]) {
          await ready(ctxOf(args));
          yield* method.apply(target, args) as AsyncIterable<unknown>;
        };
      }
      return async (...args: unknown[]) => {
        await ready(ctxOf(args));
        return method.apply(target, args);
      };
    },
  });
}
