import { ts } from 'ts-morph';
import { enclosingFunctions } from '../parse/enclosingFunctions.js';
import type { Detector } from './detectorTypes.js';

/** `res.render('view')` (Express), `ctx.render('view')` (koa-views), `reply.view('view')` (@fastify/view). */
const RENDER_METHODS = new Set(['render', 'view']);

/** A view name: a relative path of word characters, dots and dashes, no spaces or markup. */
const VIEW_NAME = /^[\w@.-]+(?:\/[\w@.-]+)*$/;

/**
 * Functions that render a server-side view by a literal name: which page a handler serves. A form on that page without
 * an `action` posts back to the route that rendered it (resolve/serverForms.ts).
 */
export const viewRenders: Detector = {
  name: 'view-renders',
  mentions: /\.(?:render|view)\s*\(\s*['"`]/,
  detect(ctx, facts) {
    for (const call of ctx.index.calls) {
      const callee = call.expression;
      if (!ts.isPropertyAccessExpression(callee) || !RENDER_METHODS.has(callee.name.text)) continue;
      const first = call.arguments[0];
      if (!first || !(ts.isStringLiteral(first) || ts.isNoSubstitutionTemplateLiteral(first)) || !VIEW_NAME.test(first.text)) continue;
      const keys = enclosingFunctions(call).keys;
      if (keys.length > 0) facts.viewRenders.push({ view: first.text, keys });
    }
  },
};
