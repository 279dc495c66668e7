import { describeFaultSuite } from './faultSuite.js';

await describeFaultSuite('fastify', 'redis');
