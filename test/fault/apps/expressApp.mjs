// Express app on the generated middleware, wired as the generated README shows.
import express from 'express';
import { announce, pay, principal, scaffold, storePool } from './paymentAction.mjs';

const idempotency = scaffold.createIdempotency({ pool: storePool, principal: (req) => principal(req.headers) });
const app = express();
app.use(express.json());
app.post('/payments', idempotency.createPayment, async (req, res) => {
  const result = await pay({ context: scaffold.idempotencyOf(req), pause: req.header('x-fault-pause'), body: req.body });
  res.status(201).json(result);
});
const server = app.listen(0, '127.0.0.1', () => announce(server.address().port));
