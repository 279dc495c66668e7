import { enclosingFunctions } from '../parse/enclosingFunctions.js';
import type { Detector } from './detectorTypes.js';
import { exportedHeld, MESSAGE_LIBRARIES, MESSAGE_MENTIONS, MESSAGE_MODULES, messageSends, type Held, type MessageLibrary } from './messageSends.js';

const LIBRARIES = Object.keys(MESSAGE_LIBRARIES) as MessageLibrary[];
const LIBRARY_TEXT = new RegExp(Object.keys(MESSAGE_MODULES).map((m) => m.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|'));

/**
 * Functions that send a message to a person: the seeds of `sendsMessage` reachability, so `init` can tell that
 * POST /send-verification-email e-mails someone. A send on a client imported from a project module is kept pending
 * with that module and name, and seeds once the module is known to export a client of that library.
 */
export const messages: Detector = {
  name: 'message-sends',
  mentions: new RegExp(`${MESSAGE_MENTIONS.source}|${LIBRARY_TEXT.source}`),
  detect(ctx, facts) {
    const { sf, index } = ctx;
    // The clients this file hands to others (`module.exports = transport`, `export const resend = new Resend()`).
    if (LIBRARY_TEXT.test(ctx.text)) {
      for (const name of index.exports.keys()) {
        const held = exportedHeld(sf, index, name);
        if (held && sends(held)) facts.messageClients.push({ name, library: held.library });
      }
    }
    for (const found of messageSends(sf, index)) facts.messageFunctions.push(...enclosingFunctions(found.call).keys.map((key) => ({ key, library: found.library })));
    // Receivers from project modules: asked once without an answer, then once per library those modules may export.
    const asked = new Set<string>();
    messageSends(sf, index, (module, name) => {
      asked.add(JSON.stringify([module, name]));
      return undefined;
    });
    if (asked.size === 0) return;
    for (const library of LIBRARIES) {
      let via: { module: string; name: string } | undefined;
      const assumed = (module: string, name: string): Held | undefined => {
        via = { module, name };
        return { library, state: 'client' };
      };
      for (const found of messageSends(sf, index, assumed)) {
        if (via) facts.importedMessageSends.push({ module: via.module, name: via.name, library, keys: enclosingFunctions(found.call).keys });
      }
    }
  },
};

function sends(held: Held): boolean {
  return held.state === 'client' || (held.state === 'module' && MESSAGE_LIBRARIES[held.library].moduleIsClient === true);
}
