// An app written in the user's language and compiled with the scaffold under the profile's tsconfig (the NestJS
// app of fixtures/profiles/nestjs-cjs-app): its entry exports bootstrap(action), loaded as the profile loads it.
import { createRequire } from 'node:module';
import * as action from './paymentAction.mjs';

const { bootstrap } = createRequire(import.meta.url)(process.env.APP_MAIN);
await bootstrap(action);
