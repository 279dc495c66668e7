import { describeFaultSuite } from './faultSuite.js';

describeFaultSuite('nestjs');
