import { describeFaultSuite } from './faultSuite.js';

await describeFaultSuite('express', 'mysql');
