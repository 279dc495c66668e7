import { describeFaultSuite } from './faultSuite.js';

describeFaultSuite('koa');
