import { describeFaultSuite } from './faultSuite.js';

describeFaultSuite('fastify');
