import { expressViewsKey } from './express.js';
import { fastifyViewsKey } from './fastify.js';
import { koaViewsKey } from './koa.js';
import type { ViewsKeyWiring } from './types.js';

export { FORM_KEY_LOCAL, KEY_FUNCTION, type ViewsKeyResult, type ViewsKeyWiring, type ViewsSource } from './types.js';

/** The frameworks whose views apply gives the key function; adding one = one file + one line. */
export const VIEWS_KEY: Readonly<Record<string, ViewsKeyWiring>> = { express: expressViewsKey, koa: koaViewsKey, fastify: fastifyViewsKey };
