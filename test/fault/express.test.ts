import { describeFaultSuite } from './faultSuite.js';

describeFaultSuite('express');
