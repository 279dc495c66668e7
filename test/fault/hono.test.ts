import { describeFaultSuite } from './faultSuite.js';

describeFaultSuite('hono');
