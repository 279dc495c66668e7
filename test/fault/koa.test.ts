import { describeFaultSuite } from './faultSuite.js';

await describeFaultSuite('koa');
