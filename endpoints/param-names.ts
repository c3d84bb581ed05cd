/**
 * Another API shape over the chat request (Responses, Messages) refuses in its own words: a refusal worded for the
 * chat request's parameters is reworded with the names that shape's clients know them by.
 */
import { InvalidRequestError } from '../core/errors';

/** Rewords `err` (an InvalidRequestError; any other error is returned as it is) by `names`: chat name -> own name. */
export function rewordParams(err: unknown, names: Readonly<Record<string, string>>): unknown {
  if (!(err instanceof InvalidRequestError)) return err;
  let message = err.message;
  for (const [chat, own] of Object.entries(names)) message = message.split(`'${chat}'`).join(`'${own}'`);
  const param = err.param && names[err.param] ? names[err.param] : err.param;
  if (message === err.message && param === err.param) return err;
  return new InvalidRequestError(message, { param, code: err.code });
}
