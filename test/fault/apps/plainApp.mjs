/* global Buffer */
// The plain idempotent(fn) wrapper behind a bare node server: the transport is the app's own, so it turns the
// wrapper's errors into answers itself, the way a tRPC or GraphQL error formatter would.
import http from 'node:http';
import { announce, pay, principal, scaffold, storePool } from './paymentAction.mjs';

const idempotency = scaffold.createIdempotency({ pool: storePool, principal: () => undefined });

function problem(res, status, kind, title, detail, retryAfter) {
  const headers = { 'content-type': 'application/problem+json' };
  if (retryAfter) headers['retry-after'] = String(retryAfter);
  res.writeHead(status, headers).end(JSON.stringify({ type: `about:blank#${kind}`, title, status, detail }));
}

function answerError(res, error) {
  const retry = scaffold.POLICY.retryAfterSeconds;
  switch (error?.name) {
    case 'InvalidKeyError':
      return problem(res, 400, 'key-invalid', 'Idempotency-Key is missing or malformed', 'Send one valid key.');
    case 'PrincipalMissingError':
      return problem(res, 401, 'principal-missing', 'Authentication required', 'Keys are scoped to the caller.');
    case 'MismatchError':
      return problem(res, scaffold.POLICY.mismatchStatus, 'key-mismatch', 'Idempotency-Key reused', 'Use a new key for a new request.');
    case 'InFlightError':
      return problem(res, 409, 'in-flight', 'Request in progress', 'Retry later.', error.retryAfterSeconds);
    case 'LeaseLostError':
      return problem(res, 409, 'lease-lost', 'Request taken over', 'Retry to receive the recorded result.', retry);
    case 'StoreUnavailableError':
      return problem(res, 503, 'store-unavailable', 'Service unavailable', 'Duplicate protection is unavailable; retry with the same key.', retry);
    case 'OutcomeUnknownError':
      return problem(res, 503, 'outcome-unknown', 'Outcome unknown', 'The request may have been processed; retry later with the same key.', retry);
    default:
      process.stderr.write(`${error?.stack ?? error}\n`);
      return res.writeHead(500).end('Internal Server Error');
  }
}

const server = http.createServer((req, res) => {
  void (async () => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    const key = req.headers['idempotency-key'];
    try {
      const { result, replayed } = await idempotency.createPayment.detailed(
        { scope: principal(req.headers), key: typeof key === 'string' ? key : undefined, fingerprintInput: body },
        (context) => pay({ context, pause: req.headers['x-fault-pause'], body }),
      );
      const headers = { 'content-type': 'application/json' };
      if (replayed) headers[scaffold.POLICY.replayHeader.toLowerCase()] = 'true';
      res.writeHead(201, headers).end(JSON.stringify(result));
    } catch (error) {
      answerError(res, error);
    }
  })();
});
server.listen(0, '127.0.0.1', () => announce(server.address().port));
