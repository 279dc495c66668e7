import { describeFaultSuite } from './faultSuite.js';

await describeFaultSuite('fastify', 'mysql');
