import { describeFaultSuite } from './faultSuite.js';

describeFaultSuite('none');
