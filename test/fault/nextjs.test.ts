import { describeFaultSuite } from './faultSuite.js';

describeFaultSuite('nextjs');
