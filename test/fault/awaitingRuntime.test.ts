import { describeAwaitingRuntime } from './awaitingRuntime.js';

// Scenarios of issue 13 whose required behaviour is not in the generated runtime yet; see test/fault/README.md.
describeAwaitingRuntime('express');
describeAwaitingRuntime('fastify');
describeAwaitingRuntime('nestjs');
