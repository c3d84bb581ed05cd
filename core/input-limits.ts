/**
 * Limits on what a client may send, checked before anything reaches a store or a serialiser:
 * - identifiers, cursors and e-mail addresses hold no control characters (a NUL cannot even be stored in
 *   Postgres text, and the others only ever disguise a value);
 * - free text (prompts, names) may hold line breaks and tabs, but never NUL;
 * - JSON nests at most MAX_JSON_DEPTH levels (deeper bodies break recursive hashing and serialisation
 *   long before they mean anything).
 */
import { InvalidRequestError } from './errors';

export const MAX_JSON_DEPTH = 64;

/** C0 controls (NUL included), DEL and the C1 controls. */
const CONTROL_CHARACTERS = /\p{Cc}/u;

export function hasControlCharacters(value: string): boolean {
  return CONTROL_CHARACTERS.test(value);
}

export function hasNul(value: string): boolean {
  return value.includes('\u0000');
}

/** A 400 naming `param` for a value holding control characters. */
export function controlCharactersRefused(param: string, what = `'${param}'`): InvalidRequestError {
  return new InvalidRequestError(`Invalid ${what}: control characters (such as NUL) are not accepted.`, { param, code: 'invalid_characters' });
}

/**
 * Checks JSON text before it is parsed: nesting deeper than `maxDepth`, and strings holding NUL (`\u0000`),
 * are refused with a 400. One pass over the text, so a hostile body costs no more than reading it.
 */
export function checkJsonText(text: string, maxDepth = MAX_JSON_DEPTH): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) {
        if (text.startsWith('u0000', i + 1)) throw nulRefused();
        i++;
      } else if (c === 0x22 /* " */) {
        inString = false;
      }
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > maxDepth) {
        throw new InvalidRequestError(`The JSON body is nested too deeply: at most ${maxDepth} levels of objects and arrays.`, { code: 'json_too_deep' });
      }
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--;
  }
}

function nulRefused(): InvalidRequestError {
  return new InvalidRequestError('The JSON body holds a NUL character (\\u0000) in a string; it is not accepted.', { code: 'invalid_characters' });
}
